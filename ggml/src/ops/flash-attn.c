// flash-attn.c - constructors of the fused attention of this ggml version (flash_attn) and its
// gradient (flash_attn_back).
//
// q [D, N, H, B], k [D, M, Hk, B], v [M, D, Hk, B] (v is stored transposed); H a multiple of Hk:
// query head h reads key/value head h % Hk, as the reference does.

#include "ops-common.h"

#include <math.h>

static bool x_attn_shapes_ok(const struct ggml_tensor * q, const struct ggml_tensor * k, const struct ggml_tensor * v) {
    return k->ne[0] == q->ne[0] && v->ne[1] == q->ne[0] && v->ne[0] == k->ne[1] && v->ne[2] == k->ne[2] &&
           k->ne[2] > 0 && q->ne[2] % k->ne[2] == 0 && k->ne[3] == q->ne[3] && v->ne[3] == q->ne[3];
}

#define X_ATTN_CHECKS(fn)                                                                                       \
    X_CHECK_CTX(ctx, fn);                                                                                       \
    X_CHECK_TENSOR(ctx, fn, q);                                                                                 \
    X_CHECK_TENSOR(ctx, fn, k);                                                                                 \
    X_CHECK_TENSOR(ctx, fn, v);                                                                                 \
    GGML_X_CHECK(ctx, x_attn_shapes_ok(q, k, v),                                                                \
                 "%s: need q [D,N,H,B], k [D,M,Hk,B], v [M,D,Hk,B] with H a multiple of Hk (q %s, k %s, v %s)", \
                 fn, X_SHAPE(q), X_SHAPE(k), X_SHAPE(v));                                                       \
    GGML_X_CHECK(ctx, q->type == GGML_TYPE_F32 && k->type == GGML_TYPE_F32 && v->type == GGML_TYPE_F32,         \
                 "%s: q, k and v must be F32", fn)

struct ggml_tensor * ggml_flash_attn(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                     struct ggml_tensor * v, bool masked) {
    const char * fn = "ggml_flash_attn";
    X_ATTN_CHECKS(fn);
    struct ggml_tensor * srcs[3] = { q, k, v };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_FLASH_ATTN, GGML_TYPE_F32, q->ne, 3, srcs);
    if (result != NULL) {
        ggml_x_set_op_params_i32(result, 0, masked ? 1 : 0);
    }
    return result;
}

struct ggml_tensor * ggml_flash_attn_back(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                          struct ggml_tensor * v, struct ggml_tensor * d, bool masked) {
    const char * fn = "ggml_flash_attn_back";
    X_ATTN_CHECKS(fn);
    X_CHECK_TENSOR(ctx, fn, d);
    GGML_X_CHECK(ctx, ggml_are_same_shape(q, d) && d->type == GGML_TYPE_F32,
                 "%s: d must be F32 with q's shape (q %s, d %s)", fn, X_SHAPE(q), X_SHAPE(d));
    // dq, dk, dv one after the other, dense
    const int64_t n = ggml_nelements(q) + ggml_nelements(k) + ggml_nelements(v);
    const int64_t ne[GGML_MAX_DIMS] = { n, 1, 1, 1 };
    struct ggml_tensor * srcs[4] = { q, k, v, d };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_FLASH_ATTN_BACK, GGML_TYPE_F32, ne, 4, srcs);
    if (result != NULL) {
        ggml_x_set_op_params_i32(result, 0, masked ? 1 : 0);
    }
    return result;
}

// ggml_x_attn_masked and ggml_x_attn_masked_vrows: see ggml.h. A GGML_OP_FLASH_ATTN with
// src[3] = mask and op_params i32[1] = 1, i32[4] = 1 for V stored by cells (the layout is in
// op-params.h).
static bool x_attn_masked_shapes_ok(const struct ggml_tensor * q, const struct ggml_tensor * k,
                                    const struct ggml_tensor * v, const struct ggml_tensor * mask, bool vrows) {
    const int64_t vcells = vrows ? v->ne[1] : v->ne[0];
    return k->ne[0] == q->ne[0] && k->ne[2] > 0 && q->ne[1] % k->ne[2] == 0 && vcells == k->ne[1] &&
           v->ne[2] == k->ne[2] && q->ne[3] == 1 && k->ne[3] == 1 && v->ne[3] == 1 && mask->ne[0] >= k->ne[1] &&
           mask->ne[1] >= q->ne[2] && mask->ne[2] == 1 && mask->ne[3] == 1;
}

