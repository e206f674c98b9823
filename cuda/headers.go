//go:build cuda && cgo

package cuda

import (
	// the public headers (ggml-cuda.h, ggml-backend.h, ...), embedded by that package: imported
	// so that editing one rebuilds this package (see doc/design.md, "Build layout")
	_ "github.com/ggml-go/ggml/ggml/include"
)
