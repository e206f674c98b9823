//go:build cuda

package cuda_test

import (
	"fmt"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/cuda"
)

// ExampleNewBackend computes on device 0, or on the CPU when there is no CUDA device (so the
// output is the same either way).
func ExampleNewBackend() {
	var backend *ggml.Backend
	var err error
	if cuda.DeviceCount() > 0 {
		backend, err = cuda.NewBackend(0)
	} else {
		backend, err = ggml.NewCPU()
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer backend.Close()

	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	a := ctx.NewTensor1D(ggml.TypeF32, 4)
	b := ctx.NewTensor1D(ggml.TypeF32, 4)
	y := ctx.Scale(ctx.Add(a, b), 0.5)
	g := ctx.NewGraph().BuildForwardExpand(y)
	buf, err := ggml.AllocContextTensors(ctx, backend) // device memory of CUDA0
	if err != nil {
		fmt.Println(err)
		return
	}
	defer buf.Close()
	_ = a.SetFloat32([]float32{1, 2, 3, 4})
	_ = b.SetFloat32([]float32{3, 2, 1, 0})
	if err := backend.Compute(g); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := y.Float32()
	fmt.Println(out)
	// Output: [2 2 2 2]
}

// ExampleSplitBufferType keeps the weights of a matrix multiplication in a split buffer (rows
// spread over every device, in proportion to their memory) and multiplies on device 0; without
// a CUDA device it uses the CPU and its buffer type instead.
func ExampleSplitBufferType() {
	var backend *ggml.Backend
	var weights *ggml.BufferType
	var err error
	if cuda.DeviceCount() > 0 {
		if weights, err = cuda.SplitBufferType(nil); err == nil {
			backend, err = cuda.NewBackend(0)
		}
	} else {
		weights = ggml.CPUBufferType()
		backend, err = ggml.NewCPU()
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer backend.Close()

	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	w := ctx.NewTensor2D(ggml.TypeF32, 3, 4) // 4 rows of 3
	wbuf, err := ggml.AllocContextTensorsFromBufferType(ctx, weights)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer wbuf.Close()
	_ = w.SetFloat32([]float32{
		1, 0, 0,
		0, 1, 0,
		0, 0, 1,
		1, 1, 1,
	})

	x := ctx.NewTensor1D(ggml.TypeF32, 3)
	y := ctx.MulMat(w, x)
	g := ctx.NewGraph().BuildForwardExpand(y)
	buf, err := ggml.AllocContextTensors(ctx, backend) // x and y: the tensors without memory yet
	if err != nil {
		fmt.Println(err)
		return
	}
	defer buf.Close()
	_ = x.SetFloat32([]float32{2, 3, 4})
	if err := backend.Compute(g); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := y.Float32()
	fmt.Println(out)
	// Output: [2 3 4 9]
}
