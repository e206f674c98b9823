// The C half of the Go training callbacks (csrc/train_trampolines.c) as a cgo compilation unit of
// package ggml: cgo compiles only the C files of the package directory.

//go:build cgo

#include "csrc/train_trampolines.c"
