//go:build cgo

package llama

// bert: BERT encoders (BGE, MiniLM, ...) for embeddings. Learned position embeddings plus
// token type 0, a LayerNorm on the embeddings, separate Q/K/V with biases, non-causal
// attention, post-LayerNorms after attention and after the GELU MLP.
// nomic-bert: nomic-embed-text. As bert without position embeddings: fused attn_qkv (no
// bias) with NeoX RoPE, and a SwiGLU FFN without biases.
func init() {
	register(&architecture{
		name:      "bert",
		ropeType:  RopeNone,
		layerNorm: true,
		encoder:   true,
		tensors:   bertTensors,
		forward:   bertForward,
		sizes:     map[int]string{3: "17M", 6: "22M", 12: "33M", 24: "335M"},
	})
	register(&architecture{
		name:      "nomic-bert",
		ropeType:  RopeNeoX,
		layerNorm: true,
		encoder:   true,
		tensors:   bertTensors,
		forward:   bertForward,
		sizes:     map[int]string{12: "137M"},
	})
}

func bertTensors(h HParams) []spec {
	e, ff, v := int64(h.NEmbd), int64(h.NFF), int64(h.NVocab)
	nomic := h.Arch == "nomic-bert"
	var s specList
	s.mat("token_embd.weight", e, v)
	s.vec("token_types.weight", e, int64(max(h.NTokenTypes, 1)))
	if !nomic {
		s.vec("position_embd.weight", e, int64(h.ContextLength))
	}
	s.vec("token_embd_norm.weight", e)
	s.vec("token_embd_norm.bias", e)
	for i := 0; i < h.NLayer; i++ {
		if nomic {
			s.mat(blk(i, "attn_qkv.weight"), e, e+2*int64(h.NEmbdGQA()))
			s.optVec(blk(i, "attn_qkv.bias"), e+2*int64(h.NEmbdGQA()))
		} else {
			s.mat(blk(i, "attn_q.weight"), e, e)
			s.vec(blk(i, "attn_q.bias"), e)
			s.mat(blk(i, "attn_k.weight"), e, int64(h.NEmbdGQA()))
			s.vec(blk(i, "attn_k.bias"), int64(h.NEmbdGQA()))
			s.mat(blk(i, "attn_v.weight"), e, int64(h.NEmbdGQA()))
			s.vec(blk(i, "attn_v.bias"), int64(h.NEmbdGQA()))
		}
		s.mat(blk(i, "attn_output.weight"), e, e)
		s.optVec(blk(i, "attn_output.bias"), e)
		s.vec(blk(i, "attn_output_norm.weight"), e)
		s.vec(blk(i, "attn_output_norm.bias"), e)
		if nomic {
			s.mat(blk(i, "ffn_gate.weight"), e, ff)
		}
		s.mat(blk(i, "ffn_up.weight"), e, ff)
		s.optVec(blk(i, "ffn_up.bias"), ff)
		s.mat(blk(i, "ffn_down.weight"), ff, e)
		s.optVec(blk(i, "ffn_down.bias"), e)
		s.vec(blk(i, "layer_output_norm.weight"), e)
		s.vec(blk(i, "layer_output_norm.bias"), e)
	}
	return s
}

func bertForward(b *builder) *tensor {
	m, ctx := b.m, b.ctx
	e := int64(b.h.NEmbd)
	x := b.embed()
	// every token is of type 0 ("sentence A"), as in llama.cpp
	x = ctx.Add(x, ctx.View1D(m.tensor("token_types.weight"), e, 0))
	if pe := m.tensor("position_embd.weight"); pe != nil {
		x = ctx.Add(x, b.positionEmbed(pe))
	}
	x = b.norm(x, m.tensor("token_embd_norm.weight"), m.tensor("token_embd_norm.bias"))
	act := actGELU
	if b.h.Arch == "nomic-bert" {
		act = actSiLU
	}
	for il := range m.layers {
		l := &m.layers[il]
		q, k, v := b.qkv(l, x)
		q, k = b.rope(q, nil), b.rope(k, nil)
		cur := ctx.Add(x, b.linear(l.wo, l.bo, b.attention(il, q, k, v, attnOpts{})))
		cur = b.norm(cur, l.attnOutNorm, l.attnOutNormB)
		cur = ctx.Add(cur, b.ffn(l, cur, act))
		x = b.norm(cur, l.layerOutNorm, l.layerOutNormB)
	}
	return b.outputRows(x)
}
