//go:build cgo

package ggml

import (
	"fmt"
	"sync"
	"testing"
)

// FuzzConstructors drives the op constructors with random choices, shapes, types and
// parameters taken from the fuzz input. Every call must either succeed or panic with a *Error:
// any other panic fails, and a C assertion would abort the whole process (the fuzzer reports
// it as a crash). When the input asks for it and every node is supported, the graph is also
// computed on a CPU backend, with all memory zeroed (so indices are valid): compute must not
// crash on a node that SupportsOp accepted.
//
//	go test -run='^$' -fuzz=FuzzConstructors -fuzztime=60s .
func FuzzConstructors(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzOnce(t, data)
	})
}

// fuzzReader hands out values from the fuzz input (zeros when it is exhausted).
type fuzzReader struct {
	data []byte
	pos  int
}

func (r *fuzzReader) byte() byte {
	if r.pos >= len(r.data) {
		return 0
	}
	b := r.data[r.pos]
	r.pos++
	return b
}

func (r *fuzzReader) n(n int) int { return int(r.byte()) % n }

// dim returns an extent: mostly small, sometimes 0, negative or huge.
func (r *fuzzReader) dim() int64 {
	switch b := r.byte(); {
	case b < 200:
		return int64(b%6) + 1
	case b < 215:
		return int64(b%40) + 1
	case b < 225:
		return 0
	case b < 235:
		return -int64(b % 3)
	case b < 245:
		return 1 << 20
	default:
		return 1 << 40
	}
}

// int returns a parameter: mostly small, sometimes negative or extreme.
func (r *fuzzReader) int() int {
	switch b := r.byte(); {
	case b < 200:
		return int(b % 8)
	case b < 230:
		return -int(b%4) - 1
	case b < 240:
		return int(b) << 8
	case b < 250:
		return 1 << 30
	default:
		return -1 << 31
	}
}

func (r *fuzzReader) float() float32 {
	vals := []float32{0, 1, -1, 0.5, 1e-5, 1e4, -1e30, 2, 10000, 0.25}
	return vals[r.n(len(vals))]
}

func (r *fuzzReader) size() uint64 {
	switch b := r.byte(); {
	case b < 200:
		return uint64(b%16) * 4
	case b < 240:
		return uint64(b) * 2
	default:
		return 1 << 40
	}
}

func (r *fuzzReader) typ() Type {
	types := []Type{TypeF32, TypeF32, TypeF32, TypeF16, TypeF16, TypeI32, TypeI32, TypeQ4_0, TypeQ8_0, TypeQ4_K,
		TypeI8, TypeI16, TypeQ5_1, Type(4), Type(-1), Type(50)}
	return types[r.n(len(types))]
}

type fuzzCtor struct {
	name string
	call func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor
}

