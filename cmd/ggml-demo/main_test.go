//go:build cgo

package main

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
)

// leakCheck asserts at the end of the test that every native object the test created was
// closed (ggml.LiveObjects back to its value at the start).
func leakCheck(t *testing.T) {
	t.Helper()
	start := ggml.LiveObjects()
	t.Cleanup(func() {
		if n := ggml.LiveObjects(); n != start {
			t.Errorf("live native objects: %d, %d at the start: %v", n, start, ggml.LiveObjectsByKind())
		}
	})
}

// TestDemo runs the demo once (one timing repetition): it fails when the transformer's output
// differs from the pure-Go reference.
func TestDemo(t *testing.T) {
	leakCheck(t)
	var out bytes.Buffer
	if err := run(&out, options{backend: "CPU", threads: 2, reps: 1}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if s := out.String(); !strings.Contains(s, "split(s) on CPU") || !strings.Contains(s, "zero-copy") {
		t.Errorf("output:\n%s", s)
	}
}

// TestUnknownBackend: a backend that is not registered is an error naming the registered ones
// and the build tag that registers CUDA, and nothing is left open.
func TestUnknownBackend(t *testing.T) {
	leakCheck(t)
	err := run(io.Discard, options{backend: "NoSuchBackend0", threads: 1, reps: 1})
	if err == nil {
		t.Fatal("no error for an unregistered backend")
	}
	for _, want := range []string{`"NoSuchBackend0"`, "registered: CPU", "-tags cuda"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
