//go:build cgo

package llama

// qwen2: Qwen 2 / 2.5. As llama with Q/K/V biases, NeoX RoPE and, in the small models, the
// token embeddings doubling as the output matrix (no output.weight).
// qwen2moe: Qwen 1.5/2 MoE. As qwen2, with routed experts whose top-k weights are not
// renormalized, plus a shared expert scaled by sigmoid(ffn_gate_inp_shexp · x).
func init() {
	register(&architecture{
		name:     "qwen2",
		ropeType: RopeNeoX,
		tensors:  qwen2Tensors,
		forward:  qwen2Forward,
		sizes:    map[int]string{24: "0.5B", 28: "1.5B", 32: "7B", 36: "3B", 40: "13B", 48: "14B", 64: "32B", 80: "70B"},
	})
	register(&architecture{
		name:     "qwen2moe",
		ropeType: RopeNeoX,
		moe:      true,
		hparams: func(r *reader, h *HParams) {
			if h.NExpert == 0 {
				r.fail("%s.expert_count is missing or 0: qwen2moe models have experts", h.Arch)
			}
		},
		tensors: qwen2Tensors,
		forward: qwen2Forward,
		sizes:   map[int]string{24: "A2.7B", 28: "57B.A14B"},
	})
}

func qwen2Tensors(h HParams) []spec {
	e, ff, v := int64(h.NEmbd), int64(h.NFF), int64(h.NVocab)
	qw, kw, vw, ow := attnWidths(h)
	var s specList
	s.mat("token_embd.weight", e, v)
	s.vec("output_norm.weight", e)
	s.optMat("output.weight", e, v)
	for i := 0; i < h.NLayer; i++ {
		s.vec(blk(i, "attn_norm.weight"), e)
		s.mat(blk(i, "attn_q.weight"), e, qw)
		s.mat(blk(i, "attn_k.weight"), e, kw)
		s.mat(blk(i, "attn_v.weight"), e, vw)
		s.vec(blk(i, "attn_q.bias"), qw)
		s.vec(blk(i, "attn_k.bias"), kw)
		s.vec(blk(i, "attn_v.bias"), vw)
		s.mat(blk(i, "attn_output.weight"), ow, e)
		s.vec(blk(i, "ffn_norm.weight"), e)
		if h.NExpert == 0 {
			s.mat(blk(i, "ffn_gate.weight"), e, ff)
			s.mat(blk(i, "ffn_up.weight"), e, ff)
			s.mat(blk(i, "ffn_down.weight"), ff, e)
			continue
		}
		moeTensors(&s, i, h, int64(h.NFFExpert))
		sh := int64(h.NFFShared)
		s.vec(blk(i, "ffn_gate_inp_shexp.weight"), e)
		s.mat(blk(i, "ffn_gate_shexp.weight"), e, sh)
		s.mat(blk(i, "ffn_up_shexp.weight"), e, sh)
		s.mat(blk(i, "ffn_down_shexp.weight"), sh, e)
	}
	return s
}

func qwen2Forward(b *builder) *tensor {
	m, ctx := b.m, b.ctx
	x := b.embed()
	for il := range m.layers {
		l := &m.layers[il]
		cur := b.norm(x, l.attnNorm, nil)
		q, k, v := b.qkv(l, cur)
		q, k = b.rope(q, nil), b.rope(k, nil)
		x = ctx.Add(x, b.linear(l.wo, l.bo, b.attention(il, q, k, v, attnOpts{})))
		cur = b.norm(x, l.ffnNorm, nil)
		if l.gateInp == nil {
			cur = b.ffn(l, cur, actSiLU)
		} else {
			routed := b.moe(l, cur, actSiLU, false)
			gate := b.sigmoid(ctx.MulMat(l.gateInpShexp, cur)) // [1, n]
			shared := ctx.Mul(b.ffn(&layer{gate: l.gateShexp, up: l.upShexp, down: l.downShexp}, cur, actSiLU), gate)
			cur = ctx.Add(routed, shared)
		}
		x = ctx.Add(x, cur)
	}
	x = b.outputRows(x)
	return b.norm(x, m.outNorm, nil)
}
