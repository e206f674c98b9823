// The Test backend (ggml/tests/testbackend.c) as a cgo compilation unit of this package.

//go:build cgo

#include "../../ggml/tests/testbackend.c"
