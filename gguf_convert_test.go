//go:build cgo

package ggml

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/gguf"
)

// testLevels are the iq4_nl / iq4_xs levels, written out again for the test's own decoder.
var testLevels = [16]float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// randomIQ4NL returns n/32 random iq4_nl blocks and their values.
func randomIQ4NL(r *rand.Rand, n int) ([]byte, []float32) {
	var b []byte
	vals := make([]float32, n)
	for o := 0; o < n; o += 32 {
		d := NewFloat16(float32(r.NormFloat64() * 0.01))
		b = binary.LittleEndian.AppendUint16(b, uint16(d))
		for j := 0; j < 16; j++ {
			q := byte(r.IntN(256))
			b = append(b, q)
			vals[o+j] = d.Float32() * testLevels[q&15]
			vals[o+j+16] = d.Float32() * testLevels[q>>4]
		}
	}
	return b, vals
}

// randomIQ4XS returns n/256 random iq4_xs blocks and their exact values (float64 products).
func randomIQ4XS(r *rand.Rand, n int) ([]byte, []float64) {
	var b []byte
	vals := make([]float64, n)
	for o := 0; o < n; o += 256 {
		d := NewFloat16(float32(r.NormFloat64() * 0.001))
		sh := uint16(r.IntN(1 << 16))
		sl := []byte{byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256)), byte(r.IntN(256))}
		b = binary.LittleEndian.AppendUint16(b, uint16(d))
		b = binary.LittleEndian.AppendUint16(b, sh)
		b = append(b, sl...)
		for ib := 0; ib < 8; ib++ {
			var lo int
			if ib%2 == 0 {
				lo = int(sl[ib/2] & 15)
			} else {
				lo = int(sl[ib/2] >> 4)
			}
			scale := lo + int(sh>>(2*ib)&3)*16 - 32
			for j := 0; j < 16; j++ {
				q := byte(r.IntN(256))
				b = append(b, q)
				base := float64(d.Float32()) * float64(scale)
				vals[o+32*ib+j] = base * float64(testLevels[q&15])
				vals[o+32*ib+j+16] = base * float64(testLevels[q>>4])
			}
		}
	}
	return b, vals
}

func TestGGUFLoadType(t *testing.T) {
	for _, c := range []struct {
		tt   gguf.TensorType
		want Type
		ok   bool
	}{
		{gguf.TypeF32, TypeF32, true}, {gguf.TypeQ6_K, TypeQ6_K, true}, {gguf.TypeI32, TypeI32, true},
		{gguf.TypeBF16, TypeF32, true}, {gguf.TypeIQ4_NL, TypeQ8_0, true}, {gguf.TypeIQ4_XS, TypeQ8_0, true},
		{gguf.TypeIQ3_XXS, 0, false}, {gguf.TypeTQ1_0, 0, false}, {gguf.TypeF64, 0, false}, {gguf.TensorType(4), 0, false},
	} {
		got, ok := GGUFLoadType(c.tt)
		assert.Equal(t, c.ok, ok, c.tt.String())
		if ok {
			assert.Equal(t, c.want, got, c.tt.String())
		}
	}
}

