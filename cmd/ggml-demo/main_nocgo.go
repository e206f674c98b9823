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

// cudaBuild is set by cuda.go in builds with -tags cuda (the demo needs cgo to use it).
var cudaBuild bool
