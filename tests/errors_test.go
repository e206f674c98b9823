package tests

import (
	"errors"
	"reflect"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mustPanicError runs f and returns the *ggml.Error it panicked with; it fails the test when f
// returns normally or panics with anything else.
func mustPanicError(t *testing.T, name string, f func()) (perr *ggml.Error) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil {
			t.Errorf("%s: no panic", name)
			return
		}
		e, ok := r.(*ggml.Error)
		if !ok {
			t.Errorf("%s: panicked with %T %v, want *ggml.Error", name, r, r)
			return
		}
		perr = e
	}()
	f()
	return nil
}

// callWith calls the *Context method m with every *Tensor argument set to x (slices of
// tensors get one element) and zero scalars.
func callWith(ctx *ggml.Context, m reflect.Method, x *ggml.Tensor) {
	args := []reflect.Value{reflect.ValueOf(ctx)}
	for i := 1; i < m.Type.NumIn(); i++ {
		pt := m.Type.In(i)
		switch {
		case pt == reflect.TypeOf(x):
			args = append(args, reflect.ValueOf(x))
		case pt == reflect.TypeOf([]*ggml.Tensor{}):
			args = append(args, reflect.ValueOf([]*ggml.Tensor{x}))
		default:
			args = append(args, reflect.Zero(pt))
		}
	}
	m.Func.Call(args)
}

// TestOpsNilOperands: every op wrapper given nil tensors panics with a *ggml.Error.
func TestOpsNilOperands(t *testing.T) {
	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	ct := reflect.TypeOf(ctx)
	for _, name := range opMethods() {
		m, _ := ct.MethodByName(name)
		e := mustPanicError(t, name, func() { callWith(ctx, m, nil) })
		if e != nil {
			assert.Equal(t, name, e.Op)
		}
	}
}

// TestOpsClosedContext: every op wrapper panics with a *ggml.Error wrapping ErrClosed when its
// operands or the context were closed; the process never touches freed memory.
func TestOpsClosedContext(t *testing.T) {
	start := ggml.LiveObjects()
	old, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	require.NoError(t, err)
	x := old.NewTensor2D(ggml.TypeF32, 4, 4)
	require.NoError(t, old.Close())
	require.NoError(t, old.Close()) // idempotent

	live, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	require.NoError(t, err)
	ct := reflect.TypeOf(live)
	for _, name := range opMethods() {
		m, _ := ct.MethodByName(name)
		e := mustPanicError(t, name+"(closed operand)", func() { callWith(live, m, x) })
		if e != nil {
			assert.True(t, errors.Is(e, ggml.ErrClosed), "%s: %v", name, e)
		}
	}
	y := live.NewTensor1D(ggml.TypeF32, 4)
	require.NoError(t, live.Close())
	for _, name := range opMethods() {
		m, _ := ct.MethodByName(name)
		e := mustPanicError(t, name+"(closed context)", func() { callWith(live, m, y) })
		if e != nil {
			assert.True(t, errors.Is(e, ggml.ErrClosed), "%s: %v", name, e)
		}
	}
	// tensor methods, graphs and data access on a closed context
	for name, f := range map[string]func(){
		"Type":      func() { x.Type() },
		"Ne":        func() { x.Ne() },
		"Name":      func() { x.Name() },
		"SetName":   func() { x.SetName("x") },
		"Nbytes":    func() { x.Nbytes() },
		"NewTensor": func() { live.NewTensor1D(ggml.TypeF32, 3) },
		"NewGraph":  func() { live.NewGraph() },
		"UsedMem":   func() { live.UsedMem() },
		"Tensors":   func() { live.Tensors() },
	} {
		e := mustPanicError(t, name, f)
		if e != nil {
			assert.True(t, errors.Is(e, ggml.ErrClosed), "%s: %v", name, e)
		}
	}
	// methods that return an error return it for a closed context, wrapping ErrClosed
	_, err = x.Float32()
	assert.ErrorIs(t, err, ggml.ErrClosed, "Float32")
	assert.ErrorIs(t, x.SetFloat32(make([]float32, 16)), ggml.ErrClosed, "SetFloat32")
	_, err = x.Bytes()
	assert.ErrorIs(t, err, ggml.ErrClosed, "Bytes")
	assert.Equal(t, "<tensor of a closed context>", x.String())
	require.Equal(t, start, ggml.LiveObjects(), "live objects: %v", ggml.LiveObjectsByKind())
}

