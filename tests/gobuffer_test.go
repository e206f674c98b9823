package tests

import (
	"errors"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
)

// ---------------------------------------------------------------------------------------------
// helpers shared by gobuffer_test.go, sched_test.go and custom_test.go (prefix x)

// xLeakCheck records the live native objects and cgo handles now and checks, when the test
// ends (after every other cleanup), that both are back to those values.
func xLeakCheck(t *testing.T) {
	t.Helper()
	// objects other tests left to the garbage collector are freed before the count is taken
	settle := func() {
		last := -1
		for i := 0; i < 50; i++ {
			runtime.GC()
			time.Sleep(2 * time.Millisecond)
			n := ggml.LiveObjects()
			if n == last {
				return
			}
			last = n
		}
	}
	settle()
	objs, handles := ggml.LiveObjects(), ggml.LiveHandles()
	t.Cleanup(func() {
		ok := assert.Eventually(t, func() bool {
			runtime.GC()
			return ggml.LiveObjects() == objs && ggml.LiveHandles() == handles
		}, 2*time.Second, 5*time.Millisecond)
		if !ok {
			t.Logf("live objects %d (start %d): %v; handles %d (start %d)", ggml.LiveObjects(), objs,
				ggml.LiveObjectsByKind(), ggml.LiveHandles(), handles)
		}
	})
}

func xCPU(t *testing.T, threads int) *ggml.Backend {
	t.Helper()
	b, err := ggml.NewCPU(ggml.WithThreads(threads))
	require.NoError(t, err)
	t.Cleanup(func() { b.Close() })
	return b
}

func xCtx(t *testing.T, noAlloc bool) *ggml.Context {
	t.Helper()
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 256*ggml.TensorOverhead() + 2*ggml.GraphOverhead() + 1<<20, NoAlloc: noAlloc})
	require.NoError(t, err)
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

func xRand(seed int64, n int) []float32 {
	r := rand.New(rand.NewSource(seed))
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.Float64()*2 - 1)
	}
	return v
}

func xNear(t *testing.T, want []float64, got []float32, tol float64, msg string) {
	t.Helper()
	require.Equal(t, len(want), len(got), msg)
	for i := range want {
		if math.Abs(want[i]-float64(got[i])) > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s: element %d = %g, want %g", msg, i, got[i], want[i])
		}
	}
}

// a two-layer MLP: out = W2 · relu(W1 · x + b1), x [K, N]
const (
	xK = 8
	xH = 16
	xO = 4
	xN = 3
)

type xMLP struct {
	wctx          *ggml.Context
	w1, b1, w2    *ggml.Tensor
	vw1, vb1, vw2 []float32
}

// xNewMLP creates the weight tensors (without data) in their own context.
func xNewMLP(t *testing.T, seed int64) *xMLP {
	m := &xMLP{wctx: xCtx(t, true)}
	m.w1 = m.wctx.NewTensor2D(ggml.TypeF32, xK, xH).SetName("w1")
	m.b1 = m.wctx.NewTensor1D(ggml.TypeF32, xH).SetName("b1")
	m.w2 = m.wctx.NewTensor2D(ggml.TypeF32, xH, xO).SetName("w2")
	m.vw1, m.vb1, m.vw2 = xRand(seed, xK*xH), xRand(seed+1, xH), xRand(seed+2, xH*xO)
	return m
}

func (m *xMLP) load(t *testing.T) {
	require.NoError(t, m.w1.SetFloat32(m.vw1))
	require.NoError(t, m.b1.SetFloat32(m.vb1))
	require.NoError(t, m.w2.SetFloat32(m.vw2))
}

// graph builds the forward graph in a new no-alloc context; x has no data.
func (m *xMLP) graph(t *testing.T, ctx *ggml.Context) (g *ggml.Graph, x, act, out *ggml.Tensor) {
	x = ctx.NewTensor2D(ggml.TypeF32, xK, xN).SetName("x")
	h := ctx.Add(ctx.MulMat(m.w1, x), m.b1)
	act = ctx.Relu(h).SetName("act")
	out = ctx.MulMat(m.w2, act).SetName("out")
	g = ctx.NewGraph()
	g.BuildForwardExpand(out)
	return g, x, act, out
}

