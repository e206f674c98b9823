//go:build cgo

package ggml

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultOptimizerParamsMatchC(t *testing.T) {
	for _, typ := range []OptimizerType{Adam, LBFGS} {
		want := cDefaultOptimizerParams(typ)
		want.PrintForwardGraph, want.PrintBackwardGraph = false, false // the Go default prints nothing
		assert.Equal(t, want, DefaultOptimizerParams(typ), "%s", typ)
	}
}

// f = sum((x - c)^2) has its minimum at c
func quadratic(t *testing.T, ctx *Context) (*Tensor, *Tensor, []float32) {
	c := []float32{1.5, -2, 0.25, 3}
	x := ctx.SetParam(ctx.NewTensor1D(TypeF32, 4))
	require.NoError(t, x.SetZero())
	ct := ctx.NewTensor1D(TypeF32, 4)
	require.NoError(t, ct.SetFloat32(c))
	return x, ctx.Sum(ctx.Sqr(ctx.Sub(x, ct))), c
}

func TestOptimizersReachQuadraticMinimum(t *testing.T) {
	leakCheck(t)
	for _, typ := range []OptimizerType{Adam, LBFGS} {
		t.Run(typ.String(), func(t *testing.T) {
			ctx := newCtx(t, Params{MemSize: 8 << 20})
			x, f, c := quadratic(t, ctx)
			p := DefaultOptimizerParams(typ)
			p.Threads = 2
			p.Adam.Alpha = 0.05
			p.Adam.Iterations = 1500
			p.Adam.EpsF = 0
			p.MaxNoImprovement = 0
			o, err := NewOptimizer(p)
			require.NoError(t, err)
			defer o.Close()
			r, err := o.Minimize(f)
			require.NoError(t, err)
			assert.Contains(t, []OptResult{OptOK, OptDidNotConverge}, r)
			got, err := x.Float32()
			require.NoError(t, err)
			assert.InDeltaSlice(t, c, got, 1e-2)
			assert.Less(t, o.LossAfter(), float32(1e-3))
		})
	}
}

func TestOptimizerCallbackScheduleCancelPanic(t *testing.T) {
	leakCheck(t)
	handles := LiveHandles()
	ctx := newCtx(t, Params{MemSize: 8 << 20})
	x, f, _ := quadratic(t, ctx)
	p := DefaultOptimizerParams(Adam)
	p.Adam.Iterations = 4
	p.GradientAccumulation = 2
	p.MaxNoImprovement = 0
	p.Adam.EpsF = 0
	o, err := NewOptimizer(p)
	require.NoError(t, err)
	defer o.Close()

	var seen []OptimizerState
	o.SetCallback(func(s OptimizerState) (float32, bool) {
		seen = append(seen, s)
		return 0, false // schedule 0: nothing moves
	})
	r, err := o.Minimize(f)
	require.NoError(t, err)
	assert.Equal(t, OptDidNotConverge, r)
	require.Len(t, seen, 10) // (1 + 4 iterations) x 2 accumulation steps
	assert.Equal(t, 0, seen[0].AccumStep)
	assert.Equal(t, 1, seen[1].AccumStep)
	assert.Equal(t, 4, o.Iter())
	xs, _ := x.Float32()
	assert.Equal(t, []float32{0, 0, 0, 0}, xs)

	calls := 0
	o.SetCallback(func(s OptimizerState) (float32, bool) {
		calls++
		return s.Sched, calls == 3
	})
	r, err = o.Minimize(f)
	require.NoError(t, err)
	assert.Equal(t, OptCancel, r)
	assert.Equal(t, 3, calls)

	o.SetCallback(func(OptimizerState) (float32, bool) { panic("boom") })
	r, err = o.Minimize(f)
	require.Error(t, err)
	assert.Equal(t, OptCancel, r)
	assert.Contains(t, err.Error(), "boom")
	assert.Equal(t, handles, LiveHandles())
}

func TestOptimizerErrors(t *testing.T) {
	leakCheck(t)
	p := DefaultOptimizerParams(LBFGS)
	p.LBFGS.Wolfe = 1e-5
	e := panicError(func() { _, _ = NewOptimizer(p) })
	require.NotNil(t, e)
	assert.Contains(t, e.Msg, "Wolfe")

	ctx := newCtx(t, Params{MemSize: 4 << 20})
	o, err := NewOptimizer(DefaultOptimizerParams(Adam))
	require.NoError(t, err)
	y := ctx.NewTensor1D(TypeF32, 2)
	e = panicError(func() { _, _ = o.Minimize(ctx.Sum(ctx.Sqr(y))) })
	require.NotNil(t, e)
	assert.Contains(t, e.Msg, "SetParam")
	require.NoError(t, o.Close())
	require.NoError(t, o.Close())
	e = panicError(func() { o.Iter() })
	require.NotNil(t, e)
	assert.ErrorIs(t, e, ErrClosed)
}

