//go:build cgo

package ggml

/*
#include "ggml_go.h"

static ggo_pres ggo_ggml_x_rope_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                    struct ggml_tensor * c, int n_dims, int mode, int n_orig_ctx, float freq_base,
                                    float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                    float beta_slow) {
    GGO_PCALL(ggml_x_rope_ext(ctx, a, b, c, n_dims, mode, n_orig_ctx, freq_base, freq_scale, ext_factor,
                              attn_factor, beta_fast, beta_slow));
}
*/
import "C"

import "fmt"

// RopeParams are the parameters of RopeExt. The zero value is not useful: set at least NDims
// and FreqBase; FreqScale and AttnFactor are 1 for plain RoPE.
type RopeParams struct {
	NDims      int     // rotated dimensions (even; the rest of each row is copied)
	Mode       int     // 0: adjacent pairs (2k, 2k+1); 2: NeoX pairs (k, k + NDims/2)
	NOrigCtx   int     // YaRN: the original training context
	FreqBase   float32 // theta base (10000 for LLaMA)
	FreqScale  float32 // linear position scaling (1: none)
	ExtFactor  float32 // YaRN extrapolation mix (0: none)
	AttnFactor float32 // magnitude scale of cos and sin (1: none)
	BetaFast   float32 // YaRN ramp bounds (32 and 1 in llama.cpp)
	BetaSlow   float32
}

// RopeExt applies rotary position embeddings to a ([head_dim, heads, tokens]) at the positions
// b (I32, one per token) as llama.cpp of 2025 computes them (ggml_x_rope_ext): factors, when
// not nil, is an F32 vector of at least NDims/2 values dividing the angle of each pair (Llama
// 3.1's rope_freqs, Phi-3's long/short factors). Backends without this variant leave it to the
// CPU. It has no gradient.
func (ctx *Context) RopeExt(a, b, factors *Tensor, p RopeParams) *Tensor {
	const opName = "RopeExt"
	c := ctx.enter(opName)
	defer ctx.busy.leave()
	r := C.ggo_ggml_x_rope_ext(c, a.cptr(opName), b.cptr(opName), factors.optPtr(opName),
		cInt(opName, "NDims", p.NDims), cInt(opName, "Mode", p.Mode), cInt(opName, "NOrigCtx", p.NOrigCtx),
		C.float(p.FreqBase), C.float(p.FreqScale), C.float(p.ExtFactor), C.float(p.AttnFactor),
		C.float(p.BetaFast), C.float(p.BetaSlow))
	return ctx.opResult(opName, r, func() string {
		return joinDesc(describeOperands([]string{"a", "b", "factors"}, []*Tensor{a, b, factors}), fmt.Sprintf("%+v", p))
	})
}
