// autodiff.c - reverse-mode automatic differentiation: parameters, gradient tensors attached at
// construction, the backward pass of every differentiable op (ggml_build_backward_expand),
// gradient checkpointing and ggml_graph_reset.
//
// Model (as in the reference): ggml_set_param gives a tensor a gradient tensor; every op result
// whose sources have a gradient gets one too (ggml_x_grad_attach, called by the tensor creation
// helpers of ggml.c). ggml_build_backward_expand walks gf's nodes in reverse; for each node with a
// gradient it adds the node's vector-Jacobian products to its sources' gradients. The gradient
// tensors that exist before (gf->grads, "zero table") are taken to be zero: the first
// contribution replaces them instead of being added. Then every param's final gradient
// expression is expanded into gb.
//
// Where the reference's gradient is mathematically wrong this file computes the right one:
//   * ADD, SUB, MUL, DIV with a broadcast second operand: the gradient is summed back to the
//     operand's shape (the reference cannot build these or keeps the wrong shape);
//   * ADD1: the scalar's gradient is the sum of the output gradient (the reference: the mean);
//   * SOFT_MAX from ggml_soft_max_ext: the scale multiplies the gradient and the mask gets one
//     (the reference ignores both);
//   * MUL_MAT with src0 broadcast over dims 2/3: src0's gradient sums the batches that used each
//     src0 batch (i2 / ratio), not the tiles (i2 % ne02) as the reference does;
//   * CROSS_ENTROPY_LOSS: exact for target rows that do not sum to 1 (see cpu/ops-loss.c).
// Beyond the reference: MEAN, NORM, GELU, GELU_QUICK, TANH, ELU, CONCAT, CLAMP, OUT_PROD,
// LEAKY_RELU (autodiff-extra.c).
//
// Everything reports invalid input through ggml_x_error (recoverable mode: no abort).

#include "autodiff.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

// ---------------------------------------------------------------------------------------------
// gradient attachment

static _Thread_local int ggml_x_grad_suspended = 0;

void ggml_x_grad_suspend(bool suspend) {
    ggml_x_grad_suspended += suspend ? 1 : -1;
}

bool ggml_x_grad_attach(struct ggml_context * ctx, struct ggml_tensor * t) {
    if (t == NULL || t->grad != NULL || ggml_x_grad_suspended > 0) {
        return true;
    }
    bool any = false;
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (t->src[i] != NULL && t->src[i]->grad != NULL) {
            any = true;
            break;
        }
    }
    if (!any) {
        return true;
    }
    t->grad = ggml_dup_tensor(ctx, t);
    return t->grad != NULL;
}

