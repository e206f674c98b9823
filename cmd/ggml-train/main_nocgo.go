//go:build !cgo

// Command ggml-train trains LLaMA-architecture models; it needs cgo (the C library).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "ggml-train: built without cgo; rebuild with CGO_ENABLED=1 and a C compiler")
	os.Exit(1)
}
