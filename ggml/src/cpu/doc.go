// Package cpu compiles the CPU backend of the ggml C library through cgo: the .c files of
// ggml/src/cpu (the CPU backend and buffer type, compute engine, thread pool, op kernels, CPU type
// traits, optimizers, and the AVX2, AVX-512 and NEON kernels chosen at run time). It depends on
// the core (ggml/src), never the reverse. It has no Go API: package github.com/ggml-go/ggml imports it for its C
// symbols, which resolve across Go packages when the program is linked. Any .c file added to
// this directory is compiled with no further step.
package cpu

import (
	// the library's headers (ggml/include; ggml/src and ops/), embedded by these packages:
	// imported so that editing one of them rebuilds this package (this directory's headers are
	// this package's own files)
	_ "github.com/ggml-go/ggml/ggml/include"
	_ "github.com/ggml-go/ggml/ggml/src"
)
