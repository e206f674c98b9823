//go:build cgo

package llama

import (
	"path/filepath"
	"testing"
)

// benchDecode measures one-token steps on the public q4_0 model (or a random model of its
// shape), through the reused decode graphs or with a graph rebuilt per token.
func benchDecode(b *testing.B, noReuse bool) {
	p := filepath.Join("..", "..", "shared", "models", "public-q4_0.gguf")
	m, err := Load(p, Options{Threads: 2})
	if err != nil {
		p = filepath.Join(b.TempDir(), "m.gguf")
		if err := WriteRandomModel(p, RandomConfig{NEmbd: 128, NFF: 352, NVocab: 32000, Type: 2}); err != nil {
			b.Fatal(err)
		}
		if m, err = Load(p, Options{Threads: 2}); err != nil {
			b.Fatal(err)
		}
	}
	defer m.Close()
	c, err := m.NewContext(ContextOptions{NCtx: 512})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	c.noReuse = noReuse
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

// BenchmarkDecodeReuse: one-token steps with the reused graphs (the default).
func BenchmarkDecodeReuse(b *testing.B) { benchDecode(b, false) }

// BenchmarkDecodeRebuild: one-token steps with a graph built and scheduled per token.
func BenchmarkDecodeRebuild(b *testing.B) { benchDecode(b, true) }
