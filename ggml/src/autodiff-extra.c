// autodiff-extra.c - gradients the reference does not have, for models such as GPT-2: MEAN,
// CONCAT, NORM (layer norm), OUT_PROD, MUL_MAT_ID, CLAMP, LEAKY_RELU and the unary GELU, GELU_QUICK, ELU,
// plus user gradients of the map_custom ops (ggml_x_map_custom_set_grad). Element-wise derivatives
// without an op of their own run as map_custom kernels defined here.

#include "autodiff.h"

#include <math.h>

// --- user gradients of the map_custom ops -----------------------------------------------------

// op_params of a MAP_CUSTOM1/2/3 node: the constructor's struct, then the gradient function
// (zero until ggml_x_map_custom_set_grad sets it: tensors are created zeroed)
struct x_custom_grad_params {
    struct ggml_x_map_custom_params base;
    ggml_x_custom_grad_t grad_fn;
    void * grad_userdata;
};

_Static_assert(sizeof(struct x_custom_grad_params) <= GGML_MAX_OP_PARAMS, "custom op params do not fit");

static bool x_is_map_custom(const struct ggml_tensor * t) {
    return t->op == GGML_OP_MAP_CUSTOM1 || t->op == GGML_OP_MAP_CUSTOM2 || t->op == GGML_OP_MAP_CUSTOM3;
}

void ggml_x_map_custom_set_grad(struct ggml_tensor * node, ggml_x_custom_grad_t fn, void * userdata) {
    if (node == NULL || !x_is_map_custom(node)) {
        ggml_x_error(NULL, "ggml_x_map_custom_set_grad: %s is not a ggml_map_custom1/2/3 node",
                     node == NULL ? "NULL" : ggml_op_desc(node));
        return;
    }
    struct x_custom_grad_params p;
    memcpy(&p, node->op_params, sizeof(p));
    p.grad_fn = fn;
    p.grad_userdata = userdata;
    memcpy(node->op_params, &p, sizeof(p));
}

static bool x_backward_custom(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g) {
    struct x_custom_grad_params p;
    memcpy(&p, t->op_params, sizeof(p));
    if (p.grad_fn == NULL) {
        ggml_x_error(st->ctx, "ggml_build_backward_expand: custom op node '%s' has no gradient: "
                     "set one with ggml_x_map_custom_set_grad", t->name);
        return false;
    }
    struct ggml_tensor * grads[GGML_MAX_SRC] = { NULL };
    const uint64_t serial = ggml_x_error_serial();
    p.grad_fn(st->ctx, t, g, grads, p.grad_userdata);
    if (ggml_x_error_serial() != serial) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        struct ggml_tensor * s = t->src[i];
        if (s == NULL || s->grad == NULL) {
            continue;
        }
        if (grads[i] == NULL) {
            ggml_x_error(st->ctx, "ggml_build_backward_expand: the gradient function of custom op '%s' "
                         "gave no gradient for source %d ('%s')", t->name, i, s->name);
            return false;
        }
        if (!x_grad_add(st, s, grads[i])) {
            return false;
        }
    }
    return true;
}

// a float carried in a map_custom userdata pointer
static void * x_f32_bits(float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof(u));
    return (void *) (uintptr_t) u;
}

static float x_bits_f32(const void * p) {
    const uint32_t u = (uint32_t) (uintptr_t) p;
    float v;
    memcpy(&v, &u, sizeof(v));
    return v;
}

#define AT1(t, i0, ir) (*(float *) ((char *) (t)->data + (i0) * (t)->nb[0] + x_row_offs((t), (ir))))

static size_t x_row_offs(const struct ggml_tensor * t, int64_t ir) {
    const int64_t i1 = ir % t->ne[1];
    const int64_t i2 = (ir / t->ne[1]) % t->ne[2];
    const int64_t i3 = ir / (t->ne[1] * t->ne[2]);
    return (size_t) i1 * t->nb[1] + (size_t) i2 * t->nb[2] + (size_t) i3 * t->nb[3];
}

// --- element-wise derivative kernels: dst = dy * f'(x); a = x, b = dy -------------------------

enum x_dkind { X_D_GELU, X_D_GELU_QUICK, X_D_ELU, X_D_LEAKY };

