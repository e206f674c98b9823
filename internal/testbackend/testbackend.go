//go:build cgo

// Package testbackend exposes the "Test" backend of ggml/tests/testbackend.c to Go tests: a
// backend that computes on the CPU but whose buffers are not host memory (their addresses are
// a reserved, inaccessible range), and that can be told to reject chosen ops. With it the
// scheduler can be exercised across two backends ([Test, CPU]) on a CPU-only machine. It is
// test code, not part of the library.
package testbackend

/*
#cgo CFLAGS: -O2 -std=gnu11 -I${SRCDIR}/../../ggml/include -I${SRCDIR}/../../ggml/src -I${SRCDIR}/../../ggml/tests
#include "testbackend.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	"github.com/ggml-go/ggml"
)

// New creates a Test backend whose internal CPU backend uses threads threads (< 1: 1)
// (testbackend_init). Close it like any backend.
func New(threads int) (*ggml.Backend, error) {
	c := C.testbackend_init(C.int(threads))
	if c == nil {
		return nil, errors.New("testbackend: out of memory")
	}
	return ggml.WrapBackend(unsafe.Pointer(c))
}

// Is reports whether b is a Test backend (testbackend_is).
func Is(b *ggml.Backend) bool {
	return bool(C.testbackend_is(C.ggml_backend_t(b.Native())))
}

// BufferType returns the Test buffer type (one static object; Close does nothing).
func BufferType() *ggml.BufferType {
	return ggml.WrapBufferType(unsafe.Pointer(C.testbackend_buffer_type()))
}

// Reject makes b's SupportsOp reject op (reject = true) or accept it again
// (testbackend_reject_op). b must be a Test backend.
func Reject(b *ggml.Backend, op ggml.Op, reject bool) {
	C.testbackend_reject_op(C.ggml_backend_t(b.Native()), C.enum_ggml_op(op), C.bool(reject))
}

// Register adds "Test" to the backend registry (once; params "threads=N").
func Register() {
	C.testbackend_register()
}

// GetStats returns the current counters.
func GetStats() Stats {
	var s C.struct_testbackend_stats
	C.testbackend_get_stats(&s)
	return Stats{
		Sets: int64(s.n_set), Gets: int64(s.n_get), Copies: int64(s.n_cpy),
		SetsAsync: int64(s.n_set_async), GetsAsync: int64(s.n_get_async), CopiesAsync: int64(s.n_cpy_async),
		GraphComputes: int64(s.n_graph_compute), Nodes: int64(s.n_nodes),
		Buffers: int64(s.n_buffers), BufferResets: int64(s.n_buffer_resets),
	}
}

// ResetStats zeroes every counter except Buffers.
func ResetStats() {
	C.testbackend_reset_stats()
}
