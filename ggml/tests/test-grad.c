// test-grad.c - finite-difference checks of every backward pass (autodiff.c, autodiff-extra.c).
//
// For each case: params x (F32, random, away from kinks where the op has one), y = op(x), loss
// f = sum(y * w) with a fixed random w (or the op's own scalar loss). The analytic gradient comes
// from ggml_build_backward_expand; the numeric one is the central difference
// (f(x + h) - f(x - h)) / 2h per element, with f summed in double from the computed y. A case
// fails when any element differs by more than ATOL + RTOL * |numeric|.
//
// The checker itself is tested: test_checker_detects_wrong_gradients corrupts a correct backward
// graph in three ways (the sin sign of ROPE_BACK, swapped operands of SOFT_MAX_BACK, a gradient
// scaled by 1.1) and asserts that the checker reports each one.

#include "ggml.h"
#include "testing.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define FD_H    1e-3
// SOFT_MAX evaluates exp through fp16 (as the reference's table does): its forward is a staircase
// at the 1e-3 scale, so those cases difference over a wider step
#define FD_H_F16 3e-2
#define FD_RTOL 2e-2
#define FD_ATOL 2e-3
#define MAX_P   8

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;

static float urand(float lo, float hi) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return lo + (hi - lo) * (float) ((g_rng >> 40) / (double) (1 << 24));
}

struct gcase {
    struct ggml_context * ctx;
    struct ggml_tensor * params[MAX_P];
    int n_params;
    bool away_from_zero; // kinked ops: |x| >= 0.1
};

static struct ggml_tensor * new_f32(struct ggml_context * ctx, int64_t n0, int64_t n1, int64_t n2, int64_t n3,
                                    float lo, float hi) {
    struct ggml_tensor * t = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n0, n1, n2, n3);
    float * d = (float *) t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        d[i] = urand(lo, hi);
    }
    return t;
}

// a param in [lo, hi) (|x| >= 0.1 when the case asks for it)
static struct ggml_tensor * P(struct gcase * c, int64_t n0, int64_t n1, int64_t n2, int64_t n3, float lo, float hi) {
    struct ggml_tensor * t = new_f32(c->ctx, n0, n1, n2, n3, lo, hi);
    if (c->away_from_zero) {
        float * d = (float *) t->data;
        for (int64_t i = 0; i < ggml_nelements(t); i++) {
            if (fabsf(d[i]) < 0.1f) {
                d[i] = d[i] < 0 ? d[i] - 0.1f : d[i] + 0.1f;
            }
        }
    }
    ggml_set_param(c->ctx, t);
    c->params[c->n_params++] = t;
    return t;
}

#define PU(c, n0, n1, n2, n3) P(c, n0, n1, n2, n3, -1.0f, 1.0f)

typedef struct ggml_tensor * (*build_fn)(struct gcase * c);
typedef void (*perturb_fn)(struct ggml_cgraph * gb, struct gcase * c);

struct fd_result {
    int n_checked;
    int n_bad;
    double max_err; // max |num - ana| / (ATOL + RTOL |num|)
};

static double loss_of(const struct ggml_tensor * y, const struct ggml_tensor * w) {
    double f = 0.0;
    const int64_t n = ggml_nelements(y);
    for (int64_t i = 0; i < n; i++) {
        f += (double) ((const float *) y->data)[i] * (w ? (double) ((const float *) w->data)[i] : 1.0);
    }
    return f;
}

