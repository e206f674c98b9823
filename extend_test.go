//go:build cgo

package ggml

import (
	"errors"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawCPUBackend returns a C CPU backend that no Go handle owns, as a backend package would
// hand one to WrapBackend: the backend of a NewCPU handle whose ownership is given up.
func rawCPUBackend(t *testing.T) unsafe.Pointer {
	t.Helper()
	b, err := NewCPU(WithThreads(2))
	require.NoError(t, err)
	p := unsafe.Pointer(b.c)
	b.ref.free = nil // hand the C backend over: Close below only uncounts the handle
	b.Close()
	return p
}

func TestWrapBackend(t *testing.T) {
	leakCheck(t)
	start := LiveObjects()
	p := rawCPUBackend(t)
	b, err := WrapBackend(p)
	require.NoError(t, err)
	assert.Equal(t, start+1, LiveObjects())
	assert.Equal(t, "CPU", b.Name())
	assert.True(t, b.IsCPU())

	// the wrapped backend computes
	ctx := newCtx(t, Params{NoAlloc: true})
	x := ctx.NewTensor1D(TypeF32, 4)
	y := ctx.NewTensor1D(TypeF32, 4)
	s := ctx.Add(x, y)
	g := ctx.NewGraph().BuildForwardExpand(s)
	buf, err := AllocContextTensors(ctx, b)
	require.NoError(t, err)
	require.NoError(t, x.SetFloat32([]float32{1, 2, 3, 4}))
	require.NoError(t, y.SetFloat32([]float32{10, 20, 30, 40}))
	require.NoError(t, b.Compute(g))
	out, err := s.Float32()
	require.NoError(t, err)
	assert.Equal(t, []float32{11, 22, 33, 44}, out)
	buf.Close()

	// a pointer already owned through WrapBackend is refused (it would be freed twice)
	b2, err := WrapBackend(p)
	assert.Nil(t, b2)
	var e *Error
	require.True(t, errors.As(err, &e), "%v", err)
	assert.Equal(t, "WrapBackend", e.Op)
	assert.Contains(t, e.Msg, "already owned")

	open := LiveObjects()
	require.NoError(t, b.Close())
	require.NoError(t, b.Close()) // idempotent
	assert.Equal(t, open-1, LiveObjects())
	pe := panicError(func() { b.Name() })
	require.NotNil(t, pe)
	assert.True(t, errors.Is(pe, ErrClosed))
	_, still := wrappedBackends.Load(uintptr(p))
	assert.False(t, still, "a freed backend is still recorded as wrapped")
}

func TestWrapBackendNil(t *testing.T) {
	leakCheck(t)
	b, err := WrapBackend(nil)
	assert.Nil(t, b)
	var e *Error
	require.True(t, errors.As(err, &e), "%v", err)
	assert.Equal(t, "WrapBackend", e.Op)
	assert.Contains(t, e.Error(), "nil ggml_backend_t")
}

// TestWrapBackendCleanup: a wrapped backend dropped without Close is freed by the garbage
// collector like any other.
func TestWrapBackendCleanup(t *testing.T) {
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	start := LiveObjects()
	func() {
		for i := 0; i < 4; i++ {
			_, err := WrapBackend(rawCPUBackend(t))
			require.NoError(t, err)
		}
	}()
	assert.Equal(t, start+4, LiveObjects())
	deadline := time.Now().Add(5 * time.Second)
	for LiveObjects() != start && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, start, LiveObjects(), "live: %s", liveSummary())
}

func TestWrapBufferType(t *testing.T) {
	leakCheck(t)
	assert.Nil(t, WrapBufferType(nil))

	start := LiveObjects()
	bt := WrapBufferType(unsafe.Pointer(CPUBufferType().c))
	require.NotNil(t, bt)
	assert.Equal(t, start, LiveObjects(), "a wrapped buffer type is not owned")
	assert.Equal(t, "CPU", bt.Name())
	assert.True(t, bt.IsHost())

	ctx := newCtx(t, Params{NoAlloc: true})
	start = LiveObjects()
	x := ctx.NewTensor1D(TypeF32, 3)
	buf, err := AllocContextTensorsFromBufferType(ctx, bt)
	require.NoError(t, err)
	assert.Equal(t, start+1, LiveObjects())
	require.NoError(t, x.SetFloat32([]float32{1, 2, 3}))
	out, err := x.Float32()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2, 3}, out)

	// Close does nothing to a borrowed type: it stays usable
	require.NoError(t, bt.Close())
	assert.Equal(t, "CPU", bt.Name())
	buf.Close()
	assert.Equal(t, start, LiveObjects())
}
