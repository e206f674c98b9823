//go:build cgo

package ggml_test

import (
	"fmt"
	"log"
	"math"

	"github.com/ggml-go/ggml"
)

// Training a small MLP: mark the weights with SetParam, build the loss, and let an Adam
// optimizer minimize it. The network (2 inputs, 8 tanh units, 2 logits) learns XOR.
func ExampleOptimizer() {
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 32 << 20})
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()

	// weights, initialised deterministically
	param := func(ne0, ne1 int64) *ggml.Tensor {
		t := ctx.NewTensor2D(ggml.TypeF32, ne0, ne1)
		v := make([]float32, t.NumElements())
		for i := range v {
			v[i] = float32(math.Sin(float64(7*i+int(ne0)*13))) * 0.5
		}
		_ = t.SetFloat32(v)
		return ctx.SetParam(t)
	}
	w1, b1 := param(2, 8), param(8, 1)
	w2, b2 := param(8, 2), param(2, 1)

	// the four XOR cases (one per column) and their one-hot targets
	x := ctx.NewTensor2D(ggml.TypeF32, 2, 4)
	_ = x.SetFloat32([]float32{0, 0, 0, 1, 1, 0, 1, 1})
	target := ctx.NewTensor2D(ggml.TypeF32, 2, 4)
	_ = target.SetFloat32([]float32{1, 0, 0, 1, 0, 1, 1, 0})

	hidden := ctx.Tanh(ctx.Add(ctx.MulMat(w1, x), b1))
	logits := ctx.Add(ctx.MulMat(w2, hidden), b2)
	loss := ctx.CrossEntropyLoss(logits, target)

	p := ggml.DefaultOptimizerParams(ggml.Adam)
	p.Adam.Alpha = 0.05
	p.Adam.Iterations = 500
	opt, err := ggml.NewOptimizer(p)
	if err != nil {
		log.Fatal(err)
	}
	defer opt.Close()
	if _, err := opt.Minimize(loss); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("loss %.2f -> below 0.05: %v\n", opt.LossBefore(), opt.LossAfter() < 0.05)

	// predictions: the larger logit of each case
	g := ctx.NewGraph()
	g.BuildForwardExpand(logits)
	if err := ctx.Compute(g, 1); err != nil {
		log.Fatal(err)
	}
	out, _ := logits.Float32()
	for i := 0; i < 4; i++ {
		class := 0
		if out[2*i+1] > out[2*i] {
			class = 1
		}
		fmt.Print(class, " ")
	}
	fmt.Println()
	// Output:
	// loss 0.69 -> below 0.05: true
	// 0 1 1 0
}

// Gradients of a loss with respect to a param: d/dx sum(x^2 * 3) = 6x.
func ExampleContext_BuildBackward() {
	ctx, err := ggml.NewContext(ggml.Params{MemSize: 4 << 20})
	if err != nil {
		log.Fatal(err)
	}
	defer ctx.Close()
	x := ctx.SetParam(ctx.NewTensor1D(ggml.TypeF32, 3))
	_ = x.SetFloat32([]float32{1, -2, 0.5})
	loss := ctx.Sum(ctx.Scale(ctx.Sqr(x), 3))

	gf := ctx.NewGraphCustom(64, true) // gradient slots
	gf.BuildForwardExpand(loss)
	gb := ctx.BuildBackward(gf, false)
	if err := ctx.ComputeGradients(gf, gb, loss, 1); err != nil {
		log.Fatal(err)
	}
	g, _ := x.Grad().Float32()
	fmt.Println(g)
	// Output: [6 -12 3]
}
