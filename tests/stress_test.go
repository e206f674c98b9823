package tests

import (
	"fmt"
	"math"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/testbackend"
)

// The stress test: several goroutines, each with its own contexts, backends and scheduler,
// build and compute graphs concurrently for a bounded time (GGML_STRESS_SECONDS, default 2;
// 0.5 with -short). Every result must equal, bit for bit, the answer computed beforehand on one
// goroutine with one thread; at the end every native object is freed (LiveObjects back to its
// starting value). Meant for -race (make test-stress), and cheap enough for the plain go test.

const (
	stK = 32 // input features
	stH = 48 // hidden
	stO = 16 // outputs
)

// stWeights is one worker's model: weights in their own no-alloc context and buffer.
type stWeights struct {
	ctx        *ggml.Context
	buf        *ggml.Buffer
	w1, b1, w2 *ggml.Tensor
	g          *ggml.Tensor // rms norm gain
}

var (
	stVW1 = xRand(101, stK*stH)
	stVB1 = xRand(102, stH)
	stVW2 = xRand(103, stH*stO)
	stVG  = xRand(104, stO)
)

func stNewWeights(b *ggml.Backend, usage ggml.BufferUsage) (*stWeights, error) {
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 16 * ggml.TensorOverhead(), NoAlloc: true})
	if err != nil {
		return nil, err
	}
	w := &stWeights{ctx: ctx}
	w.w1 = ctx.NewTensor2D(ggml.TypeF32, stK, stH).SetName("w1")
	w.b1 = ctx.NewTensor1D(ggml.TypeF32, stH).SetName("b1")
	w.w2 = ctx.NewTensor2D(ggml.TypeF32, stH, stO).SetName("w2")
	w.g = ctx.NewTensor1D(ggml.TypeF32, stO).SetName("g")
	if w.buf, err = ggml.AllocContextTensors(ctx, b); err != nil {
		ctx.Close()
		return nil, err
	}
	w.buf.SetUsage(usage)
	for _, p := range []struct {
		t *ggml.Tensor
		v []float32
	}{{w.w1, stVW1}, {w.b1, stVB1}, {w.w2, stVW2}, {w.g, stVG}} {
		if err := p.t.SetFloat32(p.v); err != nil {
			w.close()
			return nil, err
		}
	}
	return w, nil
}

func (w *stWeights) close() {
	w.buf.Close()
	w.ctx.Close()
}

// stBuild builds the model's graph for the input x [stK, n] in ctx:
// out = rms_norm(W2 · gelu(W1 · x + b1)) * g, then a softmax over the transposed result
func stBuild(ctx *ggml.Context, w *stWeights, x *ggml.Tensor) (g *ggml.Graph, out *ggml.Tensor) {
	h := ctx.Gelu(ctx.Add(ctx.MulMat(w.w1, x), w.b1))
	y := ctx.Mul(ctx.RMSNorm(ctx.MulMat(w.w2, h), 1e-5), w.g)
	out = ctx.SoftMax(ctx.Cont(ctx.Transpose(ctx.Scale(y, 0.5)))).SetName("out")
	g = ctx.NewGraph().BuildForwardExpand(out)
	return g, out
}

var stBatches = []int64{1, 3, 8, 13}

func stInput(n int64, seed int) []float32 { return xRand(int64(1000+seed), int(stK*n)) }

// stReference computes every batch size on one goroutine with a one-thread CPU backend.
func stReference(t *testing.T) map[int64][]float32 {
	cpu := xCPU(t, 1)
	w, err := stNewWeights(cpu, ggml.BufferUsageWeights)
	require.NoError(t, err)
	defer w.close()
	ref := map[int64][]float32{}
	for _, n := range stBatches {
		ctx := xCtx(t, true)
		x := ctx.NewTensor2D(ggml.TypeF32, stK, n)
		g, out := stBuild(ctx, w, x)
		buf, err := ggml.AllocContextTensors(ctx, cpu)
		require.NoError(t, err)
		require.NoError(t, x.SetFloat32(stInput(n, 0)))
		require.NoError(t, cpu.Compute(g))
		ref[n], err = out.Float32()
		require.NoError(t, err)
		buf.Close()
		ctx.Close()
	}
	return ref
}

func stEqual(want, got []float32) error {
	if len(want) != len(got) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			return fmt.Errorf("element %d = %g, want %g", i, got[i], want[i])
		}
	}
	return nil
}

