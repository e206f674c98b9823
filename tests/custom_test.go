package tests

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
)

// affine computes dst = 2*a + b (+ c) row by row, rows split between the threads.
func affine(calls *atomic.Int64, maxNth *atomic.Int64) ggml.CustomFunc {
	return func(dst, a, b, c *ggml.Tensor, ith, nth int) {
		calls.Add(1)
		for {
			m := maxNth.Load()
			if int64(nth) <= m || maxNth.CompareAndSwap(m, int64(nth)) {
				break
			}
		}
		d, av := dst.HostFloat32(), a.HostFloat32()
		var bv, cv []float32
		if b != nil {
			bv = b.HostFloat32()
		}
		if c != nil {
			cv = c.HostFloat32()
		}
		ne0 := int(a.Ne()[0])
		rows := len(av) / ne0
		for r := ith; r < rows; r += nth {
			for i := r * ne0; i < (r+1)*ne0; i++ {
				v := 2 * av[i]
				if bv != nil {
					v += bv[i]
				}
				if cv != nil {
					v += cv[i]
				}
				d[i] = v
			}
		}
	}
}

func TestCustomOps(t *testing.T) {
	xLeakCheck(t)
	const ne0, ne1 = 5, 12
	av, bv, cv := xRand(1, ne0*ne1), xRand(2, ne0*ne1), xRand(3, ne0*ne1)
	want := func(n int) []float64 {
		out := make([]float64, len(av))
		for i := range out {
			out[i] = 2 * float64(av[i])
			if n >= 2 {
				out[i] += float64(bv[i])
			}
			if n >= 3 {
				out[i] += float64(cv[i])
			}
		}
		return out
	}
	for _, tc := range []struct {
		name    string
		nTasks  int
		operand int
		inplace bool
	}{
		{"custom1 one task", 1, 1, false},
		{"custom1 all tasks", ggml.AllTasks, 1, false},
		{"custom1 inplace", ggml.AllTasks, 1, true},
		{"custom2 two tasks", 2, 2, false},
		{"custom2 inplace", 3, 2, true},
		{"custom3 all tasks", ggml.AllTasks, 3, false},
		{"custom3 inplace", 1, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const threads = 3
			ctx := xCtx(t, false)
			a := ctx.NewTensor2D(ggml.TypeF32, ne0, ne1)
			b := ctx.NewTensor2D(ggml.TypeF32, ne0, ne1)
			c := ctx.NewTensor2D(ggml.TypeF32, ne0, ne1)
			require.NoError(t, a.SetFloat32(av))
			require.NoError(t, b.SetFloat32(bv))
			require.NoError(t, c.SetFloat32(cv))
			var calls, maxNth atomic.Int64
			fn := affine(&calls, &maxNth)
			var y *ggml.Tensor
			switch {
			case tc.operand == 1 && tc.inplace:
				y = ctx.MapCustom1Inplace(a, fn, tc.nTasks)
			case tc.operand == 1:
				y = ctx.MapCustom1(a, fn, tc.nTasks)
			case tc.operand == 2 && tc.inplace:
				y = ctx.MapCustom2Inplace(a, b, fn, tc.nTasks)
			case tc.operand == 2:
				y = ctx.MapCustom2(a, b, fn, tc.nTasks)
			case tc.inplace:
				y = ctx.MapCustom3Inplace(a, b, c, fn, tc.nTasks)
			default:
				y = ctx.MapCustom3(a, b, c, fn, tc.nTasks)
			}
			assert.Equal(t, a.Ne(), y.Ne())
			g := ctx.NewGraph()
			g.BuildForwardExpand(y)
			require.NoError(t, ctx.Compute(g, threads))
			got, err := y.Float32()
			require.NoError(t, err)
			xNear(t, want(tc.operand), got, 1e-6, tc.name)
			wantNth := int64(tc.nTasks)
			if tc.nTasks == ggml.AllTasks {
				wantNth = threads
			}
			assert.Equal(t, wantNth, maxNth.Load(), "nth")
			assert.Equal(t, wantNth, calls.Load(), "one call per task")
			if tc.inplace {
				ga, err := a.Float32()
				require.NoError(t, err)
				assert.Equal(t, got, ga, "in place: a holds the result")
			}
		})
	}
}

