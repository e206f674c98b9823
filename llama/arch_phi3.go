//go:build cgo

package llama

// phi3: Phi-3 / Phi-3.5. Fused attn_qkv and fused gate-up FFN (ffn_up holds the gate rows
// first), NeoX RoPE with LongRoPE factors (rope_factors_long when the context exceeds
// rope.scaling.original_context_length, else rope_factors_short) and rope.scaling.attn_factor,
// and sliding-window attention on every layer when attention.sliding_window is set.
func init() {
	register(&architecture{
		name:     "phi3",
		ropeType: RopeNeoX,
		tensors:  phi3Tensors,
		forward:  phi3Forward,
		sizes:    map[int]string{24: "1B", 32: "3B", 40: "14B"},
	})
}

func phi3Tensors(h HParams) []spec {
	e, ff, v := int64(h.NEmbd), int64(h.NFF), int64(h.NVocab)
	qw, kw, vw, ow := attnWidths(h)
	var s specList
	s.mat("token_embd.weight", e, v)
	s.vec("output_norm.weight", e)
	s.mat("output.weight", e, v)
	s.optVec("rope_factors_long.weight", int64(h.NRot/2))
	s.optVec("rope_factors_short.weight", int64(h.NRot/2))
	for i := 0; i < h.NLayer; i++ {
		s.vec(blk(i, "attn_norm.weight"), e)
		s.mat(blk(i, "attn_qkv.weight"), e, qw+kw+vw)
		s.mat(blk(i, "attn_output.weight"), ow, e)
		s.vec(blk(i, "ffn_norm.weight"), e)
		s.mat(blk(i, "ffn_up.weight"), e, 2*ff)
		s.mat(blk(i, "ffn_down.weight"), ff, e)
	}
	return s
}

func phi3Forward(b *builder) *tensor {
	m, ctx := b.m, b.ctx
	// llama.cpp picks the factors by the context of one sequence against the original context
	factors := m.tensor("rope_factors_short.weight")
	if b.kv.nCtx > b.h.YaRNOrigCtx {
		factors = m.tensor("rope_factors_long.weight")
	}
	x := b.embed()
	for il := range m.layers {
		l := &m.layers[il]
		cur := b.norm(x, l.attnNorm, nil)
		q, k, v := b.qkv(l, cur)
		q, k = b.rope(q, factors), b.rope(k, factors)
		x = ctx.Add(x, b.linear(l.wo, nil, b.attention(il, q, k, v, attnOpts{swa: b.swa(il, 1)})))
		cur = b.norm(x, l.ffnNorm, nil)
		x = ctx.Add(x, b.ffnFusedGateUp(l, cur, actSiLU))
	}
	x = b.outputRows(x)
	return b.norm(x, m.outNorm, nil)
}