void ggml_set_param(struct ggml_context * ctx, struct ggml_tensor * tensor) {
    if (ctx == NULL || tensor == NULL) {
        ggml_x_error(ctx, "ggml_set_param: NULL %s", ctx == NULL ? "context" : "tensor");
        return;
    }
    tensor->is_param = true;
    if (tensor->grad == NULL) {
        tensor->grad = ggml_dup_tensor(ctx, tensor);
        if (tensor->grad != NULL) {
            ggml_format_name(tensor->grad, "%.50s (grad)", tensor->name);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// pointer set (open addressing) for the zero table and the checkpoint replacements

struct x_ptr_map {
    size_t size; // power of two
    const void ** keys;
    void ** vals;
};

static bool x_map_init(struct x_ptr_map * m, size_t n) {
    size_t size = 16;
    while (size < 2 * n + 1) {
        size *= 2;
    }
    m->size = size;
    m->keys = calloc(size, sizeof(*m->keys));
    m->vals = calloc(size, sizeof(*m->vals));
    return m->keys != NULL && m->vals != NULL;
}

static void x_map_free(struct x_ptr_map * m) {
    free(m->keys);
    free(m->vals);
    m->keys = NULL;
    m->vals = NULL;
}

static size_t x_map_slot(const struct x_ptr_map * m, const void * key) {
    size_t i = ((size_t) (uintptr_t) key >> 4) * 0x9E3779B97F4A7C15ull & (m->size - 1);
    while (m->keys[i] != NULL && m->keys[i] != key) {
        i = (i + 1) & (m->size - 1);
    }
    return i;
}

static bool x_map_has(const struct x_ptr_map * m, const void * key) {
    return key != NULL && m->keys[x_map_slot(m, key)] == key;
}

static void * x_map_get(const struct x_ptr_map * m, const void * key) {
    const size_t i = x_map_slot(m, key);
    return m->keys[i] == key ? m->vals[i] : NULL;
}

// the map never holds more than the n it was sized for (callers guarantee it)
static void x_map_put(struct x_ptr_map * m, const void * key, void * val) {
    const size_t i = x_map_slot(m, key);
    m->keys[i] = key;
    m->vals[i] = val;
}

// ---------------------------------------------------------------------------------------------
// accumulation into a source's gradient

bool x_grad_is_zero(const struct x_grad_state * st, const struct ggml_tensor * src) {
    return !x_map_has(st->touched, src) && x_map_has(st->zero, src->grad);
}

static void x_grad_touch(struct x_grad_state * st, struct ggml_tensor * src) {
    x_map_put(st->touched, src, src);
}

// g (already in src's shape) added to src's gradient
bool x_grad_add(struct x_grad_state * st, struct ggml_tensor * src, struct ggml_tensor * g) {
    if (g == NULL) {
        return false;
    }
    if (!ggml_are_same_shape(g, src->grad)) {
        if (ggml_nelements(g) != ggml_nelements(src->grad)) {
            ggml_x_error(st->ctx, "ggml_build_backward_expand: gradient of '%s' has %lld elements, expected %lld",
                         src->name, (long long) ggml_nelements(g), (long long) ggml_nelements(src->grad));
            return false;
        }
        g = ggml_reshape(st->ctx, x_dense(st, g), src->grad);
        if (g == NULL) {
            return false;
        }
    }
    struct ggml_tensor * r = x_grad_is_zero(st, src) ? g : ggml_add(st->ctx, src->grad, g);
    if (r == NULL) {
        return false;
    }
    src->grad = r;
    x_grad_touch(st, src);
    return true;
}

bool x_grad_sub(struct x_grad_state * st, struct ggml_tensor * src, struct ggml_tensor * g) {
    if (g == NULL) {
        return false;
    }
    if (x_grad_is_zero(st, src)) {
        return x_grad_add(st, src, ggml_neg(st->ctx, g));
    }
    if (!ggml_are_same_shape(g, src->grad)) {
        return x_grad_add(st, src, ggml_neg(st->ctx, g));
    }
    struct ggml_tensor * r = ggml_sub(st->ctx, src->grad, g);
    if (r == NULL) {
        return false;
    }
    src->grad = r;
    x_grad_touch(st, src);
    return true;
}

struct ggml_tensor * x_dense(struct x_grad_state * st, struct ggml_tensor * t) {
    if (t == NULL || ggml_is_contiguous(t)) {
        return t;
    }
    return ggml_cont(st->ctx, t);
}

// g (of a broadcast result's shape) summed back to the shape of `like`
struct ggml_tensor * x_reduce_to(struct x_grad_state * st, struct ggml_tensor * g, const struct ggml_tensor * like) {
    if (g == NULL || ggml_are_same_shape(g, like)) {
        return g;
    }
    return ggml_repeat_back(st->ctx, g, (struct ggml_tensor *) like);
}

// the window (nb1, nb2, nb3, offset) of a gradient, as a dense tensor of b's shape
static struct ggml_tensor * x_window(struct x_grad_state * st, struct ggml_tensor * g, const struct ggml_tensor * b,
                                     size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    g = x_dense(st, g);
    if (g == NULL) {
        return NULL;
    }
    return x_dense(st, ggml_view_4d(st->ctx, g, b->ne[0], b->ne[1], b->ne[2], b->ne[3], nb1, nb2, nb3, offset));
}

// ---------------------------------------------------------------------------------------------
// backward of the ops the reference differentiates

static bool x_backward_mul_mat(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g) {
    struct ggml_context * ctx = st->ctx;
    struct ggml_tensor * a = t->src[0];
    struct ggml_tensor * b = t->src[1];
    if (a->grad) {
        // d a[k, i] = sum_j b[k, j] g[i, j], per batch of b; then the batches that shared one
        // batch of a (b batch i2 uses a batch i2 / r2) are summed
        struct ggml_tensor * ga = ggml_out_prod(ctx, b, g); // [K, M, b2, b3]
        if (ga == NULL) {
            return false;
        }
        const int64_t K = a->ne[0], M = a->ne[1];
        const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
        if (r3 > 1) {
            ga = ggml_reshape_4d(ctx, ga, K * M * b->ne[2], r3, a->ne[3], 1);
            ga = ga ? ggml_repeat_back(ctx, ga, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, K * M * b->ne[2], 1, a->ne[3], 1)) : NULL;
        }
        if (ga != NULL && r2 > 1) {
            ga = ggml_reshape_4d(ctx, ga, K * M, r2, a->ne[2], a->ne[3]);
            ga = ga ? ggml_repeat_back(ctx, ga, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, K * M, 1, a->ne[2], a->ne[3])) : NULL;
        }
        if (ga == NULL || !x_grad_add(st, a, ga)) {
            return false;
        }
    }
    if (b->grad) {
        // d b[k, j] = sum_i a[k, i] g[i, j]: mul_mat(a^T, g) broadcasts a over g's batches as the
        // forward product did
        struct ggml_tensor * gb;
        if (a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16) {
            gb = ggml_mul_mat(ctx, ggml_cont(ctx, ggml_transpose(ctx, a)), g);
        } else {
            gb = ggml_out_prod(ctx, a, ggml_transpose(ctx, g));
        }
        if (!x_grad_add(st, b, gb)) {
            return false;
        }
    }
    return true;
}

static bool x_backward_soft_max(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g) {
    struct ggml_context * ctx = st->ctx;
    struct ggml_tensor * a = t->src[0];
    struct ggml_tensor * mask = t->src[1];
    const float scale = ggml_x_soft_max_scale_get(t);
    // d(scale * a + mask) = y * (g - sum(g * y))
    struct ggml_tensor * dz = ggml_soft_max_back(ctx, x_dense(st, g), t);
    if (dz == NULL) {
        return false;
    }
    if (a->grad && !x_grad_add(st, a, scale == 1.0f ? dz : ggml_scale(ctx, dz, scale))) {
        return false;
    }
    if (mask != NULL && mask->grad) {
        // row ir of t added mask row ir % mask->ne[1]
        const int64_t ne0 = a->ne[0], mr = mask->ne[1], nr = ggml_nrows(a);
        if (mask->ne[0] != ne0 || nr % mr != 0 || ggml_nrows(mask) != mr) {
            ggml_x_error(ctx, "ggml_build_backward_expand: soft_max mask gradient needs a [%lld, rows] mask "
                         "(mask '%s' has [%lld, %lld, %lld, %lld])", (long long) ne0, mask->name,
                         (long long) mask->ne[0], (long long) mask->ne[1], (long long) mask->ne[2], (long long) mask->ne[3]);
            return false;
        }
        struct ggml_tensor * d2 = ggml_reshape_4d(ctx, dz, ne0, mr, nr / mr, 1);
        d2 = d2 ? ggml_repeat_back(ctx, d2, ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne0, mr, 1, 1)) : NULL;
        if (!x_grad_add(st, mask, d2)) {
            return false;
        }
    }
    return true;
}

