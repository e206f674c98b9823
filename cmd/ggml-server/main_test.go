//go:build cgo

package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args   []string
		status int
		out    string
	}{
		{[]string{"-h"}, 0, "--parallel"},
		{[]string{"--help"}, 0, "--api-key"},
		{[]string{"--help"}, 0, "--no-mmap"},
		{[]string{"--no-mmap", "-m", "/nonexistent.gguf", "--port", "0"}, 1, "nonexistent"},
		{[]string{"-np", "0"}, 2, "give 1 to 256 slots"},
		{[]string{"--port", "70000"}, 2, "not a port"},
		{[]string{"--max-body", "10"}, 2, "--max-body"},
		{[]string{"--nope"}, 2, "nope"},
		{[]string{"-m", "/nonexistent.gguf", "--port", "0"}, 1, "nonexistent"},
	} {
		var stdout, stderr bytes.Buffer
		if got := run(c.args, &stdout, &stderr); got != c.status || !strings.Contains(stdout.String()+stderr.String(), c.out) {
			t.Errorf("%q: status %d, output %q; want %d and %q", c.args, got, stdout.String()+stderr.String(), c.status, c.out)
		}
	}
}

// TestDefaultModelSameAsLlama keeps the embedded model the same file as cmd/ggml-llama's (git
// stores one blob for both).
func TestDefaultModelSameAsLlama(t *testing.T) {
	other, err := os.ReadFile("../ggml-llama/default.gguf")
	if err != nil {
		t.Skip(err)
	}
	if !bytes.Equal(other, defaultModel) {
		t.Fatal("cmd/ggml-server/default.gguf differs from cmd/ggml-llama/default.gguf: copy the new one")
	}
}
