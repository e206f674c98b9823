//go:build cgo

package llama

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// The test's own encoders of the types ggml added after this library's version (bf16, iq4_nl,
// iq4_xs) and their exact values, independent of the loader's conversions.

var testIQ4Levels = [16]float64{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// nearestLevel returns the index of the level nearest to v.
func nearestLevel(v float64) byte {
	best := 0
	for i, l := range testIQ4Levels {
		if math.Abs(v-l) < math.Abs(v-testIQ4Levels[best]) {
			best = i
		}
	}
	return byte(best)
}

// iq4Indices encodes 32 values under scale dl: 16 bytes, element j in the low nibble of byte
// j, element j+16 in its high nibble; vals receives the exact values.
func iq4Indices(x []float32, dl float64, vals []float64) []byte {
	qs := make([]byte, 16)
	idx := make([]byte, 32)
	for i := range idx {
		idx[i] = 8 // level 1 (times a zero scale)
		if dl != 0 {
			idx[i] = nearestLevel(float64(x[i]) / dl)
		}
		vals[i] = dl * testIQ4Levels[idx[i]]
	}
	for j := 0; j < 16; j++ {
		qs[j] = idx[j] | idx[j+16]<<4
	}
	return qs
}

func amax(x []float32) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(float64(v)))
	}
	return m
}

// encodeIQ4NL returns the iq4_nl bytes of x, the q8_0 blocks with the same values, and the values.
func encodeIQ4NL(x []float32) (iq, q8 []byte, vals []float64) {
	vals = make([]float64, len(x))
	for b := 0; b < len(x); b += 32 {
		d := ggml.NewFloat16(float32(amax(x[b:b+32]) / 127))
		qs := iq4Indices(x[b:b+32], float64(d.Float32()), vals[b:b+32])
		iq = binary.LittleEndian.AppendUint16(iq, uint16(d))
		iq = append(iq, qs...)
		q8 = binary.LittleEndian.AppendUint16(q8, uint16(d))
		for i := 0; i < 32; i++ {
			q8 = append(q8, byte(int8(vals[b+i]/float64(d.Float32()))))
		}
	}
	return iq, q8, vals
}

// encodeIQ4XS returns the iq4_xs bytes of x (odd sub-blocks with negative scales), the q8_0
// blocks whose scales are those of the sub-blocks rounded to f16, and the exact values.
func encodeIQ4XS(x []float32) (iq, q8 []byte, vals []float64) {
	vals = make([]float64, len(x))
	for b := 0; b < len(x); b += 256 {
		d := ggml.NewFloat16(float32(amax(x[b:b+256]) / (127 * 31)))
		df := float64(d.Float32())
		var sh uint16
		sl := make([]byte, 4)
		var qs []byte
		var subs []byte
		for ib := 0; ib < 8; ib++ {
			sub := x[b+32*ib : b+32*ib+32]
			s := 0
			if df != 0 {
				s = min(31, int(math.Round(amax(sub)/(127*df))))
			}
			if ib%2 == 1 {
				s = -s
			}
			ls := s + 32
			sl[ib/2] |= byte(ls&15) << (4 * (ib % 2))
			sh |= uint16(ls>>4) << (2 * ib)
			dl := df * float64(s)
			q := iq4Indices(sub, dl, vals[b+32*ib:b+32*ib+32])
			qs = append(qs, q...)
			d8 := ggml.NewFloat16(float32(dl))
			subs = binary.LittleEndian.AppendUint16(subs, uint16(d8))
			for j := 0; j < 32; j++ {
				l := 0.0
				if dl != 0 {
					l = vals[b+32*ib+j] / dl
				}
				subs = append(subs, byte(int8(math.Round(l))))
			}
		}
		iq = binary.LittleEndian.AppendUint16(iq, uint16(d))
		iq = binary.LittleEndian.AppendUint16(iq, sh)
		iq = append(iq, sl...)
		iq = append(iq, qs...)
		q8 = append(q8, subs...)
	}
	return iq, q8, vals
}

