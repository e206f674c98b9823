//go:build cuda

package cuda_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/cuda"
)

func needDevice(t *testing.T) {
	t.Helper()
	if cuda.DeviceCount() == 0 {
		t.Skip("no CUDA device present (cudaGetDeviceCount found none): device tests skipped")
	}
}

func TestRegistryListsDevices(t *testing.T) {
	needDevice(t)
	names := ggml.Backends()
	for i := 0; i < cuda.DeviceCount(); i++ {
		want := "CUDA" + string(rune('0'+i))
		if ggml.BackendIndex(want) < 0 {
			t.Errorf("registry %v lacks %s", names, want)
		}
	}
}

func TestDeviceInfo(t *testing.T) {
	needDevice(t)
	if err := cuda.Probe(0); err != nil {
		t.Fatal(err)
	}
	if d := cuda.DeviceDescription(0); d == "" {
		t.Error("empty device description")
	}
	free, total := cuda.DeviceMemory(0)
	if total == 0 || free > total {
		t.Errorf("device memory: free %d, total %d", free, total)
	}
	names, err := cuda.BufferTypeNames(0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"CUDA0", "CUDA_Host", "CUDA_Split"}
	for i := range want {
		if names[i] != want[i] {
			t.Errorf("buffer type %d: %q, want %q", i, names[i], want[i])
		}
	}
	t.Logf("device 0: %s, %d MiB free of %d MiB", cuda.DeviceDescription(0), free>>20, total>>20)
}

func TestNoDeviceIsNotAnError(t *testing.T) {
	if cuda.DeviceCount() > 0 {
		t.Skip("a device is present")
	}
	if err := cuda.Probe(0); err == nil {
		t.Error("Probe(0) succeeded without a device")
	}
	if d := cuda.DeviceDescription(0); d != "" {
		t.Errorf("description without a device: %q", d)
	}
	leakCheck(t)
	b, err := cuda.NewBackend(0)
	if b != nil {
		b.Close()
	}
	wantErr(t, "NewBackend(0)", err, "device 0", "no CUDA device")
	_, err = cuda.BufferType(0)
	wantErr(t, "BufferType(0)", err, "device 0", "no CUDA device")
	_, err = cuda.HostBufferType()
	wantErr(t, "HostBufferType()", err, "no CUDA device")
	_, err = cuda.SplitBufferType(nil)
	wantErr(t, "SplitBufferType(nil)", err, "no CUDA device")
}

// leakCheck asserts at the end of the test that ggml.LiveObjects is back to its value at the
// start.
func leakCheck(t *testing.T) {
	t.Helper()
	start := ggml.LiveObjects()
	t.Cleanup(func() {
		if n := ggml.LiveObjects(); n != start {
			t.Errorf("live native objects: %d at the start, %d at the end (%v)", start, n, ggml.LiveObjectsByKind())
		}
	})
}

func must[T any](t *testing.T) func(T, error) T {
	t.Helper()
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wave returns n deterministic values in [-1, 1].
func wave(n int, f, phase float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.Sin(f*float64(i) + phase))
	}
	return v
}

// nmse returns the normalised mean squared error of got against want.
func nmse(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if den == 0 {
		return num
	}
	return num / den
}

// wantErr checks that err is a *ggml.Error whose message contains every part.
func wantErr(t *testing.T, what string, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error", what)
		return
	}
	var e *ggml.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: %T %v, want a *ggml.Error", what, err, err)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q lacks %q", what, err, p)
		}
	}
}

// mlp computes softmax(W x + bias) for x of n columns on backend b, every tensor in b's
// default buffer type.
func mlp(t *testing.T, b *ggml.Backend, k, m, n int, w, x, bias []float32) []float32 {
	t.Helper()
	ctx := must[*ggml.Context](t)(ggml.NewContext(ggml.Params{NoAlloc: true}))
	defer ctx.Close()
	wt := ctx.NewTensor2D(ggml.TypeF32, int64(k), int64(m))
	xt := ctx.NewTensor2D(ggml.TypeF32, int64(k), int64(n))
	bt := ctx.NewTensor1D(ggml.TypeF32, int64(m))
	y := ctx.SoftMax(ctx.Add(ctx.MulMat(wt, xt), bt))
	g := ctx.NewGraph().BuildForwardExpand(y)
	buf := must[*ggml.Buffer](t)(ggml.AllocContextTensors(ctx, b))
	defer buf.Close()
	check(t, wt.SetFloat32(w))
	check(t, xt.SetFloat32(x))
	check(t, bt.SetFloat32(bias))
	for _, node := range g.Nodes() {
		if !b.SupportsOp(node) {
			t.Fatalf("%s does not support %s", b.Name(), node.Op())
		}
	}
	check(t, b.Compute(g))
	return must[[]float32](t)(y.Float32())
}

