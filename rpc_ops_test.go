//go:build cgo

package ggml_test

import (
	"math"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// rpcOpCase builds one op from the inputs a, b [8,4,4], m [8,4] (F32) and idx [4] (I32).
type rpcOpCase struct {
	name  string
	build func(ctx *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor
}

var rpcOpCases = []rpcOpCase{
	{"add", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.Add(a, b) }},
	{"add_bcast", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.Add(a, m) }},
	{"sub", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.Sub(a, b) }},
	{"mul", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.Mul(a, b) }},
	{"div", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor {
		return c.Div(a, c.Add1(c.Sqr(b), c.Sum(m)))
	}},
	{"sqrt_log", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.Log(c.Sqrt(c.Sqr(a))) }},
	{"sum_rows_mean", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.Add(c.SumRows(a), c.Mean(b)) }},
	{"argmax", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor {
		return c.GetRows(c.Reshape2D(a, 8, 16), c.Argmax(m))
	}},
	{"repeat", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.Repeat(m, a) }},
	{"concat", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.Concat(a, b) }},
	{"unary", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor {
		return c.Add(c.Add(c.Add(c.Abs(a), c.Sgn(a)), c.Add(c.Neg(a), c.Step(a))),
			c.Add(c.Add(c.Tanh(a), c.Elu(a)), c.Add(c.Relu(a), c.Gelu(a))))
	}},
	{"gelu_quick_silu", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.Mul(c.GeluQuick(a), c.Silu(b)) }},
	{"leaky_relu_clamp", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor {
		return c.Clamp(c.LeakyRelu(a, 0.1), -0.5, 0.5)
	}},
	{"norm", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor {
		return c.Add(c.Norm(a, 1e-5), c.RMSNorm(b, 1e-6))
	}},
	{"mul_mat", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.MulMat(a, b) }},
	{"out_prod", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.OutProd(a, b) }},
	{"scale", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.Scale(a, -0.75) }},
	{"cpy_f16", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor {
		return c.Cpy(a, c.NewTensor3D(ggml.TypeF16, 8, 4, 4))
	}},
	{"views", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor {
		v := c.Cont(c.Permute(c.Reshape2D(a, 16, 8), 1, 0, 2, 3))
		w := c.Cont(c.Transpose(c.View2D(b, 4, 8, 16, 4)))
		return c.Add(c.Reshape2D(v, 16, 8), c.Reshape2D(c.Cont(c.Transpose(w)), 16, 2))
	}},
	{"get_rows", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor {
		return c.GetRows(c.Reshape2D(a, 8, 16), idx)
	}},
	{"diag_mask_soft_max", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor {
		return c.SoftMax(c.DiagMaskInf(c.Cont(c.View2D(a, 4, 4, 32, 0)), 1))
	}},
	{"soft_max_ext", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor { return c.SoftMaxExt(a, m, 0.5) }},
	{"rope", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor {
		return c.Add(c.Rope(a, idx, 8, 0, 0), c.Rope(b, idx, 8, 2, 0))
	}},
	{"acc_dup", func(c *ggml.Context, a, b, m, idx *ggml.Tensor) *ggml.Tensor {
		return c.Dup(c.Acc(a, m, a.Nb()[1], a.Nb()[2], a.Nb()[3], a.Nb()[2]))
	}},
}

func rpcOpInputs(ctx *ggml.Context) (a, b, m, idx *ggml.Tensor) {
	return ctx.NewTensor3D(ggml.TypeF32, 8, 4, 4), ctx.NewTensor3D(ggml.TypeF32, 8, 4, 4),
		ctx.NewTensor2D(ggml.TypeF32, 8, 4), ctx.NewTensor1D(ggml.TypeI32, 4)
}