static struct fd_result fd_check(const char * name, build_fn build, bool kinked, perturb_fn perturb, double h) {
    struct fd_result r = { 0, 0, 0.0 };
    struct ggml_init_params ip = { 64 * 1024 * 1024, NULL, false };
    struct gcase c;
    memset(&c, 0, sizeof(c));
    c.ctx = ggml_init(ip);
    c.away_from_zero = kinked;
    struct ggml_tensor * y = build(&c);
    T_CHECK_MSG(y != NULL && c.n_params > 0, "%s: build failed", name);
    if (y == NULL || c.n_params == 0) {
        ggml_free(c.ctx);
        return r;
    }
    if (!ggml_is_contiguous(y)) {
        y = ggml_cont(c.ctx, y);
    }
    struct ggml_tensor * w = NULL;
    struct ggml_tensor * loss = y;
    if (ggml_nelements(y) != 1) {
        w = new_f32(c.ctx, y->ne[0], y->ne[1], y->ne[2], y->ne[3], -1.0f, 1.0f);
        loss = ggml_sum(c.ctx, ggml_mul(c.ctx, y, w));
    }
    struct ggml_cgraph * gf = ggml_new_graph_custom(c.ctx, 4096, true);
    ggml_build_forward_expand(gf, loss);
    struct ggml_cgraph * gb = ggml_graph_dup(c.ctx, gf);
    ggml_build_backward_expand(c.ctx, gf, gb, false);
    T_CHECK_MSG(loss->grad != NULL, "%s: loss has no gradient", name);
    if (perturb) {
        perturb(gb, &c);
    }
    ggml_graph_reset(gf);
    *(float *) loss->grad->data = 1.0f;
    ggml_graph_compute_with_ctx(c.ctx, gb, 2);

    for (int p = 0; p < c.n_params; p++) {
        struct ggml_tensor * x = c.params[p];
        struct ggml_tensor * g = x->grad;
        T_CHECK_MSG(g != NULL && ggml_is_contiguous(g), "%s: param %d has no dense gradient", name, p);
        if (g == NULL || !ggml_is_contiguous(g)) {
            continue;
        }
        const int64_t n = ggml_nelements(x);
        float * ana = malloc((size_t) n * sizeof(float));
        memcpy(ana, g->data, (size_t) n * sizeof(float));
        float * xd = (float *) x->data;
        for (int64_t i = 0; i < n; i++) {
            const float x0 = xd[i];
            xd[i] = x0 + (float) h;
            ggml_graph_compute_with_ctx(c.ctx, gf, 2);
            const double fp = loss_of(y, w);
            xd[i] = x0 - (float) h;
            ggml_graph_compute_with_ctx(c.ctx, gf, 2);
            const double fm = loss_of(y, w);
            xd[i] = x0;
            const double num = (fp - fm) / (2 * h);
            const double err = fabs(num - (double) ana[i]) / (FD_ATOL + FD_RTOL * fabs(num));
            r.n_checked++;
            if (err > r.max_err) {
                r.max_err = err;
            }
            if (err > 1.0) {
                if (r.n_bad < 3 && !perturb) {
                    fprintf(stderr, "  %s: param %d element %lld: analytic %.6g, numeric %.6g\n", name, p,
                            (long long) i, (double) ana[i], num);
                }
                r.n_bad++;
            }
        }
        free(ana);
    }
    ggml_free(c.ctx);
    return r;
}

// ---------------------------------------------------------------------------------------------
// cases

