//go:build cgo

package ggml_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/rpctest"
)

// Graphs as upstream's client (llama.cpp of 2026) sends them, computed by our server and checked
// against references computed here in float64: every translator of ggml/src/rpc/rpc-xlate.c
// that our own client never exercises, and a whole LLaMA decoder layer with its KV cache in F16
// written by SET_ROWS, with and without FLASH_ATTN_EXT.

func randF32(r *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32((r.Float64()*2 - 1) * scale)
	}
	return v
}

func f16Round(v []float32) []float32 {
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = ggml.NewFloat16(f).Float32()
	}
	return out
}

func checkClose(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	worst, at := 0.0, 0
	for i := range got {
		d := math.Abs(float64(got[i])-want[i]) / math.Max(1, math.Abs(want[i]))
		if math.IsNaN(float64(got[i])) != math.IsNaN(want[i]) || d > worst || math.IsNaN(d) {
			worst, at = d, i
		}
	}
	if worst > tol || math.IsNaN(worst) {
		t.Errorf("%s: value %d = %g, want %g (relative difference %.3g > %g)", what, at, got[at], want[at], worst, tol)
	}
}

func sigmoid64(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func gluRef(op int, x, g float64) float64 {
	switch op {
	case 0:
		return math.Max(x, 0) * g
	case 1:
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*x*(1+0.044715*x*x))) * g
	case 2:
		return x * sigmoid64(x) * g
	case 3: // alpha 1.702, limit 7 in the test
		x = math.Min(x, 7)
		g = math.Max(-7, math.Min(7, g))
		return x * sigmoid64(1.702*x) * (g + 1)
	case 4:
		return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) * g
	default:
		return x * sigmoid64(1.702*x) * g
	}
}

func TestRPCUpstreamGLU(t *testing.T) {
	addr := startRPCServer(t)
	w := dialWire(t, addr, 1<<20)
	r := rand.New(rand.NewSource(1))
	const n, rows = 8, 3
	for op := 0; op < 6; op++ {
		for _, form := range []string{"fused", "swapped", "split", "split swapped"} {
			swapped := int32(0)
			if form == "swapped" || form == "split swapped" {
				swapped = 1
			}
			params := []int32{int32(op), swapped, 0, 0}
			if op == 3 {
				params[2], params[3] = int32(math.Float32bits(1.702)), int32(math.Float32bits(7))
			}
			va := randF32(r, 2*n*rows, 3)
			a := w.tensor(wF32, "a", 2*n, rows)
			var out *wt
			want := make([]float64, n*rows)
			if form == "fused" || form == "swapped" {
				out = w.op(wOpGLU, wF32, "glu", []int{n, rows}, params, a)
				for i := 0; i < rows; i++ {
					for j := 0; j < n; j++ {
						x, g := va[2*n*i+j], va[2*n*i+n+j]
						if swapped != 0 {
							x, g = g, x
						}
						want[n*i+j] = gluRef(op, float64(x), float64(g))
					}
				}
			} else {
				a = w.tensor(wF32, "a", n, rows)
				b := w.tensor(wF32, "b", n, rows)
				out = w.op(wOpGLU, wF32, "glu", []int{n, rows}, params, a, b)
				w.setF32(b, va[n*rows:])
				for i := 0; i < n*rows; i++ {
					x, g := va[i], va[n*rows+i]
					if swapped != 0 {
						x, g = g, x
					}
					want[i] = gluRef(op, float64(x), float64(g))
				}
				va = va[:n*rows]
			}
			w.setF32(a, va)
			if err := w.compute(out); err != nil {
				t.Fatalf("glu op %d %s: %v", op, form, err)
			}
			checkClose(t, "glu", w.getF32(out), want, 1e-5)
		}
	}
	// GRAPH_RECOMPUTE of the last graph with new input
	t.Run("recompute", func(t *testing.T) {
		a := w.tensor(wF32, "a", 2*n, rows)
		out := w.op(wOpGLU, wF32, "glu", []int{n, rows}, []int32{2, 0}, a)
		for step := 0; step < 2; step++ {
			va := randF32(r, 2*n*rows, 2)
			w.setF32(a, va)
			var err error
			if step == 0 {
				err = w.compute(out)
			} else {
				err = w.recompute()
			}
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, n*rows)
			for i := 0; i < rows; i++ {
				for j := 0; j < n; j++ {
					want[n*i+j] = gluRef(2, float64(va[2*n*i+j]), float64(va[2*n*i+n+j]))
				}
			}
			checkClose(t, "glu recompute", w.getF32(out), want, 1e-5)
		}
	})
}

// setRowsNode is upstream's ggml_set_rows(dest, rows, idx): a view of dest.
func setRowsNode(w *wireConn, dest, rows, idx *wt) *wt {
	t := w.viewOp(wOpSetRows, dest, "set_rows", []int{int(dest.ne[0]), int(dest.ne[1]), int(dest.ne[2]), int(dest.ne[3])},
		dest.nb[:], 0, nil)
	t.src[0], t.src[1], t.src[2] = rows, idx, dest
	return t
}

