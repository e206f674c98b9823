//go:build cgo

package llama

import (
	"math"

	"github.com/ggml-go/ggml"
)

// The shared pieces the architectures' forward functions are made of. Each follows what
// llama.cpp builds for the same feature, so that every architecture computes what llama.cpp
// computes on the same file.

// embed returns the token embeddings of the step's tokens, [n_embd, n].
func (b *builder) embed() *tensor {
	return b.ctx.GetRows(b.m.tokEmbd, b.in.tokens)
}

// positionEmbed returns learned position embeddings (the rows of t at the step's positions).
func (b *builder) positionEmbed(t *tensor) *tensor {
	return b.ctx.GetRows(t, b.in.pos)
}

// norm normalizes the rows of x by the architecture's kind (LayerNorm or RMSNorm) and applies
// the weight w and the bias (each may be nil).
func (b *builder) norm(x, w, bias *tensor) *tensor {
	if b.m.arch.layerNorm {
		x = b.ctx.Norm(x, b.h.NormEps)
	} else {
		x = b.ctx.RMSNorm(x, b.h.NormEps)
	}
	if w != nil {
		x = b.ctx.Mul(x, w)
	}
	if bias != nil {
		x = b.ctx.Add(x, bias)
	}
	return x
}

// linear returns w·x + bias (bias may be nil).
func (b *builder) linear(w, bias, x *tensor) *tensor {
	y := b.ctx.MulMat(w, x)
	if bias != nil {
		y = b.ctx.Add(y, bias)
	}
	return y
}

// qkv projects the normalized input of layer l to the queries [head_dim, n_head, n], keys
// [head_dim, n_head_kv, n] and values [head_dim_v·n_head_kv, n], from separate or fused
// (attn_qkv: q, k, v in that order) matrices, with their biases when the model has them.
func (b *builder) qkv(l *layer, cur *tensor) (q, k, v *tensor) {
	h, ctx, n := b.h, b.ctx, b.n
	hd, nh, nhkv := int64(h.HeadDim()), int64(h.NHead), int64(h.NHeadKV)
	qw, kw, vw := hd*nh, hd*nhkv, int64(h.nEmbdVGQA())
	if l.wqkv != nil {
		all := b.linear(l.wqkv, l.bqkv, cur) // [qw + kw + vw, n]
		es, nb1 := uint64(ggml.TypeF32.Size()), all.Nb()[1]
		// a part of all (w rows from row off; heads > 0: as [head_dim, heads, n]). On the CPU,
		// without a bias, the queries and keys of a rotated model stay views (its RoPE reads
		// rows at any stride and writes a contiguous result) and so do the values (only copied
		// into the cache, which takes any stride). A bias (a joined matrix of a model with
		// separate biases, see joinPlans) is added, which also makes the part contiguous;
		// anything else is copied.
		cpu := !l.offloaded()
		part := func(w, off, heads int64, bias *tensor) *tensor {
			if cpu && bias == nil && heads > 0 && h.RopeType != RopeNone {
				return ctx.View3D(all, hd, heads, n, uint64(hd)*es, nb1, uint64(off)*es)
			}
			p := ctx.View2D(all, w, n, nb1, uint64(off)*es)
			switch {
			case bias != nil:
				p = ctx.Add(p, bias)
			case heads > 0 || !cpu:
				p = ctx.Cont(p)
			}
			if heads > 0 {
				return ctx.Reshape3D(p, hd, heads, n)
			}
			return p
		}
		return part(qw, 0, nh, l.bq), part(kw, qw, nhkv, l.bk), part(vw, qw+kw, 0, l.bv)
	}
	q = b.linear(l.wq, l.bq, cur)
	k = b.linear(l.wk, l.bk, cur)
	v = b.linear(l.wv, l.bv, cur)
	return ctx.Reshape3D(q, hd, nh, n), ctx.Reshape3D(k, hd, nhkv, n), v
}

// rope rotates x [head_dim, heads, n] at the step's positions by the model's RoPE (type,
// dimensions, base, scaling, attn_factor), dividing the angles by factors when not nil.
// Plain cases use ggml_rope_custom (which every backend has); frequency factors and scaled
// NeoX use the ggml_x_rope_ext extension.
func (b *builder) rope(x, factors *tensor) *tensor {
	h := b.h
	if h.RopeType == RopeNone {
		return x
	}
	nOrig, freqScale, extFactor := h.ropeParams()
	if factors == nil && (h.RopeType == RopeNormal || (freqScale == 1 && extFactor == 0)) {
		return b.ctx.RopeCustom(x, b.in.pos, h.NRot, h.RopeType, 0, nOrig, h.RopeFreqBase, freqScale, extFactor,
			h.RopeAttnFactor, 32, 1)
	}
	return b.ctx.RopeExt(x, b.in.pos, factors, ggml.RopeParams{NDims: h.NRot, Mode: h.RopeType, NOrigCtx: nOrig,
		FreqBase: h.RopeFreqBase, FreqScale: freqScale, ExtFactor: extFactor, AttnFactor: h.RopeAttnFactor,
		BetaFast: 32, BetaSlow: 1})
}