// MinimizeGraphs with a checkpointed backward graph trains as well as the plain one
func TestOptimizerWithCheckpointedGraphs(t *testing.T) {
	leakCheck(t)
	ctx := newCtx(t, Params{MemSize: 16 << 20})
	w := ctx.SetParam(ctx.NewTensor2D(TypeF32, 4, 4))
	require.NoError(t, w.Fill(0.1))
	x := ctx.NewTensor2D(TypeF32, 4, 6)
	tg := ctx.NewTensor2D(TypeF32, 4, 6)
	xs, ts := make([]float32, 24), make([]float32, 24)
	for i := range xs {
		xs[i] = float32(i%5) * 0.3
		ts[i] = float32((i*7)%4) * 0.25
	}
	require.NoError(t, x.SetFloat32(xs))
	require.NoError(t, tg.SetFloat32(ts))
	h1 := ctx.Tanh(ctx.MulMat(w, x))
	h2 := ctx.Tanh(ctx.MulMat(w, h1))
	f := ctx.Sum(ctx.Sqr(ctx.Sub(ctx.MulMat(w, h2), tg)))

	gf := ctx.NewGraphCustom(256, true)
	gf.BuildForwardExpand(f)
	gb := ctx.NewGraphCustom(256, true)
	ctx.BuildBackwardCheckpointing(gf, gb, ctx.NewGraphCustom(256, true), h1)

	p := DefaultOptimizerParams(LBFGS)
	o, err := NewOptimizer(p)
	require.NoError(t, err)
	defer o.Close()
	r, err := o.MinimizeGraphs(f, gf, gb)
	require.NoError(t, err)
	assert.Contains(t, []OptResult{OptOK, OptDidNotConverge, LineSearchMinimumStep, LineSearchMaximumIterations}, r)
	assert.Less(t, o.LossAfter(), 0.5*o.LossBefore())
}

// a state saved with MarshalBinary and restored into a new optimizer continues exactly as the
// original optimizer does
func TestOptimizerStateResumesExactly(t *testing.T) {
	leakCheck(t)
	for _, typ := range []OptimizerType{Adam, LBFGS} {
		t.Run(typ.String(), func(t *testing.T) {
			p := DefaultOptimizerParams(typ)
			p.Adam.Iterations, p.LBFGS.Iterations = 7, 3
			p.Adam.Alpha = 0.05
			p.MaxNoImprovement, p.Adam.EpsF = 0, 0
			p.Past = 3 // exercise the past-values ring too
			p.Delta = 0
			run := func(save bool) []float32 {
				ctx := newCtx(t, Params{MemSize: 8 << 20})
				w := ctx.SetParam(ctx.NewTensor2D(TypeF32, 3, 3))
				require.NoError(t, w.SetFloat32([]float32{0.5, -0.2, 0.1, 0.3, 0.9, -0.4, 0.2, 0.1, -0.7}))
				x := ctx.NewTensor2D(TypeF32, 3, 4)
				require.NoError(t, x.SetFloat32([]float32{1, 0, 2, -1, 1, 0, 0.5, 0.5, 1, 2, -1, 0}))
				f := ctx.Sum(ctx.Sqr(ctx.Tanh(ctx.MulMat(w, x))))
				o, err := NewOptimizer(p)
				require.NoError(t, err)
				defer o.Close()
				_, err = o.Minimize(f)
				require.NoError(t, err)
				if save {
					state, err := o.MarshalBinary()
					require.NoError(t, err)
					o2, err := NewOptimizer(p)
					require.NoError(t, err)
					defer o2.Close()
					require.NoError(t, o2.UnmarshalBinary(state))
					assert.Equal(t, o.Iter(), o2.Iter())
					o = o2
				}
				_, err = o.Minimize(f)
				require.NoError(t, err)
				got, err := w.Float32()
				require.NoError(t, err)
				return got
			}
			assert.Equal(t, run(false), run(true))
		})
	}
	o, err := NewOptimizer(DefaultOptimizerParams(Adam))
	require.NoError(t, err)
	defer o.Close()
	_, err = o.MarshalBinary()
	require.Error(t, err)
	require.Error(t, o.UnmarshalBinary([]byte("nope")))
	lb, err := NewOptimizer(DefaultOptimizerParams(LBFGS))
	require.NoError(t, err)
	defer lb.Close()
	require.Error(t, lb.UnmarshalBinary(append([]byte(optStateMagic), 0, 0, 0, 0)))
}
