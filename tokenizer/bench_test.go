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

// benchText is English with some punctuation, digits and non-ASCII text.
var benchText = strings.Repeat("The quick brown fox jumps over the lazy dog. It's 2024-01-16, café naïve 日本語 — 3.14159! ", 50)

// BenchmarkTokenizeBPE measures byte-level BPE tokenization (pre-tokenizer, merges) per
// byte with full upstream vocabularies and their pre-tokenizers.
func BenchmarkTokenizeBPE(b *testing.B) {
	for _, name := range []string{"gpt-2", "deepseek-llm", "falcon"} {
		b.Run(name, func(b *testing.B) {
			tok := fileTokenizer(b, filepath.Join(archDir, "vocab", "ggml-vocab-"+name+".gguf"))
			b.SetBytes(int64(len(benchText)))
			for b.Loop() {
				tok.Tokenize(benchText, true, true)
			}
		})
	}
}

// BenchmarkPreTokenize measures the pre-tokenizers alone (decoding and cutting), per byte.
func BenchmarkPreTokenize(b *testing.B) {
	for _, name := range []string{"gpt-2", "llama-bpe", "qwen2", "deepseek-llm", "default"} {
		b.Run(name, func(b *testing.B) {
			p, err := lookupPre(name)
			if err != nil {
				b.Fatal(err)
			}
			var pt preText
			b.SetBytes(int64(len(benchText)))
			for b.Loop() {
				pt.load(benchText)
				for _, s := range p.splits {
					pt.split(s)
				}
			}
		})
	}
}

// BenchmarkTokenizeWPM measures BERT WordPiece tokenization per byte.
func BenchmarkTokenizeWPM(b *testing.B) {
	tok := fileTokenizer(b, filepath.Join(archDir, "vocab", "ggml-vocab-bert-bge.gguf"))
	b.SetBytes(int64(len(benchText)))
	for b.Loop() {
		tok.Tokenize(benchText, true, true)
	}
}
