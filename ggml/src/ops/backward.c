// backward.c - constructors of the ops that only backward passes use: repeat_back, silu_back,
// rms_norm_back, get_rows_back, soft_max_back (+ inplace), rope_back. Their kernels are in the
// CPU family files of the forward op (cpu/ops-repeat.c, ops-unary.c, ...) or cpu/ops-backward.c.

#include "ops-common.h"

// sum of the tiles of a that make up b's shape: a's shape must be a tiling of b's
struct ggml_tensor * ggml_repeat_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_repeat_back";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, x_can_repeat(b, a), "%s: a's shape must be a multiple of b's (a %s, b %s)", fn, X_SHAPE(a),
                 X_SHAPE(b));
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F32, "%s: a must be F32 (got %s)", fn, x_type_name(a->type));
    struct ggml_tensor * srcs[1] = { a };
    return x_op_new(ctx, fn, GGML_OP_REPEAT_BACK, GGML_TYPE_F32, b->ne, 1, srcs);
}

// two same-shape F32 operands (x and the output gradient)
static struct ggml_tensor * x_back_pair(struct ggml_context * ctx, const char * fn, enum ggml_op op,
                                        struct ggml_tensor * a, struct ggml_tensor * b, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, ggml_are_same_shape(a, b), "%s: a and b must have the same shape (a %s, b %s)", fn,
                 X_SHAPE(a), X_SHAPE(b));
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_F32, "%s: a and b must be F32 (got %s, %s)",
                 fn, x_type_name(a->type), x_type_name(b->type));
    struct ggml_tensor * srcs[2] = { a, b };
    return x_op_like(ctx, fn, op, a, inplace, 2, srcs);
}

struct ggml_tensor * ggml_silu_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_back_pair(ctx, "ggml_silu_back", GGML_OP_SILU_BACK, a, b, false);
}

struct ggml_tensor * ggml_rms_norm_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                        float eps) {
    const char * fn = "ggml_rms_norm_back";
    X_CHECK_CTX(ctx, fn);
    GGML_X_CHECK(ctx, eps >= 0.0f, "%s: eps must be >= 0 (got %g)", fn, (double) eps);
    struct ggml_tensor * result = x_back_pair(ctx, fn, GGML_OP_RMS_NORM_BACK, a, b, false);
    if (result != NULL) {
        ggml_x_set_op_params_f32(result, 0, eps);
    }
    return result;
}

struct ggml_tensor * ggml_soft_max_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_back_pair(ctx, "ggml_soft_max_back", GGML_OP_SOFT_MAX_BACK, a, b, false);
}

struct ggml_tensor * ggml_soft_max_back_inplace(struct ggml_context * ctx, struct ggml_tensor * a,
                                                struct ggml_tensor * b) {
    return x_back_pair(ctx, "ggml_soft_max_back_inplace", GGML_OP_SOFT_MAX_BACK, a, b, true);
}

// rows of a (the gradient of get_rows' result) added into a zero tensor of c's shape at the rows
// named by b: the gradient of ggml_get_rows(c, b)
struct ggml_tensor * ggml_get_rows_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                        struct ggml_tensor * c) {
    const char * fn = "ggml_get_rows_back";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    X_CHECK_TENSOR(ctx, fn, c);
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F32, "%s: a must be F32 (got %s)", fn, x_type_name(a->type));
    GGML_X_CHECK(ctx, b->type == GGML_TYPE_I32, "%s: b (indices) must be I32 (got %s)", fn, x_type_name(b->type));
    GGML_X_CHECK(ctx, a->ne[0] == c->ne[0] && a->ne[1] == b->ne[0] && a->ne[2] == b->ne[1] && a->ne[3] == b->ne[2] &&
                      c->ne[2] == b->ne[1] && c->ne[3] == b->ne[2] && b->ne[3] == 1,
                 "%s: shapes do not match get_rows(c, b) = a (a %s, b %s, c %s)", fn, X_SHAPE(a), X_SHAPE(b), X_SHAPE(c));
    struct ggml_tensor * srcs[2] = { a, b };
    return x_op_new(ctx, fn, GGML_OP_GET_ROWS_BACK, GGML_TYPE_F32, c->ne, 2, srcs);
}

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
