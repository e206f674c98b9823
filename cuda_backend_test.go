//go:build cuda

package ggml_test

import (
	"math"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/cuda"
)

// TestCUDABackend computes a small MLP layer on CUDA0 (through the registry) and on the CPU and
// compares the results.
func TestCUDABackend(t *testing.T) {
	if cuda.DeviceCount() == 0 {
		t.Skip("no CUDA device present (cudaGetDeviceCount found none): CUDA backend test skipped")
	}
	if ggml.BackendIndex("CUDA0") < 0 {
		t.Fatalf("registry %v lacks CUDA0", ggml.Backends())
	}
	gpu, err := ggml.InitBackend("CUDA0")
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	cpu, err := ggml.NewCPU()
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()

	const k, m, n = 256, 64, 4
	w := make([]float32, k*m)
	x := make([]float32, k*n)
	for i := range w {
		w[i] = float32(math.Sin(0.01 * float64(i)))
	}
	for i := range x {
		x[i] = float32(math.Cos(0.03 * float64(i)))
	}
	run := func(b *ggml.Backend) []float32 {
		ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		wt := ctx.NewTensor2D(ggml.TypeF32, k, m)
		xt := ctx.NewTensor2D(ggml.TypeF32, k, n)
		y := ctx.Silu(ctx.MulMat(wt, xt))
		g := ctx.NewGraph().BuildForwardExpand(y)
		buf, err := ggml.AllocContextTensors(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		defer buf.Close()
		if err := wt.SetFloat32(w); err != nil {
			t.Fatal(err)
		}
		if err := xt.SetFloat32(x); err != nil {
			t.Fatal(err)
		}
		if !b.SupportsOp(y) {
			t.Fatalf("%s does not support SILU(MUL_MAT)", b.Name())
		}
		if err := b.Compute(g); err != nil {
			t.Fatal(err)
		}
		out, err := y.Float32()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	got, want := run(gpu), run(cpu)
	var num, den float64
	for i := range want {
		d := float64(got[i] - want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	if e := num / den; e > 5e-4 {
		t.Errorf("CUDA0 vs CPU: nmse %.3e", e)
	}
	if gpu.Name() != "CUDA0" {
		t.Errorf("backend name %q", gpu.Name())
	}
}
