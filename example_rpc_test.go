//go:build cgo

package ggml_test

import (
	"fmt"
	"net"

	"github.com/ggml-go/ggml"
)

// An RPC server serving the CPU on 127.0.0.1 and a client computing on it. In real use the
// server runs on another machine (cmd/ggml-rpc-server, or ggml's own rpc-server) and the client
// puts the RPC backend in a Scheduler next to the CPU.
func ExampleNewRPC() {
	cpu, _ := ggml.NewCPU(ggml.WithThreads(1))
	defer cpu.Close()
	srv, _ := ggml.NewRPCServer(cpu)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	go srv.Serve(ln)
	defer srv.Close()

	remote, err := ggml.NewRPC(ln.Addr().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer remote.Close()

	ctx, _ := ggml.NewContext(ggml.Params{NoAlloc: true})
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, 3)
	b := ctx.NewTensor1D(ggml.TypeF32, 3)
	sum := ctx.Add(a, b)
	g := ctx.NewGraph().BuildForwardExpand(sum)
	buf, _ := ggml.AllocContextTensors(ctx, remote) // the tensors live on the server
	defer buf.Close()
	a.SetFloat32([]float32{1, 2, 3})
	b.SetFloat32([]float32{10, 20, 30})
	if err := remote.Compute(g); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := sum.Float32()
	fmt.Println(remote.IsRPC(), out)
	// Output: true [11 22 33]
}
