package tests

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
)

// twoLayer is the newcomer's model: h = relu(W1·x), y = W2·h, with the weights and x in a CPU
// buffer and the graph's intermediate tensors left to a scheduler.
type twoLayer struct {
	ctx        *ggml.Context
	buf        *ggml.Buffer
	w1, w2, x  *ggml.Tensor
	l2         *ggml.Tensor // W2·h, the node forced onto the second backend
	out        *ggml.Tensor
	g          *ggml.Graph
	w1v, w2v   []float32
	xv         []float32
	k, m, n, b int
}

func newTwoLayer(t *testing.T, cpu *ggml.Backend) *twoLayer {
	t.Helper()
	m := &twoLayer{k: 16, m: 24, n: 8, b: 3}
	wctx := xCtx(t, true)
	m.ctx = wctx
	m.w1 = wctx.NewTensor2D(ggml.TypeF32, int64(m.k), int64(m.m))
	m.w2 = wctx.NewTensor2D(ggml.TypeF32, int64(m.m), int64(m.n))
	m.x = wctx.NewTensor2D(ggml.TypeF32, int64(m.k), int64(m.b))
	var err error
	m.buf, err = ggml.AllocContextTensors(wctx, cpu)
	require.NoError(t, err)
	t.Cleanup(func() { m.buf.Close() })
	// weights pin the ops using them to the backend of their buffer (the first, here): layer 1
	// stays there, and without an assignment the whole graph does
	m.buf.SetUsage(ggml.BufferUsageWeights)
	m.w1v, m.w2v, m.xv = xRand(1, m.k*m.m), xRand(2, m.m*m.n), xRand(3, m.k*m.b)
	require.NoError(t, m.w1.SetFloat32(m.w1v))
	require.NoError(t, m.w2.SetFloat32(m.w2v))
	require.NoError(t, m.x.SetFloat32(m.xv))

	gctx := xCtx(t, true)
	h := gctx.Relu(gctx.MulMat(m.w1, m.x))
	m.l2 = gctx.MulMat(m.w2, h)
	m.out = gctx.Scale(m.l2, 0.5)
	m.g = gctx.NewGraph().BuildForwardExpand(m.out)
	return m
}

// ref computes the model in float64.
func (m *twoLayer) ref() []float64 {
	out := make([]float64, m.n*m.b)
	h := make([]float64, m.m)
	for c := 0; c < m.b; c++ {
		for i := 0; i < m.m; i++ {
			s := 0.0
			for k := 0; k < m.k; k++ {
				s += float64(m.w1v[i*m.k+k]) * float64(m.xv[c*m.k+k])
			}
			h[i] = max(s, 0)
		}
		for j := 0; j < m.n; j++ {
			s := 0.0
			for i := 0; i < m.m; i++ {
				s += float64(m.w2v[j*m.m+i]) * h[i]
			}
			out[c*m.n+j] = 0.5 * s
		}
	}
	return out
}

// TestSchedulerNewcomer reproduces the newcomer's case: two backends, layer 2 forced onto the
// second with SetNodeBackend before the first Compute (no Reset, no InitMeasure), then 100
// computes with identical results and two splits.
func TestSchedulerNewcomer(t *testing.T) {
	xLeakCheck(t)
	cpu1, cpu2 := xCPU(t, 2), xCPU(t, 1)
	m := newTwoLayer(t, cpu1)
	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu1, cpu2}, nil, 64)
	require.NoError(t, err)
	defer sched.Close()

	sched.SetNodeBackend(m.l2, cpu2)
	assert.Same(t, cpu2, sched.NodeBackend(m.l2), "the assignment is visible before any compute")
	var first []float32
	for i := 0; i < 100; i++ {
		require.NoError(t, sched.Compute(m.g), "compute %d", i)
		require.Equal(t, 2, sched.NumSplits(), "compute %d", i)
		require.Same(t, cpu2, sched.NodeBackend(m.l2), "compute %d", i)
		got, err := m.out.Float32()
		require.NoError(t, err)
		if i == 0 {
			xNear(t, m.ref(), got, 1e-4, "first compute")
			first = got
			continue
		}
		require.Equal(t, first, got, "compute %d differs from the first", i)
	}
}

