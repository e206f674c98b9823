//go:build cgo

package ggml

/*
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
	"unsafe"
)

// Interoperation with other cgo packages that create ggml objects in C (a backend written in C,
// the test backend of internal/testbackend, ...). The pointers are the C library's
// ggml_backend_t / ggml_backend_buffer_type_t values.

// BackendFromNative wraps a C ggml_backend_t; the *Backend owns it: Close frees it with
// ggml_backend_free. It returns nil for nil.
func BackendFromNative(p unsafe.Pointer) *Backend {
	if p == nil {
		return nil
	}
	return newOwnedBackend(C.ggml_backend_t(p))
}

// Native returns the backend's C ggml_backend_t.
func (b *Backend) Native() unsafe.Pointer {
	return unsafe.Pointer(b.cptr("Backend.Native"))
}

// BufferTypeFromNative wraps a C ggml_backend_buffer_type_t this package does not own (a
// static buffer type of a C backend); Close does nothing. It returns nil for nil.
func BufferTypeFromNative(p unsafe.Pointer) *BufferType {
	return borrowedBufferType(C.ggml_backend_buffer_type_t(p))
}

// Native returns the buffer type's C ggml_backend_buffer_type_t.
func (bt *BufferType) Native() unsafe.Pointer {
	return unsafe.Pointer(bt.cptr("BufferType.Native"))
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
