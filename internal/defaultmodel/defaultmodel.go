// Package defaultmodel holds the module's own small model: a LLaMA-architecture model trained
// from scratch on the Go standard library with cmd/ggml-train (Q8_0; figures in
// doc/default-model.md). It is what ggml-llama and ggml-server run when no -m is given. The file
// lives here once, so the module carries it once.
package defaultmodel

import (
	_ "embed"
	"fmt"
	"os"
)

// GGUF is the model file.
//
//go:embed default.gguf
var GGUF []byte

// Name is how the embedded model is named in messages and outputs.
const Name = "default.gguf (embedded)"

// WriteTemp writes the model to a new temporary file whose name starts with prefix (for loaders
// that take a path) and returns its path and a function that removes it; call that after the
// model is closed.
func WriteTemp(prefix string) (string, func(), error) {
	f, err := os.CreateTemp("", prefix+"*.gguf")
	if err != nil {
		return "", nil, fmt.Errorf("writing the embedded model: %w", err)
	}
	remove := func() { os.Remove(f.Name()) }
	if _, err := f.Write(GGUF); err != nil {
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
