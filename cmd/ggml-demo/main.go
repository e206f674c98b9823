//go:build cgo

// Command ggml-demo runs a small transformer with the ggml Go package and checks it.
//
// The model has two pre-norm transformer layers (causal multi-head self-attention and a SiLU
// feed-forward block, RMS norms, residual connections) with deterministic weights. The weights
// are written to a file, which is mapped into memory (ggml.MapFile: zero-copy, read-only); the
// graph runs through a Scheduler on the CPU backend whose compute buffer is a tracing buffer
// type, so the data moved in and out is counted. The program prints a table of per-op times,
// the scheduler's splits and the bytes moved, and a checksum of the output verified against a
// pure-Go float64 reference of the same model. It exits with status 1 when they disagree.
//
// Usage:
//
//	go run ./cmd/ggml-demo [-threads N] [-reps N] [-trace]
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/ggml-go/ggml"
)

// model dimensions
const (
	nEmbd   = 64
	nHead   = 4
	headDim = nEmbd / nHead
	nFF     = 128
	nTok    = 16
	nLayer  = 2
	eps     = 1e-5
)

// weight describes one weight tensor of the model: its name, shape and values.
type weight struct {
	name   string
	ne     []int64
	values []float32
	t      *ggml.Tensor
	off    uint64 // offset in the weights file
}

// detValues returns n deterministic values of magnitude about scale.
func detValues(seed, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(scale * math.Sin(0.37*float64(i+1)+1.3*float64(seed)) * math.Cos(0.11*float64(i)*float64(seed%5+1)))
	}
	return v
}

func ones(n int, seed int) []float32 {
	v := detValues(seed, n, 0.1)
	for i := range v {
		v[i] += 1
	}
	return v
}

type layerW struct{ g1, wq, wk, wv, wo, g2, w1, w2 *weight }

type model struct {
	weights []*weight
	layers  [nLayer]layerW
	gf      *weight
}

func newModel() *model {
	m := &model{}
	seed := 0
	add := func(name string, values []float32, ne ...int64) *weight {
		w := &weight{name: name, ne: ne, values: values}
		m.weights = append(m.weights, w)
		seed++
		return w
	}
	mat := func(name string, in, out int) *weight {
		return add(name, detValues(seed+1, in*out, 1/math.Sqrt(float64(in))), int64(in), int64(out))
	}
	for l := 0; l < nLayer; l++ {
		p := fmt.Sprintf("l%d.", l)
		m.layers[l] = layerW{
			g1: add(p+"attn_norm", ones(nEmbd, seed+1), nEmbd),
			wq: mat(p+"wq", nEmbd, nEmbd),
			wk: mat(p+"wk", nEmbd, nEmbd),
			wv: mat(p+"wv", nEmbd, nEmbd),
			wo: mat(p+"wo", nEmbd, nEmbd),
			g2: add(p+"ffn_norm", ones(nEmbd, seed+1), nEmbd),
			w1: mat(p+"ffn_up", nEmbd, nFF),
			w2: mat(p+"ffn_down", nFF, nEmbd),
		}
	}
	m.gf = add("out_norm", ones(nEmbd, seed+1), nEmbd)
	return m
}

// writeFile stores the weights in a little file: a 64-byte header, then each tensor's float32
// values (little endian) at a 64-byte aligned offset.
func (m *model) writeFile(path string) (int, error) {
	data := make([]byte, 64)
	copy(data, "ggml-demo weights v1")
	for _, w := range m.weights {
		for len(data)%64 != 0 {
			data = append(data, 0)
		}
		w.off = uint64(len(data))
		for _, v := range w.values {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		}
	}
	return len(data), os.WriteFile(path, data, 0o644)
}

func input() []float32 {
	x := make([]float32, nEmbd*nTok)
	for i := range x {
		x[i] = float32(math.Cos(0.05*float64(i)) * 0.5)
	}
	return x
}

// build creates the forward graph in ctx; x is the input [nEmbd, nTok].
func (m *model) build(ctx *ggml.Context) (g *ggml.Graph, x, out *ggml.Tensor) {
	x = ctx.NewTensor2D(ggml.TypeF32, nEmbd, nTok).SetName("x")
	cur := x
	scale := float32(1 / math.Sqrt(headDim))
	for l := 0; l < nLayer; l++ {
		lw := m.layers[l]
		h := ctx.Mul(ctx.RMSNorm(cur, eps), lw.g1.t)
		q := ctx.Permute(ctx.Reshape3D(ctx.MulMat(lw.wq.t, h), headDim, nHead, nTok), 0, 2, 1, 3) // [hd, T, H]
		k := ctx.Permute(ctx.Reshape3D(ctx.MulMat(lw.wk.t, h), headDim, nHead, nTok), 0, 2, 1, 3) // [hd, T, H]
		v := ctx.Cont(ctx.Permute(ctx.Reshape3D(ctx.MulMat(lw.wv.t, h), headDim, nHead, nTok), 1, 2, 0, 3))
		kq := ctx.SoftMax(ctx.DiagMaskInf(ctx.Scale(ctx.MulMat(k, q), scale), 0)) // [T keys, T queries, H]
		kqv := ctx.MulMat(v, kq)                                                  // [hd, T, H]
		merged := ctx.Cont2D(ctx.Permute(kqv, 0, 2, 1, 3), nEmbd, nTok)
		cur = ctx.Add(cur, ctx.MulMat(lw.wo.t, merged))
		h2 := ctx.Mul(ctx.RMSNorm(cur, eps), lw.g2.t)
		cur = ctx.Add(cur, ctx.MulMat(lw.w2.t, ctx.Silu(ctx.MulMat(lw.w1.t, h2))))
	}
	out = ctx.Mul(ctx.RMSNorm(cur, eps), m.gf.t).SetName("out")
	g = ctx.NewGraph()
	g.BuildForwardExpand(out)
	return g, x, out
}

