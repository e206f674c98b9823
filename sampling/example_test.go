package sampling_test

import (
	"fmt"
	"log"

	"github.com/ggml-go/ggml/grammar"
	"github.com/ggml-go/ggml/sampling"
)

// Sampling with llama.cpp's defaults, then greedy decoding, from hand-made logits.
func Example() {
	logits := []float32{0.5, 3.0, 2.9, -1.0, 1.0} // a model's output over a 5-token vocabulary
	p := sampling.DefaultParams()
	p.Seed = 42
	s, err := sampling.New(p)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range s.Distribution(logits) {
		fmt.Printf("token %d p=%.3f\n", c.ID, c.P)
	}
	// top-k 40 keeps all five, top-p 0.95 the first three (0.467+0.423+0.063), min-p 0.05
	// all three, then temperature 0.8 sharpens them.
	tok := s.Sample(logits)
	s.Accept(tok) // penalised from now on
	fmt.Println("sampled:", tok, "greedy:", sampling.Greedy(logits))
	// Output:
	// token 1 p=0.509
	// token 2 p=0.449
	// token 4 p=0.042
	// sampled: 2 greedy: 1
}

// Stop strings: text is shown as soon as it cannot be part of one.
func ExampleStopMatcher() {
	m := sampling.NewStopMatcher("\nUser:")
	for _, piece := range []string{"Sure", ", here", " it is.", "\n", "User", ": next"} {
		out, stop := m.Feed([]byte(piece))
		fmt.Printf("%q held=%d stop=%v\n", out, m.Pending(), stop)
		if stop {
			break
		}
	}
	// Output:
	// "Sure" held=0 stop=false
	// ", here" held=0 stop=false
	// " it is." held=0 stop=false
	// "" held=1 stop=false
	// "" held=5 stop=false
	// "" held=0 stop=true
}

// Constrained sampling: a grammar lets through only the tokens that can continue it.
func ExampleSampler_SetConstraint() {
	pieces := []string{"", "yes", "no", "maybe", "!"} // token 0 ends generation
	vocab, err := grammar.NewVocab(len(pieces), func(id int32) []byte { return []byte(pieces[id]) }, 0)
	if err != nil {
		log.Fatal(err)
	}
	g := grammar.MustParse(`root ::= ("yes" | "no") "!"`)
	c, err := grammar.NewConstraint(g, vocab, grammar.Options{})
	if err != nil {
		log.Fatal(err)
	}
	s, _ := sampling.New(sampling.GreedyParams())
	s.SetConstraint(c, sampling.ConstraintLazy)
	logits := []float32{0.5, 1, 2, 3, 0} // the model prefers "maybe", then "no"
	for {
		tok, err := s.TrySample(logits)
		if err != nil {
			log.Fatal(err)
		}
		if err := s.Advance(tok); err != nil {
			log.Fatal(err)
		}
		if tok == 0 {
			break
		}
		fmt.Printf("%q ", pieces[tok])
	}
	fmt.Println()
	// Output: "no" "!"
}

// Log-probabilities of a chosen token and of the most likely alternatives, from the raw
// logits; and a logit bias that bans a token.
func ExampleTokenLogprobs() {
	logits := []float32{2, 1, 0}
	lp := sampling.TokenLogprobs(logits, 1, 2)
	fmt.Printf("token %d: %.3f; top %d %.3f, %d %.3f\n", lp.ID, lp.Logprob, lp.Top[0].ID, lp.Top[0].Logprob, lp.Top[1].ID, lp.Top[1].Logprob)
	s, _ := sampling.New(sampling.GreedyParams())
	s.SetLogitBias(map[int32]float32{0: -100})
	fmt.Println("greedy with token 0 banned:", s.Sample(logits))
	// Output:
	// token 1: -1.408; top 0 -0.408, 1 -1.408
	// greedy with token 0 banned: 1
}
