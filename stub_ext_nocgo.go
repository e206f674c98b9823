//go:build !cgo

package ggml

import (
	"io"
	"unsafe"
)

// Without cgo the extensibility API (Go buffer types, custom ops, the scheduler, graph copies)
// exists so that code mentioning it compiles; every constructor returns ErrNoCgo.

// BufferTypeImpl is implemented by Go values that define a buffer type (needs cgo).
type BufferTypeImpl interface {
	Name() string
	Alloc(size uint64) (BufferImpl, error)
	Alignment() uint64
	AllocSize(t *Tensor) uint64
	SupportsBackend(b *Backend) bool
	IsHost() bool
}

// BufferImpl is a buffer of a Go-implemented buffer type (needs cgo).
type BufferImpl interface {
	Base() uintptr
	InitTensor(t *Tensor) error
	SetTensor(t *Tensor, data []byte, offset uint64) error
	GetTensor(t *Tensor, data []byte, offset uint64) error
	CopyTensor(src, dst *Tensor) bool
	Clear(v byte) error
	Reset()
	Free()
}

// NewBufferType fails with ErrNoCgo.
func NewBufferType(BufferTypeImpl) (*BufferType, error) { return nil, ErrNoCgo }

// HostBuffer is C host memory (needs cgo).
type HostBuffer struct{}

// NewHostBuffer fails with ErrNoCgo.
func NewHostBuffer(size, alignment uint64) (*HostBuffer, error) { return nil, ErrNoCgo }

// TraceStats counts the data movement through a tracing buffer type.
type TraceStats struct {
	Allocs, Frees, Sets, SetBytes, Gets, GetBytes, Copies, CopyBytes, FailedCopies, Clears int64
}

// TracingBufferType wraps a buffer type and counts its calls (needs cgo).
type TracingBufferType struct{ *BufferType }

// TraceOption configures NewTracingBufferType.
type TraceOption func()

// WithTraceLog logs every traced call to w (needs cgo).
func WithTraceLog(w io.Writer) TraceOption { return func() {} }

// NewTracingBufferType fails with ErrNoCgo.
func NewTracingBufferType(*BufferType, ...TraceOption) (*TracingBufferType, error) {
	return nil, ErrNoCgo
}

// MmapBufferType is a buffer type of memory mappings (needs cgo).
type MmapBufferType struct{ *BufferType }

// NewMmapBufferType fails with ErrNoCgo.
func NewMmapBufferType() (*MmapBufferType, error) { return nil, ErrNoCgo }

// MapFile fails with ErrNoCgo.
func MapFile(string) (*Buffer, error) { return nil, ErrNoCgo }

// CustomFunc is the body of a custom operation written in Go.
type CustomFunc func(dst, a, b, c *Tensor, ith, nth int)

// AllTasks runs a custom operation on every worker thread.
const AllTasks = -1

// Scheduler splits graphs between backends (needs cgo).
type Scheduler struct{}

// NewScheduler fails with ErrNoCgo.
func NewScheduler([]*Backend, []*BufferType, int) (*Scheduler, error) { return nil, ErrNoCgo }

// Close does nothing.
func (*Scheduler) Close() error { return nil }

// GraphCopy is a graph copied to another backend (needs cgo).
type GraphCopy struct{}

// NewGraphCopy fails with ErrNoCgo.
func NewGraphCopy(*Backend, *Graph) (*GraphCopy, error) { return nil, ErrNoCgo }

// Close does nothing.
func (*GraphCopy) Close() error { return nil }

// CompareBackends fails with ErrNoCgo.
func CompareBackends(b1, b2 *Backend, g *Graph, fn func(i int, t1, t2 *Tensor) bool) error {
	return ErrNoCgo
}

// LiveHandles returns 0 without cgo.
func LiveHandles() int { return 0 }

// WrapBackend fails with ErrNoCgo.
func WrapBackend(unsafe.Pointer) (*Backend, error) { return nil, ErrNoCgo }

// WrapBufferType returns nil: there are no C buffer types without cgo.
func WrapBufferType(unsafe.Pointer) *BufferType { return nil }