static struct ggml_tensor * b_dup(struct gcase * c) { return ggml_dup(c->ctx, PU(c, 5, 3, 2, 1)); }
static struct ggml_tensor * b_add(struct gcase * c) { return ggml_add(c->ctx, PU(c, 5, 3, 2, 1), PU(c, 5, 3, 2, 1)); }
static struct ggml_tensor * b_add_bcast(struct gcase * c) { return ggml_add(c->ctx, PU(c, 6, 4, 2, 1), PU(c, 3, 1, 2, 1)); }
// the loss itself adds x to x: both contributions reach x through the loss's own gradient
static struct ggml_tensor * b_add_self_scalar(struct gcase * c) {
    struct ggml_tensor * x = PU(c, 1, 1, 1, 1);
    return ggml_add(c->ctx, x, x);
}
static struct ggml_tensor * b_add1(struct gcase * c) { return ggml_add1(c->ctx, PU(c, 5, 4, 1, 1), PU(c, 1, 1, 1, 1)); }
static struct ggml_tensor * b_sub_bcast(struct gcase * c) { return ggml_sub(c->ctx, PU(c, 4, 6, 1, 1), PU(c, 4, 2, 1, 1)); }
static struct ggml_tensor * b_mul_bcast(struct gcase * c) { return ggml_mul(c->ctx, PU(c, 6, 4, 2, 1), PU(c, 6, 1, 2, 1)); }
static struct ggml_tensor * b_div_bcast(struct gcase * c) {
    return ggml_div(c->ctx, PU(c, 6, 4, 1, 1), P(c, 3, 4, 1, 1, 0.5f, 2.0f));
}
static struct ggml_tensor * b_sqr(struct gcase * c) { return ggml_sqr(c->ctx, PU(c, 7, 3, 1, 1)); }
static struct ggml_tensor * b_sqrt(struct gcase * c) { return ggml_sqrt(c->ctx, P(c, 7, 3, 1, 1, 0.2f, 2.0f)); }
static struct ggml_tensor * b_log(struct gcase * c) { return ggml_log(c->ctx, P(c, 7, 3, 1, 1, 0.2f, 2.0f)); }
static struct ggml_tensor * b_sum(struct gcase * c) {
    struct ggml_tensor * x = PU(c, 5, 4, 1, 1);
    return ggml_add(c->ctx, ggml_repeat(c->ctx, ggml_sum(c->ctx, x), x), ggml_sqr(c->ctx, x));
}
static struct ggml_tensor * b_sum_rows(struct gcase * c) { return ggml_sum_rows(c->ctx, PU(c, 6, 3, 2, 1)); }
static struct ggml_tensor * b_mean(struct gcase * c) { return ggml_sqr(c->ctx, ggml_mean(c->ctx, PU(c, 6, 3, 2, 1))); }
static struct ggml_tensor * b_repeat(struct gcase * c) {
    struct ggml_tensor * x = PU(c, 3, 2, 1, 1);
    return ggml_repeat(c->ctx, x, ggml_new_tensor_4d(c->ctx, GGML_TYPE_F32, 6, 4, 3, 1));
}
static struct ggml_tensor * b_repeat_back(struct gcase * c) {
    return ggml_repeat_back(c->ctx, PU(c, 6, 4, 2, 1), ggml_new_tensor_4d(c->ctx, GGML_TYPE_F32, 3, 2, 1, 1));
}
static struct ggml_tensor * b_concat(struct gcase * c) { return ggml_concat(c->ctx, PU(c, 4, 3, 2, 1), PU(c, 4, 3, 3, 1)); }
static struct ggml_tensor * b_norm(struct gcase * c) { return ggml_norm(c->ctx, PU(c, 8, 3, 2, 1), 1e-5f); }
static struct ggml_tensor * b_rms_norm(struct gcase * c) { return ggml_rms_norm(c->ctx, PU(c, 8, 3, 2, 1), 1e-5f); }
static struct ggml_tensor * b_mul_mat(struct gcase * c) { return ggml_mul_mat(c->ctx, PU(c, 5, 4, 2, 1), PU(c, 5, 3, 2, 1)); }
static struct ggml_tensor * b_mul_mat_bcast(struct gcase * c) {
    // src0 has 2 batches in dim 2 (not only 1): the reference sums its gradient wrongly here
    return ggml_mul_mat(c->ctx, PU(c, 5, 4, 2, 1), PU(c, 5, 3, 4, 2));
}
static struct ggml_tensor * b_out_prod(struct gcase * c) { return ggml_out_prod(c->ctx, PU(c, 4, 5, 1, 1), PU(c, 3, 5, 1, 1)); }
static struct ggml_tensor * b_scale(struct gcase * c) { return ggml_scale(c->ctx, PU(c, 5, 3, 1, 1), 0.7f); }
static struct ggml_tensor * b_set(struct gcase * c) {
    struct ggml_tensor * a = PU(c, 8, 5, 3, 1);
    struct ggml_tensor * b = PU(c, 3, 2, 2, 1); // spans two slices of dim 2
    return ggml_set(c->ctx, a, b, a->nb[1], a->nb[2], a->nb[3], 2 * a->nb[0] + a->nb[1]);
}
static struct ggml_tensor * b_acc(struct gcase * c) {
    struct ggml_tensor * a = PU(c, 8, 5, 3, 1);
    struct ggml_tensor * b = PU(c, 3, 2, 2, 1);
    return ggml_acc(c->ctx, a, b, a->nb[1], a->nb[2], a->nb[3], a->nb[0] + 2 * a->nb[1]);
}
static struct ggml_tensor * b_cpy(struct gcase * c) {
    struct ggml_tensor * x = ggml_permute(c->ctx, PU(c, 4, 3, 2, 1), 1, 0, 2, 3);
    return ggml_cpy(c->ctx, x, ggml_new_tensor_4d(c->ctx, GGML_TYPE_F32, 3, 4, 2, 1));
}
static struct ggml_tensor * b_cont_reshape(struct gcase * c) {
    struct ggml_tensor * x = ggml_transpose(c->ctx, PU(c, 4, 6, 1, 1));
    return ggml_reshape_2d(c->ctx, ggml_cont(c->ctx, x), 8, 3);
}
static struct ggml_tensor * b_view(struct gcase * c) {
    struct ggml_tensor * x = PU(c, 7, 5, 2, 1);
    return ggml_view_3d(c->ctx, x, 3, 2, 2, x->nb[1], x->nb[2], x->nb[0] + x->nb[1]);
}
static struct ggml_tensor * b_permute(struct gcase * c) {
    return ggml_cont(c->ctx, ggml_permute(c->ctx, PU(c, 4, 3, 2, 2), 2, 0, 3, 1));
}
static struct ggml_tensor * b_get_rows(struct gcase * c) {
    struct ggml_tensor * x = PU(c, 5, 6, 1, 1);
    struct ggml_tensor * idx = ggml_new_tensor_1d(c->ctx, GGML_TYPE_I32, 7);
    const int32_t rows[7] = { 0, 3, 3, 5, 1, 0, 3 };
    memcpy(idx->data, rows, sizeof(rows));
    return ggml_get_rows(c->ctx, x, idx);
}
static struct ggml_tensor * b_diag_mask_inf(struct gcase * c) {
    return ggml_soft_max(c->ctx, ggml_diag_mask_inf(c->ctx, PU(c, 6, 5, 2, 1), 1));
}
static struct ggml_tensor * b_diag_mask_zero(struct gcase * c) { return ggml_diag_mask_zero(c->ctx, PU(c, 6, 5, 2, 1), 1); }
static struct ggml_tensor * b_soft_max(struct gcase * c) { return ggml_soft_max(c->ctx, PU(c, 7, 4, 2, 1)); }
static struct ggml_tensor * b_soft_max_ext(struct gcase * c) {
    // scale != 1 and a mask that is a param: the reference ignores both in its gradient
    return ggml_soft_max_ext(c->ctx, PU(c, 7, 4, 2, 1), PU(c, 7, 4, 1, 1), 0.6f);
}
static struct ggml_tensor * rope_pos(struct gcase * c, int n) {
    struct ggml_tensor * pos = ggml_new_tensor_1d(c->ctx, GGML_TYPE_I32, n);
    for (int i = 0; i < n; i++) {
        ((int32_t *) pos->data)[i] = 3 * i + 1;
    }
    return pos;
}
static struct ggml_tensor * b_rope(struct gcase * c) { return ggml_rope(c->ctx, PU(c, 8, 2, 3, 1), rope_pos(c, 3), 8, 0, 0); }
static struct ggml_tensor * b_rope_neox(struct gcase * c) {
    return ggml_rope_custom(c->ctx, PU(c, 10, 2, 3, 1), rope_pos(c, 3), 6, 2, 0, 64, 5000.0f, 0.5f, 1.0f, 1.0f, 32.0f, 1.0f);
}
static struct ggml_tensor * b_rope_back(struct gcase * c) {
    return ggml_rope_back(c->ctx, PU(c, 8, 2, 3, 1), rope_pos(c, 3), 8, 0, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.0f, false);
}
static struct ggml_tensor * b_flash_attn(struct gcase * c) {
    return ggml_flash_attn(c->ctx, PU(c, 4, 3, 4, 1), PU(c, 4, 5, 2, 1), PU(c, 5, 4, 2, 1), true);
}
static struct ggml_tensor * b_cross_entropy(struct gcase * c) {
    // targets that do not sum to 1 per row: the reference's gradient assumes they do
    struct ggml_tensor * t = new_f32(c->ctx, 6, 3, 1, 1, 0.05f, 1.0f);
    return ggml_cross_entropy_loss(c->ctx, P(c, 6, 3, 1, 1, -2.0f, 2.0f), t);
}
static struct ggml_tensor * b_abs(struct gcase * c) { return ggml_abs(c->ctx, PU(c, 6, 3, 1, 1)); }
static struct ggml_tensor * b_sgn(struct gcase * c) {
    struct ggml_tensor * x = PU(c, 6, 3, 1, 1);
    return ggml_add(c->ctx, x, ggml_sgn(c->ctx, x));
}
static struct ggml_tensor * b_neg(struct gcase * c) { return ggml_neg(c->ctx, PU(c, 6, 3, 1, 1)); }
static struct ggml_tensor * b_step(struct gcase * c) {
    struct ggml_tensor * x = PU(c, 6, 3, 1, 1);
    return ggml_add(c->ctx, x, ggml_step(c->ctx, x));
}
static struct ggml_tensor * b_relu(struct gcase * c) { return ggml_relu(c->ctx, PU(c, 6, 3, 1, 1)); }
static struct ggml_tensor * b_silu(struct gcase * c) { return ggml_silu(c->ctx, P(c, 6, 3, 1, 1, -3.0f, 3.0f)); }
static struct ggml_tensor * b_tanh(struct gcase * c) { return ggml_tanh(c->ctx, P(c, 6, 3, 1, 1, -2.0f, 2.0f)); }
static struct ggml_tensor * b_gelu(struct gcase * c) { return ggml_gelu(c->ctx, P(c, 6, 3, 1, 1, -3.0f, 3.0f)); }
static struct ggml_tensor * b_gelu_quick(struct gcase * c) { return ggml_gelu_quick(c->ctx, P(c, 6, 3, 1, 1, -3.0f, 3.0f)); }
static struct ggml_tensor * b_elu(struct gcase * c) { return ggml_elu(c->ctx, P(c, 6, 3, 1, 1, -2.0f, 2.0f)); }
static struct ggml_tensor * b_leaky_relu(struct gcase * c) { return ggml_leaky_relu(c->ctx, PU(c, 6, 3, 1, 1), 0.1f, false); }
static struct ggml_tensor * b_clamp(struct gcase * c) {
    // ggml_clamp works in place: clamp a copy so the param keeps its values
    return ggml_clamp(c->ctx, ggml_scale(c->ctx, PU(c, 6, 3, 1, 1), 1.0f), -0.5f, 0.45f);
}
static struct ggml_tensor * b_mlp(struct gcase * c) {
    struct ggml_tensor * w1 = P(c, 5, 7, 1, 1, -0.5f, 0.5f);
    struct ggml_tensor * b1 = P(c, 7, 1, 1, 1, -0.5f, 0.5f);
    struct ggml_tensor * w2 = P(c, 7, 4, 1, 1, -0.5f, 0.5f);
    struct ggml_tensor * x = new_f32(c->ctx, 5, 3, 1, 1, -1.0f, 1.0f);
    struct ggml_tensor * t = new_f32(c->ctx, 4, 3, 1, 1, 0.0f, 1.0f);
    struct ggml_tensor * h = ggml_add(c->ctx, ggml_mul_mat(c->ctx, w1, x), b1); // broadcast add
    h = ggml_gelu(c->ctx, ggml_norm(c->ctx, h, 1e-5f));
    return ggml_cross_entropy_loss(c->ctx, ggml_mul_mat(c->ctx, w2, h), t);
}

