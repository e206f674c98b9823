package sampling

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSample measures one Sample over a 32,000-token vocabulary.
func BenchmarkSample(b *testing.B) {
	logits := randomLogits(rand.New(rand.NewPCG(1, 1)), 32000)
	for _, c := range []struct {
		name string
		p    Params
	}{{"defaults", DefaultParams()}, {"greedy", GreedyParams()}, {"no-top-k", func() Params { p := DefaultParams(); p.TopK = 0; return p }()}} {
		b.Run(c.name, func(b *testing.B) {
			s, err := New(c.p)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				s.Accept(s.Sample(logits))
			}
		})
	}
}