// fusedAttention makes the layers that run on the CPU compute attention with one AttnMasked
// node, which does each token's visible cells only, instead of MulMat, SoftMaxExt, MulMat and
// the copy of the heads, which score every token against every cell of the step: in a batch
// of several sequences sharing the cache that is the work of every sequence for each token.
// The same node for a sequence alone and in a batch also keeps their results equal. Tests
// turn it off to compare the two.
var fusedAttention = true

// fused reports whether layer il computes attention with AttnMasked (see fusedAttention).
func (b *builder) fused(il int) bool {
	return fusedAttention && b.m.layers[il].dev < 0
}

// attnOpts are the per-layer choices of attention.
type attnOpts struct {
	kqScale float32 // scale of q·k before the softmax (0: 1/sqrt(head_dim))
	swa     bool    // use the sliding-window mask
}

// attention stores the new keys k [head_dim, n_head_kv, n] and values v [head_dim_v·n_head_kv,
// n] of layer il in the KV cache and returns the attention of the queries q [head_dim,
// n_head, n] over the step's cells, [head_dim_v·n_head, n] (before the output matrix). Grouped
// query attention broadcasts the KV heads; soft-capping (HParams.AttnSoftcap) applies to q·k
// before the mask.
func (b *builder) attention(il int, q, k, v *tensor, o attnOpts) *tensor {
	h, ctx, kv, s, n := b.h, b.ctx, b.kv, b.s, b.n
	hd, hdv, nh, nhkv := int64(h.HeadDim()), int64(h.headDimV()), int64(h.NHead), int64(h.NHeadKV)
	kw, vw := int64(kv.kWidth), int64(kv.vWidth)
	nCtx, nKV := int64(kv.nCtx), int64(s.nKV)
	esz := kv.typV.RowSize(1)

	// store K and V of the new tokens in their cells
	kView := ctx.View1D(kv.k[il], n*kw, kv.typK.RowSize(kw)*uint64(s.kvHead))
	kCpy := ctx.Cpy(k, kView)
	if ne := v.Ne(); ne[0] != vw || ne[1] != n || ne[2] != 1 || ne[3] != 1 {
		v = ctx.Reshape2D(v, vw, n) // (a part of a joined matrix is [vw, n] already, and strided)
	}
	var vView, vCpy *tensor
	if kv.vRows {
		vView = ctx.View2D(kv.v[il], vw, n, kv.typV.RowSize(vw), kv.typV.RowSize(vw)*uint64(s.kvHead))
		vCpy = ctx.Cpy(v, vView)
	} else {
		vView = ctx.View2D(kv.v[il], n, vw, uint64(nCtx)*esz, uint64(s.kvHead)*esz)
		vCpy = ctx.Cpy(ctx.Transpose(v), vView)
	}
	b.g.BuildForwardExpand(kCpy)
	b.g.BuildForwardExpand(vCpy)
	b.stores.k = append(b.stores.k, kView, kCpy)
	b.stores.v = append(b.stores.v, vView, vCpy)

	scale := o.kqScale
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(hd)))
	}
	mask := b.in.mask
	if o.swa {
		mask = b.in.maskSWA
	}
	if b.fused(il) {
		// one node that visits only the cells each token's mask lets through
		kc := ctx.View3D(kv.k[il], hd, nKV, nhkv, kv.typK.RowSize(kw), kv.typK.RowSize(hd), 0)
		var kqv *tensor // [hdv, nh, n]
		if kv.vRows {
			vc := ctx.View3D(kv.v[il], hdv, nKV, nhkv, kv.typV.RowSize(vw), kv.typV.RowSize(hdv), 0)
			kqv = ctx.AttnMaskedVRows(q, kc, vc, mask, scale, h.AttnSoftcap)
		} else {
			vc := ctx.View3D(kv.v[il], nKV, hdv, nhkv, uint64(nCtx)*esz, uint64(nCtx)*uint64(hdv)*esz, 0)
			kqv = ctx.AttnMasked(q, kc, vc, mask, scale, h.AttnSoftcap)
		}
		return ctx.Reshape2D(kqv, hdv*nh, n)
	}
	qp := ctx.Permute(q, 0, 2, 1, 3) // [hd, n, nh]
	kc := ctx.View3D(kv.k[il], hd, nKV, nhkv, kv.typK.RowSize(kw), kv.typK.RowSize(hd), 0)
	kq := ctx.MulMat(kc, qp) // [nKV, n, nh]
	if c := h.AttnSoftcap; c > 0 {
		kq = ctx.Scale(ctx.Tanh(ctx.Scale(kq, 1/c)), c)
	}
	kq = ctx.SoftMaxExt(kq, mask, scale)
	var vc *tensor // [nKV, hdv, nhkv]
	if kv.vRows {  // (decoded and transposed for MUL_MAT: the fused node reads the rows)
		vr := ctx.View3D(kv.v[il], hdv, nKV, nhkv, kv.typV.RowSize(vw), kv.typV.RowSize(hdv), 0)
		vc = ctx.Cont(ctx.Transpose(ctx.Cpy(vr, ctx.NewTensor3D(ggml.TypeF32, hdv, nKV, nhkv))))
	} else {
		vc = ctx.View3D(kv.v[il], nKV, hdv, nhkv, uint64(nCtx)*esz, uint64(nCtx)*uint64(hdv)*esz, 0)
	}
	kqv := ctx.MulMat(vc, kq)                                  // [hdv, n, nh]
	return ctx.Cont2D(ctx.Permute(kqv, 0, 2, 1, 3), hdv*nh, n) // [hdv·nh, n]
}

