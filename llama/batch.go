//go:build cgo

package llama

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Batch is a set of tokens to evaluate together, from one or several sequences: token i is
// Tokens[i] at position Pos[i] of sequence Seq[i], and Decode keeps its logits when
// Output[i]. A decode step of n sequences is a Batch of n tokens, one per sequence, each an
// output; a prompt is a run of tokens of one sequence at consecutive positions with the last
// one an output. Use Add to fill it and Clear to reuse it.
type Batch struct {
	Tokens []int32
	Pos    []int32
	Seq    []int
	Output []bool
}

// Add appends a token at position pos of sequence seq; output asks Decode for its logits.
func (b *Batch) Add(token int32, pos int, seq int, output bool) {
	b.Tokens = append(b.Tokens, token)
	b.Pos = append(b.Pos, int32(pos))
	b.Seq = append(b.Seq, seq)
	b.Output = append(b.Output, output)
}

// Clear empties the batch, keeping its memory.
func (b *Batch) Clear() {
	b.Tokens, b.Pos, b.Seq, b.Output = b.Tokens[:0], b.Pos[:0], b.Seq[:0], b.Output[:0]
}

// Len returns the number of tokens in the batch.
func (b *Batch) Len() int { return len(b.Tokens) }

// batchOutput holds the logits of the last Decode.
type batchOutput struct {
	logits []float32 // one row of n_vocab per output token
	row    []int     // per batch index: its row, or -1
}

// ubatch is the part of a batch evaluated in one graph.
type ubatch struct {
	tokens []int32
	pos    []int32
	seqs   []uint64 // the sequence set of each token
	out    []int32  // the rows (indexes into tokens) whose outputs are returned
	hidden bool     // return the final hidden states instead of logits
}

// validate checks a batch before anything is evaluated.
func (c *Context) validate(b *Batch) error {
	n := len(b.Tokens)
	if n == 0 {
		return errors.New("llama: Decode needs at least one token")
	}
	if len(b.Pos) != n || len(b.Seq) != n || len(b.Output) != n {
		return fmt.Errorf("llama: the Batch has %d tokens but %d positions, %d sequence ids and %d output flags (fill it with Add)", n, len(b.Pos), len(b.Seq), len(b.Output))
	}
	if c.m.arch.encoder {
		return fmt.Errorf("llama: %s models are encoders: they make embeddings (Context.Embed), not logits", c.m.HP.Arch)
	}
	for i, t := range b.Tokens {
		if t < 0 || int(t) >= c.m.HP.NVocab {
			return fmt.Errorf("llama: token %d (at index %d) is outside the vocabulary of %d tokens", t, i, c.m.HP.NVocab)
		}
		if s := b.Seq[i]; s < 0 || s >= MaxSequences {
			return fmt.Errorf("llama: sequence id %d (at index %d) is outside 0..%d", s, i, MaxSequences-1)
		}
		if b.Pos[i] < 0 {
			return fmt.Errorf("llama: position %d (at index %d) is negative", b.Pos[i], i)
		}
	}
	if n > c.kv.free() {
		return fmt.Errorf("%w: %d tokens exceed the %d free cells of %d (create the Context with a larger NCtx, or remove sequences)",
			ErrContextFull, n, c.kv.free(), c.kv.nCtx)
	}
	return nil
}