func (m *xMLP) ref(x []float32) []float64 {
	out := make([]float64, xO*xN)
	h := make([]float64, xH)
	for n := 0; n < xN; n++ {
		for j := 0; j < xH; j++ {
			s := float64(m.vb1[j])
			for k := 0; k < xK; k++ {
				s += float64(m.vw1[k+xK*j]) * float64(x[k+xK*n])
			}
			h[j] = math.Max(s, 0)
		}
		for o := 0; o < xO; o++ {
			s := 0.0
			for j := 0; j < xH; j++ {
				s += float64(m.vw2[j+xH*o]) * h[j]
			}
			out[o+xO*n] = s
		}
	}
	return out
}

// ---------------------------------------------------------------------------------------------
// a Go buffer type over C host memory that counts its calls

type countingType struct {
	name          string
	failAlloc     bool
	panicSet      atomic.Bool
	allocs, frees atomic.Int64
	sets, gets    atomic.Int64
	inits         atomic.Int64
}

func (c *countingType) Name() string                    { return c.name }
func (c *countingType) Alignment() uint64               { return 64 }
func (c *countingType) AllocSize(t *ggml.Tensor) uint64 { return t.Nbytes() }
func (c *countingType) SupportsBackend(b *ggml.Backend) bool {
	return b.IsCPU()
}
func (c *countingType) IsHost() bool { return true }

func (c *countingType) Alloc(size uint64) (ggml.BufferImpl, error) {
	if c.failAlloc {
		return nil, errors.New("no memory today")
	}
	hb, err := ggml.NewHostBuffer(size, 64)
	if err != nil {
		return nil, err
	}
	c.allocs.Add(1)
	return &countingBuffer{HostBuffer: hb, typ: c}, nil
}

type countingBuffer struct {
	*ggml.HostBuffer
	typ *countingType
}

func (b *countingBuffer) InitTensor(t *ggml.Tensor) error {
	b.typ.inits.Add(1)
	return nil
}

func (b *countingBuffer) SetTensor(t *ggml.Tensor, data []byte, off uint64) error {
	b.typ.sets.Add(1)
	if b.typ.panicSet.Load() {
		panic("boom")
	}
	return b.HostBuffer.SetTensor(t, data, off)
}

func (b *countingBuffer) GetTensor(t *ggml.Tensor, data []byte, off uint64) error {
	b.typ.gets.Add(1)
	return b.HostBuffer.GetTensor(t, data, off)
}

func (b *countingBuffer) Free() {
	b.typ.frees.Add(1)
	b.HostBuffer.Free()
}

func newCountingType(t *testing.T) (*countingType, *ggml.BufferType) {
	impl := &countingType{name: "Counting"}
	bt, err := ggml.NewBufferType(impl)
	require.NoError(t, err)
	t.Cleanup(func() { bt.Close() })
	return impl, bt
}

// computeOnCPU computes m's graph for input xv with every tensor of the graph context in a CPU
// buffer.
func computeOnCPU(t *testing.T, cpu *ggml.Backend, m *xMLP, xv []float32) []float32 {
	ctx := xCtx(t, true)
	g, x, _, out := m.graph(t, ctx)
	buf, err := ggml.AllocContextTensors(ctx, cpu)
	require.NoError(t, err)
	defer buf.Close()
	require.NoError(t, x.SetFloat32(xv))
	require.NoError(t, cpu.Compute(g))
	got, err := out.Float32()
	require.NoError(t, err)
	return got
}

func TestGoBufferTypeForWeights(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 2)
	impl, bt := newCountingType(t)
	assert.Equal(t, "Counting", bt.Name())
	assert.Equal(t, uint64(64), bt.Alignment())
	assert.True(t, bt.IsHost())
	assert.True(t, bt.SupportsBackend(cpu))
	assert.Same(t, impl, bt.Impl())

	m := xNewMLP(t, 1)
	wbuf, err := ggml.AllocContextTensorsFromBufferType(m.wctx, bt)
	require.NoError(t, err)
	defer wbuf.Close()
	assert.Equal(t, "Counting", wbuf.Name())
	assert.Equal(t, int64(1), impl.allocs.Load())
	assert.Equal(t, int64(3), impl.inits.Load(), "init_tensor once per weight")
	_, isCounting := wbuf.Impl().(*countingBuffer)
	assert.True(t, isCounting)

	m.load(t)
	assert.Equal(t, int64(3), impl.sets.Load())
	back, err := m.w2.Float32()
	require.NoError(t, err)
	assert.Equal(t, m.vw2, back)
	assert.Equal(t, int64(1), impl.gets.Load())

	xv := xRand(7, xK*xN)
	xNear(t, m.ref(xv), computeOnCPU(t, cpu, m, xv), 1e-5, "MLP with Go-buffer weights")

	// errors from and panics in callbacks come back as errors
	impl.panicSet.Store(true)
	err = m.b1.SetFloat32(m.vb1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "panicked")
	impl.panicSet.Store(false)
	err = m.b1.SetFloat32(m.vb1)
	require.NoError(t, err, "the thread's error was consumed")

	require.NoError(t, wbuf.Close())
	assert.Equal(t, int64(1), impl.frees.Load())
}