func TestRPCUpstreamSetRows(t *testing.T) {
	addr := startRPCServer(t)
	w := dialWire(t, addr, 1<<20)
	r := rand.New(rand.NewSource(2))
	for _, c := range []struct {
		name     string
		destType uint32
		idxType  uint32
		planes   int
	}{{"f16 i64", wF16, wI64, 1}, {"f32 i32", wF32, wI32, 1}, {"f16 i64 broadcast", wF16, wI64, 2}} {
		const n, nDest, nRows = 4, 6, 3
		dest := w.tensor(c.destType, "cache", n, nDest, c.planes)
		rows := w.tensor(wF32, "rows", n, nRows, c.planes)
		idx := w.tensor(c.idxType, "idx", nRows)
		cells := []int64{5, 0, 2}
		init := randF32(r, n*nDest*c.planes, 1)
		vr := randF32(r, n*nRows*c.planes, 1)
		if c.destType == wF16 {
			w.setF16(dest, init)
			init = f16Round(init)
		} else {
			w.setF32(dest, init)
		}
		w.setF32(rows, vr)
		if c.idxType == wI64 {
			w.setI64(idx, cells)
		} else {
			w.setI32(idx, []int32{5, 0, 2})
		}
		node := setRowsNode(w, dest, rows, idx)
		if err := w.compute(node); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := make([]float64, len(init))
		for i := range init {
			want[i] = float64(init[i])
		}
		for p := 0; p < c.planes; p++ {
			for i, cell := range cells {
				for j := 0; j < n; j++ {
					v := vr[p*n*nRows+i*n+j]
					if c.destType == wF16 {
						v = ggml.NewFloat16(v).Float32()
					}
					want[p*n*nDest+int(cell)*n+j] = float64(v)
				}
			}
		}
		checkClose(t, c.name, w.getF32(dest), want, 0)
	}
}

// softMaxRef: rows of a [n, rows, heads] with mask [n, >= rows] (F16 values), sinks, ALiBi.
func softMaxRef(a []float32, n, rows, heads int, mask []float32, scale, maxBias float64, sinks []float32) []float64 {
	out := make([]float64, len(a))
	for h := 0; h < heads; h++ {
		slope := alibiSlope(maxBias, h, heads)
		for i := 0; i < rows; i++ {
			v := make([]float64, n)
			m := math.Inf(-1)
			for j := 0; j < n; j++ {
				v[j] = float64(a[(h*rows+i)*n+j]) * scale
				if mask != nil {
					v[j] += slope * float64(mask[i*n+j])
				}
				m = math.Max(m, v[j])
			}
			if sinks != nil {
				m = math.Max(m, float64(sinks[h]))
			}
			s := 0.0
			for j := range v {
				s += math.Exp(v[j] - m)
			}
			if sinks != nil {
				s += math.Exp(float64(sinks[h]) - m)
			}
			for j := range v {
				out[(h*rows+i)*n+j] = math.Exp(v[j]-m) / s
			}
		}
	}
	return out
}

func alibiSlope(maxBias float64, h, heads int) float64 {
	if maxBias <= 0 {
		return 1
	}
	nl := 1 << int(math.Floor(math.Log2(float64(heads))))
	m0 := math.Pow(2, -maxBias/float64(nl))
	m1 := math.Pow(2, -(maxBias/2)/float64(nl))
	if h < nl {
		return math.Pow(m0, float64(h+1))
	}
	return math.Pow(m1, float64(2*(h-nl)+1))
}

func TestRPCUpstreamSoftMaxScaleUnary(t *testing.T) {
	addr := startRPCServer(t)
	w := dialWire(t, addr, 1<<20)
	r := rand.New(rand.NewSource(3))
	const n, rows, heads, pad = 6, 3, 2, 4
	va := randF32(r, n*rows*heads, 2)
	vm := f16Round(randF32(r, n*pad, 1))
	vm[1], vm[n+4] = float32(math.Inf(-1)), float32(math.Inf(-1))
	sinks := randF32(r, heads, 1)
	for _, c := range []struct {
		name    string
		maxBias float32
		sinks   bool
		mask    bool
	}{{"f16 padded mask", 0, false, true}, {"sinks", 0, true, true}, {"alibi", 8, false, true}, {"sinks no mask", 0, true, false}} {
		a := w.tensor(wF32, "kq", n, rows, heads)
		w.setF32(a, va)
		srcs := []*wt{a, nil, nil}
		var mk []float32
		if c.mask {
			m := w.tensor(wF16, "mask", n, pad)
			w.setF16(m, vm)
			srcs[1], mk = m, vm
		}
		var sk []float32
		if c.sinks {
			s := w.tensor(wF32, "sinks", heads)
			w.setF32(s, sinks)
			srcs[2], sk = s, sinks
		}
		out := w.op(wOpSoftMax, wF32, "soft_max", []int{n, rows, heads}, nil, srcs...)
		out.setF32(0, 0.5)
		out.setF32(1, c.maxBias)
		if err := w.compute(out); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkClose(t, c.name, w.getF32(out), softMaxRef(va, n, rows, heads, mk, 0.5, float64(c.maxBias), sk), 1e-5)
	}

	a := w.tensor(wF32, "x", 5, 3)
	w.setF32(a, va[:15])
	sc := w.op(wOpScale, wF32, "scale", []int{5, 3}, nil, a)
	sc.setF32(0, 0.5)
	sc.setF32(1, 0.25)
	if err := w.compute(sc); err != nil {
		t.Fatal(err)
	}
	want := make([]float64, 15)
	for i := range want {
		want[i] = float64(va[i])*0.5 + 0.25
	}
	checkClose(t, "scale with bias", w.getF32(sc), want, 1e-6)

	unary := map[int32]func(float64) float64{
		7:  sigmoid64,
		10: func(x float64) float64 { return x * sigmoid64(x) },
		13: math.Exp,
		16: func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) },
		18: math.Floor,
	}
	for u, f := range unary {
		out := w.op(wOpUnary, wF32, "unary", []int{5, 3}, []int32{u}, a)
		if err := w.compute(out); err != nil {
			t.Fatalf("unary %d: %v", u, err)
		}
		for i := range want {
			want[i] = f(float64(va[i]))
		}
		checkClose(t, "unary", w.getF32(out), want, 2e-3) // our SILU uses ggml's approximation
	}
}

