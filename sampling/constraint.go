package sampling

import (
	"errors"
	"fmt"
)

// Constraint restricts which tokens may be sampled next, such as a grammar
// (*grammar.Constraint of package github.com/ggml-go/ggml/grammar implements it). The
// Sampler calls Allows or Mask before drawing, and Accept from Advance.
type Constraint interface {
	// Allows reports whether tok may come next.
	Allows(tok int32) bool
	// Mask sets allowed[t] for every token t that may come next and clears the others.
	Mask(allowed []bool) error
	// Accept advances the constraint over tok.
	Accept(tok int32) error
	// Reset returns to the start.
	Reset() error
}

// ConstraintMode says how a Sampler applies its Constraint.
type ConstraintMode int

const (
	// ConstraintLazy (the default) samples as if there were no constraint, keeps the token
	// if the constraint allows it, and otherwise filters the whole vocabulary and samples
	// again from the same logits with the constraint applied first (llama.cpp's
	// common_sampler_sample of 2024 does the same). Checking one token costs tens of
	// nanoseconds; the full filter, which is needed only when the model strays, costs
	// microseconds to a few milliseconds per token depending on how many tokens the
	// grammar allows (a draw from 32,000 logits with the JSON grammar, where an
	// unconstrained draw takes about 50 µs: inside a string lazy adds 5–10 µs and eager
	// 1 ms; after "{", where only a quote or whitespace fits and the first draw is
	// usually rejected, lazy takes 90 µs and eager 41 µs). At Temp ≤ 0 it picks the same token as
	// ConstraintEager; at higher
	// temperatures the distribution differs slightly, because the truncation stages
	// (top-k, top-p, ...) saw the unconstrained logits when the first draw is kept.
	ConstraintLazy ConstraintMode = iota
	// ConstraintEager filters the candidates with the constraint after the penalties and
	// before every other stage, as llama.cpp's sampling of January 2024 does, for every
	// token.
	ConstraintEager
)

// ErrNoTokenAllowed is returned (wrapped) when the constraint allows none of the tokens:
// a grammar that cannot continue, or one whose only continuations lie outside the logits.
var ErrNoTokenAllowed = errors.New("sampling: the constraint allows no token")

// SetConstraint makes every later draw honour c (nil removes it), applied as mode says.
// The constraint is advanced by Advance, not by Accept.
func (s *Sampler) SetConstraint(c Constraint, mode ConstraintMode) {
	s.c, s.cmode, s.cerr = c, mode, nil
}

// Constraint returns the constraint set by SetConstraint, or nil.
func (s *Sampler) Constraint() Constraint { return s.c }

// TrySample is Sample with the error it may meet: with a constraint, ErrNoTokenAllowed
// (wrapped) when nothing can come next, or the constraint's own error (a grammar too
// ambiguous to follow, an error of its last Reset). Without a constraint it never fails.
func (s *Sampler) TrySample(logits []float32) (int32, error) {
	if s.c == nil {
		return s.sample(logits, false)
	}
	if s.cerr != nil {
		return -1, s.cerr
	}
	if s.cmode == ConstraintLazy {
		tok, err := s.sample(logits, false)
		if err != nil {
			return -1, err
		}
		if s.c.Allows(tok) {
			return tok, nil
		}
	}
	return s.sample(logits, true)
}

// Advance records tok as generated: it is Accept (the penalties' history) followed by the
// constraint's Accept. Use it for sampled tokens and Accept for prompt tokens.
func (s *Sampler) Advance(tok int32) error {
	s.Accept(tok)
	if s.c == nil {
		return nil
	}
	if err := s.c.Accept(tok); err != nil {
		return fmt.Errorf("sampling: advancing the constraint: %w", err)
	}
	return nil
}

// constrain removes the candidates (still in id order) that the constraint does not allow.
func (s *Sampler) constrain() error {
	n := len(s.cands)
	if cap(s.allowed) < n {
		s.allowed = make([]bool, n)
	}
	allowed := s.allowed[:n]
	if err := s.c.Mask(allowed); err != nil {
		return fmt.Errorf("sampling: applying the constraint: %w", err)
	}
	kept := s.cands[:0]
	for _, c := range s.cands {
		if allowed[c.ID] {
			kept = append(kept, c)
		}
	}
	s.cands = kept
	if len(kept) == 0 {
		return fmt.Errorf("%w among the %d logits (a grammar that is complete needs an end-of-generation token it knows, or the grammar cannot continue here)", ErrNoTokenAllowed, n)
	}
	return nil
}