var fuzzCtors = []fuzzCtor{
	{"NewTensor", func(r *fuzzReader, c *Context, _ func() *Tensor) *Tensor {
		nd := r.n(6)
		ne := make([]int64, nd)
		for i := range ne {
			ne[i] = r.dim()
		}
		return c.NewTensor(r.typ(), ne...)
	}},
	{"Dup", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Dup(x()) }},
	{"Add", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Add(x(), x()) }},
	{"AddInplace", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.AddInplace(x(), x()) }},
	{"AddCast", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.AddCast(x(), x(), r.typ()) }},
	{"Add1", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Add1(x(), x()) }},
	{"Acc", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Acc(x(), x(), r.size(), r.size(), r.size(), r.size())
	}},
	{"Sub", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Sub(x(), x()) }},
	{"Mul", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Mul(x(), x()) }},
	{"Div", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Div(x(), x()) }},
	{"Sqr", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Sqr(x()) }},
	{"SqrtInplace", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.SqrtInplace(x()) }},
	{"Log", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Log(x()) }},
	{"Sum", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Sum(x()) }},
	{"SumRows", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.SumRows(x()) }},
	{"Mean", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Mean(x()) }},
	{"Argmax", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Argmax(x()) }},
	{"Repeat", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Repeat(x(), x()) }},
	{"Concat", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Concat(x(), x()) }},
	{"Unary", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Unary(x(), UnaryOp(r.n(12))) }},
	{"UnaryInplace", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.UnaryInplace(x(), UnaryOp(r.n(12)))
	}},
	{"LeakyRelu", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.LeakyRelu(x(), r.float()) }},
	{"Norm", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Norm(x(), r.float()) }},
	{"RMSNormInplace", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.RMSNormInplace(x(), r.float()) }},
	{"GroupNorm", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.GroupNorm(x(), r.int()) }},
	{"MulMat", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.MulMat(x(), x()) }},
	{"MulMatID", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		as := make([]*Tensor, r.n(4)+1)
		for i := range as {
			as[i] = x()
		}
		return c.MulMatID(as, x(), r.int(), x())
	}},
	{"OutProd", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.OutProd(x(), x()) }},
	{"Scale", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Scale(x(), r.float()) }},
	{"Set", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Set(x(), x(), r.size(), r.size(), r.size(), r.size())
	}},
	{"Set1D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Set1D(x(), x(), r.size()) }},
	{"Set2DInplace", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Set2DInplace(x(), x(), r.size(), r.size())
	}},
	{"Cpy", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Cpy(x(), x()) }},
	{"Cast", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Cast(x(), r.typ()) }},
	{"Cont", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Cont(x()) }},
	{"Cont2D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Cont2D(x(), r.dim(), r.dim()) }},
	{"Cont4D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Cont4D(x(), r.dim(), r.dim(), r.dim(), r.dim())
	}},
	{"Reshape", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Reshape(x(), x()) }},
	{"Reshape1D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Reshape1D(x(), r.dim()) }},
	{"Reshape3D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Reshape3D(x(), r.dim(), r.dim(), r.dim())
	}},
	{"View1D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.View1D(x(), r.dim(), r.size()) }},
	{"View2D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.View2D(x(), r.dim(), r.dim(), r.size(), r.size())
	}},
	{"View3D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.View3D(x(), r.dim(), r.dim(), r.dim(), r.size(), r.size(), r.size())
	}},
	{"View4D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.View4D(x(), r.dim(), r.dim(), r.dim(), r.dim(), r.size(), r.size(), r.size(), r.size())
	}},
	{"Permute", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Permute(x(), r.n(5), r.n(5), r.n(5), r.n(5))
	}},
	{"Transpose", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Transpose(x()) }},
	{"GetRows", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.GetRows(x(), x()) }},
	{"Diag", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Diag(x()) }},
	{"DiagMaskInf", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.DiagMaskInf(x(), r.int()) }},
	{"DiagMaskZeroInplace", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.DiagMaskZeroInplace(x(), r.int())
	}},
	{"SoftMax", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.SoftMax(x()) }},
	{"SoftMaxExt", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		var mask *Tensor
		if r.n(2) == 1 {
			mask = x()
		}
		return c.SoftMaxExt(x(), mask, r.float())
	}},
	{"Rope", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Rope(x(), x(), r.int(), r.n(8), r.int())
	}},
	{"RopeCustomInplace", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.RopeCustomInplace(x(), x(), r.int(), r.n(8), r.int(), r.int(), r.float(), r.float(), r.float(), r.float(), r.float(), r.float())
	}},
	{"Alibi", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Alibi(x(), r.int(), r.int(), r.float())
	}},
	{"Clamp", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Clamp(x(), r.float(), r.float()) }},
	{"Im2Col", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Im2Col(x(), x(), r.int(), r.int(), r.int(), r.int(), r.int(), r.int(), r.n(2) == 1)
	}},
	{"Conv1D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Conv1D(x(), x(), r.int(), r.int(), r.int())
	}},
	{"Conv1DPH", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Conv1DPH(x(), x(), r.int(), r.int())
	}},
	{"ConvTranspose1D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.ConvTranspose1D(x(), x(), r.int(), r.int(), r.int())
	}},
	{"Conv2D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Conv2D(x(), x(), r.int(), r.int(), r.int(), r.int(), r.int(), r.int())
	}},
	{"Conv2DSKP0", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Conv2DSKP0(x(), x()) }},
	{"Conv2DS1PH", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Conv2DS1PH(x(), x()) }},
	{"ConvTranspose2DP0", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.ConvTranspose2DP0(x(), x(), r.int())
	}},
	{"Pool1D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Pool1D(x(), PoolOp(r.n(3)), r.int(), r.int(), r.int())
	}},
	{"Pool2D", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Pool2D(x(), PoolOp(r.n(3)), r.int(), r.int(), r.int(), r.int(), r.float(), r.float())
	}},
	{"Upscale", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Upscale(x(), r.int()) }},
	{"Pad", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor {
		return c.Pad(x(), r.int(), r.int(), r.int(), r.int())
	}},
	{"Argsort", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.Argsort(x(), SortOrder(r.n(3))) }},
	{"TopK", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.TopK(x(), r.int()) }},
	{"DupTensor", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.DupTensor(x()) }},
	{"ViewTensor", func(r *fuzzReader, c *Context, x func() *Tensor) *Tensor { return c.ViewTensor(x()) }},
}