static double x_deriv(enum x_dkind kind, double x, float p) {
    switch (kind) {
        case X_D_GELU: {
            const double c = 0.79788456080286535587989211986876; // sqrt(2/pi)
            const double th = tanh(c * (x + 0.044715 * x * x * x));
            return 0.5 * (1.0 + th) + 0.5 * x * (1.0 - th * th) * c * (1.0 + 3.0 * 0.044715 * x * x);
        }
        case X_D_GELU_QUICK: {
            const double s = 1.0 / (1.0 + exp(-1.702 * x));
            return s + x * 1.702 * s * (1.0 - s);
        }
        case X_D_ELU:
            return x > 0.0 ? 1.0 : exp(x);
        case X_D_LEAKY:
            return x > 0.0 ? 1.0 : (double) p;
    }
    return 0.0;
}

static void x_deriv_rows(enum x_dkind kind, struct ggml_tensor * dst, const struct ggml_tensor * a,
                         const struct ggml_tensor * b, int ith, int nth, float p) {
    const int64_t nr = ggml_nrows(dst);
    for (int64_t ir = ith; ir < nr; ir += nth) {
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const double x = AT1(a, i0, ir);
            AT1(dst, i0, ir) = (float) ((double) AT1(b, i0, ir) * x_deriv(kind, x, p));
        }
    }
}

static void x_gelu_back(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith,
                        int nth, void * ud) {
    (void) ud;
    x_deriv_rows(X_D_GELU, dst, a, b, ith, nth, 0.0f);
}

static void x_gelu_quick_back(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                              int ith, int nth, void * ud) {
    (void) ud;
    x_deriv_rows(X_D_GELU_QUICK, dst, a, b, ith, nth, 0.0f);
}

static void x_elu_back(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith,
                       int nth, void * ud) {
    (void) ud;
    x_deriv_rows(X_D_ELU, dst, a, b, ith, nth, 0.0f);
}

static void x_leaky_back(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith,
                         int nth, void * ud) {
    x_deriv_rows(X_D_LEAKY, dst, a, b, ith, nth, x_bits_f32(ud));
}

// CLAMP: dy where the input lay inside (min, max). ggml_clamp works in place, so a holds the
// clamped values: an element strictly inside the bounds was not clipped. a = x, b = dy,
// userdata = the two float bounds.
static void x_clamp_back(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith,
                         int nth, void * ud) {
    const uint64_t u = (uint64_t) (uintptr_t) ud;
    const float lo = x_bits_f32((void *) (uintptr_t) (uint32_t) u);
    const float hi = x_bits_f32((void *) (uintptr_t) (uint32_t) (u >> 32));
    const int64_t nr = ggml_nrows(dst);
    for (int64_t ir = ith; ir < nr; ir += nth) {
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const float x = AT1(a, i0, ir);
            AT1(dst, i0, ir) = x > lo && x < hi ? AT1(b, i0, ir) : 0.0f;
        }
    }
}

// NORM: with y = (x - mean) * r, r = 1/sqrt(var + eps) per row:
// dx = r * (dy - mean(dy) - y * mean(dy * y)); a = x, b = dy, userdata = eps
static void x_norm_back(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith,
                        int nth, void * ud) {
    const double eps = x_bits_f32(ud);
    const int64_t nr = ggml_nrows(dst), n = dst->ne[0];
    for (int64_t ir = ith; ir < nr; ir += nth) {
        double mean = 0.0;
        for (int64_t i0 = 0; i0 < n; i0++) {
            mean += AT1(a, i0, ir);
        }
        mean /= (double) n;
        double var = 0.0;
        for (int64_t i0 = 0; i0 < n; i0++) {
            const double d = AT1(a, i0, ir) - mean;
            var += d * d;
        }
        const double r = 1.0 / sqrt(var / (double) n + eps);
        double mg = 0.0, mgy = 0.0;
        for (int64_t i0 = 0; i0 < n; i0++) {
            const double gv = AT1(b, i0, ir);
            mg += gv;
            mgy += gv * (AT1(a, i0, ir) - mean) * r;
        }
        mg /= (double) n;
        mgy /= (double) n;
        for (int64_t i0 = 0; i0 < n; i0++) {
            const double y = (AT1(a, i0, ir) - mean) * r;
            AT1(dst, i0, ir) = (float) (r * ((double) AT1(b, i0, ir) - mg - y * mgy));
        }
    }
}