// activation is an FFN non-linearity.
type activation int

const (
	actSiLU activation = iota
	actGELU
)

func (b *builder) act(x *tensor, a activation) *tensor {
	if a == actGELU {
		return b.ctx.Gelu(x)
	}
	return b.ctx.Silu(x)
}

// ffn is the feed-forward block of layer l on cur: act(gate·x) * (up·x) when the layer has
// a gate (or its gate and up matrices joined, gateUp), else act(up·x + up_b); then down·y + down_b.
func (b *builder) ffn(l *layer, cur *tensor, a activation) *tensor {
	if l.gateUp != nil {
		return b.linear(l.down, l.downB, b.gatedJoint(l, l.gateUp, cur, a))
	}
	up := b.linear(l.up, l.upB, cur)
	var y *tensor
	if l.gate != nil {
		y = b.ctx.Mul(b.act(b.ctx.MulMat(l.gate, cur), a), up)
	} else {
		y = b.act(up, a)
	}
	return b.linear(l.down, l.downB, y)
}

// ffnFusedGateUp is the gated FFN of a layer whose ffn_up holds the gate rows then the up rows
// (Phi-3): act(first half) * second half, then down.
func (b *builder) ffnFusedGateUp(l *layer, cur *tensor, a activation) *tensor {
	return b.ctx.MulMat(l.down, b.gatedJoint(l, l.up, cur, a))
}

// gatedJoint is act(gate·x) * (up·x) from one matrix gu of layer l holding the gate rows then the
// up rows: one MUL_MAT reads x once for both.
func (b *builder) gatedJoint(l *layer, gu, cur *tensor, a activation) *tensor {
	ctx := b.ctx
	y := ctx.MulMat(gu, cur) // [2·n_ff, n]
	nff := y.Ne()[0] / 2
	es := uint64(ggml.TypeF32.Size())
	// views on the CPU, whose activation and MUL read rows at any stride; copies elsewhere
	g := ctx.View2D(y, nff, b.n, y.Nb()[1], 0)
	u := ctx.View2D(y, nff, b.n, y.Nb()[1], uint64(nff)*es)
	if l.offloaded() {
		g, u = ctx.Cont(g), ctx.Cont(u)
	}
	return ctx.Mul(b.act(g, a), u)
}

// expertViews returns the matrices of the experts of a [in, out, n_expert] tensor.
func (b *builder) expertViews(t *tensor) []*tensor {
	ne, nb := t.Ne(), t.Nb()
	vs := make([]*tensor, ne[2])
	for e := range vs {
		vs[e] = b.ctx.View2D(t, ne[0], ne[1], nb[1], uint64(e)*nb[2])
	}
	return vs
}

// moeGroupSize is the most experts one MUL_MAT_ID node takes (this ggml passes them as
// separate sources); layers with more experts are computed in groups (tests lower it).
var moeGroupSize = maxExperts

