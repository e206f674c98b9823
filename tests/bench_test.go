package tests

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// CPU benchmarks of the public Go API (run by `make bench`, never by `go test` without -bench):
//
//	BenchmarkMulMat/type=T/shape=MxNxK      mul_mat(A[M,K] of T, B[N,K] f32), GFLOP/s and GB/s of A
//	BenchmarkBlock/type=T/tokens=N/threads=P  one LLaMA-style layer, ms/token
//	BenchmarkDispatch/threads=P             a graph of 1,000 tiny ops, us/node
//	BenchmarkScheduler/size=S/nodes=N       Scheduler.Compute of an N-node graph on a scheduler
//	                                        of graph size S, one CPU backend: us/op and the
//	                                        overhead over a direct Backend.Compute (us/graph)
//
// The shapes and the block are those of ../shared/bench/bench.c, so the Go figures can be set
// beside the C harness's. Every fixture (tensors, weights in a CPU backend buffer, graph) is
// built once per sub-benchmark, outside the timed loop. GGML_BENCH_THREADS sets the thread
// count (default 2). The names are benchstat-compatible (key=value path elements).

// benchThreads is the thread count of the benchmarks: GGML_BENCH_THREADS, default 2.
func benchThreads(b *testing.B) int {
	if s := os.Getenv("GGML_BENCH_THREADS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("GGML_BENCH_THREADS=%q: want a positive integer", s)
		}
		return n
	}
	return 2
}

// benchTypes are the weight types of the mul_mat and block benchmarks.
var benchTypes = []ggml.Type{ggml.TypeF32, ggml.TypeF16, ggml.TypeQ8_0, ggml.TypeQ4_0, ggml.TypeQ4_K}

// benchRandom returns n uniform values in [-scale, scale) from a generator seeded with seed.
func benchRandom(n int, seed uint64, scale float32) []float32 {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	v := make([]float32, n)
	for i := range v {
		v[i] = (rng.Float32()*2 - 1) * scale
	}
	return v
}

// benchEncodePool converts pool random rows of t's row length to t's type (F32 and F16
// included). Returns the encoded rows, back to back.
func benchEncodePool(b *testing.B, t *ggml.Tensor, seed uint64, scale float32, pool int64) []byte {
	b.Helper()
	ncols := t.Ne()[0]
	if nrows := t.NumRows(); pool > nrows {
		pool = nrows
	}
	data, err := ggml.Quantize(t.Type(), benchRandom(int(pool*ncols), seed, scale), int(ncols))
	if err != nil {
		b.Fatalf("quantizing %v: %v", t, err)
	}
	return data
}

// benchTile writes the encoded rows enc over every row of the contiguous tensor t, cycling
// (row r gets encoded row r % pool): large weights without quantizing every row (q4_K
// quantization is slow), as bench.c's set_random_pool does.
func benchTile(b *testing.B, t *ggml.Tensor, enc []byte) {
	b.Helper()
	total := int64(t.Nbytes())
	for off := int64(0); off < total; off += int64(len(enc)) {
		n := min(int64(len(enc)), total-off)
		if _, err := t.WriteAt(enc[:n], off); err != nil {
			b.Fatalf("writing %v: %v", t, err)
		}
	}
}

// benchFill fills the weight tensor t with pool random rows (values in [-scale, scale)) tiled
// over all its rows.
func benchFill(b *testing.B, t *ggml.Tensor, seed uint64, scale float32, pool int64) {
	b.Helper()
	benchTile(b, t, benchEncodePool(b, t, seed, scale, pool))
}

func benchCPU(b *testing.B, threads int) *ggml.Backend {
	b.Helper()
	cpu, err := ggml.NewCPU(ggml.WithThreads(threads))
	if err != nil {
		b.Fatal(err)
	}
	return cpu
}

func benchCompute(b *testing.B, cpu *ggml.Backend, g *ggml.Graph) {
	if err := cpu.Compute(g); err != nil {
		b.Fatal(err)
	}
}

