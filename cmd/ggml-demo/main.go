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
// With -backend NAME (a registered backend other than the CPU, e.g. CUDA0 in a build with
// -tags cuda) the weights are copied from the mapping into a buffer of that backend's memory,
// and the scheduler runs over [NAME, CPU]: the ops NAME rejects fall back to the CPU, whose
// buffer is still the tracing one. The per-op table then shows the backend of each op, and the
// check allows for the TF32 matrix products of cuBLAS (see gpuTolerance).
//
// Usage:
//
//	go run ./cmd/ggml-demo [-backend CPU|NAME] [-threads N] [-reps N] [-trace]
//	go run -tags cuda ./cmd/ggml-demo -backend CUDA0
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
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

// Tolerances of the check against the float64 reference: the largest difference of an output
// element relative to 1+|reference| must stay below it, and the checksum within a tenth of it
// (times 1+|checksum| and the number of elements). The CPU computes in float32; GPU backends
// get more room because cuBLAS runs F32 matrix products in TF32 (10-bit mantissa), which moves
// the output by about 1e-3.
const (
	cpuTolerance = 1e-3
	gpuTolerance = 1e-2
)

// cudaBuild is set by cuda.go in builds with -tags cuda (which register the CUDA devices).
var cudaBuild bool

// options are the demo's settings (the command-line flags).
type options struct {
	backend string    // "CPU", or the registry name of the backend to run on (CUDA0, ...)
	threads int       // CPU threads
	reps    int       // repetitions of each node for the per-op timing
	trace   bool      // log every traced buffer call to stderr
	cpuOps  []ggml.Op // (tests) ops assigned to the CPU, as if the other backend rejected them
}

func main() {
	var o options
	flag.StringVar(&o.backend, "backend", "CPU", "backend to run on: CPU, or a registered backend such as CUDA0 (builds with -tags cuda); the CPU computes the ops it rejects")
	flag.IntVar(&o.threads, "threads", min(runtime.NumCPU(), 4), "CPU threads")
	flag.IntVar(&o.reps, "reps", 20, "repetitions of each node for the per-op timing")
	flag.BoolVar(&o.trace, "trace", false, "log every traced buffer call to stderr")
	flag.Parse()
	if err := run(os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, "ggml-demo:", err)
		os.Exit(1)
	}
}

// initBackend initialises the registered backend name (a registry name, optionally followed by
// ":params"), explaining what is registered when it is not.
func initBackend(name string) (*ggml.Backend, error) {
	reg, _, _ := strings.Cut(name, ":")
	if ggml.BackendIndex(reg) < 0 {
		hint := "CUDA backends (CUDA0, ...) exist only in builds with -tags cuda " +
			"(go run -tags cuda ./cmd/ggml-demo -backend CUDA0)"
		if cudaBuild {
			hint = "this build has the CUDA backend (-tags cuda), which registers one backend " +
				"CUDA<i> per device found: is there a CUDA device?"
		}
		return nil, fmt.Errorf("backend %q is not registered (registered: %s); %s",
			name, strings.Join(ggml.Backends(), ", "), hint)
	}
	return ggml.InitBackend(name)
}

// isViewOp reports whether op only describes memory (nothing is computed).
func isViewOp(op ggml.Op) bool {
	return op == ggml.OpNone || op == ggml.OpView || op == ggml.OpReshape || op == ggml.OpPermute || op == ggml.OpTranspose
}

// usableBy reports whether t's memory is in a buffer backend b can compute on.
func usableBy(t *ggml.Tensor, b *ggml.Backend) bool {
	buf := t.Buffer()
	if buf == nil && t.ViewSrc() != nil {
		buf = t.ViewSrc().Buffer()
	}
	return buf != nil && buf.Type().SupportsBackend(b)
}

// split is a run of consecutive graph nodes computed by one backend.
type split struct {
	backend     string
	first, last int // node indices
}

// splitsOf returns the splits of g from the scheduler's node assignments, cut as the scheduler
// cuts the graph: a new split starts at each computing node whose backend differs from the
// previous one's; view nodes stay in the split they are in (leading ones in the first).
func splitsOf(g *ggml.Graph, sched *ggml.Scheduler) []split {
	var out []split
	for i := 0; i < g.Len(); i++ {
		node := g.Node(i)
		if isViewOp(node.Op()) {
			continue
		}
		name := "?"
		if b := sched.NodeBackend(node); b != nil {
			name = b.Name()
		}
		if len(out) == 0 || name != out[len(out)-1].backend {
			if len(out) > 0 {
				out[len(out)-1].last = i - 1
			}
			out = append(out, split{backend: name, first: i})
		}
	}
	if len(out) > 0 {
		out[0].first = 0
		out[len(out)-1].last = g.Len() - 1
	}
	return out
}

