package sampling

import (
	"math"
	"slices"
)

// MaxTopLogprobs is the most alternatives TokenLogprobs reports (OpenAI's limit for chat
// top_logprobs).
const MaxTopLogprobs = 20

// TokenLogprob is the log-probability of one token.
type TokenLogprob struct {
	ID      int32
	Logprob float32
}

// Logprobs is the log-probability of a chosen token and of the most likely alternatives,
// as TokenLogprobs computes them.
type Logprobs struct {
	TokenLogprob
	Top []TokenLogprob // most likely first (ties: lower id); at most the n asked for
}

// TokenLogprobs returns the log-softmax of logits at token tok and the top entries with the
// largest log-probabilities (top is clamped to [0, MaxTopLogprobs] and to the vocabulary).
// These are the model's own probabilities: computed from the raw logits, before logit
// biases, penalties, constraints or temperature. The sums are in float64 (log-sum-exp with
// the maximum subtracted); NaN logits count as -Inf. It costs one pass over the logits, plus
// a small selection when top > 0; a generation computes it only when asked
// (llama.Request.Logprobs). It panics with a *UsageError if logits is empty or tok is outside
// it.
func TokenLogprobs(logits []float32, tok int32, top int) Logprobs {
	if len(logits) == 0 {
		panic(&UsageError{"sampling: TokenLogprobs needs the logits of at least one token (got an empty slice)"})
	}
	if tok < 0 || int(tok) >= len(logits) {
		panic(&UsageError{"sampling: TokenLogprobs: the token is outside the logits"})
	}
	lse := logSumExp(logits)
	lp := func(id int32) float32 {
		l := float64(logits[id])
		if l != l {
			return float32(math.Inf(-1))
		}
		return float32(l - lse)
	}
	out := Logprobs{TokenLogprob: TokenLogprob{tok, lp(tok)}}
	top = min(max(top, 0), MaxTopLogprobs, len(logits))
	if top == 0 {
		return out
	}
	// keep the best top ids in a small sorted slice (insertion: top ≤ 20)
	best := make([]int32, 0, top+1)
	worse := func(a, b int32) bool { // a ranks below b
		la, lb := logits[a], logits[b]
		if la != la {
			la = float32(math.Inf(-1))
		}
		if lb != lb {
			lb = float32(math.Inf(-1))
		}
		if la != lb {
			return la < lb
		}
		return a > b
	}
	for i, l := range logits {
		id := int32(i)
		if len(best) == top {
			if floor := logits[best[top-1]]; l < floor || l != l || !worse(best[top-1], id) {
				continue // the common case: below the current top
			}
		}
		at, _ := slices.BinarySearchFunc(best, id, func(e, t int32) int {
			if worse(t, e) {
				return -1
			}
			return 1
		})
		best = slices.Insert(best, at, id)
		if len(best) > top {
			best = best[:top]
		}
	}
	out.Top = make([]TokenLogprob, len(best))
	for i, id := range best {
		out.Top[i] = TokenLogprob{id, lp(id)}
	}
	return out
}

// logSumExp returns log(Σ exp(logits)) in float64, ignoring NaN.
func logSumExp(logits []float32) float64 {
	m := math.Inf(-1)
	for _, l := range logits {
		if l == l && float64(l) > m {
			m = float64(l)
		}
	}
	if math.IsInf(m, 0) {
		return m
	}
	var sum float64
	for _, l := range logits {
		if l == l {
			sum += math.Exp(float64(l) - m)
		}
	}
	return m + math.Log(sum)
}
