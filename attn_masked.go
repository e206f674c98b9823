//go:build cgo

package ggml

/*
#include "ggml_go.h"

static ggo_pres ggo_ggml_x_attn_masked(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                       struct ggml_tensor * v, struct ggml_tensor * mask, float scale, float softcap) {
    GGO_PCALL(ggml_x_attn_masked(ctx, q, k, v, mask, scale, softcap));
}

static ggo_pres ggo_ggml_x_attn_masked_vrows(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                             struct ggml_tensor * v, struct ggml_tensor * mask, float scale, float softcap) {
    GGO_PCALL(ggml_x_attn_masked_vrows(ctx, q, k, v, mask, scale, softcap));
}
*/
import "C"

import "fmt"

// AttnMasked is the attention of the queries q (F32 [D, H, N]: N tokens of H heads) over the M
// cells of a KV cache, k [D, M, Hk] and v [M, Dv, Hk] (v transposed; k F32, F16 or quantized
// with D a multiple of its block, decoded as read; v F32 or F16), under the additive F32 mask [>= M, >= N] (row n for token n): query head h reads KV head
// h / (H/Hk), scores are scale·softcap(k·q) + mask with softcap(x) = c·tanh(x/c) (c = 0:
// none), and the result, F32 [Dv, H, N], is the softmax-weighted sum of the V rows
// (ggml_x_attn_masked). It computes what MulMat, SoftMaxExt and MulMat compute on the same
// operands, visiting only the cells whose mask is not -Inf, so a batch of tokens of many
// sequences sharing one cache does each sequence's work only. Backends without this variant
// leave it to the CPU. It has no gradient.
func (ctx *Context) AttnMasked(q, k, v, mask *Tensor, scale, softcap float32) *Tensor {
	return ctx.attnMasked("AttnMasked", false, q, k, v, mask, scale, softcap)
}

// AttnMaskedVRows is AttnMasked with the values stored by cells: v [Dv, M, Hk], a row of Dv
// values per cell, of any type k may have (F32, F16, or quantized with Dv a multiple of its
// block; an F16 v rounds the probabilities to F16). A quantized V cache needs this layout,
// since its blocks run along a cell's values (ggml_x_attn_masked_vrows).
func (ctx *Context) AttnMaskedVRows(q, k, v, mask *Tensor, scale, softcap float32) *Tensor {
	return ctx.attnMasked("AttnMaskedVRows", true, q, k, v, mask, scale, softcap)
}

// attnMasked builds either node (vrows: V stored by cells).
func (ctx *Context) attnMasked(opName string, vrows bool, q, k, v, mask *Tensor, scale, softcap float32) *Tensor {
	c := ctx.enter(opName)
	defer ctx.busy.leave()
	qc, kc, vc, mc := q.cptr(opName), k.cptr(opName), v.cptr(opName), mask.cptr(opName)
	var r C.ggo_pres
	if vrows {
		r = C.ggo_ggml_x_attn_masked_vrows(c, qc, kc, vc, mc, C.float(scale), C.float(softcap))
	} else {
		r = C.ggo_ggml_x_attn_masked(c, qc, kc, vc, mc, C.float(scale), C.float(softcap))
	}
	return ctx.opResult(opName, r, func() string {
		return joinDesc(describeOperands([]string{"q", "k", "v", "mask"}, []*Tensor{q, k, v, mask}),
			fmt.Sprintf("scale %g, softcap %g", scale, softcap))
	})
}
