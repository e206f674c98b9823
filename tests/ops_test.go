package tests

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/stretchr/testify/require"
)

// Every graph-operation wrapper of *ggml.Context is computed on a CPU backend (1 and 2
// threads) on small random inputs and compared with a pure-Go float64 reference (refs_test.go).
// TestOpCoverage fails when a wrapper has no case here.

func float16Round(f float32) float32 { return ggml.NewFloat16(f).Float32() }

// input describes one input tensor of a case.
type input struct {
	typ    ggml.Type
	ne     []int
	lo, hi float64 // uniform random values in [lo, hi) (default [-1, 1))
	ints   []int32 // explicit values for I32 inputs
}

func f32(ne ...int) input { return input{typ: ggml.TypeF32, ne: ne} }
func f16in(ne ...int) input {
	return input{typ: ggml.TypeF16, ne: ne}
}
func pos(lo, hi float64, ne ...int) input { return input{typ: ggml.TypeF32, ne: ne, lo: lo, hi: hi} }
func i32(vals []int32, ne ...int) input   { return input{typ: ggml.TypeI32, ne: ne, ints: vals} }

type opCase struct {
	name   string // the method under test (and the case name)
	covers []string
	in     []input
	build  func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor
	ref    func(x []*arr) *arr
	tol    float64 // default 1e-4 (relative to max(1, |want|))
}

func seedOf(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64() & 0x7fffffffffffffff)
}

// runOpCase builds, allocates, computes and checks one case on backend be against the
// float64 reference.
func runOpCase(t *testing.T, be *ggml.Backend, tc opCase) {
	t.Helper()
	got, want, supported := computeOpCase(t, be, tc, 1)
	require.True(t, supported, "%s: backend %s does not support every node", tc.name, be.Name())
	tol := tc.tol
	if tol == 0 {
		tol = 1e-4
	}
	require.Len(t, got, want.n())
	bad, first := countMismatches(want.d, got, tol)
	require.Zero(t, bad, "%s: %d of %d elements differ (tol %g); first: %s", tc.name, bad, len(got), tol, first)
}

// caseInputs returns the case's random inputs (seeded by its name) as float64 arrays.
func caseInputs(t *testing.T, tc opCase) []*arr {
	rng := rand.New(rand.NewSource(seedOf(tc.name)))
	refs := make([]*arr, len(tc.in))
	for i, in := range tc.in {
		a := newArr(in.ne...)
		switch {
		case in.typ == ggml.TypeI32:
			require.Len(t, in.ints, a.n(), "input %d of %s", i, tc.name)
			for j, v := range in.ints {
				a.d[j] = float64(v)
			}
		default:
			lo, hi := in.lo, in.hi
			if lo == 0 && hi == 0 {
				lo, hi = -1, 1
			}
			for j := range a.d {
				v := float32(lo + (hi-lo)*rng.Float64())
				if in.typ == ggml.TypeF16 {
					v = float16Round(v)
				}
				a.d[j] = float64(v)
			}
		}
		refs[i] = a
	}
	return refs
}

// computeOpCase builds the case in a new context, places its tensors in a buffer of be, then
// `times` times sets the inputs and computes the graph (a second compute on an RPC backend is
// a recompute). It returns the output, the float64 reference and false, computing nothing, when
// be does not support one of the graph's nodes.
func computeOpCase(t *testing.T, be *ggml.Backend, tc opCase, times int) (got []float64, want *arr, supported bool) {
	t.Helper()
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 512*ggml.TensorOverhead() + ggml.GraphOverhead(), NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()

	refs := caseInputs(t, tc)
	xs := make([]*ggml.Tensor, len(tc.in))
	for i, in := range tc.in {
		ne := make([]int64, len(in.ne))
		for j, n := range in.ne {
			ne[j] = int64(n)
		}
		xs[i] = ctx.NewTensor(in.typ, ne...)
		xs[i].SetName(fmt.Sprintf("in%d", i))
	}
	want = tc.ref(refs)

	var out *ggml.Tensor
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: building the graph panicked: %v", tc.name, r)
			}
		}()
		out = tc.build(ctx, xs)
	}()
	require.NotNil(t, out)
	g := ctx.NewGraph()
	g.BuildForwardExpand(out)
	for _, n := range g.Nodes() {
		if !be.SupportsOp(n) {
			return nil, want, false
		}
	}
	buf, err := ggml.AllocContextTensors(ctx, be)
	require.NoError(t, err)
	defer buf.Close()

	for k := 0; k < times; k++ {
		// the inputs again each time: in-place ops overwrite them
		for i, in := range tc.in {
			switch in.typ {
			case ggml.TypeI32:
				require.NoError(t, xs[i].SetInt32(in.ints))
			default:
				v := make([]float32, refs[i].n())
				for j, x := range refs[i].d {
					v[j] = float32(x)
				}
				require.NoError(t, xs[i].SetFloat32(v))
			}
		}
		require.NoError(t, be.Compute(g), tc.name)
	}

	ne := out.Ne()
	require.Equal(t, want.ne, [4]int{int(ne[0]), int(ne[1]), int(ne[2]), int(ne[3])}, "%s: result shape", tc.name)
	switch out.Type() {
	case ggml.TypeI32:
		v, err := out.Int32()
		require.NoError(t, err)
		for _, x := range v {
			got = append(got, float64(x))
		}
	default:
		v, err := out.Float32()
		require.NoError(t, err)
		for _, x := range v {
			got = append(got, float64(x))
		}
	}
	return got, want, true
}