// ropeRef: mode 0 (adjacent pairs) or 2 (NeoX: halves), no YaRN, optional frequency factors.
func ropeRef(x []float32, d, heads int, pos []int32, mode int, base float64, ff []float32) []float64 {
	out := make([]float64, len(x))
	for t, p := range pos {
		for h := 0; h < heads; h++ {
			row := x[(t*heads+h)*d : (t*heads+h+1)*d]
			o := out[(t*heads+h)*d : (t*heads+h+1)*d]
			for i := 0; i < d/2; i++ {
				theta := float64(p) * math.Pow(base, -2*float64(i)/float64(d))
				if ff != nil {
					theta /= float64(ff[i])
				}
				i0, i1 := 2*i, 2*i+1
				if mode == 2 {
					i0, i1 = i, i+d/2
				}
				c, s := math.Cos(theta), math.Sin(theta)
				o[i0] = float64(row[i0])*c - float64(row[i1])*s
				o[i1] = float64(row[i0])*s + float64(row[i1])*c
			}
		}
	}
	return out
}

func ropeParams(d, mode int) []int32 {
	f := func(v float32) int32 { return int32(math.Float32bits(v)) }
	return []int32{0, int32(d), int32(mode), 0, 4096, f(10000), f(1), f(0), f(1), f(32), f(1)}
}

// TestRPCUpstreamRopeOfView: Phi-3 style, ROPE of a strided view into a fused QKV projection.
func TestRPCUpstreamRopeOfView(t *testing.T) {
	addr := startRPCServer(t)
	w := dialWire(t, addr, 1<<20)
	r := rand.New(rand.NewSource(7))
	const d, heads, tokens, width = 8, 2, 3, 3 * 8 * 2
	pos := []int32{0, 2, 7}
	fused := randF32(r, width*tokens, 1)
	qkv := w.tensor(wF32, "qkv", width, tokens)
	w.setF32(qkv, fused)
	p := w.tensor(wI32, "pos", tokens)
	w.setI32(p, pos)
	const offs = d * heads * 4 // K follows Q
	k := w.view(qkv, []int{d, heads, tokens}, []uint32{4, d * 4, width * 4, width * 4 * tokens}, offs)
	out := w.op(wOpRope, wF32, "rope", []int{d, heads, tokens}, ropeParams(d, 2), k, p)
	if err := w.compute(k, out); err != nil {
		t.Fatal(err)
	}
	dense := make([]float32, 0, d*heads*tokens)
	for tt := 0; tt < tokens; tt++ {
		dense = append(dense, fused[tt*width+d*heads:tt*width+2*d*heads]...)
	}
	checkClose(t, "rope of a view", w.getF32(out), ropeRef(dense, d, heads, pos, 2, 10000, nil), 1e-5)
}

func TestRPCUpstreamRope(t *testing.T) {
	addr := startRPCServer(t)
	w := dialWire(t, addr, 1<<20)
	r := rand.New(rand.NewSource(4))
	const d, heads = 8, 2
	pos := []int32{0, 1, 5}
	ff := []float32{1, 2, 4, 8}
	vx := randF32(r, d*heads*len(pos), 1)
	for _, mode := range []int{0, 2} {
		for _, withFF := range []bool{false, true} {
			x := w.tensor(wF32, "x", d, heads, len(pos))
			p := w.tensor(wI32, "pos", len(pos))
			w.setF32(x, vx)
			w.setI32(p, pos)
			srcs := []*wt{x, p}
			var fv []float32
			if withFF {
				f := w.tensor(wF32, "freq factors", d/2)
				w.setF32(f, ff)
				srcs, fv = append(srcs, f), ff
			}
			out := w.op(wOpRope, wF32, "rope", []int{d, heads, len(pos)}, ropeParams(d, mode), srcs...)
			if err := w.compute(out); err != nil {
				t.Fatalf("mode %d: %v", mode, err)
			}
			checkClose(t, "rope", w.getF32(out), ropeRef(vx, d, heads, pos, mode, 10000, fv), 1e-5)
		}
	}
}

