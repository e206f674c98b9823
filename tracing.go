//go:build cgo

package ggml

/*
#include "ggml_go.h"
#include "ggml-backend-impl.h"

// forwarders to the vtable of the wrapped buffer (the tensors' buffer field names the tracing
// buffer, which shares the wrapped buffer's base address)
static void ggo_trace_init_tensor(ggml_backend_buffer_t b, struct ggml_tensor * t) {
    if (b->iface.init_tensor != NULL) {
        b->iface.init_tensor(b, t);
    }
}
static void ggo_trace_set_tensor(ggml_backend_buffer_t b, struct ggml_tensor * t, const void * data, size_t off, size_t size) {
    b->iface.set_tensor(b, t, data, off, size);
}
static void ggo_trace_get_tensor(ggml_backend_buffer_t b, const struct ggml_tensor * t, void * data, size_t off, size_t size) {
    b->iface.get_tensor(b, t, data, off, size);
}
static bool ggo_trace_cpy_tensor(ggml_backend_buffer_t b, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    return b->iface.cpy_tensor != NULL && b->iface.cpy_tensor(b, src, dst);
}
static void ggo_trace_clear(ggml_backend_buffer_t b, uint8_t v) {
    b->iface.clear(b, v);
}
static void ggo_trace_reset(ggml_backend_buffer_t b) {
    if (b->iface.reset != NULL) {
        b->iface.reset(b);
    }
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"unsafe"
)

// TraceStats counts the data movement through the buffers of a tracing buffer type.
type TraceStats struct {
	Allocs       int64 // buffers allocated
	Frees        int64 // buffers freed
	Sets         int64 // set_tensor calls (writes into the buffers)
	SetBytes     int64
	Gets         int64 // get_tensor calls (reads out of the buffers)
	GetBytes     int64
	Copies       int64 // cpy_tensor calls the wrapped buffer handled (device-side copies)
	CopyBytes    int64
	FailedCopies int64 // cpy_tensor calls it declined (the caller copied through host memory)
	Clears       int64
}

// TracingBufferType is a buffer type that wraps another one and counts (and optionally logs)
// every write, read, copy and clear of its buffers: a tool to see how data moves between
// backends. Its buffers are the wrapped type's buffers; only the calls go through Go. Pass the
// embedded *BufferType wherever a buffer type is expected.
type TracingBufferType struct {
	*BufferType
	tr *tracer
}

// TraceOption configures NewTracingBufferType.
type TraceOption func(*tracer)

// WithTraceLog writes one line per traced call to w (calls may come from several threads; the
// lines are serialized).
func WithTraceLog(w io.Writer) TraceOption {
	return func(tr *tracer) { tr.log = w }
}

type tracer struct {
	inner *BufferType
	name  string
	log   io.Writer
	logMu sync.Mutex

	allocs, frees, sets, setBytes, gets, getBytes atomic.Int64
	copies, copyBytes, failedCopies, clears       atomic.Int64
}

// NewTracingBufferType wraps inner (a built-in or Go-implemented buffer type, which must stay
// open while the tracing type and its buffers are used). Its name is "Trace(<inner name>)".
func NewTracingBufferType(inner *BufferType, opts ...TraceOption) (_ *TracingBufferType, err error) {
	defer errOnClosed(&err)
	const op = "NewTracingBufferType"
	inner.cptr(op)
	tr := &tracer{inner: inner, name: "Trace(" + inner.Name() + ")"}
	for _, o := range opts {
		o(tr)
	}
	bt, err := NewBufferType(tr)
	if err != nil {
		return nil, err
	}
	return &TracingBufferType{BufferType: bt, tr: tr}, nil
}

// Stats returns the counters accumulated since creation or the last ResetStats.
func (t *TracingBufferType) Stats() TraceStats {
	tr := t.tr
	return TraceStats{
		Allocs: tr.allocs.Load(), Frees: tr.frees.Load(),
		Sets: tr.sets.Load(), SetBytes: tr.setBytes.Load(),
		Gets: tr.gets.Load(), GetBytes: tr.getBytes.Load(),
		Copies: tr.copies.Load(), CopyBytes: tr.copyBytes.Load(), FailedCopies: tr.failedCopies.Load(),
		Clears: tr.clears.Load(),
	}
}

// ResetStats sets every counter to zero.
func (t *TracingBufferType) ResetStats() {
	tr := t.tr
	for _, c := range []*atomic.Int64{&tr.allocs, &tr.frees, &tr.sets, &tr.setBytes, &tr.gets, &tr.getBytes,
		&tr.copies, &tr.copyBytes, &tr.failedCopies, &tr.clears} {
		c.Store(0)
	}
}

func (tr *tracer) logf(format string, args ...any) {
	if tr.log == nil {
		return
	}
	tr.logMu.Lock()
	defer tr.logMu.Unlock()
	fmt.Fprintf(tr.log, "%s: "+format+"\n", append([]any{tr.name}, args...)...)
}

// BufferTypeImpl of the tracer: everything but the name is the wrapped type's.

func (tr *tracer) Name() string      { return tr.name }
func (tr *tracer) Alignment() uint64 { return tr.inner.Alignment() }
func (tr *tracer) IsHost() bool      { return tr.inner.IsHost() }

func (tr *tracer) AllocSize(t *Tensor) uint64 {
	return uint64(C.ggml_backend_buft_get_alloc_size(tr.inner.c, t.c))
}

func (tr *tracer) SupportsBackend(b *Backend) bool {
	return bool(C.ggml_backend_buft_supports_backend(tr.inner.c, b.c))
}

func (tr *tracer) Alloc(size uint64) (BufferImpl, error) {
	c := C.ggml_backend_buft_alloc_buffer(tr.inner.c, C.size_t(size))
	if c == nil {
		msg := "allocation failed"
		if m := C.ggml_x_last_error(); m != nil {
			msg = C.GoString(m)
		}
		return nil, errors.New(msg)
	}
	tr.allocs.Add(1)
	tr.logf("alloc %d bytes", size)
	return &traceBuffer{tr: tr, c: c}, nil
}

// traceBuffer forwards to a buffer of the wrapped type.
type traceBuffer struct {
	tr *tracer
	c  C.ggml_backend_buffer_t
}

func (b *traceBuffer) Base() uintptr {
	return uintptr(C.ggml_backend_buffer_get_base(b.c))
}

func (b *traceBuffer) InitTensor(t *Tensor) error {
	C.ggo_trace_init_tensor(b.c, t.c)
	return nil
}

func bytesPtr(p []byte) unsafe.Pointer {
	if len(p) == 0 {
		return nil
	}
	return unsafe.Pointer(&p[0])
}

func (b *traceBuffer) SetTensor(t *Tensor, data []byte, off uint64) error {
	b.tr.sets.Add(1)
	b.tr.setBytes.Add(int64(len(data)))
	b.tr.logf("set %s offset %d, %d bytes", cTensorLabel(t.c), off, len(data))
	C.ggo_trace_set_tensor(b.c, t.c, bytesPtr(data), C.size_t(off), C.size_t(len(data)))
	return nil
}

func (b *traceBuffer) GetTensor(t *Tensor, data []byte, off uint64) error {
	b.tr.gets.Add(1)
	b.tr.getBytes.Add(int64(len(data)))
	b.tr.logf("get %s offset %d, %d bytes", cTensorLabel(t.c), off, len(data))
	C.ggo_trace_get_tensor(b.c, t.c, bytesPtr(data), C.size_t(off), C.size_t(len(data)))
	return nil
}

func (b *traceBuffer) CopyTensor(src, dst *Tensor) bool {
	ok := bool(C.ggo_trace_cpy_tensor(b.c, src.c, dst.c))
	if ok {
		n := int64(C.ggml_nbytes(src.c))
		b.tr.copies.Add(1)
		b.tr.copyBytes.Add(n)
		b.tr.logf("copy %s -> %s, %d bytes", cTensorLabel(src.c), cTensorLabel(dst.c), n)
	} else {
		b.tr.failedCopies.Add(1)
		b.tr.logf("copy %s -> %s declined", cTensorLabel(src.c), cTensorLabel(dst.c))
	}
	return ok
}

func (b *traceBuffer) Clear(v byte) error {
	b.tr.clears.Add(1)
	b.tr.logf("clear %d", v)
	C.ggo_trace_clear(b.c, C.uint8_t(v))
	return nil
}

func (b *traceBuffer) Reset() {
	C.ggo_trace_reset(b.c)
}

func (b *traceBuffer) Free() {
	b.tr.frees.Add(1)
	b.tr.logf("free")
	C.ggml_backend_buffer_free(b.c)
}