// TestNewBackend computes a small graph on a backend from NewBackend on every device and
// compares it with the CPU.
func TestNewBackend(t *testing.T) {
	needDevice(t)
	leakCheck(t)
	cpu := must[*ggml.Backend](t)(ggml.NewCPU())
	defer cpu.Close()
	const k, m, n = 96, 40, 3
	w, x, bias := wave(k*m, 0.013, 0), wave(k*n, 0.029, 1), wave(m, 0.3, 2)
	want := mlp(t, cpu, k, m, n, w, x, bias)
	for i := 0; i < cuda.DeviceCount(); i++ {
		name := fmt.Sprintf("CUDA%d", i)
		b, err := cuda.NewBackend(i)
		if err != nil {
			t.Fatalf("NewBackend(%d): %v", i, err)
		}
		if b.Name() != name || b.IsCPU() {
			t.Errorf("NewBackend(%d): backend %q (IsCPU %v)", i, b.Name(), b.IsCPU())
		}
		if bt := b.DefaultBufferType(); bt.Name() != name {
			t.Errorf("NewBackend(%d): default buffer type %q", i, bt.Name())
		}
		got := mlp(t, b, k, m, n, w, x, bias)
		if e := nmse(got, want); e > 5e-4 {
			t.Errorf("%s vs CPU: nmse %.3e", name, e)
		}
		check(t, b.Close())
		check(t, b.Close()) // idempotent
	}
	for _, i := range []int{cuda.DeviceCount(), -1, 99} {
		b, err := cuda.NewBackend(i)
		if b != nil {
			b.Close()
		}
		wantErr(t, fmt.Sprintf("NewBackend(%d)", i), err, fmt.Sprintf("device %d", i), "no CUDA device")
	}
}

// TestBufferType: device memory from BufferType(i) round-trips data and is what backend i
// computes on.
func TestBufferType(t *testing.T) {
	needDevice(t)
	leakCheck(t)
	cpu := must[*ggml.Backend](t)(ggml.NewCPU())
	defer cpu.Close()
	for i := 0; i < cuda.DeviceCount(); i++ {
		bt, err := cuda.BufferType(i)
		if err != nil {
			t.Fatalf("BufferType(%d): %v", i, err)
		}
		if bt.Name() != fmt.Sprintf("CUDA%d", i) || bt.IsHost() {
			t.Errorf("BufferType(%d): %q (IsHost %v)", i, bt.Name(), bt.IsHost())
		}
		b := must[*ggml.Backend](t)(cuda.NewBackend(i))
		if !bt.SupportsBackend(b) || bt.SupportsBackend(cpu) {
			t.Errorf("BufferType(%d): supports %s %v, CPU %v", i, b.Name(), bt.SupportsBackend(b), bt.SupportsBackend(cpu))
		}
		ctx := must[*ggml.Context](t)(ggml.NewContext(ggml.Params{NoAlloc: true}))
		a := ctx.NewTensor1D(ggml.TypeF32, 100)
		s := ctx.Scale(a, 0.5)
		g := ctx.NewGraph().BuildForwardExpand(s)
		buf := must[*ggml.Buffer](t)(ggml.AllocContextTensorsFromBufferType(ctx, bt))
		if buf.IsHost() || buf.Name() != bt.Name() {
			t.Errorf("buffer %q IsHost %v", buf.Name(), buf.IsHost())
		}
		in := wave(100, 0.1, 0)
		check(t, a.SetFloat32(in))
		check(t, b.Compute(g))
		got := must[[]float32](t)(s.Float32())
		for j := range in {
			if got[j] != in[j]*0.5 {
				t.Fatalf("device %d: element %d = %v, want %v", i, j, got[j], in[j]*0.5)
			}
		}
		check(t, bt.Close()) // static: does nothing
		if bt.Name() == "" {
			t.Error("buffer type unusable after Close")
		}
		buf.Close()
		ctx.Close()
		b.Close()
	}
	_, err := cuda.BufferType(cuda.DeviceCount())
	wantErr(t, "BufferType(count)", err, fmt.Sprintf("device %d", cuda.DeviceCount()), "no CUDA device")
	_, err = cuda.BufferType(-1)
	wantErr(t, "BufferType(-1)", err, "device -1")
}

