//go:build cgo

package main

import "testing"

// TestDemo runs the demo once (one timing repetition): it fails when the transformer's output
// differs from the pure-Go reference.
func TestDemo(t *testing.T) {
	if err := run(2, 1, false); err != nil {
		t.Fatal(err)
	}
}
