package sampling

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// refCand is a candidate of the reference chain, in float64.
type refCand struct {
	id    int32
	logit float64
	p     float64
}

func refSoftmax(c []refCand) {
	sort.SliceStable(c, func(i, j int) bool {
		if c[i].logit != c[j].logit {
			return c[i].logit > c[j].logit
		}
		return c[i].id < c[j].id
	})
	sum := 0.0
	for i := range c {
		c[i].p = math.Exp(c[i].logit - c[0].logit)
		sum += c[i].p
	}
	for i := range c {
		c[i].p /= sum
	}
}

// refChain is llama.cpp's sampling chain written out plainly: everything sorted, float64.
func refChain(logits []float32, hist []int32, p Params) []refCand {
	c := make([]refCand, len(logits))
	for i, l := range logits {
		c[i] = refCand{id: int32(i), logit: float64(l)}
	}
	count := map[int32]int{}
	for _, t := range hist {
		count[t]++
	}
	for t, n := range count {
		l := float32(c[t].logit)
		if l <= 0 {
			l *= p.RepeatPenalty
		} else {
			l /= p.RepeatPenalty
		}
		l -= float32(n)*p.FrequencyPenalty + p.PresencePenalty
		c[t].logit = float64(l)
	}
	refSoftmax(c)
	if p.TopK > 0 && p.TopK < len(c) {
		c = c[:p.TopK]
	}
	if p.TailFreeZ < 1 && len(c) > 2 {
		refSoftmax(c)
		d := make([]float64, len(c)-2)
		sum := 0.0
		for i := range d {
			d[i] = math.Abs((c[i].p - c[i+1].p) - (c[i+1].p - c[i+2].p))
			sum += d[i]
		}
		keep, cum := len(c), 0.0
		for i := range d {
			cum += d[i] / sum
			if cum > float64(p.TailFreeZ) && i >= 1 {
				keep = i
				break
			}
		}
		c = c[:keep]
	}
	if p.TypicalP < 1 {
		refSoftmax(c)
		h := 0.0
		for _, x := range c {
			h -= x.p * math.Log(x.p)
		}
		order := slices.Clone(c)
		sort.SliceStable(order, func(i, j int) bool {
			return math.Abs(-math.Log(order[i].p)-h) < math.Abs(-math.Log(order[j].p)-h)
		})
		keep, cum := len(order), 0.0
		for i, x := range order {
			cum += x.p
			if cum > float64(p.TypicalP) {
				keep = i + 1
				break
			}
		}
		c = order[:keep]
	}
	if p.TopP < 1 {
		refSoftmax(c)
		cum := 0.0
		for i, x := range c {
			cum += x.p
			if cum >= float64(p.TopP) {
				c = c[:i+1]
				break
			}
		}
	}
	if p.MinP > 0 {
		refSoftmax(c)
		for i := 1; i < len(c); i++ {
			if c[i].p < float64(p.MinP)*c[0].p {
				c = c[:i]
				break
			}
		}
	}
	for i := range c {
		c[i].logit = float64(float32(c[i].logit) / p.Temp)
	}
	refSoftmax(c)
	return c
}

// TestChainMatchesReference compares Distribution with the plain reference over random
// logits, histories and parameters (temperature > 0): same candidates in the same order,
// probabilities within 1e-5.
func TestChainMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for iter := 0; iter < 400; iter++ {
		n := 2 + rng.IntN(400)
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(rng.NormFloat64() * 2)
		}
		p := randomParams(rng)
		if p.Temp <= 0 {
			p.Temp = 0.7
		}
		s, err := New(p)
		require.NoError(t, err)
		for i := rng.IntN(80); i > 0; i-- {
			s.Accept(int32(rng.IntN(n)))
		}
		want := refChain(logits, s.History(), p)
		got := s.Distribution(logits)
		require.Equal(t, len(want), len(got), "iteration %d, %+v", iter, p)
		for i := range want {
			require.Equal(t, want[i].id, got[i].ID, "iteration %d rank %d", iter, i)
			require.InDelta(t, want[i].p, got[i].P, 1e-5)
		}
	}
}
