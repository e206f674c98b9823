package gguf_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ggml-go/ggml/gguf"
)

// Example writes a small model file to memory and reads it back.
func Example() {
	weights := make([]byte, 0, 6*4)
	for _, x := range []float32{1, 2, 3, 4, 5, 6} {
		weights = binary.LittleEndian.AppendUint32(weights, math.Float32bits(x))
	}

	var b gguf.Builder
	_ = b.Set("general.architecture", "tiny")
	_ = b.Set("tiny.context_length", uint32(128))
	_ = b.Set("tokenizer.ggml.tokens", []string{"<s>", "</s>", "hi"})
	if err := b.AddTensor("output.weight", gguf.TypeF32, []int64{3, 2}, weights); err != nil {
		panic(err)
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		panic(err)
	}

	f, err := gguf.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		panic(err)
	}
	arch, _ := f.GetString("general.architecture")
	nCtx, _ := f.GetInt("tiny.context_length")
	tokens, _ := f.GetStrings("tokenizer.ggml.tokens")
	fmt.Println(arch, nCtx, tokens)
	for _, t := range f.Tensors() {
		data, _ := f.TensorBytes(t.Name)
		fmt.Println(t.Name, t.Type, t.Shape, t.Size, len(data))
	}
	_, err = f.GetUint64("tiny.context_length")
	fmt.Println(err)
	// Output:
	// tiny 128 [<s> </s> hi]
	// output.weight f32 [3 2] 24 24
	// gguf: metadata key "tiny.context_length" holds u32, not u64
}
