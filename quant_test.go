//go:build cgo

package ggml

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTypeInfo(t *testing.T) {
	tests := []struct {
		typ       Type
		size      uint64
		block     int
		quantized bool
	}{
		{TypeF32, 4, 1, false},
		{TypeF16, 2, 1, false},
		{TypeQ4_0, 18, 32, true},
		{TypeQ8_0, 34, 32, true},
		{TypeQ4_K, 144, 256, true},
		{TypeQ6_K, 210, 256, true},
		{TypeI8, 1, 1, false},
		{TypeI16, 2, 1, false},
		{TypeI32, 4, 1, false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.size, tc.typ.Size(), "%v", tc.typ)
		assert.Equal(t, tc.block, tc.typ.BlockSize(), "%v", tc.typ)
		assert.Equal(t, tc.quantized, tc.typ.IsQuantized(), "%v", tc.typ)
		assert.True(t, tc.typ.Valid())
		tr := tc.typ.Traits()
		assert.Equal(t, tc.typ.String(), tr.Name)
		assert.Equal(t, tc.block, tr.BlockSize)
	}
	assert.Equal(t, uint64(2*18), TypeQ4_0.RowSize(64))
	assert.Equal(t, uint64(0), TypeQ4_0.RowSize(33))
	for _, bad := range []Type{-1, 4, 5, TypeCount, 100} {
		assert.False(t, bad.Valid())
		assert.Zero(t, bad.Size())
		assert.Zero(t, bad.BlockSize())
		assert.Zero(t, bad.RowSize(32))
		assert.Equal(t, TypeTraits{}, bad.Traits())
	}
	assert.Equal(t, "MUL_MAT", OpMulMat.String())
	assert.Equal(t, "Op(-1)", Op(-1).String())
	assert.Equal(t, "NONE", OpNone.String())
	assert.Equal(t, "CROSS_ENTROPY_LOSS_BACK", OpCrossEntropyLossBack.String())
	assert.Equal(t, "GELU", UnaryGelu.String())
	assert.Equal(t, "UnaryOp(99)", UnaryOp(99).String())
	assert.NotEmpty(t, OpAdd.Symbol())
	assert.Equal(t, "max", PoolMax.String())
	assert.Equal(t, "desc", SortDesc.String())
	assert.Equal(t, "f32", PrecF32.String())
}

func TestQuantizeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	src := make([]float32, 4*256)
	for i := range src {
		src[i] = float32(rng.NormFloat64())
	}
	// quality bound per type: RMS error relative to the RMS of the input
	bounds := map[Type]float64{
		TypeF32: 0, TypeF16: 1e-3, TypeQ8_0: 0.01, TypeQ5_0: 0.05, TypeQ5_1: 0.05, TypeQ4_0: 0.12, TypeQ4_1: 0.12,
		TypeQ6_K: 0.03, TypeQ5_K: 0.05, TypeQ4_K: 0.1, TypeQ3_K: 0.2, TypeQ2_K: 0.4,
	}
	for typ, bound := range bounds {
		q, err := Quantize(typ, src, 256)
		require.NoError(t, err, "%v", typ)
		require.Equal(t, 4*typ.RowSize(256), uint64(len(q)), "%v", typ)
		back, err := Dequantize(typ, q, len(src))
		require.NoError(t, err, "%v", typ)
		var se, ss float64
		for i := range src {
			d := float64(back[i] - src[i])
			se += d * d
			ss += float64(src[i]) * float64(src[i])
		}
		assert.LessOrEqual(t, math.Sqrt(se/ss), bound, "%v", typ)
	}
	// errors
	_, err := Quantize(TypeQ4_0, src[:100], 50)
	assert.Error(t, err)
	_, err = Quantize(TypeQ4_0, src[:100], 64)
	assert.Error(t, err)
	_, err = Quantize(TypeI32, src, 256)
	assert.Error(t, err)
	_, err = Quantize(Type(77), src, 256)
	assert.Error(t, err)
	_, err = Dequantize(TypeQ4_0, make([]byte, 17), 32)
	assert.Error(t, err)
	_, err = Dequantize(TypeQ4_0, make([]byte, 18), 31)
	assert.Error(t, err)
	_, err = Dequantize(TypeI32, make([]byte, 16), 4)
	assert.Error(t, err)
	q, err := Quantize(TypeQ8_0, nil, 32)
	require.NoError(t, err)
	assert.Empty(t, q)
}

func TestCPUFeatures(t *testing.T) {
	f := CPUFeatures()
	if f.AVX2 {
		assert.True(t, f.AVX)
	}
	assert.False(t, f.Metal)
	assert.Greater(t, TimeMicros(), int64(0))
	assert.GreaterOrEqual(t, ThreadsCreated(), int64(0))
}
