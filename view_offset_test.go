//go:build cgo

package ggml_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
)

// A graph built once writes into a different row of a long-lived tensor on each compute when
// its view nodes are moved with SetViewOffset.
func TestSetViewOffset(t *testing.T) {
	defer liveAfter(t)()
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20})
	require.NoError(t, err)
	defer ctx.Close()
	cache := ctx.NewTensor2D(ggml.TypeF32, 4, 3) // 3 rows of 4
	require.NoError(t, cache.SetZero())
	x := ctx.NewTensor1D(ggml.TypeF32, 4)
	view := ctx.View1D(cache, 4, 0)
	cp := ctx.Cpy(ctx.Scale(x, 2), view)
	g := ctx.NewGraph().BuildForwardExpand(cp)
	for row := 0; row < 3; row++ {
		off := uint64(row) * cache.Nb()[1]
		require.NoError(t, view.SetViewOffset(off))
		require.NoError(t, cp.SetViewOffset(off), "the Cpy result is a view of the cache too")
		assert.Equal(t, off, cp.ViewOffset())
		require.NoError(t, x.SetFloat32([]float32{float32(row), 1, 2, 3}))
		require.NoError(t, ctx.Compute(g, 1))
	}
	got, err := cache.Float32()
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 2, 4, 6, 2, 2, 4, 6, 4, 2, 4, 6}, got)

	assert.ErrorContains(t, view.SetViewOffset(2*cache.Nb()[1]+4), "reaches past")
	assert.ErrorContains(t, x.SetViewOffset(0), "not a view")
}