// TestOpsInvalidInput: constructors given inputs the C library rejects panic with a
// *ggml.Error naming the op and the operands, and the process keeps running.
func TestOpsInvalidInput(t *testing.T) {
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20, NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	f32 := func(ne ...int64) *ggml.Tensor { return ctx.NewTensor(ggml.TypeF32, ne...) }
	f16 := func(ne ...int64) *ggml.Tensor { return ctx.NewTensor(ggml.TypeF16, ne...) }
	i32 := func(ne ...int64) *ggml.Tensor { return ctx.NewTensor(ggml.TypeI32, ne...) }

	cases := map[string]func(){
		"NewTensor":   func() { ctx.NewTensor(ggml.TypeF32, -1) },
		"NewTensor1D": func() { ctx.NewTensor1D(ggml.Type(99), 4) },
		"NewTensor2D": func() { ctx.NewTensor2D(ggml.TypeQ4_0, 31, 2) }, // not a multiple of the block
		"NewTensor/5d": func() {
			ctx.NewTensor(ggml.TypeF32, 1, 2, 3, 4, 5)
		},
		"NewGraphCustom":  func() { ctx.NewGraphCustom(-5, false) },
		"Add":             func() { ctx.Add(f32(4, 3), f32(3, 3)) },
		"AddInplace":      func() { ctx.AddInplace(f32(4, 3), f32(4, 2)) },
		"Sub":             func() { ctx.Sub(f32(4), f32(5)) },
		"Mul":             func() { ctx.Mul(f32(6, 2), f32(4, 2)) },
		"Div":             func() { ctx.Div(f32(6, 2), f32(6, 3)) },
		"Add1":            func() { ctx.Add1(f32(4), f32(2)) },
		"Acc":             func() { ctx.Acc(f32(4, 4), f32(3, 3), 16, 64, 64, 40) },
		"Set":             func() { ctx.Set(f32(4, 4), f32(3, 3), 16, 64, 64, 1<<20) },
		"Set1D":           func() { ctx.Set1D(f32(4), f32(3), 8) },
		"Set2D":           func() { ctx.Set2D(f32(4, 4), f32(3, 3), 16, 40) },
		"Repeat":          func() { ctx.Repeat(f32(3, 2), f32(4, 2)) },
		"Concat":          func() { ctx.Concat(f32(3, 2), f32(4, 2)) },
		"Argmax":          func() { ctx.Argmax(f32(4, 3, 2)) },
		"GroupNorm":       func() { ctx.GroupNorm(f32(4, 4, 4), 0) },
		"MulMat":          func() { ctx.MulMat(f32(64, 4), f32(32, 4)) },
		"MulMat/bcast":    func() { ctx.MulMat(f32(8, 4, 3), f32(8, 4, 4)) },
		"MulMatID/ids":    func() { ctx.MulMatID([]*ggml.Tensor{f32(4, 4)}, f32(1, 2), 0, f32(4, 2)) },
		"MulMatID/id":     func() { ctx.MulMatID([]*ggml.Tensor{f32(4, 4)}, i32(1, 2), 5, f32(4, 2)) },
		"MulMatID/empty":  func() { ctx.MulMatID(nil, i32(1, 2), 0, f32(4, 2)) },
		"OutProd":         func() { ctx.OutProd(f32(4, 6), f32(3, 5)) },
		"Cpy":             func() { ctx.Cpy(f32(4, 3), f32(5, 3)) },
		"Cast":            func() { ctx.Cast(f32(33), ggml.TypeQ4_0) },
		"Cont2D":          func() { ctx.Cont2D(f32(4, 3), 5, 5) },
		"Reshape":         func() { ctx.Reshape(f32(4, 3), f32(5)) },
		"Reshape1D":       func() { ctx.Reshape1D(f32(4, 3), 13) },
		"Reshape2D/cont":  func() { ctx.Reshape2D(ctx.Transpose(f32(4, 3)), 3, 4) },
		"View1D":          func() { ctx.View1D(f32(4), 5, 0) },
		"View2D":          func() { ctx.View2D(f32(4, 4), 4, 4, 16, 4) },
		"View3D":          func() { ctx.View3D(f32(4, 4), 2, 2, 2, 16, 64, 1000) },
		"View4D":          func() { ctx.View4D(f32(2, 2), 2, 2, 2, 2, 8, 16, 32, 0) },
		"Permute":         func() { ctx.Permute(f32(4, 3), 0, 0, 1, 2) },
		"Permute/range":   func() { ctx.Permute(f32(4, 3), 0, 1, 2, 4) },
		"GetRows":         func() { ctx.GetRows(f32(4, 3), f32(2)) },
		"Diag":            func() { ctx.Diag(f32(4, 3)) },
		"SoftMaxExt":      func() { ctx.SoftMaxExt(f32(4, 3), f32(5, 3), 1) },
		"Rope":            func() { ctx.Rope(f32(8, 2, 3), f32(3), 8, 0, 0) },
		"Rope/dims":       func() { ctx.Rope(f32(8, 2, 3), i32(3), 16, 0, 0) },
		"Rope/positions":  func() { ctx.Rope(f32(8, 2, 3), i32(2), 8, 0, 0) },
		"RopeCustom":      func() { ctx.RopeCustom(f32(8, 2, 3), i32(4), 8, 0, 0, 0, 1e4, 1, 0, 1, 32, 1) },
		"Alibi":           func() { ctx.Alibi(f32(4, 3, 2), 0, 3, 8) },
		"Im2Col":          func() { ctx.Im2Col(f32(3, 3, 2, 2), f32(8, 8, 2, 1), 1, 1, 0, 0, 1, 1, true) },
		"Im2Col/fit":      func() { ctx.Im2Col(f16(9, 9, 2, 2), f32(4, 4, 2, 1), 1, 1, 0, 0, 1, 1, true) },
		"Conv1D":          func() { ctx.Conv1D(f16(3, 2, 4), f32(9, 3, 1), 1, 0, 1) },
		"Conv1DPH":        func() { ctx.Conv1DPH(f16(3, 2, 4), f32(9, 2, 1), 0, 1) },
		"ConvTranspose1D": func() { ctx.ConvTranspose1D(f16(3, 4, 2), f32(5, 2), 1, 1, 1) },
		"Conv2D":          func() { ctx.Conv2D(f16(3, 3, 2, 4), f32(8, 7, 3, 1), 1, 1, 0, 0, 1, 1) },
		"Conv2DSKP0":      func() { ctx.Conv2DSKP0(f16(3, 3, 2, 4), f32(2, 2, 2, 1)) },
		"Conv2DS1PH":      func() { ctx.Conv2DS1PH(f32(3, 3, 2, 2), f32(5, 5, 2, 1)) },
		"ConvTranspose2DP0": func() {
			ctx.ConvTranspose2DP0(f16(2, 2, 3, 2), f32(4, 4, 3, 1), 0)
		},
		"Pool1D":       func() { ctx.Pool1D(f32(9, 3), ggml.PoolMax, 0, 1, 0) },
		"Pool1D/op":    func() { ctx.Pool1D(f32(9, 3), ggml.PoolOp(7), 2, 1, 0) },
		"Pool2D":       func() { ctx.Pool2D(f32(9, 3), ggml.PoolAvg, 2, 2, 0, 1, 0, 0) },
		"Upscale":      func() { ctx.Upscale(f32(3, 3), 0) },
		"Pad":          func() { ctx.Pad(f32(3, 3), -1, 0, 0, 0) },
		"Argsort":      func() { ctx.Argsort(f32(4), ggml.SortOrder(3)) },
		"TopK":         func() { ctx.TopK(f32(4, 2), 5) },
		"Unary":        func() { ctx.Unary(f32(4), ggml.UnaryOp(42)) },
		"Transpose":    func() { ctx.Transpose(nil) },
		"DupTensor":    func() { ctx.DupTensor(nil) },
		"ViewTensor":   func() { ctx.ViewTensor(nil) },
		"NewI32":       func() { ctx.NewI32(3) }, // a NoAlloc context has no memory for the value
		"Int overflow": func() { ctx.DiagMaskInf(f32(4, 4), 1<<40) },
	}
	for name, f := range cases {
		name, f := name, f
		t.Run(name, func(t *testing.T) {
			e := mustPanicError(t, name, f)
			if e != nil {
				assert.NotEmpty(t, e.Msg, "%s", name)
				assert.NotEmpty(t, e.Error())
			}
		})
	}
}