// encodeTernary returns the tq1_0 or tq2_0 bytes of x (each value rounded to -d, 0 or +d, d the
// largest magnitude of its 256), the q8_0 blocks with the same values, and the values.
func encodeTernary(tq2 bool) func(x []float32) (tq, q8 []byte, vals []float64) {
	return func(x []float32) (tq, q8 []byte, vals []float64) {
		vals = make([]float64, len(x))
		for b := 0; b < len(x); b += 256 {
			d := ggml.NewFloat16(float32(amax(x[b : b+256])))
			df := float64(d.Float32())
			t := make([]int, 256) // 0, 1, 2 for -1, 0, +1
			for i := range t {
				t[i] = 1
				if df != 0 {
					t[i] = max(0, min(2, int(math.Round(float64(x[b+i])/df))+1))
				}
				vals[b+i] = float64(t[i]-1) * df
			}
			if tq2 {
				for h := 0; h < 2; h++ {
					for m := 0; m < 32; m++ {
						e := 128*h + m
						tq = append(tq, byte(t[e]|t[e+32]<<2|t[e+64]<<4|t[e+96]<<6))
					}
				}
			} else {
				pack := func(digits ...int) byte {
					v := 0
					for _, dg := range digits {
						v = 3*v + dg
					}
					for range 5 - len(digits) {
						v *= 3
					}
					return byte((v*256 + 242) / 243)
				}
				for m := 0; m < 32; m++ {
					tq = append(tq, pack(t[m], t[m+32], t[m+64], t[m+96], t[m+128]))
				}
				for m := 0; m < 16; m++ {
					tq = append(tq, pack(t[160+m], t[176+m], t[192+m], t[208+m], t[224+m]))
				}
				for j := 0; j < 4; j++ {
					tq = append(tq, pack(t[240+j], t[244+j], t[248+j], t[252+j]))
				}
			}
			tq = binary.LittleEndian.AppendUint16(tq, uint16(d))
			for ib := 0; ib < 8; ib++ {
				q8 = binary.LittleEndian.AppendUint16(q8, uint16(d))
				for j := 0; j < 32; j++ {
					q8 = append(q8, byte(int8(t[32*ib+j]-1)))
				}
			}
		}
		return tq, q8, vals
	}
}

// bf16Of rounds x to bf16 (nearest, ties to even); vals receives the values.
func bf16Of(x []float32) (bf []byte, vals []float64) {
	vals = make([]float64, len(x))
	for i, v := range x {
		u := math.Float32bits(v)
		u += 0x7fff + (u>>16)&1
		h := uint16(u >> 16)
		bf = binary.LittleEndian.AppendUint16(bf, h)
		vals[i] = float64(math.Float32frombits(uint32(h) << 16))
	}
	return bf, vals
}

func f32Bytes(vals []float64) []byte {
	v := make([]float32, len(vals))
	for i, x := range vals {
		v[i] = float32(x)
	}
	return ggml.Float32Bytes(v)
}

// lastLogits loads path and returns the last row's logits of a fixed prompt.
func lastLogits(t *testing.T, path string, o Options) []float32 {
	t.Helper()
	m, err := Load(path, o)
	require.NoError(t, err)
	defer m.Close()
	c, err := m.NewContext(ContextOptions{NCtx: 64})
	require.NoError(t, err)
	defer c.Close()
	toks := make([]int32, 19)
	for i := range toks {
		toks[i] = int32(3 + (i*37)%290)
	}
	out, err := c.Eval(toks, false)
	require.NoError(t, err)
	return out
}