// TestSchedulerAssignmentOrder: an assignment made after computes, or around Reset, is honoured
// by the next Compute (the scheduler re-measures by itself), and removing it merges the splits
// again.
func TestSchedulerAssignmentOrder(t *testing.T) {
	xLeakCheck(t)
	cpu1, cpu2 := xCPU(t, 2), xCPU(t, 1)
	m := newTwoLayer(t, cpu1)
	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu1, cpu2}, nil, 64)
	require.NoError(t, err)
	defer sched.Close()
	want := m.ref()
	check := func(splits int, msg string) {
		t.Helper()
		require.NoError(t, sched.Compute(m.g), msg)
		assert.Equal(t, splits, sched.NumSplits(), msg)
		got, err := m.out.Float32()
		require.NoError(t, err)
		xNear(t, want, got, 1e-4, msg)
	}

	check(1, "no assignment")
	check(1, "no assignment, again")
	sched.SetNodeBackend(m.l2, cpu2) // after computes: used to be ignored
	check(2, "assigned after computes")
	sched.Reset()
	check(2, "after Reset the assignment persists")
	sched.Reset()
	sched.SetNodeBackend(m.l2, cpu2) // the old dance still works
	check(2, "Reset, assign, Compute")
	require.NoError(t, sched.InitMeasure(m.g))
	check(2, "after an explicit InitMeasure")
	sched.SetNodeBackend(m.l2, nil)
	check(1, "assignment removed")
	sched.SetNodeBackend(m.l2, cpu2)
	sched.ClearNodeBackends()
	check(1, "assignments cleared")
	assert.Nil(t, panicErr(func() { sched.SetNodeBackend(m.l2, cpu2) }))
	check(2, "assigned again")
}

func panicErr(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
			} else {
				err = errors.New("non-error panic")
			}
		}
	}()
	f()
	return nil
}

// TestSchedulerConcurrentMisuse: two goroutines hammering one Scheduler (100 runs of two
// concurrent computes) never crash the process; each call succeeds or returns ErrBusy, and the
// successful computes are correct.
func TestSchedulerConcurrentMisuse(t *testing.T) {
	xLeakCheck(t)
	cpu1, cpu2 := xCPU(t, 2), xCPU(t, 1)
	m := newTwoLayer(t, cpu1)
	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu1, cpu2}, nil, 64)
	require.NoError(t, err)
	defer sched.Close()
	sched.SetNodeBackend(m.l2, cpu2)
	want := m.ref()

	var ok, busy atomic.Int64
	for run := 0; run < 100; run++ {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = sched.Compute(m.g)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ggml.ErrBusy):
				busy.Add(1)
				var e *ggml.Error
				require.ErrorAs(t, err, &e)
				assert.Contains(t, err.Error(), "in use by another goroutine")
			default:
				t.Fatalf("run %d: unexpected error %v", run, err)
			}
		}
		got, err := m.out.Float32()
		require.NoError(t, err)
		xNear(t, want, got, 1e-4, "after a concurrent run")
	}
	assert.Greater(t, ok.Load(), int64(99), "at least one compute of each run succeeds")
	t.Logf("%d computes succeeded, %d refused with ErrBusy", ok.Load(), busy.Load())
	// a backend of the scheduler is busy while the scheduler computes on it, and vice versa
	assert.Equal(t, 2, sched.NumSplits())
}

// TestBackendConcurrentMisuse: two goroutines computing on one Backend, and Close racing with
// computes: no crash, ErrBusy or success.
func TestBackendConcurrentMisuse(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 2)
	ctx := xCtx(t, false)
	a := ctx.NewTensor2D(ggml.TypeF32, 64, 64)
	require.NoError(t, a.SetFloat32(xRand(4, 64*64)))
	y := ctx.MulMat(a, ctx.Relu(a))
	g := ctx.NewGraph().BuildForwardExpand(y)
	for run := 0; run < 50; run++ {
		var wg sync.WaitGroup
		for i := 0; i < 2; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := cpu.Compute(g); err != nil && !errors.Is(err, ggml.ErrBusy) {
					t.Errorf("unexpected error %v", err)
				}
			}()
		}
		wg.Wait()
	}
}