// attnRef: q [d, nq, h], k/v [d, nkv, hkv] (values as stored), mask [nkv, >= nq]; out [d, h, nq].
func attnRef(q, k, v []float32, d, nq, h, nkv, hkv int, mask []float32, scale, softcap float64, sinks []float32) []float64 {
	out := make([]float64, d*h*nq)
	for hh := 0; hh < h; hh++ {
		kh := hh / (h / hkv)
		for i := 0; i < nq; i++ {
			s := make([]float64, nkv)
			m := math.Inf(-1)
			for c := 0; c < nkv; c++ {
				dot := 0.0
				for j := 0; j < d; j++ {
					dot += float64(q[(hh*nq+i)*d+j]) * float64(k[(kh*nkv+c)*d+j])
				}
				dot *= scale
				if softcap != 0 {
					dot = softcap * math.Tanh(dot/softcap)
				}
				if mask != nil {
					dot += float64(mask[i*nkv+c])
				}
				s[c] = dot
				m = math.Max(m, dot)
			}
			if sinks != nil {
				m = math.Max(m, float64(sinks[hh]))
			}
			sum := 0.0
			for c := range s {
				s[c] = math.Exp(s[c] - m)
				sum += s[c]
			}
			if sinks != nil {
				sum += math.Exp(float64(sinks[hh]) - m)
			}
			for j := 0; j < d; j++ {
				acc := 0.0
				for c := 0; c < nkv; c++ {
					acc += s[c] * float64(v[(kh*nkv+c)*d+j])
				}
				out[(i*h+hh)*d+j] = acc / sum
			}
		}
	}
	return out
}

func TestRPCUpstreamFlashAttn(t *testing.T) {
	addr := startRPCServer(t)
	w := dialWire(t, addr, 1<<20)
	r := rand.New(rand.NewSource(5))
	const d, nq, h, nkv, hkv, pad = 16, 3, 4, 7, 2, 4
	vq := randF32(r, d*nq*h, 1)
	vk := f16Round(randF32(r, d*nkv*hkv, 1))
	vv := f16Round(randF32(r, d*nkv*hkv, 1))
	vm := make([]float32, nkv*pad)
	for i := 0; i < pad; i++ {
		for c := 0; c < nkv; c++ {
			if c > i+3 {
				vm[i*nkv+c] = float32(math.Inf(-1))
			}
		}
	}
	sinks := randF32(r, h, 1)
	for _, c := range []struct {
		name    string
		softcap float32
		sinks   bool
		kType   uint32
	}{{"plain", 0, false, wF16}, {"softcap", 20, false, wF16}, {"sinks", 0, true, wF16}, {"f32 k", 0, false, wF32}} {
		q := w.tensor(wF32, "q", d, nq, h)
		k := w.tensor(c.kType, "k", d, nkv, hkv)
		v := w.tensor(wF16, "v", d, nkv, hkv)
		m := w.tensor(wF16, "mask", nkv, pad)
		w.setF32(q, vq)
		if c.kType == wF32 {
			w.setF32(k, vk)
		} else {
			w.setF16(k, vk)
		}
		w.setF16(v, vv)
		w.setF16(m, vm)
		srcs := []*wt{q, k, v, m, nil}
		var sk []float32
		if c.sinks {
			s := w.tensor(wF32, "sinks", h)
			w.setF32(s, sinks)
			srcs[4], sk = s, sinks
		}
		out := w.op(wOpFlashAttnExt, wF32, "fa", []int{d, h, nq}, nil, srcs...)
		out.setF32(0, 0.25)
		out.setF32(2, c.softcap)
		out.p[3] = 10 // GGML_PREC_F32
		if err := w.compute(out); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		checkClose(t, c.name, w.getF32(out), attnRef(vq, vk, vv, d, nq, h, nkv, hkv, vm, 0.25, float64(c.softcap), sk), 1e-4)
	}
}

