//go:build cgo

package llama

import (
	"context"
	"errors"
	"slices"
	"time"
)

// stepOutput is a batch row whose logits a slot samples from.
type stepOutput struct {
	s   *slot
	row int
}

// loop is the engine's goroutine: admit, build a batch, evaluate, sample, deliver.
func (e *Engine) loop() {
	defer close(e.done)
	defer e.c.Close()
	defer func() { e.embed.Close() }() // made on first use
	var b Batch
	var outs []stepOutput
	for {
		select {
		case <-e.quit:
			e.stopAll()
			return
		default:
		}
		e.runJobs()
		for _, s := range e.slots {
			if s.req != nil && (s.req.ctx.Err() != nil || s.req.dropped.Load()) {
				e.endCancelled(s)
			}
		}
		e.admit()
		if e.active.Load() == 0 {
			select {
			case <-e.wake:
			case <-e.quit:
			case j := <-e.jobs:
				e.runJob(j)
			}
			continue
		}
		b.Clear()
		outs = outs[:0]
		seqs, promptToks := 0, 0
		for _, s := range e.slots {
			if s.req != nil && len(s.pending) == 0 {
				b.Add(s.next, len(s.tokens), s.seq, true)
				outs = append(outs, stepOutput{s, b.Len() - 1})
				seqs++
			}
		}
		taken := map[*slot]int{}
		for _, s := range e.slots {
			budget := e.opt.BatchSize - b.Len()
			if s.req == nil || len(s.pending) == 0 || budget <= 0 {
				continue
			}
			k := min(budget, len(s.pending))
			for i, t := range s.pending[:k] {
				b.Add(t, len(s.tokens)+i, s.seq, i == len(s.pending)-1)
			}
			if k == len(s.pending) {
				outs = append(outs, stepOutput{s, b.Len() - 1})
			}
			taken[s] = k
			seqs++
			promptToks += k
		}
		start := time.Now()
		err := e.c.Decode(&b)
		if errors.Is(err, ErrContextFull) && e.evictIdle() {
			err = e.c.Decode(&b)
		}
		if err != nil {
			// the tokens of this batch are not in the cache: end every request in it
			for _, s := range e.slots {
				if _, inPrompt := taken[s]; s.req != nil && (inPrompt || len(s.pending) == 0) {
					e.endFailed(s, err)
				}
			}
			continue
		}
		e.steps.Add(1)
		e.lastBatchTokens.Store(uint64(b.Len()))
		e.lastBatchSequences.Store(uint64(seqs))
		if e.opt.OnStep != nil {
			e.opt.OnStep(StepInfo{Tokens: b.Len(), Sequences: seqs, PromptTokens: promptToks, Duration: time.Since(start)})
		}
		// the cells now hold the evaluated tokens
		for _, s := range e.slots {
			if s.req == nil {
				continue
			}
			if k, ok := taken[s]; ok {
				s.tokens = append(s.tokens, s.pending[:k]...)
				s.pending = s.pending[k:]
				if len(s.pending) == 0 {
					s.req.gen.usage.PromptTime = time.Since(s.started)
				}
			} else if len(s.pending) == 0 {
				s.tokens = append(s.tokens, s.next)
			}
		}
		for _, o := range outs {
			e.sample(o.s, e.c.Logits(o.row))
		}
	}
}

// runJobs runs the waiting jobs.
func (e *Engine) runJobs() {
	for {
		select {
		case j := <-e.jobs:
			e.runJob(j)
		default:
			return
		}
	}
}

func (e *Engine) runJob(j *engineJob) {
	if !j.cancelled.Load() {
		j.run()
	}
	close(j.done)
}

// sample draws the next token of slot s from logits and delivers the piece.
func (e *Engine) sample(s *slot, logits []float32) {
	r := s.req
	p, done, err := r.gen.step(logits)
	if err != nil {
		e.endFailed(s, err)
		return
	}
	e.genToks.Add(1)
	if !done && len(s.tokens) >= e.opt.ContextSize {
		p, done = r.gen.finish(p, FinishLength), true
	}
	if done {
		e.finished.Add(1)
		e.release(s) // before the last piece: a caller that got it sees the slot free
		r.push(p, nil, true)
		return
	}
	s.next = p.Tokens[0]
	r.push(p, nil, false)
}

