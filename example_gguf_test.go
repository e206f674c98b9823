//go:build cgo

package ggml_test

import (
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// Write a GGUF file with one matrix, map it (zero-copy) and compute with the tensor.
func ExampleLoadGGUFTensors() {
	dir, _ := os.MkdirTemp("", "gguf-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "w.gguf")
	var b gguf.Builder
	_ = b.AddTensor("w", gguf.TypeF32, []int64{2, 2}, ggml.Float32Bytes([]float32{1, 2, 3, 4}))
	if err := b.WriteFile(path); err != nil {
		log.Fatal(err)
	}

	f, err := gguf.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	weights, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{}) // nil BufferType: mapped
	if err != nil {
		log.Fatal(err)
	}
	defer weights.Close()

	ctx, _ := ggml.NewContext(ggml.Params{MemSize: 1 << 20})
	defer ctx.Close()
	x := ctx.NewTensor1D(ggml.TypeF32, 2)
	_ = x.SetFloat32([]float32{1, 1})
	y := ctx.MulMat(weights.Tensor("w"), x)
	if err := ctx.Compute(ctx.NewGraph().BuildForwardExpand(y), 1); err != nil {
		log.Fatal(err)
	}
	out, _ := y.Float32()
	fmt.Println(out, "mapped:", weights.Mapped())
	// Output: [3 7] mapped: true
}

// A mapped file that shrinks while its tensors are in use would crash the process (SIGBUS) on
// the next read: CheckFile reports it first. NoMmap reads the file into memory instead.
func ExampleGGUFTensors_CheckFile() {
	dir, _ := os.MkdirTemp("", "gguf-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "w.gguf")
	var b gguf.Builder
	_ = b.AddTensor("w", gguf.TypeF32, []int64{1024}, make([]byte, 4096))
	if err := b.WriteFile(path); err != nil {
		log.Fatal(err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	mapped, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{})
	if err != nil {
		log.Fatal(err)
	}
	defer mapped.Close()
	read, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{NoMmap: true})
	if err != nil {
		log.Fatal(err)
	}
	defer read.Close()

	_ = os.Truncate(path, 100) // another program rewrites the file in place
	err = mapped.CheckFile()
	fmt.Println("mapped:", errors.Is(err, ggml.ErrFileChanged))
	fmt.Println("read:", read.Mapped(), read.CheckFile())
	// Output:
	// mapped: true
	// read: false <nil>
}
