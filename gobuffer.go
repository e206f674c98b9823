//go:build cgo

package ggml

/*
#include <stdlib.h>
#include <string.h>
#include "ggml_go.h"
#include "ggml-backend-impl.h"
#include "trampolines.h"

static bool ggo_tensor_is_host(const struct ggml_tensor * t) {
    ggml_backend_buffer_t b = t->buffer != NULL ? t->buffer : (t->view_src != NULL ? t->view_src->buffer : NULL);
    return b == NULL || ggml_backend_buffer_is_host(b);
}
static void * ggo_aligned_alloc(size_t align, size_t size) {
    void * p = NULL;
    if (posix_memalign(&p, align, size) != 0) {
        return NULL;
    }
    return p;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/cgo"
	"sync"
	"unsafe"
)

// BufferTypeImpl is implemented by Go values that define a buffer type (doc/design.md,
// "Go-implemented buffer types").
// NewBufferType turns one into a *BufferType that every C path accepts: allocators,
// AllocContextTensorsFromBufferType, a Scheduler's buffer types. The methods are called from C
// (through the GGML_CALL trampolines of csrc/), possibly from several threads; a panic is
// caught and reported as an error of the C call that made the callback.
type BufferTypeImpl interface {
	// Name returns the buffer type's name (read once, by NewBufferType).
	Name() string
	// Alloc returns a new buffer of size bytes.
	Alloc(size uint64) (BufferImpl, error)
	// Alignment returns the alignment of tensor addresses in the buffers (> 0).
	Alignment() uint64
	// AllocSize returns the bytes a buffer needs for t (at least t.Nbytes()).
	AllocSize(t *Tensor) uint64
	// SupportsBackend reports whether backend b can compute on tensors in these buffers.
	SupportsBackend(b *Backend) bool
	// IsHost reports whether the buffers are host memory the CPU can address directly.
	IsHost() bool
}

// BufferImpl is a buffer of a Go-implemented buffer type. Tensors placed in the buffer have
// data addresses in [Base(), Base()+size); the offset and data arguments are relative to the
// tensor's data address.
type BufferImpl interface {
	// Base returns the address of the buffer's memory. It must not be Go heap memory (use C
	// allocation or a memory mapping, e.g. HostBuffer); for memory the CPU cannot address it may
	// be any reserved address range the implementation translates.
	Base() uintptr
	// InitTensor prepares a tensor just placed in the buffer.
	InitTensor(t *Tensor) error
	// SetTensor copies data into t's memory starting offset bytes into the tensor.
	SetTensor(t *Tensor, data []byte, offset uint64) error
	// GetTensor copies len(data) bytes of t's memory starting offset bytes into the tensor.
	GetTensor(t *Tensor, data []byte, offset uint64) error
	// CopyTensor copies src (in any buffer) into dst (in this buffer); false: not handled, the
	// caller copies through host memory instead.
	CopyTensor(src, dst *Tensor) bool
	// Clear sets every byte of the buffer to v.
	Clear(v byte) error
	// Reset drops per-tensor state (the buffer's tensors are about to be placed anew).
	Reset()
	// Free releases the buffer's memory; it is called exactly once.
	Free()
}

// goBufType is the Go state of a Go-implemented buffer type; C reaches it through handle h.
type goBufType struct {
	impl  BufferTypeImpl
	c     C.ggml_backend_buffer_type_t // malloc'd by ggml_go_buft_create
	cname *C.char
	h     cgo.Handle

	mu       sync.Mutex
	nbuf     int  // live buffers of this type
	closed   bool // BufferType.Close (or its cleanup) ran
	freed    bool
	allocErr error // the error of the last failed Alloc, until a Go wrapper takes it
}

// takeAllocErr returns (and forgets) the error of bt's last failed Alloc, when bt is a Go
// buffer type whose Alloc failed; the Go wrappers that allocate wrap it into their *Error so
// that errors.Is/As reach the implementation's error.
func takeAllocErr(bt *BufferType) error {
	st := goBufTypeOf(bt)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	err := st.allocErr
	st.allocErr = nil
	return err
}

// withAllocErr adds the error of bt's failed Alloc (if any) to e.
func withAllocErr(e *Error, bt *BufferType) *Error {
	if err := takeAllocErr(bt); err != nil {
		e.Err = err
		e.Msg = "the buffer type's Alloc failed: " + err.Error()
	}
	return e
}

// goBuffer is the Go state of a buffer of a Go-implemented buffer type.
type goBuffer struct {
	impl BufferImpl
	bt   *goBufType
	size uint64
}

// NewBufferType creates a buffer type implemented in Go by impl. Close it when done; the C
// object and its handle are released once it is closed and every buffer allocated from it has
// been freed, so closing the type before its buffers (or a scheduler using it) is safe.
func NewBufferType(impl BufferTypeImpl) (*BufferType, error) {
	const op = "NewBufferType"
	if impl == nil {
		return nil, &Error{Op: op, Msg: "nil BufferTypeImpl"}
	}
	st := &goBufType{impl: impl, cname: C.CString(impl.Name())}
	st.h = newHandle(st)
	st.c = C.ggml_go_buft_create(C.uintptr_t(st.h))
	if st.c == nil {
		C.free(unsafe.Pointer(st.cname))
		deleteHandle(st.h)
		return nil, &Error{Op: op, Msg: "out of memory"}
	}
	bt := &BufferType{c: st.c}
	bt.ref = newNativeRef(bt, "go buffer type", st.close)
	return bt, nil
}

// close marks the type closed and frees it when no buffer is left.
func (st *goBufType) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.closed = true
	st.maybeFree()
}

// maybeFree frees the C object and the handle once closed and unused (st.mu held).
func (st *goBufType) maybeFree() {
	if !st.closed || st.nbuf > 0 || st.freed {
		return
	}
	st.freed = true
	C.ggml_go_buft_delete(st.c)
	C.free(unsafe.Pointer(st.cname))
	deleteHandle(st.h)
}

// addBuffer registers a new buffer of the type and returns its handle.
func (st *goBufType) addBuffer(impl BufferImpl, size uint64) cgo.Handle {
	st.mu.Lock()
	st.nbuf++
	st.mu.Unlock()
	return newHandle(&goBuffer{impl: impl, bt: st, size: size})
}

// removeBuffer releases the handle of a freed buffer.
func (st *goBufType) removeBuffer(h cgo.Handle) {
	deleteHandle(h)
	st.mu.Lock()
	defer st.mu.Unlock()
	st.nbuf--
	st.maybeFree()
}

// newBuffer wraps impl (size bytes) as a buffer of the type, outside alloc_buffer (MapFile).
func (st *goBufType) newBuffer(op string, impl BufferImpl, size uint64) (*Buffer, error) {
	h := st.addBuffer(impl, size)
	c := C.ggml_go_buffer_create(st.c, C.uintptr_t(h), C.size_t(size))
	if c == nil {
		impl.Free()
		st.removeBuffer(h)
		return nil, &Error{Op: op, Msg: "out of memory"}
	}
	return newOwnedBuffer(c), nil
}

// goBufTypeOf returns the Go state of a Go-implemented buffer type (nil for others, and for a
// closed one: its C object may be freed already).
func goBufTypeOf(bt *BufferType) *goBufType {
	if bt == nil || bt.c == nil || (bt.ref != nil && bt.ref.released()) || !bool(C.ggml_go_buft_is_go(bt.c)) {
		return nil
	}
	return cgo.Handle(bt.c.context).Value().(*goBufType)
}

// Impl returns the Go implementation of a buffer type made by NewBufferType, or nil.
func (bt *BufferType) Impl() BufferTypeImpl {
	if st := goBufTypeOf(bt); st != nil {
		return st.impl
	}
	return nil
}

// Impl returns the Go implementation of a buffer of a Go-implemented buffer type, or nil.
func (b *Buffer) Impl() BufferImpl {
	h := C.ggml_go_buffer_handle(b.cptr("Buffer.Impl"))
	if h == 0 {
		return nil
	}
	return cgo.Handle(h).Value().(*goBuffer).impl
}

// errReadOnly is returned by writes into a read-only HostBuffer (a file mapping).
var errReadOnly = errors.New("the buffer is read-only")

// HostBuffer is host memory allocated by C (never Go heap memory): a ready-made BufferImpl for
// Go buffer types whose buffers are plain host memory. Embed it to override some methods (to
// count or log accesses, for instance).
type HostBuffer struct {
	base     unsafe.Pointer
	size     uint64
	readOnly bool
	free     func(base unsafe.Pointer, size uint64)
	once     sync.Once
}

// NewHostBuffer allocates size bytes of C memory aligned to alignment (a power of two; 0
// means 64).
func NewHostBuffer(size, alignment uint64) (*HostBuffer, error) {
	if alignment == 0 {
		alignment = 64
	}
	if alignment&(alignment-1) != 0 || alignment < uint64(unsafe.Sizeof(uintptr(0))) {
		return nil, fmt.Errorf("ggml: NewHostBuffer: alignment %d is not a power of two >= %d", alignment, unsafe.Sizeof(uintptr(0)))
	}
	n := size
	if n == 0 {
		n = alignment // a valid, distinct base address even for empty buffers
	}
	p := C.ggo_aligned_alloc(C.size_t(alignment), C.size_t(n))
	if p == nil {
		return nil, fmt.Errorf("ggml: NewHostBuffer: cannot allocate %d bytes", size)
	}
	return &HostBuffer{base: p, size: size, free: func(p unsafe.Pointer, _ uint64) { C.free(p) }}, nil
}

// Size returns the buffer's size in bytes.
func (m *HostBuffer) Size() uint64 { return m.size }

// Bytes returns the buffer's memory as a slice (valid until Free).
func (m *HostBuffer) Bytes() []byte {
	if m.size == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(m.base), int(m.size))
}

// Base returns the address of the memory.
func (m *HostBuffer) Base() uintptr { return uintptr(m.base) }

// InitTensor does nothing.
func (m *HostBuffer) InitTensor(*Tensor) error { return nil }

// region returns the n bytes of t's memory starting off bytes into the tensor, checking that
// they lie inside the buffer.
func (m *HostBuffer) region(t *Tensor, off, n uint64) ([]byte, error) {
	if t == nil || t.c == nil || t.c.data == nil {
		return nil, errors.New("tensor has no data")
	}
	addr := uint64(uintptr(t.c.data))
	base := uint64(uintptr(m.base))
	if addr < base || addr-base > m.size || off > m.size-(addr-base) || n > m.size-(addr-base)-off {
		return nil, fmt.Errorf("bytes [%d, %d) of the tensor are outside the buffer", off, off+n)
	}
	if n == 0 {
		return nil, nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(m.base, addr-base+off)), int(n)), nil
}

// SetTensor copies data into the tensor's memory.
func (m *HostBuffer) SetTensor(t *Tensor, data []byte, off uint64) error {
	if m.readOnly {
		return errReadOnly
	}
	dst, err := m.region(t, off, uint64(len(data)))
	if err != nil {
		return err
	}
	copy(dst, data)
	return nil
}

// GetTensor copies the tensor's memory into data.
func (m *HostBuffer) GetTensor(t *Tensor, data []byte, off uint64) error {
	src, err := m.region(t, off, uint64(len(data)))
	if err != nil {
		return err
	}
	copy(data, src)
	return nil
}

// CopyTensor copies src into dst when src is host memory.
func (m *HostBuffer) CopyTensor(src, dst *Tensor) bool {
	if m.readOnly || src == nil || src.c == nil || src.c.data == nil || !bool(C.ggo_tensor_is_host(src.c)) {
		return false
	}
	n := uint64(C.ggml_nbytes(src.c))
	d, err := m.region(dst, 0, n)
	if err != nil {
		return false
	}
	if n > 0 {
		C.memmove(unsafe.Pointer(&d[0]), src.c.data, C.size_t(n))
	}
	return true
}

// Clear sets every byte to v.
func (m *HostBuffer) Clear(v byte) error {
	if m.readOnly {
		return errReadOnly
	}
	if m.size > 0 {
		C.memset(m.base, C.int(v), C.size_t(m.size))
	}
	return nil
}

// Reset does nothing.
func (m *HostBuffer) Reset() {}

// Free releases the memory (once).
func (m *HostBuffer) Free() {
	m.once.Do(func() {
		if m.free != nil {
			m.free(m.base, m.size)
		}
	})
}