// TestRPCUpstreamRefused: ops the server cannot compute, and data that would take a kernel out
// of range, fail that GRAPH_COMPUTE (the connection closes) and the server keeps serving.
func TestRPCUpstreamRefused(t *testing.T) {
	addr := startRPCServer(t)
	for _, c := range []string{"unknown op", "index out of range", "negative index", "bad glu op", "empty mask",
		"empty kv batch", "mask shorter than the scores"} {
		w := dialWire(t, addr, 1<<16)
		var node *wt
		switch c {
		case "unknown op":
			a := w.tensor(wF32, "a", 4, 4)
			node = w.op(wOpSSMConv, wF32, "ssm_conv", []int{4, 4}, nil, a, a)
		case "index out of range", "negative index":
			dest := w.tensor(wF16, "cache", 4, 6)
			rows := w.tensor(wF32, "rows", 4, 2)
			idx := w.tensor(wI64, "idx", 2)
			bad := int64(6)
			if c == "negative index" {
				bad = -1
			}
			w.setI64(idx, []int64{1, bad})
			node = setRowsNode(w, dest, rows, idx)
		case "empty mask", "empty kv batch", "mask shorter than the scores":
			q := w.tensor(wF32, "q", 16, 2, 4)
			kne := []int{16, 5, 2}
			if c == "empty kv batch" {
				kne = []int{16, 5, 2, 0}
			}
			k := w.tensor(wF16, "k", kne...)
			v := w.tensor(wF16, "v", 16, 5, 2)
			mne := []int{5, 2}
			switch c {
			case "empty mask":
				mne = []int{5, 2, 0}
			case "mask shorter than the scores":
				mne = []int{5, 1}
			}
			m := w.tensor(wF16, "mask", mne...)
			node = w.op(wOpFlashAttnExt, wF32, "fa", []int{16, 4, 2}, nil, q, k, v, m)
		case "bad glu op":
			a := w.tensor(wF32, "a", 8, 2)
			node = w.op(wOpGLU, wF32, "glu", []int{4, 2}, []int32{99, 0}, a)
		}
		if err := w.compute(node); err == nil {
			t.Errorf("%s: GRAPH_COMPUTE succeeded", c)
		}
	}
	// still serving
	w := dialWire(t, addr, 1<<16)
	a := w.tensor(wF32, "a", 4)
	w.setF32(a, []float32{1, 2, 3, 4})
	out := w.op(wOpScale, wF32, "scale", []int{4}, []int32{int32(math.Float32bits(2))}, a)
	if err := w.compute(out); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "after refusals", w.getF32(out), []float64{2, 4, 6, 8}, 0)
}

// --- a LLaMA decoder layer as llama.cpp of 2026 builds it --------------------------------------------

const (
	lE    = 64 // n_embd
	lH    = 4  // heads
	lHkv  = 2  // kv heads
	lD    = 16 // head dim
	lEkv  = lHkv * lD
	lF    = 128 // n_ff
	lKV   = 8   // cache cells
	lEps  = 1e-5
	lBase = 10000
)

type layerWeights struct {
	attnNorm, ffnNorm, wq, wk, wv, wo, wg, wu, wd []float32
}

func newLayerWeights(r *rand.Rand) *layerWeights {
	return &layerWeights{
		attnNorm: randF32(r, lE, 1), ffnNorm: randF32(r, lE, 1),
		wq: randF32(r, lE*lE, 0.2), wk: randF32(r, lE*lEkv, 0.2), wv: randF32(r, lE*lEkv, 0.2),
		wo: randF32(r, lE*lE, 0.2), wg: randF32(r, lE*lF, 0.2), wu: randF32(r, lE*lF, 0.2), wd: randF32(r, lF*lE, 0.2),
	}
}

// matVec: ggml's mul_mat(w [in, out], x [in]) -> [out]
func matVec(w []float32, in, out int, x []float64) []float64 {
	y := make([]float64, out)
	for o := 0; o < out; o++ {
		s := 0.0
		for i := 0; i < in; i++ {
			s += float64(w[o*in+i]) * x[i]
		}
		y[o] = s
	}
	return y
}

func rmsNormMul(x []float64, w []float32) []float64 {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	k := 1 / math.Sqrt(s/float64(len(x))+lEps)
	y := make([]float64, len(x))
	for i := range x {
		y[i] = x[i] * k * float64(w[i])
	}
	return y
}

func ropeInPlace(x []float64, heads int, pos int32) {
	for h := 0; h < heads; h++ {
		for i := 0; i < lD/2; i++ {
			theta := float64(pos) * math.Pow(lBase, -2*float64(i)/lD)
			c, s := math.Cos(theta), math.Sin(theta)
			a, b := x[h*lD+2*i], x[h*lD+2*i+1]
			x[h*lD+2*i], x[h*lD+2*i+1] = a*c-b*s, a*s+b*c
		}
	}
}

// layerRef keeps the KV cache (F16-rounded values per cell) between steps.
type layerRef struct {
	w      *layerWeights
	k, v   [lKV][]float64
	filled [lKV]int32 // position held by a cell, -1: empty
}

