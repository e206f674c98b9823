//go:build !cgo

// Command ggml-server serves a GGUF model over an OpenAI-compatible HTTP API; it needs cgo.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "ggml-server: built without cgo; rebuild with CGO_ENABLED=1 and a C compiler")
	os.Exit(1)
}