// computeOn builds case c on backend be and returns its output.
func computeOn(t *testing.T, be *ggml.Backend, c rpcOpCase) []float32 {
	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	a, b, m, idx := rpcOpInputs(ctx)
	out := c.build(ctx, a, b, m, idx)
	g := ctx.NewGraph().BuildForwardExpand(out)
	for _, n := range g.Nodes() {
		if !be.SupportsOp(n) {
			t.Fatalf("%s does not support %s", be.Name(), n.Op())
		}
	}
	buf, err := ggml.AllocContextTensors(ctx, be)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	for k, in := range []*ggml.Tensor{a, b, m} {
		v := make([]float32, in.NumElements())
		for i := range v {
			v[i] = float32(math.Sin(float64(i*(k+3)) * 0.37))
		}
		if err := in.SetFloat32(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := idx.SetInt32([]int32{3, 0, 2, 1}); err != nil {
		t.Fatal(err)
	}
	if err := be.Compute(g); err != nil {
		t.Fatal(err)
	}
	res, err := out.Float32()
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRPCOps computes a broad table of ops on an RPC device (our client, our server serving
// the CPU) and on the local CPU: the results must be bit-identical (same kernels, one thread).
func TestRPCOps(t *testing.T) {
	checkLive(t)
	addr := startRPCServer(t, ggml.WithRPCServerLog(t.Logf))
	cpu, err := ggml.NewCPU(ggml.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()
	for _, c := range rpcOpCases {
		t.Run(c.name, func(t *testing.T) {
			rpc, err := ggml.NewRPC(addr, ggml.WithRPCTimeout(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer rpc.Close()
			got, want := computeOn(t, rpc, c), computeOn(t, cpu, c)
			if len(got) != len(want) {
				t.Fatalf("%d elements, CPU %d", len(got), len(want))
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("element %d: RPC %g, CPU %g", i, got[i], want[i])
				}
			}
		})
	}
}

// TestRPCScheduler runs a graph through a Scheduler over an RPC device and the CPU: the weight
// lives on the server, so the matrix product runs there; PAD has no peer in the server's ggml,
// so it stays on the CPU. The result equals a CPU-only run.
func TestRPCScheduler(t *testing.T) {
	checkLive(t)
	addr := startRPCServer(t, ggml.WithRPCServerLog(t.Logf))
	rpc, err := ggml.NewRPC(addr, ggml.WithRPCTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	cpu, err := ggml.NewCPU(ggml.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()

	run := func(weights *ggml.Backend, backends []*ggml.Backend) ([]float32, int) {
		wctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
		if err != nil {
			t.Fatal(err)
		}
		defer wctx.Close()
		w := wctx.NewTensor2D(ggml.TypeF32, 16, 8)
		wbuf, err := ggml.AllocContextTensors(wctx, weights)
		if err != nil {
			t.Fatal(err)
		}
		defer wbuf.Close()
		wbuf.SetUsage(ggml.BufferUsageWeights)
		wv := make([]float32, 16*8)
		for i := range wv {
			wv[i] = float32(math.Cos(float64(i) * 0.11))
		}
		if err := w.SetFloat32(wv); err != nil {
			t.Fatal(err)
		}
		ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		x := ctx.NewTensor2D(ggml.TypeF32, 16, 3)
		xbuf, err := ggml.AllocContextTensors(ctx, cpu)
		if err != nil {
			t.Fatal(err)
		}
		defer xbuf.Close()
		y := ctx.Pad(ctx.Silu(ctx.MulMat(w, x)), 2, 1, 0, 0)
		g := ctx.NewGraph().BuildForwardExpand(y)
		s, err := ggml.NewScheduler(backends, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var out []float32
		for step := 0; step < 3; step++ { // a decode-like loop: new input, same graph
			xv := make([]float32, 16*3)
			for i := range xv {
				xv[i] = float32(math.Sin(float64(i+step) * 0.3))
			}
			if err := x.SetFloat32(xv); err != nil {
				t.Fatal(err)
			}
			if err := s.Compute(g); err != nil {
				t.Fatal(err)
			}
			o, err := y.Float32()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, o...)
		}
		return out, s.NumSplits()
	}
	got, splits := run(rpc, []*ggml.Backend{rpc, cpu})
	want, _ := run(cpu, []*ggml.Backend{cpu})
	if splits < 2 {
		t.Errorf("%d splits: expected the RPC device and the CPU to share the graph", splits)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d: scheduled %g, CPU %g", i, got[i], want[i])
		}
	}
}
