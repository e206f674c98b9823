//go:build cgo

package ggml

/*
#include "ggml_go.h"
#include "ggml-backend-impl.h"

static ggo_pres ggo_ggml_backend_buft_alloc_buffer(ggml_backend_buffer_type_t t, size_t size) { GGO_PCALL(ggml_backend_buft_alloc_buffer(t, size)); }
static ggo_ires ggo_ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t t, struct ggml_tensor * x) { GGO_ICALL(ggml_backend_buft_get_alloc_size(t, x)); }
static ggo_ires ggo_ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t b, struct ggml_tensor * x) { GGO_ICALL(ggml_backend_buffer_get_alloc_size(b, x)); }
static char * ggo_ggml_backend_buffer_init_tensor(ggml_backend_buffer_t b, struct ggml_tensor * x) { GGO_VCALL(ggml_backend_buffer_init_tensor(b, x)); }
static ggo_pres ggo_ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_t b) { GGO_PCALL(ggml_backend_alloc_ctx_tensors(ctx, b)); }
static ggo_pres ggo_ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t t) { GGO_PCALL(ggml_backend_alloc_ctx_tensors_from_buft(ctx, t)); }
static char * ggo_ggml_backend_tensor_alloc(ggml_backend_buffer_t b, struct ggml_tensor * x, size_t offset) {
    void * base = ggml_backend_buffer_get_base(b);
    GGO_VCALL(ggml_backend_tensor_alloc(b, x, (char *) base + offset));
}
static char * ggo_ggml_backend_view_init(ggml_backend_buffer_t b, struct ggml_tensor * x) { GGO_VCALL(ggml_backend_view_init(b, x)); }
static int ggo_buffer_usage(ggml_backend_buffer_t b) { return (int) b->usage; }

static ggo_pres ggo_ggml_tallocr_new_measure(size_t alignment) { GGO_PCALL(ggml_tallocr_new_measure(alignment)); }
static ggo_pres ggo_ggml_tallocr_new_from_buft(ggml_backend_buffer_type_t t, size_t size) { GGO_PCALL(ggml_tallocr_new_from_buft(t, size)); }
static ggo_pres ggo_ggml_tallocr_new_from_backend(ggml_backend_t b, size_t size) { GGO_PCALL(ggml_tallocr_new_from_backend(b, size)); }
static ggo_pres ggo_ggml_tallocr_new_from_buffer(ggml_backend_buffer_t b) { GGO_PCALL(ggml_tallocr_new_from_buffer(b)); }
static ggo_pres ggo_ggml_tallocr_new_measure_from_buft(ggml_backend_buffer_type_t t) { GGO_PCALL(ggml_tallocr_new_measure_from_buft(t)); }
static ggo_pres ggo_ggml_tallocr_new_measure_from_backend(ggml_backend_t b) { GGO_PCALL(ggml_tallocr_new_measure_from_backend(b)); }
static char * ggo_ggml_tallocr_alloc(ggml_tallocr_t a, struct ggml_tensor * x) { GGO_VCALL(ggml_tallocr_alloc(a, x)); }

// A measuring allocator gives tensors addresses in a fake buffer; forget them so that no data
// access can reach them (measuring gives a tensor no memory).
static void ggo_forget_measured(struct ggml_tensor * t, ggml_backend_buffer_t fake) {
    if (t != NULL && t->buffer == fake) {
        t->data = NULL;
        t->buffer = NULL;
    }
}
static void ggo_forget_measured_graph(struct ggml_cgraph * g, ggml_backend_buffer_t fake) {
    for (int i = 0; i < g->n_nodes; i++) {
        ggo_forget_measured(g->nodes[i], fake);
    }
    for (int i = 0; i < g->n_leafs; i++) {
        ggo_forget_measured(g->leafs[i], fake);
    }
}
static ggo_pres ggo_ggml_gallocr_new(void) { GGO_PCALL(ggml_gallocr_new()); }
static ggo_ires ggo_ggml_gallocr_alloc_graph(ggml_gallocr_t g, ggml_tallocr_t a, struct ggml_cgraph * graph) {
    GGO_ICALL(ggml_gallocr_alloc_graph(g, a, graph));
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// BufferType describes a kind of memory and how to allocate it (ggml_backend_buffer_type_t):
// CPU memory, a device's memory, or a Go-implemented type. Built-in buffer types are static:
// Close does nothing for them.
type BufferType struct {
	c   C.ggml_backend_buffer_type_t
	ref *nativeRef // non-nil for buffer types created from Go: Close releases them
}

// cptr returns the C buffer type, panicking with a *Error naming op when bt is nil or closed.
func (bt *BufferType) cptr(op string) C.ggml_backend_buffer_type_t {
	if bt == nil || bt.c == nil {
		panic(&Error{Op: op, Msg: "nil *BufferType"})
	}
	if bt.ref != nil && bt.ref.released() {
		panic(&Error{Op: op, Msg: "buffer type used after Close", Err: ErrClosed})
	}
	return bt.c
}

// borrowedBufferType wraps a buffer type this package does not own.
func borrowedBufferType(c C.ggml_backend_buffer_type_t) *BufferType {
	if c == nil {
		return nil
	}
	return &BufferType{c: c}
}

// CPUBufferType returns the buffer type of host memory used by the CPU backend
// (ggml_backend_cpu_buffer_type).
func CPUBufferType() *BufferType {
	return borrowedBufferType(C.ggml_backend_cpu_buffer_type())
}

// CPURepackBufferType returns the CPU buffer type whose Q4_0, Q8_0, Q4_K and Q6_K 2-D weight matrices (at
// least 8 rows) are stored repacked, interleaved by groups of 8 rows, for the CPU backend's
// matrix products (ggml_x_backend_cpu_repack_buffer_type; registry entry "CPU_REPACK"). Matrix-
// vector products and small batches then stream each weight once. Its memory is not host memory:
// tensor data is read and written through Tensor methods (any offset and size), which convert.
// Only MUL_MAT may read a repacked tensor, as its first operand and not through a view; a graph
// where another op reads one fails to compute with an error. Other tensors are stored plainly.
func CPURepackBufferType() *BufferType {
	return borrowedBufferType(C.ggml_x_backend_cpu_repack_buffer_type())
}

// CPURepackHasKernel reports whether CPURepackBufferType repacks weights of type t and the running
// CPU has SIMD kernels for them (ggml_x_backend_cpu_repack_has_kernel). Where it is false for a
// repacked type, only portable scalar kernels multiply those weights: correct, but slower than
// the CPU buffer's dot products, so keep such weights in a CPU buffer.
func CPURepackHasKernel(t Type) bool {
	return bool(C.ggml_x_backend_cpu_repack_has_kernel(C.enum_ggml_type(t)))
}

// Close releases a buffer type created from Go; it does nothing for built-in types. It is
// idempotent and returns nil. Buffers allocated from the type must be closed first.
func (bt *BufferType) Close() error {
	if bt != nil {
		bt.ref.release()
	}
	return nil
}

// Name returns the buffer type's name (ggml_backend_buft_name).
func (bt *BufferType) Name() string {
	return C.GoString(C.ggml_backend_buft_name(bt.cptr("BufferType.Name")))
}

// Alignment returns the alignment of tensors in buffers of this type
// (ggml_backend_buft_get_alignment).
func (bt *BufferType) Alignment() uint64 {
	return uint64(C.ggml_backend_buft_get_alignment(bt.cptr("BufferType.Alignment")))
}

// AllocSize returns the bytes a buffer of this type needs for t (ggml_backend_buft_get_alloc_size).
func (bt *BufferType) AllocSize(t *Tensor) uint64 {
	const op = "BufferType.AllocSize"
	r := C.ggo_ggml_backend_buft_get_alloc_size(bt.cptr(op), t.cptr(op))
	if msg := takeCError(r.err); msg != "" {
		panic(&Error{Op: op, Shapes: t.describe(), Msg: msg})
	}
	return uint64(r.v)
}

// SupportsBackend reports whether backend b can use buffers of this type
// (ggml_backend_buft_supports_backend).
func (bt *BufferType) SupportsBackend(b *Backend) bool {
	const op = "BufferType.SupportsBackend"
	return bool(C.ggml_backend_buft_supports_backend(bt.cptr(op), b.cptr(op)))
}

// IsHost reports whether buffers of this type are host memory the CPU can address
// (ggml_backend_buft_is_host).
func (bt *BufferType) IsHost() bool {
	return bool(C.ggml_backend_buft_is_host(bt.cptr("BufferType.IsHost")))
}

// AllocBuffer allocates a buffer of this type (ggml_backend_buft_alloc_buffer).
func (bt *BufferType) AllocBuffer(size uint64) (_ *Buffer, err error) {
	defer errOnClosed(&err)
	const op = "BufferType.AllocBuffer"
	r := C.ggo_ggml_backend_buft_alloc_buffer(bt.cptr(op), C.size_t(size))
	buf, err := bufferResult(op, size, r)
	if err != nil {
		return nil, withAllocErr(err.(*Error), bt)
	}
	return buf, nil
}

// Buffer is a block of backend memory holding tensors (ggml_backend_buffer_t).
type Buffer struct {
	c   C.ggml_backend_buffer_t
	ref *nativeRef // nil for a borrowed buffer (owned by a scheduler, an allocator, ...)
}

// cptr returns the C buffer, panicking with a *Error naming op when b is nil or closed.
func (b *Buffer) cptr(op string) C.ggml_backend_buffer_t {
	if b == nil || b.c == nil {
		panic(&Error{Op: op, Msg: "nil *Buffer"})
	}
	if b.ref != nil && b.ref.released() {
		panic(&Error{Op: op, Msg: "buffer used after Close", Err: ErrClosed})
	}
	return b.c
}

// newOwnedBuffer wraps a buffer this package frees.
func newOwnedBuffer(c C.ggml_backend_buffer_t) *Buffer {
	b := &Buffer{c: c}
	b.ref = newNativeRef(b, "buffer", func() {
		detachBuffer(c)
		C.ggml_backend_buffer_free(c)
	})
	return b
}

// borrowedBuffer wraps a buffer owned by someone else; Close does nothing.
func borrowedBuffer(c C.ggml_backend_buffer_t) *Buffer {
	if c == nil {
		return nil
	}
	return &Buffer{c: c}
}

// bufferResult converts an allocation result to an owned *Buffer or a *Error.
func bufferResult(op string, size uint64, r C.ggo_pres) (*Buffer, error) {
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "allocation failed"
		}
		return nil, &Error{Op: op, Shapes: fmt.Sprintf("size=%d", size), Msg: msg}
	}
	return newOwnedBuffer(C.ggml_backend_buffer_t(r.p)), nil
}

// Close frees the buffer (ggml_backend_buffer_free). Tensors placed in it must not be used
// afterwards. Close is idempotent and returns nil; closing a borrowed buffer does nothing.
func (b *Buffer) Close() error {
	if b != nil {
		b.ref.release()
	}
	return nil
}

// Name returns the buffer's name (ggml_backend_buffer_name).
func (b *Buffer) Name() string {
	return C.GoString(C.ggml_backend_buffer_name(b.cptr("Buffer.Name")))
}

// Size returns the buffer's size in bytes (ggml_backend_buffer_get_size).
func (b *Buffer) Size() uint64 {
	return uint64(C.ggml_backend_buffer_get_size(b.cptr("Buffer.Size")))
}

// HasBase reports whether the buffer has a base address (ggml_backend_buffer_get_base != NULL).
func (b *Buffer) HasBase() bool {
	return C.ggml_backend_buffer_get_base(b.cptr("Buffer.HasBase")) != nil
}

// Alignment returns the alignment of tensors in the buffer (ggml_backend_buffer_get_alignment).
func (b *Buffer) Alignment() uint64 {
	return uint64(C.ggml_backend_buffer_get_alignment(b.cptr("Buffer.Alignment")))
}

// AllocSize returns the bytes the buffer needs for t (ggml_backend_buffer_get_alloc_size).
func (b *Buffer) AllocSize(t *Tensor) uint64 {
	const op = "Buffer.AllocSize"
	r := C.ggo_ggml_backend_buffer_get_alloc_size(b.cptr(op), t.cptr(op))
	if msg := takeCError(r.err); msg != "" {
		panic(&Error{Op: op, Shapes: t.describe(), Msg: msg})
	}
	return uint64(r.v)
}

// IsHost reports whether the buffer is host memory (ggml_backend_buffer_is_host).
func (b *Buffer) IsHost() bool {
	return bool(C.ggml_backend_buffer_is_host(b.cptr("Buffer.IsHost")))
}

// Clear sets every byte of the buffer to v (ggml_backend_buffer_clear).
func (b *Buffer) Clear(v byte) {
	C.ggml_backend_buffer_clear(b.cptr("Buffer.Clear"), C.uint8_t(v))
}

// SetUsage tells the scheduler what the buffer holds (ggml_backend_buffer_set_usage).
func (b *Buffer) SetUsage(u BufferUsage) {
	C.ggml_backend_buffer_set_usage(b.cptr("Buffer.SetUsage"), C.enum_ggml_backend_buffer_usage(u))
}

// Usage returns the usage set with SetUsage.
func (b *Buffer) Usage() BufferUsage {
	return BufferUsage(C.ggo_buffer_usage(b.cptr("Buffer.Usage")))
}

// Reset releases backend-specific per-tensor state of the buffer (ggml_backend_buffer_reset).
func (b *Buffer) Reset() {
	C.ggml_backend_buffer_reset(b.cptr("Buffer.Reset"))
}

// Type returns the buffer's type (ggml_backend_buffer_get_type).
func (b *Buffer) Type() *BufferType {
	return borrowedBufferType(C.ggml_backend_buffer_get_type(b.cptr("Buffer.Type")))
}

// InitTensor lets the buffer prepare a tensor already placed in it
// (ggml_backend_buffer_init_tensor).
func (b *Buffer) InitTensor(t *Tensor) (err error) {
	defer errOnClosed(&err)
	const op = "Buffer.InitTensor"
	if msg := takeCError(C.ggo_ggml_backend_buffer_init_tensor(b.cptr(op), t.cptr(op))); msg != "" {
		return &Error{Op: op, Shapes: t.describe(), Msg: msg}
	}
	return nil
}

// PlaceTensor places t (which has no data yet) at byte offset off of the buffer
// (ggml_backend_tensor_alloc). The buffer is kept alive as long as t's context.
func (b *Buffer) PlaceTensor(t *Tensor, off uint64) (err error) {
	defer errOnClosed(&err)
	const op = "Buffer.PlaceTensor"
	c := b.cptr(op)
	tc := t.cptr(op)
	if C.ggml_backend_buffer_get_base(c) == nil {
		return &Error{Op: op, Shapes: t.describe(), Msg: "buffer has no base address"}
	}
	if msg := takeCError(C.ggo_ggml_backend_tensor_alloc(c, tc, C.size_t(off))); msg != "" {
		return &Error{Op: op, Shapes: t.describe(), Msg: msg}
	}
	if t.ctx != nil {
		t.ctx.keepAlive(b)
	}
	return nil
}

// InitView gives the view t (whose view source is already in the buffer) its data pointer
// (ggml_backend_view_init).
func (b *Buffer) InitView(t *Tensor) (err error) {
	defer errOnClosed(&err)
	const op = "Buffer.InitView"
	if msg := takeCError(C.ggo_ggml_backend_view_init(b.cptr(op), t.cptr(op))); msg != "" {
		return &Error{Op: op, Shapes: t.describe(), Msg: msg}
	}
	return nil
}

// AllocContextTensors allocates one buffer of the backend's default buffer type holding every
// tensor of ctx that has no data yet (ggml_backend_alloc_ctx_tensors). The buffer stays alive
// at least as long as ctx; Close it when the tensors are no longer needed (or let the context's
// lifetime decide). It returns an error when there is nothing to allocate or allocation fails.
func AllocContextTensors(ctx *Context, b *Backend) (_ *Buffer, err error) {
	defer errOnClosed(&err)
	const op = "AllocContextTensors"
	r := C.ggo_ggml_backend_alloc_ctx_tensors(ctx.cptr(op), b.cptr(op))
	return ctxBufferResult(op, ctx, r)
}

// AllocContextTensorsFromBufferType is AllocContextTensors with an explicit buffer type
// (ggml_backend_alloc_ctx_tensors_from_buft).
func AllocContextTensorsFromBufferType(ctx *Context, bt *BufferType) (_ *Buffer, err error) {
	defer errOnClosed(&err)
	const op = "AllocContextTensorsFromBufferType"
	r := C.ggo_ggml_backend_alloc_ctx_tensors_from_buft(ctx.cptr(op), bt.cptr(op))
	buf, err := ctxBufferResult(op, ctx, r)
	if err != nil {
		return nil, withAllocErr(err.(*Error), bt)
	}
	return buf, nil
}

func ctxBufferResult(op string, ctx *Context, r C.ggo_pres) (*Buffer, error) {
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "no tensor without data in the context, or allocation failed"
		}
		return nil, &Error{Op: op, Msg: msg}
	}
	buf := newOwnedBuffer(C.ggml_backend_buffer_t(r.p))
	ctx.keepAlive(buf)
	return buf, nil
}

// TensorAllocator places tensors one after the other in a buffer, or only measures how big a
// buffer would have to be (ggml_tallocr_t).
type TensorAllocator struct {
	c      C.ggml_tallocr_t
	buf    *Buffer       // the allocator's buffer (borrowed or owned by the allocator), nil when measuring
	ref    *nativeRef    // nil for a borrowed allocator (owned by a scheduler, ...)
	placed func(*Tensor) // told of each tensor placed (a scheduler's allocators: Reset unplaces them)
}

// borrowedTensorAllocator wraps an allocator owned by someone else; Close does nothing.
func borrowedTensorAllocator(c C.ggml_tallocr_t) *TensorAllocator {
	if c == nil {
		return nil
	}
	return &TensorAllocator{c: c}
}

func (a *TensorAllocator) cptr(op string) C.ggml_tallocr_t {
	if a == nil || a.c == nil {
		panic(&Error{Op: op, Msg: "nil *TensorAllocator"})
	}
	if a.ref != nil && a.ref.released() {
		panic(&Error{Op: op, Msg: "tensor allocator used after Close", Err: ErrClosed})
	}
	return a.c
}

// keep is an object whose lifetime the allocator's safety net extends (an owning buffer).
func newTensorAllocator(op string, r C.ggo_pres, keep *Buffer) (*TensorAllocator, error) {
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "allocator creation failed"
		}
		return nil, &Error{Op: op, Msg: msg}
	}
	c := C.ggml_tallocr_t(r.p)
	a := &TensorAllocator{c: c, buf: keep}
	a.ref = newNativeRef(a, "tensor allocator", func() {
		if keep == nil {
			// the allocator owns its buffer (or has none, when measuring)
			detachBuffer(C.ggml_tallocr_get_buffer(c))
		}
		if keep == nil || !keep.ref.released() {
			C.ggml_tallocr_free(c)
		}
	})
	if keep == nil {
		if bc := C.ggml_tallocr_get_buffer(c); bc != nil {
			a.buf = borrowedBuffer(bc)
		}
	}
	return a, nil
}

// NewTensorAllocator creates an allocator that places tensors in buf
// (ggml_tallocr_new_from_buffer). buf must stay open while the allocator is used.
func NewTensorAllocator(buf *Buffer) (_ *TensorAllocator, err error) {
	defer errOnClosed(&err)
	const op = "NewTensorAllocator"
	return newTensorAllocator(op, C.ggo_ggml_tallocr_new_from_buffer(buf.cptr(op)), buf)
}

// NewTensorAllocatorFromBufferType creates an allocator with its own buffer of the given type
// and size (ggml_tallocr_new_from_buft); the buffer is freed with the allocator.
func NewTensorAllocatorFromBufferType(bt *BufferType, size uint64) (_ *TensorAllocator, err error) {
	defer errOnClosed(&err)
	const op = "NewTensorAllocatorFromBufferType"
	ta, err := newTensorAllocator(op, C.ggo_ggml_tallocr_new_from_buft(bt.cptr(op), C.size_t(size)), nil)
	if err != nil {
		return nil, withAllocErr(err.(*Error), bt)
	}
	return ta, nil
}

// NewTensorAllocatorFromBackend creates an allocator with its own buffer of the backend's
// default type (ggml_tallocr_new_from_backend); the buffer is freed with the allocator.
func NewTensorAllocatorFromBackend(b *Backend, size uint64) (_ *TensorAllocator, err error) {
	defer errOnClosed(&err)
	const op = "NewTensorAllocatorFromBackend"
	return newTensorAllocator(op, C.ggo_ggml_tallocr_new_from_backend(b.cptr(op), C.size_t(size)), nil)
}

// NewMeasureAllocator creates an allocator that places nothing and only measures the space
// tensors would take with the given alignment (ggml_tallocr_new_measure).
func NewMeasureAllocator(alignment uint64) (*TensorAllocator, error) {
	const op = "NewMeasureAllocator"
	return newTensorAllocator(op, C.ggo_ggml_tallocr_new_measure(C.size_t(alignment)), nil)
}

// NewMeasureAllocatorFromBufferType creates a measuring allocator for a buffer type
// (ggml_tallocr_new_measure_from_buft).
func NewMeasureAllocatorFromBufferType(bt *BufferType) (_ *TensorAllocator, err error) {
	defer errOnClosed(&err)
	const op = "NewMeasureAllocatorFromBufferType"
	return newTensorAllocator(op, C.ggo_ggml_tallocr_new_measure_from_buft(bt.cptr(op)), nil)
}

// NewMeasureAllocatorFromBackend creates a measuring allocator for a backend's default buffer
// type (ggml_tallocr_new_measure_from_backend).
func NewMeasureAllocatorFromBackend(b *Backend) (_ *TensorAllocator, err error) {
	defer errOnClosed(&err)
	const op = "NewMeasureAllocatorFromBackend"
	return newTensorAllocator(op, C.ggo_ggml_tallocr_new_measure_from_backend(b.cptr(op)), nil)
}

// Close frees the allocator (and its buffer, when it created one; ggml_tallocr_free). It is
// idempotent and returns nil.
func (a *TensorAllocator) Close() error {
	if a != nil {
		a.ref.release()
	}
	return nil
}

// Alloc places t (a tensor without data) in the allocator's buffer (ggml_tallocr_alloc); the
// allocator is kept alive as long as t's context. A measuring allocator only records the space
// t needs: t gets no memory and can be allocated for real later.
func (a *TensorAllocator) Alloc(t *Tensor) (err error) {
	defer errOnClosed(&err)
	const op = "TensorAllocator.Alloc"
	c := a.cptr(op)
	tc := t.cptr(op)
	if msg := takeCError(C.ggo_ggml_tallocr_alloc(c, tc)); msg != "" {
		return &Error{Op: op, Shapes: t.describe(), Msg: msg}
	}
	if bool(C.ggml_tallocr_is_measure(c)) {
		C.ggo_forget_measured(tc, C.ggml_tallocr_get_buffer(c))
		return nil
	}
	if t.ctx != nil {
		t.ctx.keepAlive(a)
	}
	if a.placed != nil {
		a.placed(t)
	}
	return nil
}

// IsMeasure reports whether the allocator only measures (ggml_tallocr_is_measure).
func (a *TensorAllocator) IsMeasure() bool {
	return bool(C.ggml_tallocr_is_measure(a.cptr("TensorAllocator.IsMeasure")))
}

// Reset forgets every placement: the whole buffer is free again (ggml_tallocr_reset).
func (a *TensorAllocator) Reset() {
	C.ggml_tallocr_reset(a.cptr("TensorAllocator.Reset"))
}

// MaxSize returns the largest extent used so far, in bytes (ggml_tallocr_max_size): for a
// measuring allocator, the buffer size the measured tensors need.
func (a *TensorAllocator) MaxSize() uint64 {
	return uint64(C.ggml_tallocr_max_size(a.cptr("TensorAllocator.MaxSize")))
}

// Buffer returns the allocator's buffer (borrowed unless it was passed to NewTensorAllocator;
// ggml_tallocr_get_buffer). A measuring allocator's buffer has no usable memory.
func (a *TensorAllocator) Buffer() *Buffer {
	c := a.cptr("TensorAllocator.Buffer")
	if a.buf != nil {
		return a.buf
	}
	if bc := C.ggml_tallocr_get_buffer(c); bc != nil {
		return borrowedBuffer(bc)
	}
	return nil
}

// GraphAllocator assigns memory to the nodes of graphs through a TensorAllocator, reusing the
// memory of intermediate results that are no longer needed (ggml_gallocr_t). It must be used by
// one goroutine at a time: an AllocGraph overlapping another call on the same allocator fails
// with an error wrapping ErrBusy.
type GraphAllocator struct {
	c    C.ggml_gallocr_t
	ref  *nativeRef
	busy inUse
}

// NewGraphAllocator creates a graph allocator (ggml_gallocr_new).
func NewGraphAllocator() (*GraphAllocator, error) {
	r := C.ggo_ggml_gallocr_new()
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "ggml_gallocr_new failed"
		}
		return nil, &Error{Op: "NewGraphAllocator", Msg: msg}
	}
	c := C.ggml_gallocr_t(r.p)
	g := &GraphAllocator{c: c}
	g.ref = newNativeRef(g, "graph allocator", func() { C.ggml_gallocr_free(c) })
	return g, nil
}

func (ga *GraphAllocator) cptr(op string) C.ggml_gallocr_t {
	if ga == nil || ga.c == nil {
		panic(&Error{Op: op, Msg: "nil *GraphAllocator"})
	}
	if ga.ref.released() {
		panic(&Error{Op: op, Msg: "graph allocator used after Close", Err: ErrClosed})
	}
	return ga.c
}

// Close frees the graph allocator (ggml_gallocr_free); idempotent. While another goroutine is
// inside AllocGraph it frees nothing and returns an error wrapping ErrBusy.
func (ga *GraphAllocator) Close() error {
	if ga == nil {
		return nil
	}
	if err := ga.busy.enter("GraphAllocator.Close", "graph allocator"); err != nil {
		return err
	}
	defer ga.busy.leave()
	ga.ref.release()
	return nil
}

// AllocGraph gives memory from ta to every node of g that has no data, reusing memory of
// intermediate results (ggml_gallocr_alloc_graph). A source without data that no node
// computes (an input nobody placed) gets memory before any node and keeps it for the whole
// graph, so values set in it before a compute survive. It returns the largest extent of ta's
// buffer used, which is the buffer size needed when ta only measures (then the nodes get no
// memory).
func (ga *GraphAllocator) AllocGraph(ta *TensorAllocator, g *Graph) (_ uint64, err error) {
	defer errOnClosed(&err)
	const op = "GraphAllocator.AllocGraph"
	if ga == nil || ga.c == nil {
		return 0, &Error{Op: op, Msg: "nil *GraphAllocator"}
	}
	if err := ga.busy.enter(op, "graph allocator"); err != nil {
		return 0, err
	}
	defer ga.busy.leave()
	if ga.ref.released() {
		return 0, &Error{Op: op, Msg: "graph allocator used after Close", Err: ErrClosed}
	}
	c := ga.c
	tc := ta.cptr(op)
	gc, err := g.cptrErr(op)
	if err != nil {
		return 0, err
	}
	r := C.ggo_ggml_gallocr_alloc_graph(c, tc, gc)
	if msg := takeCError(r.err); msg != "" {
		return 0, &Error{Op: op, Msg: msg}
	}
	if bool(C.ggml_tallocr_is_measure(tc)) {
		C.ggo_forget_measured_graph(gc, C.ggml_tallocr_get_buffer(tc))
	} else if g.ctx != nil {
		g.ctx.keepAlive(ta)
	}
	return uint64(r.v), nil
}

// SetParseSeq sets the order in which AllocGraph visits nodes (ggml_gallocr_set_parse_seq);
// nil restores the graph order.
func (ga *GraphAllocator) SetParseSeq(seq []int32) {
	const op = "GraphAllocator.SetParseSeq"
	c := ga.cptr(op)
	ga.busy.mustEnter(op, "graph allocator")
	defer ga.busy.leave()
	if len(seq) == 0 {
		C.ggml_gallocr_set_parse_seq(c, nil, 0)
		return
	}
	C.ggml_gallocr_set_parse_seq(c, (*C.int)(unsafe.Pointer(&seq[0])), C.int(len(seq)))
}
