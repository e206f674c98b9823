package sampling

import (
	"fmt"
	"math"
)

// Candidate is one token of the distribution a Sampler draws from.
type Candidate struct {
	ID    int32   // token id
	Logit float32 // logit after the penalties (and, at the end, the temperature)
	P     float32 // probability (the softmax over the remaining candidates)
}

// Sampler draws tokens with llama.cpp's sampling chain. Create it with New; it keeps the
// history of accepted tokens for the penalties, its random generator and reusable buffers
// (Sample allocates nothing once the buffers have grown to the vocabulary size).
type Sampler struct {
	p       Params
	rng     splitMix64
	hist    []int32 // ring buffer of the last RepeatLastN accepted tokens
	histPos int     // next slot to write
	histLen int
	counts  map[int32]int32
	cands   []Candidate
	sorted  bool // cands is ordered by logit, highest first (ties: lower id)
	heap    []Candidate
	shift   []float64 // typical sampling scores
	order   []typicalEntry
	tmp     []Candidate
	keys    []uint64
	c       Constraint
	cmode   ConstraintMode
	cerr    error // from the constraint's last Reset
	allowed []bool
	bias    []tokenBias // SetLogitBias
}

// New returns a Sampler for p. It returns an error that names a parameter out of range and
// the value to use instead.
func New(p Params) (*Sampler, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	s := &Sampler{p: p, counts: make(map[int32]int32)}
	s.hist = make([]int32, p.RepeatLastN)
	s.Reset()
	return s, nil
}

// Params returns the parameters of the Sampler.
func (s *Sampler) Params() Params { return s.p }

// Reset forgets the accepted tokens, restarts the random generator from the seed and resets
// the constraint, if any (its error, if it fails, is returned by the next TrySample).
func (s *Sampler) Reset() {
	s.histPos, s.histLen = 0, 0
	s.rng = splitMix64{state: s.p.Seed}
	if s.c != nil {
		s.cerr = s.c.Reset()
	}
}

// Accept records tok as generated (or as part of the prompt, to penalise it as llama.cpp's
// main program does) for the penalties.
func (s *Sampler) Accept(tok int32) {
	if len(s.hist) == 0 {
		return
	}
	s.hist[s.histPos] = tok
	s.histPos = (s.histPos + 1) % len(s.hist)
	s.histLen = min(s.histLen+1, len(s.hist))
}

// History returns the tokens the penalties look at, oldest first (at most RepeatLastN).
func (s *Sampler) History() []int32 {
	out := make([]int32, 0, s.histLen)
	for i := 0; i < s.histLen; i++ {
		out = append(out, s.hist[(s.histPos-s.histLen+i+len(s.hist))%len(s.hist)])
	}
	return out
}

// Sample returns the next token for logits (one float per vocabulary entry), which it does
// not modify: greedy at Temp ≤ 0, else a draw from Distribution. With a constraint
// (SetConstraint) only allowed tokens are returned, and -1 when none is: use TrySample to
// learn why. It panics with a *UsageError if logits is empty.
func (s *Sampler) Sample(logits []float32) int32 {
	tok, err := s.TrySample(logits)
	if err != nil {
		return -1
	}
	return tok
}

// sample draws a token, applying the constraint first if constrained.
func (s *Sampler) sample(logits []float32, constrained bool) (int32, error) {
	if s.p.Temp <= 0 {
		if !constrained && !s.penalties() && len(s.bias) == 0 {
			return Greedy(logits), nil
		}
		if err := s.loadConstrained(logits, constrained); err != nil {
			return -1, err
		}
		return argmax(s.cands), nil
	}
	c, err := s.distribution(logits, constrained)
	if err != nil {
		return -1, err
	}
	u := s.rng.float64()
	var total float64
	for _, x := range c {
		total += float64(x.P)
	}
	u *= total
	var cum float64
	for _, x := range c {
		cum += float64(x.P)
		if u < cum {
			return x.ID, nil
		}
	}
	return c[len(c)-1].ID, nil
}

// Distribution applies the chain up to the draw (logit biases, penalties, the constraint if one is set,
// top-k, tail-free, typical, top-p, min-p, temperature) and returns the remaining
// candidates with their probabilities, which sum to 1. At Temp ≤ 0 it returns the argmax
// alone with P = 1. It returns nil when a constraint allows no token (TrySample says
// why). The slice is reused by the next call of Sample or Distribution. It panics with a
// *UsageError if logits is empty.
func (s *Sampler) Distribution(logits []float32) []Candidate {
	c, err := s.distribution(logits, s.c != nil)
	if err != nil {
		return nil
	}
	return c
}

func (s *Sampler) distribution(logits []float32, constrained bool) ([]Candidate, error) {
	if err := s.loadConstrained(logits, constrained); err != nil {
		return nil, err
	}
	if s.p.Temp <= 0 {
		id := argmax(s.cands)
		s.cands = append(s.cands[:0], Candidate{ID: id, Logit: logits[id], P: 1})
		return s.cands, nil
	}
	s.topK(s.p.TopK)
	s.tailFree(s.p.TailFreeZ)
	s.typical(s.p.TypicalP)
	s.topP(s.p.TopP)
	s.minP(s.p.MinP)
	s.temperature(s.p.Temp)
	s.softmax()
	return s.cands, nil
}

// load copies logits into the candidates and applies the logit biases and the penalties.
func (s *Sampler) load(logits []float32) {
	if len(logits) == 0 {
		panic(&UsageError{"sampling: Sample needs the logits of at least one token (got an empty slice)"})
	}
	if len(logits) > math.MaxInt32 {
		panic(&UsageError{fmt.Sprintf("sampling: %d logits are more than int32 token ids can address", len(logits))})
	}
	if cap(s.cands) < len(logits) {
		s.cands = make([]Candidate, len(logits))
	}
	s.cands = s.cands[:len(logits)]
	c := s.cands
	for i, l := range logits {
		c[i] = Candidate{ID: int32(i), Logit: l}
	}
	s.sorted = false
	s.applyBias()
	s.penalize()
}

// loadConstrained is load followed, if constrained, by the constraint.
func (s *Sampler) loadConstrained(logits []float32, constrained bool) error {
	s.load(logits)
	if constrained && s.c != nil {
		if s.cerr != nil {
			return s.cerr
		}
		return s.constrain()
	}
	return nil
}

// Greedy returns the index of the largest logit, the lowest one on ties (NaN never wins
// unless all are NaN). It panics with a *UsageError if logits is empty.
func Greedy(logits []float32) int32 {
	if len(logits) == 0 {
		panic(&UsageError{"sampling: Greedy needs the logits of at least one token (got an empty slice)"})
	}
	best := -1
	for i, l := range logits {
		if l != l {
			continue
		}
		if best < 0 || l > logits[best] {
			best = i
		}
	}
	return int32(max(best, 0))
}

func argmax(c []Candidate) int32 {
	best := -1
	for i, x := range c {
		if x.Logit != x.Logit {
			continue
		}
		if best < 0 || x.Logit > c[best].Logit {
			best = i
		}
	}
	if best < 0 {
		return c[0].ID
	}
	return c[best].ID
}

// UsageError is the panic value of a call the program should never make (a programming
// error, not a runtime condition), such as sampling from no logits.
type UsageError struct{ Msg string }

// Error implements the error interface.
func (e *UsageError) Error() string { return e.Msg }
