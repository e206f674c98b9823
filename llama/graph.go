//go:build cgo

package llama

import (
	"github.com/ggml-go/ggml"
)

// graphInputs are the tensors a step sets before computing.
type graphInputs struct {
	tokens  *ggml.Tensor // I32 [n_tokens]
	pos     *ggml.Tensor // I32 [n_tokens]
	mask    *ggml.Tensor // F32 [n_kv, n_tokens]
	maskSWA *ggml.Tensor // F32 [n_kv, n_tokens]: the sliding-window mask (nil when unused)
	outIDs  *ggml.Tensor // I32 [n_out]: the rows whose outputs the step returns (nil: see step)
}

// list returns the inputs that exist.
func (in graphInputs) list() []*ggml.Tensor {
	l := []*ggml.Tensor{in.tokens, in.pos, in.mask}
	if in.maskSWA != nil {
		l = append(l, in.maskSWA)
	}
	if in.outIDs != nil {
		l = append(l, in.outIDs)
	}
	return l
}

// kvStores are the view nodes through which a graph writes the new K and V into the cache:
// per layer the K view and the result of the copy into it, then the same for V. A graph that
// is reused moves them to the cells of each step (setHead).
type kvStores struct {
	k, v []*ggml.Tensor
}

// setHead points the stores at cell head.
func (s *kvStores) setHead(kv *kvCache, head int) error {
	kOff := kv.typK.RowSize(int64(kv.kWidth)) * uint64(head)
	vOff := kv.typV.RowSize(1) * uint64(head)
	if kv.vRows {
		vOff = kv.typV.RowSize(int64(kv.vWidth)) * uint64(head)
	}
	for _, t := range s.k {
		if err := t.SetViewOffset(kOff); err != nil {
			return err
		}
	}
	for _, t := range s.v {
		if err := t.SetViewOffset(vOff); err != nil {
			return err
		}
	}
	return nil
}

// step describes one evaluation: n tokens stored from cell kvHead, attention over nKV cells.
type step struct {
	nTokens, kvHead, nKV int
	allLogits            bool
	noLogits             bool // an intermediate batch: only the K/V stores matter
	hidden               bool // output the final hidden states of every token instead of logits
	// nOut > 0: the step returns the rows listed by the input outIDs (nOut of them), for
	// batches of several sequences that want some rows only; it overrides allLogits.
	nOut int
}

// ropeParams returns llama.cpp's rope_custom arguments for the model.
func (h HParams) ropeParams() (nOrig int, freqScale, extFactor float32) {
	freqScale = h.RopeFreqScale
	switch h.RopeScaling {
	case RopeScalingNone:
		freqScale = 1
	case RopeScalingYaRN:
		extFactor = 1
	}
	return h.YaRNOrigCtx, freqScale, extFactor
}

// builder holds what an architecture's forward function builds with: the graph context, the
// model, the step and its inputs, and the KV stores it adds. Its methods (builders.go) are
// the shared pieces of every architecture.
type builder struct {
	ctx    *ggml.Context
	g      *ggml.Graph
	m      *Model
	h      *HParams
	kv     *kvCache
	s      step
	n      int64 // tokens in the step
	in     graphInputs
	stores *kvStores
}

// build creates the forward graph of one step in ctx and returns it with its inputs, its
// output (logits [n_vocab, n_tokens], or [n_vocab, 1] for the last token only; with s.hidden
// the final hidden states [n_embd, n_tokens]) and the nodes that store K and V.
func (c *Context) build(ctx *ggml.Context, s step) (*ggml.Graph, graphInputs, *ggml.Tensor, *kvStores) {
	m, kv := c.m, c.kv
	b := &builder{ctx: ctx, m: m, h: &m.HP, kv: kv, s: s, n: int64(s.nTokens), stores: &kvStores{}}
	b.g = ctx.NewGraphCustom(c.graphSize, false)
	nKV := int64(s.nKV)
	b.in.tokens = ctx.NewTensor1D(ggml.TypeI32, b.n).SetName("inp_tokens")
	b.in.pos = ctx.NewTensor1D(ggml.TypeI32, b.n).SetName("inp_pos")
	b.in.mask = ctx.NewTensor2D(ggml.TypeF32, nKV, b.n).SetName("kq_mask")
	if m.HP.SlidingWindow > 0 {
		b.in.maskSWA = ctx.NewTensor2D(ggml.TypeF32, nKV, b.n).SetName("kq_mask_swa")
	}
	if s.nOut > 0 {
		b.in.outIDs = ctx.NewTensor1D(ggml.TypeI32, int64(s.nOut)).SetName("inp_out_ids")
	}
	x := m.arch.forward(b)
	if s.noLogits {
		b.g.BuildForwardExpand(x)
		return b.g, b.in, nil, b.stores
	}
	if s.hidden {
		x.SetName("result_embd")
		b.g.BuildForwardExpand(x)
		return b.g, b.in, x, b.stores
	}
	var logits *ggml.Tensor
	if m.arch.logits != nil {
		logits = m.arch.logits(b, x)
	} else {
		logits = b.logits(x)
	}
	logits.SetName("result_output")
	b.g.BuildForwardExpand(logits)
	return b.g, b.in, logits, b.stores
}