// a custom op y = a * b^3 with its user gradient: da = g b^3, db = 3 g a b^2
static void k_cube_mul(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith,
                       int nth, void * ud) {
    (void) ud;
    const int64_t n = ggml_nelements(dst);
    for (int64_t i = ith; i < n; i += nth) {
        const float bv = ((const float *) b->data)[i];
        ((float *) dst->data)[i] = ((const float *) a->data)[i] * bv * bv * bv;
    }
}

static void k_cube_mul_grad(struct ggml_context * ctx, struct ggml_tensor * node, struct ggml_tensor * grad,
                            struct ggml_tensor ** src_grads, void * ud) {
    (void) ud;
    struct ggml_tensor * a = node->src[0];
    struct ggml_tensor * b = node->src[1];
    struct ggml_tensor * b2 = ggml_sqr(ctx, b);
    src_grads[0] = ggml_mul(ctx, grad, ggml_mul(ctx, b2, b));
    src_grads[1] = ggml_scale(ctx, ggml_mul(ctx, grad, ggml_mul(ctx, a, b2)), 3.0f);
}

static struct ggml_tensor * b_custom(struct gcase * c) {
    struct ggml_tensor * y = ggml_map_custom2(c->ctx, PU(c, 5, 3, 1, 1), PU(c, 5, 3, 1, 1), k_cube_mul, GGML_N_TASKS_MAX, NULL);
    ggml_x_map_custom_set_grad(y, k_cube_mul_grad, NULL);
    return y;
}