// benchCheckFinite fails the benchmark when the graph's result (its last node) holds a NaN or
// an infinity: a sanity check after the warm-up compute, so broken kernels are not timed.
func benchCheckFinite(b *testing.B, g *ggml.Graph) {
	b.Helper()
	out := g.Node(g.Len() - 1)
	v, err := out.Float32()
	if err != nil {
		b.Fatal(err)
	}
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			b.Fatalf("%v: element %d of the result is %v", out, i, x)
		}
	}
}

// ---------------------------------------------------------------------------------- mul_mat

type mulMatShape struct{ m, n, k int64 }

func (s mulMatShape) String() string { return fmt.Sprintf("%dx%dx%d", s.m, s.n, s.k) }

var mulMatShapes = []mulMatShape{{1024, 1024, 1024}, {4096, 64, 4096}, {4096, 1, 4096}}

// mulMatCopies is the number of distinct copies of A cycled by the matrix-vector case (cold
// weights, as bench.sh's copies=8); products with N > 1 reuse one A.
const mulMatCopies = 8

type mulMatFixture struct {
	cpu    *ggml.Backend
	ctx    *ggml.Context
	buf    *ggml.Buffer
	graphs []*ggml.Graph
	aBytes float64 // bytes of one A
	flop   float64 // 2*M*N*K
}

func (f *mulMatFixture) close() {
	f.buf.Close()
	f.ctx.Close()
	f.cpu.Close()
}