// moe is a mixture-of-experts FFN: the router's softmax over the experts, the top
// n_expert_used of them per token (renormalized to sum 1 when normalize), each expert's
// gated FFN act(gate·x) * (up·x) then down, weighted and summed.
func (b *builder) moe(l *layer, cur *tensor, a activation, normalize bool) *tensor {
	ctx, h, n := b.ctx, b.h, b.n
	nExp, k := int64(h.NExpert), h.NExpertUsed
	probs := ctx.SoftMax(ctx.MulMat(l.gateInp, cur)) // [n_expert, n]
	selected := ctx.TopK(probs, k)                   // I32 [k, n], best first
	weights := ctx.GetRows(ctx.Reshape3D(probs, 1, nExp, n), selected)
	weights = ctx.Reshape2D(weights, int64(k), n) // [k, n]
	var sum *tensor
	if normalize {
		sum = ctx.SumRows(weights)
	}
	ups, gates, downs := b.expertViews(l.upExps), b.expertViews(l.gateExps), b.expertViews(l.downExps)
	if int(nExp) <= moeGroupSize {
		if normalize {
			weights = ctx.Div(weights, sum)
		}
		return b.experts(ups, gates, downs, selected, weights, k, cur, a)
	}
	// More experts than one MUL_MAT_ID takes: per group of experts, the group's own top
	// min(k, group) experts, weighted by their probability where it reaches the token's k-th
	// largest one (they are then among the token's top k), else by 0.
	kth := ctx.Cont(ctx.View2D(weights, 1, n, weights.Nb()[1], uint64(k-1)*uint64(ggml.TypeF32.Size())))
	var out *tensor
	for g0 := 0; g0 < int(nExp); g0 += moeGroupSize {
		ng := min(moeGroupSize, int(nExp)-g0)
		gp := ctx.Cont(ctx.View2D(probs, int64(ng), n, probs.Nb()[1], uint64(g0)*uint64(ggml.TypeF32.Size())))
		kk := min(k, ng)
		local := ctx.TopK(gp, kk)
		w := ctx.Reshape2D(ctx.GetRows(ctx.Reshape3D(gp, 1, int64(ng), n), local), int64(kk), n)
		w = ctx.Sub(w, ctx.Mul(w, ctx.Step(ctx.Neg(ctx.Sub(w, kth))))) // 0 below the k-th
		if normalize {
			w = ctx.Div(w, sum)
		}
		y := b.experts(ups[g0:g0+ng], gates[g0:g0+ng], downs[g0:g0+ng], local, w, kk, cur, a)
		if out == nil {
			out = y
		} else {
			out = ctx.Add(out, y)
		}
	}
	return out
}

// experts sums, over the k slots of ids ([k, n]: per token, indexes into the expert lists),
// the slot's expert FFN of cur weighted by weights ([k, n]).
func (b *builder) experts(ups, gates, downs []*tensor, ids, weights *tensor, k int, cur *tensor, a activation) *tensor {
	ctx, n := b.ctx, b.n
	var out *tensor
	for i := 0; i < k; i++ {
		up := ctx.MulMatID(ups, ids, i, cur)
		gate := ctx.MulMatID(gates, ids, i, cur)
		y := ctx.MulMatID(downs, ids, i, ctx.Mul(b.act(gate, a), up)) // [n_embd, n]
		w := ctx.View2D(weights, 1, n, weights.Nb()[1], uint64(i)*uint64(ggml.TypeF32.Size()))
		y = ctx.Mul(y, w)
		if out == nil {
			out = y
		} else {
			out = ctx.Add(out, y)
		}
	}
	return out
}

// sigmoid returns 1 / (1 + e^-x) of a [1, n] row: the first column of softmax([x, 0]).
func (b *builder) sigmoid(x *tensor) *tensor {
	ctx := b.ctx
	p := ctx.SoftMax(ctx.Pad(x, 1, 0, 0, 0)) // [2, n]
	return ctx.View2D(p, 1, x.Ne()[1], p.Nb()[1], 0)
}

// outputRows keeps the rows whose outputs the step returns: those listed by the outIDs input
// when the step has one, else the last token's only, unless the step wants every row.
// Architectures call it after the last block, before the output norm (the rows are
// independent from there on).
func (b *builder) outputRows(x *tensor) *tensor {
	if b.in.outIDs != nil {
		return b.ctx.GetRows(x, b.in.outIDs)
	}
	if b.s.allLogits || b.s.hidden || b.s.noLogits || b.n == 1 {
		return x
	}
	return b.ctx.View2D(x, x.Ne()[0], 1, x.Nb()[1], uint64(b.n-1)*x.Nb()[1])
}

// logits multiplies the final hidden states by the output matrix (the token embeddings
// when the model ties them) and soft-caps them when HParams.FinalSoftcap is set.
func (b *builder) logits(x *tensor) *tensor {
	out := b.m.output
	if out == nil {
		out = b.m.tokEmbd
	}
	y := b.ctx.MulMat(out, x)
	if c := b.h.FinalSoftcap; c > 0 {
		y = b.ctx.Scale(b.ctx.Tanh(b.ctx.Scale(y, 1/c)), c)
	}
	return y
}

// swa reports whether layer il uses the sliding window, for a window on every
// `every`-th layer from layer 0.
func (b *builder) swa(il, every int) bool {
	return b.h.SlidingWindow > 0 && il%every == 0
}
