//go:build cgo

package llama

import (
	"math"

	"github.com/ggml-go/ggml"
)

// graphInputs are the tensors a step sets before computing.
type graphInputs struct {
	tokens *ggml.Tensor // I32 [n_tokens]
	pos    *ggml.Tensor // I32 [n_tokens]
	mask   *ggml.Tensor // F32 [n_kv, n_tokens]
}

// kvStores are the view nodes through which a graph writes the new K and V into the cache:
// per layer the K view and the result of the copy into it, then the same for V. A graph that
// is reused moves them to the cells of each step (setHead).
type kvStores struct {
	k, v []*ggml.Tensor
}

// setHead points the stores at cell head.
func (s *kvStores) setHead(kv *kvCache, head int) error {
	gqa := int64(kv.k[0].NumElements() / int64(kv.nCtx))
	kOff := kv.typ.RowSize(gqa) * uint64(head)
	vOff := kv.typ.RowSize(1) * uint64(head)
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

// build creates the forward graph of one step in ctx (MODELS.md §3) and returns it with its
// inputs, its logits ([n_vocab, n_tokens], or [n_vocab, 1] for the last token only) and the
// nodes that store K and V.
func (c *Context) build(ctx *ggml.Context, s step) (*ggml.Graph, graphInputs, *ggml.Tensor, *kvStores) {
	m, h, kv := c.m, c.m.HP, c.kv
	n := int64(s.nTokens)
	hd, nh, nhkv := int64(h.HeadDim()), int64(h.NHead), int64(h.NHeadKV)
	gqa := int64(h.NEmbdGQA())
	nCtx := int64(kv.nCtx)
	nKV := int64(s.nKV)
	g := ctx.NewGraphCustom(c.graphSize, false)

	var in graphInputs
	in.tokens = ctx.NewTensor1D(ggml.TypeI32, n).SetName("inp_tokens")
	in.pos = ctx.NewTensor1D(ggml.TypeI32, n).SetName("inp_pos")
	in.mask = ctx.NewTensor2D(ggml.TypeF32, nKV, n).SetName("kq_mask")

	nOrig, freqScale, extFactor := h.ropeParams()
	kqScale := float32(1 / math.Sqrt(float64(hd)))
	ksz := kv.typ.RowSize(1)
	stores := &kvStores{}
	x := ctx.GetRows(m.tokEmbd, in.tokens) // [n_embd, n]
	for il := range m.layers {
		l := &m.layers[il]
		cur := ctx.Mul(ctx.RMSNorm(x, h.NormEps), l.attnNorm)
		q := ctx.MulMat(l.wq, cur)
		if l.bq != nil {
			q = ctx.Add(q, l.bq)
		}
		k := ctx.MulMat(l.wk, cur)
		if l.bk != nil {
			k = ctx.Add(k, l.bk)
		}
		v := ctx.MulMat(l.wv, cur)
		if l.bv != nil {
			v = ctx.Add(v, l.bv)
		}
		q = ctx.RopeCustom(ctx.Reshape3D(q, hd, nh, n), in.pos, h.NRot, 0, 0, nOrig,
			h.RopeFreqBase, freqScale, extFactor, 1, 32, 1)
		k = ctx.RopeCustom(ctx.Reshape3D(k, hd, nhkv, n), in.pos, h.NRot, 0, 0, nOrig,
			h.RopeFreqBase, freqScale, extFactor, 1, 32, 1)

		// store K and V of the new tokens in their cells
		kView := ctx.View1D(kv.k[il], n*gqa, kv.typ.RowSize(gqa)*uint64(s.kvHead))
		vView := ctx.View2D(kv.v[il], n, gqa, uint64(nCtx)*ksz, uint64(s.kvHead)*ksz)
		kCpy := ctx.Cpy(k, kView)
		vCpy := ctx.Cpy(ctx.Transpose(ctx.Reshape2D(v, gqa, n)), vView)
		g.BuildForwardExpand(kCpy)
		g.BuildForwardExpand(vCpy)
		stores.k = append(stores.k, kView, kCpy)
		stores.v = append(stores.v, vView, vCpy)

		// attention over the first nKV cells
		qp := ctx.Permute(q, 0, 2, 1, 3) // [hd, n, nh]
		kc := ctx.View3D(kv.k[il], hd, nKV, nhkv, kv.typ.RowSize(gqa), kv.typ.RowSize(hd), 0)
		kq := ctx.SoftMaxExt(ctx.MulMat(kc, qp), in.mask, kqScale) // [nKV, n, nh]
		vc := ctx.View3D(kv.v[il], nKV, hd, nhkv, uint64(nCtx)*ksz, uint64(nCtx)*uint64(hd)*ksz, 0)
		kqv := ctx.MulMat(vc, kq)                                 // [hd, n, nh]
		att := ctx.Cont2D(ctx.Permute(kqv, 0, 2, 1, 3), hd*nh, n) // [n_embd, n]
		att = ctx.MulMat(l.wo, att)
		if l.bo != nil {
			att = ctx.Add(att, l.bo)
		}
		x = ctx.Add(x, att)

		cur = ctx.Mul(ctx.RMSNorm(x, h.NormEps), l.ffnNorm)
		up := ctx.MulMat(l.up, cur)
		gate := ctx.Silu(ctx.MulMat(l.gate, cur))
		x = ctx.Add(x, ctx.MulMat(l.down, ctx.Mul(gate, up)))
	}
	if s.noLogits {
		g.BuildForwardExpand(x)
		return g, in, nil, stores
	}
	if !s.allLogits && n > 1 {
		// only the last token's row: the rows are independent from here on
		x = ctx.View2D(x, int64(h.NEmbd), 1, x.Nb()[1], uint64(n-1)*x.Nb()[1])
	}
	x = ctx.Mul(ctx.RMSNorm(x, h.NormEps), m.outNorm)
	logits := ctx.MulMat(m.output, x).SetName("result_output")
	g.BuildForwardExpand(logits)
	return g, in, logits, stores
}