static struct ggml_tensor * x_custom2(struct x_grad_state * st, struct ggml_tensor * x, struct ggml_tensor * g,
                                      ggml_custom2_op_t fun, void * ud) {
    if (x->type != GGML_TYPE_F32 || g->type != GGML_TYPE_F32) {
        ggml_x_error(st->ctx, "ggml_build_backward_expand: this gradient needs F32 tensors ('%s')", x->name);
        return NULL;
    }
    return ggml_map_custom2(st->ctx, x, g, fun, GGML_N_TASKS_MAX, ud);
}

bool x_backward_unary_extra(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g) {
    struct ggml_tensor * a = t->src[0];
    switch (ggml_get_unary_op(t)) {
        case GGML_UNARY_OP_GELU:
            return x_grad_add(st, a, x_custom2(st, a, g, x_gelu_back, NULL));
        case GGML_UNARY_OP_GELU_QUICK:
            return x_grad_add(st, a, x_custom2(st, a, g, x_gelu_quick_back, NULL));
        case GGML_UNARY_OP_ELU:
            return x_grad_add(st, a, x_custom2(st, a, g, x_elu_back, NULL));
        default:
            ggml_x_error(st->ctx, "ggml_build_backward_expand: unary op %d has no backward pass (node '%s')",
                         (int) ggml_get_unary_op(t), t->name);
            return false;
    }
}

// MUL_MAT_ID routing mask: dst [1, R] F32 = 1 where ids[id, r] == expert, else 0 (a = a
// template of dst's shape, b = ids; userdata = id | expert << 32)
static void x_expert_mask(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith,
                          int nth, void * ud) {
    (void) a;
    const uint64_t u = (uint64_t) (uintptr_t) ud;
    const int64_t id = (int64_t) (uint32_t) u, expert = (int64_t) (uint32_t) (u >> 32);
    for (int64_t r = ith; r < dst->ne[1]; r += nth) {
        const int32_t e = *(const int32_t *) ((const char *) b->data + id * b->nb[0] + r * b->nb[1]);
        *(float *) ((char *) dst->data + r * dst->nb[1]) = e == expert ? 1.0f : 0.0f;
    }
}

// MUL_MAT_ID: row r of the result is as[e]^T b_r with e = ids[id, r]. With m_e the 0/1 mask
// of the rows routed to expert e: d as[e] = out_prod(b, g * m_e), d b = sum_e as[e] (g * m_e).
static bool x_backward_mul_mat_id(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g) {
    struct ggml_context * ctx = st->ctx;
    struct ggml_tensor * ids = t->src[0];
    struct ggml_tensor * b = t->src[1];
    const int id = ggml_x_get_op_params_i32(t, 0), n_as = ggml_x_get_op_params_i32(t, 1);
    if (sizeof(void *) < 8) {
        ggml_x_error(ctx, "ggml_build_backward_expand: the mul_mat_id gradient needs a 64-bit platform");
        return false;
    }
    struct ggml_tensor * gd = x_dense(st, g);
    struct ggml_tensor * db = NULL;
    for (int e = 0; e < n_as; e++) {
        struct ggml_tensor * a = t->src[2 + e];
        const bool need_a = a->grad != NULL;
        const bool need_b = b->grad != NULL;
        if (!need_a && !need_b) {
            continue;
        }
        if (need_b && a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16) {
            ggml_x_error(ctx, "ggml_build_backward_expand: mul_mat_id input gradient needs F32/F16 experts ('%s')", a->name);
            return false;
        }
        struct ggml_tensor * tmpl = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 1, b->ne[1]);
        if (tmpl == NULL) {
            return false;
        }
        const uint64_t ud = (uint64_t) (uint32_t) id | (uint64_t) (uint32_t) e << 32;
        struct ggml_tensor * mask = ggml_map_custom2(ctx, tmpl, ids, x_expert_mask, GGML_N_TASKS_MAX, (void *) (uintptr_t) ud);
        struct ggml_tensor * ge = mask ? ggml_mul(ctx, gd, mask) : NULL; // [M, R], rows of other experts zeroed
        if (ge == NULL) {
            return false;
        }
        if (need_a && !x_grad_add(st, a, ggml_out_prod(ctx, b, ge))) {
            return false;
        }
        if (need_b) {
            struct ggml_tensor * part = ggml_mul_mat(ctx, ggml_cont(ctx, ggml_transpose(ctx, a)), ge);
            db = db == NULL ? part : ggml_add(ctx, db, part);
            if (db == NULL) {
                return false;
            }
        }
    }
    return db == NULL || x_grad_add(st, b, db);
}

