//go:build cgo

package ggml_test

import (
	"fmt"
	"log"

	"github.com/ggml-go/ggml"
)

// The scheduler computes a graph on a list of backends (here only the CPU); weights live in a
// buffer marked as weights, the input is placed with the scheduler's allocator.
func ExampleScheduler() {
	cpu, err := ggml.NewCPU(ggml.WithThreads(2))
	if err != nil {
		log.Fatal(err)
	}
	defer cpu.Close()

	wctx, _ := ggml.NewContext(ggml.Params{NoAlloc: true})
	defer wctx.Close()
	w := wctx.NewTensor2D(ggml.TypeF32, 2, 2) // rows [1 2] and [3 4]
	wbuf, err := ggml.AllocContextTensors(wctx, cpu)
	if err != nil {
		log.Fatal(err)
	}
	defer wbuf.Close()
	wbuf.SetUsage(ggml.BufferUsageWeights)
	_ = w.SetFloat32([]float32{1, 2, 3, 4})

	ctx, _ := ggml.NewContext(ggml.Params{NoAlloc: true})
	defer ctx.Close()
	x := ctx.NewTensor1D(ggml.TypeF32, 2)
	y := ctx.Relu(ctx.MulMat(w, x))
	g := ctx.NewGraph()
	g.BuildForwardExpand(y)

	sched, err := ggml.NewScheduler([]*ggml.Backend{cpu}, nil, 0)
	if err != nil {
		log.Fatal(err)
	}
	defer sched.Close()
	_ = sched.Allocator(cpu).Alloc(x) // measured with the graph
	if err := sched.InitMeasure(g); err != nil {
		log.Fatal(err)
	}
	sched.Reset()
	_ = sched.Allocator(cpu).Alloc(x)
	_ = x.SetFloat32([]float32{1, 0.5})
	if err := sched.Compute(g); err != nil {
		log.Fatal(err)
	}
	out, _ := y.Float32()
	fmt.Println(out, "splits:", sched.NumSplits())
	// Output: [2 5] splits: 1
}

// exampleType is a Go buffer type whose buffers are C host memory (ggml.HostBuffer).
type exampleType struct{ allocs int }

func (*exampleType) Name() string                         { return "Example" }
func (*exampleType) Alignment() uint64                    { return 64 }
func (*exampleType) AllocSize(t *ggml.Tensor) uint64      { return t.Nbytes() }
func (*exampleType) SupportsBackend(b *ggml.Backend) bool { return b.IsCPU() }
func (*exampleType) IsHost() bool                         { return true }

func (e *exampleType) Alloc(size uint64) (ggml.BufferImpl, error) {
	e.allocs++
	hb, err := ggml.NewHostBuffer(size, 64)
	if err != nil {
		return nil, err
	}
	return hb, nil
}

// A buffer type implemented in Go holds tensors like any other: here the operands of an
// addition computed on the CPU backend.
func ExampleNewBufferType() {
	impl := &exampleType{}
	bt, err := ggml.NewBufferType(impl)
	if err != nil {
		log.Fatal(err)
	}
	defer bt.Close()
	cpu, _ := ggml.NewCPU(ggml.WithThreads(1))
	defer cpu.Close()

	ctx, _ := ggml.NewContext(ggml.Params{NoAlloc: true})
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, 3)
	b := ctx.NewTensor1D(ggml.TypeF32, 3)
	buf, err := ggml.AllocContextTensorsFromBufferType(ctx, bt)
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	_ = a.SetFloat32([]float32{1, 2, 3})
	_ = b.SetFloat32([]float32{10, 20, 30})

	gctx, _ := ggml.NewContext(ggml.Params{NoAlloc: true})
	defer gctx.Close()
	sum := gctx.Add(a, b)
	g := gctx.NewGraph()
	g.BuildForwardExpand(sum)
	gbuf, _ := ggml.AllocContextTensors(gctx, cpu)
	defer gbuf.Close()
	if err := cpu.Compute(g); err != nil {
		log.Fatal(err)
	}
	out, _ := sum.Float32()
	fmt.Println(buf.Name(), impl.allocs, out)
	// Output: Example 1 [11 22 33]
}

// A tracing buffer type counts the data moved into and out of its buffers.
func ExampleNewTracingBufferType() {
	tr, err := ggml.NewTracingBufferType(ggml.CPUBufferType())
	if err != nil {
		log.Fatal(err)
	}
	defer tr.Close()
	ctx, _ := ggml.NewContext(ggml.Params{NoAlloc: true})
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, 4)
	buf, _ := ggml.AllocContextTensorsFromBufferType(ctx, tr.BufferType)
	defer buf.Close()
	_ = a.SetFloat32([]float32{1, 2, 3, 4})
	_, _ = a.Float32()
	st := tr.Stats()
	fmt.Println(tr.Name(), "sets:", st.Sets, st.SetBytes, "bytes, gets:", st.Gets, st.GetBytes, "bytes")
	// Output: Trace(CPU) sets: 1 16 bytes, gets: 1 16 bytes
}

// A custom operation written in Go runs on the compute's worker threads; each call handles
// the elements ith, ith+nth, ...
func ExampleContext_MapCustom1() {
	ctx, _ := ggml.NewContext(ggml.Params{})
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, 6)
	_ = a.SetFloat32([]float32{1, 2, 3, 4, 5, 6})
	square := func(dst, a, _, _ *ggml.Tensor, ith, nth int) {
		d, s := dst.HostFloat32(), a.HostFloat32()
		for i := ith; i < len(s); i += nth {
			d[i] = s[i] * s[i]
		}
	}
	y := ctx.MapCustom1(a, square, ggml.AllTasks)
	g := ctx.NewGraph()
	g.BuildForwardExpand(y)
	if err := ctx.Compute(g, 3); err != nil {
		log.Fatal(err)
	}
	out, _ := y.Float32()
	fmt.Println(out)
	// Output: [1 4 9 16 25 36]
}