func (l *layerRef) step(x []float32, pos []int32) []float64 {
	T := len(pos)
	q := make([][]float64, T)
	xs := make([][]float64, T)
	for t := 0; t < T; t++ {
		xs[t] = make([]float64, lE)
		for i := range xs[t] {
			xs[t][i] = float64(x[t*lE+i])
		}
		h := rmsNormMul(xs[t], l.w.attnNorm)
		q[t] = matVec(l.w.wq, lE, lE, h)
		k := matVec(l.w.wk, lE, lEkv, h)
		v := matVec(l.w.wv, lE, lEkv, h)
		ropeInPlace(q[t], lH, pos[t])
		ropeInPlace(k, lHkv, pos[t])
		for i := range k {
			k[i] = float64(ggml.NewFloat16(float32(k[i])).Float32())
			v[i] = float64(ggml.NewFloat16(float32(v[i])).Float32())
		}
		l.k[pos[t]], l.v[pos[t]], l.filled[pos[t]] = k, v, pos[t]
	}
	out := make([]float64, 0, T*lE)
	for t := 0; t < T; t++ {
		att := make([]float64, lE)
		for h := 0; h < lH; h++ {
			kh := h / (lH / lHkv)
			var s []float64
			var cells []int
			m := math.Inf(-1)
			for c := 0; c < lKV; c++ {
				if l.filled[c] < 0 || l.filled[c] > pos[t] {
					continue
				}
				d := 0.0
				for j := 0; j < lD; j++ {
					d += q[t][h*lD+j] * l.k[c][kh*lD+j]
				}
				d /= math.Sqrt(lD)
				s, cells = append(s, d), append(cells, c)
				m = math.Max(m, d)
			}
			sum := 0.0
			for i := range s {
				s[i] = math.Exp(s[i] - m)
				sum += s[i]
			}
			for i, c := range cells {
				for j := 0; j < lD; j++ {
					att[h*lD+j] += s[i] / sum * l.v[c][kh*lD+j]
				}
			}
		}
		o := matVec(l.w.wo, lE, lE, att)
		for i := range o {
			o[i] += xs[t][i]
		}
		h2 := rmsNormMul(o, l.w.ffnNorm)
		g := matVec(l.w.wg, lE, lF, h2)
		u := matVec(l.w.wu, lE, lF, h2)
		for i := range g {
			g[i] = g[i] * sigmoid64(g[i]) * u[i]
		}
		d := matVec(l.w.wd, lF, lE, g)
		for i := range d {
			d[i] += o[i]
		}
		out = append(out, d...)
	}
	return out
}

// wireLayer is the layer's weights and KV cache in one server connection.
type wireLayer struct {
	w                          *wireConn
	attnNorm, ffnNorm          *wt
	wq, wk, wv, wo, wg, wu, wd *wt
	kCache, vCache             *wt
	fa                         bool
}

func newWireLayer(t *testing.T, addr string, lw *layerWeights, fa bool) *wireLayer {
	w := dialWire(t, addr, 4<<20)
	l := &wireLayer{w: w, fa: fa}
	set := func(name string, v []float32, ne ...int) *wt {
		x := w.tensor(wF32, name, ne...)
		w.setF32(x, v)
		return x
	}
	l.attnNorm, l.ffnNorm = set("attn_norm", lw.attnNorm, lE), set("ffn_norm", lw.ffnNorm, lE)
	l.wq, l.wk, l.wv = set("wq", lw.wq, lE, lE), set("wk", lw.wk, lE, lEkv), set("wv", lw.wv, lE, lEkv)
	l.wo, l.wg, l.wu, l.wd = set("wo", lw.wo, lE, lE), set("wg", lw.wg, lE, lF), set("wu", lw.wu, lE, lF), set("wd", lw.wd, lF, lE)
	if fa {
		l.kCache, l.vCache = w.tensor(wF16, "cache_k", lEkv, lKV), w.tensor(wF16, "cache_v", lEkv, lKV)
	} else {
		l.kCache, l.vCache = w.tensor(wF16, "cache_k", lEkv, lKV), w.tensor(wF16, "cache_v", lKV, lEkv) // V transposed
	}
	w.setF16(l.kCache, make([]float32, lEkv*lKV))
	w.setF16(l.vCache, make([]float32, lEkv*lKV))
	return l
}

