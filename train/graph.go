//go:build cgo

package train

import (
	"math"

	"github.com/ggml-go/ggml"
)

// forward is the training graph's forward pass over a batch of sequences.
type forward struct {
	tokens  *ggml.Tensor   // I32 [n_ctx·batch]: the input tokens, sequence after sequence
	pos     *ggml.Tensor   // I32 [n_ctx]: positions 0..n_ctx-1
	mask    *ggml.Tensor   // F32 [n_ctx keys, n_ctx queries]: 0, or -inf for a key after the query
	targets *ggml.Tensor   // F32 [n_vocab, n_ctx·batch]: one-hot next tokens
	logits  *ggml.Tensor   // F32 [n_vocab, n_ctx·batch]
	loss    *ggml.Tensor   // F32 scalar: mean cross-entropy
	layerIn []*ggml.Tensor // the input of every block (the checkpoints)
}

// buildForward builds in ctx the forward pass of the model over batch sequences of n_ctx
// tokens, computing what the llama runner computes (doc/llama-conventions.md §3) without a KV cache: every
// sequence attends causally to itself from position 0.
func buildForward(ctx *ggml.Context, m *Model, batch int) *forward {
	c := m.cfg
	T, B := int64(c.NCtx), int64(batch)
	e, hd, nh := int64(c.NEmbd), int64(c.NEmbd/c.NHead), int64(c.NHead)
	f := &forward{}
	f.tokens = ctx.NewTensor1D(ggml.TypeI32, T*B).SetName("inp_tokens")
	f.pos = ctx.NewTensor1D(ggml.TypeI32, T).SetName("inp_pos")
	f.mask = ctx.NewTensor2D(ggml.TypeF32, T, T).SetName("kq_mask")
	f.targets = ctx.NewTensor2D(ggml.TypeF32, int64(c.NVocab), T*B).SetName("targets")
	scale := float32(1 / math.Sqrt(float64(hd)))

	rope := func(t *ggml.Tensor) *ggml.Tensor { // [e, T·B] -> [hd, nh, T, B], rotated (mode 0)
		return ctx.RopeCustom(ctx.Reshape4D(t, hd, nh, T, B), f.pos, int(hd), 0, 0, c.NCtx,
			c.RopeFreqBase, 1, 0, 1, 32, 1)
	}
	x := ctx.GetRows(m.tokEmbd, f.tokens) // [e, T·B]
	for il := range m.layers {
		l := &m.layers[il]
		f.layerIn = append(f.layerIn, x)
		cur := ctx.Mul(ctx.RMSNorm(x, c.NormEps), l.attnNorm)
		q := ctx.Permute(rope(ctx.MulMat(l.wq, cur)), 0, 2, 1, 3) // [hd, T, nh, B]
		k := ctx.Permute(rope(ctx.MulMat(l.wk, cur)), 0, 2, 1, 3) // [hd, T, nh, B]
		// V transposed per head: [T, hd, nh, B]
		v := ctx.Cont(ctx.Permute(ctx.Reshape4D(ctx.MulMat(l.wv, cur), hd, nh, T, B), 1, 2, 0, 3))
		kq := ctx.MulMat(k, q) // [T keys, T queries, nh, B]
		// softmax(scale·kq + causal mask) in one op (and one op in the backward pass) instead of
		// SCALE, DIAG_MASK_INF and SOFT_MAX over the [T, T, nh, B] scores
		kq = ctx.SoftMaxExt(kq, f.mask, scale)
		kqv := ctx.MulMat(v, kq)                                // [hd, T, nh, B]
		att := ctx.Cont2D(ctx.Permute(kqv, 0, 2, 1, 3), e, T*B) // [e, T·B]
		x = ctx.Add(x, ctx.MulMat(l.wo, att))
		cur = ctx.Mul(ctx.RMSNorm(x, c.NormEps), l.ffnNorm)
		ff := ctx.Mul(ctx.Silu(ctx.MulMat(l.gate, cur)), ctx.MulMat(l.up, cur))
		x = ctx.Add(x, ctx.MulMat(l.down, ff))
	}
	x = ctx.Mul(ctx.RMSNorm(x, c.NormEps), m.outNorm)
	f.logits = ctx.MulMat(m.output, x).SetName("logits")
	f.loss = ctx.CrossEntropyLoss(f.logits, f.targets).SetName("loss")
	return f
}
