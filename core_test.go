//go:build cgo

package ggml

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// leakCheck asserts at the end of the test that LiveObjects is back to its value at the start.
func leakCheck(t *testing.T) {
	t.Helper()
	start := LiveObjects()
	t.Cleanup(func() {
		assert.Equal(t, start, LiveObjects(), "live native objects: %s", liveSummary())
	})
}

func newCtx(t *testing.T, p Params) *Context {
	t.Helper()
	ctx, err := NewContext(p)
	require.NoError(t, err)
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

func panicError(f func()) (e *Error) {
	defer func() {
		if r := recover(); r != nil {
			e, _ = r.(*Error)
			if e == nil {
				panic(r)
			}
		}
	}()
	f()
	return nil
}

func TestContextBasics(t *testing.T) {
	leakCheck(t)
	ctx := newCtx(t, Params{MemSize: 1 << 20})
	assert.Equal(t, uint64(1<<20), ctx.MemSize())
	used := ctx.UsedMem()
	a := ctx.NewTensor2D(TypeF32, 4, 3).SetName("a")
	assert.Greater(t, ctx.UsedMem(), used)
	assert.Equal(t, ctx.MemSize()-ctx.UsedMem(), ctx.FreeMem())
	assert.False(t, ctx.NoAlloc())
	ctx.SetNoAlloc(true)
	assert.True(t, ctx.NoAlloc())
	b := ctx.NewTensor1D(TypeI32, 5).SetName("b")
	assert.False(t, b.HasData())
	assert.True(t, a.HasData())
	assert.False(t, a.HasBuffer())
	assert.Nil(t, a.Buffer())
	assert.Same(t, a, ctx.Tensor("a"))
	assert.Nil(t, ctx.Tensor("nope"))
	assert.Equal(t, []*Tensor{a, b}, ctx.Tensors())
	assert.Equal(t, uint64(48), ctx.MaxTensorSize())
	assert.Same(t, ctx, a.Context())
	assert.False(t, ctx.Closed())
	require.NoError(t, ctx.Close())
	assert.True(t, ctx.Closed())
	require.NoError(t, ctx.Close())

	// default sizes
	c2 := newCtx(t, Params{NoAlloc: true})
	assert.Equal(t, 1024*TensorOverhead()+GraphOverhead(), c2.MemSize())
	c3 := newCtx(t, Params{})
	assert.Greater(t, c3.MemSize(), uint64(DefaultMemSize))
	_, err := NewContext(Params{MemSize: 1 << 63})
	assert.Error(t, err)
}

func TestContextFull(t *testing.T) {
	leakCheck(t)
	ctx := newCtx(t, Params{MemSize: 2 * TensorOverhead(), NoAlloc: true})
	ctx.NewTensor1D(TypeF32, 4)
	ctx.NewTensor1D(TypeF32, 4)
	e := panicError(func() { ctx.NewTensor1D(TypeF32, 4) })
	require.NotNil(t, e)
	assert.Equal(t, "NewTensor", e.Op)
	e = panicError(func() { ctx.NewGraph() })
	require.NotNil(t, e)
}

func TestTensorMetadata(t *testing.T) {
	leakCheck(t)
	ctx := newCtx(t, Params{NoAlloc: true})
	a := ctx.NewTensor3D(TypeF32, 4, 3, 2)
	assert.Equal(t, TypeF32, a.Type())
	assert.Equal(t, [4]int64{4, 3, 2, 1}, a.Ne())
	assert.Equal(t, [4]uint64{4, 16, 48, 96}, a.Nb())
	assert.Equal(t, []int64{4, 3, 2}, a.Shape())
	assert.Equal(t, []uint64{4, 16, 48}, a.Strides())
	assert.Equal(t, 3, a.NDims())
	assert.Equal(t, uint64(96), a.Nbytes())
	assert.Equal(t, uint64(96), a.NbytesPad())
	assert.Equal(t, uint64(4), a.ElementSize())
	assert.Equal(t, int64(24), a.NumElements())
	assert.Equal(t, int64(6), a.NumRows())
	assert.True(t, a.IsContiguous())
	assert.False(t, a.IsTransposed())
	assert.False(t, a.IsPermuted())
	assert.True(t, a.Is3D())
	assert.False(t, a.IsMatrix())
	assert.False(t, a.IsVector())
	assert.False(t, a.IsScalar())
	assert.Equal(t, OpNone, a.Op())
	assert.Equal(t, "", a.Name())
	a.SetName(strings.Repeat("x", 100))
	assert.Equal(t, strings.Repeat("x", MaxName-1), a.Name())
	a.SetName("a")

	tt := ctx.Transpose(a)
	assert.True(t, tt.IsTransposed())
	assert.True(t, tt.IsPermuted())
	assert.False(t, tt.IsContiguous())
	assert.Equal(t, OpTranspose, tt.Op())
	assert.Same(t, a, tt.Src(0))
	assert.Nil(t, tt.Src(1))
	assert.Same(t, a, tt.ViewSrc())
	assert.Equal(t, uint64(0), tt.ViewOffset())
	assert.True(t, tt.SameShape(ctx.NewTensor3D(TypeF32, 3, 4, 2)))
	assert.NotNil(t, panicError(func() { tt.Src(MaxSrc) }))

	v := ctx.View1D(a, 4, 8)
	assert.Equal(t, uint64(8), v.ViewOffset())
	assert.Same(t, a, v.ViewSrc())

	g := ctx.Gelu(a)
	assert.Equal(t, OpUnary, g.Op())
	assert.Equal(t, UnaryGelu, g.UnaryOp())
	assert.Equal(t, "GELU", g.OpDesc())
	assert.Equal(t, UnaryOp(-1), a.UnaryOp())
	assert.Contains(t, g.String(), "GELU")
	assert.Contains(t, a.String(), `"a" [4 3 2 1] f32`)

	mm := ctx.MulMat(ctx.NewTensor2D(TypeF32, 4, 5), ctx.NewTensor2D(TypeF32, 4, 6))
	mm.SetMulMatPrec(PrecF32)
	assert.Equal(t, int32(PrecF32), mm.OpParams()[0])
	assert.NotNil(t, panicError(func() { a.SetMulMatPrec(PrecF32) }))

	d := ctx.DupTensor(a)
	assert.Equal(t, a.Ne(), d.Ne())
	assert.Equal(t, OpNone, d.Op())
	vt := ctx.ViewTensor(a)
	assert.Same(t, a, vt.ViewSrc())

	var nilT *Tensor
	assert.Equal(t, "<nil tensor>", nilT.String())
	e := panicError(func() { nilT.Type() })
	require.NotNil(t, e)
	assert.Contains(t, e.Error(), "nil *Tensor")
}

func TestNewScalars(t *testing.T) {
	leakCheck(t)
	ctx := newCtx(t, Params{MemSize: 1 << 16})
	i := ctx.NewI32(-7)
	v, err := i.Int32()
	require.NoError(t, err)
	assert.Equal(t, []int32{-7}, v)
	f := ctx.NewF32(2.5)
	fv, err := f.Float32()
	require.NoError(t, err)
	assert.Equal(t, []float32{2.5}, fv)
}

func TestGraphAPI(t *testing.T) {
	leakCheck(t)
	ctx := newCtx(t, Params{MemSize: 1 << 20})
	a := ctx.NewTensor1D(TypeF32, 4).SetName("a")
	b := ctx.NewTensor1D(TypeF32, 4).SetName("b")
	require.NoError(t, a.SetFloat32([]float32{1, 2, 3, 4}))
	require.NoError(t, b.SetFloat32([]float32{10, 20, 30, 40}))
	s := ctx.Add(a, b).SetName("s")
	m := ctx.Mul(s, a).SetName("m")
	g := ctx.NewGraph()
	assert.Equal(t, DefaultGraphSize, g.Size())
	assert.Same(t, ctx, g.Context())
	g.BuildForwardExpand(m)
	assert.Equal(t, 2, g.Len())
	assert.Equal(t, 2, g.NumLeafs())
	assert.Equal(t, []*Tensor{s, m}, g.Nodes())
	assert.ElementsMatch(t, []*Tensor{a, b}, g.Leafs())
	assert.Same(t, m, g.Node(-1))
	assert.Same(t, s, g.Node(0))
	assert.Same(t, a, g.Leaf(0))
	assert.Same(t, m, g.Tensor("m"))
	assert.Same(t, a, g.Tensor("a"))
	assert.Nil(t, g.Tensor("zz"))
	assert.NotNil(t, panicError(func() { g.Node(2) }))
	assert.NotNil(t, panicError(func() { g.Leaf(-3) }))

	var out bytes.Buffer
	require.NoError(t, g.Print(&out))
	assert.Contains(t, out.String(), "MUL")
	assert.Contains(t, out.String(), "2 nodes")

	require.NoError(t, ctx.Compute(g, 2))
	got, err := m.Float32()
	require.NoError(t, err)
	assert.Equal(t, []float32{11, 44, 99, 176}, got)
	require.NoError(t, ctx.ComputeWithContext(g, 1))

	d := g.Dup(nil)
	assert.Equal(t, 2, d.Len())
	small := ctx.NewGraphCustom(1, false)
	assert.NotNil(t, panicError(func() { g.CopyTo(small) }))
	big := ctx.NewGraphCustom(DefaultGraphSize, true)
	g.CopyTo(big)
	assert.Equal(t, 2, big.Len())
	v := g.View(1, 2)
	assert.Equal(t, 1, v.Len())
	assert.Same(t, m, v.Node(0))
	assert.NotNil(t, panicError(func() { g.View(1, 5) }))
	g.Clear()
	assert.Equal(t, 0, g.Len())
	assert.NotNil(t, panicError(func() { small.BuildForwardExpand(m) }))
	assert.NotNil(t, panicError(func() { ctx.NewGraphCustom(-1, false) }))

	require.NoError(t, ctx.Close())
	e := panicError(func() { g.Len() })
	require.NotNil(t, e)
	assert.True(t, errors.Is(e, ErrClosed))
	e = panicError(func() { _ = v.Nodes() })
	require.NotNil(t, e)
}

func TestBackendCPU(t *testing.T) {
	leakCheck(t)
	assert.Contains(t, Backends(), "CPU")
	assert.Equal(t, 0, BackendIndex("CPU"))
	assert.Equal(t, -1, BackendIndex("nope"))
	assert.Equal(t, "CPU", RegistryBufferType(0).Name())
	assert.Nil(t, RegistryBufferType(-1))

	be, err := NewCPU(WithThreads(2))
	require.NoError(t, err)
	defer be.Close()
	assert.Equal(t, "CPU", be.Name())
	assert.True(t, be.IsCPU())
	assert.Greater(t, be.Alignment(), uint64(0))
	require.NoError(t, be.SetThreads(1))
	assert.Error(t, be.SetThreads(0))
	bt := be.DefaultBufferType()
	assert.Equal(t, "CPU", bt.Name())
	assert.True(t, bt.IsHost())
	assert.True(t, bt.SupportsBackend(be))
	assert.Equal(t, be.Alignment(), bt.Alignment())
	be.Synchronize()

	be2, err := InitBackend("CPU:threads=2")
	require.NoError(t, err)
	assert.Equal(t, "CPU", be2.Name())
	require.NoError(t, be2.Close())
	require.NoError(t, be2.Close())
	e := panicError(func() { be2.Name() })
	require.NotNil(t, e)
	assert.True(t, errors.Is(e, ErrClosed))

	// compute through the backend, a plan, and SupportsOp
	ctx := newCtx(t, Params{NoAlloc: true})
	a := ctx.NewTensor2D(TypeF32, 3, 2)
	y := ctx.Scale(ctx.Relu(a), 2)
	q := ctx.NewTensor1D(TypeQ4_0, 32)
	qn := ctx.Sqrt(q)
	g := ctx.NewGraph().BuildForwardExpand(y)
	assert.True(t, be.SupportsOp(y))
	assert.False(t, be.SupportsOp(qn))
	buf, err := AllocContextTensors(ctx, be)
	require.NoError(t, err)
	defer buf.Close()
	assert.True(t, a.HasBuffer())
	assert.Equal(t, buf.Name(), a.Buffer().Name())
	require.NoError(t, a.SetFloat32([]float32{-1, 2, -3, 4, -5, 6}))
	require.NoError(t, be.Compute(g))
	got, err := y.Float32()
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 4, 0, 8, 0, 12}, got)

	plan, err := be.NewPlan(g)
	require.NoError(t, err)
	require.NoError(t, a.SetFloat32([]float32{1, 1, 1, 1, 1, 1}))
	require.NoError(t, plan.Compute())
	got, err = y.Float32()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 2, 2, 2, 2, 2}, got)
	require.NoError(t, plan.Close())
	require.NoError(t, plan.Close())
	assert.ErrorIs(t, plan.Compute(), ErrClosed)

	// an unsupported op fails at compute time with an error
	gq := ctx.NewGraph().BuildForwardExpand(qn)
	assert.Error(t, be.Compute(gq))
}

