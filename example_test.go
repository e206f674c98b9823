//go:build cgo

package ggml_test

import (
	"fmt"
	"log"

	"github.com/ggml-go/ggml"
)

// The basic flow: describe tensors in a context, record operations, allocate the tensors in a
// backend buffer, set the inputs, compute, read the result.
func Example() {
	cpu, err := ggml.NewCPU(ggml.WithThreads(2))
	if err != nil {
		log.Fatal(err)
	}
	defer cpu.Close()

	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true}) // metadata only
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()

	w := ctx.NewTensor2D(ggml.TypeF32, 3, 2) // 2 rows of 3
	x := ctx.NewTensor1D(ggml.TypeF32, 3)
	y := ctx.Relu(ctx.MulMat(w, x)) // relu(W·x), 2 values
	g := ctx.NewGraph().BuildForwardExpand(y)

	buf, err := ggml.AllocContextTensors(ctx, cpu) // memory for w, x and y
	if err != nil {
		log.Fatal(err)
	}
	defer buf.Close()
	if err := w.SetFloat32([]float32{1, 2, 3, -1, -2, -3}); err != nil {
		log.Fatal(err)
	}
	if err := x.SetFloat32([]float32{1, 1, 1}); err != nil {
		log.Fatal(err)
	}
	if err := cpu.Compute(g); err != nil {
		log.Fatal(err)
	}
	out, err := y.Float32()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output: [6 0]
}

// A context that allocates data can compute directly on the CPU, without a backend.
func ExampleContext_Compute() {
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20})
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, 4)
	if err := a.SetFloat32([]float32{1, 2, 3, 4}); err != nil {
		log.Fatal(err)
	}
	sum := ctx.Sum(ctx.Sqr(a))
	g := ctx.NewGraph().BuildForwardExpand(sum)
	if err := ctx.Compute(g, 1); err != nil {
		log.Fatal(err)
	}
	v, _ := sum.Float32()
	fmt.Println(v[0])
	// Output: 30
}

// Constructor misuse panics with a *ggml.Error naming the op and the operands.
func ExampleError() {
	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	defer func() {
		e := recover().(*ggml.Error)
		fmt.Println(e.Op)
		fmt.Println(e.Shapes)
	}()
	ctx.MulMat(ctx.NewTensor2D(ggml.TypeF32, 64, 4), ctx.NewTensor2D(ggml.TypeF32, 32, 4))
	// Output:
	// MulMat
	// a=[64 4 1 1] f32, b=[32 4 1 1] f32
}

// Quantize converts float32 rows to a block-quantized type; Dequantize converts back.
func ExampleQuantize() {
	src := make([]float32, 32)
	for i := range src {
		src[i] = float32(i) / 4
	}
	q, err := ggml.Quantize(ggml.TypeQ8_0, src, 32)
	if err != nil {
		log.Fatal(err)
	}
	back, err := ggml.Dequantize(ggml.TypeQ8_0, q, 32)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d bytes, %.2f (was %.2f)\n", len(q), back[4], src[4])
	// Output: 34 bytes, 0.98 (was 1.00)
}

// A TensorAllocator places tensors one after the other in a buffer; a measuring one tells how
// big that buffer must be.
func ExampleTensorAllocator() {
	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, 100)
	b := ctx.NewTensor1D(ggml.TypeF16, 100)

	measure, err := ggml.NewMeasureAllocatorFromBufferType(ggml.CPUBufferType())
	if err != nil {
		log.Fatal(err)
	}
	defer measure.Close()
	for _, t := range []*ggml.Tensor{a, b} {
		if err := measure.Alloc(t); err != nil {
			log.Fatal(err)
		}
	}
	size := measure.MaxSize()

	alloc, err := ggml.NewTensorAllocatorFromBufferType(ggml.CPUBufferType(), size)
	if err != nil {
		log.Fatal(err)
	}
	defer alloc.Close()
	for _, t := range []*ggml.Tensor{a, b} {
		if err := alloc.Alloc(t); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(size >= 600, a.HasData(), b.HasData())
	// Output: true true true
}