func TestGoBufferTypeAllocError(t *testing.T) {
	xLeakCheck(t)
	impl := &countingType{name: "Failing", failAlloc: true}
	bt, err := ggml.NewBufferType(impl)
	require.NoError(t, err)
	defer bt.Close()
	_, err = bt.AllocBuffer(1024)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no memory today")

	m := xNewMLP(t, 2)
	_, err = ggml.AllocContextTensorsFromBufferType(m.wctx, bt)
	require.Error(t, err)
}

func TestGoBufferTypeClosedBeforeItsBuffers(t *testing.T) {
	xLeakCheck(t)
	impl := &countingType{name: "Counting"}
	bt, err := ggml.NewBufferType(impl)
	require.NoError(t, err)
	h0 := ggml.LiveHandles()
	buf, err := bt.AllocBuffer(4096)
	require.NoError(t, err)
	assert.Equal(t, h0+1, ggml.LiveHandles(), "one handle per buffer")
	require.NoError(t, bt.Close())
	require.NoError(t, bt.Close(), "Close is idempotent")
	// the buffer (and through it the type) stays usable until the buffer is freed
	assert.Equal(t, "Counting", buf.Name())
	buf.Clear(7)
	assert.Equal(t, uint64(4096), buf.Size())
	assert.Equal(t, h0+1, ggml.LiveHandles())
	require.NoError(t, buf.Close())
	assert.Equal(t, h0-1, ggml.LiveHandles(), "type and buffer handles released")
	assert.Equal(t, int64(1), impl.frees.Load())
}

func TestHandleLeak(t *testing.T) {
	xLeakCheck(t)
	start := ggml.LiveHandles()
	for i := 0; i < 20; i++ {
		impl := &countingType{name: "Counting"}
		bt, err := ggml.NewBufferType(impl)
		require.NoError(t, err)
		tr, err := ggml.NewTracingBufferType(bt)
		require.NoError(t, err)
		m := xNewMLP(t, int64(i))
		buf, err := ggml.AllocContextTensorsFromBufferType(m.wctx, tr.BufferType)
		require.NoError(t, err)
		m.load(t)

		ctx := xCtx(t, false)
		a := ctx.NewTensor1D(ggml.TypeF32, 16)
		require.NoError(t, a.SetFloat32(xRand(1, 16)))
		y := ctx.MapCustom1(a, func(dst, a, _, _ *ggml.Tensor, ith, nth int) {}, ggml.AllTasks)
		g := ctx.NewGraph()
		g.BuildForwardExpand(y)
		require.NoError(t, ctx.Compute(g, 2))

		require.NoError(t, buf.Close())
		require.NoError(t, tr.Close())
		require.NoError(t, bt.Close())
		require.NoError(t, ctx.Close())
		require.NoError(t, m.wctx.Close())
	}
	assert.Equal(t, start, ggml.LiveHandles(), "handle table back to its start size")
}

