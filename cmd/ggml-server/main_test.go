//go:build cgo

package main

import (
	"bytes"
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
		{[]string{"--help"}, 0, "--cache-type-k"},
		{[]string{"-ctk", "q9_9"}, 2, "unknown KV cache type"},
		{[]string{"-ctv", "bf17"}, 2, "unknown KV cache type"},
	} {
		var stdout, stderr bytes.Buffer
		if got := run(c.args, &stdout, &stderr); got != c.status || !strings.Contains(stdout.String()+stderr.String(), c.out) {
			t.Errorf("%q: status %d, output %q; want %d and %q", c.args, got, stdout.String()+stderr.String(), c.status, c.out)
		}
	}
}