func newMulMatFixture(b *testing.B, typ ggml.Type, s mulMatShape, threads int) *mulMatFixture {
	b.Helper()
	copies := 1
	if s.n == 1 {
		copies = mulMatCopies
	}
	ctx, err := ggml.NewContext(ggml.Params{
		MemSize: uint64(4*copies+8)*ggml.TensorOverhead() + uint64(copies)*ggml.GraphOverhead(),
		NoAlloc: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	f := &mulMatFixture{ctx: ctx, cpu: benchCPU(b, threads), flop: 2 * float64(s.m) * float64(s.n) * float64(s.k)}
	src1 := ctx.NewTensor2D(ggml.TypeF32, s.k, s.n)
	as := make([]*ggml.Tensor, copies)
	for c := range as {
		as[c] = ctx.NewTensor2D(typ, s.k, s.m)
		f.graphs = append(f.graphs, ctx.NewGraph().BuildForwardExpand(ctx.MulMat(as[c], src1)))
	}
	if f.buf, err = ggml.AllocContextTensors(ctx, f.cpu); err != nil {
		b.Fatal(err)
	}
	enc := benchEncodePool(b, as[0], 1, 1, 512)
	for _, a := range as {
		benchTile(b, a, enc)
	}
	if err := src1.SetFloat32(benchRandom(int(s.k*s.n), 2, 1)); err != nil {
		b.Fatal(err)
	}
	f.aBytes = float64(as[0].Nbytes())
	for _, g := range f.graphs { // warm-up: pages touched, workers started
		benchCompute(b, f.cpu, g)
	}
	benchCheckFinite(b, f.graphs[0])
	return f
}

// BenchmarkMulMat measures ggml_mul_mat(A, B) with A[M,K] of each weight type and B[N,K] f32
// (shape MxNxK) on a CPU backend: GFLOP/s (2*M*N*K per op) and GB/s of A. The matrix-vector
// shape (N = 1) cycles 8 copies of A, so the weights come from memory, not the caches.
func BenchmarkMulMat(b *testing.B) {
	threads := benchThreads(b)
	for _, typ := range benchTypes {
		b.Run("type="+typ.String(), func(b *testing.B) {
			for _, s := range mulMatShapes {
				var f *mulMatFixture
				b.Run("shape="+s.String(), func(b *testing.B) {
					if f == nil {
						f = newMulMatFixture(b, typ, s, threads)
						b.ResetTimer()
					}
					for i := 0; i < b.N; i++ {
						benchCompute(b, f.cpu, f.graphs[i%len(f.graphs)])
					}
					sec := b.Elapsed().Seconds()
					b.ReportMetric(f.flop*float64(b.N)/sec*1e-9, "GFLOP/s")
					b.ReportMetric(f.aBytes*float64(b.N)/sec*1e-9, "GB/s")
				})
				if f != nil {
					f.close()
				}
			}
		})
	}
}

// ---------------------------------------------------------------------------------- block

// The transformer block of bench.c (`bench block`, defaults): embd 4096, ff 11008, 32 heads
// (no GQA), 256 tokens already in an F16 KV cache, weights of 512 distinct random rows tiled.
const (
	blockEmbd = 4096
	blockFF   = 11008
	blockHead = 32
	blockPast = 256
	blockPool = 512
	blockEps  = 1e-5
)

// blockWeights are the layer's weights, in their own context and CPU buffer, shared by the
// token counts of one type.
type blockWeights struct {
	ctx                        *ggml.Context
	buf                        *ggml.Buffer
	attnNorm, ffnNorm          *ggml.Tensor
	wq, wk, wv, wo, w1, w2, w3 *ggml.Tensor
}

func (w *blockWeights) close() {
	w.buf.Close()
	w.ctx.Close()
}

func newBlockWeights(b *testing.B, typ ggml.Type, cpu *ggml.Backend) *blockWeights {
	b.Helper()
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 16 * ggml.TensorOverhead(), NoAlloc: true})
	if err != nil {
		b.Fatal(err)
	}
	w := &blockWeights{ctx: ctx}
	w.attnNorm = ctx.NewTensor1D(ggml.TypeF32, blockEmbd)
	w.ffnNorm = ctx.NewTensor1D(ggml.TypeF32, blockEmbd)
	w.wq = ctx.NewTensor2D(typ, blockEmbd, blockEmbd)
	w.wk = ctx.NewTensor2D(typ, blockEmbd, blockEmbd)
	w.wv = ctx.NewTensor2D(typ, blockEmbd, blockEmbd)
	w.wo = ctx.NewTensor2D(typ, blockEmbd, blockEmbd)
	w.w1 = ctx.NewTensor2D(typ, blockEmbd, blockFF) // gate
	w.w3 = ctx.NewTensor2D(typ, blockEmbd, blockFF) // up
	w.w2 = ctx.NewTensor2D(typ, blockFF, blockEmbd) // down
	if w.buf, err = ggml.AllocContextTensors(ctx, cpu); err != nil {
		b.Fatal(err)
	}
	norm := benchRandom(2*blockEmbd, 11, 0.1)
	for i := range norm {
		norm[i]++
	}
	if err := w.attnNorm.SetFloat32(norm[:blockEmbd]); err != nil {
		b.Fatal(err)
	}
	if err := w.ffnNorm.SetFloat32(norm[blockEmbd:]); err != nil {
		b.Fatal(err)
	}
	// ~1/sqrt(fan-in) scaling keeps the activations of order 1
	se := float32(1.7 / math.Sqrt(blockEmbd))
	sf := float32(1.7 / math.Sqrt(blockFF))
	for i, t := range []*ggml.Tensor{w.wq, w.wk, w.wv, w.wo, w.w1, w.w3} {
		benchFill(b, t, uint64(21+i), se, blockPool)
	}
	benchFill(b, w.w2, 27, sf, blockPool)
	return w
}

// blockGraph is the layer's forward graph for nTok new tokens, with its activations, inputs
// and KV cache in a second context and buffer.
type blockGraph struct {
	ctx *ggml.Context
	buf *ggml.Buffer
	g   *ggml.Graph
}

func (bg *blockGraph) close() {
	bg.buf.Close()
	bg.ctx.Close()
}

