//go:build cgo

package ggml

/*
#include "ggml_go.h"
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
