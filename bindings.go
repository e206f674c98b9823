//go:build cgo

// The binding core of package ggml: the cgo flags, the C libraries it links, the process-wide
// setup of the C library and the helpers every cgo call of the package goes through.
//
// The C library itself is compiled by the packages imported below, one per C source folder
// (see doc/design.md, "Build layout"); its symbols resolve when the program is linked.
//
// Calls and errors: the C library records an error message per OS thread (ggml_x_last_error)
// instead of aborting. A goroutine may move to another thread between two cgo calls, so each
// call that can fail goes through a static helper of a cgo preamble built with the GGO_PCALL,
// GGO_ICALL or GGO_VCALL macros of csrc/ggml_go.h: the helper clears the message, makes the
// call and returns the result together with a malloc'd copy of the message, all within one C
// call; takeCError turns that copy into a Go string.

package ggml

/*
#cgo CFLAGS: -O2 -std=gnu11 -I${SRCDIR}/ggml/include -I${SRCDIR}/ggml/src -I${SRCDIR}/csrc
#cgo LDFLAGS: -lm -pthread
#include "ggml_go.h"

// how GGML_CALL (the vtable and trampoline ABI) was compiled
static int ggo_call_abi(void) {
#if defined(GGML_MULTIPLATFORM) && defined(__x86_64__) && !defined(_WIN32)
    return 2;
#elif defined(GGML_MULTIPLATFORM)
    return 1;
#else
    return 0;
#endif
}
*/
import "C"

import (
	"strings"
	"unsafe"

	// the C library, one package per C source folder
	_ "github.com/ggml-go/ggml/csrc"
	_ "github.com/ggml-go/ggml/ggml/include"
	_ "github.com/ggml-go/ggml/ggml/src"
	_ "github.com/ggml-go/ggml/ggml/src/cpu"
	_ "github.com/ggml-go/ggml/ggml/src/ops"
	_ "github.com/ggml-go/ggml/ggml/src/rpc"
)

func init() {
	// No C call made by this package may abort the process: every failure is recorded and
	// reported as a Go value instead (doc/design.md, "Errors never abort").
	C.ggml_x_set_default_recoverable(C.bool(true))
}

// Available reports whether the C library is usable: nil in cgo builds, ErrNoCgo otherwise.
func Available() error {
	return nil
}

// takeCError converts a message returned by a ggml_go.h helper to a string and frees it. A
// message of the C library that has a Go remedy gets it appended (see cHints).
func takeCError(p *C.char) string {
	if p == nil {
		return ""
	}
	s := C.GoString(p)
	C.free(unsafe.Pointer(p))
	for _, h := range cHints {
		if strings.Contains(s, h.marker) {
			s += h.hint
			break
		}
	}
	return s
}

// cHints are what a Go user can do about some C messages.
var cHints = []struct{ marker, hint string }{
	{"not enough space in the context's arena",
		": create the context with a larger Params.MemSize (each tensor needs TensorOverhead() bytes, each graph " +
			"GraphOverhead(), plus the tensors' data unless NoAlloc is set)"},
}

// callABI describes how the C code of this build compiled GGML_CALL: "default" (no
// GGML_MULTIPLATFORM), "multiplatform" (defined, but the platform's default convention) or
// "ms_abi" (defined on x86-64: the vtables and the csrc/ trampolines use the Microsoft x64
// convention).
func callABI() string {
	switch C.ggo_call_abi() {
	case 2:
		return "ms_abi"
	case 1:
		return "multiplatform"
	}
	return "default"
}
