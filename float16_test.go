//go:build cgo

package ggml

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFloat16AllBits compares the Go conversion with the C library for every bit pattern.
func TestFloat16AllBits(t *testing.T) {
	for b := 0; b < 1<<16; b++ {
		h := Float16FromBits(uint16(b))
		got, want := h.Float32(), FP16ToFP32(h)
		if math.IsNaN(float64(want)) {
			require.True(t, math.IsNaN(float64(got)), "bits %#04x", b)
			continue
		}
		require.Equal(t, math.Float32bits(want), math.Float32bits(got), "bits %#04x", b)
		// exact round trip for non-NaN values
		require.Equal(t, h, NewFloat16(got), "bits %#04x", b)
	}
}

// TestFloat16FromFloat32 compares rounding with the C library on random and special values.
func TestFloat16FromFloat32(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	vals := []float32{0, -0.0, 1, -1, 0.5, 65504, 65519.99, 65520, 1e9, -1e9, 5.96e-8, 2.98e-8, 2.99e-8, 1e-10,
		6.1035e-5, 6.1e-5, float32(math.Inf(1)), float32(math.Inf(-1)), math.SmallestNonzeroFloat32}
	for i := 0; i < 200000; i++ {
		vals = append(vals, math.Float32frombits(rng.Uint32()))
	}
	for _, v := range vals {
		got, want := NewFloat16(v), FP32ToFP16(v)
		if math.IsNaN(float64(v)) {
			assert.True(t, math.IsNaN(float64(got.Float32())), "%g", v)
			continue
		}
		require.Equal(t, want, got, "value %g (bits %#08x)", v, math.Float32bits(v))
	}
}

func TestFloat16Rows(t *testing.T) {
	v := []float32{0, 1.5, -2.25, 1e-3, 3e4}
	h := FP32ToFP16Row(v)
	assert.Equal(t, Float16Slice(v), h)
	assert.Equal(t, Float32Slice(h), FP16ToFP32Row(h))
	assert.Equal(t, "1.5", NewFloat16(1.5).String())
	assert.Equal(t, uint16(0x3c00), NewFloat16(1).Bits())
}
