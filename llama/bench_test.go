//go:build cgo

package llama_test

import (
	"path/filepath"
	"testing"

	"github.com/ggml-go/ggml/llama"
)

// benchModel returns the public q4_0 model, or a random model of its shape.
func benchModel(b *testing.B) string {
	p := filepath.Join("..", "..", "shared", "models", "public-q4_0.gguf")
	if _, err := llama.Load(p, llama.Options{}); err == nil {
		return p
	}
	p = filepath.Join(b.TempDir(), "m.gguf")
	if err := llama.WriteRandomModel(p, llama.RandomConfig{NEmbd: 128, NLayer: 2, NFF: 352, NVocab: 32000, Type: 2}); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkDecode measures one-token decode steps (tokens/s = 1e9 / ns/op).
func BenchmarkDecode(b *testing.B) {
	m, err := llama.Load(benchModel(b), llama.Options{Threads: 2})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	c, err := m.NewContext(llama.ContextOptions{NCtx: 512})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if c.Pos() == c.NCtx() {
			c.Reset()
		}
		if _, err := c.Eval([]int32{int32(100 + i%1000)}, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrompt200 measures the evaluation of a 200-token prompt.
func BenchmarkPrompt200(b *testing.B) {
	m, err := llama.Load(benchModel(b), llama.Options{Threads: 2})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	c, err := m.NewContext(llama.ContextOptions{NCtx: 512})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	toks := make([]int32, 200)
	for i := range toks {
		toks[i] = int32(100 + i*13)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c.Reset()
		if _, err := c.Eval(toks, false); err != nil {
			b.Fatal(err)
		}
	}
}