static struct ggml_tensor * b_mul_mat_id(struct gcase * c) {
    struct ggml_tensor * as[3] = { PU(c, 4, 3, 1, 1), PU(c, 4, 3, 1, 1), PU(c, 4, 3, 1, 1) };
    struct ggml_tensor * b = PU(c, 4, 5, 1, 1);
    struct ggml_tensor * ids = ggml_new_tensor_2d(c->ctx, GGML_TYPE_I32, 2, 5);
    const int32_t v[10] = { 2, 0, 0, 1, 2, 2, 1, 0, 0, 0 }; // id 1 column: 0, 1, 2, 0, 0
    memcpy(ids->data, v, sizeof(v));
    return ggml_mul_mat_id(c->ctx, as, 3, ids, 1, b);
}

struct named_case {
    const char * name;
    build_fn build;
    bool kinked;
    bool f16_exp; // the forward goes through fp16 exp: difference over FD_H_F16
};

static const struct named_case k_cases[] = {
    { "DUP", b_dup, false, false }, { "ADD", b_add, false, false }, { "ADD broadcast", b_add_bcast, false, false },
    { "ADD1", b_add1, false, false },
    { "ADD x+x (scalar loss)", b_add_self_scalar, false, false }, { "SUB broadcast", b_sub_bcast, false, false }, { "MUL broadcast", b_mul_bcast, false, false },
    { "DIV broadcast", b_div_bcast, false, false }, { "SQR", b_sqr, false, false }, { "SQRT", b_sqrt, false, false },
    { "LOG", b_log, false, false }, { "SUM", b_sum, false, false }, { "SUM_ROWS", b_sum_rows, false, false }, { "MEAN", b_mean, false, false },
    { "REPEAT", b_repeat, false, false }, { "REPEAT_BACK", b_repeat_back, false, false }, { "CONCAT", b_concat, false, false },
    { "NORM", b_norm, false, false }, { "RMS_NORM", b_rms_norm, false, false }, { "MUL_MAT", b_mul_mat, false, false },
    { "MUL_MAT broadcast", b_mul_mat_bcast, false, false }, { "OUT_PROD", b_out_prod, false, false }, { "SCALE", b_scale, false, false },
    { "SET", b_set, false, false }, { "ACC", b_acc, false, false }, { "CPY", b_cpy, false, false }, { "CONT+RESHAPE+TRANSPOSE", b_cont_reshape, false, false },
    { "VIEW", b_view, false, false }, { "PERMUTE", b_permute, false, false }, { "GET_ROWS", b_get_rows, false, false },
    { "DIAG_MASK_INF", b_diag_mask_inf, false, true }, { "DIAG_MASK_ZERO", b_diag_mask_zero, false, false },
    { "SOFT_MAX", b_soft_max, false, true }, { "SOFT_MAX ext (scale, mask)", b_soft_max_ext, false, true },
    { "ROPE", b_rope, false, false }, { "ROPE neox yarn", b_rope_neox, false, false }, { "ROPE_BACK", b_rope_back, false, false },
    { "FLASH_ATTN", b_flash_attn, false, false }, { "CROSS_ENTROPY_LOSS", b_cross_entropy, false, false },
    { "ABS", b_abs, true, false }, { "SGN", b_sgn, true, false }, { "NEG", b_neg, false, false }, { "STEP", b_step, true, false },
    { "RELU", b_relu, true, false }, { "SILU", b_silu, false, false }, { "TANH", b_tanh, false, false }, { "GELU", b_gelu, false, false },
    { "GELU_QUICK", b_gelu_quick, false, false }, { "ELU", b_elu, true, false }, { "LEAKY_RELU", b_leaky_relu, true, false },
    { "CLAMP", b_clamp, true, false }, { "MAP_CUSTOM2 (user gradient)", b_custom, false, false },
    { "MUL_MAT_ID", b_mul_mat_id, false, false }, { "MLP (norm, gelu, broadcast add, cross entropy)", b_mlp, false, false },
};

