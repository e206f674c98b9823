//go:build cgo

package main

import (
	_ "embed"
	"fmt"
	"os"
)

// defaultModel is the module's own small model (the same file as cmd/ggml-llama's; git
// stores it once): what the server serves when -m is not given.
//
//go:embed default.gguf
var defaultModel []byte

// writeDefaultModel writes the embedded model to a temporary file for llama.Load and returns
// its path and a function that removes it.
func writeDefaultModel() (string, func(), error) {
	f, err := os.CreateTemp("", "ggml-server-default-*.gguf")
	if err != nil {
		return "", nil, fmt.Errorf("writing the embedded model: %w", err)
	}
	remove := func() { os.Remove(f.Name()) }
	if _, err := f.Write(defaultModel); err != nil {
		f.Close()
		remove()
		return "", nil, fmt.Errorf("writing the embedded model: %w", err)
	}
	if err := f.Close(); err != nil {
		remove()
		return "", nil, fmt.Errorf("writing the embedded model: %w", err)
	}
	return f.Name(), remove, nil
}
