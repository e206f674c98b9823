//go:build !cgo

package rpctest

import (
	"testing"

	"github.com/ggml-go/ggml"
)

// Serve skips t: without cgo there is no backend to serve.
func Serve(t testing.TB, threads int, opts ...ggml.RPCServerOption) string {
	t.Helper()
	t.Skip("rpctest: serving a backend needs cgo (CGO_ENABLED=1)")
	return ""
}
