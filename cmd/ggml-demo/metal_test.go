//go:build metal && cgo && (darwin || metalemu)

package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// TestDemoMetal runs the demo on Metal (weights in Metal buffers, scheduler over [Metal, CPU]):
// it fails when the output differs from the pure-Go reference by more than gpuTolerance. On
// Linux this runs on the emulator (-tags 'metal metalemu').
func TestDemoMetal(t *testing.T) {
	leakCheck(t)
	var out bytes.Buffer
	err := run(&out, options{backend: "Metal", threads: 2, reps: 1})
	t.Logf("demo output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, ": ok") {
		t.Error("output lacks \": ok\"")
	}
	if !metalRow(s, "MUL_MAT") {
		t.Error("no MUL_MAT row on Metal in the per-op table")
	}
}

// metalRow reports whether the per-op table in the demo's output has a row for op on Metal.
func metalRow(out, op string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == op && slices.Contains(f[1:], "Metal") {
			return true
		}
	}
	return false
}
