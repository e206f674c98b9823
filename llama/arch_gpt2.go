//go:build cgo

package llama

// gpt2: GPT-2. Learned position embeddings (no RoPE), LayerNorm with bias, fused attn_qkv
// with bias, attention output bias, GELU MLP with biases, untied output.
func init() {
	register(&architecture{
		name:      "gpt2",
		ropeType:  RopeNone,
		layerNorm: true,
		tensors:   gpt2Tensors,
		forward:   gpt2Forward,
		sizes:     map[int]string{12: "SMALL", 24: "MEDIUM", 36: "LARGE", 48: "XL"},
	})
}

func gpt2Tensors(h HParams) []spec {
	e, ff, v := int64(h.NEmbd), int64(h.NFF), int64(h.NVocab)
	var s specList
	s.mat("token_embd.weight", e, v)
	s.vec("position_embd.weight", e, int64(h.ContextLength))
	s.vec("output_norm.weight", e)
	s.vec("output_norm.bias", e)
	s.mat("output.weight", e, v)
	for i := 0; i < h.NLayer; i++ {
		s.vec(blk(i, "attn_norm.weight"), e)
		s.vec(blk(i, "attn_norm.bias"), e)
		s.mat(blk(i, "attn_qkv.weight"), e, e+2*int64(h.NEmbdGQA()))
		s.vec(blk(i, "attn_qkv.bias"), e+2*int64(h.NEmbdGQA()))
		s.mat(blk(i, "attn_output.weight"), e, e)
		s.vec(blk(i, "attn_output.bias"), e)
		s.vec(blk(i, "ffn_norm.weight"), e)
		s.vec(blk(i, "ffn_norm.bias"), e)
		s.mat(blk(i, "ffn_up.weight"), e, ff)
		s.vec(blk(i, "ffn_up.bias"), ff)
		s.mat(blk(i, "ffn_down.weight"), ff, e)
		s.vec(blk(i, "ffn_down.bias"), e)
	}
	return s
}

func gpt2Forward(b *builder) *tensor {
	m, ctx := b.m, b.ctx
	x := ctx.Add(b.embed(), b.positionEmbed(m.tensor("position_embd.weight")))
	for il := range m.layers {
		l := &m.layers[il]
		cur := b.norm(x, l.attnNorm, l.attnNormB)
		q, k, v := b.qkv(l, cur)
		x = ctx.Add(x, b.linear(l.wo, l.bo, b.attention(il, q, k, v, attnOpts{})))
		x = ctx.Add(x, b.ffn(l, b.norm(x, l.ffnNorm, l.ffnNormB), actGELU))
	}
	x = b.outputRows(x)
	return b.norm(x, m.outNorm, m.tensor("output_norm.bias"))
}