// step builds, sends and computes one ubatch of len(pos) tokens whose cells are their positions.
func (l *wireLayer) step(t *testing.T, x []float32, pos []int32, filledUpTo int32) []float32 {
	w := l.w
	T := len(pos)
	pad := (T + 3) / 4 * 4
	var g graph
	f := func(v float32) int32 { return int32(math.Float32bits(v)) }
	inp := w.tensor(wF32, "inp", lE, T)
	w.setF32(inp, x)
	posT := w.tensor(wI32, "inp_pos", T)
	w.setI32(posT, pos)
	cells := make([]int64, T)
	for i, p := range pos {
		cells[i] = int64(p)
	}
	kIdx := w.tensor(wI64, "k_idxs", T)
	w.setI64(kIdx, cells)
	maskF := w.tensor(wF32, "kq_mask", lKV, pad)
	mv := make([]float32, lKV*pad)
	for i := 0; i < pad; i++ {
		for c := 0; c < lKV; c++ {
			if i >= T || int32(c) > pos[i] || int32(c) > filledUpTo {
				mv[i*lKV+c] = float32(math.Inf(-1))
			}
		}
	}
	w.setF32(maskF, mv)

	cur := g.add(w.op(wOpRMSNorm, wF32, "norm", []int{lE, T}, []int32{f(lEps)}, inp))
	cur = g.add(w.op(wOpMul, wF32, "attn_norm", []int{lE, T}, nil, cur, l.attnNorm))
	q := g.add(w.op(wOpMulMat, wF32, "Qcur", []int{lE, T}, nil, l.wq, cur))
	k := g.add(w.op(wOpMulMat, wF32, "Kcur", []int{lEkv, T}, nil, l.wk, cur))
	v := g.add(w.op(wOpMulMat, wF32, "Vcur", []int{lEkv, T}, nil, l.wv, cur))
	q = g.add(w.reshape(q, lD, lH, T))
	k = g.add(w.reshape(k, lD, lHkv, T))
	q = g.add(w.op(wOpRope, wF32, "Qrope", []int{lD, lH, T}, ropeParams(lD, 0), q, posT))
	k = g.add(w.op(wOpRope, wF32, "Krope", []int{lD, lHkv, T}, ropeParams(lD, 0), k, posT))
	k2 := g.add(w.reshape(k, lEkv, T))
	g.add(setRowsNode(w, l.kCache, k2, kIdx))
	qp := g.add(w.permute(q, 0, 2, 1, 3)) // [D, T, H]
	kView := g.add(w.view(l.kCache, []int{lD, lKV, lHkv}, []uint32{2, 2 * lEkv, 2 * lD, 2 * lEkv * lKV}, 0))
	scale := float32(1 / math.Sqrt(lD))
	if l.fa {
		g.add(setRowsNode(w, l.vCache, v, kIdx))
		mask16 := w.tensor(wF16, "kq_mask_f16", lKV, pad)
		cpy := g.add(w.viewOp(wOpCpy, mask16, "kq_mask (copy)", []int{lKV, pad}, nil, 0, nil))
		cpy.src[0], cpy.src[1] = maskF, mask16
		vView := g.add(w.view(l.vCache, []int{lD, lKV, lHkv}, []uint32{2, 2 * lEkv, 2 * lD, 2 * lEkv * lKV}, 0))
		fa := g.add(w.op(wOpFlashAttnExt, wF32, "fattn", []int{lD, lH, T}, []int32{f(scale), 0, 0, 10}, qp, kView, vView, cpy))
		cur = g.add(w.reshape(fa, lE, T))
	} else {
		// V transposed: element (cell c, dim d) at d*KV + c, written one value per row
		vIdx := w.tensor(wI64, "v_idxs", lEkv*T)
		vi := make([]int64, lEkv*T)
		for tt := 0; tt < T; tt++ {
			for d := 0; d < lEkv; d++ {
				vi[tt*lEkv+d] = int64(d*lKV) + cells[tt]
			}
		}
		w.setI64(vIdx, vi)
		vFlat := g.add(w.reshape(l.vCache, 1, lKV*lEkv))
		vCur := g.add(w.reshape(v, 1, lEkv*T))
		g.add(setRowsNode(w, vFlat, vCur, vIdx))
		kq := g.add(w.op(wOpMulMat, wF32, "kq", []int{lKV, T, lH}, nil, kView, qp))
		sm := g.add(w.op(wOpSoftMax, wF32, "kq_soft_max", []int{lKV, T, lH}, []int32{f(scale), 0}, kq, maskF))
		vView := g.add(w.view(l.vCache, []int{lKV, lD, lHkv}, []uint32{2, 2 * lKV, 2 * lKV * lD, 2 * lKV * lEkv}, 0))
		kqv := g.add(w.op(wOpMulMat, wF32, "kqv", []int{lD, T, lH}, nil, vView, sm))
		kqvp := g.add(w.permute(kqv, 0, 2, 1, 3))
		cur = g.add(w.op(wOpCont, wF32, "kqv_out", []int{lE, T}, nil, kqvp))
	}
	cur = g.add(w.op(wOpMulMat, wF32, "attn_out", []int{lE, T}, nil, l.wo, cur))
	ffi := g.add(w.op(wOpAdd, wF32, "ffn_inp", []int{lE, T}, nil, cur, inp))
	cur = g.add(w.op(wOpRMSNorm, wF32, "norm", []int{lE, T}, []int32{f(lEps)}, ffi))
	cur = g.add(w.op(wOpMul, wF32, "ffn_norm", []int{lE, T}, nil, cur, l.ffnNorm))
	gate := g.add(w.op(wOpMulMat, wF32, "ffn_gate", []int{lF, T}, nil, l.wg, cur))
	up := g.add(w.op(wOpMulMat, wF32, "ffn_up", []int{lF, T}, nil, l.wu, cur))
	act := g.add(w.op(wOpGLU, wF32, "ffn_swiglu", []int{lF, T}, []int32{2, 0}, gate, up))
	down := g.add(w.op(wOpMulMat, wF32, "ffn_down", []int{lE, T}, nil, l.wd, act))
	out := g.add(w.op(wOpAdd, wF32, "l_out", []int{lE, T}, nil, down, ffi))
	if err := w.compute(g...); err != nil {
		t.Fatalf("layer (flash attention %v): %v", l.fa, err)
	}
	return w.getF32(out)
}