func newBlockGraph(b *testing.B, w *blockWeights, nTok int64, cpu *ggml.Backend) *blockGraph {
	b.Helper()
	const hd = blockEmbd / blockHead
	nKV := int64(blockPast) + nTok
	nCtx := nKV
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 128*ggml.TensorOverhead() + ggml.GraphOverhead(), NoAlloc: true})
	if err != nil {
		b.Fatal(err)
	}
	bg := &blockGraph{ctx: ctx}
	kCache := ctx.NewTensor1D(ggml.TypeF16, blockEmbd*nCtx)
	vCache := ctx.NewTensor1D(ggml.TypeF16, blockEmbd*nCtx)
	inp := ctx.NewTensor2D(ggml.TypeF32, blockEmbd, nTok)
	pos := ctx.NewTensor1D(ggml.TypeI32, nTok)
	mask := ctx.NewTensor2D(ggml.TypeF32, nKV, nTok)

	f16 := ggml.TypeF16.Size()
	cur := ctx.Mul(ctx.RMSNorm(inp, blockEps), w.attnNorm)
	q := ctx.MulMat(w.wq, cur)
	k := ctx.MulMat(w.wk, cur)
	v := ctx.MulMat(w.wv, cur)
	q = ctx.Rope(ctx.Reshape3D(q, hd, blockHead, nTok), pos, hd, 0, 0)
	k = ctx.Rope(ctx.Reshape3D(k, hd, blockHead, nTok), pos, hd, 0, 0)

	g := ctx.NewGraph()
	// store the new K rows and the new V columns (V is kept transposed, row stride nCtx)
	kView := ctx.View1D(kCache, nTok*blockEmbd, ggml.TypeF16.RowSize(blockEmbd)*uint64(blockPast))
	vView := ctx.View2D(vCache, nTok, blockEmbd, uint64(nCtx)*f16, uint64(blockPast)*f16)
	g.BuildForwardExpand(ctx.Cpy(k, kView))
	g.BuildForwardExpand(ctx.Cpy(ctx.Transpose(v), vView))

	qp := ctx.Permute(q, 0, 2, 1, 3) // [hd, nTok, head]
	kc := ctx.View3D(kCache, hd, nKV, blockHead, ggml.TypeF16.RowSize(blockEmbd), ggml.TypeF16.RowSize(hd), 0)
	kq := ctx.SoftMaxExt(ctx.MulMat(kc, qp), mask, float32(1/math.Sqrt(hd))) // [nKV, nTok, head]
	vc := ctx.View3D(vCache, nKV, hd, blockHead, uint64(nCtx)*f16, uint64(nCtx)*hd*f16, 0)
	kqv := ctx.MulMat(vc, kq) // [hd, nTok, head]
	cur = ctx.Cont2D(ctx.Permute(kqv, 0, 2, 1, 3), blockEmbd, nTok)
	ffnInp := ctx.Add(ctx.MulMat(w.wo, cur), inp)
	cur = ctx.Mul(ctx.RMSNorm(ffnInp, blockEps), w.ffnNorm)
	up := ctx.MulMat(w.w3, cur)
	gate := ctx.Silu(ctx.MulMat(w.w1, cur))
	out := ctx.Add(ctx.MulMat(w.w2, ctx.Mul(gate, up)), ffnInp)
	bg.g = g.BuildForwardExpand(out)

	if bg.buf, err = ggml.AllocContextTensors(ctx, cpu); err != nil {
		b.Fatal(err)
	}
	for i, c := range []*ggml.Tensor{kCache, vCache} {
		if err := c.SetFloat32(benchRandom(int(blockEmbd*nCtx), uint64(31+i), 1)); err != nil {
			b.Fatal(err)
		}
	}
	if err := inp.SetFloat32(benchRandom(int(blockEmbd*nTok), 41, 1)); err != nil {
		b.Fatal(err)
	}
	p := make([]int32, nTok)
	m := make([]float32, nKV*nTok)
	negInf := float32(math.Inf(-1))
	for j := range nTok {
		p[j] = int32(blockPast + j)
		for i := range nKV {
			if i > blockPast+j {
				m[j*nKV+i] = negInf
			}
		}
	}
	if err := pos.SetInt32(p); err != nil {
		b.Fatal(err)
	}
	if err := mask.SetFloat32(m); err != nil {
		b.Fatal(err)
	}
	return bg
}

