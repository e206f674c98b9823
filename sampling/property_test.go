package sampling

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randomLogits(rng *rand.Rand, n int) []float32 {
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(rng.NormFloat64() * 3)
		if rng.IntN(50) == 0 && i > 0 {
			l[i] = l[i-1] // some exact ties
		}
	}
	return l
}

func randomParams(rng *rand.Rand) Params {
	p := DefaultParams()
	p.Temp = []float32{0, 0.2, 0.8, 1, 1.5}[rng.IntN(5)]
	p.TopK = []int{0, 1, 5, 40, 500}[rng.IntN(5)]
	p.TailFreeZ = []float32{1, 0.95, 0.5}[rng.IntN(3)]
	p.TypicalP = []float32{1, 0.9, 0.3}[rng.IntN(3)]
	p.TopP = []float32{1, 0.95, 0.5, 0.1}[rng.IntN(4)]
	p.MinP = []float32{0, 0.05, 0.3}[rng.IntN(3)]
	p.RepeatPenalty = []float32{1, 1.1, 1.5}[rng.IntN(3)]
	p.RepeatLastN = []int{0, 1, 64}[rng.IntN(3)]
	p.FrequencyPenalty = []float32{0, 0.3}[rng.IntN(2)]
	p.PresencePenalty = []float32{0, -0.2, 0.5}[rng.IntN(3)]
	p.Seed = rng.Uint64()
	return p
}

// TestDistributionProperties checks, over random logits and parameters: probabilities sum
// to 1 and are sorted where the chain ends sorted, top-k keeps at most k, min-p's threshold
// holds at temperature 1, every candidate is a real token, and Sample returns one of the
// candidates without touching the caller's logits.
func TestDistributionProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := 0; iter < 300; iter++ {
		n := 1 + rng.IntN(2000)
		logits := randomLogits(rng, n)
		orig := slices.Clone(logits)
		p := randomParams(rng)
		s, err := New(p)
		require.NoError(t, err)
		for i := rng.IntN(100); i > 0; i-- {
			s.Accept(int32(rng.IntN(n)))
		}
		c := slices.Clone(s.Distribution(logits))
		require.NotEmpty(t, c)
		var sum float64
		seen := map[int32]bool{}
		for _, x := range c {
			sum += float64(x.P)
			require.True(t, x.ID >= 0 && int(x.ID) < n)
			require.False(t, seen[x.ID], "duplicate candidate")
			seen[x.ID] = true
		}
		assert.InDelta(t, 1, sum, 1e-5, "%+v", p)
		if p.TopK > 0 && p.Temp > 0 {
			assert.LessOrEqual(t, len(c), p.TopK)
		}
		if p.Temp == 1 && p.MinP > 0 && p.TypicalP == 1 {
			for _, x := range c {
				assert.GreaterOrEqual(t, x.P, p.MinP*c[0].P*(1-1e-5), "min-p threshold")
			}
		}
		tok := s.Sample(logits)
		assert.Equal(t, orig, logits, "Sample must not modify the logits")
		assert.True(t, seen[tok], "sampled token %d is not a candidate", tok)
	}
}

// TestPenaltiesOnlyTouchHistory: the penalised logits differ from the input exactly at
// tokens of the window (where a penalty is not neutral).
func TestPenaltiesOnlyTouchHistory(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	p := DefaultParams()
	p.FrequencyPenalty, p.PresencePenalty, p.RepeatLastN = 0.2, 0.1, 16
	s, err := New(p)
	require.NoError(t, err)
	logits := randomLogits(rng, 500)
	for i := 0; i < 40; i++ {
		s.Accept(int32(rng.IntN(500)))
	}
	window := map[int32]bool{}
	for _, tok := range s.History() {
		window[tok] = true
	}
	require.Len(t, s.History(), 16)
	s.load(logits)
	for i, c := range s.cands {
		if window[int32(i)] {
			assert.NotEqual(t, logits[i], c.Logit, "token %d is in the window", i)
		} else {
			assert.Equal(t, logits[i], c.Logit, "token %d is not in the window", i)
		}
	}
}

