package tests

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
)

// The error messages a newcomer met (issue 12), each with its new text or type.

func TestMessageMulMatEmptyRows(t *testing.T) {
	ctx := xCtx(t, true)
	a := ctx.NewTensor2D(ggml.TypeF32, 0, 4)
	b := ctx.NewTensor2D(ggml.TypeF32, 0, 3)
	e := mustPanicError(t, "MulMat K=0", func() { ctx.MulMat(a, b) })
	require.NotNil(t, e)
	assert.Contains(t, e.Error(), "K = 0")
	assert.NotContains(t, e.Error(), "transposed")
}

func TestMessageMulMatShapesOnceGoStyle(t *testing.T) {
	ctx := xCtx(t, true)
	a := ctx.NewTensor2D(ggml.TypeF32, 4, 3)
	b := ctx.NewTensor2D(ggml.TypeF32, 5, 2)
	e := mustPanicError(t, "MulMat", func() { ctx.MulMat(a, b) })
	require.NotNil(t, e)
	msg := e.Error()
	assert.Equal(t, "a=[4 3 1 1] f32, b=[5 2 1 1] f32", e.Shapes)
	assert.Equal(t, 1, strings.Count(msg, "[4 3 1 1]"), msg)
	assert.Equal(t, 1, strings.Count(msg, "[5 2 1 1]"), msg)
	assert.NotContains(t, msg, "->ne", msg)
	assert.NotContains(t, msg, "[4,3", msg)
	assert.Contains(t, msg, "same length K")
}

func TestMessageClosedBuffer(t *testing.T) {
	cpu := xCPU(t, 1)
	ctx := xCtx(t, true)
	x := ctx.NewTensor1D(ggml.TypeF32, 4)
	buf, err := ggml.AllocContextTensors(ctx, cpu)
	require.NoError(t, err)
	require.NoError(t, buf.Close())
	_, err = x.Float32()
	assert.ErrorIs(t, err, ggml.ErrClosed)
	assert.Contains(t, err.Error(), "buffer holding the tensor was closed")
	assert.NotContains(t, err.Error(), "allocate it first")
}

func TestMessageClosedContextData(t *testing.T) {
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 16})
	require.NoError(t, err)
	x := ctx.NewTensor1D(ggml.TypeF32, 4)
	require.NoError(t, ctx.Close())
	var got error
	assert.NotPanics(t, func() { _, got = x.Float32() })
	assert.ErrorIs(t, got, ggml.ErrClosed)
}

func TestMessageBackendComputeAfterClose(t *testing.T) {
	ctx := xCtx(t, false)
	g := ctx.NewGraph().BuildForwardExpand(ctx.Neg(ctx.NewTensor1D(ggml.TypeF32, 4)))
	cpu, err := ggml.NewCPU(ggml.WithThreads(1))
	require.NoError(t, err)
	require.NoError(t, cpu.Close())
	var got error
	assert.NotPanics(t, func() { got = cpu.Compute(g) })
	assert.ErrorIs(t, got, ggml.ErrClosed)
}

func TestMessageArenaFull(t *testing.T) {
	ctx, err := ggml.NewContext(ggml.Params{MemSize: ggml.TensorOverhead() + 64})
	require.NoError(t, err)
	defer ctx.Close()
	e := mustPanicError(t, "arena full", func() { ctx.NewTensor1D(ggml.TypeF32, 1<<20) })
	require.NotNil(t, e)
	assert.Contains(t, e.Error(), "Params.MemSize")
}

