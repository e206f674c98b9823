//go:build cgo

package ggml

import (
	"os"
	"runtime"
	"testing"
)

// TestTrampolineABI reports the calling convention of the GGML_CALL trampolines. Under
// `make test-multiplatform` (GGML_TEST_MULTIPLATFORM=1, CGO_CFLAGS with -DGGML_MULTIPLATFORM)
// it checks that the define reached the C code, so that the Go buffer type tests really ran
// through ms_abi trampolines on x86-64.
func TestTrampolineABI(t *testing.T) {
	abi := callABI()
	t.Logf("GGML_CALL ABI: %s", abi)
	if os.Getenv("GGML_TEST_MULTIPLATFORM") == "" {
		return
	}
	want := "multiplatform"
	if runtime.GOARCH == "amd64" && runtime.GOOS != "windows" {
		want = "ms_abi"
	}
	if abi != want {
		t.Fatalf("built for the multiplatform test, but GGML_CALL is %q, want %q (CGO_CFLAGS lacks -DGGML_MULTIPLATFORM?)", abi, want)
	}
}

// TestGoBufferTypeRoundTrip checks the trampolines of every vtable entry from inside the
// package: the C library calls them and the Go implementation answers.
func TestGoBufferTypeRoundTrip(t *testing.T) {
	h0 := LiveHandles()
	bt, err := NewBufferType(mmapImpl{})
	if err != nil {
		t.Fatal(err)
	}
	if got := bt.Name(); got != "Mmap" {
		t.Errorf("name %q", got)
	}
	if bt.Alignment() != 64 || !bt.IsHost() {
		t.Errorf("alignment %d, host %v", bt.Alignment(), bt.IsHost())
	}
	if goBufTypeOf(bt) == nil || goBufTypeOf(CPUBufferType()) != nil {
		t.Error("goBufTypeOf does not tell Go types from C types")
	}
	buf, err := bt.AllocBuffer(1000)
	if err != nil {
		t.Fatal(err)
	}
	if !buf.HasBase() || buf.Size() != 1000 || buf.Name() != "Mmap" {
		t.Errorf("buffer: base %v size %d name %q", buf.HasBase(), buf.Size(), buf.Name())
	}
	buf.Clear(3)
	buf.Reset()
	if LiveHandles() != h0+2 {
		t.Errorf("handles: %d, want %d", LiveHandles(), h0+2)
	}
	buf.Close()
	bt.Close()
	if LiveHandles() != h0 {
		t.Errorf("handles after Close: %d, want %d", LiveHandles(), h0)
	}
}