// BenchmarkBlock measures one LLaMA-style transformer layer (bench.c's `block`: rms_norm,
// q/k/v/o projections, rope, soft_max_ext with a causal mask over an F16 KV cache of 256 past
// tokens, SiLU-gated FFN) for 1 and 64 new tokens, per weight type, at 1 thread and at the
// benchmark thread count: ms/token.
func BenchmarkBlock(b *testing.B) {
	threadCounts := []int{1}
	if n := benchThreads(b); n != 1 {
		threadCounts = append(threadCounts, n)
	}
	for _, typ := range benchTypes {
		b.Run("type="+typ.String(), func(b *testing.B) {
			cpu := benchCPU(b, 1)
			defer cpu.Close()
			var w *blockWeights
			defer func() {
				if w != nil {
					w.close()
				}
			}()
			for _, nTok := range []int64{1, 64} {
				b.Run(fmt.Sprintf("tokens=%d", nTok), func(b *testing.B) {
					if w == nil {
						w = newBlockWeights(b, typ, cpu)
					}
					bg := newBlockGraph(b, w, nTok, cpu)
					defer bg.close()
					for _, nth := range threadCounts {
						warm := false
						b.Run(fmt.Sprintf("threads=%d", nth), func(b *testing.B) {
							if err := cpu.SetThreads(nth); err != nil {
								b.Fatal(err)
							}
							if !warm { // one untimed compute at this thread count
								benchCompute(b, cpu, bg.g)
								benchCheckFinite(b, bg.g)
								warm = true
								b.ResetTimer()
							}
							for i := 0; i < b.N; i++ {
								benchCompute(b, cpu, bg.g)
							}
							b.ReportMetric(b.Elapsed().Seconds()*1e3/float64(int64(b.N)*nTok), "ms/token")
						})
					}
				})
			}
		})
	}
}

// ---------------------------------------------------------------------------------- dispatch

const dispatchNodes = 1000

// BenchmarkDispatch measures the per-node overhead of a graph compute: 1,000 element-wise
// ops (add and mul, alternating) on 16 floats each, at 1 thread and at the benchmark thread
// count: us/node.
func BenchmarkDispatch(b *testing.B) {
	threadCounts := []int{1}
	if n := benchThreads(b); n != 1 {
		threadCounts = append(threadCounts, n)
	}
	ctx, err := ggml.NewContext(ggml.Params{
		MemSize: (dispatchNodes+8)*ggml.TensorOverhead() + ggml.GraphOverhead(),
		NoAlloc: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	x := ctx.NewTensor1D(ggml.TypeF32, 16)
	addend := ctx.NewTensor1D(ggml.TypeF32, 16)
	factor := ctx.NewTensor1D(ggml.TypeF32, 16)
	cur := x
	for i := range dispatchNodes {
		if i%2 == 0 {
			cur = ctx.Add(cur, addend)
		} else {
			cur = ctx.Mul(cur, factor)
		}
	}
	g := ctx.NewGraph().BuildForwardExpand(cur)
	if g.Len() != dispatchNodes {
		b.Fatalf("graph has %d nodes, want %d", g.Len(), dispatchNodes)
	}
	cpu := benchCPU(b, 1)
	defer cpu.Close()
	buf, err := ggml.AllocContextTensors(ctx, cpu)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Close()
	for t, v := range map[*ggml.Tensor]float32{x: 1, addend: 0.001, factor: 1} {
		if err := t.Fill(v); err != nil {
			b.Fatal(err)
		}
	}
	for _, nth := range threadCounts {
		b.Run(fmt.Sprintf("threads=%d", nth), func(b *testing.B) {
			if err := cpu.SetThreads(nth); err != nil {
				b.Fatal(err)
			}
			benchCompute(b, cpu, g) // warm-up
			benchCheckFinite(b, g)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchCompute(b, cpu, g)
			}
			b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N*dispatchNodes), "us/node")
		})
	}
}

