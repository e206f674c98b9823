// The C half of the Go callbacks (csrc/trampolines.c) as a cgo compilation unit of package ggml:
// cgo compiles only the C files of the package directory.

//go:build cgo

#include "csrc/trampolines.c"
