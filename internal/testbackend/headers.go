//go:build cgo

package testbackend

import (
	// the library's headers, embedded by these packages: imported so that editing one rebuilds
	// this package (see doc/design.md, "Build layout"); ggml/tests/testbackend.[ch], which
	// ztestbackend.c includes, are tracked by the Makefile's GGML_SRC_STAMP instead
	_ "github.com/ggml-go/ggml/ggml/include"
	_ "github.com/ggml-go/ggml/ggml/src"
)
