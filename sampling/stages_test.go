package sampling

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// off returns parameters with every stage off (temperature 1), to switch on one at a time.
func off() Params {
	return Params{Temp: 1, TailFreeZ: 1, TypicalP: 1, TopP: 1, RepeatPenalty: 1}
}

func newSampler(t *testing.T, p Params) *Sampler {
	t.Helper()
	s, err := New(p)
	require.NoError(t, err)
	return s
}

// withProbs loads candidates whose softmax is probs (logits ln p), sorted as given.
func withProbs(s *Sampler, probs ...float64) {
	s.cands = s.cands[:0]
	for i, p := range probs {
		s.cands = append(s.cands, Candidate{ID: int32(i), Logit: float32(math.Log(p))})
	}
	s.sorted = false
}

func ids(c []Candidate) []int32 {
	var out []int32
	for _, x := range c {
		out = append(out, x.ID)
	}
	return out
}

func TestPenalties(t *testing.T) {
	p := off()
	p.RepeatPenalty, p.FrequencyPenalty, p.PresencePenalty, p.RepeatLastN = 2, 0.5, 0.25, 3
	s := newSampler(t, p)
	for _, tok := range []int32{3, 0, 1, 0} { // the window of 3 keeps 0 1 0
		s.Accept(tok)
	}
	assert.Equal(t, []int32{0, 1, 0}, s.History())
	s.load([]float32{2, -1, 0.5, 3})
	want := []float32{
		2.0/2 - (2*0.5 + 0.25), // positive: divided; seen twice
		-1*2 - (0.5 + 0.25),    // negative: multiplied; seen once
		0.5,                    // not in the window
		3,                      // fell out of the window
	}
	for i, c := range s.cands {
		assert.InDelta(t, want[i], c.Logit, 1e-6, "token %d", i)
	}
	s.Reset()
	assert.Empty(t, s.History())
}

func TestTopK(t *testing.T) {
	s := newSampler(t, off())
	logits := []float32{1, 5, 3, 5, 2}
	for k, want := range map[int][]int32{1: {1}, 2: {1, 3}, 3: {1, 3, 2}, 5: {1, 3, 2, 4, 0}, 0: {1, 3, 2, 4, 0}} {
		s.load(logits)
		s.topK(k)
		assert.Equal(t, want, ids(s.cands), "k=%d (ties: lower id first)", k)
	}
	// The heap path (k much smaller than n) and the sorting path agree.
	big := make([]float32, 1000)
	for i := range big {
		big[i] = float32((i * 7919) % 101)
	}
	s.load(big)
	s.topK(40)
	heap := ids(s.cands)
	s.load(big)
	s.sort()
	assert.Equal(t, ids(s.cands[:40]), heap)
}

func TestSoftmax(t *testing.T) {
	s := newSampler(t, off())
	withProbs(s, 1.0/6, 3.0/6, 2.0/6)
	s.softmax()
	assert.Equal(t, []int32{1, 2, 0}, ids(s.cands))
	for i, want := range []float64{0.5, 1.0 / 3, 1.0 / 6} {
		assert.InDelta(t, want, s.cands[i].P, 1e-6)
	}
}

func TestTopP(t *testing.T) {
	s := newSampler(t, off())
	for p, keep := range map[float32]int{0.4: 1, 0.75: 2, 0.85: 3, 0.99: 3} {
		withProbs(s, 0.5, 0.3, 0.2)
		s.topP(p)
		assert.Len(t, s.cands, keep, "top-p %v", p)
	}
}

func TestMinP(t *testing.T) {
	s := newSampler(t, off())
	for p, keep := range map[float32]int{0.05: 4, 0.2: 3, 0.25: 3, 0.35: 2, 0.9: 1} {
		withProbs(s, 0.5, 0.3, 0.15, 0.05)
		s.minP(p)
		assert.Len(t, s.cands, keep, "min-p %v (threshold %v)", p, 0.5*p)
	}
}

func TestTailFree(t *testing.T) {
	// Second differences of 0.3 0.25 0.2 0.15 0.07 0.03: |0|, |0|, |0.03|, |0.04| → 0 0 3/7 4/7.
	s := newSampler(t, off())
	for z, keep := range map[float32]int{0.4: 2, 0.5: 3} {
		withProbs(s, 0.3, 0.25, 0.2, 0.15, 0.07, 0.03)
		s.tailFree(z)
		assert.Len(t, s.cands, keep, "z %v", z)
	}
}