// admit gives queued requests the free slots.
func (e *Engine) admit() {
	for {
		d := e.freeSlot(nil)
		if d == nil {
			return
		}
		var r *engineRequest
		select {
		case r = <-e.queue:
			e.queued.Add(-1)
		default:
			return
		}
		if r.ctx.Err() != nil || r.dropped.Load() {
			e.cancelled.Add(1)
			r.push(r.gen.finish(Piece{}, FinishCancelled), ctxErr(r.ctx), true)
			continue
		}
		d = e.freeSlot(r.prompt)
		e.start(d, r)
	}
}

// freeSlot returns a slot without a request (nil when all are busy): with a prompt, the
// one whose cached tokens share the longest prefix with it, else the one with the fewest.
func (e *Engine) freeSlot(prompt []int32) *slot {
	var best *slot
	bestLCP := -1
	for _, s := range e.slots {
		if s.req != nil {
			continue
		}
		l := commonPrefix(s.tokens, prompt)
		if best == nil || l > bestLCP || l == bestLCP && len(s.tokens) < len(best.tokens) {
			best, bestLCP = s, l
		}
	}
	return best
}

// commonPrefix returns the length of the common prefix of a and b.
func commonPrefix(a, b []int32) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// start puts r in slot d, reusing the cells of the longest prefix of its prompt that a
// sequence in the cache holds (its own first, then any other, shared without copying).
func (e *Engine) start(d *slot, r *engineRequest) {
	src, lcp := d, commonPrefix(d.tokens, r.prompt)
	for _, s := range e.slots {
		if l := commonPrefix(s.tokens, r.prompt); l > lcp {
			src, lcp = s, l
		}
	}
	lcp = min(lcp, len(r.prompt)-1) // the last prompt token is evaluated for its logits
	if src == d {
		e.c.kv.seqRemove(d.seq, int32(lcp), -1)
		d.tokens = d.tokens[:lcp]
	} else {
		e.c.kv.seqRemove(d.seq, 0, -1)
		e.c.kv.seqCopy(src.seq, d.seq, 0, int32(lcp))
		d.tokens = append(d.tokens[:0], src.tokens[:lcp]...)
	}
	d.pending = slices.Clone(r.prompt[lcp:])
	d.req, d.started = r, time.Now()
	r.gen.usage.CachedTokens = lcp
	e.active.Add(1)
	e.promptToks.Add(uint64(len(r.prompt)))
	e.cachedToks.Add(uint64(lcp))
}

// release frees slot s of its request (and forgets the prompt tokens not evaluated); its
// cells stay cached for a later prefix.
func (e *Engine) release(s *slot) {
	s.req = nil
	s.pending = nil
	e.active.Add(-1)
}

// evictIdle removes the cached cells of the slots without a request; it reports whether it
// freed anything.
func (e *Engine) evictIdle() bool {
	freed := false
	for _, s := range e.slots {
		if s.req == nil && len(s.tokens) > 0 {
			e.c.kv.seqRemove(s.seq, 0, -1)
			s.tokens = s.tokens[:0]
			freed = true
		}
	}
	return freed
}

func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}

// endCancelled ends the request of s as cancelled (its context is done or its reader left).
func (e *Engine) endCancelled(s *slot) {
	r := s.req
	e.cancelled.Add(1)
	e.release(s)
	r.push(r.gen.finish(Piece{}, FinishCancelled), ctxErr(r.ctx), true)
}

// endFailed ends the request of s with err.
func (e *Engine) endFailed(s *slot, err error) {
	r := s.req
	e.failed.Add(1)
	e.release(s)
	r.push(Piece{}, err, true)
}

// stopAll ends every active and queued request with ErrEngineClosed.
func (e *Engine) stopAll() {
	for _, s := range e.slots {
		if r := s.req; r != nil {
			e.cancelled.Add(1)
			e.release(s)
			r.push(r.gen.finish(Piece{}, FinishCancelled), ErrEngineClosed, true)
		}
	}
	for {
		select {
		case j := <-e.jobs:
			j.cancelled.Store(true)
			close(j.done)
		case r := <-e.queue:
			e.queued.Add(-1)
			e.cancelled.Add(1)
			r.push(r.gen.finish(Piece{}, FinishCancelled), ErrEngineClosed, true)
		default:
			return
		}
	}
}
