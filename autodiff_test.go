//go:build cgo

package ggml

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gradCase builds y = op(params) in ctx; params are created with rnd and marked with SetParam.
type gradCase struct {
	name  string
	build func(ctx *Context, p func(lo, hi float32, ne ...int64) *Tensor) *Tensor
	h     float64 // finite-difference step (fp16-table ops need a wider one)
}

// fdCheck compares the gradients of f = sum(y * w) (w fixed random; y itself when it is a
// scalar) from BuildBackward with central differences of f summed in float64, and returns the
// worst error in units of the tolerance (> 1 fails). corrupt, when set, may tamper with the
// analytic gradients before the comparison (the checker's own test).
func fdCheck(t *testing.T, c gradCase, corrupt func(g []float32)) float64 {
	t.Helper()
	rng := rand.New(rand.NewSource(42))
	ctx := newCtx(t, Params{MemSize: 16 << 20})
	var params []*Tensor
	newParam := func(lo, hi float32, ne ...int64) *Tensor {
		x := ctx.NewTensor(TypeF32, ne...)
		v := make([]float32, x.NumElements())
		for i := range v {
			v[i] = lo + (hi-lo)*rng.Float32()
		}
		require.NoError(t, x.SetFloat32(v))
		params = append(params, ctx.SetParam(x))
		return x
	}
	y := c.build(ctx, newParam)
	loss := y
	var w []float32
	if y.NumElements() != 1 {
		wt := ctx.NewTensor(TypeF32, y.Shape()...)
		w = make([]float32, wt.NumElements())
		for i := range w {
			w[i] = 2*rng.Float32() - 1
		}
		require.NoError(t, wt.SetFloat32(w))
		loss = ctx.Sum(ctx.Mul(y, wt))
	}
	gf := ctx.NewGraphCustom(1024, true)
	gf.BuildForwardExpand(loss)
	gb := ctx.BuildBackward(gf, false)
	require.NoError(t, ctx.ComputeGradients(gf, gb, loss, 2))
	f := func() float64 {
		require.NoError(t, ctx.Compute(gf, 2))
		yv, err := y.Float32()
		require.NoError(t, err)
		s := 0.0
		for i, v := range yv {
			if w != nil {
				s += float64(v) * float64(w[i])
			} else {
				s += float64(v)
			}
		}
		return s
	}
	worst := 0.0
	for _, x := range params {
		ana, err := x.Grad().Float32()
		require.NoError(t, err)
		if corrupt != nil {
			corrupt(ana)
		}
		xv, err := x.Float32()
		require.NoError(t, err)
		for i := range xv {
			x0 := xv[i]
			xv[i] = x0 + float32(c.h)
			require.NoError(t, x.SetFloat32(xv))
			fp := f()
			xv[i] = x0 - float32(c.h)
			require.NoError(t, x.SetFloat32(xv))
			fm := f()
			xv[i] = x0
			require.NoError(t, x.SetFloat32(xv))
			num := (fp - fm) / (2 * c.h)
			e := math.Abs(num-float64(ana[i])) / (2e-3 + 2e-2*math.Abs(num))
			worst = math.Max(worst, e)
		}
	}
	return worst
}

var goGradCases = []gradCase{
	{"MulMat+Add broadcast", func(ctx *Context, p func(lo, hi float32, ne ...int64) *Tensor) *Tensor {
		return ctx.Add(ctx.MulMat(p(-1, 1, 5, 4), p(-1, 1, 5, 3)), p(-1, 1, 4, 1))
	}, 1e-3},
	{"Norm+Gelu", func(ctx *Context, p func(lo, hi float32, ne ...int64) *Tensor) *Tensor {
		return ctx.Gelu(ctx.Norm(p(-1, 1, 8, 3), 1e-5))
	}, 1e-3},
	{"RMSNorm*g", func(ctx *Context, p func(lo, hi float32, ne ...int64) *Tensor) *Tensor {
		return ctx.Mul(ctx.RMSNorm(p(-1, 1, 8, 3), 1e-5), p(0.5, 1.5, 8, 1))
	}, 1e-3},
	{"SoftMax ext", func(ctx *Context, p func(lo, hi float32, ne ...int64) *Tensor) *Tensor {
		return ctx.SoftMaxExt(p(-1, 1, 6, 4), p(-1, 1, 6, 4), 0.7)
	}, 3e-2},
	{"CrossEntropyLoss", func(ctx *Context, p func(lo, hi float32, ne ...int64) *Tensor) *Tensor {
		tg := ctx.NewTensor(TypeF32, 5, 3)
		_ = tg.SetFloat32([]float32{0.2, 0.1, 0.3, 0.3, 0.1, 0.5, 0.5, 0, 0, 0, 0.1, 0.2, 0.3, 0.2, 0.2})
		return ctx.CrossEntropyLoss(p(-2, 2, 5, 3), tg)
	}, 1e-3},
	{"FlashAttn", func(ctx *Context, p func(lo, hi float32, ne ...int64) *Tensor) *Tensor {
		return ctx.FlashAttn(p(-1, 1, 4, 3, 2), p(-1, 1, 4, 5, 2), p(-1, 1, 5, 4, 2), true)
	}, 1e-3},
	{"MapCustom2 with SetCustomGrad", func(ctx *Context, p func(lo, hi float32, ne ...int64) *Tensor) *Tensor {
		// y = a * b^3, computed by a Go kernel; its gradient built from ops
		y := ctx.MapCustom2(p(-1, 1, 5, 3), p(-1, 1, 5, 3), func(dst, a, b, _ *Tensor, ith, nth int) {
			av, _ := a.Float32()
			bv, _ := b.Float32()
			out := make([]float32, len(av))
			for i := range out {
				out[i] = av[i] * bv[i] * bv[i] * bv[i]
			}
			_ = dst.SetFloat32(out)
		}, 1)
		y.SetCustomGrad(func(ctx *Context, node, grad *Tensor) []*Tensor {
			a, b := node.Src(0), node.Src(1)
			b2 := ctx.Sqr(b)
			return []*Tensor{ctx.Mul(grad, ctx.Mul(b2, b)), ctx.Scale(ctx.Mul(grad, ctx.Mul(a, b2)), 3)}
		})
		return y
	}, 1e-3},
	{"Permute+Cont+Tanh", func(ctx *Context, p func(lo, hi float32, ne ...int64) *Tensor) *Tensor {
		return ctx.Tanh(ctx.Cont(ctx.Permute(p(-1, 1, 3, 4, 2), 1, 2, 0, 3)))
	}, 1e-3},
}