// countMismatches counts the elements of got farther than tol (relative to max(1, |want|))
// from want; infinities must match exactly. first describes the first mismatch.
func countMismatches(want, got []float64, tol float64) (bad int, first string) {
	for i := range got {
		w, g := want[i], got[i]
		if math.IsInf(w, 0) || math.IsInf(g, 0) {
			if w != g {
				bad++
				if first == "" {
					first = fmt.Sprintf("element %d: got %g, want %g", i, g, w)
				}
			}
			continue
		}
		if math.IsNaN(g) != math.IsNaN(w) || !math.IsNaN(g) && math.Abs(g-w) > tol*math.Max(1, math.Abs(w)) {
			bad++
			if first == "" {
				first = fmt.Sprintf("element %d: got %g, want %g", i, g, w)
			}
		}
	}
	return bad, first
}

func shape(x *ggml.Tensor) [4]int {
	ne := x.Ne()
	return [4]int{int(ne[0]), int(ne[1]), int(ne[2]), int(ne[3])}
}

// unary builds cases for an element-wise function and its Inplace variant.
func unaryCases(name string, lo, hi float64, tol float64, mk func(c *ggml.Context, a *ggml.Tensor, inplace bool) *ggml.Tensor, f func(float64) float64) []opCase {
	var out []opCase
	for _, inplace := range []bool{false, true} {
		n := name
		if inplace {
			n += "Inplace"
		}
		out = append(out, opCase{
			name:  n,
			in:    []input{{typ: ggml.TypeF32, ne: []int{5, 3, 2}, lo: lo, hi: hi}},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return mk(c, x[0], inplace) },
			ref:   func(x []*arr) *arr { return mapArr(x[0], f) },
			tol:   tol,
		})
	}
	return out
}

func pick(c *ggml.Context, inplace bool, plain, inpl func() *ggml.Tensor) *ggml.Tensor {
	if inplace {
		return inpl()
	}
	return plain()
}

func binaryCases(name string, mk func(c *ggml.Context, a, b *ggml.Tensor, inplace bool) *ggml.Tensor, f func(x, y float64) float64, blo, bhi float64) []opCase {
	var out []opCase
	for _, inplace := range []bool{false, true} {
		n := name
		if inplace {
			n += "Inplace"
		}
		for k, shapes := range [][2][]int{{{6, 4, 3, 2}, {6, 4, 3, 2}}, {{6, 4, 3, 2}, {3, 2, 1, 2}}, {{5, 3}, {5, 1}}} {
			out = append(out, opCase{
				name:   fmt.Sprintf("%s/%d", n, k),
				covers: []string{n},
				in:     []input{f32(shapes[0]...), {typ: ggml.TypeF32, ne: shapes[1], lo: blo, hi: bhi}},
				build:  func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return mk(c, x[0], x[1], inplace) },
				ref:    func(x []*arr) *arr { return refBinary(x[0], x[1], f) },
			})
		}
	}
	return out
}

