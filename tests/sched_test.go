package tests

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/testbackend"
)

func xTestBackend(t *testing.T) *ggml.Backend {
	t.Helper()
	b, err := testbackend.New(1)
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	require.True(t, testbackend.Is(b))
	return b
}

// schedRun computes m's graph for xv through sched, with x in its own CPU buffer, and returns
// the output, the graph and its act and out nodes.
func schedRun(t *testing.T, sched *ggml.Scheduler, cpu *ggml.Backend, m *xMLP, xv []float32) ([]float32, *ggml.Tensor, *ggml.Tensor) {
	ctx := xCtx(t, true)
	g, x, act, out := m.graph(t, ctx)
	// x is placed by the CPU allocator while measuring (so that the buffer has room for it)
	// and again after the reset that follows
	require.NoError(t, sched.Allocator(cpu).Alloc(x))
	require.NoError(t, sched.InitMeasure(g))
	sched.Reset()
	require.NoError(t, sched.Allocator(cpu).Alloc(x))
	require.NoError(t, x.SetFloat32(xv))
	require.NoError(t, sched.Compute(g))
	got, err := out.Float32()
	require.NoError(t, err)
	return got, act, out
}

func TestSchedulerTestBackendAndCPU(t *testing.T) {
	xLeakCheck(t)
	test := xTestBackend(t)
	cpu := xCPU(t, 2)
	assert.Equal(t, "Test", test.Name())
	assert.False(t, testbackend.BufferType().IsHost())

	for _, tc := range []struct {
		name       string
		rejectRelu bool
		splits     int
		actOn      *ggml.Backend
	}{
		{"all on Test", false, 1, test},
		{"relu rejected by Test", true, 3, cpu},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testbackend.Reject(test, ggml.OpUnary, tc.rejectRelu)
			defer testbackend.Reject(test, ggml.OpUnary, false)

			m := xNewMLP(t, 10)
			wbuf, err := ggml.AllocContextTensors(m.wctx, test)
			require.NoError(t, err)
			defer wbuf.Close()
			wbuf.SetUsage(ggml.BufferUsageWeights)
			testbackend.ResetStats()
			m.load(t)
			assert.Equal(t, int64(3), testbackend.GetStats().Sets, "weights written through the Test buffer")

			sched, err := ggml.NewScheduler([]*ggml.Backend{test, cpu}, nil, 256)
			require.NoError(t, err)
			defer sched.Close()
			assert.Len(t, sched.Backends(), 2)

			xv := xRand(11, xK*xN)
			got, act, out := schedRun(t, sched, cpu, m, xv)
			xNear(t, m.ref(xv), got, 1e-5, tc.name)
			assert.Equal(t, tc.splits, sched.NumSplits())
			assert.Same(t, tc.actOn, sched.NodeBackend(act))
			assert.Same(t, test, sched.NodeBackend(out), "mul_mat runs with its weights")
			assert.Greater(t, testbackend.GetStats().Nodes, int64(0))
			require.NotNil(t, sched.Buffer(test))
			assert.Equal(t, "Test", sched.Buffer(test).Name())

			// the same as CPU only
			cpuOnly := xNewMLP(t, 10)
			cbuf, err := ggml.AllocContextTensors(cpuOnly.wctx, cpu)
			require.NoError(t, err)
			defer cbuf.Close()
			cpuOnly.load(t)
			want := computeOnCPU(t, cpu, cpuOnly, xv)
			assert.InDeltaSlice(t, want, got, 1e-5)
		})
	}
}

