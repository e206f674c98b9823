//go:build cgo

package llama

import (
	"errors"
	"fmt"
	"math"

	"github.com/ggml-go/ggml"
)

// ErrContextFull is returned (wrapped) when tokens do not fit in the context's remaining cells.
var ErrContextFull = errors.New("llama: context is full")

// ContextOptions configures a Context. The zero value gives llama.cpp's defaults: 512 cells,
// batches of 512 tokens, an F16 KV cache.
type ContextOptions struct {
	NCtx   int  // number of KV cells = the most tokens a context holds (<= 0: 512)
	NBatch int  // most tokens evaluated in one graph (<= 0: 512; at most NCtx)
	KVF32  bool // store K and V as F32 instead of F16 (llama.cpp's default)
}

// Context is an inference context: a KV cache and the means to evaluate tokens of one
// sequence. Tokens are appended at position Pos(); Reset starts over. A Context must be used
// by one goroutine at a time; Close it before its Model.
type Context struct {
	m         *Model
	kv        *kvCache
	sched     *ggml.Scheduler
	nBatch    int
	graphSize int
	maskBuf   []float32
	posBuf    []int32
	decode    map[int]*decodeGraph // reused one-token graphs by number of cells attended
	noReuse   bool                 // tests: always rebuild through the scheduler
}

