//go:build metal && cgo && (darwin || metalemu)

package metal_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/metal"
)

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

// refMLP is softmax(W x + bias) per column in float64: W is m rows of k, x is n columns of k.
func refMLP(k, m, n int, w, x, bias []float32) []float64 {
	out := make([]float64, m*n)
	for j := 0; j < n; j++ {
		mx := math.Inf(-1)
		for i := 0; i < m; i++ {
			s := float64(bias[i])
			for l := 0; l < k; l++ {
				s += float64(w[i*k+l]) * float64(x[j*k+l])
			}
			out[j*m+i] = s
			mx = math.Max(mx, s)
		}
		var sum float64
		for i := 0; i < m; i++ {
			out[j*m+i] = math.Exp(out[j*m+i] - mx)
			sum += out[j*m+i]
		}
		for i := 0; i < m; i++ {
			out[j*m+i] /= sum
		}
	}
	return out
}

// mlp computes softmax(W x + bias) on b with every tensor in b's default buffer type; it
// reports whether b supports every node (and computes only then).
func mlp(t *testing.T, b *ggml.Backend, k, m, n int, w, x, bias []float32) ([]float32, bool) {
	t.Helper()
	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	check(t, err)
	defer ctx.Close()
	wt := ctx.NewTensor2D(ggml.TypeF32, int64(k), int64(m))
	xt := ctx.NewTensor2D(ggml.TypeF32, int64(k), int64(n))
	bt := ctx.NewTensor1D(ggml.TypeF32, int64(m))
	y := ctx.SoftMax(ctx.Add(ctx.MulMat(wt, xt), bt))
	g := ctx.NewGraph().BuildForwardExpand(y)
	for _, node := range g.Nodes() {
		if !b.SupportsOp(node) {
			return nil, false
		}
	}
	buf, err := ggml.AllocContextTensors(ctx, b)
	check(t, err)
	defer buf.Close()
	check(t, wt.SetFloat32(w))
	check(t, xt.SetFloat32(x))
	check(t, bt.SetFloat32(bias))
	check(t, b.Compute(g))
	out, err := y.Float32()
	check(t, err)
	return out, true
}

func TestRegistered(t *testing.T) {
	if ggml.BackendIndex("Metal") < 0 {
		t.Fatalf("registry %v lacks Metal", ggml.Backends())
	}
}

// TestNewBackend computes a small network on Metal and compares it with a float64 reference.
func TestNewBackend(t *testing.T) {
	leakCheck(t)
	b, err := metal.NewBackend()
	check(t, err)
	defer b.Close()
	if b.Name() != "Metal" || b.IsCPU() || !metal.IsMetal(b) {
		t.Errorf("backend %q (IsCPU %v, IsMetal %v)", b.Name(), b.IsCPU(), metal.IsMetal(b))
	}
	if bt := b.DefaultBufferType(); bt.Name() != "Metal" || !bt.IsHost() {
		t.Errorf("default buffer type %q (host %v)", bt.Name(), bt.IsHost())
	}
	if metal.BufferType().Name() != "Metal" {
		t.Errorf("BufferType %q", metal.BufferType().Name())
	}
	if !metal.SupportsFamily(b, 1) {
		t.Error("the device is not in Apple GPU family 1")
	}
	metal.SetCommandBuffers(b, 2)
	const k, m, n = 96, 40, 3
	w, x, bias := wave(k*m, 0.013, 0), wave(k*n, 0.029, 1), wave(m, 0.3, 2)
	got, ok := mlp(t, b, k, m, n, w, x, bias)
	if !ok {
		if metal.SupportsFamily(b, 7) {
			t.Fatal("an Apple7 device rejects MUL_MAT, ADD or SOFT_MAX")
		}
		t.Skip("the device has no SIMD-group reductions: MUL_MAT and SOFT_MAX are not supported")
	}
	want := refMLP(k, m, n, w, x, bias)
	for i := range want {
		if d := math.Abs(float64(got[i]) - want[i]); d > 1e-5 {
			t.Fatalf("element %d: %g, want %g", i, got[i], want[i])
		}
	}
}

func TestInitBackendByName(t *testing.T) {
	leakCheck(t)
	b, err := ggml.InitBackend("Metal")
	check(t, err)
	check(t, b.Close())
}

func TestSourceEmbedded(t *testing.T) {
	src := metal.Source()
	for _, want := range []string{"#include <metal_stdlib>", "ggml_metal_kargs", "kernel void kernel_mul_mv_q4_0_f32(", "kernel void kernel_soft_max("} {
		if !strings.Contains(src, want) {
			t.Errorf("embedded source lacks %q", want)
		}
	}
}

func TestMisuse(t *testing.T) {
	leakCheck(t)
	cpu, err := ggml.NewCPU()
	check(t, err)
	defer cpu.Close()
	if metal.IsMetal(cpu) || metal.IsMetal(nil) {
		t.Error("IsMetal(CPU or nil) is true")
	}
	wantPanic(t, "SupportsFamily(CPU)", func() { metal.SupportsFamily(cpu, 7) })
	wantPanic(t, "SetCommandBuffers(CPU)", func() { metal.SetCommandBuffers(cpu, 1) })
	b, err := metal.NewBackend()
	check(t, err)
	defer b.Close()
	wantPanic(t, "SetCommandBuffers(0)", func() { metal.SetCommandBuffers(b, 0) })
	wantPanic(t, "SetCommandBuffers(too many)", func() { metal.SetCommandBuffers(b, metal.MaxCommandBuffers+1) })
}

func wantPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		t.Helper()
		r := recover()
		var e *ggml.Error
		if err, ok := r.(error); !ok || !errors.As(err, &e) {
			t.Errorf("%s: recovered %v, want a *ggml.Error panic", what, r)
		}
	}()
	f()
}
