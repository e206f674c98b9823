// Package include holds the public C headers of the ggml library (ggml.h, ggml-alloc.h,
// ggml-backend.h, ggml-cuda.h). It has no Go API. It exists so that the headers travel with
// the module in every form (module cache, `go mod vendor`: vendoring copies only directories
// that hold a Go package) and so that editing a header rebuilds the cgo packages that include
// it: the headers are embedded below, so their content is part of this package's build output,
// and Go rebuilds every package that imports this one when that output changes. The embedded
// data is never referenced, so the linker leaves it out of programs.
package include

import "embed"

//go:embed *.h
var headers embed.FS