static void test_every_backward_matches_finite_differences(void) {
    for (size_t i = 0; i < sizeof(k_cases) / sizeof(k_cases[0]); i++) {
        const struct fd_result r = fd_check(k_cases[i].name, k_cases[i].build, k_cases[i].kinked, NULL,
                                            k_cases[i].f16_exp ? FD_H_F16 : FD_H);
        T_CHECK_MSG(r.n_checked > 0 && r.n_bad == 0, "%s: %d of %d gradient elements off (worst %.3g x tolerance)",
                    k_cases[i].name, r.n_bad, r.n_checked, r.max_err);
        printf("     %-48s %4d elements, worst error %.3f x tolerance\n", k_cases[i].name, r.n_checked, r.max_err);
    }
}

// --- corruptions of a correct backward graph -------------------------------------------------

static void perturb_rope_back_sign(struct ggml_cgraph * gb, struct gcase * c) {
    (void) c;
    for (int i = 0; i < gb->n_nodes; i++) {
        if (gb->nodes[i]->op == GGML_OP_ROPE_BACK) {
            gb->nodes[i]->op = GGML_OP_ROPE; // same params, sines not negated
        }
    }
}

static void perturb_soft_max_back_operands(struct ggml_cgraph * gb, struct gcase * c) {
    (void) c;
    for (int i = 0; i < gb->n_nodes; i++) {
        struct ggml_tensor * t = gb->nodes[i];
        if (t->op == GGML_OP_SOFT_MAX_BACK) {
            struct ggml_tensor * s = t->src[0];
            t->src[0] = t->src[1];
            t->src[1] = s;
        }
    }
}

