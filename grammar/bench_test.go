package grammar

import (
	"testing"
)

// JSON prefixes at which the benchmarks measure: right after "{" (a key must start), inside
// a string (almost every token is possible: the worst case), and inside a number.
var benchPrefixes = []struct{ name, prefix string }{
	{"object-start", `{`},
	{"in-string", `{"name": "The quick brown`},
	{"in-number", `{"n": [1, 23`},
}

func benchVocab(b *testing.B) *Vocab {
	v, _ := llamaVocab(b)
	return v
}

// BenchmarkMask measures the full candidate filter over the 32,000-token LLaMA vocabulary
// with the JSON grammar: ns/op is per sampled token, ns/token per vocabulary entry.
func BenchmarkMask(b *testing.B) {
	v := benchVocab(b)
	for _, p := range benchPrefixes {
		b.Run(p.name, func(b *testing.B) {
			c, err := NewConstraint(JSON(), v, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Matcher().AcceptString(p.prefix); err != nil {
				b.Fatal(err)
			}
			allowed := make([]bool, v.Size())
			for b.Loop() {
				if err := c.Mask(allowed); err != nil {
					b.Fatal(err)
				}
			}
			n := 0
			for _, a := range allowed {
				if a {
					n++
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(v.Size()), "ns/vocab-token")
			b.ReportMetric(float64(n), "allowed")
		})
	}
}

// BenchmarkAllows measures the check of one sampled token (the lazy path of the sampler).
func BenchmarkAllows(b *testing.B) {
	v, tok := llamaVocab(b)
	for _, p := range benchPrefixes {
		b.Run(p.name, func(b *testing.B) {
			c, _ := NewConstraint(JSON(), v, Options{})
			if err := c.Matcher().AcceptString(p.prefix); err != nil {
				b.Fatal(err)
			}
			ids := tok.Tokenize(" fox", false, false)
			id := ids[len(ids)-1]
			for b.Loop() {
				c.Allows(id)
			}
		})
	}
}

// BenchmarkAccept measures advancing the grammar over a token's bytes.
func BenchmarkAccept(b *testing.B) {
	g := JSON()
	m, _ := g.NewMatcher(Options{})
	_ = m.AcceptString(`[`)
	piece := []byte(`"quick", `)
	for b.Loop() {
		if err := m.AcceptBytes(piece); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewVocab measures building the byte trie of the 32,000-token LLaMA vocabulary
// (once per model).
func BenchmarkNewVocab(b *testing.B) {
	_, tok := llamaVocab(b)
	for b.Loop() {
		if _, err := NewVocab(tok.NumTokens(), tok.Piece, tok.EOS()); err != nil {
			b.Fatal(err)
		}
	}
}
