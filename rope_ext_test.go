//go:build cgo

package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ropeExtReference rotates x ([hd, heads, n] as a flat slice) in float64, as RopeExt is
// documented: pair k of a row at position p turns by p·base^(-2k/nDims) / factor[k], scaled by
// attnFactor (no YaRN).
func ropeExtReference(x []float32, hd, heads, n int, pos []int32, factors []float32, nDims, mode int,
	base, attnFactor float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		out[i] = float64(x[i])
	}
	for t := 0; t < n; t++ {
		for h := 0; h < heads; h++ {
			row := out[(t*heads+h)*hd : (t*heads+h+1)*hd]
			for k := 0; k < nDims/2; k++ {
				theta := float64(pos[t]) * math.Pow(base, -2*float64(k)/float64(nDims))
				if factors != nil {
					theta /= float64(factors[k])
				}
				c, s := math.Cos(theta)*attnFactor, math.Sin(theta)*attnFactor
				i0, i1 := 2*k, 2*k+1
				if mode == 2 {
					i0, i1 = k, k+nDims/2
				}
				x0, x1 := row[i0], row[i1]
				row[i0], row[i1] = x0*c-x1*s, x0*s+x1*c
			}
		}
	}
	return out
}

func TestRopeExt(t *testing.T) {
	leakCheck(t)
	const hd, heads, n = 16, 3, 5
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, hd*heads*n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	pos := []int32{0, 1, 7, 100, 311}
	factors := []float32{1, 2.5, 8, 8, 16, 1.5, 3, 4}
	for _, tc := range []struct {
		name    string
		mode    int
		nDims   int
		factors []float32
		attn    float32
	}{
		{"normal", 0, hd, nil, 1},
		{"normal+factors", 0, hd, factors, 1},
		{"neox+factors+attn", 2, hd, factors, 1.2247},
		{"neox partial", 2, 8, factors[:4], 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := newCtx(t, Params{MemSize: 1 << 20})
			a := ctx.NewTensor3D(TypeF32, hd, heads, n)
			p := ctx.NewTensor1D(TypeI32, n)
			var f *Tensor
			if tc.factors != nil {
				f = ctx.NewTensor1D(TypeF32, int64(len(tc.factors)))
				if err := f.SetFloat32(tc.factors); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.SetFloat32(x); err != nil {
				t.Fatal(err)
			}
			if err := p.SetInt32(pos); err != nil {
				t.Fatal(err)
			}
			r := ctx.RopeExt(a, p, f, RopeParams{NDims: tc.nDims, Mode: tc.mode, FreqBase: 10000, FreqScale: 1,
				AttnFactor: tc.attn, BetaFast: 32, BetaSlow: 1})
			g := ctx.NewGraph().BuildForwardExpand(r)
			if err := ctx.Compute(g, 2); err != nil {
				t.Fatal(err)
			}
			got, err := r.Float32()
			if err != nil {
				t.Fatal(err)
			}
			want := ropeExtReference(x, hd, heads, n, pos, tc.factors, tc.nDims, tc.mode, 10000, float64(tc.attn))
			for i := range got {
				if d := math.Abs(float64(got[i]) - want[i]); d > 2e-4*(1+math.Abs(want[i])) {
					t.Fatalf("element %d: got %v, want %v", i, got[i], want[i])
				}
			}
		})
	}
}

func TestRopeExtRejectsBadFactors(t *testing.T) {
	leakCheck(t)
	ctx := newCtx(t, Params{MemSize: 1 << 20})
	a := ctx.NewTensor3D(TypeF32, 16, 2, 3)
	p := ctx.NewTensor1D(TypeI32, 3)
	f := ctx.NewTensor1D(TypeF32, 4) // needs 8
	e := panicError(func() { ctx.RopeExt(a, p, f, RopeParams{NDims: 16, FreqBase: 10000, FreqScale: 1, AttnFactor: 1}) })
	if e == nil {
		t.Fatal("RopeExt accepted 4 factors for 16 rotated dimensions")
	}
}