static bool x_backward_rope(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g, bool back) {
    struct ggml_tensor * a = t->src[0];
    if (!a->grad) {
        return true;
    }
    const struct ggml_x_rope_params p = ggml_x_rope_params_get(t);
    if (p.ext) {
        ggml_x_error(st->ctx, "ggml_build_backward_expand: ggml_x_rope_ext has no gradient (node '%s')", t->name);
        return false;
    }
    struct ggml_tensor * r;
    if (back) {
        // the transpose of the transposed rotation is the rotation
        r = ggml_rope_custom(st->ctx, x_dense(st, g), t->src[1], p.n_dims, p.mode, p.n_ctx, p.n_orig_ctx, p.freq_base,
                             p.freq_scale, p.ext_factor, p.attn_factor, p.beta_fast, p.beta_slow);
        if (r != NULL) {
            ggml_x_rope_params_set(r, &p); // with xPos
        }
    } else {
        r = ggml_rope_back(st->ctx, x_dense(st, g), t->src[1], p.n_dims, p.mode, p.n_ctx, p.n_orig_ctx, p.freq_base,
                           p.freq_scale, p.ext_factor, p.attn_factor, p.beta_fast, p.beta_slow, p.xpos_base, p.xpos_down);
    }
    return x_grad_add(st, a, r);
}