// TestHostBufferType: tensors in pinned host memory are computed on by the CPU backend and copied
// to and from device memory.
func TestHostBufferType(t *testing.T) {
	needDevice(t)
	leakCheck(t)
	ht, err := cuda.HostBufferType()
	if err != nil {
		t.Fatal(err)
	}
	cpu := must[*ggml.Backend](t)(ggml.NewCPU(ggml.WithThreads(2)))
	defer cpu.Close()
	gpu := must[*ggml.Backend](t)(cuda.NewBackend(0))
	defer gpu.Close()
	if ht.Name() != "CUDA_Host" || !ht.IsHost() || !ht.SupportsBackend(cpu) {
		t.Errorf("host buffer type %q: IsHost %v, supports CPU %v", ht.Name(), ht.IsHost(), ht.SupportsBackend(cpu))
	}

	const n = 257
	ctx := must[*ggml.Context](t)(ggml.NewContext(ggml.Params{NoAlloc: true}))
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, n)
	b := ctx.NewTensor1D(ggml.TypeF32, n)
	y := ctx.Mul(ctx.Add(a, b), a)
	g := ctx.NewGraph().BuildForwardExpand(y)
	hbuf := must[*ggml.Buffer](t)(ggml.AllocContextTensorsFromBufferType(ctx, ht))
	defer hbuf.Close()
	if hbuf.Name() != "CUDA_Host" || !hbuf.IsHost() {
		t.Errorf("host buffer %q IsHost %v", hbuf.Name(), hbuf.IsHost())
	}
	av, bv := wave(n, 0.07, 0), wave(n, 0.05, 1)
	check(t, a.SetFloat32(av))
	check(t, b.SetFloat32(bv))
	check(t, cpu.Compute(g))
	got := must[[]float32](t)(y.Float32())
	for i := range got {
		if want := (av[i] + bv[i]) * av[i]; got[i] != want {
			t.Fatalf("element %d = %v, want %v", i, got[i], want)
		}
	}

	// pinned -> device -> pinned
	dctx := must[*ggml.Context](t)(ggml.NewContext(ggml.Params{NoAlloc: true}))
	defer dctx.Close()
	d := dctx.NewTensor1D(ggml.TypeF32, n)
	dbuf := must[*ggml.Buffer](t)(ggml.AllocContextTensors(dctx, gpu))
	defer dbuf.Close()
	hctx := must[*ggml.Context](t)(ggml.NewContext(ggml.Params{NoAlloc: true}))
	defer hctx.Close()
	back := hctx.NewTensor1D(ggml.TypeF32, n)
	hbuf2 := must[*ggml.Buffer](t)(ggml.AllocContextTensorsFromBufferType(hctx, ht))
	defer hbuf2.Close()
	check(t, ggml.CopyTensor(y, d))
	check(t, ggml.CopyTensor(d, back))
	round := must[[]float32](t)(back.Float32())
	for i := range round {
		if round[i] != got[i] {
			t.Fatalf("pinned -> CUDA0 -> pinned: element %d = %v, want %v", i, round[i], got[i])
		}
	}
}