// ---------------------------------------------------------------------------------- scheduler

// BenchmarkScheduler measures what Scheduler.Compute costs beyond the backend's own compute,
// for graphs of 1, 64 and 1024 one-element add nodes on schedulers created for 16, 2048 and
// 8192 nodes, with one CPU backend at 1 thread (so the engine's cost is small and constant):
// the graph is computed again and again with new input data, as a decode loop does. Reports
// "overhead-us" (Scheduler.Compute minus a direct Backend.Compute of the same allocated graph,
// measured in the same sub-benchmark) and "overhead-us/node".
func BenchmarkScheduler(b *testing.B) {
	for _, size := range []int{16, 2048, 8192} {
		for _, nodes := range []int{1, 64, 1024} {
			if nodes+2 > size {
				continue
			}
			b.Run(fmt.Sprintf("size=%d/nodes=%d", size, nodes), func(b *testing.B) {
				benchScheduler(b, size, nodes)
			})
		}
	}
}

func benchScheduler(b *testing.B, size, nodes int) {
	// the inputs in a context and buffer of their own, as a model's inputs and weights are
	inCtx, err := ggml.NewContext(ggml.Params{MemSize: 4 * ggml.TensorOverhead(), NoAlloc: true})
	if err != nil {
		b.Fatal(err)
	}
	defer inCtx.Close()
	x := inCtx.NewTensor1D(ggml.TypeF32, 1)
	y := inCtx.NewTensor1D(ggml.TypeF32, 1)
	cpu := benchCPU(b, 1)
	defer cpu.Close()
	in, err := ggml.AllocContextTensors(inCtx, cpu)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	if err := y.Fill(1); err != nil {
		b.Fatal(err)
	}
	ctx, err := ggml.NewContext(ggml.Params{
		MemSize: uint64(nodes+8)*ggml.TensorOverhead() + ggml.GraphOverheadCustom(size, false),
		NoAlloc: true,
	})
	if err != nil {
		b.Fatal(err)
	}
	defer ctx.Close()
	cur := x
	for range nodes {
		cur = ctx.Add(cur, y)
	}
	g := ctx.NewGraphCustom(size, false).BuildForwardExpand(cur)
	s, err := ggml.NewScheduler([]*ggml.Backend{cpu}, nil, size)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	step := func(i int) {
		if err := x.SetFloat32([]float32{float32(i % 7)}); err != nil {
			b.Fatal(err)
		}
		if err := s.Compute(g); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 3 {
		step(i)
		if v, err := cur.Float32(); err != nil || v[0] != float32(i%7+nodes) {
			b.Fatalf("result %v (%v), want %d", v, err, i%7+nodes)
		}
	}
	// the direct compute of the graph as the scheduler placed it, timed beside
	directRuns := 200 + 200000/nodes
	start := time.Now()
	for range directRuns {
		if err := cpu.Compute(g); err != nil {
			b.Fatal(err)
		}
	}
	directUs := float64(time.Since(start).Nanoseconds()) / 1e3 / float64(directRuns)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		step(i)
	}
	b.StopTimer()
	perOp := b.Elapsed().Seconds() * 1e6 / float64(b.N)
	b.ReportMetric(directUs, "direct-us")
	b.ReportMetric(perOp-directUs, "overhead-us")
	b.ReportMetric((perOp-directUs)/float64(nodes), "overhead-us/node")
}
