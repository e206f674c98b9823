//go:build cgo

package ggml_test

import (
	"math"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// TestRPCScheduler runs a graph through a Scheduler over an RPC device and the CPU: the weight
// lives on the server, so the matrix product runs there; PAD has no peer in the server's ggml,
// so it stays on the CPU. The result equals a CPU-only run.
func TestRPCScheduler(t *testing.T) {
	checkLive(t)
	addr := startRPCServer(t, ggml.WithRPCServerLog(t.Logf))
	rpc, err := ggml.NewRPC(addr, ggml.WithRPCTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer rpc.Close()
	cpu, err := ggml.NewCPU(ggml.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()

	run := func(weights *ggml.Backend, backends []*ggml.Backend) ([]float32, int) {
		wctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
		if err != nil {
			t.Fatal(err)
		}
		defer wctx.Close()
		w := wctx.NewTensor2D(ggml.TypeF32, 16, 8)
		wbuf, err := ggml.AllocContextTensors(wctx, weights)
		if err != nil {
			t.Fatal(err)
		}
		defer wbuf.Close()
		wbuf.SetUsage(ggml.BufferUsageWeights)
		wv := make([]float32, 16*8)
		for i := range wv {
			wv[i] = float32(math.Cos(float64(i) * 0.11))
		}
		if err := w.SetFloat32(wv); err != nil {
			t.Fatal(err)
		}
		ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
		if err != nil {
			t.Fatal(err)
		}
		defer ctx.Close()
		x := ctx.NewTensor2D(ggml.TypeF32, 16, 3)
		xbuf, err := ggml.AllocContextTensors(ctx, cpu)
		if err != nil {
			t.Fatal(err)
		}
		defer xbuf.Close()
		y := ctx.Pad(ctx.Silu(ctx.MulMat(w, x)), 2, 1, 0, 0)
		g := ctx.NewGraph().BuildForwardExpand(y)
		s, err := ggml.NewScheduler(backends, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var out []float32
		for step := 0; step < 3; step++ { // a decode-like loop: new input, same graph
			xv := make([]float32, 16*3)
			for i := range xv {
				xv[i] = float32(math.Sin(float64(i+step) * 0.3))
			}
			if err := x.SetFloat32(xv); err != nil {
				t.Fatal(err)
			}
			if err := s.Compute(g); err != nil {
				t.Fatal(err)
			}
			o, err := y.Float32()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, o...)
		}
		return out, s.NumSplits()
	}
	got, splits := run(rpc, []*ggml.Backend{rpc, cpu})
	want, _ := run(cpu, []*ggml.Backend{cpu})
	if splits < 2 {
		t.Errorf("%d splits: expected the RPC device and the CPU to share the graph", splits)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d: scheduled %g, CPU %g", i, got[i], want[i])
		}
	}
}
