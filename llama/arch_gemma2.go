//go:build cgo

package llama

import "math"

// gemma2: Gemma 2. Embeddings scaled by sqrt(n_embd); RMSNorm before and after attention and
// the FFN (post_attention_norm, post_ffw_norm); NeoX RoPE; queries scaled by
// 1/sqrt(key_length) (1/sqrt(n_embd/n_head) for the 46-layer 27B, as llama.cpp does);
// attention logits soft-capped; sliding-window attention on the even layers; GELU-gated FFN;
// tied output with final logit soft-capping.
func init() {
	register(&architecture{
		name:     "gemma2",
		ropeType: RopeNeoX,
		tensors:  gemma2Tensors,
		forward:  gemma2Forward,
		sizes:    map[int]string{26: "2B", 42: "9B", 46: "27B"},
	})
}

func gemma2Tensors(h HParams) []spec {
	e, v := int64(h.NEmbd), int64(h.NVocab)
	qw, kw, vw, ow := attnWidths(h)
	ff := int64(h.NFF)
	var s specList
	s.mat("token_embd.weight", e, v)
	s.vec("output_norm.weight", e)
	for i := 0; i < h.NLayer; i++ {
		s.vec(blk(i, "attn_norm.weight"), e)
		s.mat(blk(i, "attn_q.weight"), e, qw)
		s.mat(blk(i, "attn_k.weight"), e, kw)
		s.mat(blk(i, "attn_v.weight"), e, vw)
		s.mat(blk(i, "attn_output.weight"), ow, e)
		s.vec(blk(i, "post_attention_norm.weight"), e)
		s.vec(blk(i, "ffn_norm.weight"), e)
		s.mat(blk(i, "ffn_gate.weight"), e, ff)
		s.mat(blk(i, "ffn_up.weight"), e, ff)
		s.mat(blk(i, "ffn_down.weight"), ff, e)
		s.vec(blk(i, "post_ffw_norm.weight"), e)
	}
	return s
}

func gemma2Forward(b *builder) *tensor {
	m, ctx, h := b.m, b.ctx, b.h
	qScale := float32(1 / math.Sqrt(float64(h.HeadDim())))
	if h.NLayer == 46 {
		qScale = float32(1 / math.Sqrt(float64(h.NEmbd/h.NHead)))
	}
	x := ctx.Scale(b.embed(), float32(math.Sqrt(float64(h.NEmbd))))
	for il := range m.layers {
		l := &m.layers[il]
		cur := b.norm(x, l.attnNorm, nil)
		q, k, v := b.qkv(l, cur)
		q, k = b.rope(q, nil), b.rope(k, nil)
		q = ctx.Scale(q, qScale)
		cur = b.linear(l.wo, nil, b.attention(il, q, k, v, attnOpts{kqScale: 1, swa: b.swa(il, 2)}))
		x = ctx.Add(x, b.norm(cur, l.attnPostNorm, nil))
		cur = b.ffn(l, b.norm(x, l.ffnNorm, nil), actGELU)
		x = ctx.Add(x, b.norm(cur, l.ffnPostNorm, nil))
	}
	x = b.outputRows(x)
	return b.norm(x, m.outNorm, nil)
}
