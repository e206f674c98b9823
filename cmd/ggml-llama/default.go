//go:build cgo

package main

import (
	_ "embed"
	"fmt"
	"os"
)

// defaultModel is the module's own small model, trained from scratch on the Go standard
// library with cmd/ggml-train (Q8_0; see README.md): what the commands run when -m is not
// given.
//
//go:embed default.gguf
var defaultModel []byte

// defaultModelName is how the embedded model is named in messages and outputs.
const defaultModelName = "default.gguf (embedded)"

// writeDefaultModel writes the embedded model to a temporary file for llama.Load and returns
// its path and a function that removes it (call it after the model is closed).
func writeDefaultModel() (string, func(), error) {
	f, err := os.CreateTemp("", "ggml-llama-default-*.gguf")
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