func TestRPCUpstreamLlamaLayer(t *testing.T) {
	for _, threads := range []int{1, 3} {
		addr := rpctest.Serve(t, threads)
		r := rand.New(rand.NewSource(6))
		lw := newLayerWeights(r)
		ref := &layerRef{w: lw}
		for c := range ref.filled {
			ref.filled[c] = -1
		}
		x1 := randF32(r, lE*3, 1)
		x2 := randF32(r, lE, 1)
		want1 := ref.step(x1, []int32{0, 1, 2})
		want2 := ref.step(x2, []int32{3})
		for _, fa := range []bool{true, false} {
			// one connection at a time: our server serves them in turn
			l := newWireLayer(t, addr, lw, fa)
			what := fmt.Sprintf("%d threads, flash attention %v", threads, fa)
			checkClose(t, "prefill, "+what, l.step(t, x1, []int32{0, 1, 2}, 2), want1, 2e-3)
			checkClose(t, "decode, "+what, l.step(t, x2, []int32{3}, 3), want2, 2e-3)
			l.w.c.Close()
		}
	}
}

// TestRPCUpstreamRawTypes: tensors of wire types our ggml lacks (I64, BF16, IQ4_NL) are stored,
// read back, copied, sized and viewed as raw bytes.
func TestRPCUpstreamRawTypes(t *testing.T) {
	addr := startRPCServer(t)
	w := dialWire(t, addr, 1<<16)
	const wBF16, wIQ4NL = 30, 20
	idx := w.tensor(wI64, "idx", 5)
	w.setI64(idx, []int64{1, -2, 3 << 40, 4, 5})
	got, err := w.get(idx)
	if err != nil || binary.LittleEndian.Uint64(got[16:]) != 3<<40 {
		t.Fatalf("I64 round trip: %v %x", err, got)
	}
	bf := w.tensor(wBF16, "bf16", 4, 2)
	raw := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	w.set(bf, raw)
	dst := w.tensor(wBF16, "bf16 copy", 4, 2)
	if r, err := w.call(9, append(w.record(bf), w.record(dst)...), 1); err != nil || r[0] != 1 {
		t.Fatalf("COPY_TENSOR of BF16: %v %v", r, err)
	}
	if got, err := w.get(dst); err != nil || string(got) != string(raw) {
		t.Fatalf("BF16 copy read back %x, %v", got, err)
	}
	// GET_ALLOC_SIZE of a 64x2 IQ4_NL tensor (block 32, 18 bytes): 2 rows of 36 bytes
	iq := &wt{typ: wIQ4NL, ne: [4]uint32{64, 2, 1, 1}, nb: [4]uint32{18, 36, 72, 72}, id: 0x99, name: "iq4_nl"}
	req := binary.LittleEndian.AppendUint32(nil, 0)
	req = append(req, encodeWT(iq)...)
	req = append(req, make([]byte, 10*rpcTensorSize)...)
	if r, err := w.call(13, req, 8); err != nil || binary.LittleEndian.Uint64(r) != 72 {
		t.Fatalf("GET_ALLOC_SIZE of IQ4_NL: %v %v", r, err)
	}
	// a view of the I64 indices as a graph node, feeding SET_ROWS
	dest := w.tensor(wF32, "dest", 2, 4)
	rows := w.tensor(wF32, "rows", 2, 2)
	w.setF32(dest, make([]float32, 8))
	w.setF32(rows, []float32{1, 2, 3, 4})
	w.setI64(idx, []int64{9, 3, 1, 0, 0})
	v := w.view(idx, []int{2}, []uint32{8, 16, 16, 16}, 8)
	node := setRowsNode(w, dest, rows, v)
	if err := w.compute(v, node); err != nil {
		t.Fatal(err)
	}
	checkClose(t, "set_rows through an I64 view", w.getF32(dest), []float64{0, 0, 3, 4, 0, 0, 1, 2}, 0)
}

// BenchmarkRPCUpstreamFlashAttn: one FLASH_ATTN_EXT of a TinyLlama-shaped layer (head size 64,
// 32 heads, 4 KV heads, F16 cache of 256 cells) on a 1-thread server, for a prefill of 128
// tokens and a decode step (graph sent, computed and confirmed by a round trip).
//
//	go test -run '^$' -bench RPCUpstreamFlashAttn .
func BenchmarkRPCUpstreamFlashAttn(b *testing.B) {
	addr := startRPCServer(b)
	w := dialWire(b, addr, 64<<20)
	r := rand.New(rand.NewSource(8))
	const d, h, hkv, nkv = 64, 32, 4, 256
	k := w.tensor(wF16, "k", d, nkv, hkv)
	v := w.tensor(wF16, "v", d, nkv, hkv)
	w.setF16(k, randF32(r, d*nkv*hkv, 1))
	w.setF16(v, randF32(r, d*nkv*hkv, 1))
	for _, nq := range []int{128, 1} {
		b.Run(fmt.Sprintf("q%d", nq), func(b *testing.B) {
			q := w.tensor(wF32, "q", d, nq, h)
			m := w.tensor(wF16, "mask", nkv, nq)
			w.setF32(q, randF32(r, d*nq*h, 1))
			w.setF16(m, make([]float32, nkv*nq))
			out := w.op(wOpFlashAttnExt, wF32, "fa", []int{d, h, nq}, nil, q, k, v, m)
			out.setF32(0, 0.125)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.compute(out); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
