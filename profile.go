//go:build cgo

package ggml

/*
#include "ggml_go.h"
*/
import "C"

import (
	"io"
	"unsafe"
)

// ProfileEnabled reports whether the CPU engine profiles graph computes: the environment
// variable GGML_X_PROFILE is 1 (time per op type, MUL_MAT split by weight type) or 2 (also per
// node index), read once at the first compute.
func ProfileEnabled() bool {
	return bool(C.ggml_x_profile_enabled())
}

// ProfileReport returns the CPU engine's profile of the graph computes so far ("" when
// profiling is off or nothing was computed). The C library prints the report at exit, but a Go
// program never runs C's exit handlers: a program that wants the report takes it here, for
// example with `defer ggml.WriteProfile(os.Stderr)` in main. Once taken, the report is no longer
// printed at exit.
func ProfileReport() string {
	n := C.ggml_x_profile_report(nil, 0)
	if n == 0 {
		return ""
	}
	buf := make([]byte, int(n)+1)
	n = C.ggml_x_profile_report((*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
	return string(buf[:min(int(n), len(buf)-1)])
}

// WriteProfile writes ProfileReport to w when profiling is on and there is something to report.
func WriteProfile(w io.Writer) error {
	if r := ProfileReport(); r != "" {
		_, err := io.WriteString(w, r)
		return err
	}
	return nil
}

// ResetProfile starts the profile's totals again (e.g. after a warm-up).
func ResetProfile() {
	C.ggml_x_profile_reset()
}
