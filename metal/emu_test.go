//go:build metal && cgo && metalemu

package metal_test

import (
	"math"
	"strings"
	"testing"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/metal"
)

// TestNoSIMDGroup pretends a GPU without SIMD-group reductions (the emulator's switch, read when
// the device is created): supports_op turns MUL_MAT and SOFT_MAX down, and the scheduler runs
// them on the CPU while ADD stays on Metal, with the same result.
func TestNoSIMDGroup(t *testing.T) {
	leakCheck(t)
	t.Setenv("GGML_METAL_EMU_NO_SIMDGROUP", "1")
	b, err := metal.NewBackend()
	check(t, err)
	defer b.Close()
	if metal.SupportsFamily(b, 7) || !metal.SupportsFamily(b, 6) {
		t.Errorf("families: Apple7 %v, Apple6 %v", metal.SupportsFamily(b, 7), metal.SupportsFamily(b, 6))
	}
	cpu, err := ggml.NewCPU()
	check(t, err)
	defer cpu.Close()
	sched, err := ggml.NewScheduler([]*ggml.Backend{b, cpu}, nil, 64)
	check(t, err)
	defer sched.Close()

	const k, m, n = 64, 24, 2
	w, x, bias := wave(k*m, 0.017, 0), wave(k*n, 0.023, 1), wave(m, 0.4, 2)
	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	check(t, err)
	defer ctx.Close()
	wt := ctx.NewTensor2D(ggml.TypeF32, k, m)
	xt := ctx.NewTensor2D(ggml.TypeF32, k, n)
	bt := ctx.NewTensor1D(ggml.TypeF32, m)
	y := ctx.SoftMax(ctx.Add(ctx.MulMat(wt, xt), bt))
	g := ctx.NewGraph().BuildForwardExpand(y)
	// the inputs live in a Metal buffer, so the scheduler prefers Metal and falls back per op
	buf, err := ggml.AllocContextTensors(ctx, b)
	check(t, err)
	defer buf.Close()
	check(t, wt.SetFloat32(w))
	check(t, xt.SetFloat32(x))
	check(t, bt.SetFloat32(bias))
	var ops []string
	for _, node := range g.Nodes() {
		ops = append(ops, node.Op().String()+"="+map[bool]string{true: "Metal", false: "CPU"}[b.SupportsOp(node)])
	}
	if got := strings.Join(ops, " "); !strings.Contains(got, "MUL_MAT=CPU") || !strings.Contains(got, "ADD=Metal") ||
		!strings.Contains(got, "SOFT_MAX=CPU") {
		t.Errorf("supports_op without SIMD-group reductions: %s", got)
	}
	check(t, sched.Compute(g))
	got, err := y.Float32()
	check(t, err)
	want := refMLP(k, m, n, w, x, bias)
	for i := range want {
		// the CPU's SOFT_MAX exponentiates through F16 (about 1e-4 relative)
		if d := math.Abs(float64(got[i]) - want[i]); d > 2e-4 {
			t.Fatalf("element %d: %g, want %g", i, got[i], want[i])
		}
	}
}
