//go:build !cgo

package main

import (
	"fmt"
	"os"

	"github.com/ggml-go/ggml"
)

func main() {
	fmt.Fprintln(os.Stderr, "ggml-demo:", ggml.Available())
	os.Exit(1)
}