func TestTypical(t *testing.T) {
	// p = 0.4 0.3 0.3: entropy 1.0889; |surprise − entropy| = 0.173 0.115 0.115, so the
	// order is 1 2 0 and a mass of 0.5 keeps tokens 1 and 2.
	s := newSampler(t, off())
	withProbs(s, 0.4, 0.3, 0.3)
	s.typical(0.5)
	assert.Equal(t, []int32{1, 2}, ids(s.cands))
	withProbs(s, 0.4, 0.3, 0.3)
	s.typical(0.65)
	assert.Equal(t, []int32{1, 2, 0}, ids(s.cands))
}

func TestTemperature(t *testing.T) {
	p := off()
	p.Temp = 2
	s := newSampler(t, p)
	c := s.Distribution([]float32{float32(math.Log(4)), 0})
	assert.InDelta(t, 2.0/3, c[0].P, 1e-6, "logits / 2: p ∝ 2, 1")
	assert.InDelta(t, 1.0/3, c[1].P, 1e-6)
	// Temperature comes after min-p: min-p sees the untempered distribution.
	p.MinP, p.Temp = 0.3, 100
	s = newSampler(t, p)
	c = s.Distribution([]float32{float32(math.Log(4)), 0}) // untempered p = 0.8, 0.2 < 0.3·0.8
	assert.Len(t, c, 1)
}

func TestGreedy(t *testing.T) {
	assert.Equal(t, int32(1), Greedy([]float32{1, 3, 3, 2}), "lowest id on ties")
	assert.Equal(t, int32(2), Greedy([]float32{float32(math.NaN()), -5, 1}))
	assert.Equal(t, int32(0), Greedy([]float32{-1}))
	assert.Panics(t, func() { Greedy(nil) })
	s := newSampler(t, GreedyParams())
	assert.Panics(t, func() { s.Sample(nil) })
}

func TestNewValidates(t *testing.T) {
	for _, c := range []struct {
		change func(*Params)
		want   string
	}{
		{func(p *Params) { p.TopP = 0 }, "TopP"},
		{func(p *Params) { p.TopP = 1.5 }, "TopP"},
		{func(p *Params) { p.MinP = -0.1 }, "MinP"},
		{func(p *Params) { p.TailFreeZ = 0 }, "TailFreeZ"},
		{func(p *Params) { p.TypicalP = 2 }, "TypicalP"},
		{func(p *Params) { p.RepeatPenalty = 0 }, "RepeatPenalty"},
		{func(p *Params) { p.RepeatLastN = -1 }, "RepeatLastN"},
		{func(p *Params) { p.Temp = float32(math.NaN()) }, "Temp"},
		{func(p *Params) { p.FrequencyPenalty = float32(math.Inf(1)) }, "FrequencyPenalty"},
	} {
		p := DefaultParams()
		c.change(&p)
		_, err := New(p)
		assert.ErrorContains(t, err, c.want)
	}
	_, err := New(DefaultParams())
	assert.NoError(t, err)
}

// TestSortOrder: the packed-key sort gives the order of compare (logit descending, id
// ascending on ties, NaN last) from any starting order.
func TestSortOrder(t *testing.T) {
	s := newSampler(t, off())
	nan := float32(math.NaN())
	logits := []float32{1, nan, 3, -0.0, 0, 3, float32(math.Inf(-1)), 1, nan, float32(math.Inf(1)), -2}
	s.load(logits)
	// Scramble the positions first, as typical sampling does.
	slices.Reverse(s.cands)
	s.sort()
	assert.Equal(t, []int32{9, 2, 5, 0, 7, 3, 4, 10, 6, 1, 8}, ids(s.cands))
}

func TestNonFiniteLogits(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	for _, c := range []struct {
		logits []float32
		want   int32 // -1: any
	}{
		{[]float32{0, inf, 3}, 1},
		{[]float32{-inf, -inf, -inf}, -1},
		{[]float32{nan, 2, nan}, 1},
		{[]float32{nan, nan}, -1},
	} {
		p := DefaultParams()
		p.TopP, p.MinP = 1, 0
		s := newSampler(t, p)
		d := s.Distribution(c.logits)
		sum := 0.0
		for _, x := range d {
			assert.False(t, x.P != x.P, "NaN probability for %v", c.logits)
			sum += float64(x.P)
		}
		assert.InDelta(t, 1, sum, 1e-6, "%v", c.logits)
		tok := s.Sample(c.logits)
		if c.want >= 0 {
			assert.Equal(t, c.want, tok, "%v", c.logits)
		}
		assert.True(t, tok >= 0 && int(tok) < len(c.logits))
	}
}