static bool x_backward_flash_attn(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g) {
    struct ggml_context * ctx = st->ctx;
    struct ggml_tensor * q = t->src[0];
    struct ggml_tensor * k = t->src[1];
    struct ggml_tensor * v = t->src[2];
    if (ggml_x_get_op_params_i32(t, 1) == 1) {
        ggml_x_error(ctx, "ggml_build_backward_expand: ggml_x_attn_masked has no gradient (node '%s')", t->name);
        return false;
    }
    const bool masked = ggml_x_get_op_params_i32(t, 0) != 0;
    struct ggml_tensor * fb = ggml_flash_attn_back(ctx, q, k, v, x_dense(st, g), masked);
    if (fb == NULL) {
        return false;
    }
    struct ggml_tensor * srcs[3] = { q, k, v };
    size_t offs = 0;
    for (int i = 0; i < 3; i++) {
        const struct ggml_tensor * s = srcs[i];
        const size_t nb1 = (size_t) s->ne[0] * sizeof(float);
        const size_t nb2 = nb1 * (size_t) s->ne[1];
        const size_t nb3 = nb2 * (size_t) s->ne[2];
        if (srcs[i]->grad) {
            struct ggml_tensor * gi = ggml_view_4d(ctx, fb, s->ne[0], s->ne[1], s->ne[2], s->ne[3], nb1, nb2, nb3, offs);
            if (!x_grad_add(st, srcs[i], gi)) {
                return false;
            }
        }
        offs += (size_t) ggml_nelements(s) * sizeof(float);
    }
    return true;
}

static bool x_backward_view(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g) {
    struct ggml_tensor * a = t->src[0];
    if (!a->grad) {
        return true;
    }
    size_t offset;
    memcpy(&offset, t->op_params, sizeof(offset));
    if (!ggml_is_contiguous(a) || a->grad->type != a->type || !ggml_is_contiguous(a->grad)) {
        ggml_x_error(st->ctx, "ggml_build_backward_expand: the gradient of a view needs a contiguous source "
                     "whose gradient has its type (view '%s' of '%s')", t->name, a->name);
        return false;
    }
    // the view's strides and offset address a's memory, which a's dense gradient shares
    struct ggml_tensor * r = ggml_acc(st->ctx, a->grad, x_dense(st, g), t->nb[1], t->nb[2], t->nb[3], offset);
    if (r == NULL) {
        return false;
    }
    a->grad = r; // acc over a's current gradient (zero-table gradients are zero by contract)
    x_grad_touch(st, a);
    return true;
}

static bool x_backward_unary(struct x_grad_state * st, struct ggml_tensor * t, struct ggml_tensor * g) {
    struct ggml_context * ctx = st->ctx;
    struct ggml_tensor * a = t->src[0];
    if (!a->grad) {
        return true;
    }
    switch (ggml_get_unary_op(t)) {
        case GGML_UNARY_OP_ABS:
            return x_grad_add(st, a, ggml_mul(ctx, g, ggml_sgn(ctx, a)));
        case GGML_UNARY_OP_SGN:
        case GGML_UNARY_OP_STEP:
            return true; // zero almost everywhere
        case GGML_UNARY_OP_NEG:
            return x_grad_sub(st, a, g);
        case GGML_UNARY_OP_RELU:
            return x_grad_add(st, a, ggml_mul(ctx, g, ggml_step(ctx, a)));
        case GGML_UNARY_OP_SILU:
            return x_grad_add(st, a, ggml_silu_back(ctx, a, x_dense(st, g)));
        case GGML_UNARY_OP_TANH:
            // g * (1 - y^2)
            return x_grad_add(st, a, ggml_sub(ctx, g, ggml_mul(ctx, g, ggml_sqr(ctx, t))));
        default:
            return x_backward_unary_extra(st, t, g);
    }
}

// Was t computed in place over its first operand (an *_inplace constructor), and does its
// gradient read that operand's original values, which the forward pass overwrote? Then the
// gradient cannot be formed: the reference aborts on such graphs, this reports it.
static bool x_inplace_needs_input(const struct ggml_tensor * t) {
    const struct ggml_tensor * a = t->src[0];
    if (a == NULL || a->grad == NULL || t->view_src == NULL) {
        return false;
    }
    const struct ggml_tensor * root = a->view_src ? a->view_src : a;
    const size_t offs = a->view_src ? a->view_offs : 0;
    if (t->view_src != root || t->view_offs != offs) {
        return false;
    }
    switch (t->op) {
        case GGML_OP_MUL:
        case GGML_OP_SQR:
        case GGML_OP_LOG:
        case GGML_OP_NORM:
        case GGML_OP_RMS_NORM:
        case GGML_OP_LEAKY_RELU:
            return true;
        case GGML_OP_UNARY: {
            const enum ggml_unary_op u = ggml_get_unary_op(t);
            return u != GGML_UNARY_OP_NEG && u != GGML_UNARY_OP_TANH && u != GGML_UNARY_OP_SGN &&
                   u != GGML_UNARY_OP_STEP;
        }
        default:
            return false;
    }
}

