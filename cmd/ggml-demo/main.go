// Command ggml-demo is a small demonstration of the ggml Go package: it prints what the linked
// C library knows about its tensor types and runs a tiny graph on the CPU backend.
//
// It is a placeholder that grows with the Go API.
package main

import (
	"fmt"
	"os"

	"github.com/ggml-go/ggml"
)

func main() {
	if err := ggml.Available(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ggml-go: C library linked")
	fmt.Print("tensor types:")
	for _, t := range []ggml.Type{ggml.TypeF32, ggml.TypeF16, ggml.TypeQ4_0, ggml.TypeQ8_0, ggml.TypeQ4_K, ggml.TypeQ6_K, ggml.TypeI32} {
		fmt.Print(" ", t)
	}
	fmt.Println()
	if err := ggml.SelfCheck(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("self-check: [0..7] + 0.5*[0..7] computed on the CPU backend: ok")
}
