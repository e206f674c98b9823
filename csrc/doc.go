// Package csrc compiles the C half of package github.com/ggml-go/ggml's callbacks through cgo:
// trampolines.c holds the GGML_CALL vtable entries of Go-implemented buffer types and buffers
// and the trampolines of Go custom ops and eval callbacks, which call the //export functions of
// the root package's callbacks.go (declared in goexports.h; the symbols resolve when the
// program is linked). ggml_go.h holds the inline C helpers of the root package's cgo
// preambles. It has no Go API.
//
// The headers are embedded below so that editing one rebuilds this package and the root
// package, which imports it.
package csrc

import (
	"embed"

	// the library's headers, embedded by these packages: imported so that editing one
	// rebuilds this package
	_ "github.com/ggml-go/ggml/ggml/include"
	_ "github.com/ggml-go/ggml/ggml/src"
)

//go:embed *.h
var headers embed.FS
