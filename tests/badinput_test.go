package tests

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/internal/testbackend"
)

// The bad-input inventory of the Go API: one table entry per class of bad input, each probe a
// call that must fail cleanly -- construction mistakes panic with a *ggml.Error, runtime and
// resource failures return a *ggml.Error, both with a message -- and never abort the process
// or touch freed memory. After every class, two witnesses built before the first probe (a
// graph computed through a CPU backend and its buffer, and one in an allocating context) are
// computed again and must give the same bits, and the native objects are back to their count
// (xLeakCheck). The C-level inventory is ggml/tests/test-bad-input.c.

// biPanic runs f, which must panic with a *ggml.Error whose message contains want.
func biPanic(t *testing.T, name, want string, f func()) {
	t.Helper()
	e := mustPanicError(t, name, f)
	if e != nil {
		assert.NotEmpty(t, e.Error(), name)
		assert.Contains(t, e.Error(), want, name)
	}
}

// biErr checks that err is a *ggml.Error whose message contains want.
func biErr(t *testing.T, name, want string, err error) {
	t.Helper()
	var e *ggml.Error
	if !assert.ErrorAs(t, err, &e, name) {
		return
	}
	assert.Contains(t, e.Error(), want, name)
}

type biWitness struct {
	cpu          *ggml.Backend
	bctx, actx   *ggml.Context
	buf          *ggml.Buffer
	bg, ag       *ggml.Graph
	bout, aout   *ggml.Tensor
	bref, aref   []float32
	inputs       []*ggml.Tensor
	inputsBefore [][]float32
}

func biNewWitness(t *testing.T) *biWitness {
	w := &biWitness{cpu: xCPU(t, 2)}
	w.bctx = xCtx(t, true)
	a := w.bctx.NewTensor2D(ggml.TypeF32, 16, 8)
	x := w.bctx.NewTensor2D(ggml.TypeF32, 16, 4)
	bias := w.bctx.NewTensor1D(ggml.TypeF32, 8)
	w.bout = w.bctx.SoftMax(w.bctx.Add(w.bctx.MulMat(a, x), bias))
	w.bg = w.bctx.NewGraph().BuildForwardExpand(w.bout)
	var err error
	w.buf, err = ggml.AllocContextTensors(w.bctx, w.cpu)
	require.NoError(t, err)
	t.Cleanup(func() { w.buf.Close() })
	w.actx = xCtx(t, false)
	p := w.actx.NewTensor2D(ggml.TypeF32, 8, 8)
	q := w.actx.NewTensor2D(ggml.TypeF32, 8, 8)
	w.aout = w.actx.Gelu(w.actx.Mul(w.actx.RMSNorm(p, 1e-6), q))
	w.ag = w.actx.NewGraph().BuildForwardExpand(w.aout)
	w.inputs = []*ggml.Tensor{a, x, bias, p, q}
	for i, in := range w.inputs {
		v := xRand(int64(500+i), int(in.NumElements()))
		require.NoError(t, in.SetFloat32(v))
		w.inputsBefore = append(w.inputsBefore, v)
	}
	w.bref, w.aref = w.run(t)
	return w
}

func (w *biWitness) run(t *testing.T) (b, a []float32) {
	require.NoError(t, w.cpu.Compute(w.bg))
	require.NoError(t, w.actx.Compute(w.ag, 2))
	b, err := w.bout.Float32()
	require.NoError(t, err)
	a, err = w.aout.Float32()
	require.NoError(t, err)
	return b, a
}

func (w *biWitness) check(t *testing.T) {
	t.Helper()
	for i, in := range w.inputs {
		v, err := in.Float32()
		require.NoError(t, err)
		require.NoError(t, stEqual(w.inputsBefore[i], v), "witness input %d", i)
	}
	b, a := w.run(t)
	require.NoError(t, stEqual(w.bref, b), "backend witness")
	require.NoError(t, stEqual(w.aref, a), "arena witness")
}

// failingType is a Go buffer type whose allocations fail (panic: they panic instead).
type failingType struct{ panics bool }