func TestMessageCustomOpPanic(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 2)
	ctx := xCtx(t, false)
	x := ctx.NewTensor1D(ggml.TypeF32, 4)
	require.NoError(t, x.SetFloat32([]float32{1, 2, 3, 4}))
	sentinel := errors.New("boom")
	y := ctx.MapCustom1(x, func(dst, a, _, _ *ggml.Tensor, ith, nth int) { panic(sentinel) }, 1)
	y.SetName("my-op")
	err := cpu.Compute(ctx.NewGraph().BuildForwardExpand(y))
	require.Error(t, err)
	var pe *ggml.PanicError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, sentinel, pe.Value)
	assert.Equal(t, "my-op", pe.Node)
	assert.Equal(t, "MapCustom1", pe.Op)
	assert.Contains(t, string(pe.Stack), "messages_test.go", "the stack shows where the panic happened")
	assert.ErrorIs(t, err, sentinel, "an error panic value is reachable with errors.Is")
	assert.Contains(t, err.Error(), `node "my-op"`)
}

// failingBufType is a Go buffer type whose Alloc always fails.
type failingBufType struct{ err error }

func (f failingBufType) Name() string                               { return "Failing" }
func (f failingBufType) Alloc(size uint64) (ggml.BufferImpl, error) { return nil, f.err }
func (f failingBufType) Alignment() uint64                          { return 32 }
func (f failingBufType) AllocSize(t *ggml.Tensor) uint64            { return t.Nbytes() }
func (f failingBufType) SupportsBackend(b *ggml.Backend) bool       { return true }
func (f failingBufType) IsHost() bool                               { return true }

type quotaError struct{ limit uint64 }

func (e *quotaError) Error() string { return "over quota" }

func TestMessageGoBufferTypeAllocError(t *testing.T) {
	xLeakCheck(t)
	cause := &quotaError{limit: 7}
	bt, err := ggml.NewBufferType(failingBufType{err: cause})
	require.NoError(t, err)
	defer bt.Close()

	_, err = bt.AllocBuffer(1024)
	require.Error(t, err)
	var qe *quotaError
	require.ErrorAs(t, err, &qe, "AllocBuffer: %v", err)
	assert.Equal(t, uint64(7), qe.limit)
	assert.NotContains(t, err.Error(), "failed to allocate Failing buffer")

	ctx := xCtx(t, true)
	ctx.NewTensor1D(ggml.TypeF32, 16)
	_, err = ggml.AllocContextTensorsFromBufferType(ctx, bt)
	assert.ErrorIs(t, err, cause, "AllocContextTensorsFromBufferType: %v", err)

	_, err = ggml.NewTensorAllocatorFromBufferType(bt, 1024)
	assert.ErrorIs(t, err, cause, "NewTensorAllocatorFromBufferType: %v", err)
}

func TestStringers(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 1)
	assert.Equal(t, "Backend(CPU)", cpu.String())
	assert.Regexp(t, `^BufferType\(CPU, host, alignment \d+\)$`, cpu.DefaultBufferType().String())
	ctx := xCtx(t, true)
	x := ctx.NewTensor2D(ggml.TypeF32, 4, 2)
	g := ctx.NewGraph().BuildForwardExpand(ctx.Neg(x))
	assert.Equal(t, "Graph(1 nodes, 1 leafs, size 2048)", g.String())
	buf, err := ggml.AllocContextTensors(ctx, cpu)
	require.NoError(t, err)
	assert.Regexp(t, `^Buffer\(CPU, \d+ bytes, host\)$`, buf.String())
	buf.SetUsage(ggml.BufferUsageWeights)
	assert.Contains(t, buf.String(), "weights")
	assert.Contains(t, x.String(), "[4 2 1 1] f32")
	require.NoError(t, buf.Close())
	assert.Equal(t, "Buffer(closed)", buf.String())
	c2, err := ggml.NewCPU(ggml.WithThreads(1))
	require.NoError(t, err)
	require.NoError(t, c2.Close())
	assert.Equal(t, "Backend(closed)", c2.String())
	var nb *ggml.Backend
	assert.Equal(t, "Backend(nil)", nb.String())
	assert.NotEmpty(t, ggml.Version)
	assert.Equal(t, "b3bcd556", ggml.GGMLCommit)
}