func TestSchedulerSetNodeBackendAndMisuse(t *testing.T) {
	xLeakCheck(t)
	test := xTestBackend(t)
	cpu := xCPU(t, 2)
	other := xCPU(t, 1)

	m := xNewMLP(t, 12)
	wbuf, err := ggml.AllocContextTensors(m.wctx, cpu)
	require.NoError(t, err)
	defer wbuf.Close()
	wbuf.SetUsage(ggml.BufferUsageWeights) // the mul_mats run on the CPU, with their weights
	m.load(t)

	sched, err := ggml.NewScheduler([]*ggml.Backend{test, cpu}, []*ggml.BufferType{nil, ggml.CPUBufferType()}, 256)
	require.NoError(t, err)
	defer sched.Close()

	ctx := xCtx(t, true)
	g, x, act, out := m.graph(t, ctx)
	// assignments are made before measuring (so that the buffers are sized for them) and
	// again after the reset
	require.NoError(t, sched.Allocator(cpu).Alloc(x))
	sched.SetNodeBackend(act, test)
	require.NoError(t, sched.InitMeasure(g))
	sched.Reset()
	require.NoError(t, sched.Allocator(cpu).Alloc(x))
	xv := xRand(13, xK*xN)
	require.NoError(t, x.SetFloat32(xv))
	sched.SetNodeBackend(act, test)
	assert.Same(t, test, sched.NodeBackend(act))
	require.NoError(t, sched.Compute(g))
	got, err := out.Float32()
	require.NoError(t, err)
	xNear(t, m.ref(xv), got, 1e-5, "relu forced onto Test")
	assert.Same(t, test, sched.NodeBackend(act))
	assert.Same(t, cpu, sched.NodeBackend(out))
	assert.Equal(t, 3, sched.NumSplits(), "CPU, Test (relu), CPU")

	// misuse panics with *ggml.Error; bad arguments are errors
	assert.Panics(t, func() { sched.SetNodeBackend(act, other) })
	assert.Panics(t, func() { sched.Allocator(other) })
	_, err = ggml.NewScheduler(nil, nil, 16)
	assert.Error(t, err)
	_, err = ggml.NewScheduler([]*ggml.Backend{cpu}, []*ggml.BufferType{nil, nil}, 16)
	assert.Error(t, err)

	require.NoError(t, sched.Close())
	require.NoError(t, sched.Close())
	assert.Panics(t, func() { sched.NumSplits() })
}

func TestSchedulerNoBackendSupportsOp(t *testing.T) {
	xLeakCheck(t)
	test := xTestBackend(t)
	testbackend.Reject(test, ggml.OpScale, true)
	defer testbackend.Reject(test, ggml.OpScale, false)
	sched, err := ggml.NewScheduler([]*ggml.Backend{test}, nil, 64)
	require.NoError(t, err)
	defer sched.Close()

	ctx := xCtx(t, true)
	a := ctx.NewTensor1D(ggml.TypeF32, 8)
	y := ctx.Scale(a, 2)
	g := ctx.NewGraph()
	g.BuildForwardExpand(y)
	err = sched.Compute(g)
	require.Error(t, err)
	t.Log(err)
}

func TestGoBufferTypeAsSchedulerBufferType(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 2)
	impl, bt := newCountingType(t)
	tr, err := ggml.NewTracingBufferType(ggml.CPUBufferType())
	require.NoError(t, err)
	defer tr.Close()

	// weights in the tracing type, intermediate tensors in the Go type
	m := xNewMLP(t, 14)
	wbuf, err := ggml.AllocContextTensorsFromBufferType(m.wctx, tr.BufferType)
	require.NoError(t, err)
	defer wbuf.Close()
	wbuf.SetUsage(ggml.BufferUsageWeights)
	m.load(t)

	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu}, []*ggml.BufferType{bt}, 256)
	require.NoError(t, err)
	xv := xRand(15, xK*xN)
	got, _, _ := schedRun(t, sched, cpu, m, xv)
	xNear(t, m.ref(xv), got, 1e-5, "scheduler with a Go buffer type")
	assert.Equal(t, 1, sched.NumSplits())
	assert.GreaterOrEqual(t, impl.allocs.Load(), int64(1), "the scheduler's buffer is a Go buffer")
	assert.Equal(t, "Counting", sched.Buffer(cpu).Name())
	assert.Equal(t, int64(1), impl.sets.Load(), "x written into the Go buffer")
	assert.Equal(t, int64(1), impl.gets.Load(), "out read from the Go buffer")
	assert.Equal(t, int64(3), tr.Stats().Sets)
	assert.Equal(t, int64(0), tr.Stats().Gets, "the CPU reads the weights in place")

	require.NoError(t, bt.Close()) // before the scheduler: its buffer keeps the type alive
	require.NoError(t, sched.Close())
	assert.Equal(t, impl.allocs.Load(), impl.frees.Load())
}