// pure-Go float64 reference; matrices are column lists: a [n, cols] value v[i + n*c]

func refMatMul(w *weight, h []float64, in, out int) []float64 {
	r := make([]float64, out*nTok)
	for t := 0; t < nTok; t++ {
		for o := 0; o < out; o++ {
			s := 0.0
			for i := 0; i < in; i++ {
				s += float64(w.values[i+in*o]) * h[i+in*t]
			}
			r[o+out*t] = s
		}
	}
	return r
}

func refNorm(x []float64, g *weight) []float64 {
	r := make([]float64, len(x))
	for t := 0; t < nTok; t++ {
		ss := 0.0
		for i := 0; i < nEmbd; i++ {
			ss += x[i+nEmbd*t] * x[i+nEmbd*t]
		}
		s := 1 / math.Sqrt(ss/nEmbd+eps)
		for i := 0; i < nEmbd; i++ {
			r[i+nEmbd*t] = x[i+nEmbd*t] * s * float64(g.values[i])
		}
	}
	return r
}

func (m *model) reference(xin []float32) []float64 {
	x := make([]float64, len(xin))
	for i, v := range xin {
		x[i] = float64(v)
	}
	scale := 1 / math.Sqrt(headDim)
	for l := 0; l < nLayer; l++ {
		lw := m.layers[l]
		h := refNorm(x, lw.g1)
		q, k, v := refMatMul(lw.wq, h, nEmbd, nEmbd), refMatMul(lw.wk, h, nEmbd, nEmbd), refMatMul(lw.wv, h, nEmbd, nEmbd)
		merged := make([]float64, nEmbd*nTok)
		p := make([]float64, nTok)
		for hd := 0; hd < nHead; hd++ {
			for j := 0; j < nTok; j++ { // query
				mx := math.Inf(-1)
				for i := 0; i <= j; i++ { // keys up to the query
					s := 0.0
					for d := 0; d < headDim; d++ {
						s += k[d+headDim*hd+nEmbd*i] * q[d+headDim*hd+nEmbd*j]
					}
					p[i] = s * scale
					mx = math.Max(mx, p[i])
				}
				sum := 0.0
				for i := 0; i <= j; i++ {
					p[i] = math.Exp(p[i] - mx)
					sum += p[i]
				}
				for d := 0; d < headDim; d++ {
					s := 0.0
					for i := 0; i <= j; i++ {
						s += v[d+headDim*hd+nEmbd*i] * p[i] / sum
					}
					merged[d+headDim*hd+nEmbd*j] = s
				}
			}
		}
		attn := refMatMul(lw.wo, merged, nEmbd, nEmbd)
		for i := range x {
			x[i] += attn[i]
		}
		h2 := refNorm(x, lw.g2)
		up := refMatMul(lw.w1, h2, nEmbd, nFF)
		for i, u := range up {
			up[i] = u / (1 + math.Exp(-u))
		}
		down := refMatMul(lw.w2, up, nFF, nEmbd)
		for i := range x {
			x[i] += down[i]
		}
	}
	return refNorm(x, m.gf)
}

func checksum[T float32 | float64](v []T) float64 {
	s := 0.0
	for i, x := range v {
		s += float64(x) * float64(i%13+1)
	}
	return s
}

func main() {
	threads := flag.Int("threads", min(runtime.NumCPU(), 4), "CPU threads")
	reps := flag.Int("reps", 20, "repetitions of each node for the per-op timing")
	trace := flag.Bool("trace", false, "log every traced buffer call to stderr")
	flag.Parse()
	if err := run(*threads, *reps, *trace); err != nil {
		fmt.Fprintln(os.Stderr, "ggml-demo:", err)
		os.Exit(1)
	}
}