// TestErrorsRuntime: runtime failures are returned as errors, not panics.
func TestErrorsRuntime(t *testing.T) {
	start := ggml.LiveObjects()
	_, err := ggml.InitBackend("NoSuchBackend")
	var e *ggml.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "InitBackend", e.Op)
	_, err = ggml.InitBackend("CPU:threads=zero")
	require.Error(t, err)
	_, err = ggml.NewCPU(ggml.WithThreads(0))
	require.Error(t, err)

	be := newTestCPU(t, 1)
	// a graph whose tensors have no memory
	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	require.NoError(t, err)
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, 4)
	g := ctx.NewGraph().BuildForwardExpand(ctx.Neg(a))
	assert.Error(t, be.Compute(g))
	assert.Error(t, ctx.Compute(g, 1))
	_, err = a.Float32()
	assert.Error(t, err)
	assert.Error(t, a.SetFloat32([]float32{1, 2, 3, 4}))

	// nothing to allocate
	empty, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	require.NoError(t, err)
	defer empty.Close()
	_, err = ggml.AllocContextTensors(empty, be)
	assert.Error(t, err)
	be.Close()
	ctx.Close()
	empty.Close()
	require.Equal(t, start, ggml.LiveObjects(), "live objects: %v", ggml.LiveObjectsByKind())
}
