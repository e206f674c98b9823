package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
)

// TestSchedulerNodeBackendAfterInitMeasure: after InitMeasure, NodeBackend reports the backend
// the measure's split chose for a node without an assignment (it used to return nil), and the
// assignment for an assigned one.
func TestSchedulerNodeBackendAfterInitMeasure(t *testing.T) {
	xLeakCheck(t)
	cpu1, cpu2 := xCPU(t, 1), xCPU(t, 1)
	m := newTwoLayer(t, cpu1)
	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu1, cpu2}, nil, 64)
	require.NoError(t, err)
	defer sched.Close()

	require.NoError(t, sched.InitMeasure(m.g))
	assert.Same(t, cpu1, sched.NodeBackend(m.out), "no assignment: the weights pin the graph to the first backend")
	assert.Same(t, cpu1, sched.NodeBackend(m.l2))

	sched.SetNodeBackend(m.l2, cpu2)
	require.NoError(t, sched.InitMeasure(m.g))
	assert.Same(t, cpu2, sched.NodeBackend(m.l2), "the assignment")
	sched.SetNodeBackend(m.l2, nil)
	assert.Same(t, cpu2, sched.NodeBackend(m.l2), "the last split's choice, after the assignment is removed")
	sched.Reset()
	assert.Same(t, cpu2, sched.NodeBackend(m.l2), "Reset keeps the last split's choice")
	require.NoError(t, sched.Compute(m.g))
	assert.Same(t, cpu1, sched.NodeBackend(m.l2), "the new split's choice")
}

// TestSchedulerResetThenAllocAfterCompute: Reset makes the tensors placed in the scheduler's
// buffers placeable again, so the same graph's inputs can be placed with Allocator before every
// Compute (it used to fail with "already has data" after the first Compute).
func TestSchedulerResetThenAllocAfterCompute(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 1)
	m := xNewMLP(t, 21)
	wbuf, err := ggml.AllocContextTensors(m.wctx, cpu)
	require.NoError(t, err)
	defer wbuf.Close()
	m.load(t)
	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu}, nil, 64)
	require.NoError(t, err)
	defer sched.Close()

	ctx := xCtx(t, true)
	g, x, _, out := m.graph(t, ctx)
	require.NoError(t, sched.Allocator(cpu).Alloc(x))
	require.NoError(t, sched.InitMeasure(g))
	for i := 0; i < 3; i++ {
		sched.Reset()
		require.NoError(t, sched.Allocator(cpu).Alloc(x), "Alloc after Reset, round %d", i)
		xv := xRand(int64(40+i), xK*xN)
		require.NoError(t, x.SetFloat32(xv))
		require.NoError(t, sched.Compute(g), "round %d", i)
		got, err := out.Float32()
		require.NoError(t, err)
		xNear(t, m.ref(xv), got, 1e-5, "round")
	}

	// a graph whose input the scheduler placed itself: after Reset the caller may place it
	ctx2 := xCtx(t, true)
	g2, x2, _, out2 := m.graph(t, ctx2)
	sched.Reset()
	require.NoError(t, sched.Compute(g2))
	sched.Reset()
	require.NoError(t, sched.Allocator(cpu).Alloc(x2), "an input the scheduler placed")
	xv := xRand(50, xK*xN)
	require.NoError(t, x2.SetFloat32(xv))
	require.NoError(t, sched.Compute(g2))
	got, err := out2.Float32()
	require.NoError(t, err)
	xNear(t, m.ref(xv), got, 1e-5, "scheduler-placed input placed again")
}
