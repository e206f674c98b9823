// Package cpu compiles the CPU backend of the ggml C library through cgo: the .c files of
// ggml/src/cpu (compute engine, thread pool, op kernels, and the AVX2, AVX-512 and NEON kernels
// chosen at run time). It has no Go API: package github.com/ggml-go/ggml imports it for its C
// symbols, which resolve across Go packages when the program is linked. Any .c file added to
// this directory is compiled with no further step.
package cpu

import (
	// the library's headers (ggml/include; ggml/src and its subdirectories), embedded by these
	// packages: imported so that editing one of them rebuilds this package
	_ "github.com/ggml-go/ggml/ggml/include"
	_ "github.com/ggml-go/ggml/ggml/src"
)