func TestTracingBufferType(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 2)
	var log strings.Builder
	tr, err := ggml.NewTracingBufferType(ggml.CPUBufferType(), ggml.WithTraceLog(&log))
	require.NoError(t, err)
	defer tr.Close()
	assert.Equal(t, "Trace(CPU)", tr.Name())
	assert.True(t, tr.IsHost())
	assert.True(t, tr.SupportsBackend(cpu))

	m := xNewMLP(t, 3)
	wbuf, err := ggml.AllocContextTensorsFromBufferType(m.wctx, tr.BufferType)
	require.NoError(t, err)
	m.load(t)
	st := tr.Stats()
	assert.Equal(t, int64(1), st.Allocs)
	assert.Equal(t, int64(3), st.Sets)
	assert.Equal(t, int64(4*(xK*xH+xH+xH*xO)), st.SetBytes)
	_, err = m.w1.Float32()
	require.NoError(t, err)
	assert.Equal(t, int64(1), tr.Stats().Gets)
	assert.Equal(t, int64(4*xK*xH), tr.Stats().GetBytes)

	// a copy from host memory is a write into the destination buffer
	ctx2 := xCtx(t, true)
	w1c := ctx2.NewTensor2D(ggml.TypeF32, xK, xH)
	buf2, err := ggml.AllocContextTensorsFromBufferType(ctx2, tr.BufferType)
	require.NoError(t, err)
	require.NoError(t, ggml.CopyTensor(m.w1, w1c))
	assert.Equal(t, int64(4), tr.Stats().Sets)
	got, err := w1c.Float32()
	require.NoError(t, err)
	assert.Equal(t, m.vw1, got)

	xv := xRand(8, xK*xN)
	xNear(t, m.ref(xv), computeOnCPU(t, cpu, m, xv), 1e-5, "MLP with traced weights")

	buf2.Clear(0)
	assert.Equal(t, int64(1), tr.Stats().Clears)
	require.NoError(t, buf2.Close())
	require.NoError(t, wbuf.Close())
	assert.Equal(t, int64(2), tr.Stats().Frees)
	assert.Contains(t, log.String(), `Trace(CPU): set "w1" [8 16 1 1] f32 offset 0, 512 bytes`)
	tr.ResetStats()
	assert.Equal(t, ggml.TraceStats{}, tr.Stats())
}

func TestMmapWeights(t *testing.T) {
	xLeakCheck(t)
	cpu := xCPU(t, 2)
	m := xNewMLP(t, 4)

	// a little weights file: a 100-byte header, then each tensor at a 64-byte aligned offset
	offs := []uint64{128, 128 + 4*xK*xH, 128 + 4*xK*xH + 4*xH}
	file := make([]byte, offs[2]+4*xH*xO)
	copy(file, "not tensor data")
	for i, v := range [][]float32{m.vw1, m.vb1, m.vw2} {
		copy(file[offs[i]:], unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v)))
	}
	path := filepath.Join(t.TempDir(), "weights.bin")
	require.NoError(t, os.WriteFile(path, file, 0o644))

	mt, err := ggml.NewMmapBufferType()
	require.NoError(t, err)
	defer mt.Close()
	assert.Equal(t, "Mmap", mt.Name())
	buf, err := mt.MapFile(path)
	require.NoError(t, err)
	assert.Equal(t, uint64(len(file)), buf.Size())
	assert.Equal(t, ggml.BufferUsageWeights, buf.Usage())
	assert.True(t, buf.IsHost())
	for i, w := range []*ggml.Tensor{m.w1, m.b1, m.w2} {
		require.NoError(t, buf.PlaceTensor(w, offs[i]))
	}
	got, err := m.w2.Float32()
	require.NoError(t, err)
	assert.Equal(t, m.vw2, got, "zero-copy read of the file")

	xv := xRand(9, xK*xN)
	xNear(t, m.ref(xv), computeOnCPU(t, cpu, m, xv), 1e-5, "MLP with mapped weights")

	// the mapping is read-only through the API
	err = m.b1.SetFloat32(m.vb1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "read-only")

	// anonymous mappings for allocators are writable
	ctx := xCtx(t, true)
	a := ctx.NewTensor1D(ggml.TypeF32, 10)
	abuf, err := ggml.AllocContextTensorsFromBufferType(ctx, mt.BufferType)
	require.NoError(t, err)
	require.NoError(t, a.SetFloat32(xRand(1, 10)))
	require.NoError(t, abuf.Close())

	require.NoError(t, buf.Close())

	_, err = ggml.MapFile(filepath.Join(t.TempDir(), "missing"))
	require.Error(t, err)
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err = ggml.MapFile(empty)
	require.Error(t, err)

	// the package-level MapFile owns a private type released with the buffer
	b2, err := ggml.MapFile(path)
	require.NoError(t, err)
	require.NoError(t, b2.Close())
}