// stWorker runs until the deadline; kind selects the path:
// 0: scheduler over [CPU], 1: scheduler over [Test, CPU] with the weights in a Test buffer,
// 2: a backend and AllocContextTensors per graph, 3: an allocating context and Context.Compute.
func stWorker(id, kind int, deadline time.Time, ref map[int64][]float32) (iters int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("worker %d panicked: %v", id, r)
		}
	}()
	threads := 1 + id%2
	cpu, err := ggml.NewCPU(ggml.WithThreads(threads))
	if err != nil {
		return 0, err
	}
	defer cpu.Close()

	var sched *ggml.Scheduler
	weightsOn := cpu
	switch kind {
	case 0, 1:
		backends := []*ggml.Backend{cpu}
		if kind == 1 {
			test, err := testbackend.New(threads)
			if err != nil {
				return 0, err
			}
			defer test.Close()
			backends = []*ggml.Backend{test, cpu}
			weightsOn = test
		}
		if sched, err = ggml.NewScheduler(backends, nil, 256); err != nil {
			return 0, err
		}
		defer sched.Close()
	}
	var w *stWeights
	if kind != 3 {
		if w, err = stNewWeights(weightsOn, ggml.BufferUsageWeights); err != nil {
			return 0, err
		}
		defer w.close()
	}

	// the scheduler's buffers are sized once, with the largest graph
	if sched != nil {
		ctx, err := ggml.NewContext(ggml.Params{MemSize: 64*ggml.TensorOverhead() + ggml.GraphOverhead(), NoAlloc: true})
		if err != nil {
			return 0, err
		}
		x := ctx.NewTensor2D(ggml.TypeF32, stK, stBatches[len(stBatches)-1])
		g, _ := stBuild(ctx, w, x)
		if err = sched.Allocator(cpu).Alloc(x); err == nil {
			err = sched.InitMeasure(g)
		}
		ctx.Close()
		if err != nil {
			return 0, err
		}
	}

	for i := 0; time.Now().Before(deadline); i++ {
		n := stBatches[(id+i)%len(stBatches)]
		want := ref[n]
		var got []float32
		switch kind {
		case 0, 1:
			got, err = stViaScheduler(sched, cpu, w, n)
		case 2:
			got, err = stViaBackend(cpu, w, n)
		case 3:
			got, err = stViaContext(n, threads)
		}
		if err != nil {
			return i, fmt.Errorf("worker %d (kind %d) iteration %d, batch %d: %w", id, kind, i, n, err)
		}
		if err := stEqual(want, got); err != nil {
			return i, fmt.Errorf("worker %d (kind %d) iteration %d, batch %d: %w", id, kind, i, n, err)
		}
		iters = i + 1
	}
	return iters, nil
}

func stViaScheduler(sched *ggml.Scheduler, cpu *ggml.Backend, w *stWeights, n int64) ([]float32, error) {
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 64*ggml.TensorOverhead() + ggml.GraphOverhead(), NoAlloc: true})
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	// x lives in its own CPU buffer
	xctx, err := ggml.NewContext(ggml.Params{MemSize: 4 * ggml.TensorOverhead(), NoAlloc: true})
	if err != nil {
		return nil, err
	}
	defer xctx.Close()
	x := xctx.NewTensor2D(ggml.TypeF32, stK, n)
	xbuf, err := ggml.AllocContextTensors(xctx, cpu)
	if err != nil {
		return nil, err
	}
	defer xbuf.Close()
	if err := x.SetFloat32(stInput(n, 0)); err != nil {
		return nil, err
	}
	g, out := stBuild(ctx, w, x)
	sched.Reset()
	if err := sched.Compute(g); err != nil {
		return nil, err
	}
	return out.Float32()
}

func stViaBackend(cpu *ggml.Backend, w *stWeights, n int64) ([]float32, error) {
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 64*ggml.TensorOverhead() + ggml.GraphOverhead(), NoAlloc: true})
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	x := ctx.NewTensor2D(ggml.TypeF32, stK, n)
	g, out := stBuild(ctx, w, x)
	buf, err := ggml.AllocContextTensors(ctx, cpu)
	if err != nil {
		return nil, err
	}
	defer buf.Close()
	if err := x.SetFloat32(stInput(n, 0)); err != nil {
		return nil, err
	}
	if err := cpu.Compute(g); err != nil {
		return nil, err
	}
	return out.Float32()
}

// stViaContext computes the model in one allocating context (weights copied into it).
func stViaContext(n int64, threads int) ([]float32, error) {
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 4 << 20})
	if err != nil {
		return nil, err
	}
	defer ctx.Close()
	w := &stWeights{ctx: ctx}
	w.w1 = ctx.NewTensor2D(ggml.TypeF32, stK, stH)
	w.b1 = ctx.NewTensor1D(ggml.TypeF32, stH)
	w.w2 = ctx.NewTensor2D(ggml.TypeF32, stH, stO)
	w.g = ctx.NewTensor1D(ggml.TypeF32, stO)
	for _, p := range []struct {
		t *ggml.Tensor
		v []float32
	}{{w.w1, stVW1}, {w.b1, stVB1}, {w.w2, stVW2}, {w.g, stVG}} {
		if err := p.t.SetFloat32(p.v); err != nil {
			return nil, err
		}
	}
	x := ctx.NewTensor2D(ggml.TypeF32, stK, n)
	g, out := stBuild(ctx, w, x)
	if err := x.SetFloat32(stInput(n, 0)); err != nil {
		return nil, err
	}
	if err := ctx.Compute(g, threads); err != nil {
		return nil, err
	}
	return out.Float32()
}

func TestStressConcurrentGraphs(t *testing.T) {
	xLeakCheck(t)
	dur := 2 * time.Second
	if testing.Short() {
		dur = 500 * time.Millisecond
	}
	if s := os.Getenv("GGML_STRESS_SECONDS"); s != "" {
		var f float64
		_, err := fmt.Sscanf(s, "%g", &f)
		require.NoError(t, err, "GGML_STRESS_SECONDS")
		dur = time.Duration(f * float64(time.Second))
	}
	ref := stReference(t)

	const workers = 8 // two of each kind
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	iters := make([]int, workers)
	errs := make([]error, workers)
	for id := 0; id < workers; id++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			iters[id], errs[id] = stWorker(id, id%4, deadline, ref)
		}(id)
	}
	wg.Wait()
	total := 0
	for id := 0; id < workers; id++ {
		require.NoError(t, errs[id])
		require.Greater(t, iters[id], 0, "worker %d computed nothing", id)
		total += iters[id]
	}
	t.Logf("%d workers, %v: %d graphs computed (%v per worker)", workers, dur, total, iters)
}
