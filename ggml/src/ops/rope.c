// rope.c - constructors of the rope family: rope, rope_custom (+ inplace), ggml_x_rope_ext,
// rope_back, alibi, and ggml_rope_yarn_corr_dims.

#include "ops-common.h"

#include <math.h>

// --- rope ------------------------------------------------------------------------------------

// rotary embedding of a; b holds one I32 position per a->ne[2]
static struct ggml_tensor * x_rope(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a,
                                   struct ggml_tensor * b, const struct ggml_x_rope_params * p, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, b->type == GGML_TYPE_I32, "%s: b (positions) must be I32 (got %s)", fn, x_type_name(b->type));
    GGML_X_CHECK(ctx, ggml_is_vector(b), "%s: b (positions) must be a vector (b %s)", fn, X_SHAPE(b));
    GGML_X_CHECK(ctx, a->ne[2] == b->ne[0], "%s: a->ne[2] (%" PRId64 ") != b->ne[0] (%" PRId64 ") (a %s, b %s)",
                 fn, a->ne[2], b->ne[0], X_SHAPE(a), X_SHAPE(b));
    GGML_X_CHECK(ctx, p->n_dims > 0, "%s: n_dims must be > 0 (got %d)", fn, p->n_dims);
    GGML_X_CHECK(ctx, (p->mode & 4) != 0 || p->n_dims <= a->ne[0],
                 "%s: n_dims (%d) > a->ne[0] (%" PRId64 ")", fn, p->n_dims, a->ne[0]);
    // glm mode rotates x[i0 + k * n_dims/2], k < 4, for i0 < ne0/4: all of it must lie in the row
    GGML_X_CHECK(ctx, (p->mode & 4) == 0 || a->ne[0] / 4 == 0 || a->ne[0] / 4 + 3 * (int64_t) (p->n_dims / 2) <= a->ne[0],
                 "%s: glm mode with n_dims %d reaches past a->ne[0] (%" PRId64 "): need ne0/4 + 3*(n_dims/2) <= ne0",
                 fn, p->n_dims, a->ne[0]);
    struct ggml_tensor * srcs[2] = { a, b };
    struct ggml_tensor * result = x_op_like(ctx, fn, GGML_OP_ROPE, a, inplace, 2, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_rope_params_set(result, p);
    return result;
}

// plain rope: no context extension (the YaRN parameters only matter with ext_factor != 0)
static struct ggml_x_rope_params x_rope_plain(int n_dims, int mode, int n_ctx) {
    struct ggml_x_rope_params p = {
        .n_dims = n_dims, .mode = mode, .n_ctx = n_ctx, .n_orig_ctx = 0,
        .freq_base = 10000.0f, .freq_scale = 1.0f, .ext_factor = 0.0f, .attn_factor = 1.0f,
        .beta_fast = 0.0f, .beta_slow = 0.0f, .xpos_base = 0.0f, .xpos_down = false,
    };
    return p;
}

struct ggml_tensor * ggml_rope(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                               int n_dims, int mode, int n_ctx) {
    const struct ggml_x_rope_params p = x_rope_plain(n_dims, mode, n_ctx);
    return x_rope(ctx, "ggml_rope", a, b, &p, false);
}

struct ggml_tensor * ggml_rope_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                       int n_dims, int mode, int n_ctx) {
    const struct ggml_x_rope_params p = x_rope_plain(n_dims, mode, n_ctx);
    return x_rope(ctx, "ggml_rope_inplace", a, b, &p, true);
}

struct ggml_tensor * ggml_rope_custom(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      int n_dims, int mode, int n_ctx, int n_orig_ctx, float freq_base,
                                      float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                      float beta_slow) {
    const struct ggml_x_rope_params p = {
        .n_dims = n_dims, .mode = mode, .n_ctx = n_ctx, .n_orig_ctx = n_orig_ctx,
        .freq_base = freq_base, .freq_scale = freq_scale, .ext_factor = ext_factor, .attn_factor = attn_factor,
        .beta_fast = beta_fast, .beta_slow = beta_slow, .xpos_base = 0.0f, .xpos_down = false,
    };
    return x_rope(ctx, "ggml_rope_custom", a, b, &p, false);
}

struct ggml_tensor * ggml_rope_custom_inplace(struct ggml_context * ctx, struct ggml_tensor * a,
                                              struct ggml_tensor * b, int n_dims, int mode, int n_ctx,
                                              int n_orig_ctx, float freq_base, float freq_scale, float ext_factor,
                                              float attn_factor, float beta_fast, float beta_slow) {
    const struct ggml_x_rope_params p = {
        .n_dims = n_dims, .mode = mode, .n_ctx = n_ctx, .n_orig_ctx = n_orig_ctx,
        .freq_base = freq_base, .freq_scale = freq_scale, .ext_factor = ext_factor, .attn_factor = attn_factor,
        .beta_fast = beta_fast, .beta_slow = beta_slow, .xpos_base = 0.0f, .xpos_down = false,
    };
    return x_rope(ctx, "ggml_rope_custom_inplace", a, b, &p, true);
}