// LoadGGUFTensors converts bf16, iq4_nl and iq4_xs while it reads them: mapped or not, in
// pieces larger than one read, and as parts of a joined matrix.
func TestLoadGGUFTensorsConverts(t *testing.T) {
	start := LiveObjects()
	r := rand.New(rand.NewPCG(3, 4))
	// bf16: 3 Mi elements (6 MiB, more than one 4 MiB read), with the special values
	nbf := 3 << 20
	bf := make([]byte, 2*nbf)
	bfVals := make([]float32, nbf)
	for i := range nbf {
		h := uint16(r.IntN(1 << 16))
		switch i {
		case 0:
			h = 0x7f80 // +Inf
		case 1:
			h = 0x8000 // -0
		case 2:
			h = 0x0001 // the smallest subnormal
		}
		binary.LittleEndian.PutUint16(bf[2*i:], h)
		bfVals[i] = math.Float32frombits(uint32(h) << 16)
	}
	nl, nlVals := randomIQ4NL(r, 64*96)
	nl2, nl2Vals := randomIQ4NL(r, 64*32)
	// iq4_xs: 31000 super-blocks (4.2 MB: two reads, the first not a whole 4 MiB)
	nxs := 31000 * 256
	xs, xsVals := randomIQ4XS(r, nxs)

	var b gguf.Builder
	require.NoError(t, b.AddTensor("bf", gguf.TypeBF16, []int64{1024, int64(nbf / 1024)}, bf))
	require.NoError(t, b.AddTensor("nl", gguf.TypeIQ4_NL, []int64{64, 96}, nl))
	require.NoError(t, b.AddTensor("nl2", gguf.TypeIQ4_NL, []int64{64, 32}, nl2))
	require.NoError(t, b.AddTensor("xs", gguf.TypeIQ4_XS, []int64{2048, int64(nxs / 2048)}, xs))
	require.NoError(t, b.AddTensor("plain", gguf.TypeF32, []int64{4}, Float32Bytes([]float32{1, 2, 3, 4})))
	path := filepath.Join(t.TempDir(), "later-types.gguf")
	require.NoError(t, b.WriteFile(path))
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()

	// values returns the dequantized values of a q8_0 tensor
	values := func(t *testing.T, x *Tensor) []float32 {
		t.Helper()
		b, err := x.Bytes()
		require.NoError(t, err)
		v, err := Dequantize(TypeQ8_0, b, int(x.NumElements()))
		require.NoError(t, err)
		return v
	}
	check := func(t *testing.T, g *GGUFTensors) {
		t.Helper()
		assert.False(t, g.Mapped(), "converted tensors are read, not mapped")
		bt := g.Tensor("bf")
		require.Equal(t, TypeF32, bt.Type())
		got, err := bt.Float32()
		require.NoError(t, err)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(bfVals[i]) {
				t.Fatalf("bf16 element %d: %v, want %v", i, got[i], bfVals[i])
			}
		}
		nt := g.Tensor("nl")
		require.Equal(t, TypeQ8_0, nt.Type())
		assert.Equal(t, nlVals, values(t, nt), "iq4_nl converts exactly")
		xt := g.Tensor("xs")
		require.Equal(t, TypeQ8_0, xt.Type())
		got = values(t, xt)
		worst := 0.0
		for i, v := range xsVals {
			// one f16 rounding of the sub-block scale: |error| <= 2^-11 |value|
			if e := math.Abs(float64(got[i])-v) / max(math.Abs(v), 1e-30); e > worst {
				worst = e
			}
		}
		assert.LessOrEqual(t, worst, 1.0/2048)
		pt := g.Tensor("plain")
		got, err = pt.Float32()
		require.NoError(t, err)
		assert.Equal(t, []float32{1, 2, 3, 4}, got)
	}
	t.Run("default (mapping) falls back to reading", func(t *testing.T) {
		g, err := LoadGGUFTensors(path, f, GGUFLoadOptions{})
		require.NoError(t, err)
		defer g.Close()
		check(t, g)
	})
	t.Run("NoMmap", func(t *testing.T) {
		g, err := LoadGGUFTensors(path, f, GGUFLoadOptions{NoMmap: true})
		require.NoError(t, err)
		defer g.Close()
		check(t, g)
	})
	t.Run("joined", func(t *testing.T) {
		g, err := LoadGGUFTensors(path, f, GGUFLoadOptions{
			NoMmap: true,
			Select: func(ti gguf.TensorInfo) bool { return ti.Name == "plain" },
			Concat: []GGUFConcat{{Name: "nl+nl2", Parts: []string{"nl", "nl2"}}},
		})
		require.NoError(t, err)
		defer g.Close()
		jt := g.Tensor("nl+nl2")
		require.Equal(t, TypeQ8_0, jt.Type())
		assert.Equal(t, []int64{64, 128}, jt.Shape())
		assert.Equal(t, append(append([]float32{}, nlVals...), nl2Vals...), values(t, jt))
	})
	assert.Equal(t, start, LiveObjects())
}