func TestCustomOpOnCPUBackendAndScheduler(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 4)
	ctx := xCtx(t, true)
	in := xCtx(t, true)
	a := in.NewTensor2D(ggml.TypeF32, 6, 8)
	ibuf, err := ggml.AllocContextTensors(in, cpu)
	require.NoError(t, err)
	defer ibuf.Close()
	av := xRand(5, 48)
	require.NoError(t, a.SetFloat32(av))

	var calls, maxNth atomic.Int64
	y := ctx.Scale(ctx.MapCustom1(a, affine(&calls, &maxNth), ggml.AllTasks), 0.5)
	g := ctx.NewGraph()
	g.BuildForwardExpand(y)

	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu}, nil, 64)
	require.NoError(t, err)
	defer sched.Close()
	require.NoError(t, sched.Compute(g))
	got, err := y.Float32()
	require.NoError(t, err)
	want := make([]float64, len(av))
	for i := range av {
		want[i] = float64(av[i])
	}
	xNear(t, want, got, 1e-6, "0.5 * (2a) through the scheduler")
	assert.Equal(t, int64(4), maxNth.Load(), "ran on the CPU backend's 4 worker threads")
}

func TestCustomOpPanicIsAnError(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 2)
	ctx := xCtx(t, false)
	a := ctx.NewTensor1D(ggml.TypeF32, 64)
	require.NoError(t, a.SetFloat32(xRand(1, 64)))
	var mu sync.Mutex
	fail := true
	y := ctx.MapCustom1(a, func(dst, a, _, _ *ggml.Tensor, ith, nth int) {
		mu.Lock()
		f := fail
		mu.Unlock()
		if f && ith == nth-1 {
			panic("custom op failure")
		}
		copy(dst.HostFloat32(), a.HostFloat32())
	}, ggml.AllTasks)
	g := ctx.NewGraph()
	g.BuildForwardExpand(y)

	err := ctx.Compute(g, 2)
	require.Error(t, err, "Context.Compute")
	assert.Contains(t, err.Error(), "custom op failure")
	var gerr *ggml.Error
	assert.ErrorAs(t, err, &gerr)

	err = cpu.Compute(g)
	require.Error(t, err, "Backend.Compute")
	assert.Contains(t, err.Error(), "panicked")

	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu}, nil, 64)
	require.NoError(t, err)
	defer sched.Close()
	err = sched.Compute(g)
	require.Error(t, err, "Scheduler.Compute")
	assert.Contains(t, err.Error(), "custom op failure")

	// once the function stops panicking, computing works again
	mu.Lock()
	fail = false
	mu.Unlock()
	require.NoError(t, ctx.Compute(g, 2))
	require.NoError(t, cpu.Compute(g))
}

func TestCustomOpMisuse(t *testing.T) {
	xLeakCheck(t)
	ctx := xCtx(t, false)
	a := ctx.NewTensor1D(ggml.TypeF32, 4)
	h := ggml.LiveHandles()
	assert.PanicsWithError(t, "ggml: MapCustom1(a=[4 1 1 1] f32): nil CustomFunc", func() { ctx.MapCustom1(a, nil, 1) })
	assert.Panics(t, func() { ctx.MapCustom1(a, func(_, _, _, _ *ggml.Tensor, _, _ int) {}, 0) })
	assert.Equal(t, h, ggml.LiveHandles(), "no handle kept for a failed constructor")
	ctx.MapCustom1(a, func(_, _, _, _ *ggml.Tensor, _, _ int) {}, 1)
	assert.Equal(t, h+1, ggml.LiveHandles())
	require.NoError(t, ctx.Close())
	assert.Equal(t, h, ggml.LiveHandles(), "released when the context closes")
	assert.Panics(t, func() { a.HostFloat32() }, "tensor of a closed context")
}