func TestTracingOverTestBackend(t *testing.T) {
	xLeakCheck(t)
	tr, err := ggml.NewTracingBufferType(testbackend.BufferType())
	require.NoError(t, err)
	defer tr.Close()
	assert.Equal(t, "Trace(Test)", tr.Name())
	assert.False(t, tr.IsHost())

	ctx := xCtx(t, true)
	a := ctx.NewTensor1D(ggml.TypeF32, 32)
	b := ctx.NewTensor1D(ggml.TypeF32, 32)
	buf, err := ggml.AllocContextTensorsFromBufferType(ctx, tr.BufferType)
	require.NoError(t, err)
	defer buf.Close()
	assert.False(t, buf.IsHost())
	av := xRand(16, 32)
	require.NoError(t, a.SetFloat32(av))
	require.NoError(t, ggml.CopyTensor(a, b))
	got, err := b.Float32()
	require.NoError(t, err)
	assert.Equal(t, av, got)
	st := tr.Stats()
	assert.Equal(t, int64(1), st.FailedCopies, "Test's cpy_tensor declines a non-Test source")
	assert.Equal(t, int64(2), st.Sets, "a, then b through host memory")
	assert.Equal(t, int64(2), st.Gets, "a through host memory, then b")
}

func TestCompareBackendsAndGraphCopy(t *testing.T) {
	xLeakCheck(t)
	test := xTestBackend(t)
	cpu := xCPU(t, 2)

	m := xNewMLP(t, 17)
	ctx := xCtx(t, true)
	g, x, _, out := m.graph(t, ctx)
	// everything (weights and graph) in CPU memory
	wbuf, err := ggml.AllocContextTensors(m.wctx, cpu)
	require.NoError(t, err)
	defer wbuf.Close()
	m.load(t)
	gbuf, err := ggml.AllocContextTensors(ctx, cpu)
	require.NoError(t, err)
	defer gbuf.Close()
	xv := xRand(18, xK*xN)
	require.NoError(t, x.SetFloat32(xv))

	var visited []int
	err = ggml.CompareBackends(cpu, test, g, func(i int, t1, t2 *ggml.Tensor) bool {
		visited = append(visited, i)
		v1, err := t1.Float32()
		require.NoError(t, err)
		v2, err := t2.Float32()
		require.NoError(t, err)
		assert.InDeltaSlice(t, v1, v2, 1e-5, "node %d", i)
		assert.Same(t, g.Node(i), t1)
		return true
	})
	require.NoError(t, err)
	require.Equal(t, g.Len(), len(visited), "every node (none is a view)")
	for i := range visited {
		assert.Equal(t, i, visited[i])
	}
	got, err := out.Float32()
	require.NoError(t, err)
	xNear(t, m.ref(xv), got, 1e-5, "compare computed the graph on backend 1")

	n := 0
	require.NoError(t, ggml.CompareBackends(cpu, test, g, func(int, *ggml.Tensor, *ggml.Tensor) bool { n++; return n < 2 }))
	assert.Equal(t, 2, n, "stops when the callback returns false")

	err = ggml.CompareBackends(cpu, test, g, func(int, *ggml.Tensor, *ggml.Tensor) bool { panic("callback failure") })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "callback failure")

	// a graph copy on the Test backend computes the same
	gc, err := ggml.NewGraphCopy(test, g)
	require.NoError(t, err)
	assert.Equal(t, "Test", gc.Buffer().Name())
	cg := gc.Graph()
	require.Equal(t, g.Len(), cg.Len())
	require.NoError(t, test.Compute(cg))
	cout, err := cg.Node(-1).Float32()
	require.NoError(t, err)
	assert.InDeltaSlice(t, got, cout, 1e-5)
	node := cg.Node(-1)
	require.NoError(t, gc.Close())
	require.NoError(t, gc.Close())
	assert.Panics(t, func() { gc.Graph() })
	_, err = node.Float32()
	assert.ErrorIs(t, err, ggml.ErrClosed, "tensors of a closed graph copy")
}