func float64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// A model whose matrices are bf16, iq4_nl, iq4_xs, tq1_0 or tq2_0 computes what its twin computes: the same
// values as f32 (bf16: identical logits), as q8_0 blocks (the others: identical logits,
// the loader's conversion), and, against the exact values in f32, within q8_0 activation
// rounding.
func TestConvertedTypesMatchTheirTwins(t *testing.T) {
	leakCheck(t)
	// rows of 256 so that iq4_xs fits every matrix
	kvs, ts, err := randomModel(RandomConfig{NEmbd: 256, NFF: 512, NHead: 4, NLayer: 2, Seed: 11})
	require.NoError(t, err)
	dir := t.TempDir()
	for _, c := range []struct {
		name  string
		typ   gguf.TensorType
		norms bool // the 1-D tensors too (bf16)
		twin  gguf.TensorType
		enc   func([]float32) ([]byte, []byte, []float64)
	}{
		{"bf16", gguf.TypeBF16, true, gguf.TypeF32, func(x []float32) ([]byte, []byte, []float64) {
			b, v := bf16Of(x)
			return b, f32Bytes(v), v
		}},
		{"iq4_nl", gguf.TypeIQ4_NL, false, gguf.TypeQ8_0, encodeIQ4NL},
		{"iq4_xs", gguf.TypeIQ4_XS, false, gguf.TypeQ8_0, encodeIQ4XS},
		{"tq1_0", gguf.TypeTQ1_0, false, gguf.TypeQ8_0, encodeTernary(false)},
		{"tq2_0", gguf.TypeTQ2_0, false, gguf.TypeQ8_0, encodeTernary(true)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var conv, twin, exact []randomTensor
			for _, rt := range ts {
				if len(rt.shape) < 2 && !c.norms {
					conv, twin, exact = append(conv, rt), append(twin, rt), append(exact, rt)
					continue
				}
				x, err := ggml.BytesFloat32(rt.data)
				require.NoError(t, err)
				a, b, vals := c.enc(x)
				ct, tt := rt, rt
				ct.typ, ct.data = c.typ, a
				tt.typ, tt.data = c.twin, b
				et := rt
				et.data = f32Bytes(vals)
				conv, twin, exact = append(conv, ct), append(twin, tt), append(exact, et)
			}
			paths := map[string][]randomTensor{"conv": conv, "twin": twin, "exact": exact}
			for name, tensors := range paths {
				require.NoError(t, writeModel(filepath.Join(dir, c.name+"-"+name+".gguf"), kvs, tensors))
			}
			f, err := gguf.Open(filepath.Join(dir, c.name+"-conv.gguf"))
			require.NoError(t, err)
			ti, _ := f.Tensor("blk.0.attn_q.weight")
			assert.Equal(t, c.typ, ti.Type, "the file's type as read")
			f.Close()
			for _, o := range []Options{{Threads: 2}, {Threads: 2, NoRepack: true}} {
				got := lastLogits(t, filepath.Join(dir, c.name+"-conv.gguf"), o)
				want := lastLogits(t, filepath.Join(dir, c.name+"-twin.gguf"), o)
				require.Equal(t, want, got, "NoRepack %v: the converted model computes what its twin does", o.NoRepack)
				ex := lastLogits(t, filepath.Join(dir, c.name+"-exact.gguf"), o)
				e := nmse(got, float64s(ex))
				t.Logf("%s NoRepack %v: NMSE against the exact values in f32 %.2e", c.name, o.NoRepack, e)
				assert.Less(t, e, 2e-3)
			}
		})
	}
}

// Types that ggml added later and that the loader does not convert are refused by name.
func TestUnconvertedNewTypesAreRefused(t *testing.T) {
	leakCheck(t)
	for _, typ := range []gguf.TensorType{gguf.TypeIQ2_S, gguf.TypeIQ3_S, gguf.TypeIQ1_S} {
		kvs, ts, err := randomModel(RandomConfig{NEmbd: 256, NFF: 256, NLayer: 1, Seed: 5})
		require.NoError(t, err)
		for i := range ts {
			if ts[i].name == "blk.0.attn_q.weight" {
				ts[i].typ, ts[i].data = typ, make([]byte, typ.RowSize(256*256))
			}
		}
		path := filepath.Join(t.TempDir(), "new-type.gguf")
		require.NoError(t, writeModel(path, kvs, ts))
		m, err := Load(path, Options{Threads: 1})
		if err == nil {
			m.Close()
		}
		require.Error(t, err)
		assert.Contains(t, err.Error(), typ.String())
		t.Log(err)
	}
}