// Decode evaluates the tokens of b, in graphs of at most NBatch tokens, and stores them in
// the KV cache of their sequences; Logits then returns the logits of the tokens marked as
// outputs. A token attends to the cells of its sequence at positions up to its own (all of
// them for non-causal models), including the tokens before it in the same batch. Each graph
// stores its tokens in a run of free cells: Decode returns an error wrapping
// ErrContextFull when there are not enough (the graphs already evaluated stay in the cache;
// a graph that finds no run of free cells long enough is split into smaller ones). The
// weights are read once per graph for all its tokens, so a step of n sequences costs far
// less than n steps.
func (c *Context) Decode(b *Batch) error {
	if err := c.checkOpen("Context.Decode"); err != nil {
		return err
	}
	if err := c.validate(b); err != nil {
		return err
	}
	n := len(b.Tokens)
	c.out.row = slices.Grow(c.out.row[:0], n)[:n]
	c.out.logits = c.out.logits[:0]
	nOut := 0
	for i := range b.Tokens {
		if b.Output[i] {
			c.out.row[i] = nOut
			nOut++
		} else {
			c.out.row[i] = -1
		}
	}
	if nOut > 0 {
		c.out.logits = slices.Grow(c.out.logits, nOut*c.m.HP.NVocab)
	}
	seqs := make([]uint64, n)
	for i, s := range b.Seq {
		seqs[i] = seqMask(s)
	}
	for start := 0; start < n; start += c.nBatch {
		end := min(n, start+c.nBatch)
		ub := ubatch{tokens: b.Tokens[start:end], pos: b.Pos[start:end], seqs: seqs[start:end]}
		for i := start; i < end; i++ {
			if b.Output[i] {
				ub.out = append(ub.out, int32(i-start))
			}
		}
		rows, err := c.run(ub)
		if err != nil {
			c.out.row = c.out.row[:0]
			return err
		}
		c.out.logits = append(c.out.logits, rows...)
	}
	return nil
}

// Logits returns the logits (n_vocab values) of token i of the last Decode, or nil when it
// was not an output. The slice is overwritten by the next Decode or Eval.
func (c *Context) Logits(i int) []float32 {
	if i < 0 || i >= len(c.out.row) || c.out.row[i] < 0 {
		return nil
	}
	nv := c.m.HP.NVocab
	r := c.out.row[i]
	return c.out.logits[r*nv : (r+1)*nv]
}

// Eval evaluates tokens of sequence 0 at positions Pos() .. Pos()+len(tokens)-1, in batches
// of at most NBatch tokens. It returns the logits of the last token (n_vocab values), or with
// allLogits those of every token (len(tokens) rows of n_vocab). It returns an error wrapping
// ErrContextFull when the tokens do not fit (nothing is evaluated), and an error for a token
// id outside the vocabulary.
func (c *Context) Eval(tokens []int32, allLogits bool) ([]float32, error) {
	if err := c.checkOpen("Context.Eval"); err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, errors.New("llama: Eval needs at least one token")
	}
	pos := c.Pos()
	if c.kv.used+len(tokens) > c.kv.nCtx {
		return nil, fmt.Errorf("%w: %d tokens at position %d exceed the %d cells (create the Context with a larger NCtx, or Reset it)",
			ErrContextFull, len(tokens), pos, c.kv.nCtx)
	}
	var b Batch
	for i, t := range tokens {
		b.Add(t, pos+i, 0, allLogits || i == len(tokens)-1)
	}
	if err := c.Decode(&b); err != nil {
		return nil, err
	}
	if allLogits {
		return slices.Clone(c.out.logits), nil
	}
	return slices.Clone(c.Logits(len(tokens) - 1)), nil
}

// run evaluates one ubatch: it places its tokens in a run of free cells, builds (or reuses)
// the graph, computes it and returns the outputs of the rows ub.out (logits, or with
// ub.hidden the hidden states of every token), valid until the next evaluation.
func (c *Context) run(ub ubatch) ([]float32, error) {
	if err := c.m.checkFiles("evaluating"); err != nil {
		return nil, err
	}
	n := len(ub.tokens)
	head := c.kv.findSlot(n)
	if head < 0 && n > 1 && n <= c.kv.free() && !ub.hidden {
		// no run of n free cells: evaluate the halves where they fit (a token attends to the
		// cells of its sequence wherever they are)
		h := n / 2
		first, second := ubatch{tokens: ub.tokens[:h], pos: ub.pos[:h], seqs: ub.seqs[:h]},
			ubatch{tokens: ub.tokens[h:], pos: ub.pos[h:], seqs: ub.seqs[h:]}
		for _, o := range ub.out {
			if int(o) < h {
				first.out = append(first.out, o)
			} else {
				second.out = append(second.out, o-int32(h))
			}
		}
		a, err := c.run(first)
		if err != nil {
			return nil, err
		}
		a = slices.Clone(a) // the next run may reuse its memory (decodeStep)
		b, err := c.run(second)
		if err != nil {
			return nil, err
		}
		return append(a, b...), nil
	}
	if head < 0 {
		return nil, fmt.Errorf("%w: no run of %d free cells among the %d free of %d (remove sequences, or create the Context with a larger NCtx)",
			ErrContextFull, n, c.kv.free(), c.kv.nCtx)
	}
	c.kv.place(head, ub.pos, ub.seqs)
	out, err := c.compute(ub, head)
	if err != nil {
		c.kv.unplace(head, n)
		return nil, err
	}
	return out, nil
}

