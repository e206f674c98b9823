package tests

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestClosedObjectsReturnErrClosed: the methods with an error result report a closed receiver
// or argument with an error wrapping ErrClosed, never a panic, whatever the order of the Close
// calls.
func TestClosedObjectsReturnErrClosed(t *testing.T) {
	xLeakCheck(t)
	closedCPU, err := ggml.NewCPU(ggml.WithThreads(1))
	require.NoError(t, err)
	require.NoError(t, closedCPU.Close())
	cpu, err := ggml.NewCPU(ggml.WithThreads(1))
	require.NoError(t, err)
	defer cpu.Close()

	closedCtx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20})
	require.NoError(t, err)
	dead := closedCtx.NewTensor1D(ggml.TypeF32, 4)
	deadGraph := closedCtx.NewGraph().BuildForwardExpand(closedCtx.Neg(dead))
	require.NoError(t, closedCtx.Close())

	ctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20, NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	live := ctx.NewTensor1D(ggml.TypeF32, 4)

	closedBuf, err := cpu.AllocBuffer(1024)
	require.NoError(t, err)
	require.NoError(t, closedBuf.Close())

	closedGoType, err := ggml.NewBufferType(&countingType{name: "Closed"})
	require.NoError(t, err)
	require.NoError(t, closedGoType.Close())

	closedTA, err := ggml.NewMeasureAllocator(32)
	require.NoError(t, err)
	require.NoError(t, closedTA.Close())

	closedOpt, err := ggml.NewOptimizer(ggml.DefaultOptimizerParams(ggml.Adam))
	require.NoError(t, err)
	require.NoError(t, closedOpt.Close())

	cases := []struct {
		name string
		call func() error
	}{
		{"Backend.AllocBuffer", func() error { _, err := closedCPU.AllocBuffer(64); return err }},
		{"Backend.CopyTensorAsync", func() error { return closedCPU.CopyTensorAsync(live, live) }},
		{"CopyTensor(closed context)", func() error { return ggml.CopyTensor(dead, live) }},
		{"BufferType.AllocBuffer", func() error { _, err := closedGoType.AllocBuffer(64); return err }},
		{"Buffer.InitTensor", func() error { return closedBuf.InitTensor(live) }},
		{"Buffer.PlaceTensor", func() error { return closedBuf.PlaceTensor(live, 0) }},
		{"Buffer.InitView", func() error { return closedBuf.InitView(live) }},
		{"AllocContextTensors(closed context)", func() error { _, err := ggml.AllocContextTensors(closedCtx, cpu); return err }},
		{"AllocContextTensors(closed backend)", func() error { _, err := ggml.AllocContextTensors(ctx, closedCPU); return err }},
		{"AllocContextTensorsFromBufferType", func() error {
			_, err := ggml.AllocContextTensorsFromBufferType(ctx, closedGoType)
			return err
		}},
		{"NewTensorAllocator", func() error { _, err := ggml.NewTensorAllocator(closedBuf); return err }},
		{"NewTensorAllocatorFromBackend", func() error { _, err := ggml.NewTensorAllocatorFromBackend(closedCPU, 64); return err }},
		{"NewMeasureAllocatorFromBackend", func() error { _, err := ggml.NewMeasureAllocatorFromBackend(closedCPU); return err }},
		{"TensorAllocator.Alloc", func() error { return closedTA.Alloc(live) }},
		{"NewGraphCopy", func() error { _, err := ggml.NewGraphCopy(closedCPU, deadGraph); return err }},
		{"CompareBackends", func() error {
			return ggml.CompareBackends(cpu, closedCPU, deadGraph, func(int, *ggml.Tensor, *ggml.Tensor) bool { return true })
		}},
		{"Graph.Print", func() error { return deadGraph.Print(&bytes.Buffer{}) }},
		{"Optimizer.MarshalBinary", func() error { _, err := closedOpt.MarshalBinary(); return err }},
		{"Optimizer.UnmarshalBinary", func() error { return closedOpt.UnmarshalBinary([]byte{1}) }},
		{"Optimizer.Minimize", func() error { _, err := closedOpt.Minimize(live); return err }},
		{"NewScheduler", func() error { _, err := ggml.NewScheduler([]*ggml.Backend{closedCPU}, nil, 16); return err }},
		{"NewTracingBufferType", func() error { _, err := ggml.NewTracingBufferType(closedGoType); return err }},
		{"Tensor.SetViewOffset", func() error { return dead.SetViewOffset(0) }},
	}
	for _, c := range cases {
		var err error
		assert.NotPanics(t, func() { err = c.call() }, c.name)
		assert.True(t, errors.Is(err, ggml.ErrClosed), "%s: want an error wrapping ErrClosed, got %v", c.name, err)
	}
}

type panickingAllocType struct{ countingType }

func (p *panickingAllocType) Alloc(uint64) (ggml.BufferImpl, error) { panic("alloc kaboom") }

// TestGoBufferTypeAllocPanicKeepsValue: a panic in a Go buffer type's Alloc comes back as an
// error that keeps the panic's value, through every wrapper that allocates.
func TestGoBufferTypeAllocPanicKeepsValue(t *testing.T) {
	xLeakCheck(t)
	bt, err := ggml.NewBufferType(&panickingAllocType{countingType{name: "Panicking"}})
	require.NoError(t, err)
	defer bt.Close()
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20, NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	ctx.NewTensor1D(ggml.TypeF32, 4)
	calls := map[string]func() error{
		"BufferType.AllocBuffer":            func() error { _, err := bt.AllocBuffer(64); return err },
		"AllocContextTensorsFromBufferType": func() error { _, err := ggml.AllocContextTensorsFromBufferType(ctx, bt); return err },
		"NewTensorAllocatorFromBufferType":  func() error { _, err := ggml.NewTensorAllocatorFromBufferType(bt, 64); return err },
	}
	for name, call := range calls {
		err := call()
		var pe *ggml.PanicError
		if assert.ErrorAs(t, err, &pe, name) {
			assert.Equal(t, "alloc kaboom", pe.Value, name)
		}
		assert.Contains(t, err.Error(), "alloc kaboom", name)
	}
}
