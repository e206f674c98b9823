package tokenizer

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/gguf"
)

// BenchmarkFromGGUF measures building the 32,000-token LLaMA vocabulary from an open file.
func BenchmarkFromGGUF(b *testing.B) {
	llamaVocab(b)
	f, err := gguf.Open(filepath.Join(modelsDir, "public-f16.gguf"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for b.Loop() {
		if _, err := FromGGUF(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTokenize measures SPM tokenization of English text, per byte.
func BenchmarkTokenize(b *testing.B) {
	tok := llamaVocab(b)
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 100)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Tokenize(text, true, true)
	}
}
