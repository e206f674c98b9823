// Package src compiles the core of the ggml C library (tensors and graphs, ggml-alloc, the
// backend layer, reference quantization: the .c files of this directory) through cgo. The core
// knows no backend; the CPU backend (package cpu) builds on it (ggml/deps_test.go checks it). It has no Go
// API: package github.com/ggml-go/ggml imports it for its C symbols, which resolve across Go
// packages when the program is linked. Any .c file added to this directory is compiled with no
// further step.
//
// The private headers of the core (this directory's, and those of ops/, which the core's sources
// include too) are embedded below so that editing one rebuilds this package and, through their
// imports of it, the packages cpu, ops and csrc. The headers of cpu/ are included by cpu/ only
// (and the C tests), so that package's own files cover them. See doc/design.md, "Build layout".
package src

import (
	"embed"

	// public headers (ggml/include): imported so that their edits rebuild this package
	_ "github.com/ggml-go/ggml/ggml/include"
)

//go:embed *.h ops/*.h
var headers embed.FS