func TestBuffers(t *testing.T) {
	leakCheck(t)
	bt := CPUBufferType()
	require.NoError(t, bt.Close()) // built-in: no-op
	buf, err := bt.AllocBuffer(1024)
	require.NoError(t, err)
	defer buf.Close()
	assert.GreaterOrEqual(t, buf.Size(), uint64(1024))
	assert.True(t, buf.HasBase())
	assert.True(t, buf.IsHost())
	assert.Equal(t, bt.Alignment(), buf.Alignment())
	assert.Equal(t, "CPU", buf.Type().Name())
	assert.Equal(t, BufferUsageAny, buf.Usage())
	buf.SetUsage(BufferUsageWeights)
	assert.Equal(t, BufferUsageWeights, buf.Usage())
	buf.Clear(7)
	buf.Reset()

	ctx := newCtx(t, Params{NoAlloc: true})
	a := ctx.NewTensor1D(TypeF32, 16)
	b := ctx.NewTensor1D(TypeF32, 16)
	assert.Equal(t, uint64(64), buf.AllocSize(a))
	assert.Equal(t, uint64(64), bt.AllocSize(a))
	v := ctx.View1D(a, 4, 8)
	require.NoError(t, buf.PlaceTensor(a, 0))
	require.NoError(t, buf.InitTensor(a))
	got, err := a.Bytes()
	require.NoError(t, err)
	assert.Equal(t, bytes.Repeat([]byte{7}, 64), got)
	assert.Error(t, buf.PlaceTensor(b, 1<<20))
	require.NoError(t, buf.InitView(v))
	require.NoError(t, a.SetFloat32([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}))
	vv, err := v.Float32()
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 3, 4, 5}, vv)

	// copies between tensors
	require.NoError(t, buf.PlaceTensor(b, 256))
	require.NoError(t, CopyTensor(a, b))
	bv, err := b.Float32()
	require.NoError(t, err)
	assert.Equal(t, float32(15), bv[15])
	be, err := NewCPU(WithThreads(1))
	require.NoError(t, err)
	defer be.Close()
	require.NoError(t, b.SetZero())
	require.NoError(t, be.CopyTensorAsync(a, b))
	be.Synchronize()
	bv, err = b.Float32()
	require.NoError(t, err)
	assert.Equal(t, float32(15), bv[15])
	assert.Error(t, CopyTensor(a, ctx.NewTensor1D(TypeF32, 3)))

	bb, err := be.AllocBuffer(100)
	require.NoError(t, err)
	require.NoError(t, bb.Close())
	require.NoError(t, bb.Close())
	e := panicError(func() { bb.Size() })
	require.NotNil(t, e)
	assert.True(t, errors.Is(e, ErrClosed))
}