// grad of the product a (x) b: out[i, j] = sum_k a[i, k] b[j, k]
static bool x_backward_out_prod(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g) {
    struct ggml_context * ctx = st->ctx;
    struct ggml_tensor * a = t->src[0];
    struct ggml_tensor * b = t->src[1];
    if (a->ne[2] != b->ne[2] || a->ne[3] != b->ne[3]) {
        ggml_x_error(ctx, "ggml_build_backward_expand: out_prod gradients need equal dims 2 and 3 (node '%s')", t->name);
        return false;
    }
    if (a->grad && !x_grad_add(st, a, ggml_mul_mat(ctx, ggml_cont(ctx, ggml_transpose(ctx, g)), b))) {
        return false;
    }
    return !b->grad || x_grad_add(st, b, ggml_mul_mat(ctx, x_dense(st, g), a));
}

bool x_backward_extra(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g) {
    struct ggml_context * ctx = st->ctx;
    struct ggml_tensor * a = t->src[0];
    struct ggml_tensor * b = t->src[1];
    const bool ga = a != NULL && a->grad != NULL;
    const bool gb = b != NULL && b->grad != NULL;
    switch (t->op) {
        case GGML_OP_MEAN:
            return !ga || x_grad_add(st, a, ggml_repeat(ctx, ggml_scale(ctx, g, 1.0f / (float) a->ne[0]), a));
        case GGML_OP_CONCAT: {
            // dim 2: a's slices first, then b's
            struct ggml_tensor * gd = x_dense(st, g);
            if (gd == NULL) {
                return false;
            }
            if (ga && !x_grad_add(st, a, ggml_cont(ctx, ggml_view_4d(ctx, gd, a->ne[0], a->ne[1], a->ne[2], a->ne[3],
                                                                    gd->nb[1], gd->nb[2], gd->nb[3], 0)))) {
                return false;
            }
            return !gb || x_grad_add(st, b, ggml_cont(ctx, ggml_view_4d(ctx, gd, b->ne[0], b->ne[1], b->ne[2], b->ne[3],
                                                                       gd->nb[1], gd->nb[2], gd->nb[3],
                                                                       (size_t) a->ne[2] * gd->nb[2])));
        }
        case GGML_OP_NORM:
            return !ga || x_grad_add(st, a, x_custom2(st, a, x_dense(st, g), x_norm_back,
                                                      x_f32_bits(ggml_x_get_op_params_f32(t, 0))));
        case GGML_OP_LEAKY_RELU:
            return !ga || x_grad_add(st, a, x_custom2(st, a, g, x_leaky_back, x_f32_bits(ggml_x_get_op_params_f32(t, 0))));
        case GGML_OP_CLAMP: {
            if (!ga) {
                return true;
            }
            if (sizeof(void *) < 8) {
                ggml_x_error(ctx, "ggml_build_backward_expand: the clamp gradient needs a 64-bit platform");
                return false;
            }
            const uint64_t lo = (uint32_t) (uintptr_t) x_f32_bits(ggml_x_get_op_params_f32(t, 0));
            const uint64_t hi = (uint32_t) (uintptr_t) x_f32_bits(ggml_x_get_op_params_f32(t, 1));
            return x_grad_add(st, a, x_custom2(st, a, g, x_clamp_back, (void *) (uintptr_t) (lo | hi << 32)));
        }
        case GGML_OP_OUT_PROD:
            return x_backward_out_prod(st, t, g);
        case GGML_OP_MUL_MAT_ID:
            return x_backward_mul_mat_id(st, t, g);
        case GGML_OP_MAP_CUSTOM1:
        case GGML_OP_MAP_CUSTOM2:
        case GGML_OP_MAP_CUSTOM3:
            return x_backward_custom(st, t, g);
        default:
            ggml_x_error(ctx, "ggml_build_backward_expand: op %s has no backward pass (node '%s')", ggml_op_desc(t),
                         t->name);
            return false;
    }
}