static void perturb_scale_first_param_grad(struct ggml_cgraph * gb, struct gcase * c) {
    struct ggml_tensor * g = c->params[0]->grad;
    struct ggml_tensor * s = ggml_scale(c->ctx, g, 1.1f);
    ggml_build_forward_expand(gb, s);
    c->params[0]->grad = s;
}

static void test_checker_detects_wrong_gradients(void) {
    struct fd_result r = fd_check("ROPE (sin sign flipped)", b_rope, false, perturb_rope_back_sign, FD_H);
    T_CHECK_MSG(r.n_bad > 0, "the checker missed a sign error in rope_back (worst %.3g)", r.max_err);
    r = fd_check("SOFT_MAX (soft_max_back operands swapped)", b_soft_max, false, perturb_soft_max_back_operands, FD_H_F16);
    T_CHECK_MSG(r.n_bad > 0, "the checker missed swapped soft_max_back operands (worst %.3g)", r.max_err);
    r = fd_check("MUL_MAT (gradient scaled by 1.1)", b_mul_mat, false, perturb_scale_first_param_grad, FD_H);
    T_CHECK_MSG(r.n_bad > 0, "the checker missed a gradient scaled by 1.1 (worst %.3g)", r.max_err);
}

// gradient checkpointing gives the same gradients as the plain backward graph
static void test_checkpointing_matches_plain_backward(void) {
    struct ggml_init_params ip = { 32 * 1024 * 1024, NULL, false };
    float plain[2][64];
    for (int mode = 0; mode < 2; mode++) {
        g_rng = 12345;
        struct ggml_context * ctx = ggml_init(ip);
        struct gcase c;
        memset(&c, 0, sizeof(c));
        c.ctx = ctx;
        struct ggml_tensor * w1 = P(&c, 6, 6, 1, 1, -0.5f, 0.5f);
        struct ggml_tensor * x = new_f32(ctx, 6, 4, 1, 1, -1.0f, 1.0f);
        struct ggml_tensor * h1 = ggml_tanh(ctx, ggml_mul_mat(ctx, w1, x));
        struct ggml_tensor * h2 = ggml_silu(ctx, ggml_mul_mat(ctx, w1, h1));
        struct ggml_tensor * h3 = ggml_sqr(ctx, ggml_mul_mat(ctx, w1, h2));
        struct ggml_tensor * loss = ggml_sum(ctx, h3);
        struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 1024, true);
        ggml_build_forward_expand(gf, loss);
        struct ggml_cgraph * gb = ggml_new_graph_custom(ctx, 1024, true);
        if (mode == 0) {
            ggml_graph_cpy(gf, gb);
            ggml_build_backward_expand(ctx, gf, gb, true);
        } else {
            struct ggml_cgraph * tmp = ggml_new_graph_custom(ctx, 1024, true);
            struct ggml_tensor * cps[2] = { x, h2 };
            ggml_build_backward_gradient_checkpointing(ctx, gf, gb, tmp, cps, 2);
        }
        ggml_graph_reset(gf);
        ggml_graph_reset(gb);
        *(float *) loss->grad->data = 1.0f;
        ggml_graph_compute_with_ctx(ctx, gb, 2);
        memcpy(plain[mode], w1->grad->data, 36 * sizeof(float));
        ggml_free(ctx);
    }
    for (int i = 0; i < 36; i++) {
        T_NEAR(plain[1][i], plain[0][i], 1e-5);
    }
}