// can rows of t (ne0 values, element stride nb0) be read by the node: F32, F16, or quantized
// whole blocks
static bool x_attn_operand_type_ok(const struct ggml_tensor * t) {
    return (t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16 ||
            (ggml_is_quantized(t->type) && t->ne[0] % ggml_blck_size(t->type) == 0)) &&
           t->nb[0] == ggml_type_size(t->type);
}

static struct ggml_tensor * x_attn_masked(struct ggml_context * ctx, const char * fn, struct ggml_tensor * q,
                                          struct ggml_tensor * k, struct ggml_tensor * v, struct ggml_tensor * mask,
                                          float scale, float softcap, bool vrows) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, q);
    X_CHECK_TENSOR(ctx, fn, k);
    X_CHECK_TENSOR(ctx, fn, v);
    X_CHECK_TENSOR(ctx, fn, mask);
    GGML_X_CHECK(ctx, x_attn_masked_shapes_ok(q, k, v, mask, vrows),
                 "%s: need q [D,H,N], k [D,M,Hk], v %s with H a multiple of Hk and a mask of at least "
                 "[M,N] (q %s, k %s, v %s, mask %s)",
                 fn, vrows ? "[Dv,M,Hk]" : "[M,Dv,Hk]", X_SHAPE(q), X_SHAPE(k), X_SHAPE(v), X_SHAPE(mask));
    GGML_X_CHECK(ctx, q->type == GGML_TYPE_F32 && mask->type == GGML_TYPE_F32, "%s: q and mask must be F32", fn);
    GGML_X_CHECK(ctx,
                 x_attn_operand_type_ok(k) &&
                     (vrows ? x_attn_operand_type_ok(v)
                            : (v->type == GGML_TYPE_F32 || v->type == GGML_TYPE_F16) && v->nb[0] == ggml_type_size(v->type)),
                 "%s: k must be F32, F16 or quantized (D a multiple of its block) and v %s, with dense rows "
                 "(k %s, v %s)", fn, vrows ? "likewise" : "F32 or F16", ggml_type_name(k->type), ggml_type_name(v->type));
    GGML_X_CHECK(ctx, isfinite(scale) && isfinite(softcap) && softcap >= 0, "%s: scale and softcap must be finite (softcap >= 0)", fn);
    const int64_t ne[GGML_MAX_DIMS] = { vrows ? v->ne[0] : v->ne[1], q->ne[1], q->ne[2], 1 };
    struct ggml_tensor * srcs[4] = { q, k, v, mask };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_FLASH_ATTN, GGML_TYPE_F32, ne, 4, srcs);
    if (result != NULL) {
        ggml_x_set_op_params_i32(result, 0, 0);
        ggml_x_set_op_params_i32(result, 1, 1);
        ggml_x_set_op_params_f32(result, 2, scale);
        ggml_x_set_op_params_f32(result, 3, softcap);
        ggml_x_set_op_params_i32(result, 4, vrows ? 1 : 0);
    }
    return result;
}

struct ggml_tensor * ggml_x_attn_masked(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
                                        struct ggml_tensor * v, struct ggml_tensor * mask, float scale,
                                        float softcap) {
    return x_attn_masked(ctx, "ggml_x_attn_masked", q, k, v, mask, scale, softcap, false);
}

struct ggml_tensor * ggml_x_attn_masked_vrows(struct ggml_context * ctx, struct ggml_tensor * q,
                                              struct ggml_tensor * k, struct ggml_tensor * v,
                                              struct ggml_tensor * mask, float scale, float softcap) {
    return x_attn_masked(ctx, "ggml_x_attn_masked_vrows", q, k, v, mask, scale, softcap, true);
}