// adds the vector-Jacobian products of node t (gradient g = t->grad) to its sources' gradients
static bool x_backward_node(struct x_grad_state * st, struct ggml_tensor * t) {
    struct ggml_context * ctx = st->ctx;
    struct ggml_tensor * g = t->grad;
    struct ggml_tensor * a = t->src[0];
    struct ggml_tensor * b = t->src[1];
    const bool ga = a != NULL && a->grad != NULL;
    const bool gb = b != NULL && b->grad != NULL;

    if (x_inplace_needs_input(t)) {
        ggml_x_error(ctx, "ggml_build_backward_expand: node '%s' (%s) was computed in place over its input, "
                     "which its gradient needs: use the non-inplace constructor", t->name, ggml_op_desc(t));
        return false;
    }
    switch (t->op) {
        case GGML_OP_NONE:
            return true;
        case GGML_OP_DUP:
        case GGML_OP_CONT:
        case GGML_OP_CPY:
            // CPY overwrites b's memory: only a receives a gradient
            return !ga || x_grad_add(st, a, g);
        case GGML_OP_ADD:
            return (!ga || x_grad_add(st, a, g)) && (!gb || x_grad_add(st, b, x_reduce_to(st, g, b)));
        case GGML_OP_SUB:
            return (!ga || x_grad_add(st, a, g)) && (!gb || x_grad_sub(st, b, x_reduce_to(st, g, b)));
        case GGML_OP_ADD1:
            // the scalar's gradient is the sum of g (the reference takes the mean)
            return (!ga || x_grad_add(st, a, g)) && (!gb || x_grad_add(st, b, ggml_sum(ctx, g)));
        case GGML_OP_MUL:
            return (!ga || x_grad_add(st, a, ggml_mul(ctx, g, b))) &&
                   (!gb || x_grad_add(st, b, x_reduce_to(st, ggml_mul(ctx, g, a), b)));
        case GGML_OP_DIV:
            // d a = g / b, d b = -g * t / b
            return (!ga || x_grad_add(st, a, ggml_div(ctx, g, b))) &&
                   (!gb || x_grad_sub(st, b, x_reduce_to(st, ggml_mul(ctx, g, ggml_div(ctx, t, b)), b)));
        case GGML_OP_ACC: {
            const size_t nb1 = (size_t) t->op_params[0], nb2 = (size_t) t->op_params[1];
            const size_t nb3 = (size_t) t->op_params[2], off = (size_t) t->op_params[3];
            return (!ga || x_grad_add(st, a, g)) && (!gb || x_grad_add(st, b, x_window(st, g, b, nb1, nb2, nb3, off)));
        }
        case GGML_OP_SET: {
            const size_t nb1 = (size_t) t->op_params[0], nb2 = (size_t) t->op_params[1];
            const size_t nb3 = (size_t) t->op_params[2], off = (size_t) t->op_params[3];
            if (ga) {
                // a's gradient is g with the overwritten window cleared
                struct ggml_tensor * w = x_window(st, g, b, nb1, nb2, nb3, off);
                struct ggml_tensor * gd = x_dense(st, g);
                if (w == NULL || gd == NULL || !x_grad_add(st, a, ggml_acc(ctx, gd, ggml_neg(ctx, w), nb1, nb2, nb3, off))) {
                    return false;
                }
            }
            return !gb || x_grad_add(st, b, x_window(st, g, b, nb1, nb2, nb3, off));
        }
        case GGML_OP_SQR:
            return !ga || x_grad_add(st, a, ggml_scale(ctx, ggml_mul(ctx, g, a), 2.0f));
        case GGML_OP_SQRT:
            return !ga || x_grad_add(st, a, ggml_scale(ctx, ggml_div(ctx, g, t), 0.5f));
        case GGML_OP_LOG:
            return !ga || x_grad_add(st, a, ggml_div(ctx, g, a));
        case GGML_OP_SUM:
            if (!ga) {
                return true;
            }
            if (x_grad_is_zero(st, a)) {
                return x_grad_add(st, a, ggml_repeat(ctx, g, a));
            } else {
                struct ggml_tensor * r = ggml_add1(ctx, a->grad, g);
                if (r == NULL) {
                    return false;
                }
                a->grad = r;
                x_grad_touch(st, a);
                return true;
            }
        case GGML_OP_SUM_ROWS:
            return !ga || x_grad_add(st, a, ggml_repeat(ctx, g, a));
        case GGML_OP_REPEAT:
            return !ga || x_grad_add(st, a, ggml_repeat_back(ctx, g, a));
        case GGML_OP_REPEAT_BACK:
            return !ga || x_grad_add(st, a, ggml_repeat(ctx, g, a));
        case GGML_OP_RMS_NORM:
            return !ga || x_grad_add(st, a, ggml_rms_norm_back(ctx, a, x_dense(st, g), ggml_x_get_op_params_f32(t, 0)));
        case GGML_OP_MUL_MAT:
            return x_backward_mul_mat(st, t, g);
        case GGML_OP_SCALE:
            return !ga || x_grad_add(st, a, ggml_scale(ctx, g, ggml_x_get_op_params_f32(t, 0)));
        case GGML_OP_RESHAPE:
            return !ga || x_grad_add(st, a, ggml_reshape(ctx, x_dense(st, g), a));
        case GGML_OP_VIEW:
            return x_backward_view(st, t, g);
        case GGML_OP_PERMUTE: {
            if (!ga) {
                return true;
            }
            int inv[4];
            for (int i = 0; i < 4; i++) {
                inv[t->op_params[i]] = i;
            }
            return x_grad_add(st, a, ggml_permute(ctx, g, inv[0], inv[1], inv[2], inv[3]));
        }
        case GGML_OP_TRANSPOSE:
            return !ga || x_grad_add(st, a, ggml_transpose(ctx, g));
        case GGML_OP_GET_ROWS:
            return !ga || x_grad_add(st, a, ggml_get_rows_back(ctx, x_dense(st, g), b, a));
        case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_DIAG_MASK_ZERO:
            return !ga || x_grad_add(st, a, ggml_diag_mask_zero(ctx, x_dense(st, g), ggml_x_get_op_params_i32(t, 0)));
        case GGML_OP_SOFT_MAX:
            return x_backward_soft_max(st, t, g);
        case GGML_OP_ROPE:
            return x_backward_rope(st, t, g, false);
        case GGML_OP_ROPE_BACK:
            return x_backward_rope(st, t, g, true);
        case GGML_OP_FLASH_ATTN:
            return x_backward_flash_attn(st, t, g);
        case GGML_OP_CROSS_ENTROPY_LOSS:
            if (gb) {
                ggml_x_error(ctx, "ggml_build_backward_expand: cross_entropy_loss has no gradient for its targets "
                             "(b '%s' must not be a param or depend on one)", b->name);
                return false;
            }
            return !ga || x_grad_add(st, a, ggml_cross_entropy_loss_back(ctx, a, b, g));
        case GGML_OP_UNARY:
            return x_backward_unary(st, t, g);
        default:
            return x_backward_extra(st, t, g);
    }
}