func TestSameSeedSameSequence(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	logits := randomLogits(rng, 3000)
	run := func(seed uint64) []int32 {
		p := DefaultParams()
		p.Seed = seed
		p.TopK = 0 // keep many candidates so that draws differ
		p.MinP = 0
		p.Temp = 1.5
		s, err := New(p)
		require.NoError(t, err)
		var out []int32
		for i := 0; i < 50; i++ {
			tok := s.Sample(logits)
			s.Accept(tok)
			out = append(out, tok)
		}
		return out
	}
	a := run(42)
	assert.Equal(t, a, run(42))
	assert.NotEqual(t, a, run(43))
	// Reset restarts the generator and forgets the history.
	p := DefaultParams()
	p.Seed = 9
	s, err := New(p)
	require.NoError(t, err)
	first := []int32{s.Sample(logits), s.Sample(logits), s.Sample(logits)}
	s.Accept(first[0])
	s.Reset()
	assert.Equal(t, first, []int32{s.Sample(logits), s.Sample(logits), s.Sample(logits)})
}

func TestTempZeroIsGreedy(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 50; i++ {
		logits := randomLogits(rng, 1+rng.IntN(1000))
		p := randomParams(rng)
		p.Temp = 0
		p.RepeatLastN = 0
		s, err := New(p)
		require.NoError(t, err)
		want := Greedy(logits)
		assert.Equal(t, want, s.Sample(logits))
		c := s.Distribution(logits)
		assert.Equal(t, []Candidate{{ID: want, Logit: logits[want], P: 1}}, c)
		p.Temp = -1
		s, err = New(p)
		require.NoError(t, err)
		assert.Equal(t, want, s.Sample(logits), "negative temperature is greedy too")
	}
	// With a history, greedy picks the argmax of the penalised logits.
	s, err := New(Params{Temp: 0, TopP: 1, TailFreeZ: 1, TypicalP: 1, RepeatPenalty: 2, RepeatLastN: 4})
	require.NoError(t, err)
	s.Accept(0)
	assert.Equal(t, int32(1), s.Sample([]float32{3, 2, 1}), "3/2 < 2")
}

// TestDrawFrequencies: with every stage off, draws follow the softmax.
func TestDrawFrequencies(t *testing.T) {
	s, err := New(off())
	require.NoError(t, err)
	probs := []float64{0.5, 0.3, 0.15, 0.05}
	logits := make([]float32, len(probs))
	for i, p := range probs {
		logits[i] = float32(math.Log(p))
	}
	const draws = 40000
	count := make([]int, len(probs))
	for i := 0; i < draws; i++ {
		count[s.Sample(logits)]++
	}
	for i, p := range probs {
		sd := math.Sqrt(p * (1 - p) / draws)
		assert.InDelta(t, p, float64(count[i])/draws, 5*sd, "token %d", i)
	}
}

func TestSampleAllocations(t *testing.T) {
	if instrumented {
		t.Skip("allocation counts are not meaningful under -asan/-msan")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	logits := randomLogits(rng, 32000)
	for _, p := range []Params{DefaultParams(), GreedyParams(), func() Params {
		p := DefaultParams()
		p.TopK, p.TailFreeZ, p.TypicalP = 0, 0.9, 0.9
		return p
	}()} {
		s, err := New(p)
		require.NoError(t, err)
		for i := 0; i < 64; i++ {
			s.Accept(int32(rng.IntN(32000)))
		}
		s.Sample(logits)
		allocs := testing.AllocsPerRun(5, func() { s.Accept(s.Sample(logits)) })
		assert.Zero(t, allocs, "%+v", p)
	}
}

func TestSplitMix64(t *testing.T) {
	// The first outputs for seed 0 (the generator's published test values start
	// 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4).
	r := splitMix64{}
	assert.Equal(t, uint64(0xe220a8397b1dcdaf), r.next())
	assert.Equal(t, uint64(0x6e789e6aa1b965f4), r.next())
	for i := 0; i < 1000; i++ {
		f := r.float64()
		require.True(t, f >= 0 && f < 1)
	}
}
