//go:build cgo

package ggml_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// Every id of either enum maps to the same id of the other, and the two packages agree on the
// storage of every type.
func TestGGUFTypeMapping(t *testing.T) {
	known := 0
	for id := int32(-1); id <= int32(ggml.TypeCount)+2; id++ {
		gt, okG := ggml.GGUFType(ggml.Type(id))
		tt, okT := ggml.TypeFromGGUF(gguf.TensorType(uint32(id)))
		if id < 0 {
			assert.False(t, okG)
			continue
		}
		assert.Equal(t, okG, okT, "id %d: both directions agree on validity", id)
		if !okG {
			// not a type of this library: unknown to gguf too, or one that ggml added later
			assert.True(t, !gguf.TensorType(id).Valid() || id >= int32(ggml.TypeCount), "id %d", id)
			continue
		}
		known++
		assert.Equal(t, uint32(id), uint32(gt))
		assert.Equal(t, id, int32(tt))
		// same storage layout in both packages (ggml's comes from the C library)
		if ggml.Type(id).Valid() {
			assert.Equal(t, int64(ggml.Type(id).BlockSize()), gt.BlockSize(), "block size of %s", gt)
			assert.Equal(t, int64(ggml.Type(id).Size()), gt.TypeSize(), "block bytes of %s", gt)
			assert.Equal(t, int64(ggml.Type(id).RowSize(256)), gt.RowSize(256), "row size of %s", gt)
		}
	}
	assert.Equal(t, 19, known, "every type of the library (0..20 less the retired 4 and 5)")
	_, ok := ggml.TypeFromGGUF(gguf.TensorType(4))
	assert.False(t, ok, "retired id 4")
}

func TestFloat32BytesRoundTrip(t *testing.T) {
	v := []float32{0, -1.5, float32(math.Inf(1)), 3.25e-20, math.MaxFloat32}
	b := ggml.Float32Bytes(v)
	require.Len(t, b, 20)
	assert.Equal(t, []byte{0, 0, 0xc0, 0xbf}, b[4:8], "little endian -1.5")
	got, err := ggml.BytesFloat32(b)
	require.NoError(t, err)
	assert.Equal(t, v, got)
	_, err = ggml.BytesFloat32(b[:7])
	assert.ErrorContains(t, err, "not a whole number")
	h := ggml.Float16Bytes([]ggml.Float16{ggml.NewFloat16(1)})
	assert.Equal(t, []byte{0x00, 0x3c}, h)
}
