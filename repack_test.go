//go:build cgo

package ggml

import (
	"math"
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The CPU_REPACK buffer type through the public API: set/get round trips at odd offsets, and
// MUL_MAT (1, 3 and 11 columns) through a scheduler with the weights repacked, against the same
// weights in the CPU buffer; GET_ROWS of a repacked tensor fails with an error.
func TestCPURepackBufferType(t *testing.T) {
	leakCheck(t)
	bt := CPURepackBufferType()
	assert.Equal(t, "CPU_REPACK", bt.Name())
	assert.False(t, bt.IsHost())
	i := BackendIndex("CPU_REPACK")
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, "CPU_REPACK", RegistryBufferType(i).Name())

	be, err := NewCPU(WithThreads(2))
	require.NoError(t, err)
	defer be.Close()
	assert.True(t, bt.SupportsBackend(be))

	const m = 21 // 2 groups of 8 rows + 5 plain rows
	rng := rand.New(rand.NewSource(1))
	for _, tc := range []struct {
		typ Type
		k   int64
	}{{TypeQ4_0, 96}, {TypeQ8_0, 96}, {TypeQ4_K, 512}, {TypeQ6_K, 512}} {
		typ, k := tc.typ, tc.k
		wf := make([]float32, int(k)*m)
		for i := range wf {
			wf[i] = rng.Float32()*2 - 1
		}
		wq, err := Quantize(typ, wf, int(k))
		require.NoError(t, err)

		wctx := newCtx(t, Params{NoAlloc: true})
		wr := wctx.NewTensor2D(typ, k, m)
		rbuf, err := AllocContextTensorsFromBufferType(wctx, bt)
		require.NoError(t, err)
		defer rbuf.Close()
		pctx := newCtx(t, Params{NoAlloc: true})
		wp := pctx.NewTensor2D(typ, k, m)
		pbuf, err := AllocContextTensors(pctx, be)
		require.NoError(t, err)
		defer pbuf.Close()

		// set in odd pieces, read back whole and in pieces
		for off := 0; off < len(wq); {
			n := min(1+rng.Intn(53), len(wq)-off)
			_, err := wr.WriteAt(wq[off:off+n], int64(off))
			require.NoError(t, err)
			off += n
		}
		got, err := wr.Bytes()
		require.NoError(t, err)
		assert.Equal(t, wq, got)
		part := make([]byte, 37)
		_, err = wr.ReadAt(part, 101)
		require.NoError(t, err)
		assert.Equal(t, wq[101:138], part)
		_, err = wp.WriteAt(wq, 0)
		require.NoError(t, err)

		for _, n := range []int{1, 3, 11} {
			xctx := newCtx(t, Params{NoAlloc: true})
			x := xctx.NewTensor2D(TypeF32, k, int64(n))
			xbuf, err := AllocContextTensors(xctx, be)
			require.NoError(t, err)
			gctx := newCtx(t, Params{NoAlloc: true})
			yr := gctx.MulMat(wr, x)
			yp := gctx.MulMat(wp, x)
			g := gctx.NewGraph().BuildForwardExpand(yr).BuildForwardExpand(yp)
			s, err := NewScheduler([]*Backend{be}, nil, 0)
			require.NoError(t, err)
			xv := make([]float32, int(k)*n)
			for i := range xv {
				xv[i] = rng.Float32()*2 - 1
			}
			require.NoError(t, x.SetFloat32(xv))
			require.NoError(t, s.Compute(g))
			a, err := yr.Float32()
			require.NoError(t, err)
			b, err := yp.Float32()
			require.NoError(t, err)
			require.Len(t, a, m*n)
			for i := range a {
				assert.LessOrEqual(t, math.Abs(float64(a[i]-b[i])), 1e-4*(1+math.Abs(float64(b[i]))), "%v n=%d element %d", typ, n, i)
			}
			require.NoError(t, s.Close())
			require.NoError(t, xbuf.Close())
		}

		// GET_ROWS cannot read the layout: the compute fails with an error
		gctx := newCtx(t, Params{NoAlloc: true})
		ids := gctx.NewTensor1D(TypeI32, 2)
		r := gctx.GetRows(wr, ids)
		g := gctx.NewGraph().BuildForwardExpand(r)
		gbuf, err := AllocContextTensors(gctx, be)
		require.NoError(t, err)
		require.NoError(t, ids.SetInt32([]int32{0, 9}))
		err = be.Compute(g)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "CPU_REPACK")
		require.NoError(t, gbuf.Close())
	}
}

// CPURepackHasKernel: the repacked types have SIMD kernels on an x86-64 CPU with AVX2 (and on
// others only the scalar ones); other types are never repacked.
func TestCPURepackHasKernel(t *testing.T) {
	f := CPUFeatures()
	if os.Getenv("GGML_X_CPU_LEVEL") == "" { // (a level chosen there may be the scalar one)
		for _, typ := range []Type{TypeQ4_0, TypeQ8_0, TypeQ4_K, TypeQ6_K} {
			assert.Equal(t, f.AVX2 && f.FMA && f.F16C, CPURepackHasKernel(typ), "%v", typ)
		}
	}
	for _, typ := range []Type{TypeF32, TypeF16, TypeQ5_K, TypeQ4_1, Type(-1), Type(1000)} {
		assert.False(t, CPURepackHasKernel(typ), "%v", typ)
	}
}