func run(threads, reps int, trace bool) error {
	if err := ggml.Available(); err != nil {
		return err
	}
	fmt.Printf("ggml-demo: %d-layer transformer, %d-dim embeddings, %d heads, %d tokens, %d CPU threads\n",
		nLayer, nEmbd, nHead, nTok, threads)

	// weights: written to a file, then mapped (zero-copy) and placed at their file offsets
	m := newModel()
	dir, err := os.MkdirTemp("", "ggml-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "weights.bin")
	size, err := m.writeFile(path)
	if err != nil {
		return err
	}
	wbuf, err := ggml.MapFile(path)
	if err != nil {
		return err
	}
	defer wbuf.Close()
	wctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	if err != nil {
		return err
	}
	defer wctx.Close()
	for _, w := range m.weights {
		w.t = wctx.NewTensor(ggml.TypeF32, w.ne...).SetName(w.name)
		if err := wbuf.PlaceTensor(w.t, w.off); err != nil {
			return err
		}
	}

	cpu, err := ggml.NewCPU(ggml.WithThreads(threads))
	if err != nil {
		return err
	}
	defer cpu.Close()
	var opts []ggml.TraceOption
	if trace {
		opts = append(opts, ggml.WithTraceLog(os.Stderr))
	}
	traced, err := ggml.NewTracingBufferType(cpu.DefaultBufferType(), opts...)
	if err != nil {
		return err
	}
	defer traced.Close()
	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu}, []*ggml.BufferType{traced.BufferType}, 1024)
	if err != nil {
		return err
	}
	defer sched.Close()

	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	if err != nil {
		return err
	}
	defer ctx.Close()
	g, x, out := m.build(ctx)

	xv := input()
	if err := sched.Allocator(cpu).Alloc(x); err != nil {
		return err
	}
	if err := sched.InitMeasure(g); err != nil {
		return err
	}
	sched.Reset()
	if err := sched.Allocator(cpu).Alloc(x); err != nil {
		return err
	}
	if err := x.SetFloat32(xv); err != nil {
		return err
	}
	start := time.Now()
	if err := sched.Compute(g); err != nil {
		return err
	}
	elapsed := time.Since(start)
	got, err := out.Float32()
	if err != nil {
		return err
	}
	stats := traced.Stats()

	// per-op times: every node computed alone (a one-node view of the graph), reps times; the
	// values are no longer meaningful (the scheduler reuses memory), only the times are
	type opTime struct {
		n     int
		total time.Duration
	}
	times := map[string]*opTime{}
	for i := 0; i < g.Len(); i++ {
		node := g.Node(i)
		name := node.OpDesc()
		ot := times[name]
		if ot == nil {
			ot = &opTime{}
			times[name] = ot
		}
		ot.n++
		view := g.View(i, i+1)
		t0 := time.Now()
		for r := 0; r < reps; r++ {
			if err := cpu.Compute(view); err != nil {
				return err
			}
		}
		ot.total += time.Since(t0) / time.Duration(max(reps, 1))
	}
	names := make([]string, 0, len(times))
	var sum time.Duration
	for n, ot := range times {
		names = append(names, n)
		sum += ot.total
	}
	sort.Slice(names, func(i, j int) bool { return times[names[i]].total > times[names[j]].total })
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tnodes\ttime (µs)\tshare\t")
	for _, n := range names {
		ot := times[n]
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f%%\t\n", n, ot.n, float64(ot.total.Nanoseconds())/1e3, 100*float64(ot.total)/float64(max(sum, 1)))
	}
	fmt.Fprintf(tw, "total\t%d\t%.1f\t\t\n", g.Len(), float64(sum.Nanoseconds())/1e3)
	tw.Flush()

	fmt.Println()
	fmt.Printf("graph: %d nodes, %d leaves; scheduler: %d split(s) on %s; one compute: %v\n",
		g.Len(), g.NumLeafs(), sched.NumSplits(), cpu.Name(), elapsed.Round(time.Microsecond))
	fmt.Printf("weights: %d tensors, %d bytes mapped from %s (zero-copy, %s buffer)\n",
		len(m.weights), size, filepath.Base(path), wbuf.Name())
	fmt.Printf("bytes moved through %s: %d written in %d call(s), %d read in %d call(s), %d copied in %d call(s)\n",
		traced.Name(), stats.SetBytes, stats.Sets, stats.GetBytes, stats.Gets, stats.CopyBytes, stats.Copies)

	ref := m.reference(xv)
	worst := 0.0
	for i := range ref {
		worst = math.Max(worst, math.Abs(ref[i]-float64(got[i]))/(1+math.Abs(ref[i])))
	}
	cs, rs := checksum(got), checksum(ref)
	ok := worst < 1e-3 && math.Abs(cs-rs) <= 1e-4*(1+math.Abs(rs))*float64(len(ref))
	status := "ok"
	if !ok {
		status = "MISMATCH"
	}
	fmt.Printf("checksum %.6f, pure-Go reference %.6f, largest relative difference %.2g: %s\n", cs, rs, worst, status)
	if !ok {
		return fmt.Errorf("output differs from the reference")
	}
	return nil
}