// splitMulMat computes W x with W (k x m, type typ) in a buffer of type wt and x, y on
// backend b, and returns y and W's bytes as read back.
func splitMulMat(t *testing.T, b *ggml.Backend, wt *ggml.BufferType, typ ggml.Type, k, m, n int, w, x []float32) ([]float32, []byte) {
	t.Helper()
	ctx := must[*ggml.Context](t)(ggml.NewContext(ggml.Params{NoAlloc: true}))
	defer ctx.Close()
	wten := ctx.NewTensor2D(typ, int64(k), int64(m))
	wbuf := must[*ggml.Buffer](t)(ggml.AllocContextTensorsFromBufferType(ctx, wt))
	defer wbuf.Close()
	if wbuf.Name() != wt.Name() {
		t.Errorf("weights buffer %q, want %q", wbuf.Name(), wt.Name())
	}
	switch typ {
	case ggml.TypeF32, ggml.TypeF16:
		check(t, wten.SetFloat32(w))
	default:
		check(t, wten.SetBytes(must[[]byte](t)(ggml.Quantize(typ, w, k))))
	}
	xt := ctx.NewTensor2D(ggml.TypeF32, int64(k), int64(n))
	y := ctx.MulMat(wten, xt)
	g := ctx.NewGraph().BuildForwardExpand(y)
	xbuf := must[*ggml.Buffer](t)(ggml.AllocContextTensors(ctx, b))
	defer xbuf.Close()
	check(t, xt.SetFloat32(x))
	if !b.SupportsOp(y) {
		t.Fatalf("%s does not support MUL_MAT with %s weights in %s", b.Name(), typ, wt.Name())
	}
	check(t, b.Compute(g))
	return must[[]float32](t)(y.Float32()), must[[]byte](t)(wten.Bytes())
}

// TestSplitBufferType: MUL_MAT weights in a split buffer (rows across the devices) computed on
// a CUDA backend match the CPU, for several splits and weight types.
func TestSplitBufferType(t *testing.T) {
	needDevice(t)
	leakCheck(t)
	cpu := must[*ggml.Backend](t)(ggml.NewCPU())
	defer cpu.Close()
	nd := cuda.DeviceCount()
	backends := make([]*ggml.Backend, nd)
	for i := range backends {
		backends[i] = must[*ggml.Backend](t)(cuda.NewBackend(i))
		defer backends[i].Close()
	}
	splits := [][]float32{nil, {}, {1}}
	if nd >= 2 {
		splits = append(splits, []float32{1, 1}, []float32{3, 1}, []float32{0, 1}, []float32{1, 0}, []float32{0.2, 0.8})
	} else {
		t.Log("one device: splits across devices need GGML_CUDA_EMU_DEVICES=2 (or two GPUs)")
	}
	const k, m, n = 64, 37, 5 // an odd row count: uneven splits
	w, x := wave(k*m, 0.011, 0.5), wave(k*n, 0.023, 0)
	for _, typ := range []ggml.Type{ggml.TypeF32, ggml.TypeF16, ggml.TypeQ4_0, ggml.TypeQ8_0} {
		want, wantBytes := splitMulMat(t, cpu, ggml.CPUBufferType(), typ, k, m, n, w, x)
		for _, split := range splits {
			st, err := cuda.SplitBufferType(split)
			if err != nil {
				t.Fatalf("SplitBufferType(%v): %v", split, err)
			}
			if st.Name() != "CUDA_Split" || st.IsHost() {
				t.Errorf("split buffer type %q IsHost %v", st.Name(), st.IsHost())
			}
			if st.SupportsBackend(cpu) || !st.SupportsBackend(backends[0]) {
				t.Errorf("split buffer type: supports CPU %v, CUDA0 %v", st.SupportsBackend(cpu), st.SupportsBackend(backends[0]))
			}
			for _, b := range backends {
				got, gotBytes := splitMulMat(t, b, st, typ, k, m, n, w, x)
				if string(gotBytes) != string(wantBytes) {
					t.Errorf("%s, split %v: weights read back from the split buffer differ", typ, split)
				}
				if e := nmse(got, want); e > 5e-4 {
					t.Errorf("%s, split %v, %s vs CPU: nmse %.3e", typ, split, b.Name(), e)
				}
			}
		}
	}
}

