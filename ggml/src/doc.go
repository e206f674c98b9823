// Package src compiles the core of the ggml C library (tensors and graphs, ggml-alloc,
// ggml-backend, quantization formats: the .c files of this directory) through cgo. It has no Go
// API: package github.com/ggml-go/ggml imports it for its C symbols, which resolve across Go
// packages when the program is linked. Any .c file added to this directory is compiled with no
// further step.
//
// The private headers of the library (this directory's, and those of cpu/ and ops/, which the
// core's sources include too) are embedded below so that editing one rebuilds this package and,
// through their imports of it, the packages cpu, ops and csrc. See doc/design.md, "Build layout".
package src

import (
	"embed"

	// public headers (ggml/include): imported so that their edits rebuild this package
	_ "github.com/ggml-go/ggml/ggml/include"
)

//go:embed *.h cpu/*.h ops/*.h
var headers embed.FS