func TestTensorAllocators(t *testing.T) {
	leakCheck(t)
	be, err := NewCPU(WithThreads(1))
	require.NoError(t, err)
	defer be.Close()
	ctx := newCtx(t, Params{NoAlloc: true})
	a := ctx.NewTensor2D(TypeF32, 10, 3)
	b := ctx.NewTensor1D(TypeF16, 33)

	m, err := NewMeasureAllocator(32)
	require.NoError(t, err)
	assert.True(t, m.IsMeasure())
	require.NoError(t, m.Alloc(a))
	require.NoError(t, m.Alloc(b))
	need := m.MaxSize()
	assert.GreaterOrEqual(t, need, uint64(120+66))
	assert.False(t, a.HasData(), "measuring gives no memory")
	_, err = a.Float32()
	assert.Error(t, err)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close())
	assert.NotNil(t, panicError(func() { m.MaxSize() }))

	for _, mk := range []func() (*TensorAllocator, error){
		func() (*TensorAllocator, error) { return NewMeasureAllocatorFromBackend(be) },
		func() (*TensorAllocator, error) { return NewMeasureAllocatorFromBufferType(CPUBufferType()) },
	} {
		ma, err := mk()
		require.NoError(t, err)
		assert.True(t, ma.IsMeasure())
		ma.Close()
	}

	ta, err := NewTensorAllocatorFromBackend(be, 1024)
	require.NoError(t, err)
	assert.False(t, ta.IsMeasure())
	require.NoError(t, ta.Alloc(a))
	require.NoError(t, ta.Alloc(b))
	assert.NotNil(t, ta.Buffer())
	require.NoError(t, a.SetFloat32(make([]float32, 30)))
	require.Error(t, ta.Alloc(ctx.NewTensor1D(TypeF32, 4096)))
	ta.Reset()
	require.NoError(t, ta.Close())

	ta2, err := NewTensorAllocatorFromBufferType(CPUBufferType(), 256)
	require.NoError(t, err)
	require.NoError(t, ta2.Close())

	buf, err := be.AllocBuffer(4096)
	require.NoError(t, err)
	defer buf.Close()
	ta3, err := NewTensorAllocator(buf)
	require.NoError(t, err)
	defer ta3.Close()
	assert.Same(t, buf, ta3.Buffer())

	// graph allocator: the nodes of a graph get memory from ta3
	x := ctx.NewTensor1D(TypeF32, 8)
	y := ctx.Sqr(ctx.Neg(x))
	g := ctx.NewGraph().BuildForwardExpand(y)
	require.NoError(t, ta3.Alloc(x))
	require.NoError(t, x.SetFloat32([]float32{1, 2, 3, 4, 5, 6, 7, 8}))
	ga, err := NewGraphAllocator()
	require.NoError(t, err)
	defer ga.Close()
	ga.SetParseSeq(nil)
	_, err = ga.AllocGraph(ta3, g)
	require.NoError(t, err)
	require.NoError(t, be.Compute(g))
	got, err := y.Float32()
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 4, 9, 16, 25, 36, 49, 64}, got)
	require.NoError(t, ga.Close())
	assert.NotNil(t, panicError(func() { ga.SetParseSeq(nil) }))

	// measuring a graph: the size is reported, the nodes get no memory
	ctx2 := newCtx(t, Params{NoAlloc: true})
	x2 := ctx2.NewTensor1D(TypeF32, 256)
	y2 := ctx2.Sqr(ctx2.Neg(x2))
	g2 := ctx2.NewGraph().BuildForwardExpand(y2)
	mg, err := NewMeasureAllocatorFromBackend(be)
	require.NoError(t, err)
	defer mg.Close()
	ga2, err := NewGraphAllocator()
	require.NoError(t, err)
	defer ga2.Close()
	size, err := ga2.AllocGraph(mg, g2)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, size, uint64(1024))
	assert.False(t, y2.HasData())
	assert.False(t, x2.HasData())
}