func (f *failingType) Name() string                    { return "Failing" }
func (f *failingType) Alignment() uint64               { return 32 }
func (f *failingType) AllocSize(t *ggml.Tensor) uint64 { return t.Nbytes() }
func (f *failingType) SupportsBackend(b *ggml.Backend) bool {
	return b.IsCPU()
}
func (f *failingType) IsHost() bool { return true }
func (f *failingType) Alloc(size uint64) (ggml.BufferImpl, error) {
	if f.panics {
		panic("failingType: out of its mind")
	}
	return nil, errors.New("failingType: no memory today")
}

type biClass struct {
	name, what string
	run        func(t *testing.T, w *biWitness)
}

var biClasses = []biClass{
	{"shapes", "operand shapes an op does not accept", func(t *testing.T, w *biWitness) {
		ctx := xCtx(t, true)
		a43, a53, a52 := ctx.NewTensor2D(ggml.TypeF32, 4, 3), ctx.NewTensor2D(ggml.TypeF32, 5, 3), ctx.NewTensor2D(ggml.TypeF32, 5, 2)
		used := ctx.UsedMem()
		biPanic(t, "Add", "broadcast", func() { ctx.Add(a43, a53) })
		biPanic(t, "MulMat", "same length K", func() { ctx.MulMat(a43, a52) })
		biPanic(t, "Cpy", "element count", func() { ctx.Cpy(a43, a53) })
		biPanic(t, "Reshape2D", "reshape", func() { ctx.Reshape2D(a43, 5, 2) })
		biPanic(t, "Concat", "ggml_concat", func() { ctx.Concat(a43, a52) })
		biPanic(t, "SoftMaxExt", "mask", func() { ctx.SoftMaxExt(a43, ctx.NewTensor1D(ggml.TypeF32, 8), 1) })
		assert.Equal(t, used+ggml.TensorOverhead(), ctx.UsedMem(), "failed constructors take no memory")
	}},
	{"types", "operand types an op does not accept, unknown types", func(t *testing.T, w *biWitness) {
		ctx := xCtx(t, true)
		x := ctx.NewTensor2D(ggml.TypeF32, 8, 4)
		biPanic(t, "GetRows", "I32", func() { ctx.GetRows(x, ctx.NewTensor1D(ggml.TypeF32, 2)) })
		biPanic(t, "Rope", "I32", func() { ctx.Rope(ctx.NewTensor3D(ggml.TypeF32, 8, 2, 3), ctx.NewTensor1D(ggml.TypeF32, 3), 8, 0, 0) })
		biPanic(t, "NewTensor(type 99)", "type", func() { ctx.NewTensor1D(ggml.Type(99), 4) })
		biPanic(t, "NewTensor(type 4)", "type", func() { ctx.NewTensor1D(ggml.Type(4), 32) })
		biPanic(t, "Unary", "unary", func() { ctx.Unary(x, ggml.UnaryOp(42)) })
		_, err := xCtx(t, false).NewTensor1D(ggml.TypeF32, 4).Int32() // accessor of another type
		biErr(t, "Int32 of f32", "i32", err)
		_, err = ggml.Quantize(ggml.Type(99), make([]float32, 32), 32)
		assert.Error(t, err)
	}},
	{"dimensions", "negative/overflowing extents, more than 4 dims, partial blocks", func(t *testing.T, w *biWitness) {
		ctx := xCtx(t, true)
		biPanic(t, "negative", "negative", func() { ctx.NewTensor(ggml.TypeF32, 4, -3) })
		biPanic(t, "5 dims", "", func() { ctx.NewTensor(ggml.TypeF32, 1, 1, 1, 1, 1) })
		biPanic(t, "0 dims", "", func() { ctx.NewTensor(ggml.TypeF32) })
		biPanic(t, "overflow", "overflow", func() { ctx.NewTensor(ggml.TypeF32, 1<<40, 1<<40, 1<<40) })
		biPanic(t, "partial block", "block", func() { ctx.NewTensor2D(ggml.TypeQ4_0, 33, 2) })
	}},
	{"views", "views, permutations and set offsets outside their source", func(t *testing.T, w *biWitness) {
		ctx := xCtx(t, true)
		a := ctx.NewTensor2D(ggml.TypeF32, 8, 4)
		biPanic(t, "View1D offset", "exceeds", func() { ctx.View1D(a, 8, 100) })
		biPanic(t, "View1D size", "exceeds", func() { ctx.View1D(a, 33, 0) })
		biPanic(t, "View1D huge offset", "exceeds", func() { ctx.View1D(a, 4, math.MaxUint64-8) })
		biPanic(t, "View2D stride", "exceeds", func() { ctx.View2D(a, 8, 4, 64, 0) })
		biPanic(t, "Permute dup", "permutation", func() { ctx.Permute(a, 0, 0, 1, 2) })
		biPanic(t, "Permute range", "permutation", func() { ctx.Permute(a, 0, 1, 2, 4) })
		biPanic(t, "Set1D", "inside", func() { ctx.Set1D(a, ctx.NewTensor1D(ggml.TypeF32, 4), 120) })
	}},
	{"tensor-access", "tensor get/set out of bounds, wrong lengths, without memory", func(t *testing.T, w *biWitness) {
		ctx := xCtx(t, true)
		x := ctx.NewTensor1D(ggml.TypeF32, 4)
		y := ctx.NewTensor1D(ggml.TypeF32, 4)
		none := x // replaced below by a tensor created after the allocation
		buf, err := ggml.AllocContextTensors(ctx, w.cpu)
		require.NoError(t, err)
		defer buf.Close()
		none = ctx.NewTensor1D(ggml.TypeF32, 4)
		require.NoError(t, x.SetFloat32([]float32{1, 2, 3, 4}))
		require.NoError(t, y.SetFloat32([]float32{5, 6, 7, 8}))
		biErr(t, "SetFloat32 short", "elements", x.SetFloat32([]float32{1}))
		biErr(t, "SetFloat32 long", "elements", x.SetFloat32(make([]float32, 9)))
		_, err = x.ReadAt(make([]byte, 8), 12)
		biErr(t, "ReadAt", "outside", err)
		_, err = x.WriteAt(make([]byte, 8), -1)
		biErr(t, "WriteAt", "outside", err)
		_, err = x.WriteAt(make([]byte, 4), math.MaxInt64-2)
		biErr(t, "WriteAt huge", "outside", err)
		biErr(t, "SetBytes", "", x.SetBytes(make([]byte, 3)))
		biErr(t, "no memory", "no data", none.SetFloat32([]float32{1, 2, 3, 4}))
		_, err = none.Float32()
		biErr(t, "no memory read", "no data", err)
		biErr(t, "CopyTensor", "", ggml.CopyTensor(x, ctx.NewTensor1D(ggml.TypeF32, 5)))
		got, err := y.Float32()
		require.NoError(t, err)
		assert.Equal(t, []float32{5, 6, 7, 8}, got, "the neighbour is intact")
		got, err = x.Float32()
		require.NoError(t, err)
		assert.Equal(t, []float32{1, 2, 3, 4}, got, "the tensor is intact")
	}},
	{"closed-objects", "tensors, graphs of a closed context; closed backends, schedulers, buffers", func(t *testing.T, w *biWitness) {
		ctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20})
		require.NoError(t, err)
		x := ctx.NewTensor1D(ggml.TypeF32, 4)
		g := ctx.NewGraph().BuildForwardExpand(ctx.Neg(x))
		require.NoError(t, ctx.Close())
		live := xCtx(t, false)
		biPanic(t, "op on closed tensor", "closed", func() { live.Neg(x) })
		err = x.SetFloat32([]float32{1, 2, 3, 4})
		biErr(t, "closed tensor data", "closed", err)
		assert.ErrorIs(t, err, ggml.ErrClosed, "closed tensor data")
		err = w.cpu.Compute(g) // methods that return an error report closed objects with it
		biErr(t, "closed graph", "closed", err)
		assert.ErrorIs(t, err, ggml.ErrClosed, "closed graph")
		biPanic(t, "closed context", "closed", func() { ctx.NewTensor1D(ggml.TypeF32, 1) })
		cpu, err := ggml.NewCPU(ggml.WithThreads(1))
		require.NoError(t, err)
		require.NoError(t, cpu.Close())
		err = cpu.Compute(w.ag)
		biErr(t, "closed backend", "Close", err)
		assert.ErrorIs(t, err, ggml.ErrClosed, "closed backend")
		sched, err := ggml.NewScheduler([]*ggml.Backend{w.cpu}, nil, 64)
		require.NoError(t, err)
		require.NoError(t, sched.Close())
		err = sched.Compute(w.ag)
		biErr(t, "closed scheduler", "Close", err)
		assert.ErrorIs(t, err, ggml.ErrClosed, "closed scheduler")
		buf, err := w.cpu.AllocBuffer(64)
		require.NoError(t, err)
		require.NoError(t, buf.Close())
		biPanic(t, "closed buffer", "Close", func() { buf.Size() })
		gb, err := ggml.NewGraphAllocator()
		require.NoError(t, err)
		require.NoError(t, gb.Close())
		ta, err := ggml.NewMeasureAllocator(32)
		require.NoError(t, err)
		require.NoError(t, ta.Close())
		err = ta.Alloc(live.NewTensor1D(ggml.TypeF32, 4))
		biErr(t, "closed allocator", "Close", err)
		assert.ErrorIs(t, err, ggml.ErrClosed, "closed allocator")
	}},
	{"freed-memory", "tensors whose buffer, allocator or scheduler was closed", func(t *testing.T, w *biWitness) {
		// a closed buffer: its tensors lose their memory instead of pointing at freed bytes
		ctx := xCtx(t, true)
		x := ctx.NewTensor1D(ggml.TypeF32, 4)
		y := ctx.Neg(x)
		g := ctx.NewGraph().BuildForwardExpand(y)
		buf, err := ggml.AllocContextTensors(ctx, w.cpu)
		require.NoError(t, err)
		require.NoError(t, x.SetFloat32([]float32{1, 2, 3, 4}))
		require.NoError(t, buf.Close())
		_, err = x.Float32()
		biErr(t, "read after buffer close", "buffer holding the tensor was closed", err)
		assert.ErrorIs(t, err, ggml.ErrClosed, "read after buffer close")
		biErr(t, "write after buffer close", "buffer holding the tensor was closed", x.SetFloat32([]float32{1, 2, 3, 4}))
		assert.Error(t, w.cpu.Compute(g), "compute after buffer close")

		// an allocator that owns its buffer
		ctx2 := xCtx(t, true)
		z := ctx2.NewTensor1D(ggml.TypeF32, 4)
		ta, err := ggml.NewTensorAllocatorFromBackend(w.cpu, 1024)
		require.NoError(t, err)
		require.NoError(t, ta.Alloc(z))
		require.NoError(t, z.SetFloat32([]float32{1, 2, 3, 4}))
		require.NoError(t, ta.Close())
		_, err = z.Float32()
		biErr(t, "read after allocator close", "buffer holding the tensor was closed", err)
		assert.ErrorIs(t, err, ggml.ErrClosed, "read after allocator close")

		// a scheduler's intermediate tensors
		ctx3 := xCtx(t, true)
		in := ctx3.NewTensor1D(ggml.TypeF32, 4)
		out := ctx3.Sqr(ctx3.Neg(in))
		g3 := ctx3.NewGraph().BuildForwardExpand(out)
		inBuf, err := ggml.AllocContextTensors(ctx3, w.cpu)
		require.NoError(t, err)
		t.Cleanup(func() { inBuf.Close() })
		sched, err := ggml.NewScheduler([]*ggml.Backend{w.cpu}, nil, 64)
		require.NoError(t, err)
		require.NoError(t, sched.InitMeasure(g3))
		require.NoError(t, in.SetFloat32([]float32{1, 2, 3, 4}))
		require.NoError(t, sched.Compute(g3))
		require.NoError(t, sched.Close())
		got, err := in.Float32()
		require.NoError(t, err, "tensors in the user's own buffer are unaffected")
		assert.Equal(t, []float32{1, 2, 3, 4}, got)
	}},
	{"context-full", "context arena exhausted, arena larger than memory", func(t *testing.T, w *biWitness) {
		ctx, err := ggml.NewContext(ggml.Params{MemSize: 3*ggml.TensorOverhead() + 256})
		require.NoError(t, err)
		defer ctx.Close()
		a := ctx.NewTensor1D(ggml.TypeF32, 8)
		biPanic(t, "NewTensor", "not enough space", func() { ctx.NewTensor1D(ggml.TypeF32, 1<<20) })
		biPanic(t, "NewGraph", "not enough space", func() { ctx.NewGraph() })
		require.NoError(t, a.Fill(2))
		v, err := a.Float32()
		require.NoError(t, err)
		assert.Equal(t, float32(2), v[7])
		_, err = ggml.NewContext(ggml.Params{MemSize: math.MaxInt64})
		biErr(t, "NewContext huge", "", err)
	}},
	{"graph-size", "graphs holding more nodes than their size, copies into smaller graphs", func(t *testing.T, w *biWitness) {
		ctx := xCtx(t, false)
		x := ctx.NewTensor1D(ggml.TypeF32, 4)
		y := x
		for i := 0; i < 12; i++ {
			y = ctx.Add(y, x)
		}
		biPanic(t, "BuildForwardExpand", "full", func() { ctx.NewGraphCustom(4, false).BuildForwardExpand(y) })
		big := ctx.NewGraphCustom(64, false).BuildForwardExpand(y)
		assert.Equal(t, 12, big.Len())
		biPanic(t, "CopyTo", "", func() { big.CopyTo(ctx.NewGraphCustom(4, false)) })
		biPanic(t, "NewGraphCustom", "", func() { ctx.NewGraphCustom(-1, false) })
		require.NoError(t, x.SetFloat32([]float32{0, 1, 2, 3}))
		require.NoError(t, ctx.Compute(big, 2))
		v, err := y.Float32()
		require.NoError(t, err)
		assert.Equal(t, []float32{0, 13, 26, 39}, v)
	}},
	{"allocation", "buffer types whose alloc fails or panics, huge buffers, allocators out of space", func(t *testing.T, w *biWitness) {
		for _, ft := range []*failingType{{}, {panics: true}} {
			bt, err := ggml.NewBufferType(ft)
			require.NoError(t, err)
			ctx := xCtx(t, true)
			a := ctx.NewTensor1D(ggml.TypeF32, 64)
			_, err = ggml.AllocContextTensorsFromBufferType(ctx, bt)
			biErr(t, "AllocContextTensorsFromBufferType", "", err)
			assert.False(t, a.HasData())
			_, err = ggml.NewTensorAllocatorFromBufferType(bt, 1024)
			biErr(t, "NewTensorAllocatorFromBufferType", "", err)
			_, err = ggml.NewScheduler([]*ggml.Backend{w.cpu}, []*ggml.BufferType{bt}, 64)
			biErr(t, "NewScheduler", "", err)
			require.NoError(t, bt.Close())
		}
		_, err := w.cpu.AllocBuffer(1 << 62)
		biErr(t, "AllocBuffer huge", "failed to allocate", err)
		// a tensor allocator over a buffer that is too small
		small, err := w.cpu.AllocBuffer(300)
		require.NoError(t, err)
		defer small.Close()
		ta, err := ggml.NewTensorAllocator(small)
		require.NoError(t, err)
		defer ta.Close()
		ctx := xCtx(t, true)
		a, b := ctx.NewTensor1D(ggml.TypeF32, 64), ctx.NewTensor1D(ggml.TypeF32, 64)
		require.NoError(t, ta.Alloc(a))
		biErr(t, "TensorAllocator.Alloc", "not enough space", ta.Alloc(b))
		assert.False(t, b.HasData())
		biErr(t, "PlaceTensor", "", small.PlaceTensor(b, 200))
	}},
	{"scheduler", "scheduler backend count, graph size and split limits, foreign backends", func(t *testing.T, w *biWitness) {
		_, err := ggml.NewScheduler(nil, nil, 64)
		biErr(t, "no backends", "", err)
		many := make([]*ggml.Backend, 17)
		for i := range many {
			many[i] = w.cpu
		}
		_, err = ggml.NewScheduler(many, nil, 64)
		biErr(t, "17 backends", "", err)
		_, err = ggml.NewScheduler([]*ggml.Backend{w.cpu}, []*ggml.BufferType{nil, nil}, 64)
		assert.Error(t, err, "buffer types do not match the backends")

		sched, err := ggml.NewScheduler([]*ggml.Backend{w.cpu}, nil, 4)
		require.NoError(t, err)
		defer sched.Close()
		ctx := xCtx(t, true)
		xctx := xCtx(t, true)
		x := xctx.NewTensor1D(ggml.TypeF32, 4)
		xbuf, err := ggml.AllocContextTensors(xctx, w.cpu)
		require.NoError(t, err)
		defer xbuf.Close()
		require.NoError(t, x.SetFloat32([]float32{1, 2, 3, 4}))
		y := x
		for i := 0; i < 40; i++ {
			y = ctx.Add(y, x)
		}
		biErr(t, "graph > graph_size", "too large", sched.Compute(ctx.NewGraph().BuildForwardExpand(y)))

		other := xCPU(t, 1)
		biPanic(t, "Allocator(foreign)", "not one of", func() { sched.Allocator(other) })
		biPanic(t, "SetNodeBackend(foreign)", "not one of", func() { sched.SetNodeBackend(y, other) })

		// more splits than the scheduler can make
		test, err := testbackend.New(1)
		require.NoError(t, err)
		defer test.Close()
		two := []*ggml.Backend{test, w.cpu}
		s2, err := ggml.NewScheduler(two, nil, 1024)
		require.NoError(t, err)
		defer s2.Close()
		sctx, err := ggml.NewContext(ggml.Params{MemSize: 700*ggml.TensorOverhead() + ggml.GraphOverheadCustom(1024, false), NoAlloc: true})
		require.NoError(t, err)
		defer sctx.Close()
		z := x
		for i := 0; i < 600; i++ {
			z = sctx.Scale(z, 1)
		}
		sg := sctx.NewGraphCustom(1024, false).BuildForwardExpand(z)
		for i, n := range sg.Nodes() {
			s2.SetNodeBackend(n, two[i%2])
		}
		biErr(t, "too many splits", "splits", s2.Compute(sg))
		// the scheduler still computes a valid graph
		s2.Reset()
		okctx := xCtx(t, true)
		r := okctx.Scale(okctx.Add(x, x), 0.5)
		require.NoError(t, s2.Compute(okctx.NewGraph().BuildForwardExpand(r)))
		v, err := r.Float32()
		require.NoError(t, err)
		assert.Equal(t, []float32{1, 2, 3, 4}, v)
	}},
	{"backend-names", "unknown backend names and parameters", func(t *testing.T, w *biWitness) {
		assert.Equal(t, -1, ggml.BackendIndex("NoSuchBackend"))
		for spec, want := range map[string]string{
			"NoSuchBackend":           "NoSuchBackend",
			"NoSuchBackend:threads=2": "NoSuchBackend",
			"CPU:colour=blue":         "colour",
			"CPU:threads=0":           "thread",
			"CPU:threads=x":           "thread",
			"":                        "",
		} {
			_, err := ggml.InitBackend(spec)
			biErr(t, "InitBackend("+spec+")", want, err)
		}
		_, err := ggml.NewCPU(ggml.WithThreads(-1))
		biErr(t, "NewCPU(-1)", "", err)
		b, err := ggml.InitBackend("CPU:threads=1")
		require.NoError(t, err)
		assert.True(t, b.IsCPU())
		require.NoError(t, b.Close())
	}},
	{"nil", "nil where an object is required", func(t *testing.T, w *biWitness) {
		ctx := xCtx(t, true)
		a := ctx.NewTensor1D(ggml.TypeF32, 4)
		biPanic(t, "Add(nil)", "", func() { ctx.Add(nil, a) })
		biPanic(t, "MulMat(nil)", "", func() { ctx.MulMat(a, nil) })
		biPanic(t, "BuildForwardExpand(nil)", "", func() { ctx.NewGraph().BuildForwardExpand(nil) })
		biErr(t, "Compute(nil)", "nil", w.cpu.Compute(nil))
		var nilCtx *ggml.Context
		biPanic(t, "nil context", "", func() { nilCtx.NewTensor1D(ggml.TypeF32, 4) })
		biPanic(t, "AllocContextTensors(nil)", "nil", func() { _, _ = ggml.AllocContextTensors(ctx, nil) })
	}},
	{"op-params", "op parameters out of range", func(t *testing.T, w *biWitness) {
		ctx := xCtx(t, true)
		img := ctx.NewTensor4D(ggml.TypeF32, 8, 8, 2, 1)
		x := ctx.NewTensor3D(ggml.TypeF32, 8, 2, 5)
		biPanic(t, "Pool2D kernel", "", func() { ctx.Pool2D(img, ggml.PoolMax, 0, 2, 1, 1, 0, 0) })
		biPanic(t, "Pool2D window", "", func() { ctx.Pool2D(img, ggml.PoolMax, 20, 2, 1, 1, 0, 0) })
		biPanic(t, "TopK", "k", func() { ctx.TopK(x, 9) })
		biPanic(t, "Upscale", "scale", func() { ctx.Upscale(img, 0) })
		biPanic(t, "Pad", "p0", func() { ctx.Pad(img, -1, 0, 0, 0) })
		biPanic(t, "Rope dims", "n_dims", func() { ctx.Rope(x, ctx.NewTensor1D(ggml.TypeI32, 5), 9, 0, 0) })
		biPanic(t, "Argsort order", "", func() { ctx.Argsort(x, ggml.SortOrder(3)) })
	}},
	{"compute", "compute without memory, thread counts < 1, ops a backend does not support", func(t *testing.T, w *biWitness) {
		biErr(t, "SetThreads(0)", "", w.cpu.SetThreads(0))
		ctx := xCtx(t, true)
		a := ctx.NewTensor1D(ggml.TypeF32, 4)
		g := ctx.NewGraph().BuildForwardExpand(ctx.Add(a, a))
		biErr(t, "unallocated", "no data", w.cpu.Compute(g))
		test, err := testbackend.New(1)
		require.NoError(t, err)
		defer test.Close()
		testbackend.Reject(test, ggml.OpAdd, true)
		tctx := xCtx(t, true)
		ta := tctx.NewTensor1D(ggml.TypeF32, 4)
		tc := tctx.Add(ta, ta)
		tg := tctx.NewGraph().BuildForwardExpand(tc)
		tbuf, err := ggml.AllocContextTensors(tctx, test)
		require.NoError(t, err)
		defer tbuf.Close()
		assert.False(t, test.SupportsOp(tc))
		biErr(t, "rejected op", "Test", test.Compute(tg))
		// a node no CPU kernel handles: mul_mat with a quantized src1
		qctx := xCtx(t, true)
		qm := qctx.MulMat(qctx.NewTensor2D(ggml.TypeF32, 32, 4), qctx.NewTensor2D(ggml.TypeQ4_0, 32, 4))
		qg := qctx.NewGraph().BuildForwardExpand(qm)
		qbuf, err := ggml.AllocContextTensors(qctx, w.cpu)
		require.NoError(t, err)
		defer qbuf.Close()
		qbuf.Clear(0)
		assert.False(t, w.cpu.SupportsOp(qm))
		biErr(t, "unsupported types", "", w.cpu.Compute(qg))
	}},
	{"index-data", "row/expert indices out of range in tensor data: zero rows, no stray access", func(t *testing.T, w *biWitness) {
		ctx := xCtx(t, false)
		rows := ctx.NewTensor2D(ggml.TypeF32, 4, 3)
		idx := ctx.NewTensor1D(ggml.TypeI32, 4)
		got := ctx.GetRows(rows, idx)
		g := ctx.NewGraph().BuildForwardExpand(got)
		rv := xRand(7, 12)
		require.NoError(t, rows.SetFloat32(rv))
		require.NoError(t, idx.SetInt32([]int32{2, -1, 3, math.MaxInt32}))
		require.NoError(t, ctx.Compute(g, 2))
		v, err := got.Float32()
		require.NoError(t, err)
		assert.Equal(t, rv[8:12], v[0:4])
		assert.Equal(t, make([]float32, 12), v[4:16])
	}},
	{"quantize", "quantization requests that do not fit the type's blocks", func(t *testing.T, w *biWitness) {
		_, err := ggml.Quantize(ggml.TypeQ4_0, make([]float32, 48), 48)
		biErr(t, "Quantize partial block", "block", err)
		_, err = ggml.Quantize(ggml.TypeQ4_0, make([]float32, 40), 32)
		biErr(t, "Quantize partial row", "", err)
		_, err = ggml.Dequantize(ggml.TypeQ4_0, make([]byte, 7), 32)
		biErr(t, "Dequantize short", "bytes", err)
	}},
}

func TestBadInputInventory(t *testing.T) {
	xLeakCheck(t)
	w := biNewWitness(t)
	names := map[string]bool{}
	for _, c := range biClasses {
		require.False(t, names[c.name], "duplicate class %s", c.name)
		names[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			xLeakCheck(t)
			c.run(t, w)
		})
		w.check(t)
	}
	var list []string
	for _, c := range biClasses {
		list = append(list, c.name)
	}
	t.Logf("%d bad-input classes: %s", len(biClasses), strings.Join(list, ", "))
}