func TestGradientsMatchFiniteDifferences(t *testing.T) {
	leakCheck(t)
	for _, c := range goGradCases {
		t.Run(c.name, func(t *testing.T) {
			worst := fdCheck(t, c, nil)
			assert.Less(t, worst, 1.0, "worst gradient error %.3g x tolerance", worst)
		})
	}
}

// the Go checker reports a wrong gradient
func TestFiniteDifferenceCheckerCatchesWrongGradients(t *testing.T) {
	leakCheck(t)
	for _, c := range goGradCases[:3] {
		worst := fdCheck(t, c, func(g []float32) {
			for i := range g {
				g[i] *= 1.1
			}
		})
		assert.Greater(t, worst, 1.0, "%s: a gradient scaled by 1.1 went unnoticed", c.name)
	}
}

func TestAutodiffAPI(t *testing.T) {
	leakCheck(t)
	ctx := newCtx(t, Params{MemSize: 4 << 20})
	x := ctx.NewTensor1D(TypeF32, 3)
	require.NoError(t, x.SetFloat32([]float32{1, 2, 3}))
	assert.False(t, x.IsParam())
	assert.Nil(t, x.Grad())
	ctx.SetParam(x)
	assert.True(t, x.IsParam())
	require.NotNil(t, x.Grad())
	c := ctx.NewTensor1D(TypeF32, 3) // a constant: no gradient
	assert.Nil(t, ctx.Sqr(c).Grad())
	loss := ctx.Sum(ctx.Sqr(x))
	require.NotNil(t, loss.Grad())

	gf := ctx.NewGraphCustom(64, true)
	gf.BuildForwardExpand(loss)
	gb := ctx.BuildBackward(gf, true)
	assert.Greater(t, gb.Len(), gf.Len())
	require.NoError(t, ctx.ComputeGradients(gf, gb, loss, 1))
	g, err := x.Grad().Float32()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6}, g)

	// checkpointing gives the same gradient
	gb2 := ctx.NewGraphCustom(64, true)
	tmp := ctx.NewGraphCustom(64, true)
	ctx.BuildBackwardCheckpointing(gf, gb2, tmp, x)
	require.NoError(t, ctx.ComputeGradients(gf, gb2, loss, 1))
	g2, err := x.Grad().Float32()
	require.NoError(t, err)
	assert.Equal(t, g, g2)
}

func TestAutodiffErrorsPanicWithError(t *testing.T) {
	leakCheck(t)
	ctx := newCtx(t, Params{MemSize: 4 << 20})
	x := ctx.SetParam(ctx.NewTensor2D(TypeF32, 4, 2))
	am := ctx.Argmax(x)
	gf := ctx.NewGraphCustom(64, true)
	gf.BuildForwardExpand(am)
	e := panicError(func() { ctx.BuildBackward(gf, false) })
	require.NotNil(t, e)
	assert.Contains(t, e.Msg, "ARGMAX")

	plain := ctx.NewGraph()
	plain.BuildForwardExpand(ctx.Sum(x))
	e = panicError(func() { ctx.BuildBackward(plain, false) })
	require.NotNil(t, e)
	assert.Contains(t, e.Msg, "NewGraphCustom")
	e = panicError(func() { plain.Reset() })
	require.NotNil(t, e)

	// a custom op without a gradient, and a gradient function that panics
	cy := ctx.MapCustom1(x, func(dst, a, _, _ *Tensor, ith, nth int) {}, 1)
	gc := ctx.NewGraphCustom(64, true)
	gc.BuildForwardExpand(ctx.Sum(cy))
	e = panicError(func() { ctx.BuildBackward(gc, false) })
	require.NotNil(t, e)
	assert.Contains(t, e.Msg, "ggml_x_map_custom_set_grad")
	cy.SetCustomGrad(func(ctx *Context, node, grad *Tensor) []*Tensor { panic("no gradient today") })
	e = panicError(func() { ctx.BuildBackward(gc, false) })
	require.NotNil(t, e)
	assert.Contains(t, e.Msg, "no gradient today")
	e = panicError(func() { x.SetCustomGrad(func(*Context, *Tensor, *Tensor) []*Tensor { return nil }) })
	require.NotNil(t, e)

	y := ctx.NewTensor1D(TypeF32, 2)
	e = panicError(func() { _ = ctx.ComputeGradients(gf, gf, ctx.Sum(y), 1) })
	require.NotNil(t, e)
	assert.Contains(t, e.Msg, "SetParam")
}
