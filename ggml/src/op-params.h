// op-params.h - typed access to the parameters (tensor->op_params) of the op families whose
// parameters are read in more than one place: the constructor in ops/ writes them with the
// _set function, and the CPU kernels, the CUDA and Metal hosts and autodiff read them with the
// _get function, so no file decodes op_params by index and the layout (which is the reference's:
// graphs travel between libraries, e.g. over RPC) is written down once, here.
//
// C, C++ (CUDA) and Objective-C (Metal host) include it through ggml-impl.h.

#ifndef GGML_X_OP_PARAMS_H
#define GGML_X_OP_PARAMS_H

#include "ggml.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

static inline int32_t ggml_x_op_i32(const struct ggml_tensor * t, int i) {
    int32_t v;
    memcpy(&v, (const char *) t->op_params + (size_t) i * sizeof(int32_t), sizeof(v));
    return v;
}

static inline float ggml_x_op_f32(const struct ggml_tensor * t, int i) {
    float v;
    memcpy(&v, (const char *) t->op_params + (size_t) i * sizeof(float), sizeof(v));
    return v;
}

static inline void ggml_x_op_set_i32(struct ggml_tensor * t, int i, int32_t v) {
    memcpy((char *) t->op_params + (size_t) i * sizeof(int32_t), &v, sizeof(v));
}

static inline void ggml_x_op_set_f32(struct ggml_tensor * t, int i, float v) {
    memcpy((char *) t->op_params + (size_t) i * sizeof(float), &v, sizeof(v));
}

// ---------------------------------------------------------------------------------------------
// FLASH_ATTN: i32 [0] masked (ggml_flash_attn's causal flag); ggml_x_attn_masked: i32 [1] = 1
// (src[3] is the mask), f32 [2] scale, f32 [3] softcap, i32 [4] V stored by cells
// (ggml_x_attn_masked_vrows: v [Dv, M, Hk]) instead of transposed.

// ---------------------------------------------------------------------------------------------
// ROPE and ROPE_BACK (ggml_rope*, ggml_rope_custom*, ggml_rope_xpos_inplace, ggml_rope_back,
// ggml_x_rope_ext). Layout: i32 [0] n_past (unused, 0) [1] n_dims [2] mode [3] n_ctx
// [4] n_orig_ctx; f32 [5] freq_base [6] freq_scale [7] ext_factor [8] attn_factor [9] beta_fast
// [10] beta_slow [11] xpos_base; i32 [12] xpos_down [13] ext (ggml_x_rope_ext: frequency
// factors in src[2], when not NULL, and llama.cpp 2025's rotation rules).

struct ggml_x_rope_params {
    int32_t n_dims, mode, n_ctx, n_orig_ctx;
    float   freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, xpos_base;
    bool    xpos_down;
    bool    ext;
};

static inline struct ggml_x_rope_params ggml_x_rope_params_get(const struct ggml_tensor * t) {
    struct ggml_x_rope_params p;
    p.n_dims      = ggml_x_op_i32(t, 1);
    p.mode        = ggml_x_op_i32(t, 2);
    p.n_ctx       = ggml_x_op_i32(t, 3);
    p.n_orig_ctx  = ggml_x_op_i32(t, 4);
    p.freq_base   = ggml_x_op_f32(t, 5);
    p.freq_scale  = ggml_x_op_f32(t, 6);
    p.ext_factor  = ggml_x_op_f32(t, 7);
    p.attn_factor = ggml_x_op_f32(t, 8);
    p.beta_fast   = ggml_x_op_f32(t, 9);
    p.beta_slow   = ggml_x_op_f32(t, 10);
    p.xpos_base   = ggml_x_op_f32(t, 11);
    p.xpos_down   = ggml_x_op_i32(t, 12) != 0;
    p.ext         = ggml_x_op_i32(t, 13) != 0;
    return p;
}

static inline void ggml_x_rope_params_set(struct ggml_tensor * t, const struct ggml_x_rope_params * p) {
    ggml_x_op_set_i32(t, 0, 0);
    ggml_x_op_set_i32(t, 1, p->n_dims);
    ggml_x_op_set_i32(t, 2, p->mode);
    ggml_x_op_set_i32(t, 3, p->n_ctx);
    ggml_x_op_set_i32(t, 4, p->n_orig_ctx);
    ggml_x_op_set_f32(t, 5, p->freq_base);
    ggml_x_op_set_f32(t, 6, p->freq_scale);
    ggml_x_op_set_f32(t, 7, p->ext_factor);
    ggml_x_op_set_f32(t, 8, p->attn_factor);
    ggml_x_op_set_f32(t, 9, p->beta_fast);
    ggml_x_op_set_f32(t, 10, p->beta_slow);
    ggml_x_op_set_f32(t, 11, p->xpos_base);
    ggml_x_op_set_i32(t, 12, p->xpos_down ? 1 : 0);
    ggml_x_op_set_i32(t, 13, p->ext ? 1 : 0);
}

// the YaRN correction dims of p: the one formula is ggml_rope_yarn_corr_dims (ops/rope.c)
static inline void ggml_x_rope_corr_dims(const struct ggml_x_rope_params * p, float dims[2]) {
    ggml_rope_yarn_corr_dims(p->n_dims, p->n_orig_ctx, p->freq_base, p->beta_fast, p->beta_slow, dims);
}

// ---------------------------------------------------------------------------------------------
// ALIBI (ggml_alibi). Layout: i32 [0] n_past (unused) [1] n_head; f32 [2] max_bias.

struct ggml_x_alibi_params {
    int32_t n_past, n_head;
    float   max_bias;
};

static inline struct ggml_x_alibi_params ggml_x_alibi_params_get(const struct ggml_tensor * t) {
    struct ggml_x_alibi_params p;
    p.n_past   = ggml_x_op_i32(t, 0);
    p.n_head   = ggml_x_op_i32(t, 1);
    p.max_bias = ggml_x_op_f32(t, 2);
    return p;
}

static inline void ggml_x_alibi_params_set(struct ggml_tensor * t, const struct ggml_x_alibi_params * p) {
    ggml_x_op_set_i32(t, 0, p->n_past);
    ggml_x_op_set_i32(t, 1, p->n_head);
    ggml_x_op_set_f32(t, 2, p->max_bias);
}

// ---------------------------------------------------------------------------------------------
// SOFT_MAX (ggml_soft_max*, ggml_soft_max_ext). Layout: f32 [0] scale (1 for ggml_soft_max).

static inline float ggml_x_soft_max_scale_get(const struct ggml_tensor * t) {
    return ggml_x_op_f32(t, 0);
}

static inline void ggml_x_soft_max_scale_set(struct ggml_tensor * t, float scale) {
    ggml_x_op_set_f32(t, 0, scale);
}

#ifdef __cplusplus
}
#endif

#endif // GGML_X_OP_PARAMS_H
