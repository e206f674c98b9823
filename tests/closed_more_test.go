package tests

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
)

// TestClosedObjectsMoreCases: the error-returning methods that reach a closed object through
// a helper (not through the accessor the rule test sees) report it with an error wrapping
// ErrClosed too: closed backends, contexts, schedulers, plans, buffers and buffer types, in
// each order.
func TestClosedObjectsMoreCases(t *testing.T) {
	xLeakCheck(t)
	cpu, err := ggml.NewCPU(ggml.WithThreads(1))
	require.NoError(t, err)
	defer cpu.Close()
	closedCPU, err := ggml.NewCPU(ggml.WithThreads(1))
	require.NoError(t, err)

	// a live graph on a live context
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, 4)
	g := ctx.NewGraph().BuildForwardExpand(ctx.Neg(a))

	plan, err := closedCPU.NewPlan(g)
	require.NoError(t, err)
	require.NoError(t, closedCPU.Close())

	// a graph and tensors of a closed context
	dctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20})
	require.NoError(t, err)
	dead := dctx.NewTensor1D(ggml.TypeF32, 4)
	dloss := dctx.Sum(dctx.Sqr(dead))
	dgf := dctx.NewGraph().BuildForwardExpand(dloss)
	dgb := dctx.NewGraph().BuildForwardExpand(dloss)
	require.NoError(t, dctx.Close())

	// a tensor whose buffer was closed
	nctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20, NoAlloc: true})
	require.NoError(t, err)
	defer nctx.Close()
	orphan := nctx.NewTensor1D(ggml.TypeF32, 4)
	obuf, err := ggml.AllocContextTensors(nctx, cpu)
	require.NoError(t, err)
	require.NoError(t, obuf.Close())

	closedSched, err := ggml.NewScheduler([]*ggml.Backend{cpu}, nil, 64)
	require.NoError(t, err)
	require.NoError(t, closedSched.Close())
	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu}, nil, 64)
	require.NoError(t, err)
	defer sched.Close()

	closedMmap, err := ggml.NewMmapBufferType()
	require.NoError(t, err)
	require.NoError(t, closedMmap.Close())

	bg := context.Background()
	cases := []struct {
		name string
		call func() error
	}{
		{"Backend.SetThreads", func() error { return closedCPU.SetThreads(2) }},
		{"Backend.Compute(closed backend)", func() error { return closedCPU.Compute(g) }},
		{"Backend.Compute(closed graph)", func() error { return cpu.Compute(dgf) }},
		{"Backend.NewPlan(closed backend)", func() error { _, err := closedCPU.NewPlan(g); return err }},
		{"Backend.NewPlan(closed graph)", func() error { _, err := cpu.NewPlan(dgf); return err }},
		{"GraphPlan.Compute(backend closed)", func() error { return plan.Compute() }},
		{"Backend.ComputeContext", func() error { return closedCPU.ComputeContext(bg, g) }},
		{"Backend.RPCDeviceMemory", func() error { _, _, err := closedCPU.RPCDeviceMemory(); return err }},
		{"Scheduler.Compute(closed scheduler)", func() error { return closedSched.Compute(g) }},
		{"Scheduler.InitMeasure(closed scheduler)", func() error { return closedSched.InitMeasure(g) }},
		{"Scheduler.ComputeContext(closed scheduler)", func() error { return closedSched.ComputeContext(bg, g) }},
		{"Scheduler.Compute(closed graph)", func() error { return sched.Compute(dgf) }},
		{"Scheduler.InitMeasure(closed graph)", func() error { return sched.InitMeasure(dgf) }},
		{"Context.Compute(closed context)", func() error { return dctx.Compute(dgf, 1) }},
		{"Context.ComputeWithContext(closed context)", func() error { return dctx.ComputeWithContext(dgf, 1) }},
		{"Context.ComputeGradients(closed context)", func() error { return dctx.ComputeGradients(dgf, dgb, dloss, 1) }},
		{"Tensor.SetFloat32(closed context)", func() error { return dead.SetFloat32([]float32{1, 2, 3, 4}) }},
		{"Tensor.Float32(closed context)", func() error { _, err := dead.Float32(); return err }},
		{"Tensor.Bytes(closed context)", func() error { _, err := dead.Bytes(); return err }},
		{"Tensor.WriteAt(closed context)", func() error { _, err := dead.WriteAt([]byte{0}, 0); return err }},
		{"Tensor.SetZero(closed context)", func() error { return dead.SetZero() }},
		{"Tensor.Fill(closed context)", func() error { return dead.Fill(1) }},
		{"Tensor.SetFloat32(closed buffer)", func() error { return orphan.SetFloat32([]float32{1, 2, 3, 4}) }},
		{"Tensor.Float32(closed buffer)", func() error { _, err := orphan.Float32(); return err }},
		{"Tensor.ReadAt(closed buffer)", func() error { _, err := orphan.ReadAt(make([]byte, 4), 0); return err }},
		{"MmapBufferType.MapFile", func() error { _, err := closedMmap.MapFile("/dev/null"); return err }},
	}
	for _, c := range cases {
		assertClosed(t, c.name, c.call)
	}
	plan.Close()
}
