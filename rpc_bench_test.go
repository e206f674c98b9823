//go:build cgo

package ggml_test

import (
	"testing"

	"github.com/ggml-go/ggml"
)

// BenchmarkRPCGraph measures the cost of one small graph computed and read back (a decode
// step's shape: a 256x256 matrix-vector product and a SiLU), locally and on an RPC server on
// 127.0.0.1 (repeated graph: GRAPH_RECOMPUTE plus the confirming round trip; "full": the
// graph re-sent each time, as upstream's client does without a scheduler uid).
//
//	go test -run '^$' -bench RPCGraph -benchtime 2000x .
func BenchmarkRPCGraph(b *testing.B) {
	addr := startRPCServer(b)
	for _, mode := range []string{"cpu", "rpc", "rpc-full"} {
		b.Run(mode, func(b *testing.B) {
			var be *ggml.Backend
			var err error
			switch mode {
			case "cpu":
				be, err = ggml.NewCPU(ggml.WithThreads(1))
			case "rpc":
				be, err = ggml.NewRPC(addr)
			default:
				be, err = ggml.NewRPC(addr, ggml.WithRPCUpstreamExact())
			}
			if err != nil {
				b.Fatal(err)
			}
			defer be.Close()
			ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
			if err != nil {
				b.Fatal(err)
			}
			defer ctx.Close()
			w := ctx.NewTensor2D(ggml.TypeF32, 256, 256)
			x := ctx.NewTensor1D(ggml.TypeF32, 256)
			y := ctx.Silu(ctx.MulMat(w, x))
			g := ctx.NewGraph().BuildForwardExpand(y)
			buf, err := ggml.AllocContextTensors(ctx, be)
			if err != nil {
				b.Fatal(err)
			}
			defer buf.Close()
			xv := make([]float32, 256)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				xv[0] = float32(i)
				if err := x.SetFloat32(xv); err != nil {
					b.Fatal(err)
				}
				if err := be.Compute(g); err != nil {
					b.Fatal(err)
				}
				if _, err := y.Float32(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