// llama.cpp-2025 rope: src[2] = optional frequency factors, i32[13] = 1 marks the variant
struct ggml_tensor * ggml_x_rope_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     struct ggml_tensor * c, int n_dims, int mode, int n_orig_ctx, float freq_base,
                                     float freq_scale, float ext_factor, float attn_factor, float beta_fast,
                                     float beta_slow) {
    const char * fn = "ggml_x_rope_ext";
    X_CHECK_CTX(ctx, fn);
    GGML_X_CHECK(ctx, mode == 0 || mode == 2, "%s: mode must be 0 (normal) or 2 (NeoX) (got %d)", fn, mode);
    GGML_X_CHECK(ctx, n_dims > 0 && n_dims % 2 == 0, "%s: n_dims must be even and > 0 (got %d)", fn, n_dims);
    if (c != NULL) {
        GGML_X_CHECK(ctx, c->type == GGML_TYPE_F32, "%s: c (frequency factors) must be F32 (got %s)", fn,
                     x_type_name(c->type));
        GGML_X_CHECK(ctx, ggml_is_contiguous(c) && ggml_nelements(c) >= n_dims / 2,
                     "%s: c (frequency factors) must be contiguous with at least n_dims/2 = %d values (c %s)", fn,
                     n_dims / 2, X_SHAPE(c));
    }
    const struct ggml_x_rope_params p = {
        .n_dims = n_dims, .mode = mode, .n_ctx = 0, .n_orig_ctx = n_orig_ctx,
        .freq_base = freq_base, .freq_scale = freq_scale, .ext_factor = ext_factor, .attn_factor = attn_factor,
        .beta_fast = beta_fast, .beta_slow = beta_slow, .xpos_base = 0.0f, .xpos_down = false, .ext = true,
    };
    struct ggml_tensor * result = x_rope(ctx, fn, a, b, &p, false);
    if (result == NULL) {
        return NULL;
    }
    result->src[2] = c;
    return result;
}

// The rotation dimension at which the wavelength of a frequency spans n_rot turns over the
// original context: n_dims * ln(n_orig_ctx / (2*pi*n_rot)) / (2 * ln(base)).
static float x_yarn_dim(int n_dims, int n_orig_ctx, float n_rot, float base) {
    const float two_pi = 6.28318530717958647692f;
    return (float) n_dims * logf((float) n_orig_ctx / (n_rot * two_pi)) / (2.0f * logf(base));
}

GGML_CALL void ggml_rope_yarn_corr_dims(int n_dims, int n_orig_ctx, float freq_base, float beta_fast, float beta_slow,
                              float dims[2]) {
    const float lo = floorf(x_yarn_dim(n_dims, n_orig_ctx, beta_fast, freq_base));
    const float hi = ceilf(x_yarn_dim(n_dims, n_orig_ctx, beta_slow, freq_base));
    dims[0] = 0.0f > lo ? 0.0f : lo;
    dims[1] = (float) (n_dims - 1) < hi ? (float) (n_dims - 1) : hi;
}

// the gradient of rope: the rotation by the opposite angles
struct ggml_tensor * ggml_rope_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                    int n_dims, int mode, int n_ctx, int n_orig_ctx, float freq_base, float freq_scale,
                                    float ext_factor, float attn_factor, float beta_fast, float beta_slow,
                                    float xpos_base, bool xpos_down) {
    const char * fn = "ggml_rope_back";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, b->type == GGML_TYPE_I32, "%s: b (positions) must be I32 (got %s)", fn, x_type_name(b->type));
    GGML_X_CHECK(ctx, ggml_is_vector(b) && a->ne[2] == b->ne[0],
                 "%s: b (positions) must be a vector of a->ne[2] entries (a %s, b %s)", fn, X_SHAPE(a), X_SHAPE(b));
    GGML_X_CHECK(ctx, n_dims > 0 && ((mode & 4) != 0 || n_dims <= a->ne[0]),
                 "%s: n_dims (%d) must be in 1..a->ne[0] (%" PRId64 ")", fn, n_dims, a->ne[0]);
    struct ggml_tensor * srcs[2] = { a, b };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_ROPE_BACK, a->type, a->ne, 2, srcs);
    if (result == NULL) {
        return NULL;
    }
    const struct ggml_x_rope_params p = {
        .n_dims = n_dims, .mode = mode, .n_ctx = n_ctx, .n_orig_ctx = n_orig_ctx,
        .freq_base = freq_base, .freq_scale = freq_scale, .ext_factor = ext_factor, .attn_factor = attn_factor,
        .beta_fast = beta_fast, .beta_slow = beta_slow, .xpos_base = xpos_base, .xpos_down = xpos_down,
    };
    ggml_x_rope_params_set(result, &p);
    return result;
}

// --- alibi -----------------------------------------------------------------------------------

// ALiBi bias added to attention scores a [n_kv, n_tokens, n_head, 1];
// i32[0] = n_past, i32[1] = n_head, f32[2] = bias_max
struct ggml_tensor * ggml_alibi(struct ggml_context * ctx, struct ggml_tensor * a, int n_past, int n_head,
                                float bias_max) {
    const char * fn = "ggml_alibi";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, n_past >= 0, "%s: n_past must be >= 0 (got %d)", fn, n_past);
    GGML_X_CHECK(ctx, n_head > 0 && n_head == a->ne[2], "%s: n_head (%d) must equal a->ne[2] (%" PRId64 ")",
                 fn, n_head, a->ne[2]);
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_like(ctx, fn, GGML_OP_ALIBI, a, false, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    const struct ggml_x_alibi_params ap = { .n_past = n_past, .n_head = n_head, .max_bias = bias_max };
    ggml_x_alibi_params_set(result, &ap);
    return result;
}