// bad input is reported, not aborted on
static void test_bad_input_is_recoverable(void) {
    ggml_x_set_thread_recoverable(true);
    struct ggml_init_params ip = { 4 * 1024 * 1024, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    ggml_x_set_recoverable(ctx, true);
    struct ggml_tensor * x = new_f32(ctx, 4, 4, 1, 1, -1.0f, 1.0f);
    ggml_set_param(ctx, x);
    struct ggml_tensor * y = ggml_argmax(ctx, x);
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(gf, y);
    struct ggml_cgraph * gb = ggml_graph_dup(ctx, gf);
    ggml_x_clear_error();
    ggml_build_backward_expand(ctx, gf, gb, false);
    T_CHECK(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "ARGMAX") != NULL);
    ggml_x_clear_error();
    struct ggml_cgraph * nograds = ggml_new_graph(ctx);
    ggml_build_forward_expand(nograds, y);
    ggml_build_backward_expand(ctx, nograds, nograds, false);
    T_CHECK(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "grads") != NULL);
    ggml_x_clear_error();
    ggml_graph_reset(nograds);
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    // an in-place op whose gradient needs the input it overwrote
    struct ggml_tensor * xi = new_f32(ctx, 4, 1, 1, 1, -1.0f, 1.0f);
    ggml_set_param(ctx, xi);
    struct ggml_cgraph * gi = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(gi, ggml_sum(ctx, ggml_sqr_inplace(ctx, ggml_scale(ctx, xi, 2.0f))));
    ggml_build_backward_expand(ctx, gi, ggml_graph_dup(ctx, gi), false);
    T_CHECK(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "in place") != NULL);
    ggml_x_clear_error();
    // ... while in-place ops whose gradient does not read the input are fine
    struct ggml_cgraph * gs = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(gs, ggml_sum(ctx, ggml_scale_inplace(ctx, ggml_sqr(ctx, xi), 2.0f)));
    ggml_build_backward_expand(ctx, gs, ggml_graph_dup(ctx, gs), false);
    T_CHECK(ggml_x_last_error() == NULL);
    ggml_x_clear_error();
    // a custom op without a gradient function
    struct ggml_tensor * cy = ggml_map_custom2(ctx, x, x, k_cube_mul, 1, NULL);
    struct ggml_cgraph * gc = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(gc, ggml_sum(ctx, cy));
    ggml_build_backward_expand(ctx, gc, ggml_graph_dup(ctx, gc), false);
    T_CHECK(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "ggml_x_map_custom_set_grad") != NULL);
    ggml_x_clear_error();
    ggml_free(ctx);
    ggml_x_set_thread_recoverable(false);
}

int main(void) {
    T_RUN(test_every_backward_matches_finite_differences);
    T_RUN(test_checker_detects_wrong_gradients);
    T_RUN(test_checkpointing_matches_plain_backward);
    T_RUN(test_bad_input_is_recoverable);
    return T_SUMMARY();
}
