//go:build cgo

package main

import "errors"

// greedySampler takes the argmax of the logits after the repetition penalty (llama.cpp: a
// positive logit is divided by the penalty, another multiplied), lowest id on ties.
type greedySampler struct {
	p    sampleParams
	last []int32
}

// newSampler returns the sampler of p.
func newSampler(p sampleParams) (tokenSampler, error) {
	if p.temp > 0 {
		return nil, errors.New("sampling at a temperature above 0 needs the sampling package, which this build does not have yet; use --temp 0")
	}
	return &greedySampler{p: p}, nil
}

func (g *greedySampler) Accept(tok int32) {
	g.last = append(g.last, tok)
	if n := g.p.repeatLastN; n > 0 && len(g.last) > n {
		g.last = g.last[len(g.last)-n:]
	}
}

func (g *greedySampler) Sample(logits []float32) int32 {
	pen := func(i int32) float32 { return logits[i] }
	if g.p.repeatPenalty != 1 && g.p.repeatLastN != 0 {
		seen := map[int32]bool{}
		for _, t := range g.last {
			seen[t] = true
		}
		pen = func(i int32) float32 {
			v := logits[i]
			if seen[i] {
				if v > 0 {
					v /= g.p.repeatPenalty
				} else {
					v *= g.p.repeatPenalty
				}
			}
			return v
		}
	}
	best := int32(0)
	bv := pen(0)
	for i := int32(1); i < int32(len(logits)); i++ {
		if v := pen(i); v > bv {
			best, bv = i, v
		}
	}
	return best
}
