package sampling_test

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/grammar"
	"github.com/ggml-go/ggml/sampling"
)

// jsonPieces is a toy vocabulary: token 0 ends generation, the others are JSON fragments
// and some text that JSON never allows outside strings.
var jsonPieces = []string{"", "{", "}", "[", "]", `"`, `"a"`, `"key"`, ":", ",", " ", "1", "23", ".5",
	"true", "null", "hello", "x", "\n", `":`, `",`, "é", "\xc3", "\xa9", "-", "e", "{}", "]]", `{"`}

func jsonVocab(t testing.TB) *grammar.Vocab {
	v, err := grammar.NewVocab(len(jsonPieces), func(id int32) []byte { return []byte(jsonPieces[id]) }, 0)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func randomLogits(r *rand.Rand, n int) []float32 {
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(r.NormFloat64() * 3)
	}
	return l
}

// generateJSON samples until the end token (or 200 tokens) and returns the text.
func generateJSON(t *testing.T, s *sampling.Sampler, r *rand.Rand) (string, bool) {
	var out []byte
	for i := 0; i < 200; i++ {
		logits := randomLogits(r, len(jsonPieces))
		logits[0] += float32(i) / 20 // ending becomes likelier over time
		tok, err := s.TrySample(logits)
		if err != nil {
			t.Fatalf("after %q: %v", out, err)
		}
		if err := s.Advance(tok); err != nil {
			t.Fatalf("after %q: %v", out, err)
		}
		if tok == 0 {
			return string(out), true
		}
		out = append(out, jsonPieces[tok]...)
	}
	return string(out), false
}

func TestConstraintOutputsParse(t *testing.T) {
	v := jsonVocab(t)
	for _, mode := range []sampling.ConstraintMode{sampling.ConstraintLazy, sampling.ConstraintEager} {
		for _, temp := range []float32{0, 0.8, 1.5} {
			p := sampling.DefaultParams()
			p.Temp = temp
			p.Seed = 3
			s, _ := sampling.New(p)
			c, _ := grammar.NewConstraint(grammar.JSONObject(), v, grammar.Options{})
			s.SetConstraint(c, mode)
			r := rand.New(rand.NewPCG(5, uint64(mode)))
			ended := 0
			for run := 0; run < 20; run++ {
				s.Reset()
				text, ok := generateJSON(t, s, r)
				if !ok {
					continue
				}
				ended++
				var obj map[string]any
				d := json.NewDecoder(strings.NewReader(text))
				d.UseNumber() // exponents beyond float64 are still JSON
				if err := d.Decode(&obj); err != nil || d.More() {
					t.Errorf("mode %d temp %v: %q does not parse: %v", mode, temp, text, err)
				}
			}
			if ended == 0 {
				t.Errorf("mode %d temp %v: no generation ended", mode, temp)
			}
		}
	}
}

// At temperature 0 the lazy and eager modes pick the same tokens.
func TestConstraintLazyEqualsEagerWhenGreedy(t *testing.T) {
	v := jsonVocab(t)
	var runs [2][]int32
	for i, mode := range []sampling.ConstraintMode{sampling.ConstraintLazy, sampling.ConstraintEager} {
		s, _ := sampling.New(sampling.GreedyParams())
		c, _ := grammar.NewConstraint(grammar.JSON(), v, grammar.Options{})
		s.SetConstraint(c, mode)
		r := rand.New(rand.NewPCG(9, 9))
		for k := 0; k < 100; k++ {
			tok, err := s.TrySample(randomLogits(r, len(jsonPieces)))
			if err != nil {
				t.Fatal(err)
			}
			runs[i] = append(runs[i], tok)
			if s.Advance(tok) != nil || tok == 0 {
				break
			}
		}
	}
	if len(runs[0]) != len(runs[1]) {
		t.Fatalf("lazy %v, eager %v", runs[0], runs[1])
	}
	for i := range runs[0] {
		if runs[0][i] != runs[1][i] {
			t.Fatalf("lazy %v, eager %v", runs[0], runs[1])
		}
	}
}

type nothing struct{}

func (nothing) Allows(int32) bool   { return false }
func (nothing) Mask(a []bool) error { clear(a); return nil }
func (nothing) Accept(int32) error  { return errors.New("no") }
func (nothing) Reset() error        { return nil }

func TestConstraintAllowsNothing(t *testing.T) {
	for _, p := range []sampling.Params{sampling.DefaultParams(), sampling.GreedyParams()} {
		s, _ := sampling.New(p)
		s.SetConstraint(nothing{}, sampling.ConstraintLazy)
		if _, err := s.TrySample([]float32{1, 2, 3}); !errors.Is(err, sampling.ErrNoTokenAllowed) {
			t.Errorf("got %v, want ErrNoTokenAllowed", err)
		}
		if tok := s.Sample([]float32{1, 2, 3}); tok != -1 {
			t.Errorf("Sample gave %d, want -1", tok)
		}
		if d := s.Distribution([]float32{1, 2, 3}); d != nil {
			t.Errorf("Distribution gave %v, want nil", d)
		}
	}
	// a complete grammar without a known end token: nothing more is allowed
	v, _ := grammar.NewVocab(2, func(id int32) []byte { return []byte([]string{"a", "b"}[id]) })
	c, _ := grammar.NewConstraint(grammar.MustParse(`root ::= "a"`), v, grammar.Options{})
	s, _ := sampling.New(sampling.GreedyParams())
	s.SetConstraint(c, sampling.ConstraintEager)
	tok, err := s.TrySample([]float32{0, 5})
	if err != nil || tok != 0 {
		t.Fatalf("got %d, %v; want token 0 (the only one allowed)", tok, err)
	}
	if err := s.Advance(tok); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TrySample([]float32{0, 5}); !errors.Is(err, sampling.ErrNoTokenAllowed) {
		t.Fatalf("got %v, want ErrNoTokenAllowed", err)
	}
	s.Reset() // resets the grammar too
	if tok, err := s.TrySample([]float32{0, 5}); err != nil || tok != 0 {
		t.Fatalf("after Reset: %d, %v", tok, err)
	}
}

// BenchmarkConstrainedSample measures one constrained draw (lazy and eager) over the toy
// vocabulary, against the unconstrained draw.
func BenchmarkConstrainedSample(b *testing.B) {
	v := jsonVocab(b)
	logits := randomLogits(rand.New(rand.NewPCG(1, 2)), len(jsonPieces))
	for _, tc := range []struct {
		name string
		mode sampling.ConstraintMode
		on   bool
	}{{"none", 0, false}, {"lazy", sampling.ConstraintLazy, true}, {"eager", sampling.ConstraintEager, true}} {
		b.Run(tc.name, func(b *testing.B) {
			s, _ := sampling.New(sampling.DefaultParams())
			if tc.on {
				c, _ := grammar.NewConstraint(grammar.JSON(), v, grammar.Options{})
				_ = c.Matcher().AcceptString(`{"a": "`)
				s.SetConstraint(c, tc.mode)
			}
			for b.Loop() {
				s.Sample(logits)
			}
		})
	}
}
