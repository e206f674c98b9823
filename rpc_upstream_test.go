//go:build cgo

package ggml_test

import (
	"math"
	"math/rand"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
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
	}{{"plain", 0, false}, {"softcap", 20, false}, {"sinks", 0, true}} {
		q := w.tensor(wF32, "q", d, nq, h)
		k := w.tensor(wF16, "k", d, nkv, hkv)
		v := w.tensor(wF16, "v", d, nkv, hkv)
		m := w.tensor(wF16, "mask", nkv, pad)
		w.setF32(q, vq)
		w.setF16(k, vk)
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
	for _, c := range []string{"unknown op", "index out of range", "negative index", "bad glu op"} {
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

var _ = time.Second