// TestSplitPartialAccess reads and writes byte ranges of a split tensor that cross the
// boundary between devices.
func TestSplitPartialAccess(t *testing.T) {
	needDevice(t)
	leakCheck(t)
	split := []float32{1}
	if cuda.DeviceCount() >= 2 {
		split = []float32{1, 1}
	}
	st := must[*ggml.BufferType](t)(cuda.SplitBufferType(split))
	const k, m = 8, 6 // rows 0-2 on device 0, 3-5 on device 1
	ctx := must[*ggml.Context](t)(ggml.NewContext(ggml.Params{NoAlloc: true}))
	defer ctx.Close()
	w := ctx.NewTensor2D(ggml.TypeF32, int64(k), int64(m))
	buf := must[*ggml.Buffer](t)(ggml.AllocContextTensorsFromBufferType(ctx, st))
	defer buf.Close()
	v := wave(k*m, 0.3, 0)
	check(t, w.SetFloat32(v))
	raw := must[[]byte](t)(w.Bytes())
	// bytes 40..160: the middle of row 1 to the middle of row 4
	part := make([]byte, 120)
	if _, err := w.ReadAt(part, 40); err != nil {
		t.Fatal(err)
	}
	if string(part) != string(raw[40:160]) {
		t.Error("ReadAt across the device boundary differs from Bytes")
	}
	for i := range part {
		part[i] = byte(i)
	}
	if _, err := w.WriteAt(part, 40); err != nil {
		t.Fatal(err)
	}
	copy(raw[40:], part)
	if got := must[[]byte](t)(w.Bytes()); string(got) != string(raw) {
		t.Error("WriteAt across the device boundary: tensor differs")
	}
}

// TestSplitBufferTypeErrors: bad shares are refused before reaching the C library.
func TestSplitBufferTypeErrors(t *testing.T) {
	needDevice(t)
	leakCheck(t)
	nd := cuda.DeviceCount()
	tooMany := make([]float32, nd+1)
	for i := range tooMany {
		tooMany[i] = 1
	}
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		split []float32
		msg   string
	}{
		{tooMany, fmt.Sprintf("%d shares for %d device", nd+1, nd)},
		{[]float32{-1}, "non-negative"},
		{[]float32{0}, "every share is zero"},
		{[]float32{nan}, "non-negative"},
		{[]float32{inf}, "finite"},
		{[]float32{float32(-math.Inf(1))}, "finite"},
	} {
		st, err := cuda.SplitBufferType(c.split)
		if st != nil {
			t.Errorf("SplitBufferType(%v) returned a buffer type", c.split)
		}
		wantErr(t, fmt.Sprintf("SplitBufferType(%v)", c.split), err, "cuda.SplitBufferType", c.msg)
	}
	if nd >= 2 {
		_, err := cuda.SplitBufferType([]float32{0, 0})
		wantErr(t, "SplitBufferType([0 0])", err, "every share is zero")
		_, err = cuda.SplitBufferType([]float32{3e38, 3e38})
		wantErr(t, "SplitBufferType([3e38 3e38])", err, "overflows")
		_, err = cuda.SplitBufferType([]float32{1, -0.5})
		wantErr(t, "SplitBufferType([1 -0.5])", err, "device 1")
	}
}

// TestSplitPlacement: with shares {0, 1} (or {1, 0}) a split tensor's rows take memory on the
// named device only.
func TestSplitPlacement(t *testing.T) {
	needDevice(t)
	if cuda.DeviceCount() < 2 {
		t.Skip("needs two devices (GGML_CUDA_EMU_DEVICES=2 with the emulator)")
	}
	leakCheck(t)
	const k, m = 4096, 1024 // 16 MiB of F32
	const size = k * m * 4
	for dev, split := range [][]float32{{1, 0}, {0, 1}} {
		st := must[*ggml.BufferType](t)(cuda.SplitBufferType(split))
		ctx := must[*ggml.Context](t)(ggml.NewContext(ggml.Params{NoAlloc: true}))
		ctx.NewTensor2D(ggml.TypeF32, k, m)
		before, _ := cuda.DeviceMemory(dev)
		buf := must[*ggml.Buffer](t)(ggml.AllocContextTensorsFromBufferType(ctx, st))
		after, _ := cuda.DeviceMemory(dev)
		if before < after || before-after < size/2 {
			t.Errorf("split %v: device %d free memory %d -> %d, want a drop of about %d", split, dev, before, after, size)
		}
		buf.Close()
		ctx.Close()
	}
}