// TestCleanupSafetyNet: handles dropped without Close are freed by the garbage collector.
func TestCleanupSafetyNet(t *testing.T) {
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	start := LiveObjects()
	func() {
		for i := 0; i < 10; i++ {
			ctx, err := NewContext(Params{MemSize: 1 << 16})
			require.NoError(t, err)
			ctx.NewTensor1D(TypeF32, 10)
			be, err := NewCPU(WithThreads(1))
			require.NoError(t, err)
			_, err = be.AllocBuffer(64)
			require.NoError(t, err)
		}
	}()
	assert.Greater(t, LiveObjects(), start)
	deadline := time.Now().Add(5 * time.Second)
	for LiveObjects() != start && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	assert.Equal(t, start, LiveObjects(), "live: %s", liveSummary())
}

func TestErrorFormatting(t *testing.T) {
	e := &Error{Op: "MulMat", Shapes: "a=[1 1 1 1] f32", Msg: "bad"}
	assert.Equal(t, "ggml: MulMat(a=[1 1 1 1] f32): bad", e.Error())
	e = &Error{Msg: "x"}
	assert.Equal(t, "ggml: x", e.Error())
	e = &Error{Op: "Close", Err: ErrClosed}
	assert.True(t, errors.Is(e, ErrClosed))
	assert.Contains(t, e.Error(), "already closed")
	assert.Equal(t, "ggml: failed", (&Error{}).Error())
}
