//go:build cuda && cgo

package main

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/cuda"
)

// TestDemoCUDA runs the demo on CUDA0 (weights in device memory, scheduler over [CUDA0, CPU]):
// it fails when the output differs from the pure-Go reference by more than gpuTolerance.
func TestDemoCUDA(t *testing.T) {
	if cuda.DeviceCount() == 0 {
		t.Skip("no CUDA device present (cudaGetDeviceCount found none): demo on CUDA0 skipped")
	}
	leakCheck(t)
	var out bytes.Buffer
	err := run(&out, options{backend: "CUDA0", threads: 2, reps: 1})
	t.Logf("demo output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"CUDA0 buffer", "split(s) on CUDA0", ": ok"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if !hasRow(s, "MUL_MAT", "CUDA0") {
		t.Error("no MUL_MAT row on CUDA0 in the per-op table")
	}
}

// hasRow reports whether the per-op table in the demo's output has a row for op on backend.
func hasRow(out, op, backend string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == op && slices.Contains(f[1:], backend) {
			return true
		}
	}
	return false
}

// TestDemoCUDAFallback assigns SOFT_MAX and SILU to the CPU, as if CUDA0 rejected them: the
// graph runs in alternating CUDA0/CPU splits whose inputs the scheduler copies both ways, and
// the output must still match the reference.
func TestDemoCUDAFallback(t *testing.T) {
	if cuda.DeviceCount() == 0 {
		t.Skip("no CUDA device present (cudaGetDeviceCount found none): demo on CUDA0 skipped")
	}
	leakCheck(t)
	var out bytes.Buffer
	err := run(&out, options{backend: "CUDA0", threads: 2, reps: 1, cpuOps: []ggml.Op{ggml.OpSoftMax, ggml.OpUnary}})
	t.Logf("demo output:\n%s", out.String())
	if err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"scheduler: 9 split(s) CUDA0 [nodes 0-", ", CPU [nodes ", ": ok"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, row := range [][2]string{{"SOFT_MAX", "CPU"}, {"SILU", "CPU"}, {"MUL_MAT", "CUDA0"}} {
		if !hasRow(s, row[0], row[1]) {
			t.Errorf("no %s row on %s in the per-op table", row[0], row[1])
		}
	}
}
