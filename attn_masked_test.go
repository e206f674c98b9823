//go:build cgo

package ggml

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// AttnMasked computes what MulMat, SoftMaxExt and MulMat compute on the same operands (the
// graph llama builds for attention), for F16 and F32 caches, grouped-query layouts whose
// groups fill, split or leave part of the 8 SIMD lanes, odd head sizes, soft-capping, a mask
// with holes, and a token whose mask hides every cell (zeros); quantized keys (a cache made with
// -ctk), against the same graph on the keys decoded to F32. The AVX-512 kernel (head sizes
// that are multiples of 16) runs by default on machines that have it;
// TestAttnMaskedAtLowerLevels runs this test again at the levels below.
func TestAttnMaskedMatchesMulMatSoftMax(t *testing.T) {
	leakCheck(t)
	rng := rand.New(rand.NewPCG(7, 9))
	for _, tc := range []struct {
		typ              Type
		d, dv, h, hk, n  int64
		cells, cacheCell int64 // cells attended, cells in the cache (the views' stride)
		softcap          float32
		kt               Type // K's type when it is quantized (0: typ)
		vrows            bool // V stored by cells (AttnMaskedVRows), of type vt; else transposed, of type typ
		vt               Type
	}{
		{TypeF16, 64, 64, 32, 4, 8, 37, 64, 0, 0, false, 0},
		{TypeF32, 64, 64, 32, 4, 3, 37, 40, 0, 0, false, 0},
		{TypeF16, 16, 16, 3, 3, 4, 21, 32, 0, 0, false, 0},  // one head per KV head
		{TypeF16, 20, 12, 6, 2, 5, 19, 19, 0, 0, false, 0},  // 3 heads per KV head, head sizes not multiples of 8
		{TypeF32, 8, 8, 24, 2, 2, 9, 16, 0, 0, false, 0},    // 12 heads per KV head: 8 + 4 lanes
		{TypeF16, 32, 32, 8, 2, 3, 50, 64, 30, 0, false, 0}, // soft-capping
		{TypeF16, 8, 8, 8, 4, 1, 32, 64, 0, 0, false, 0},
		{TypeF16, 8, 8, 8, 4, 1, 17, 64, 0, 0, false, 0},
		{TypeF16, 8, 8, 8, 4, 1, 16, 64, 0, 0, false, 0},
		{TypeF32, 8, 8, 2, 1, 1, 30, 30, 0, 0, false, 0}, // a partial block with holes (see below)
		// the AVX-512 kernel (head sizes multiples of 16) with every head rounding: 16 heads per
		// KV head over runs of consecutive cells; 20 (two passes of 16); 5 (rounded to 8); 2, with
		// a value size that leaves part of its 8 rows per pass; 1; a head size of 128
		{TypeF16, 64, 64, 32, 2, 1, 100, 128, 0, 0, false, 0},
		{TypeF16, 32, 24, 40, 2, 3, 70, 70, 0, 0, false, 0},
		{TypeF16, 16, 16, 5, 1, 1, 33, 40, 0, 0, false, 0},
		{TypeF32, 16, 10, 6, 3, 2, 45, 48, 0, 0, false, 0},
		{TypeF32, 64, 64, 7, 7, 4, 20, 20, 0, 0, false, 0},
		{TypeF16, 128, 128, 8, 1, 2, 40, 40, 0, 0, false, 0},
		// quantized keys with F16 or F32 values: every kernel's row decoding, grouped queries,
		// soft-capping, head sizes of one block (the scalar kernel) and of several
		{TypeF16, 64, 64, 32, 4, 8, 37, 64, 0, TypeQ8_0, false, 0},
		{TypeF32, 64, 64, 8, 2, 3, 45, 48, 0, TypeQ4_0, false, 0},
		{TypeF16, 32, 24, 40, 2, 3, 70, 70, 30, TypeQ5_1, false, 0},
		{TypeF16, 128, 128, 8, 1, 2, 40, 40, 0, TypeQ4_1, false, 0},
		{TypeF16, 32, 32, 20, 2, 4, 61, 64, 30, TypeQ4_0, false, 0}, // Q4_0 decoded inline (SIMD): both nibble halves, soft-capping
		{TypeF32, 32, 32, 6, 3, 2, 19, 24, 0, TypeQ5_0, false, 0},
		{TypeF16, 256, 64, 4, 2, 1, 33, 33, 0, TypeQ4_K, false, 0},
		// values stored by cells (AttnMaskedVRows): quantized (Q8_0 decoded inline, the others by
		// blocks), F16 and F32 with value sizes that leave a partial piece, one head per KV head
		{TypeF16, 64, 64, 32, 4, 8, 37, 64, 0, TypeQ8_0, true, TypeQ8_0},
		{TypeF16, 128, 128, 8, 1, 2, 40, 40, 0, TypeQ4_0, true, TypeQ4_0},
		{TypeF16, 64, 64, 32, 2, 1, 100, 128, 0, TypeQ8_0, true, TypeQ5_1},
		{TypeF32, 64, 64, 8, 2, 3, 45, 48, 0, 0, true, TypeF32},
		{TypeF32, 64, 64, 8, 2, 3, 45, 48, 0, 0, false, 0}, // (transposed, 4 heads per KV head)
		{TypeF16, 64, 64, 8, 2, 3, 45, 48, 0, 0, false, 0},
		{TypeF16, 32, 24, 40, 2, 3, 70, 70, 30, 0, true, TypeF16},
		{TypeF16, 16, 10, 6, 3, 2, 45, 48, 0, 0, true, TypeF16},
		{TypeF16, 20, 12, 6, 2, 5, 19, 19, 0, 0, true, TypeF16}, // (the scalar kernel: D not a multiple of 8)
		{TypeF32, 64, 64, 7, 7, 4, 20, 20, 0, 0, true, TypeQ8_0},
		{TypeF16, 64, 256, 4, 2, 3, 50, 64, 0, 0, true, TypeQ4_K}, // blocks of 256 values, decoded by pieces of 16
	} {
		kt := tc.typ
		if tc.kt != 0 {
			kt = tc.kt
		}
		vt, vrows := tc.typ, tc.vrows
		if vrows {
			vt = tc.vt
		}
		name := fmt.Sprintf("%s/k%s/v%s/d%d/h%d:%d/n%d/cap%g", tc.typ, kt, vt, tc.d, tc.h, tc.hk, tc.n, tc.softcap)
		if vrows {
			name += "/vrows"
		}
		t.Run(name, func(t *testing.T) {
			ctx := newCtx(t, Params{MemSize: 64 << 20})
			kw, vw := tc.d*tc.hk, tc.dv*tc.hk
			kcache := ctx.NewTensor1D(kt, kw*tc.cacheCell)
			vcache := ctx.NewTensor1D(vt, vw*tc.cacheCell)
			q := ctx.NewTensor3D(TypeF32, tc.d, tc.h, tc.n)
			mask := ctx.NewTensor2D(TypeF32, tc.cells, tc.n)
			fill := func(tt *Tensor, n int64, s float64) {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(rng.NormFloat64() * s)
				}
				require.NoError(t, tt.SetFloat32(x))
			}
			if kt == tc.typ {
				fill(kcache, kw*tc.cacheCell, 1)
			} else {
				x := make([]float32, kw*tc.cacheCell)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				b, err := Quantize(kt, x, int(tc.d))
				require.NoError(t, err)
				require.NoError(t, kcache.SetBytes(b))
			}
			if vt.IsQuantized() {
				x := make([]float32, vw*tc.cacheCell)
				for i := range x {
					x[i] = float32(rng.NormFloat64())
				}
				b, err := Quantize(vt, x, int(vw))
				require.NoError(t, err)
				require.NoError(t, vcache.SetBytes(b))
			} else {
				fill(vcache, vw*tc.cacheCell, 1)
			}
			fill(q, tc.d*tc.h*tc.n, 0.5)
			m := make([]float32, tc.cells*tc.n)
			hidden := int64(1) // this token sees nothing
			if tc.n == 1 {
				hidden = -1
			}
			for i := int64(0); i < tc.n; i++ {
				for j := int64(0); j < tc.cells; j++ {
					switch {
					case tc.n == 1 && tc.cells == 30 && (j == 2 || j == 3 || j >= 8):
						// cells 0, 1, 4..7: one block of 8 once padded (with the last cell), whose
						// first and last cells are 7 apart although they are not consecutive
						m[i*tc.cells+j] = float32(math.Inf(-1))
					case tc.n == 1:
					case i == hidden || rng.IntN(3) == 0:
						m[i*tc.cells+j] = float32(math.Inf(-1))
					case rng.IntN(4) == 0:
						m[i*tc.cells+j] = -0.5
					}
				}
			}
			require.NoError(t, mask.SetFloat32(m))
			es := tc.typ.RowSize(1)
			kc := ctx.View3D(kcache, tc.d, tc.cells, tc.hk, kt.RowSize(kw), kt.RowSize(tc.d), 0)
			var vc, vref *Tensor
			if vrows { // [dv, cells, hk]; the reference reads it transposed (decoded to F32 if quantized)
				vc = ctx.View3D(vcache, tc.dv, tc.cells, tc.hk, vt.RowSize(vw), vt.RowSize(tc.dv), 0)
				vref = vc
				if vt.IsQuantized() {
					vref = ctx.Cpy(vc, ctx.NewTensor3D(TypeF32, tc.dv, tc.cells, tc.hk))
				}
				vref = ctx.Cont(ctx.Transpose(vref))
			} else {
				vc = ctx.View3D(vcache, tc.cells, tc.dv, tc.hk, uint64(tc.cacheCell)*es, uint64(tc.cacheCell*tc.dv)*es, 0)
				vref = vc
			}
			scale := float32(1 / math.Sqrt(float64(tc.d)))

			var got *Tensor
			if vrows {
				got = ctx.AttnMaskedVRows(q, kc, vc, mask, scale, tc.softcap)
			} else {
				got = ctx.AttnMasked(q, kc, vc, mask, scale, tc.softcap)
			}
			kref := kc
			if kt != tc.typ { // the reference reads the keys decoded, as the node does
				kref = ctx.Cpy(kc, ctx.NewTensor3D(TypeF32, tc.d, tc.cells, tc.hk))
			}
			kq := ctx.MulMat(kref, ctx.Permute(q, 0, 2, 1, 3))
			if tc.softcap > 0 {
				kq = ctx.Scale(ctx.Tanh(ctx.Scale(kq, 1/tc.softcap)), tc.softcap)
			}
			kq = ctx.SoftMaxExt(kq, mask, scale)
			want := ctx.Cont(ctx.Permute(ctx.MulMat(vref, kq), 0, 2, 1, 3)) // [dv, h, n]
			g := ctx.NewGraph().BuildForwardExpand(got).BuildForwardExpand(want)
			// 7 threads: more threads than (token, KV head) pairs in most cases, so the query
			// heads of a KV head are split between threads
			for _, threads := range []int{2, 7} {
				poison := make([]float32, tc.dv*tc.h*tc.n) // an output left unwritten fails
				for i := range poison {
					poison[i] = float32(math.NaN())
				}
				require.NoError(t, got.SetFloat32(poison))
				require.NoError(t, ctx.Compute(g, threads))
				require.Equal(t, want.Ne(), got.Ne())
				a, err := got.Float32()
				require.NoError(t, err)
				b, err := want.Float32()
				require.NoError(t, err)
				row := tc.dv * tc.h
				// F16 caches round q and p to F16 on both sides, and the softmax's exp reads a
				// table at the F16 value of each shifted score (as SOFT_MAX does) for any cache:
				// a last-bit difference in a score (sums in another order) can move a
				// probability to the neighbouring F16 value, 2^-11 away. With F32 operands that
				// is rare (most data stay within 1e-5), so only some cases need the bound.
				tol := 1e-3
				worst := 0.0
				for i := range a {
					if int64(i)/row != hidden {
						worst = max(worst, math.Abs(float64(a[i]-b[i])))
					}
				}
				t.Logf("%d threads: largest difference %g", threads, worst)
				for i := range a {
					if int64(i)/row == hidden {
						require.Zero(t, a[i], "element %d of the token that sees nothing (%d threads)", i, threads)
						continue
					}
					require.InDelta(t, b[i], a[i], tol*(1+math.Abs(float64(b[i]))), "element %d (%d threads)", i, threads)
				}
			}
		})
	}
}