// ---------------------------------------------------------------------------------------------
// graph API

void ggml_build_backward_expand(struct ggml_context * ctx, struct ggml_cgraph * gf, struct ggml_cgraph * gb, bool keep) {
    const char * fn = "ggml_build_backward_expand";
    if (ctx == NULL || gf == NULL || gb == NULL) {
        ggml_x_error(ctx, "%s: NULL %s", fn, ctx == NULL ? "context" : gf == NULL ? "forward graph" : "backward graph");
        return;
    }
    if (gf->grads == NULL || gb->grads == NULL) {
        ggml_x_error(ctx, "%s: both graphs must be created with grads (ggml_new_graph_custom(ctx, size, true))", fn);
        return;
    }
    if (gf->n_nodes == 0) {
        ggml_x_error(ctx, "%s: the forward graph has no nodes: build it with ggml_build_forward_expand first", fn);
        return;
    }
    if (keep) {
        // fresh gradient tensors, so gf's grads stay as they are
        for (int i = 0; i < gf->n_nodes; i++) {
            struct ggml_tensor * node = gf->nodes[i];
            if (node->grad) {
                node->grad = ggml_dup_tensor(ctx, node);
                if (node->grad == NULL) {
                    return;
                }
                gf->grads[i] = node->grad;
            }
        }
    }
    struct x_ptr_map zero, touched;
    const bool zero_ok = x_map_init(&zero, (size_t) gf->n_nodes);
    if (!x_map_init(&touched, (size_t) gf->n_nodes) || !zero_ok) {
        x_map_free(&zero);
        x_map_free(&touched);
        ggml_x_error(ctx, "%s: out of memory", fn);
        return;
    }
    for (int i = 0; i < gf->n_nodes; i++) {
        if (gf->grads[i]) {
            x_map_put(&zero, gf->grads[i], gf->grads[i]);
        }
    }
    struct x_grad_state st = { ctx, &zero, &touched };
    const uint64_t serial = ggml_x_error_serial();
    bool ok = true;
    ggml_x_grad_suspend(true);
    for (int i = gf->n_nodes - 1; i >= 0 && ok; i--) {
        struct ggml_tensor * node = gf->nodes[i];
        if (node->grad == NULL) {
            continue;
        }
        ok = x_backward_node(&st, node);
        if (!ok && ggml_x_error_serial() == serial) {
            ggml_x_error(ctx, "%s: could not build the gradient of node '%s' (%s)", fn, node->name, ggml_op_desc(node));
        }
    }
    ggml_x_grad_suspend(false);
    x_map_free(&zero);
    x_map_free(&touched);
    if (!ok) {
        return;
    }
    for (int i = 0; i < gf->n_nodes; i++) {
        struct ggml_tensor * node = gf->nodes[i];
        if (node->is_param && node->grad) {
            if (!ggml_is_contiguous(node->grad)) {
                // e.g. the permuted view a PERMUTE passes back: optimizers want a dense gradient
                ggml_x_grad_suspend(true);
                struct ggml_tensor * dense = ggml_cont(ctx, node->grad);
                ggml_x_grad_suspend(false);
                if (dense == NULL) {
                    return;
                }
                node->grad = dense;
            }
            ggml_build_forward_expand(gb, node->grad);
        }
    }
}