func allOpCases() []opCase {
	var cs []opCase
	add := func(c ...opCase) { cs = append(cs, c...) }

	// element-wise unary functions
	type uf struct {
		name   string
		lo, hi float64
		tol    float64
		plain  func(c *ggml.Context, a *ggml.Tensor) *ggml.Tensor
		inpl   func(c *ggml.Context, a *ggml.Tensor) *ggml.Tensor
		f      func(float64) float64
		unary  ggml.UnaryOp
	}
	ufs := []uf{
		{"Sqr", -2, 2, 0, (*ggml.Context).Sqr, (*ggml.Context).SqrInplace, func(x float64) float64 { return x * x }, -1},
		{"Sqrt", 0.1, 4, 0, (*ggml.Context).Sqrt, (*ggml.Context).SqrtInplace, math.Sqrt, -1},
		{"Log", 0.1, 4, 0, (*ggml.Context).Log, (*ggml.Context).LogInplace, math.Log, -1},
		{"Abs", -2, 2, 0, (*ggml.Context).Abs, (*ggml.Context).AbsInplace, math.Abs, ggml.UnaryAbs},
		{"Sgn", -2, 2, 0, (*ggml.Context).Sgn, (*ggml.Context).SgnInplace, sgn, ggml.UnarySgn},
		{"Neg", -2, 2, 0, (*ggml.Context).Neg, (*ggml.Context).NegInplace, func(x float64) float64 { return -x }, ggml.UnaryNeg},
		{"Step", -2, 2, 0, (*ggml.Context).Step, (*ggml.Context).StepInplace, step, ggml.UnaryStep},
		{"Tanh", -3, 3, 0, (*ggml.Context).Tanh, (*ggml.Context).TanhInplace, math.Tanh, ggml.UnaryTanh},
		{"Elu", -3, 3, 0, (*ggml.Context).Elu, (*ggml.Context).EluInplace, elu, ggml.UnaryElu},
		{"Relu", -2, 2, 0, (*ggml.Context).Relu, (*ggml.Context).ReluInplace, func(x float64) float64 { return math.Max(x, 0) }, ggml.UnaryRelu},
		{"Gelu", -3, 3, 2e-3, (*ggml.Context).Gelu, (*ggml.Context).GeluInplace, gelu, ggml.UnaryGelu},
		{"GeluQuick", -3, 3, 2e-3, (*ggml.Context).GeluQuick, (*ggml.Context).GeluQuickInplace, func(x float64) float64 { return x * sigmoid(1.702*x) }, ggml.UnaryGeluQuick},
		{"Silu", -3, 3, 1e-3, (*ggml.Context).Silu, (*ggml.Context).SiluInplace, func(x float64) float64 { return x * sigmoid(x) }, ggml.UnarySilu},
	}
	for _, u := range ufs {
		u := u
		add(unaryCases(u.name, u.lo, u.hi, u.tol, func(c *ggml.Context, a *ggml.Tensor, inplace bool) *ggml.Tensor {
			if inplace {
				return u.inpl(c, a)
			}
			return u.plain(c, a)
		}, u.f)...)
		if u.unary >= 0 {
			op := u.unary
			for _, inplace := range []bool{false, true} {
				inplace := inplace
				name := "Unary"
				if inplace {
					name = "UnaryInplace"
				}
				add(opCase{
					name: name + "/" + u.name, covers: []string{name},
					in: []input{{typ: ggml.TypeF32, ne: []int{4, 3}, lo: u.lo, hi: u.hi}},
					build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
						if inplace {
							return c.UnaryInplace(x[0], op)
						}
						return c.Unary(x[0], op)
					},
					ref: func(x []*arr) *arr { return mapArr(x[0], u.f) }, tol: u.tol,
				})
			}
		}
	}
	for _, inplace := range []bool{false, true} {
		inplace := inplace
		name := map[bool]string{false: "LeakyRelu", true: "LeakyReluInplace"}[inplace]
		add(opCase{
			name: name, in: []input{f32(6, 3)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				return pick(c, inplace, func() *ggml.Tensor { return c.LeakyRelu(x[0], 0.1) }, func() *ggml.Tensor { return c.LeakyReluInplace(x[0], 0.1) })
			},
			ref: func(x []*arr) *arr {
				return mapArr(x[0], func(v float64) float64 { return math.Max(v, 0) + float64(float32(0.1))*math.Min(v, 0) })
			},
		})
	}

	// binary element-wise ops with broadcasting
	add(binaryCases("Add", func(c *ggml.Context, a, b *ggml.Tensor, in bool) *ggml.Tensor {
		return pick(c, in, func() *ggml.Tensor { return c.Add(a, b) }, func() *ggml.Tensor { return c.AddInplace(a, b) })
	}, func(x, y float64) float64 { return x + y }, -1, 1)...)
	add(binaryCases("Sub", func(c *ggml.Context, a, b *ggml.Tensor, in bool) *ggml.Tensor {
		return pick(c, in, func() *ggml.Tensor { return c.Sub(a, b) }, func() *ggml.Tensor { return c.SubInplace(a, b) })
	}, func(x, y float64) float64 { return x - y }, -1, 1)...)
	add(binaryCases("Mul", func(c *ggml.Context, a, b *ggml.Tensor, in bool) *ggml.Tensor {
		return pick(c, in, func() *ggml.Tensor { return c.Mul(a, b) }, func() *ggml.Tensor { return c.MulInplace(a, b) })
	}, func(x, y float64) float64 { return x * y }, -1, 1)...)
	add(binaryCases("Div", func(c *ggml.Context, a, b *ggml.Tensor, in bool) *ggml.Tensor {
		return pick(c, in, func() *ggml.Tensor { return c.Div(a, b) }, func() *ggml.Tensor { return c.DivInplace(a, b) })
	}, func(x, y float64) float64 { return x / y }, 0.5, 2)...)

	add(opCase{name: "AddCast", in: []input{f16in(5, 4), f32(5, 1)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.AddCast(x[0], x[1], ggml.TypeF32) },
		ref:   func(x []*arr) *arr { return refBinary(x[0], x[1], func(a, b float64) float64 { return a + b }) }})
	add(opCase{name: "AddCast/f16", covers: []string{"AddCast"}, in: []input{f16in(5, 4), f32(5, 4)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.AddCast(x[0], x[1], ggml.TypeF16) },
		ref: func(x []*arr) *arr {
			return refBinary(x[0], x[1], func(a, b float64) float64 { return f16(a + b) })
		}, tol: 1e-3})
	for _, inplace := range []bool{false, true} {
		inplace := inplace
		sfx := map[bool]string{false: "", true: "Inplace"}[inplace]
		add(opCase{name: "Add1" + sfx, in: []input{f32(5, 3, 2), f32(1)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				return pick(c, inplace, func() *ggml.Tensor { return c.Add1(x[0], x[1]) }, func() *ggml.Tensor { return c.Add1Inplace(x[0], x[1]) })
			},
			ref: func(x []*arr) *arr { return mapArr(x[0], func(v float64) float64 { return v + x[1].d[0] }) }})
		// a [6,5,2]: nb1 = 24, nb2 = 120, nb3 = 240; window b [3,2,2] at element (1,1,0)
		add(opCase{name: "Acc" + sfx, in: []input{f32(6, 5, 2), f32(3, 2, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				if inplace {
					return c.AccInplace(x[0], x[1], 24, 120, 240, 4*7)
				}
				return c.Acc(x[0], x[1], 24, 120, 240, 4*7)
			},
			ref: func(x []*arr) *arr { return refWindow(x[0], x[1], 24, 120, 240, 4*7, true) }})
		add(opCase{name: "Set" + sfx, in: []input{f32(6, 5, 2), f32(3, 2, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				if inplace {
					return c.SetInplace(x[0], x[1], 24, 120, 240, 4*7)
				}
				return c.Set(x[0], x[1], 24, 120, 240, 4*7)
			},
			ref: func(x []*arr) *arr { return refWindow(x[0], x[1], 24, 120, 240, 4*7, false) }})
		add(opCase{name: "Set1D" + sfx, in: []input{f32(10), f32(4)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				if inplace {
					return c.Set1DInplace(x[0], x[1], 8)
				}
				return c.Set1D(x[0], x[1], 8)
			},
			ref: func(x []*arr) *arr { return refWindow(x[0], x[1], 0, 0, 0, 8, false) }})
		add(opCase{name: "Set2D" + sfx, in: []input{f32(6, 5), f32(3, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				if inplace {
					return c.Set2DInplace(x[0], x[1], 24, 4*8)
				}
				return c.Set2D(x[0], x[1], 24, 4*8)
			},
			ref: func(x []*arr) *arr { return refWindow(x[0], x[1], 24, 0, 0, 4*8, false) }})
		add(opCase{name: "Scale" + sfx, in: []input{f32(5, 3, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				return pick(c, inplace, func() *ggml.Tensor { return c.Scale(x[0], 0.7) }, func() *ggml.Tensor { return c.ScaleInplace(x[0], 0.7) })
			},
			ref: func(x []*arr) *arr { return mapArr(x[0], func(v float64) float64 { return v * float64(float32(0.7)) }) }})
		add(opCase{name: "Norm" + sfx, in: []input{f32(8, 3, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				return pick(c, inplace, func() *ggml.Tensor { return c.Norm(x[0], 1e-5) }, func() *ggml.Tensor { return c.NormInplace(x[0], 1e-5) })
			},
			ref: func(x []*arr) *arr { return refNorm(x[0], float64(float32(1e-5))) }})
		add(opCase{name: "RMSNorm" + sfx, in: []input{f32(8, 3, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				return pick(c, inplace, func() *ggml.Tensor { return c.RMSNorm(x[0], 1e-5) }, func() *ggml.Tensor { return c.RMSNormInplace(x[0], 1e-5) })
			},
			ref: func(x []*arr) *arr { return refRMSNorm(x[0], float64(float32(1e-5))) }})
		add(opCase{name: "GroupNorm" + sfx, in: []input{f32(4, 3, 6, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				return pick(c, inplace, func() *ggml.Tensor { return c.GroupNorm(x[0], 3) }, func() *ggml.Tensor { return c.GroupNormInplace(x[0], 3) })
			},
			ref: func(x []*arr) *arr { return refGroupNorm(x[0], 3) }})
		add(opCase{name: "DiagMaskInf" + sfx, in: []input{f32(5, 4, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				return pick(c, inplace, func() *ggml.Tensor { return c.DiagMaskInf(x[0], 1) }, func() *ggml.Tensor { return c.DiagMaskInfInplace(x[0], 1) })
			},
			ref: func(x []*arr) *arr {
				out := x[0].clone()
				out.each(func(i0, i1, i2, i3 int) {
					if i0 > 1+i1 {
						out.set(i0, i1, i2, i3, math.Inf(-1))
					}
				})
				return out
			}})
		add(opCase{name: "DiagMaskZero" + sfx, in: []input{f32(5, 4, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				return pick(c, inplace, func() *ggml.Tensor { return c.DiagMaskZero(x[0], 2) }, func() *ggml.Tensor { return c.DiagMaskZeroInplace(x[0], 2) })
			},
			ref: func(x []*arr) *arr {
				out := x[0].clone()
				out.each(func(i0, i1, i2, i3 int) {
					if i0 > 2+i1 {
						out.set(i0, i1, i2, i3, 0)
					}
				})
				return out
			}})
		add(opCase{name: "SoftMax" + sfx, in: []input{pos(-3, 3, 7, 4, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				return pick(c, inplace, func() *ggml.Tensor { return c.SoftMax(x[0]) }, func() *ggml.Tensor { return c.SoftMaxInplace(x[0]) })
			},
			ref: func(x []*arr) *arr { return refSoftMax(x[0], nil, 1) }, tol: 1e-3}) // exp may use an F16 table
		for _, mode := range []int{ggml.RopeModeNormal, ggml.RopeModeNeox} {
			mode := mode
			for _, nDims := range []int{8, 4} {
				nDims := nDims
				add(opCase{name: fmt.Sprintf("Rope%s/mode%d/dims%d", sfx, mode, nDims), covers: []string{"Rope" + sfx},
					in: []input{f32(8, 3, 4), i32([]int32{0, 3, 7, 12}, 4)},
					build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
						if inplace {
							return c.RopeInplace(x[0], x[1], nDims, mode, 0)
						}
						return c.Rope(x[0], x[1], nDims, mode, 0)
					},
					ref: func(x []*arr) *arr {
						return refRope(x[0], []int32{0, 3, 7, 12}, nDims, mode, 10000, 1, 1)
					}, tol: 1e-3})
			}
		}
		add(opCase{name: "RopeCustom" + sfx, in: []input{f32(8, 3, 4), i32([]int32{1, 2, 5, 9}, 4)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				if inplace {
					return c.RopeCustomInplace(x[0], x[1], 8, 0, 0, 0, 500, 0.5, 0, 0.8, 32, 1)
				}
				return c.RopeCustom(x[0], x[1], 8, 0, 0, 0, 500, 0.5, 0, 0.8, 32, 1)
			},
			ref: func(x []*arr) *arr {
				return refRope(x[0], []int32{1, 2, 5, 9}, 8, 0, 500, 0.5, float64(float32(0.8)))
			}, tol: 1e-3})
		if !inplace {
			for _, mode := range []int{ggml.RopeModeNormal, ggml.RopeModeNeox} {
				mode := mode
				add(opCase{name: fmt.Sprintf("RopeExt/mode%d", mode),
					in: []input{f32(8, 3, 4), i32([]int32{0, 3, 7, 12}, 4), pos(0.5, 8, 4)},
					build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
						return c.RopeExt(x[0], x[1], x[2], ggml.RopeParams{NDims: 8, Mode: mode, FreqBase: 10000,
							FreqScale: 1, AttnFactor: 1.25})
					},
					ref: func(x []*arr) *arr {
						factors := make([]float64, 4)
						for k := range factors {
							factors[k] = x[2].at(k, 0, 0, 0)
						}
						return refRopeFactors(x[0], []int32{0, 3, 7, 12}, 8, mode, 10000, 1.25, factors)
					}, tol: 1e-3})
			}
		}
		add(opCase{name: "Dup" + sfx, in: []input{f32(5, 3, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				return pick(c, inplace, func() *ggml.Tensor { return c.Dup(x[0]) }, func() *ggml.Tensor { return c.DupInplace(x[0]) })
			},
			ref: func(x []*arr) *arr { return x[0].clone() }})
	}

	// reductions
	add(opCase{name: "Sum", in: []input{f32(5, 3, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Sum(x[0]) },
		ref:   func(x []*arr) *arr { r := newArr(1); r.d[0] = sum(x[0].d); return r }})
	add(opCase{name: "SumRows", in: []input{f32(5, 3, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.SumRows(x[0]) },
		ref:   func(x []*arr) *arr { return refRowReduce(x[0], sum) }})
	add(opCase{name: "Mean", in: []input{f32(5, 3, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Mean(x[0]) },
		ref: func(x []*arr) *arr {
			return refRowReduce(x[0], func(r []float64) float64 { return sum(r) / float64(len(r)) })
		}})
	add(opCase{name: "Argmax", in: []input{f32(7, 4)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Argmax(x[0]) },
		ref: func(x []*arr) *arr {
			r := refRowReduce(x[0], func(row []float64) float64 {
				best := 0
				for i, v := range row {
					if v > row[best] {
						best = i
					}
				}
				return float64(best)
			})
			return reshaped(r, 4)
		}})

	// layout and copies
	add(opCase{name: "Repeat", in: []input{f32(2, 3, 1), f32(4, 6, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Repeat(x[0], x[1]) },
		ref: func(x []*arr) *arr {
			out := newArr(x[1].ne[:]...)
			out.each(func(i0, i1, i2, i3 int) {
				a := x[0]
				out.set(i0, i1, i2, i3, a.at(i0%a.ne[0], i1%a.ne[1], i2%a.ne[2], i3%a.ne[3]))
			})
			return out
		}})
	add(opCase{name: "Concat", in: []input{f32(3, 2, 2), f32(3, 2, 3)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Concat(x[0], x[1]) },
		ref: func(x []*arr) *arr {
			out := newArr(3, 2, 5)
			out.each(func(i0, i1, i2, i3 int) {
				if i2 < 2 {
					out.set(i0, i1, i2, i3, x[0].at(i0, i1, i2, i3))
				} else {
					out.set(i0, i1, i2, i3, x[1].at(i0, i1, i2-2, i3))
				}
			})
			return out
		}})
	add(opCase{name: "Cpy", in: []input{f32(4, 3), f32(4, 3)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Cpy(x[0], x[1]) },
		ref:   func(x []*arr) *arr { return x[0].clone() }})
	add(opCase{name: "Cpy/f16", covers: []string{"Cpy"}, in: []input{f32(4, 3), f16in(12)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Cpy(x[0], x[1]) },
		ref:   func(x []*arr) *arr { return reshaped(mapArr(x[0], f16), 12) }, tol: 1e-3})
	add(opCase{name: "Cast", in: []input{f32(4, 3)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Cast(x[0], ggml.TypeF16) },
		ref:   func(x []*arr) *arr { return mapArr(x[0], f16) }, tol: 1e-3})
	add(opCase{name: "Cont", in: []input{f32(4, 3, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Cont(c.Transpose(x[0])) },
		ref:   func(x []*arr) *arr { return refPermute(x[0], [4]int{1, 0, 2, 3}) }, covers: []string{"Transpose"}})
	contShapes := map[string][]int{"Cont1D": {24}, "Cont2D": {6, 4}, "Cont3D": {2, 3, 4}, "Cont4D": {2, 2, 3, 2}}
	for name, shp := range contShapes {
		name, shp := name, shp
		add(opCase{name: name, in: []input{f32(4, 3, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				p := c.Permute(x[0], 2, 0, 1, 3) // non-contiguous source
				switch len(shp) {
				case 1:
					return c.Cont1D(p, int64(shp[0]))
				case 2:
					return c.Cont2D(p, int64(shp[0]), int64(shp[1]))
				case 3:
					return c.Cont3D(p, int64(shp[0]), int64(shp[1]), int64(shp[2]))
				}
				return c.Cont4D(p, int64(shp[0]), int64(shp[1]), int64(shp[2]), int64(shp[3]))
			},
			ref: func(x []*arr) *arr { return reshaped(refPermute(x[0], [4]int{2, 0, 1, 3}), shp...) }})
	}
	add(opCase{name: "Reshape", in: []input{f32(4, 3, 2), f32(6, 4)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Reshape(x[0], x[1]) },
		ref:   func(x []*arr) *arr { return reshaped(x[0], 6, 4) }})
	reshapeShapes := map[string][]int{"Reshape1D": {24}, "Reshape2D": {8, 3}, "Reshape3D": {2, 6, 2}, "Reshape4D": {2, 3, 2, 2}}
	for name, shp := range reshapeShapes {
		name, shp := name, shp
		add(opCase{name: name, in: []input{f32(4, 3, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
				switch len(shp) {
				case 1:
					return c.Reshape1D(x[0], int64(shp[0]))
				case 2:
					return c.Reshape2D(x[0], int64(shp[0]), int64(shp[1]))
				case 3:
					return c.Reshape3D(x[0], int64(shp[0]), int64(shp[1]), int64(shp[2]))
				}
				return c.Reshape4D(x[0], int64(shp[0]), int64(shp[1]), int64(shp[2]), int64(shp[3]))
			},
			ref: func(x []*arr) *arr { return reshaped(x[0], shp...) }})
	}
	// views of a [6,5,4,2] F32: nb = 4, 24, 120, 480
	add(opCase{name: "View1D", in: []input{f32(6, 5, 4, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.View1D(x[0], 7, 4*3) },
		ref:   func(x []*arr) *arr { return strided(x[0], [4]int{7, 1, 1, 1}, [4]int{4, 28, 28, 28}, 12) }})
	add(opCase{name: "View2D", in: []input{f32(6, 5, 4, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.View2D(x[0], 3, 4, 48, 4*2) },
		ref:   func(x []*arr) *arr { return strided(x[0], [4]int{3, 4, 1, 1}, [4]int{4, 48, 192, 192}, 8) }})
	add(opCase{name: "View3D", in: []input{f32(6, 5, 4, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.View3D(x[0], 2, 3, 4, 24, 120, 4*7) },
		ref:   func(x []*arr) *arr { return strided(x[0], [4]int{2, 3, 4, 1}, [4]int{4, 24, 120, 480}, 28) }})
	add(opCase{name: "View4D", in: []input{f32(6, 5, 4, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
			return c.View4D(x[0], 3, 2, 2, 2, 48, 240, 480, 4)
		},
		ref: func(x []*arr) *arr { return strided(x[0], [4]int{3, 2, 2, 2}, [4]int{4, 48, 240, 480}, 4) }})
	add(opCase{name: "Permute", in: []input{f32(4, 3, 2, 5)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Permute(x[0], 1, 2, 0, 3) },
		ref:   func(x []*arr) *arr { return refPermute(x[0], [4]int{1, 2, 0, 3}) }})
	add(opCase{name: "Transpose", in: []input{f32(4, 3, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Transpose(x[0]) },
		ref:   func(x []*arr) *arr { return refPermute(x[0], [4]int{1, 0, 2, 3}) }})
	add(opCase{name: "GetRows", in: []input{f32(5, 6), i32([]int32{3, 0, 5, 3}, 4)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.GetRows(x[0], x[1]) },
		ref: func(x []*arr) *arr {
			out := newArr(5, 4)
			out.each(func(i0, i1, _, _ int) { out.set(i0, i1, 0, 0, x[0].at(i0, int(x[1].d[i1]), 0, 0)) })
			return out
		}})
	add(opCase{name: "GetRows/3d", covers: []string{"GetRows"}, in: []input{f32(5, 6, 2), i32([]int32{1, 2, 5, 0, 0, 4}, 3, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.GetRows(x[0], x[1]) },
		ref: func(x []*arr) *arr {
			out := newArr(5, 3, 2)
			out.each(func(i0, i1, i2, _ int) {
				out.set(i0, i1, i2, 0, x[0].at(i0, int(x[1].at(i1, i2, 0, 0)), i2, 0))
			})
			return out
		}})
	add(opCase{name: "Diag", in: []input{f32(4, 1, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Diag(x[0]) },
		ref: func(x []*arr) *arr {
			out := newArr(4, 4, 2)
			for i2 := 0; i2 < 2; i2++ {
				for i := 0; i < 4; i++ {
					out.set(i, i, i2, 0, x[0].at(i, 0, i2, 0))
				}
			}
			return out
		}})

	// matrix products
	add(opCase{name: "MulMat", in: []input{f32(8, 5, 2, 1), f32(8, 3, 4, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.MulMat(x[0], x[1]) },
		ref:   func(x []*arr) *arr { return refMulMat(x[0], x[1]) }})
	add(opCase{name: "MulMat/f16", covers: []string{"MulMat"}, in: []input{f16in(32, 6), f32(32, 5)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.MulMat(x[0], x[1]) },
		ref: func(x []*arr) *arr {
			return refMulMat(x[0], mapArr(x[1], f16))
		}, tol: 2e-3})
	// the layer every backend test used to check on its own (rpc_test.go, cuda_backend_test.go):
	// SILU(MUL_MAT) with a long dot product
	add(opCase{name: "MulMat/silu_k256", covers: []string{"MulMat", "Silu"}, in: []input{f32(256, 64), f32(256, 4)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Silu(c.MulMat(x[0], x[1])) },
		ref: func(x []*arr) *arr {
			return mapArr(refMulMat(x[0], x[1]), func(v float64) float64 { return v * sigmoid(v) })
		}, tol: 1e-4})
	add(opCase{name: "MulMatID", in: []input{f32(6, 4), f32(6, 4), f32(6, 4), i32([]int32{0, 2, 1, 1, 2, 0, 0, 0, 1, 2}, 2, 5), f32(6, 5)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
			return c.MulMatID([]*ggml.Tensor{x[0], x[1], x[2]}, x[3], 1, x[4])
		},
		ref: func(x []*arr) *arr {
			out := newArr(4, 5)
			for r := 0; r < 5; r++ {
				e := int(x[3].at(1, r, 0, 0))
				for i := 0; i < 4; i++ {
					s := 0.0
					for k := 0; k < 6; k++ {
						s += x[e].at(k, i, 0, 0) * x[4].at(k, r, 0, 0)
					}
					out.set(i, r, 0, 0, s)
				}
			}
			return out
		}})
	add(opCase{name: "OutProd", in: []input{f32(4, 6), f32(3, 6)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.OutProd(x[0], x[1]) },
		ref:   func(x []*arr) *arr { return refOutProd(x[0], x[1]) }})

	// training ops (ops_train_test.go)
	add(trainOpCases()...)

	// attention helpers
	add(opCase{name: "SoftMaxExt", in: []input{pos(-3, 3, 7, 4, 2), f32(7, 4)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.SoftMaxExt(x[0], x[1], 0.5) },
		ref:   func(x []*arr) *arr { return refSoftMax(x[0], x[1], 0.5) }, tol: 1e-3})
	add(opCase{name: "SoftMaxExt/nomask", covers: []string{"SoftMaxExt"}, in: []input{pos(-3, 3, 7, 4, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.SoftMaxExt(x[0], nil, 0.25) },
		ref:   func(x []*arr) *arr { return refSoftMax(x[0], nil, 0.25) }, tol: 1e-3})
	// q [8, 4 heads, 3 tokens] over k [8, 5 cells, 2 KV heads], v [5, 8, 2], mask [5, 3]
	add(opCase{name: "AttnMasked", in: []input{f32(8, 4, 3), f32(8, 5, 2), f32(5, 8, 2), pos(-2, 0, 5, 3)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
			return c.AttnMasked(x[0], x[1], x[2], x[3], 0.35, 0)
		},
		ref: func(x []*arr) *arr { return refAttnMasked(x[0], x[1], x[2], x[3], 0.35) }, tol: 1e-3})
	// the same with v by cells, [8 values, 5 cells, 2 KV heads]
	add(opCase{name: "AttnMaskedVRows", in: []input{f32(8, 4, 3), f32(8, 5, 2), f32(8, 5, 2), pos(-2, 0, 5, 3)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
			return c.AttnMaskedVRows(x[0], x[1], x[2], x[3], 0.35, 0)
		},
		ref: func(x []*arr) *arr {
			v := x[2]
			vt := newArr(v.ne[1], v.ne[0], v.ne[2])
			v.each(func(i0, i1, i2, i3 int) { vt.set(i1, i0, i2, i3, v.at(i0, i1, i2, i3)) })
			return refAttnMasked(x[0], x[1], vt, x[3], 0.35)
		}, tol: 1e-3})
	add(opCase{name: "Alibi", in: []input{f32(6, 3, 5)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Alibi(x[0], 0, 5, 8) },
		ref:   func(x []*arr) *arr { return refAlibi(x[0], 5, 8) }, tol: 1e-4})
	add(opCase{name: "Clamp", in: []input{f32(6, 3)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Clamp(x[0], -0.5, 0.25) },
		ref: func(x []*arr) *arr {
			return mapArr(x[0], func(v float64) float64 { return math.Min(math.Max(v, -0.5), 0.25) })
		}})

	// convolutions and pooling (kernels F16 as the reference requires; im2col results are F16)
	add(opCase{name: "Im2Col", in: []input{f16in(3, 2, 2, 2), f32(7, 6, 2, 1)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
			return c.Im2Col(x[0], x[1], 2, 1, 1, 0, 1, 2, true)
		},
		ref: func(x []*arr) *arr { return mapArr(refIm2Col2D(3, 2, x[1], 2, 1, 1, 0, 1, 2), f16) }, tol: 1e-3})
	add(opCase{name: "Im2Col/1d", covers: []string{"Im2Col"}, in: []input{f16in(3, 2, 4), f32(9, 2, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor {
			return c.Im2Col(x[0], x[1], 1, 0, 1, 0, 2, 0, false)
		},
		ref: func(x []*arr) *arr { return mapArr(refIm2Col1D(3, x[1], 1, 1, 2), f16) }, tol: 1e-3})
	add(opCase{name: "Conv1D", in: []input{f16in(3, 2, 4), f32(9, 2, 1)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Conv1D(x[0], x[1], 2, 1, 1) },
		ref:   func(x []*arr) *arr { return refConv1D(x[0], mapArr(x[1], f16), 2, 1, 1) }, tol: 2e-3})
	add(opCase{name: "Conv1DPH", in: []input{f16in(3, 2, 4), f32(9, 2, 1)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Conv1DPH(x[0], x[1], 1, 1) },
		ref:   func(x []*arr) *arr { return refConv1D(x[0], mapArr(x[1], f16), 1, 1, 1) }, tol: 2e-3})
	add(opCase{name: "ConvTranspose1D", in: []input{f16in(3, 4, 2), f32(5, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.ConvTranspose1D(x[0], x[1], 2, 0, 1) },
		ref:   func(x []*arr) *arr { return refConvTranspose1D(x[0], mapArr(x[1], f16), 2) }, tol: 2e-3})
	add(opCase{name: "Conv2D", in: []input{f16in(3, 3, 2, 4), f32(8, 7, 2, 1)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Conv2D(x[0], x[1], 1, 2, 1, 0, 1, 1) },
		ref:   func(x []*arr) *arr { return refConv2D(x[0], mapArr(x[1], f16), 1, 2, 1, 0, 1, 1) }, tol: 2e-3})
	add(opCase{name: "Conv2D/batch", covers: []string{"Conv2D"}, in: []input{f16in(2, 2, 3, 2), f32(5, 4, 3, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Conv2D(x[0], x[1], 1, 1, 0, 1, 1, 1) },
		ref:   func(x []*arr) *arr { return refConv2D(x[0], mapArr(x[1], f16), 1, 1, 0, 1, 1, 1) }, tol: 2e-3})
	add(opCase{name: "Conv2DSKP0", in: []input{f16in(2, 2, 2, 3), f32(6, 4, 2, 1)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Conv2DSKP0(x[0], x[1]) },
		ref:   func(x []*arr) *arr { return refConv2D(x[0], mapArr(x[1], f16), 2, 2, 0, 0, 1, 1) }, tol: 2e-3})
	add(opCase{name: "Conv2DS1PH", in: []input{f16in(3, 3, 2, 2), f32(5, 5, 2, 1)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Conv2DS1PH(x[0], x[1]) },
		ref:   func(x []*arr) *arr { return refConv2D(x[0], mapArr(x[1], f16), 1, 1, 1, 1, 1, 1) }, tol: 2e-3})
	add(opCase{name: "ConvTranspose2DP0", in: []input{f16in(2, 3, 3, 2), f32(4, 3, 2, 1)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.ConvTranspose2DP0(x[0], x[1], 2) },
		ref:   func(x []*arr) *arr { return refConvTranspose2D(x[0], mapArr(x[1], f16), 2) }, tol: 2e-3})
	for _, op := range []ggml.PoolOp{ggml.PoolMax, ggml.PoolAvg} {
		op := op
		add(opCase{name: "Pool1D/" + op.String(), covers: []string{"Pool1D"}, in: []input{f32(9, 3)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Pool1D(x[0], op, 3, 2, 0) },
			ref:   func(x []*arr) *arr { return refPool1D(x[0], op == ggml.PoolMax, 3, 2) }})
		add(opCase{name: "Pool2D/" + op.String(), covers: []string{"Pool2D"}, in: []input{f32(7, 6, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Pool2D(x[0], op, 2, 3, 2, 1, 0, 0) },
			ref:   func(x []*arr) *arr { return refPool2D(x[0], op == ggml.PoolMax, 2, 3, 2, 1) }})
	}
	add(opCase{name: "Upscale", in: []input{f32(3, 2, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Upscale(x[0], 2) },
		ref: func(x []*arr) *arr {
			out := newArr(6, 4, 2)
			out.each(func(i0, i1, i2, i3 int) { out.set(i0, i1, i2, i3, x[0].at(i0/2, i1/2, i2, i3)) })
			return out
		}})
	add(opCase{name: "Pad", in: []input{f32(3, 2, 2)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Pad(x[0], 1, 2, 0, 1) },
		ref: func(x []*arr) *arr {
			out := newArr(4, 4, 2, 2)
			x[0].each(func(i0, i1, i2, i3 int) { out.set(i0, i1, i2, i3, x[0].at(i0, i1, i2, i3)) })
			return out
		}})
	for _, order := range []ggml.SortOrder{ggml.SortAsc, ggml.SortDesc} {
		order := order
		add(opCase{name: "Argsort/" + order.String(), covers: []string{"Argsort"}, in: []input{f32(6, 3, 2)},
			build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.Argsort(x[0], order) },
			ref:   func(x []*arr) *arr { return refArgsort(x[0], order == ggml.SortDesc) }})
	}
	add(opCase{name: "TopK", in: []input{f32(6, 3)},
		build: func(c *ggml.Context, x []*ggml.Tensor) *ggml.Tensor { return c.TopK(x[0], 2) },
		ref: func(x []*arr) *arr {
			s := refArgsort(x[0], true)
			return strided(s, [4]int{2, 3, 1, 1}, [4]int{4, 24, 72, 72}, 0)
		}})
	return cs
}

func newTestCPU(t *testing.T, threads int) *ggml.Backend {
	t.Helper()
	be, err := ggml.NewCPU(ggml.WithThreads(threads))
	require.NoError(t, err)
	t.Cleanup(func() { be.Close() })
	return be
}

func TestOps(t *testing.T) {
	start := ggml.LiveObjects()
	be := newTestCPU(t, 1)
	for _, threads := range []int{1, 2} {
		require.NoError(t, be.SetThreads(threads))
		for _, tc := range allOpCases() {
			tc := tc
			t.Run(fmt.Sprintf("%s/threads=%d", tc.name, threads), func(t *testing.T) {
				runOpCase(t, be, tc)
			})
		}
	}
	be.Close()
	require.Equal(t, start, ggml.LiveObjects(), "live objects: %v", ggml.LiveObjectsByKind())
}

// nonOpMethods are *Context methods returning a *Tensor that are not graph operations; they are
// tested in the root package. Methods of the custom-op helper (MapCustom*) are tested in
// custom_test.go.
var nonOpMethods = map[string]bool{
	"NewTensor": true, "NewTensor1D": true, "NewTensor2D": true, "NewTensor3D": true, "NewTensor4D": true,
	"NewI32": true, "NewF32": true, "DupTensor": true, "ViewTensor": true, "Tensor": true,
	"SetParam": true, // marks a tensor for autodiff (autodiff_test.go)
}

// opMethods lists the graph-operation methods of *ggml.Context.
func opMethods() []string {
	tensorType := reflect.TypeOf((*ggml.Tensor)(nil))
	ct := reflect.TypeOf((*ggml.Context)(nil))
	var out []string
	for i := 0; i < ct.NumMethod(); i++ {
		m := ct.Method(i)
		if m.Type.NumOut() != 1 || m.Type.Out(0) != tensorType || nonOpMethods[m.Name] || strings.HasPrefix(m.Name, "MapCustom") {
			continue
		}
		out = append(out, m.Name)
	}
	sort.Strings(out)
	return out
}

// TestOpCoverage fails when an op wrapper has no numeric case in allOpCases.
func TestOpCoverage(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range allOpCases() {
		covered[strings.SplitN(tc.name, "/", 2)[0]] = true
		for _, c := range tc.covers {
			covered[c] = true
		}
	}
	var missing []string
	methods := opMethods()
	for _, m := range methods {
		if !covered[m] {
			missing = append(missing, m)
		}
	}
	require.Empty(t, missing, "op wrappers without a reference test")
	require.GreaterOrEqual(t, len(methods), 110)
	t.Logf("%d op wrappers covered by %d cases", len(methods), len(allOpCases()))
}

// refAttnMasked is AttnMasked in float64: query head h of token n reads KV head h / (H/Hk),
// p = softmax(scale * k.q + mask row n), out[:, h, n] = sum_m p_m v[m, :].
func refAttnMasked(q, k, v, mask *arr, scale float64) *arr {
	d, h, n := q.ne[0], q.ne[1], q.ne[2]
	m, hk, dv := k.ne[1], k.ne[2], v.ne[1]
	out := newArr(dv, h, n)
	for t := 0; t < n; t++ {
		for hh := 0; hh < h; hh++ {
			g := hh / (h / hk)
			s := make([]float64, m)
			mx := math.Inf(-1)
			for c := 0; c < m; c++ {
				dot := 0.0
				for i := 0; i < d; i++ {
					dot += k.at(i, c, g, 0) * q.at(i, hh, t, 0)
				}
				s[c] = scale*dot + mask.at(c, t, 0, 0)
				mx = math.Max(mx, s[c])
			}
			sum := 0.0
			for c := range s {
				s[c] = math.Exp(s[c] - mx)
				sum += s[c]
			}
			for i := 0; i < dv; i++ {
				o := 0.0
				for c := 0; c < m; c++ {
					o += s[c] / sum * v.at(c, i, g, 0)
				}
				out.set(i, hh, t, 0, o)
			}
		}
	}
	return out
}