// TestAttnMaskedAtLowerLevels runs TestAttnMaskedMatchesMulMatSoftMax in child processes with
// GGML_X_CPU_LEVEL set to each lower kernel family of this architecture (the level is chosen once
// per process), so that every kernel of the node is checked on a machine that has the best one.
func TestAttnMaskedAtLowerLevels(t *testing.T) {
	if os.Getenv("GGML_X_CPU_LEVEL") != "" {
		t.Skip("GGML_X_CPU_LEVEL is set: this process runs one level already")
	}
	levels := []string{"scalar"}
	if runtime.GOARCH == "amd64" {
		levels = append(levels, "avx2")
	}
	for _, level := range levels {
		t.Run(level, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestAttnMaskedMatchesMulMatSoftMax$", "-test.count=1")
			cmd.Env = append(os.Environ(), "GGML_X_CPU_LEVEL="+level)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "at GGML_X_CPU_LEVEL=%s:\n%s", level, out)
		})
	}
}

func TestAttnMaskedRejectsBadOperands(t *testing.T) {
	leakCheck(t)
	ctx := newCtx(t, Params{MemSize: 1 << 20})
	q := ctx.NewTensor3D(TypeF32, 16, 6, 2)
	k := ctx.NewTensor3D(TypeF16, 16, 10, 4) // 6 heads are not a multiple of 4
	v := ctx.NewTensor3D(TypeF16, 10, 16, 4)
	mask := ctx.NewTensor2D(TypeF32, 10, 2)
	if e := panicError(func() { ctx.AttnMasked(q, k, v, mask, 0.25, 0) }); e == nil {
		t.Fatal("AttnMasked accepted 6 query heads over 4 KV heads")
	}
	k2 := ctx.NewTensor3D(TypeF16, 16, 10, 2)
	vq := ctx.NewTensor3D(TypeQ8_0, 32, 16, 2) // (transposed values cannot be quantized by cells)
	mask32 := ctx.NewTensor2D(TypeF32, 32, 2)
	k32 := ctx.NewTensor3D(TypeF16, 16, 32, 2)
	if e := panicError(func() { ctx.AttnMasked(q, k32, vq, mask32, 0.25, 0) }); e == nil {
		t.Fatal("AttnMasked accepted a quantized v")
	}
	small := ctx.NewTensor2D(TypeF32, 9, 2)
	v2 := ctx.NewTensor3D(TypeF16, 10, 16, 2)
	if e := panicError(func() { ctx.AttnMasked(q, k2, v2, small, 0.25, 0) }); e == nil {
		t.Fatal("AttnMasked accepted a mask narrower than the cells")
	}
}