void ggml_graph_reset(struct ggml_cgraph * cgraph) {
    if (cgraph == NULL) {
        ggml_x_error(NULL, "ggml_graph_reset: NULL graph");
        return;
    }
    if (cgraph->grads == NULL) {
        ggml_x_error(NULL, "ggml_graph_reset: the graph has no gradients (create it with ggml_new_graph_custom(ctx, size, true))");
        return;
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        struct ggml_tensor * g = cgraph->grads[i];
        if (g == NULL || g->data == NULL) {
            continue;
        }
        if (g->buffer == NULL || ggml_backend_buffer_is_host(g->buffer)) {
            if (ggml_is_contiguous(g)) {
                memset(g->data, 0, ggml_nbytes(g));
            } else {
                ggml_set_zero(g);
            }
        } else {
            static const char zeros[4096] = { 0 };
            const size_t n = ggml_nbytes(g);
            for (size_t o = 0; o < n; o += sizeof(zeros)) {
                ggml_backend_tensor_set(g, zeros, o, GGML_X_MIN(sizeof(zeros), n - o));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// gradient checkpointing: the backward graph recomputes every forward node it reads from the
// nearest checkpoints instead of keeping it alive

static struct ggml_tensor * x_recompute(struct ggml_context * ctx, const struct x_ptr_map * fwd, struct x_ptr_map * repl,
                                        struct ggml_tensor * node, bool * ok) {
    if (node == NULL || !*ok || node->is_param) {
        return node;
    }
    bool in_gf = false;
    for (int i = 0; i < GGML_MAX_SRC && !in_gf; i++) {
        in_gf = node->src[i] != NULL;
    }
    if (!in_gf || node->op == GGML_OP_NONE) {
        return node; // leafs and tensors without sources are kept
    }
    // only forward nodes are recomputed
    if (!x_map_has(fwd, node)) {
        return node;
    }
    if (x_map_has(repl, node)) {
        return x_map_get(repl, node);
    }
    struct ggml_tensor * clone = ggml_new_tensor(ctx, node->type, GGML_MAX_DIMS, node->ne);
    if (clone == NULL) {
        *ok = false;
        return node;
    }
    x_map_put(repl, node, clone);
    clone->op = node->op;
    clone->grad = node->grad;
    clone->is_param = node->is_param;
    clone->extra = node->extra;
    memcpy(clone->op_params, node->op_params, sizeof(clone->op_params));
    for (int k = 0; k < GGML_MAX_DIMS; k++) {
        clone->nb[k] = node->nb[k];
    }
    for (int k = 0; k < GGML_MAX_SRC; k++) {
        clone->src[k] = x_recompute(ctx, fwd, repl, node->src[k], ok);
    }
    if (node->view_src != NULL) {
        // a view of the recomputed root
        struct ggml_tensor * root = x_recompute(ctx, fwd, repl, node->view_src, ok);
        clone->view_src = root;
        clone->view_offs = node->view_offs;
        clone->data = root->data == NULL ? NULL : (char *) root->data + node->view_offs;
    }
    ggml_format_name(clone, "%.50s (clone)", node->name);
    return clone;
}

void ggml_build_backward_gradient_checkpointing(struct ggml_context * ctx, struct ggml_cgraph * gf,
                                                struct ggml_cgraph * gb, struct ggml_cgraph * gb_tmp,
                                                struct ggml_tensor ** checkpoints, int n_checkpoints) {
    const char * fn = "ggml_build_backward_gradient_checkpointing";
    if (ctx == NULL || gf == NULL || gb == NULL || gb_tmp == NULL || (n_checkpoints > 0 && checkpoints == NULL)) {
        ggml_x_error(ctx, "%s: NULL argument", fn);
        return;
    }
    const uint64_t serial = ggml_x_error_serial();
    ggml_graph_cpy(gf, gb_tmp);
    ggml_build_backward_expand(ctx, gf, gb_tmp, true);
    if (ggml_x_error_serial() != serial) {
        return;
    }
    if (n_checkpoints <= 0) {
        ggml_graph_cpy(gb_tmp, gb);
        return;
    }
    struct x_ptr_map repl, fwd;
    const bool mem_ok = x_map_init(&repl, (size_t) (gf->n_nodes + gf->n_leafs + n_checkpoints));
    if (!x_map_init(&fwd, (size_t) gf->n_nodes) || !mem_ok) {
        x_map_free(&repl);
        x_map_free(&fwd);
        ggml_x_error(ctx, "%s: out of memory", fn);
        return;
    }
    for (int i = 0; i < n_checkpoints; i++) {
        if (checkpoints[i] != NULL) {
            x_map_put(&repl, checkpoints[i], checkpoints[i]);
        }
    }
    for (int i = 0; i < gf->n_nodes; i++) {
        x_map_put(&fwd, gf->nodes[i], gf->nodes[i]);
    }
    ggml_graph_cpy(gf, gb);
    bool ok = true;
    for (int i = gf->n_nodes; i < gb_tmp->n_nodes && ok; i++) {
        struct ggml_tensor * node = gb_tmp->nodes[i];
        for (int k = 0; k < GGML_MAX_SRC; k++) {
            node->src[k] = x_recompute(ctx, &fwd, &repl, node->src[k], &ok);
        }
        if (node->view_src != NULL) {
            struct ggml_tensor * root = x_recompute(ctx, &fwd, &repl, node->view_src, &ok);
            if (root != node->view_src) {
                node->view_src = root;
                node->data = root->data == NULL ? NULL : (char *) root->data + node->view_offs;
            }
        }
    }
    x_map_free(&repl);
    x_map_free(&fwd);
    if (!ok) {
        return;
    }
    // The order of gb decides how long the recomputed values live (a graph allocator frees a
    // value after its last consumer). gb_tmp's order follows the params in gf's order: the
    // first param's gradient (for a network, the input side's) pulls in the backward pass of
    // every segment, while the other params' gradients, which read the recomputed values of
    // their segment, come only afterwards, so every segment's recomputed values would live to
    // the end. Expanding the params' gradients in reverse order instead finishes a segment
    // (its params' gradients included) before the next one is recomputed.
    for (int i = gf->n_nodes - 1; i >= 0; i--) {
        struct ggml_tensor * node = gf->nodes[i];
        if (node->is_param && node->grad != NULL) {
            ggml_build_forward_expand(gb, node->grad);
        }
    }
    for (int i = gf->n_nodes; i < gb_tmp->n_nodes; i++) {
        ggml_build_forward_expand(gb, gb_tmp->nodes[i]); // anything no param's gradient reaches
    }
}
