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

// packTrits returns the tq1_0 byte of up to five base-3 digits (most significant first, a
// byte of four is padded with a zero digit at the end): ceil(v * 256 / 243) of their value v.
func packTrits(digits ...int) byte {
	v := 0
	for _, d := range digits {
		v = 3*v + d
	}
	for range 5 - len(digits) {
		v *= 3
	}
	return byte((v*256 + 242) / 243)
}

// randomTernary returns n/256 random tq1_0 and tq2_0 super-blocks and their values.
func randomTernary(r *rand.Rand, n int) (tq1, tq2 []byte, vals1, vals2 []float32) {
	vals1, vals2 = make([]float32, n), make([]float32, n)
	for o := 0; o < n; o += 256 {
		d := NewFloat16(float32(r.NormFloat64()))
		t := make([]int, 256)
		for i := range t {
			t[i] = r.IntN(3)
			vals1[o+i] = float32(t[i]-1) * d.Float32()
		}
		for m := 0; m < 32; m++ {
			tq1 = append(tq1, packTrits(t[m], t[m+32], t[m+64], t[m+96], t[m+128]))
		}
		for m := 0; m < 16; m++ {
			tq1 = append(tq1, packTrits(t[160+m], t[176+m], t[192+m], t[208+m], t[224+m]))
		}
		for j := 0; j < 4; j++ {
			tq1 = append(tq1, packTrits(t[240+j], t[244+j], t[248+j], t[252+j]))
		}
		tq1 = binary.LittleEndian.AppendUint16(tq1, uint16(d))
		c := make([]int, 256) // 2-bit codes 0..3 (3 is +2)
		for i := range c {
			c[i] = r.IntN(4)
			vals2[o+i] = float32(c[i]-1) * d.Float32()
		}
		for h := 0; h < 2; h++ {
			for m := 0; m < 32; m++ {
				e := 128*h + m
				tq2 = append(tq2, byte(c[e]|c[e+32]<<2|c[e+64]<<4|c[e+96]<<6))
			}
		}
		tq2 = binary.LittleEndian.AppendUint16(tq2, uint16(d))
	}
	return tq1, tq2, vals1, vals2
}

func TestGGUFLoadType(t *testing.T) {
	for _, c := range []struct {
		tt   gguf.TensorType
		want Type
		ok   bool
	}{
		{gguf.TypeF32, TypeF32, true}, {gguf.TypeQ6_K, TypeQ6_K, true}, {gguf.TypeI32, TypeI32, true},
		{gguf.TypeBF16, TypeF32, true}, {gguf.TypeIQ4_NL, TypeQ8_0, true}, {gguf.TypeIQ4_XS, TypeQ8_0, true},
		{gguf.TypeTQ1_0, TypeQ8_0, true}, {gguf.TypeTQ2_0, TypeQ8_0, true}, {gguf.TypeIQ3_XXS, 0, false}, {gguf.TypeF64, 0, false}, {gguf.TensorType(4), 0, false},
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

	tq1, tq2, tq1Vals, tq2Vals := randomTernary(r, 256*40)

	var b gguf.Builder
	require.NoError(t, b.AddTensor("tq1", gguf.TypeTQ1_0, []int64{512, 20}, tq1))
	require.NoError(t, b.AddTensor("tq2", gguf.TypeTQ2_0, []int64{512, 20}, tq2))
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
		assert.Equal(t, tq1Vals, values(t, g.Tensor("tq1")), "tq1_0 converts exactly")
		assert.Equal(t, tq2Vals, values(t, g.Tensor("tq2")), "tq2_0 converts exactly")
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