// NewContext creates an inference context on the model. It allocates the KV cache and sizes
// the compute buffers for the largest batch.
func (m *Model) NewContext(opt ContextOptions) (*Context, error) {
	nCtx := opt.NCtx
	if nCtx <= 0 {
		nCtx = 512
	}
	nBatch := opt.NBatch
	if nBatch <= 0 {
		nBatch = 512
	}
	nBatch = min(nBatch, nCtx)
	if pe := m.tensor("position_embd.weight"); pe != nil && int64(nCtx) > pe.Ne()[1] {
		return nil, fmt.Errorf("llama: %s models have learned positions for %d tokens; create the Context with NCtx <= %d", m.HP.Arch, pe.Ne()[1], pe.Ne()[1])
	}
	typ := ggml.TypeF16
	if opt.KVF32 || m.arch.encoder { // encoders keep K and V in F32, as llama.cpp (no cache)
		typ = ggml.TypeF32
	}
	kv, err := newKVCache(m, nCtx, typ)
	if err != nil {
		return nil, err
	}
	c := &Context{m: m, kv: kv, nBatch: nBatch, graphSize: 1024 + 64*m.HP.NLayer, decode: map[int]*decodeGraph{}}
	backends := []*ggml.Backend{m.cpu}
	if m.offload != nil {
		backends = []*ggml.Backend{m.offload, m.cpu}
	}
	if c.sched, err = ggml.NewScheduler(backends, nil, c.graphSize); err != nil {
		c.Close()
		return nil, err
	}
	// size the compute buffers with the largest graph: a full batch attending to every cell
	if err := c.measure(step{nTokens: nBatch, kvHead: nCtx - nBatch, nKV: nCtx, allLogits: true, hidden: m.arch.encoder}); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Model returns the context's model.
func (c *Context) Model() *Model { return c.m }

// NCtx returns the number of cells of the context.
func (c *Context) NCtx() int { return c.kv.nCtx }

// NBatch returns the largest number of tokens evaluated in one graph.
func (c *Context) NBatch() int { return c.nBatch }

// Pos returns the number of tokens in the context (the position of the next token).
func (c *Context) Pos() int { return c.kv.nUsed }

// KVBytes returns the size of the KV cache.
func (c *Context) KVBytes() uint64 { return c.kv.bytes() }

// Reset empties the context (the next token is at position 0).
func (c *Context) Reset() { c.kv.clear() }

// Close frees the scheduler and the KV cache; idempotent, returns nil.
func (c *Context) Close() error {
	if c == nil {
		return nil
	}
	for k, d := range c.decode {
		d.close()
		delete(c.decode, k)
	}
	if c.sched != nil {
		c.sched.Close()
		c.sched = nil
	}
	if c.kv != nil {
		c.kv.close()
		c.kv = nil
	}
	return nil
}

// newGraphContext returns a no-alloc context for one graph.
func (c *Context) newGraphContext() (*ggml.Context, error) {
	size := uint64(c.graphSize)*ggml.TensorOverhead() + ggml.GraphOverheadCustom(c.graphSize, false)
	return ggml.NewContext(ggml.Params{MemSize: size, NoAlloc: true})
}

// allocInputs places the inputs with the scheduler's CPU allocator.
func (c *Context) allocInputs(in graphInputs) error {
	a := c.sched.Allocator(c.m.cpu)
	for _, t := range in.list() {
		if err := a.Alloc(t); err != nil {
			return err
		}
	}
	return nil
}

func (c *Context) measure(s step) error {
	gctx, err := c.newGraphContext()
	if err != nil {
		return err
	}
	defer gctx.Close()
	g, in, _, _ := c.build(gctx, s)
	if err := c.allocInputs(in); err != nil {
		return err
	}
	if err := c.sched.InitMeasure(g); err != nil {
		return fmt.Errorf("llama: sizing the compute buffers: %w", err)
	}
	c.sched.Reset()
	return nil
}

// nKVFor returns the number of cells attention reads when cells [0, used) are filled, as
// llama.cpp does: a multiple of 32, at least 32, at most n_ctx.
func nKVFor(used, nCtx int) int {
	return min(nCtx, max(32, (used+31)/32*32))
}

// Eval evaluates tokens at positions Pos() .. Pos()+len(tokens)-1, in batches of at most
// NBatch tokens, and appends them to the context. It returns the logits of the last token
// (n_vocab values), or with allLogits those of every token (len(tokens) rows of n_vocab). It
// returns an error wrapping ErrContextFull when the tokens do not fit (nothing is evaluated),
// and an error for a token id outside the vocabulary.
func (c *Context) Eval(tokens []int32, allLogits bool) ([]float32, error) {
	if c.sched == nil {
		return nil, errors.New("llama: Context used after Close")
	}
	if len(tokens) == 0 {
		return nil, errors.New("llama: Eval needs at least one token")
	}
	if c.m.arch.encoder {
		return nil, fmt.Errorf("llama: %s models are encoders: they make embeddings (Context.Embed), not logits", c.m.HP.Arch)
	}
	if c.kv.nUsed+len(tokens) > c.kv.nCtx {
		return nil, fmt.Errorf("%w: %d tokens at position %d exceed the %d cells (create the Context with a larger NCtx, or Reset it)",
			ErrContextFull, len(tokens), c.kv.nUsed, c.kv.nCtx)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= c.m.HP.NVocab {
			return nil, fmt.Errorf("llama: token %d (at index %d) is outside the vocabulary of %d tokens", t, i, c.m.HP.NVocab)
		}
	}
	var out []float32
	if allLogits {
		out = make([]float32, 0, len(tokens)*c.m.HP.NVocab)
	}
	for start := 0; start < len(tokens); start += c.nBatch {
		batch := tokens[start:min(len(tokens), start+c.nBatch)]
		last := start+len(batch) == len(tokens)
		logits, err := c.evalBatch(batch, allLogits || last, allLogits)
		if err != nil {
			return nil, err
		}
		if allLogits {
			out = append(out, logits...)
		} else if last {
			out = logits
		}
	}
	return out, nil
}

// evalBatch evaluates one batch; want: return logits (all rows or the last).
func (c *Context) evalBatch(tokens []int32, want, all bool) ([]float32, error) {
	if len(tokens) == 1 && c.m.offload == nil && !c.noReuse {
		return c.decodeStep(tokens[0])
	}
	head := c.kv.nUsed
	s := step{nTokens: len(tokens), kvHead: head, nKV: nKVFor(head+len(tokens), c.kv.nCtx), allLogits: all, noLogits: !want}
	gctx, err := c.newGraphContext()
	if err != nil {
		return nil, err
	}
	defer gctx.Close()
	g, in, logits, _ := c.build(gctx, s)
	c.sched.Reset()
	if err := c.allocInputs(in); err != nil {
		return nil, err
	}
	if err := c.setInputs(in, tokens, head, s.nKV); err != nil {
		return nil, err
	}
	if err := c.sched.Compute(g); err != nil {
		return nil, fmt.Errorf("llama: evaluating %d tokens at position %d: %w", len(tokens), head, err)
	}
	c.kv.nUsed = head + len(tokens)
	if !want {
		return nil, nil
	}
	return logits.Float32()
}

// setInputs writes the tokens, their positions (from head) and the causal mask over nKV cells.
func (c *Context) setInputs(in graphInputs, tokens []int32, head, nKV int) error {
	if err := in.tokens.SetInt32(tokens); err != nil {
		return err
	}
	c.posBuf = c.posBuf[:0]
	for i := range tokens {
		c.posBuf = append(c.posBuf, int32(head+i))
	}
	if err := in.pos.SetInt32(c.posBuf); err != nil {
		return err
	}
	if err := in.mask.SetFloat32(c.fillMask(len(tokens), head, nKV, 0)); err != nil {
		return err
	}
	if in.maskSWA != nil {
		return in.maskSWA.SetFloat32(c.fillMask(len(tokens), head, nKV, c.m.HP.SlidingWindow))
	}
	return nil
}

// fillMask returns the attention mask of n tokens at cells head.. over nKV cells (cell j
// holds position j): token i at position head+i sees cells j <= head+i (every filled cell
// j < head+n when the model is not causal) and, with a window w > 0, only those with
// head+i - j < w.
func (c *Context) fillMask(n, head, nKV, window int) []float32 {
	need := nKV * n
	if cap(c.maskBuf) < need {
		c.maskBuf = make([]float32, need)
	}
	mask := c.maskBuf[:need]
	negInf := float32(math.Inf(-1))
	causal := c.m.HP.Causal
	for i := 0; i < n; i++ {
		p := head + i
		row := mask[i*nKV : (i+1)*nKV]
		for j := range row {
			visible := j <= p || (!causal && j < head+n)
			if window > 0 && p-j >= window {
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
