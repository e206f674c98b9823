package sampling_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/grammar"
	"github.com/ggml-go/ggml/sampling"
	"github.com/ggml-go/ggml/tokenizer"
)

// BenchmarkGrammarOverhead32k measures one draw from 32,000 logits (the LLaMA vocabulary
// of the shared test model) without a constraint and with the JSON grammar, lazy and
// eager, at two points of a JSON text: inside a string (almost every token fits) and
// after "{" (only a quote or whitespace fits, so the lazy draw usually falls back to the
// full filter). The logits are random, a worst case for the lazy mode: a model that
// follows the format makes the first draw fit almost always.
func BenchmarkGrammarOverhead32k(b *testing.B) {
	path := filepath.Join("..", "..", "shared", "models", "public-f16.gguf")
	if _, err := os.Stat(path); err != nil {
		b.Skip("shared model not found:", path)
	}
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		b.Fatal(err)
	}
	vocab, err := grammar.NewVocab(tok.NumTokens(), tok.Piece, tok.EOS())
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	logits := make([]float32, tok.NumTokens())
	for i := range logits {
		logits[i] = float32(r.NormFloat64() * 2)
	}
	for _, state := range []struct{ name, prefix string }{{"in-string", `{"text": "The`}, {"object-start", `{`}} {
		for _, mode := range []struct {
			name string
			on   bool
			mode sampling.ConstraintMode
		}{{"none", false, 0}, {"lazy", true, sampling.ConstraintLazy}, {"eager", true, sampling.ConstraintEager}} {
			b.Run(state.name+"/"+mode.name, func(b *testing.B) {
				s, _ := sampling.New(sampling.DefaultParams())
				if mode.on {
					c, err := grammar.NewConstraint(grammar.JSON(), vocab, grammar.Options{})
					if err != nil {
						b.Fatal(err)
					}
					if err := c.Matcher().AcceptString(state.prefix); err != nil {
						b.Fatal(err)
					}
					s.SetConstraint(c, mode.mode)
				}
				for b.Loop() {
					if _, err := s.TrySample(logits); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