// compute evaluates ub stored from cell head (already placed).
func (c *Context) compute(ub ubatch, head int) ([]float32, error) {
	n := len(ub.tokens)
	s := step{nTokens: n, kvHead: head, nKV: nKVFor(c.kv.extent(), c.kv.nCtx), hidden: ub.hidden}
	switch {
	case ub.hidden:
	case len(ub.out) == 0:
		s.noLogits = true
	case len(ub.out) == n:
		s.allLogits = true
	case len(ub.out) == 1 && int(ub.out[0]) == n-1:
		// the last row only: a view, no input
	default:
		s.nOut = len(ub.out)
	}
	if s.allLogits && len(c.m.offloads) == 0 && !c.noReuse && n <= maxReusedTokens {
		return c.decodeStep(ub, head, s.nKV)
	}
	gctx, err := c.newGraphContext()
	if err != nil {
		return nil, err
	}
	defer gctx.Close()
	g, in, out, _ := c.build(gctx, s)
	c.sched.Reset()
	if err := c.allocInputs(in); err != nil {
		return nil, err
	}
	if err := c.setInputs(in, ub, s.nKV); err != nil {
		return nil, err
	}
	if err := c.sched.Compute(g); err != nil {
		return nil, fmt.Errorf("llama: evaluating %d tokens at cell %d: %w", n, head, err)
	}
	if out == nil {
		return nil, nil
	}
	return out.Float32()
}

// setInputs writes the tokens, their positions, the masks over nKV cells and the output
// rows of ub.
func (c *Context) setInputs(in graphInputs, ub ubatch, nKV int) error {
	if err := in.tokens.SetInt32(ub.tokens); err != nil {
		return err
	}
	if err := in.pos.SetInt32(ub.pos); err != nil {
		return err
	}
	if err := in.mask.SetFloat32(c.fillMask(ub, nKV, 0)); err != nil {
		return err
	}
	if in.maskSWA != nil {
		if err := in.maskSWA.SetFloat32(c.fillMask(ub, nKV, c.m.HP.SlidingWindow)); err != nil {
			return err
		}
	}
	if in.outIDs != nil {
		return in.outIDs.SetInt32(ub.out)
	}
	return nil
}

// fillMask returns the attention mask of the tokens of ub over nKV cells: token i (of the
// lowest sequence of its set, at position p) sees cell j when the cell belongs to that
// sequence and holds a position <= p (any position when the model is not causal) and, with a
// window w > 0, p - pos(j) < w.
func (c *Context) fillMask(ub ubatch, nKV, window int) []float32 {
	n := len(ub.tokens)
	need := nKV * n
	if cap(c.maskBuf) < need {
		c.maskBuf = make([]float32, need)
	}
	mask := c.maskBuf[:need]
	negInf := float32(math.Inf(-1))
	causal := c.m.HP.Causal
	cells := c.kv.cells[:nKV]
	for i := 0; i < n; i++ {
		p := ub.pos[i]
		seq := ub.seqs[i] & -ub.seqs[i] // the lowest sequence of the set
		row := mask[i*nKV : (i+1)*nKV]
		for j, cell := range cells {
			visible := cell.seqs&seq != 0 && (cell.pos <= p || !causal)
			if window > 0 && p-cell.pos >= int32(window) {
				visible = false
			}
			if visible {
				row[j] = 0
			} else {
				row[j] = negInf
			}
		}
	}
	return mask
}