func run(w io.Writer, o options) error {
	if err := ggml.Available(); err != nil {
		return err
	}
	if o.backend == "" {
		o.backend = "CPU"
	}
	onCPU := o.backend == "CPU"
	cpu, err := ggml.NewCPU(ggml.WithThreads(o.threads))
	if err != nil {
		return err
	}
	defer cpu.Close()
	var dev *ggml.Backend // the backend asked for when it is not the CPU
	if !onCPU {
		if dev, err = initBackend(o.backend); err != nil {
			return err
		}
		defer dev.Close()
	}

	fmt.Fprintf(w, "ggml-demo: %d-layer transformer, %d-dim embeddings, %d heads, %d tokens, %d CPU threads",
		nLayer, nEmbd, nHead, nTok, o.threads)
	if !onCPU {
		fmt.Fprintf(w, ", backend %s (the CPU computes the ops it rejects)", o.backend)
	}
	fmt.Fprintln(w)

	// weights: written to a file, then mapped (zero-copy) and placed at their file offsets; on
	// another backend, copied from the mapping into a buffer of that backend's memory
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
	for _, wt := range m.weights {
		wt.t = wctx.NewTensor(ggml.TypeF32, wt.ne...).SetName(wt.name)
	}
	weightsDesc := ""
	if dev == nil {
		for _, wt := range m.weights {
			if err := wbuf.PlaceTensor(wt.t, wt.off); err != nil {
				return err
			}
		}
		weightsDesc = fmt.Sprintf("(zero-copy, %s buffer)", wbuf.Name())
	} else {
		dbuf, err := ggml.AllocContextTensorsFromBufferType(wctx, dev.DefaultBufferType())
		if err != nil {
			return err
		}
		defer dbuf.Close()
		dbuf.SetUsage(ggml.BufferUsageWeights) // the scheduler runs the ops using them on dev
		fctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
		if err != nil {
			return err
		}
		defer fctx.Close()
		for _, wt := range m.weights {
			ft := fctx.NewTensor(ggml.TypeF32, wt.ne...).SetName(wt.name)
			if err := wbuf.PlaceTensor(ft, wt.off); err != nil {
				return err
			}
			if err := ggml.CopyTensor(ft, wt.t); err != nil {
				return err
			}
		}
		weightsDesc = fmt.Sprintf("(%s buffer), copied to a %d-byte %s buffer", wbuf.Name(), dbuf.Size(), dbuf.Name())
	}

	var opts []ggml.TraceOption
	if o.trace {
		opts = append(opts, ggml.WithTraceLog(os.Stderr))
	}
	traced, err := ggml.NewTracingBufferType(cpu.DefaultBufferType(), opts...)
	if err != nil {
		return err
	}
	defer traced.Close()
	backends, bufts := []*ggml.Backend{cpu}, []*ggml.BufferType{traced.BufferType}
	if dev != nil {
		// dev first (priority), its own memory for the intermediate tensors; the CPU after it
		backends, bufts = []*ggml.Backend{dev, cpu}, []*ggml.BufferType{nil, traced.BufferType}
	}
	sched, err := ggml.NewScheduler(backends, bufts, 1024)
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

	// the input lives in the CPU's (traced) buffer; on another backend the scheduler copies it
	xv := input()
	pin := func() {
		for i := 0; dev != nil && i < g.Len(); i++ {
			if node := g.Node(i); slices.Contains(o.cpuOps, node.Op()) {
				sched.SetNodeBackend(node, cpu)
			}
		}
	}
	if err := sched.Allocator(cpu).Alloc(x); err != nil {
		return err
	}
	pin()
	if err := sched.InitMeasure(g); err != nil {
		return err
	}
	sched.Reset()
	if err := sched.Allocator(cpu).Alloc(x); err != nil {
		return err
	}
	pin()
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

	// per-op times: every node computed alone (a one-node view of the graph) on the backend the
	// scheduler gave it, reps times; the values are no longer meaningful (the scheduler reuses
	// memory), only the times are. A node with an operand in another backend's memory (the
	// scheduler copied it at the start of the split) is not timed.
	type opTime struct {
		op, backend string
		n, untimed  int
		total       time.Duration
	}
	times := map[string]*opTime{}
	untimed := 0
	for i := 0; i < g.Len(); i++ {
		node := g.Node(i)
		b := sched.NodeBackend(node)
		if b == nil {
			b = cpu
		}
		key := node.OpDesc()
		if dev != nil {
			key += "\x00" + b.Name()
		}
		ot := times[key]
		if ot == nil {
			ot = &opTime{op: node.OpDesc(), backend: b.Name()}
			times[key] = ot
		}
		ot.n++
		if !isViewOp(node.Op()) {
			ok := usableBy(node, b)
			for j := 0; ok && node.Src(j) != nil; j++ {
				ok = usableBy(node.Src(j), b)
			}
			if !ok {
				ot.untimed++
				untimed++
				continue
			}
		}
		view := g.View(i, i+1)
		t0 := time.Now()
		for r := 0; r < o.reps; r++ {
			if err := b.Compute(view); err != nil {
				return err
			}
		}
		b.Synchronize()
		ot.total += time.Since(t0) / time.Duration(max(o.reps, 1))
	}
	keys := make([]string, 0, len(times))
	var sum time.Duration
	for k, ot := range times {
		keys = append(keys, k)
		sum += ot.total
	}
	sort.Slice(keys, func(i, j int) bool {
		if a, b := times[keys[i]].total, times[keys[j]].total; a != b {
			return a > b
		}
		return keys[i] < keys[j]
	})
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if dev == nil {
		fmt.Fprintln(tw, "op\tnodes\ttime (µs)\tshare\t")
	} else {
		fmt.Fprintln(tw, "op\tbackend\tnodes\ttime (µs)\tshare\t")
	}
	for _, k := range keys {
		ot := times[k]
		name := ot.op
		if ot.untimed > 0 {
			name += fmt.Sprintf(" (%d untimed)", ot.untimed)
		}
		if dev != nil {
			name += "\t" + ot.backend
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f%%\t\n", name, ot.n, float64(ot.total.Nanoseconds())/1e3, 100*float64(ot.total)/float64(max(sum, 1)))
	}
	if dev == nil {
		fmt.Fprintf(tw, "total\t%d\t%.1f\t\t\n", g.Len(), float64(sum.Nanoseconds())/1e3)
	} else {
		fmt.Fprintf(tw, "total\t\t%d\t%.1f\t\t\n", g.Len(), float64(sum.Nanoseconds())/1e3)
	}
	tw.Flush()
	if untimed > 0 {
		fmt.Fprintf(w, "(untimed: %d node(s) with an operand in another backend's memory, copied by the scheduler)\n", untimed)
	}

	fmt.Fprintln(w)
	splits := splitsOf(g, sched)
	var where string
	if len(splits) == 1 {
		where = "on " + splits[0].backend
	} else {
		parts := make([]string, len(splits))
		for i, s := range splits {
			parts[i] = fmt.Sprintf("%s [nodes %d-%d]", s.backend, s.first, s.last)
		}
		where = strings.Join(parts, ", ")
	}
	fmt.Fprintf(w, "graph: %d nodes, %d leaves; scheduler: %d split(s) %s; one compute: %v\n",
		g.Len(), g.NumLeafs(), sched.NumSplits(), where, elapsed.Round(time.Microsecond))
	fmt.Fprintf(w, "weights: %d tensors, %d bytes mapped from %s %s\n",
		len(m.weights), size, filepath.Base(path), weightsDesc)
	fmt.Fprintf(w, "bytes moved through %s: %d written in %d call(s), %d read in %d call(s), %d copied in %d call(s)\n",
		traced.Name(), stats.SetBytes, stats.Sets, stats.GetBytes, stats.Gets, stats.CopyBytes, stats.Copies)

	ref := m.reference(xv)
	worst := 0.0
	for i := range ref {
		worst = math.Max(worst, math.Abs(ref[i]-float64(got[i]))/(1+math.Abs(ref[i])))
	}
	tol := cpuTolerance
	if dev != nil {
		tol = gpuTolerance
	}
	cs, rs := checksum(got), checksum(ref)
	ok := worst < tol && math.Abs(cs-rs) <= tol/10*(1+math.Abs(rs))*float64(len(ref))
	status := "ok"
	if !ok {
		status = "MISMATCH"
	}
	fmt.Fprintf(w, "checksum %.6f, pure-Go reference %.6f, largest relative difference %.2g", cs, rs, worst)
	if dev != nil {
		fmt.Fprintf(w, " (tolerance %g)", tol)
	}
	fmt.Fprintf(w, ": %s\n", status)
	if !ok {
		return fmt.Errorf("output differs from the reference")
	}
	return nil
}
