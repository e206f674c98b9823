//go:build cgo

package ggml

// Hooks for packages that add backends (such as github.com/ggml-go/ggml/cuda).
//
// cgo gives every Go package its own C types, so a package that creates a ggml_backend_t or a
// ggml_backend_buffer_type_t with its own cgo calls cannot build a *Backend or a *BufferType
// itself. It passes the C pointer across as an unsafe.Pointer instead, and these functions wrap
// it with the same ownership rules as the handles this package creates.

/*
#include "ggml_go.h"
*/
import "C"

import (
	"sync"
	"unsafe"
)

// wrappedBackends holds the C backends currently owned through WrapBackend, so that wrapping
// one twice (which would free it twice) is refused.
var wrappedBackends sync.Map // uintptr -> struct{}

// WrapBackend takes ownership of a C backend created by a package that adds a backend: p must
// be a ggml_backend_t (for example unsafe.Pointer(C.ggml_backend_cuda_init(0)) in that
// package's cgo code) that nothing else frees or uses afterwards. The returned *Backend owns it:
// Close (or, as a safety net, the garbage collector) frees it with ggml_backend_free, and it
// counts in LiveObjects like any other backend.
//
// WrapBackend is meant for backend packages, not for applications, which get backends from
// NewCPU, InitBackend or the backend package's own constructors. It returns a *Error for a nil
// p, and for a p that is already owned by a *Backend returned by WrapBackend and not yet closed.
func WrapBackend(p unsafe.Pointer) (*Backend, error) {
	const op = "WrapBackend"
	if p == nil {
		return nil, &Error{Op: op, Msg: "nil ggml_backend_t"}
	}
	key := uintptr(p)
	if _, dup := wrappedBackends.LoadOrStore(key, struct{}{}); dup {
		return nil, &Error{Op: op, Msg: "ggml_backend_t already owned by another *Backend"}
	}
	c := C.ggml_backend_t(p)
	b := &Backend{c: c}
	b.ref = newNativeRef(b, "backend", func() {
		// forget the address before freeing: once freed it may be handed out again
		wrappedBackends.Delete(key)
		C.ggml_backend_free(c)
	})
	return b, nil
}

// WrapBufferType wraps a C buffer type provided by a package that adds a backend: p must be a
// ggml_backend_buffer_type_t (for example unsafe.Pointer(C.ggml_backend_cuda_buffer_type(0))
// in that package's cgo code) that stays valid for as long as the returned *BufferType, and
// every buffer allocated from it, is used — in practice a static buffer type that is never
// freed, as the buffer types of ggml's backends are. The *BufferType does not own it: Close does
// nothing and it does not count in LiveObjects. Buffers allocated from it are owned and counted
// as usual.
//
// WrapBufferType is meant for backend packages, not for applications. It returns nil for a nil
// p.
func WrapBufferType(p unsafe.Pointer) *BufferType {
	return borrowedBufferType(C.ggml_backend_buffer_type_t(p))
}

// Native returns the backend's C ggml_backend_t, for packages that add backends or C code of
// their own.
func (b *Backend) Native() unsafe.Pointer {
	return unsafe.Pointer(b.cptr("Backend.Native"))
}

// Native returns the buffer type's C ggml_backend_buffer_type_t, for packages that add
// backends or C code of their own.
func (bt *BufferType) Native() unsafe.Pointer {
	return unsafe.Pointer(bt.cptr("BufferType.Native"))
}