var fuzzBackend struct {
	once sync.Once
	be   *Backend
	err  error
}

func fuzzOnce(t *testing.T, data []byte) {
	r := &fuzzReader{data: data}
	ctx, err := NewContext(Params{MemSize: 256*TensorOverhead() + GraphOverhead(), NoAlloc: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()

	// protect runs a constructor: a *Error panic is the expected way to fail
	protect := func(what string, f func() *Tensor) (res *Tensor, ok bool) {
		defer func() {
			if p := recover(); p != nil {
				if _, isErr := p.(*Error); !isErr {
					t.Fatalf("%s panicked with %T %v (want *ggml.Error)", what, p, p)
				}
				ok = false
			}
		}()
		return f(), true
	}

	var pool []*Tensor
	for i, n := 0, r.n(3)+2; i < n; i++ {
		nd := r.n(4) + 1
		ne := make([]int64, nd)
		for j := range ne {
			ne[j] = r.dim()
		}
		typ := r.typ()
		if tt, ok := protect(fmt.Sprintf("NewTensor(%v, %v)", typ, ne), func() *Tensor { return ctx.NewTensor(typ, ne...) }); ok {
			pool = append(pool, tt)
		}
	}
	if len(pool) == 0 {
		return
	}
	pickT := func() *Tensor { return pool[r.n(len(pool))] }
	var results []*Tensor
	allOK := true
	for i, n := 0, r.n(4)+1; i < n; i++ {
		c := fuzzCtors[r.n(len(fuzzCtors))]
		res, ok := protect(c.name, func() *Tensor { return c.call(r, ctx, pickT) })
		if !ok {
			allOK = false
			continue
		}
		if res == nil {
			t.Fatalf("%s returned nil without panicking", c.name)
		}
		pool = append(pool, res)
		results = append(results, res)
	}

	// optionally build and compute the graph
	if r.n(4) != 0 || !allOK || len(results) == 0 {
		return
	}
	var g *Graph
	for _, res := range results {
		if _, ok := protect("graph", func() *Tensor {
			if g == nil {
				g = ctx.NewGraphCustom(64, false)
			}
			g.BuildForwardExpand(res)
			return res
		}); !ok {
			return
		}
	}
	// keep the computation small: kernels loop over rows, so a tensor with no elements but
	// 2^40 rows would take forever (not a crash, but not a useful test either)
	var total uint64
	for _, tt := range ctx.Tensors() {
		ne := tt.Ne()
		rows := ne[1] * ne[2] * ne[3]
		if tt.NumElements() == 0 || rows > 1<<16 || ne[0] > 1<<16 {
			return
		}
		total += tt.Nbytes()
	}
	if total > 16<<20 {
		return
	}
	fuzzBackend.once.Do(func() { fuzzBackend.be, fuzzBackend.err = NewCPU(WithThreads(2)) })
	if fuzzBackend.err != nil {
		t.Fatal(fuzzBackend.err)
	}
	be := fuzzBackend.be
	for _, node := range g.Nodes() {
		if !be.SupportsOp(node) {
			return
		}
	}
	buf, err := AllocContextTensors(ctx, be)
	if err != nil {
		return
	}
	defer buf.Close()
	buf.Clear(0)
	_ = be.Compute(g) // errors are fine; crashes are not
}
