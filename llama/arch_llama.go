//go:build cgo

package llama

// llama: LLaMA 1/2/3.x, Mistral, TinyLlama, and Mixtral-style mixture-of-experts models.
// RMSNorm, RoPE on adjacent pairs (with Llama 3.1's rope_freqs frequency factors when the
// file has them), optional attention biases, SwiGLU FFN or experts (softmax router, top-k,
// weights renormalized to sum 1).
func init() {
	register(&architecture{
		name:     "llama",
		ropeType: RopeNormal,
		moe:      true,
		tensors:  llamaTensors,
		forward:  llamaForward,
		sizes:    map[int]string{22: "1B", 26: "3B", 32: "7B", 40: "13B", 48: "34B", 60: "30B", 80: "65B"},
	})
}

func llamaTensors(h HParams) []spec {
	e, ff, v := int64(h.NEmbd), int64(h.NFF), int64(h.NVocab)
	qw, kw, vw, ow := attnWidths(h)
	var s specList
	s.mat("token_embd.weight", e, v)
	s.vec("output_norm.weight", e)
	s.mat("output.weight", e, v)
	s.optVec("rope_freqs.weight", int64(h.NRot/2))
	for i := 0; i < h.NLayer; i++ {
		s.vec(blk(i, "attn_norm.weight"), e)
		s.mat(blk(i, "attn_q.weight"), e, qw)
		s.mat(blk(i, "attn_k.weight"), e, kw)
		s.mat(blk(i, "attn_v.weight"), e, vw)
		s.mat(blk(i, "attn_output.weight"), ow, e)
		s.optVec(blk(i, "attn_q.bias"), qw)
		s.optVec(blk(i, "attn_k.bias"), kw)
		s.optVec(blk(i, "attn_v.bias"), vw)
		s.optVec(blk(i, "attn_output.bias"), e)
		s.vec(blk(i, "ffn_norm.weight"), e)
		if h.NExpert > 0 {
			moeTensors(&s, i, h, int64(h.NFF))
			continue
		}
		s.mat(blk(i, "ffn_gate.weight"), e, ff)
		s.mat(blk(i, "ffn_up.weight"), e, ff)
		s.mat(blk(i, "ffn_down.weight"), ff, e)
	}
	return s
}

// moeTensors adds the router and expert tensors of block i (expert FFN width ff).
func moeTensors(s *specList, i int, h HParams, ff int64) {
	e, x := int64(h.NEmbd), int64(h.NExpert)
	s.vec(blk(i, "ffn_gate_inp.weight"), e, x)
	s.mat(blk(i, "ffn_gate_exps.weight"), e, ff, x)
	s.mat(blk(i, "ffn_up_exps.weight"), e, ff, x)
	s.mat(blk(i, "ffn_down_exps.weight"), ff, e, x)
}

func llamaForward(b *builder) *tensor {
	m, ctx := b.m, b.ctx
	factors := m.tensor("rope_freqs.weight")
	x := b.embed()
	for il := range m.layers {
		l := &m.layers[il]
		cur := b.norm(x, l.attnNorm, nil)
		q, k, v := b.qkv(l, cur)
		q, k = b.rope(q, factors), b.rope(k, factors)
		x = ctx.Add(x, b.linear(l.wo, l.bo, b.attention(il, q, k, v, attnOpts{})))
		cur = b.norm(x, l.ffnNorm, nil)
		if l.gateInp != nil {
			cur = b.moe(l, cur, actSiLU, true)
		} else {
			cur = b.ffn(l, cur, actSiLU)
		}
		x = ctx.Add(x, cur)
	}
	x = b.outputRows(x)
	return b.norm(x, m.outNorm, nil)
}
