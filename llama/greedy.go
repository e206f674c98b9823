//go:build cgo

package llama

import "fmt"

// GreedyRun is the outcome of RunGreedy.
type GreedyRun struct {
	Generated []int32     // the chosen tokens
	Rows      [][]float32 // logits: one row per prompt token, then one per generated token
}

// RunGreedy evaluates prompt in one batch with the logits of every position, then makes n
// greedy steps: each takes the argmax of the last logits (lowest id on ties; no penalties, no
// stop at EOS) and evaluates it alone. This is how the reference outputs of shared/models were
// made. The prompt must fit in one batch and, with the n steps, in the context.
func (c *Context) RunGreedy(prompt []int32, n int) (*GreedyRun, error) {
	if err := c.checkOpen("Context.RunGreedy"); err != nil {
		return nil, err
	}
	if len(prompt) > c.nBatch {
		return nil, fmt.Errorf("llama: the prompt has %d tokens, more than one batch of %d", len(prompt), c.nBatch)
	}
	nv := c.m.HP.NVocab
	logits, err := c.Eval(prompt, true)
	if err != nil {
		return nil, err
	}
	run := &GreedyRun{}
	for i := range prompt {
		run.Rows = append(run.Rows, logits[i*nv:(i+1)*nv])
	}
	last := run.Rows[len(run.Rows)-1]
	for j := 0; j < n; j++ {
		tok := argmax(last)
		run.Generated = append(run.Generated, tok)
		if last, err = c.Eval([]int32{tok}, false); err != nil {
			return nil, err
		}
		run.Rows = append(run.Rows, last)
	}
	return run, nil
}

// argmax returns the index of the largest value, the lowest index on ties.
func argmax(v []float32) int32 {
	best := 0
	for i := 1; i < len(v); i++ {
		if v[i] > v[best] {
			best = i
		}
	}
	return int32(best)
}
