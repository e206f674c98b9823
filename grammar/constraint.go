package grammar

import (
	"errors"
	"fmt"
)

// ErrFinished is returned by Constraint.Accept after an end-of-generation token was
// accepted: the grammar allows nothing more.
var ErrFinished = errors.New("grammar: generation already ended (an end-of-generation token was accepted); Reset for a new one")

// Constraint restricts a token sequence to a grammar: a Matcher over token pieces from a
// Vocab. It satisfies sampling.Constraint. It is not safe for concurrent use; make one per
// sequence (they can share the Grammar and the Vocab).
type Constraint struct {
	m        *Matcher
	v        *Vocab
	finished bool
	// mask scratch
	frames []int32
	err    error
	allow  []bool
}

// NewConstraint returns a Constraint at the start of g for tokens of v.
func NewConstraint(g *Grammar, v *Vocab, opts Options) (*Constraint, error) {
	m, err := g.NewMatcher(opts)
	if err != nil {
		return nil, err
	}
	return &Constraint{m: m, v: v}, nil
}

// Matcher returns the underlying matcher (for its state; accepting bytes through it
// directly is allowed, for example a forced prefix).
func (c *Constraint) Matcher() *Matcher { return c.m }

// Reset goes back to the start of the grammar.
func (c *Constraint) Reset() error {
	c.finished = false
	return c.m.Reset()
}

// Complete reports whether the tokens so far form a complete sentence of the grammar.
func (c *Constraint) Complete() bool { return c.finished || c.m.Complete() }

// Allows reports whether tok may come next: an end-of-generation token when the grammar is
// complete; any other token when its bytes (non-empty) can continue a parse, a partial UTF-8
// character at its end included.
func (c *Constraint) Allows(tok int32) bool {
	if c.finished || tok < 0 || int(tok) >= c.v.n {
		return false
	}
	if c.v.eog[tok] {
		return c.m.Complete()
	}
	p := c.v.pieces[tok]
	if len(p) == 0 {
		return false
	}
	m := c.m
	cur := m.stacks
	u := m.utf
	var bufs [2][]int32
	bufs[0], bufs[1] = c.frames[:0], nil
	for i, b := range p {
		next := bufs[i&1][:0]
		var ok bool
		next, u, ok = m.stepByte(next, cur, u, b)
		bufs[i&1] = next
		if !ok || len(next) == 0 || m.a.err != nil {
			c.frames = bufs[0]
			return false
		}
		cur = next
	}
	c.frames = bufs[0]
	return true
}

// Accept advances over tok, which must be allowed. Accepting an end-of-generation token
// ends the sequence.
func (c *Constraint) Accept(tok int32) error {
	if c.finished {
		return ErrFinished
	}
	if tok < 0 || int(tok) >= c.v.n {
		return fmt.Errorf("grammar: token %d is outside the vocabulary of %d tokens", tok, c.v.n)
	}
	if c.v.eog[tok] {
		if !c.m.Complete() {
			return fmt.Errorf("%w: end-of-generation token %d before the grammar is complete", ErrRejected, tok)
		}
		c.finished = true
		return nil
	}
	p := c.v.pieces[tok]
	if len(p) == 0 {
		return fmt.Errorf("%w: token %d has no text (a control token)", ErrRejected, tok)
	}
	if err := c.m.AcceptBytes(p); err != nil {
		return fmt.Errorf("token %d: %w", tok, err)
	}
	return nil
}