// checkSeq panics with a *ggml.Error-like usage error for a sequence id out of range.
func checkSeq(op string, seq int, allowAll bool) error {
	if seq >= MaxSequences || seq < 0 && !(allowAll && seq == -1) {
		return fmt.Errorf("llama: %s: sequence id %d is outside 0..%d", op, seq, MaxSequences-1)
	}
	return nil
}

// SeqRemove removes sequence seq (every sequence for seq = -1) from the cells at positions
// [p0, p1) (p1 < 0: to the end); a cell that no sequence holds any more is free again.
func (c *Context) SeqRemove(seq, p0, p1 int) error {
	if err := c.checkOpen("Context.SeqRemove"); err != nil {
		return err
	}
	if err := checkSeq("SeqRemove", seq, true); err != nil {
		return err
	}
	c.kv.seqRemove(seq, int32(max(p0, 0)), int32(p1))
	return nil
}

// SeqCopy makes the cells of sequence src at positions [p0, p1) (p1 < 0: to the end) part of
// sequence dst as well: a shared prefix (a system prompt) evaluated once serves both
// sequences without copying data. Remove dst's own cells at those positions first.
func (c *Context) SeqCopy(src, dst, p0, p1 int) error {
	if err := c.checkOpen("Context.SeqCopy"); err != nil {
		return err
	}
	if err := checkSeq("SeqCopy", src, false); err != nil {
		return err
	}
	if err := checkSeq("SeqCopy", dst, false); err != nil {
		return err
	}
	if src != dst {
		c.kv.seqCopy(src, dst, int32(max(p0, 0)), int32(p1))
	}
	return nil
}

// SeqKeep removes every sequence but seq from the cache.
func (c *Context) SeqKeep(seq int) error {
	if err := c.checkOpen("Context.SeqKeep"); err != nil {
		return err
	}
	if err := checkSeq("SeqKeep", seq, false); err != nil {
		return err
	}
	c.kv.seqKeep(seq)
	return nil
}

// SeqPosMax returns the largest position of sequence seq in the cache, or -1 when it has
// none: the next token of the sequence goes at SeqPosMax(seq)+1.
func (c *Context) SeqPosMax(seq int) int {
	if checkSeq("SeqPosMax", seq, false) != nil {
		return -1
	}
	return int(c.kv.seqPosMax(seq))
}

// SeqShift adds delta to the positions of sequence seq at [p0, p1) (p1 < 0: to the end),
// rotating the cached keys by the same amount for RoPE models, as llama.cpp's
// llama_kv_cache_seq_add does (cells whose position would become negative are removed). A
// typical use drops the oldest tokens of a long sequence: SeqRemove(seq, keep, keep+n) then
// SeqShift(seq, keep+n, -1, -n). The cells must not be shared with another sequence. With
// YaRN scaling or an attention factor other than 1 the rotation is not exactly that of the
// new positions.
func (c *Context) SeqShift(seq, p0, p1, delta int) error {
	if err := checkSeq("SeqShift", seq, false); err != nil {
		return err
	}
	if err := c.checkOpen("Context.SeqShift"); err != nil {
		return err
	}
	deltas, shared := c.kv.seqShift(seq, int32(max(p0, 0)), int32(p1), int32(delta))
	if shared {
		return fmt.Errorf("llama: SeqShift: cells of sequence %d in [%d, %d) are shared with another sequence (remove the other sequence, or copy after shifting)", seq, p0, p1)
	}
	if deltas == nil || c.m.HP.RopeType == RopeNone {
		return nil
	}
	return c.shiftKeys(deltas)
}
