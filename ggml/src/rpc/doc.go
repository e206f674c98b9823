// Package rpc compiles the C sources of ggml's RPC protocol 5.1.0 (the client backend and the
// server of ggml/include/ggml-rpc.h) through cgo. It has no Go API: package ggml imports it for
// its C symbols (see ggml.NewRPC and ggml.ServeRPC).
//
// rpc-tables.h, the op/unary/type numbering between our ggml and the wire's, is generated from
// both enumerations by gen_tables.py (run go generate here; it reads ../shared/rpc of the
// repository's checkout).
//
//go:generate sh -c "python3 gen_tables.py ../../include/ggml.h ../../../../shared/rpc/ops.json ../../../../shared/rpc/types.json > rpc-tables.h"
package rpc

import (
	"embed"

	// the core's private and public headers: imported so that their edits rebuild this package
	_ "github.com/ggml-go/ggml/ggml/src"
)

//go:embed *.h
var headers embed.FS