// TestComputeContext: a cancelled context stops a compute between nodes, and the error wraps
// the context's error.
func TestComputeContext(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 2)
	ctx := xCtx(t, false)
	x := ctx.NewTensor1D(ggml.TypeF32, 8)
	require.NoError(t, x.SetFloat32(xRand(5, 8)))
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int64
	// the first node cancels the context; the nodes after it must not run. The flag the engine
	// polls is set by a goroutine (context.AfterFunc) after cancel returns: the node gives it
	// time, since the single-task nodes after it run back to back without any synchronisation
	y := ctx.MapCustom1(x, func(dst, a, _, _ *ggml.Tensor, ith, _ int) {
		if ith == 0 {
			cancel()
			time.Sleep(50 * time.Millisecond)
		}
	}, 1)
	for i := 0; i < 20; i++ {
		y = ctx.MapCustom1(y, func(dst, a, _, _ *ggml.Tensor, ith, _ int) { calls.Add(1) }, 1)
	}
	g := ctx.NewGraph().BuildForwardExpand(y)

	err := cpu.ComputeContext(cctx, g)
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, calls.Load(), int64(20), "the compute stopped before the last nodes")

	// an already cancelled context: nothing runs
	calls.Store(0)
	err = cpu.ComputeContext(cctx, g)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int64(0), calls.Load())

	// a live context computes everything, and the backend works normally afterwards
	require.NoError(t, cpu.ComputeContext(context.Background(), g))
	assert.Equal(t, int64(20), calls.Load())
	require.NoError(t, cpu.Compute(g))

	// the scheduler: cancelled before it starts
	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu}, nil, 64)
	require.NoError(t, err)
	defer sched.Close()
	m := newTwoLayer(t, cpu)
	require.NoError(t, sched.ComputeContext(context.Background(), m.g))
	err = sched.ComputeContext(cctx, m.g)
	assert.ErrorIs(t, err, context.Canceled)
	require.NoError(t, sched.Compute(m.g))
}

// TestContextConcurrentMisuse: two goroutines building and computing in one Context: each call
// succeeds, or reports ErrBusy (an error from Compute, a *ggml.Error panic from an op
// constructor); the process never crashes.
func TestContextConcurrentMisuse(t *testing.T) {
	xLeakCheck(t)
	ctx := xCtx(t, false)
	a := ctx.NewTensor2D(ggml.TypeF32, 32, 32)
	require.NoError(t, a.SetFloat32(xRand(6, 32*32)))
	g := ctx.NewGraph().BuildForwardExpand(ctx.MulMat(a, a))
	var busy atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for run := 0; run < 100; run++ {
				if err := ctx.Compute(g, 1); err != nil {
					if !errors.Is(err, ggml.ErrBusy) {
						t.Errorf("Compute: unexpected error %v", err)
					}
					busy.Add(1)
				}
				if err := panicErr(func() { ctx.Neg(a) }); err != nil {
					if !errors.Is(err, ggml.ErrBusy) {
						t.Errorf("Neg: unexpected panic %v", err)
					}
					busy.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d calls refused with ErrBusy", busy.Load())
	require.NoError(t, ctx.Compute(g, 1))
}

// TestSchedulerGraphsRebuilt: a decode-like loop whose graph is rebuilt every step in a fresh
// context (whose memory, and so whose tensor addresses, the allocator may hand out again) and
// changes its op, op parameter or shape from step to step, or stays the same for a few steps.
// The scheduler reuses the plan of an unchanged graph and must never reuse it for a changed
// one: every result is checked.
func TestSchedulerGraphsRebuilt(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 1)
	inCtx := xCtx(t, true)
	x := inCtx.NewTensor1D(ggml.TypeF32, 16)
	buf, err := ggml.AllocContextTensors(inCtx, cpu)
	require.NoError(t, err)
	defer buf.Close()
	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu}, nil, 256)
	require.NoError(t, err)
	defer sched.Close()

	// variant: 0 y = (2x + x) * 0.5; 1 y = (2x - x) * 0.5; 2 y = (2x + x) * 3; 3 as 0 over
	// the first 8 elements of x (a view)
	factor := []float64{1.5, 0.5, 9, 1.5}
	variants := []int{0, 0, 0, 1, 1, 2, 0, 3, 3, 1, 2, 2, 0}
	for step, v := range variants {
		ctx, err := ggml.NewContext(ggml.Params{MemSize: 32*ggml.TensorOverhead() + ggml.GraphOverhead(), NoAlloc: true})
		require.NoError(t, err)
		in := x
		if v == 3 {
			in = ctx.View1D(x, 8, 0)
		}
		a := ctx.Scale(in, 2)
		var b *ggml.Tensor
		if v == 1 {
			b = ctx.Sub(a, in)
		} else {
			b = ctx.Add(a, in)
		}
		s := float32(0.5)
		if v == 2 {
			s = 3
		}
		y := ctx.Scale(b, s)
		g := ctx.NewGraph().BuildForwardExpand(y)
		xv := xRand(int64(100+step), 16)
		require.NoError(t, x.SetFloat32(xv))
		require.NoError(t, sched.Compute(g), "step %d", step)
		got, err := y.Float32()
		require.NoError(t, err)
		want := make([]float64, len(got))
		for i := range want {
			want[i] = factor[v] * float64(xv[i])
		}
		xNear(t, want, got, 1e-5, fmt.Sprintf("step %d (variant %d)", step, v))
		require.NoError(t, ctx.Close())
	}
}
