// test-cuda.c - device tests of the CUDA backend (make test-cuda). Skips with a message and exit
// status 0 when no CUDA device is present.
//
//   * ops: one graph per case, for every op family of the conformance suite (same shapes where
//     practical), computed on the CPU and on CUDA0 through ggml_backend_compare_graph_backend and
//     compared with the conformance NMSE thresholds; cases CUDA does not support are listed and
//     counted separately (they are not failures: supports_op must say no, and it did)
//   * buffer types: CUDA0 (alignment, alloc size, set/get/clear/copy, async copies), CUDA_Host
//     (computed on by the CPU backend), CUDA_Split (weights for mul_mat)
//   * the scheduler with weights on CUDA and an op CUDA rejects (ARGMAX) falling back to the CPU
//   * the registry lists CUDA0

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cuda.h"
#include "../../ggml/tests/testing.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ggml_backend_t cpu;
static ggml_backend_t cuda;

// ---------------------------------------------------------------------------------------------
// inputs: every input tensor of a case is registered with its value range

#define MAX_INPUTS 64

struct input {
    struct ggml_tensor * t;
    float lo, hi;
};

static struct input inputs[MAX_INPUTS];
static int n_inputs;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static float rnd(float lo, float hi) {
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    const float u = (float) ((rng_state >> 40) & 0xffffff) / 16777216.0f;
    return lo + (hi - lo) * u;
}

static struct ggml_tensor * in4(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2,
                                int64_t ne3, float lo, float hi) {
    struct ggml_tensor * t = ggml_new_tensor_4d(ctx, type, ne0, ne1, ne2, ne3);
    if (n_inputs < MAX_INPUTS) {
        inputs[n_inputs++] = (struct input) { t, lo, hi };
    }
    return t;
}

static struct ggml_tensor * in(struct ggml_context * ctx, enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2,
                               int64_t ne3) {
    return in4(ctx, type, ne0, ne1, ne2, ne3, -1.0f, 1.0f);
}

static void fill_input(const struct input * p) {
    struct ggml_tensor * t = p->t;
    const int64_t n = ggml_nelements(t);
    const size_t nbytes = ggml_nbytes(t);
    void * buf = malloc(nbytes);
    if (t->type == GGML_TYPE_I32) {
        for (int64_t i = 0; i < n; i++) ((int32_t *) buf)[i] = (int32_t) floorf(rnd(p->lo, p->hi));
    } else if (t->type == GGML_TYPE_I16) {
        for (int64_t i = 0; i < n; i++) ((int16_t *) buf)[i] = (int16_t) floorf(rnd(p->lo, p->hi));
    } else {
        float * f = malloc((size_t) n * sizeof(float));
        for (int64_t i = 0; i < n; i++) f[i] = rnd(p->lo, p->hi);
        if (t->type == GGML_TYPE_F32) {
            memcpy(buf, f, nbytes);
        } else {
            ggml_type_traits_t tt = ggml_internal_get_type_traits(t->type);
            const int64_t ne0 = t->ne[0];
            for (int64_t r = 0; r < n / ne0; r++) {
                tt.from_float(f + r * ne0, (char *) buf + r * ggml_row_size(t->type, ne0), (int) ne0);
            }
        }
        free(f);
    }
    ggml_backend_tensor_set(t, buf, 0, nbytes);
    free(buf);
}

// tensor (any layout) -> floats in element order
static float * to_floats(const struct ggml_tensor * t) {
    const size_t nbytes = ggml_nbytes(t);
    char * raw = malloc(nbytes);
    ggml_backend_tensor_get(t, raw, 0, nbytes);
    const int64_t n = ggml_nelements(t);
    float * out = malloc((size_t) n * sizeof(float));
    ggml_type_traits_t tt = ggml_internal_get_type_traits(t->type);
    const int64_t bs = ggml_blck_size(t->type);
    int64_t k = 0;
    for (int64_t i3 = 0; i3 < t->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < t->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < t->ne[1]; i1++) {
                const char * row = raw + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
                if (bs > 1) {
                    tt.to_float(row, out + k, (int) t->ne[0]);
                    k += t->ne[0];
                    continue;
                }
                for (int64_t i0 = 0; i0 < t->ne[0]; i0++, k++) {
                    const char * p = row + i0 * t->nb[0];
                    switch (t->type) {
                        case GGML_TYPE_F32: out[k] = *(const float *) p; break;
                        case GGML_TYPE_F16: out[k] = ggml_fp16_to_fp32(*(const ggml_fp16_t *) p); break;
                        case GGML_TYPE_I32: out[k] = (float) *(const int32_t *) p; break;
                        case GGML_TYPE_I16: out[k] = (float) *(const int16_t *) p; break;
                        case GGML_TYPE_I8:  out[k] = (float) *(const int8_t *) p; break;
                        default:            out[k] = NAN; break;
                    }
                }
            }
        }
    }
    free(raw);
    return out;
}

static double nmse(const float * a, const float * b, int64_t n) {
    double err = 0.0, ref = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double x = a[i], y = b[i];
        if (isinf(x) && isinf(y) && (x > 0) == (y > 0)) {
            continue; // e.g. masked entries
        }
        err += (x - y) * (x - y);
        ref += y * y;
    }
    if (ref == 0.0) {
        return err == 0.0 ? 0.0 : INFINITY;
    }
    return err / ref;
}

// ---------------------------------------------------------------------------------------------
// op cases

struct cmp_state {
    struct ggml_tensor * out;
    double err;
    bool seen;
};

static bool GGML_CALL cmp_cb(int node_index, struct ggml_tensor * t1, struct ggml_tensor * t2, void * user_data) {
    (void) node_index;
    struct cmp_state * st = user_data;
    if (t1 != st->out) {
        return true;
    }
    float * a = to_floats(t2); // CUDA
    float * b = to_floats(t1); // CPU
    st->err = nmse(a, b, ggml_nelements(t1));
    st->seen = true;
    free(a);
    free(b);
    return true;
}

static int cases_ok, cases_failed, cases_unsupported;

typedef struct ggml_tensor * (*build_fn)(struct ggml_context * ctx, const int * p);

static void run_case(const char * name, double threshold, build_fn build, const int * p) {
    struct ggml_init_params ip = { 64 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    n_inputs = 0;
    struct ggml_tensor * out = build(ctx, p);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);

    bool supported = true;
    for (int i = 0; i < gf->n_nodes; i++) {
        if (!ggml_backend_supports_op(cuda, gf->nodes[i]) || !ggml_backend_supports_op(cpu, gf->nodes[i])) {
            supported = false;
        }
    }
    if (!supported) {
        printf("  skip %-60s (not supported by CUDA)\n", name);
        cases_unsupported++;
        ggml_free(ctx);
        return;
    }
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    T_CHECK_MSG(buf != NULL, "%s: allocation failed", name);
    if (buf == NULL) {
        ggml_free(ctx);
        return;
    }
    for (int i = 0; i < n_inputs; i++) {
        fill_input(&inputs[i]);
    }
    struct cmp_state st = { out, 0.0, false };
    const bool ok = ggml_backend_compare_graph_backend(cpu, cuda, gf, cmp_cb, &st);
    const bool pass = ok && st.seen && st.err <= threshold;
    T_CHECK_MSG(pass, "%s: compare %s, nmse %.3e (threshold %.1e)", name, ok ? "ok" : "FAILED", st.err, threshold);
    printf("  %s %-60s nmse %.3e\n", pass ? "ok  " : "FAIL", name, st.err);
    if (pass) {
        cases_ok++;
    } else {
        cases_failed++;
    }
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

#define TH_DEFAULT 1e-7
#define TH_MATMUL  5e-4
#define TH_ACT     1e-6

static const enum ggml_type all_types[12] = {
    GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
    GGML_TYPE_Q8_0, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
};

static struct ggml_tensor * b_unary(struct ggml_context * ctx, const int * p) {
    return ggml_unary(ctx, in(ctx, GGML_TYPE_F32, 128, 10, 10, 10), (enum ggml_unary_op) p[0]);
}
static struct ggml_tensor * b_get_rows(struct ggml_context * ctx, const int * p) {
    // p: type, n cols, rows, indices, batch, view
    struct ggml_tensor * x = in(ctx, (enum ggml_type) p[0], p[1], p[2], p[4], 1);
    struct ggml_tensor * r = in4(ctx, GGML_TYPE_I32, p[3], p[4], 1, 1, 0.0f, (float) p[2]);
    if (p[5]) r = ggml_view_2d(ctx, r, p[3] / 2, p[4], r->nb[1], 0);
    return ggml_get_rows(ctx, x, r);
}
static struct ggml_tensor * b_repeat(struct ggml_context * ctx, const int * p) {
    struct ggml_tensor * x = in(ctx, (enum ggml_type) p[0], 10, 10, 10, 10);
    struct ggml_tensor * t = ggml_new_tensor_4d(ctx, (enum ggml_type) p[0], 10 * p[1], 10 * p[2], 10 * p[3], 10 * p[4]);
    return ggml_repeat(ctx, x, t);
}
static struct ggml_tensor * b_dup(struct ggml_context * ctx, const int * p) {
    struct ggml_tensor * x = in4(ctx, (enum ggml_type) p[0], 10, 8, 3, 1, -100.0f, 100.0f);
    if (p[1]) x = ggml_permute(ctx, x, p[2], p[3], p[4], p[5]);
    return ggml_dup(ctx, x);
}
static struct ggml_tensor * b_cpy(struct ggml_context * ctx, const int * p) {
    // p: src type, dst type, permuted (non-contiguous) source
    struct ggml_tensor * x = in(ctx, (enum ggml_type) p[0], 256, 10, 10, 1);
    struct ggml_tensor * y = ggml_new_tensor_4d(ctx, (enum ggml_type) p[1], 256, 10, 10, 1);
    if (p[2]) x = ggml_permute(ctx, x, 0, 2, 1, 3);
    return ggml_cpy(ctx, x, y);
}
static struct ggml_tensor * b_cont(struct ggml_context * ctx, const int * p) {
    struct ggml_tensor * x = in(ctx, (enum ggml_type) p[0], 10, 10, 10, p[1]);
    x = p[2] ? ggml_permute(ctx, x, 0, 2, 1, 3) : ggml_transpose(ctx, x);
    return ggml_cont(ctx, x);
}
static struct ggml_tensor * b_bin(struct ggml_context * ctx, const int * p) {
    // p: op, ne0..3 of b, repeat factors 0..3, type of a/b
    const enum ggml_type t = p[9] ? GGML_TYPE_F16 : GGML_TYPE_F32;
    struct ggml_tensor * b = in4(ctx, t, p[1], p[2], p[3], p[4], 0.5f, 1.5f);
    struct ggml_tensor * a = in4(ctx, t, p[1] * p[5], p[2] * p[6], p[3] * p[7], p[4] * p[8], -1.0f, 1.0f);
    switch (p[0]) {
        case 0: return ggml_add(ctx, a, b);
        case 1: return ggml_sub(ctx, a, b);
        case 2: return ggml_mul(ctx, a, b);
        default: return ggml_div(ctx, a, b);
    }
}
static struct ggml_tensor * b_simple(struct ggml_context * ctx, const int * p) {
    struct ggml_tensor * x = in4(ctx, GGML_TYPE_F32, 10, 10, 10, 10, 0.1f, 2.0f);
    switch (p[0]) {
        case 0: return ggml_sqr(ctx, x);
        case 1: return ggml_sqrt(ctx, x);
        case 2: return ggml_log(ctx, x);
        case 3: return ggml_scale(ctx, x, 2.0f);
        case 4: return ggml_clamp(ctx, x, 0.5f, 1.5f);
        case 5: return ggml_leaky_relu(ctx, ggml_add1(ctx, x, in(ctx, GGML_TYPE_F32, 1, 1, 1, 1)), 0.1f, false);
        case 6: return ggml_sum_rows(ctx, x);
        case 7: return ggml_sum(ctx, x);
        case 8: return ggml_mean(ctx, x);
        case 9: return ggml_add1(ctx, x, in(ctx, GGML_TYPE_F32, 1, 1, 1, 1));
        case 10: return ggml_diag_mask_inf(ctx, x, 5);
        case 11: return ggml_upscale(ctx, x, 2);
        case 12: return ggml_pad(ctx, x, 1, 2, 0, 3);
        default: return ggml_alibi(ctx, x, 5, 10, 0.5f);
    }
}
// SUM over more elements than CU_SUM_PARTS blocks of 256 threads cover (grid-stride partial sums),
// through a permuted view
static struct ggml_tensor * b_sum_big(struct ggml_context * ctx, const int * p) {
    (void) p;
    struct ggml_tensor * x = in4(ctx, GGML_TYPE_F32, 1031, 300, 5, 1, -1.0f, 1.0f);
    return ggml_sum(ctx, ggml_permute(ctx, x, 1, 0, 2, 3));
}
static struct ggml_tensor * b_norm(struct ggml_context * ctx, const int * p) {
    const float eps[4] = { 1e-6f, 1e-5f, 1e-3f, 1e-1f };
    struct ggml_tensor * x = in(ctx, GGML_TYPE_F32, 64, 10, 10, 10);
    switch (p[0]) {
        case 0: return ggml_norm(ctx, x, eps[p[1]]);
        case 1: return ggml_rms_norm(ctx, x, eps[p[1]]);
        default: return ggml_group_norm(ctx, in(ctx, GGML_TYPE_F32, 64, 64, 320, 1), 32);
    }
}
static struct ggml_tensor * b_mul_mat(struct ggml_context * ctx, const int * p) {
    // p: type a, type b, m, n, k, bs0, bs1, nr0, nr1
    struct ggml_tensor * a = in(ctx, (enum ggml_type) p[0], p[4], p[2], p[5], p[6]);
    struct ggml_tensor * b = in(ctx, (enum ggml_type) p[1], p[4], p[3], p[5] * p[7], p[6] * p[8]);
    return ggml_mul_mat(ctx, a, b);
}
static struct ggml_tensor * b_mul_mat_t(struct ggml_context * ctx, const int * p) {
    // src1 transposed view (non-contiguous), weights as in b_mul_mat
    struct ggml_tensor * a = in(ctx, (enum ggml_type) p[0], p[4], p[2], 1, 1);
    struct ggml_tensor * b = in(ctx, GGML_TYPE_F32, p[3], p[4], 1, 1);
    return ggml_mul_mat(ctx, a, ggml_transpose(ctx, b));
}
static struct ggml_tensor * b_mul_mat_id(struct ggml_context * ctx, const int * p) {
    // p: type, n_mats, id, n (rows), view
    const int n_mats = p[1], n = p[3];
    struct ggml_tensor * mats[8];
    for (int i = 0; i < n_mats; i++) mats[i] = in(ctx, (enum ggml_type) p[0], 256, 16, 1, 1);
    struct ggml_tensor * ids = in4(ctx, GGML_TYPE_I32, n_mats, n, 1, 1, 0.0f, (float) n_mats);
    if (p[4]) ids = ggml_view_2d(ctx, ids, n_mats / 2, ids->ne[1], ids->nb[1], 0);
    struct ggml_tensor * b = in(ctx, GGML_TYPE_F32, 256, n, 1, 1);
    return ggml_mul_mat_id(ctx, mats, n_mats, ids, p[4] ? p[2] / 2 : p[2], b);
}
static struct ggml_tensor * b_soft_max(struct ggml_context * ctx, const int * p) {
    struct ggml_tensor * x = in4(ctx, GGML_TYPE_F32, p[0], p[1], p[2], 1, -5.0f, 5.0f);
    if (!p[3]) return ggml_soft_max(ctx, x);
    struct ggml_tensor * mask = in(ctx, GGML_TYPE_F32, p[0], p[1], 1, 1);
    return ggml_soft_max_ext(ctx, x, mask, 0.125f);
}
static struct ggml_tensor * b_rope(struct ggml_context * ctx, const int * p) {
    // p: type, ne0, ne1, n_dims, mode, custom (yarn)
    struct ggml_tensor * x = in(ctx, (enum ggml_type) p[0], p[1], p[2], 10, 1);
    struct ggml_tensor * pos = in4(ctx, GGML_TYPE_I32, 10, 1, 1, 1, 0.0f, 512.0f);
    if (p[5]) {
        return ggml_rope_custom(ctx, x, pos, p[3], p[4], 512, 4096, 10000.0f, 0.5f, 1.0f, 1.0f, 32.0f, 1.0f);
    }
    return ggml_rope(ctx, x, pos, p[3], p[4], 512);
}
static struct ggml_tensor * b_im2col(struct ggml_context * ctx, const int * p) {
    if (p[0]) {
        struct ggml_tensor * input = in(ctx, GGML_TYPE_F32, 10, 10, 3, 1);  // [IW, IH, IC, N]
        struct ggml_tensor * kernel = in(ctx, GGML_TYPE_F16, 3, 3, 3, 1);  // [KW, KH, IC, OC]
        return ggml_im2col(ctx, kernel, input, 1, 1, 1, 1, 1, 1, true);
    }
    struct ggml_tensor * input = in(ctx, GGML_TYPE_F32, 10, 3, 2, 1);      // [IW, IC, N]
    struct ggml_tensor * kernel = in(ctx, GGML_TYPE_F16, 3, 3, 1, 1);      // [KW, IC, OC]
    return ggml_im2col(ctx, kernel, input, 2, 0, 1, 0, 1, 0, false);
}
static struct ggml_tensor * b_concat(struct ggml_context * ctx, const int * p) {
    struct ggml_tensor * a = in(ctx, (enum ggml_type) p[0], 10, 10, 10, 10);
    struct ggml_tensor * b = in(ctx, (enum ggml_type) p[0], 10, 10, 10, 10);
    return ggml_concat(ctx, a, b);
}
static struct ggml_tensor * b_argsort(struct ggml_context * ctx, const int * p) {
    return ggml_argsort(ctx, in(ctx, GGML_TYPE_F32, p[0], p[1], p[2], 1), (enum ggml_sort_order) p[3]);
}
// argsort of a row full of ties (STEP of random values: 0 or 1): the order must be the stable one
static struct ggml_tensor * b_argsort_ties(struct ggml_context * ctx, const int * p) {
    struct ggml_tensor * x = ggml_step(ctx, in(ctx, GGML_TYPE_F32, p[0], p[1], 1, 1));
    return ggml_argsort(ctx, x, (enum ggml_sort_order) p[2]);
}
static struct ggml_tensor * b_acc(struct ggml_context * ctx, const int * p) {
    struct ggml_tensor * a = in(ctx, GGML_TYPE_F32, 10, 10, 10, 10);
    struct ggml_tensor * b = in(ctx, GGML_TYPE_F32, 5, 5, 5, 5);
    const size_t off = 2 * a->nb[0] + 3 * a->nb[1] + 1 * a->nb[2] + 4 * a->nb[3];
    if (p[0]) return ggml_set(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], off);
    return ggml_acc(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], off);
}
static struct ggml_tensor * b_moe(struct ggml_context * ctx, const int * p) {
    (void) p;
    const int n_experts = 8, n_per_tok = 2, n_tokens = 4, n_embd = 256, n_ff = 512;
    struct ggml_tensor * cur = in(ctx, GGML_TYPE_F32, n_embd, n_tokens, 1, 1);
    struct ggml_tensor * gate_inp = in(ctx, GGML_TYPE_F32, n_embd, n_experts, 1, 1);
    struct ggml_tensor * up[8], * gate[8], * down[8];
    for (int i = 0; i < n_experts; i++) {
        up[i] = in(ctx, GGML_TYPE_Q4_0, n_embd, n_ff, 1, 1);
        gate[i] = in(ctx, GGML_TYPE_Q4_0, n_embd, n_ff, 1, 1);
        down[i] = in(ctx, GGML_TYPE_Q4_0, n_ff, n_embd, 1, 1);
    }
    struct ggml_tensor * logits = ggml_mul_mat(ctx, gate_inp, cur);
    struct ggml_tensor * probs = ggml_soft_max_ext(ctx, logits, NULL, 1.0f / sqrtf((float) n_embd));
    struct ggml_tensor * sel = ggml_top_k(ctx, probs, n_per_tok);
    struct ggml_tensor * w = ggml_get_rows(ctx, ggml_reshape_3d(ctx, probs, 1, n_experts, n_tokens), sel);
    w = ggml_reshape_2d(ctx, w, n_per_tok, n_tokens);
    w = ggml_div(ctx, w, ggml_sum_rows(ctx, w));
    struct ggml_tensor * out = NULL;
    for (int j = 0; j < n_per_tok; j++) {
        struct ggml_tensor * cu = ggml_mul_mat_id(ctx, up, n_experts, sel, j, cur);
        struct ggml_tensor * cg = ggml_silu(ctx, ggml_mul_mat_id(ctx, gate, n_experts, sel, j, cur));
        struct ggml_tensor * e = ggml_mul_mat_id(ctx, down, n_experts, sel, j, ggml_mul(ctx, cu, cg));
        e = ggml_mul(ctx, e, ggml_view_2d(ctx, w, 1, n_tokens, w->nb[1], j * w->nb[0]));
        out = out ? ggml_add(ctx, out, e) : e;
    }
    return out;
}

#define CASE(name, th, fn, ...) \
    do { \
        const int p_[] = { __VA_ARGS__ }; \
        run_case(name, th, fn, p_); \
    } while (0)

static void test_ops(void) {
    char name[160];
    static const char * unary_names[] = { "ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "GELU", "GELU_QUICK", "SILU" };
    for (int op = 0; op < GGML_UNARY_OP_COUNT; op++) {
        const bool act = op == GGML_UNARY_OP_GELU || op == GGML_UNARY_OP_GELU_QUICK || op == GGML_UNARY_OP_SILU;
        snprintf(name, sizeof(name), "UNARY(%s)", op < 10 ? unary_names[op] : "?");
        CASE(name, act ? TH_ACT : TH_DEFAULT, b_unary, op);
    }
    for (int t = 0; t < 12; t++) {
        for (int b = 1; b <= 7; b += 6) {
            for (int v = 0; v < 2; v++) {
                snprintf(name, sizeof(name), "GET_ROWS(type=%s,b=%d,v=%d)", ggml_type_name(all_types[t]), b, v);
                CASE(name, TH_DEFAULT, b_get_rows, all_types[t], 256, 5, 4, b, v);
            }
        }
    }
    CASE("GET_ROWS(type=i32)", TH_DEFAULT, b_get_rows, GGML_TYPE_I32, 256, 5, 4, 7, 1);
    CASE("REPEAT(f32,2,1,1,1)", TH_DEFAULT, b_repeat, GGML_TYPE_F32, 2, 1, 1, 1);
    CASE("REPEAT(f32,1,2,2,2)", TH_DEFAULT, b_repeat, GGML_TYPE_F32, 1, 2, 2, 2);
    CASE("REPEAT(i32,2,1,1,1)", TH_DEFAULT, b_repeat, GGML_TYPE_I32, 2, 1, 1, 1);
    CASE("REPEAT(i16,1,1,1,2)", TH_DEFAULT, b_repeat, GGML_TYPE_I16, 1, 1, 1, 2);
    CASE("DUP(f32)", TH_DEFAULT, b_dup, GGML_TYPE_F32, 0, 0, 0, 0, 0);
    CASE("DUP(f16)", TH_DEFAULT, b_dup, GGML_TYPE_F16, 0, 0, 0, 0, 0);
    CASE("DUP(i32)", TH_DEFAULT, b_dup, GGML_TYPE_I32, 0, 0, 0, 0, 0);
    CASE("DUP(i16,permuted 0,2,1,3)", TH_DEFAULT, b_dup, GGML_TYPE_I16, 1, 0, 2, 1, 3);
    CASE("DUP(i16,permuted 1,2,0,3)", TH_DEFAULT, b_dup, GGML_TYPE_I16, 1, 1, 2, 0, 3);
    for (int t = 0; t < 12; t++) {
        snprintf(name, sizeof(name), "CPY(f32->%s)", ggml_type_name(all_types[t]));
        CASE(name, TH_DEFAULT, b_cpy, GGML_TYPE_F32, all_types[t], 0);
    }
    CASE("CPY(f16->f32)", TH_DEFAULT, b_cpy, GGML_TYPE_F16, GGML_TYPE_F32, 0);
    CASE("CPY(f32->f16,permuted)", TH_DEFAULT, b_cpy, GGML_TYPE_F32, GGML_TYPE_F16, 1);
    CASE("CPY(q4_0->f32)", TH_DEFAULT, b_cpy, GGML_TYPE_Q4_0, GGML_TYPE_F32, 0);
    CASE("CPY(q6_K->f16)", TH_DEFAULT, b_cpy, GGML_TYPE_Q6_K, GGML_TYPE_F16, 0);
    CASE("CONT(f32,transposed)", TH_DEFAULT, b_cont, GGML_TYPE_F32, 1, 0);
    CASE("CONT(f32,permuted)", TH_DEFAULT, b_cont, GGML_TYPE_F32, 10, 1);
    CASE("CONT(f16,transposed)", TH_DEFAULT, b_cont, GGML_TYPE_F16, 1, 0);
    {
        static const int shapes[][8] = {
            { 1, 1, 8, 1, 1, 1, 1, 1 },     { 1, 1, 1, 1, 32, 1, 1, 1 },   { 1, 1, 320, 320, 1, 1, 1, 1 },
            { 16, 10, 10, 10, 1, 1, 1, 1 }, { 16, 10, 10, 10, 2, 1, 1, 1 }, { 16, 10, 10, 10, 1, 2, 2, 2 },
            { 16, 10, 10, 10, 2, 2, 2, 2 }, { 1280, 1, 1, 1, 1, 16, 16, 1 }, { 1, 1, 1280, 1, 16, 16, 1, 1 },
            { 5120, 1, 1, 1, 1, 256, 1, 1 },
        };
        static const char * opn[4] = { "ADD", "SUB", "MUL", "DIV" };
        for (int op = 0; op < 4; op++) {
            for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
                const int * sh = shapes[s];
                snprintf(name, sizeof(name), "%s(b=[%d,%d,%d,%d],nr=[%d,%d,%d,%d])", opn[op], sh[0], sh[1], sh[2], sh[3],
                         sh[4], sh[5], sh[6], sh[7]);
                CASE(name, TH_DEFAULT, b_bin, op, sh[0], sh[1], sh[2], sh[3], sh[4], sh[5], sh[6], sh[7], 0);
            }
        }
        CASE("ADD(f16)", 1e-6, b_bin, 0, 16, 10, 10, 10, 2, 1, 1, 1, 1);
    }
    static const char * simple[] = { "SQR", "SQRT", "LOG", "SCALE", "CLAMP", "LEAKY_RELU", "SUM_ROWS", "SUM", "MEAN",
                                     "ADD1", "DIAG_MASK_INF", "UPSCALE", "PAD", "ALIBI" };
    for (int k = 0; k < 14; k++) {
        CASE(simple[k], k == 7 ? 1e-6 : TH_DEFAULT, b_simple, k);
    }
    CASE("SUM(1.5M elements, permuted)", 1e-6, b_sum_big, 0);
    for (int e = 0; e < 4; e++) {
        snprintf(name, sizeof(name), "NORM(eps#%d)", e);
        CASE(name, TH_DEFAULT, b_norm, 0, e);
        snprintf(name, sizeof(name), "RMS_NORM(eps#%d)", e);
        CASE(name, TH_DEFAULT, b_norm, 1, e);
    }
    CASE("GROUP_NORM", TH_DEFAULT, b_norm, 2, 0);
    for (int t = 0; t < 12; t++) {
        for (int tb = 0; tb < 2; tb++) {
            const enum ggml_type ta = all_types[t];
            const enum ggml_type tbt = tb ? GGML_TYPE_F16 : GGML_TYPE_F32;
            if (tbt == GGML_TYPE_F16 && ta != GGML_TYPE_F16) continue;
            const bool q = ta != GGML_TYPE_F32 && ta != GGML_TYPE_F16;
            const int b2 = q ? 4 : 10, b3 = q ? 3 : 10;
            for (int n = 1; n <= 16; n += 15) {
                snprintf(name, sizeof(name), "MUL_MAT(%s,%s,n=%d)", ggml_type_name(ta), ggml_type_name(tbt), n);
                CASE(name, TH_MATMUL, b_mul_mat, ta, tbt, 16, n, 256, 1, 1, 1, 1);
                snprintf(name, sizeof(name), "MUL_MAT(%s,%s,n=%d,bs=[%d,%d],nr=[2,2])", ggml_type_name(ta),
                         ggml_type_name(tbt), n, b2, b3);
                CASE(name, TH_MATMUL, b_mul_mat, ta, tbt, 16, n, 256, b2, b3, 2, 2);
            }
            // large batch: the dequantize + cuBLAS path
            snprintf(name, sizeof(name), "MUL_MAT(%s,%s,m=64,n=40,k=512)", ggml_type_name(ta), ggml_type_name(tbt));
            CASE(name, TH_MATMUL, b_mul_mat, ta, tbt, 64, 40, 512, 1, 1, 1, 1);
            // batches without broadcast (one strided-batched GEMM stepping through the weights)
            // and with broadcast (r2 = 3: the slices that share a weight matrix), cuBLAS paths
            snprintf(name, sizeof(name), "MUL_MAT(%s,%s,n=12,bs=[3,2],nr=[1,1])", ggml_type_name(ta),
                     ggml_type_name(tbt));
            CASE(name, TH_MATMUL, b_mul_mat, ta, tbt, 16, 12, 256, 3, 2, 1, 1);
            snprintf(name, sizeof(name), "MUL_MAT(%s,%s,n=12,bs=[2,1],nr=[3,2])", ggml_type_name(ta),
                     ggml_type_name(tbt));
            CASE(name, TH_MATMUL, b_mul_mat, ta, tbt, 16, 12, 256, 2, 1, 3, 2);
        }
        snprintf(name, sizeof(name), "MUL_MAT(%s,transposed src1)", ggml_type_name(all_types[t]));
        CASE(name, TH_MATMUL, b_mul_mat_t, all_types[t], 0, 16, 5, 256);
    }
    for (int t = 0; t < 12; t++) {
        for (int nm = 2; nm <= 8; nm *= 2) {
            for (int v = 0; v < 2; v++) {
                snprintf(name, sizeof(name), "MUL_MAT_ID(%s,n_mats=%d,v=%d)", ggml_type_name(all_types[t]), nm, v);
                CASE(name, TH_MATMUL, b_mul_mat_id, all_types[t], nm, nm - 1, 16, v);
            }
        }
        snprintf(name, sizeof(name), "MUL_MAT_ID(%s,n_mats=4,rows=40)", ggml_type_name(all_types[t]));
        CASE(name, TH_MATMUL, b_mul_mat_id, all_types[t], 4, 1, 40, 0);
    }
    CASE("SOFT_MAX(16,10)", TH_DEFAULT, b_soft_max, 16, 10, 1, 0);
    CASE("SOFT_MAX(1000,3)", TH_DEFAULT, b_soft_max, 1000, 3, 1, 0);
    CASE("SOFT_MAX(100000,2)", TH_DEFAULT, b_soft_max, 100000, 2, 1, 0);
    CASE("SOFT_MAX(32,32,8,mask,scale)", TH_DEFAULT, b_soft_max, 32, 32, 8, 1);
    for (int tt = 0; tt < 2; tt++) {
        const enum ggml_type t = tt ? GGML_TYPE_F16 : GGML_TYPE_F32;
        snprintf(name, sizeof(name), "ROPE(%s,mode=0)", ggml_type_name(t));
        CASE(name, TH_DEFAULT, b_rope, t, 128, 32, 128, 0, 0);
        snprintf(name, sizeof(name), "ROPE(%s,neox,partial)", ggml_type_name(t));
        CASE(name, TH_DEFAULT, b_rope, t, 80, 32, 32, 2, 0);
        snprintf(name, sizeof(name), "ROPE(%s,yarn)", ggml_type_name(t));
        CASE(name, TH_DEFAULT, b_rope, t, 64, 8, 64, 0, 1);
        snprintf(name, sizeof(name), "ROPE(%s,glm)", ggml_type_name(t));
        CASE(name, TH_DEFAULT, b_rope, t, 64, 8, 32, 4, 0); // n_dims = ne0/2: every element written once
    }
    CASE("IM2COL(2D)", TH_DEFAULT, b_im2col, 1);
    CASE("IM2COL(1D)", TH_DEFAULT, b_im2col, 0);
    CASE("CONCAT(f32)", TH_DEFAULT, b_concat, GGML_TYPE_F32);
    CASE("CONCAT(i32)", TH_DEFAULT, b_concat, GGML_TYPE_I32);
    for (int o = 0; o < 2; o++) {
        CASE(o ? "ARGSORT(8,desc)" : "ARGSORT(8,asc)", TH_DEFAULT, b_argsort, 8, 1, 1, o);
        CASE(o ? "ARGSORT(16x10x10,desc)" : "ARGSORT(16x10x10,asc)", TH_DEFAULT, b_argsort, 16, 10, 10, o);
        CASE(o ? "ARGSORT(1000x3,desc)" : "ARGSORT(1000x3,asc)", TH_DEFAULT, b_argsort, 1000, 3, 1, o);
        CASE(o ? "ARGSORT(4096x2,desc)" : "ARGSORT(4096x2,asc)", TH_DEFAULT, b_argsort, 4096, 2, 1, o);
        CASE(o ? "ARGSORT(5000x2,desc)" : "ARGSORT(5000x2,asc)", TH_DEFAULT, b_argsort, 5000, 2, 1, o);
        CASE(o ? "ARGSORT(ties 777x3,desc)" : "ARGSORT(ties 777x3,asc)", 0.0, b_argsort_ties, 777, 3, o);
        CASE(o ? "ARGSORT(ties 5000,desc)" : "ARGSORT(ties 5000,asc)", 0.0, b_argsort_ties, 5000, 1, o);
    }
    CASE("ACC", TH_DEFAULT, b_acc, 0);
    CASE("SET", TH_DEFAULT, b_acc, 1);
    CASE("MOE(q4_0, 8 experts, top 2)", TH_MATMUL, b_moe, 0);
    printf("ops: %d passed, %d failed, %d not supported by CUDA\n", cases_ok, cases_failed, cases_unsupported);
}

// ---------------------------------------------------------------------------------------------
// buffer types

static void test_buffer_types(void) {
    ggml_backend_buffer_type_t dev = ggml_backend_cuda_buffer_type(0);
    ggml_backend_buffer_type_t host = ggml_backend_cuda_host_buffer_type();
    T_CHECK(dev != NULL && host != NULL);
    T_CHECK(strcmp(ggml_backend_buft_name(dev), "CUDA0") == 0);
    T_CHECK(strcmp(ggml_backend_buft_name(host), "CUDA_Host") == 0);
    const size_t al = ggml_backend_buft_get_alignment(dev);
    T_CHECK(al >= 128 && (al & (al - 1)) == 0);
    T_CHECK(!ggml_backend_buft_is_host(dev));
    T_CHECK(ggml_backend_buft_is_host(host));
    T_CHECK(ggml_backend_buft_supports_backend(dev, cuda));
    T_CHECK(!ggml_backend_buft_supports_backend(dev, cpu));
    T_CHECK(ggml_backend_buft_supports_backend(host, cpu));
    T_CHECK(ggml_backend_get_default_buffer_type(cuda) == dev);

    struct ggml_init_params ip = { 16 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1000);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1000);
    struct ggml_tensor * q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 256, 3);
    T_CHECK(ggml_backend_buft_get_alloc_size(dev, q) == ggml_nbytes(q));

    ggml_backend_buffer_t db = ggml_backend_buft_alloc_buffer(dev, 1 << 20);
    ggml_backend_buffer_t hb = ggml_backend_buft_alloc_buffer(host, 1 << 20);
    T_CHECK(db != NULL && hb != NULL);
    T_CHECK(((uintptr_t) ggml_backend_buffer_get_base(db)) % al == 0);
    T_CHECK(strcmp(ggml_backend_buffer_name(db), "CUDA0") == 0);
    T_CHECK(ggml_backend_buffer_is_host(hb) && !ggml_backend_buffer_is_host(db));

    ggml_tallocr_t td = ggml_tallocr_new_from_buffer(db);
    ggml_tallocr_t th = ggml_tallocr_new_from_buffer(hb);
    ggml_tallocr_alloc(td, a);
    ggml_tallocr_alloc(th, b);
    ggml_tallocr_alloc(td, q);
    float x[1000], y[1000];
    for (int i = 0; i < 1000; i++) x[i] = (float) i * 0.5f - 7.0f;
    ggml_backend_tensor_set(a, x, 0, sizeof(x));
    memset(y, 0, sizeof(y));
    ggml_backend_tensor_get(a, y, 0, sizeof(y));
    T_CHECK(memcmp(x, y, sizeof(x)) == 0);
    // partial access
    ggml_backend_tensor_get(a, y, 40, 8);
    T_CHECK(y[0] == x[10] && y[1] == x[11]);
    // device -> pinned host -> compare
    ggml_backend_tensor_copy(a, b);
    T_CHECK(memcmp(b->data, x, sizeof(x)) == 0);
    // async set/get on the backend's stream
    for (int i = 0; i < 1000; i++) x[i] = -x[i];
    ggml_backend_tensor_set_async(cuda, a, x, 0, sizeof(x));
    ggml_backend_tensor_get_async(cuda, a, y, 0, sizeof(y));
    ggml_backend_synchronize(cuda);
    T_CHECK(memcmp(x, y, sizeof(x)) == 0);
    // clear
    ggml_backend_buffer_clear(db, 0);
    ggml_backend_tensor_get(a, y, 0, sizeof(y));
    T_CHECK(y[0] == 0.0f && y[999] == 0.0f);
    // quantized round trip
    char qd[3 * 144], qr[3 * 144];
    for (size_t i = 0; i < ggml_nbytes(q); i++) qd[i] = (char) (i * 7);
    ggml_backend_tensor_set(q, qd, 0, ggml_nbytes(q));
    ggml_backend_tensor_get(q, qr, 0, ggml_nbytes(q));
    T_CHECK(memcmp(qd, qr, ggml_nbytes(q)) == 0);

    ggml_tallocr_free(td);
    ggml_tallocr_free(th);
    ggml_backend_buffer_free(db);
    ggml_backend_buffer_free(hb);
    ggml_free(ctx);
}

// the CPU backend computes on tensors in CUDA_Host memory
static void test_host_buffer_cpu_compute(void) {
    struct ggml_init_params ip = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 100);
    struct ggml_tensor * c = ggml_add(ctx, a, b);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, c);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_cuda_host_buffer_type());
    T_CHECK(buf != NULL);
    float x[100], y[100], z[100];
    for (int i = 0; i < 100; i++) { x[i] = (float) i; y[i] = 2.0f * (float) i; }
    ggml_backend_tensor_set(a, x, 0, sizeof(x));
    ggml_backend_tensor_set(b, y, 0, sizeof(y));
    T_CHECK(ggml_backend_graph_compute(cpu, gf));
    ggml_backend_tensor_get(c, z, 0, sizeof(z));
    for (int i = 0; i < 100; i++) T_CHECK(z[i] == 3.0f * (float) i);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

// weights in a CUDA_Split buffer multiply on the device like ordinary weights
static void test_split_buffer(void) {
    ggml_backend_buffer_type_t split = ggml_backend_cuda_split_buffer_type(NULL);
    T_CHECK(split != NULL && strcmp(ggml_backend_buft_name(split), "CUDA_Split") == 0);
    T_CHECK(ggml_backend_buft_supports_backend(split, cuda) && !ggml_backend_buft_is_host(split));
    for (int t = 0; t < 3; t++) {
        const enum ggml_type wt = t == 0 ? GGML_TYPE_F32 : (t == 1 ? GGML_TYPE_Q4_0 : GGML_TYPE_Q4_K);
        struct ggml_init_params ip = { 8 * ggml_tensor_overhead(), NULL, true };
        struct ggml_context * wctx = ggml_init(ip);
        struct ggml_context * gctx = ggml_init((struct ggml_init_params) { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true });
        struct ggml_tensor * w = ggml_new_tensor_2d(wctx, wt, 512, 96);
        ggml_backend_buffer_t wb = ggml_backend_alloc_ctx_tensors_from_buft(wctx, split);
        T_CHECK(wb != NULL && w->buffer == wb);
        n_inputs = 0;
        inputs[n_inputs++] = (struct input) { w, -1.0f, 1.0f };
        fill_input(&inputs[0]);
        // read back through the split buffer
        char * back = malloc(ggml_nbytes(w));
        char * ref = malloc(ggml_nbytes(w));
        ggml_backend_tensor_get(w, back, 0, ggml_nbytes(w));
        // the same weights in CPU memory
        struct ggml_tensor * wc = ggml_dup_tensor(gctx, w);
        struct ggml_tensor * x = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, 512, 3);
        struct ggml_tensor * yc = ggml_mul_mat(gctx, wc, x);
        struct ggml_cgraph * gc = ggml_new_graph(gctx);
        ggml_build_forward_expand(gc, yc);
        ggml_backend_buffer_t cb = ggml_backend_alloc_ctx_tensors(gctx, cpu);
        ggml_backend_tensor_set(wc, back, 0, ggml_nbytes(w));
        ggml_backend_tensor_get(wc, ref, 0, ggml_nbytes(w));
        T_CHECK(memcmp(back, ref, ggml_nbytes(w)) == 0);
        float xv[512 * 3];
        for (int i = 0; i < 512 * 3; i++) xv[i] = sinf(0.01f * (float) i);
        ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
        T_CHECK(ggml_backend_graph_compute(cpu, gc));
        float * want = to_floats(yc);

        // on CUDA: w from the split buffer, x and y in device memory
        struct ggml_context * dctx = ggml_init((struct ggml_init_params) { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true });
        struct ggml_tensor * xd = ggml_new_tensor_2d(dctx, GGML_TYPE_F32, 512, 3);
        struct ggml_tensor * yd = ggml_mul_mat(dctx, w, xd);
        struct ggml_cgraph * gd = ggml_new_graph(dctx);
        ggml_build_forward_expand(gd, yd);
        T_CHECK(ggml_backend_supports_op(cuda, yd));
        ggml_backend_buffer_t db = ggml_backend_alloc_ctx_tensors(dctx, cuda);
        ggml_backend_tensor_set(xd, xv, 0, sizeof(xv));
        T_CHECK(ggml_backend_graph_compute(cuda, gd));
        float * got = to_floats(yd);
        const double e = nmse(got, want, ggml_nelements(yd));
        T_CHECK_MSG(e < TH_MATMUL, "split %s: nmse %.3e", ggml_type_name(wt), e);
        // other ops must not read split tensors
        struct ggml_tensor * bad = ggml_scale(dctx, w, 2.0f);
        T_CHECK(!ggml_backend_supports_op(cuda, bad));

        free(back);
        free(ref);
        free(want);
        free(got);
        ggml_backend_buffer_free(db);
        ggml_backend_buffer_free(cb);
        ggml_backend_buffer_free(wb);
        ggml_free(dctx);
        ggml_free(gctx);
        ggml_free(wctx);
    }
}

// ---------------------------------------------------------------------------------------------
// scheduler: weights on CUDA pin the mul_mat there; ARGMAX (no CUDA kernel) falls back to the CPU

static void test_sched_fallback(void) {
    const int64_t K = 256, M = 64, N = 8;
    struct ggml_context * wctx = ggml_init((struct ggml_init_params) { 4 * ggml_tensor_overhead(), NULL, true });
    struct ggml_tensor * w = ggml_new_tensor_2d(wctx, GGML_TYPE_Q4_0, K, M);
    ggml_backend_buffer_t wb = ggml_backend_alloc_ctx_tensors(wctx, cuda);
    T_CHECK(wb != NULL);
    ggml_backend_buffer_set_usage(wb, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    n_inputs = 0;
    inputs[n_inputs++] = (struct input) { w, -1.0f, 1.0f };
    fill_input(&inputs[0]);

    struct ggml_context * gctx = ggml_init((struct ggml_init_params) { 32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true });
    struct ggml_tensor * x = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, K, N);
    struct ggml_tensor * mm = ggml_mul_mat(gctx, w, x);
    struct ggml_tensor * act = ggml_silu(gctx, mm);
    struct ggml_tensor * am = ggml_argmax(gctx, act);
    struct ggml_cgraph * gf = ggml_new_graph(gctx);
    ggml_build_forward_expand(gf, am);
    T_CHECK(!ggml_backend_supports_op(cuda, am));
    T_CHECK(ggml_backend_supports_op(cuda, mm));

    ggml_backend_t backends[2] = { cuda, cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256);
    ggml_backend_buffer_t xb = ggml_backend_alloc_buffer(cpu, ggml_nbytes(x) + 64);
    ggml_tallocr_t ta = ggml_tallocr_new_from_buffer(xb);
    ggml_tallocr_alloc(ta, x);
    ggml_tallocr_free(ta);
    ggml_backend_sched_init_measure(sched, gf);
    float xv[256 * 8];
    for (int i = 0; i < K * N; i++) xv[i] = cosf(0.37f * (float) i);
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
    T_CHECK(ggml_x_backend_sched_graph_compute(sched, gf));
    T_CHECK(ggml_backend_sched_get_node_backend(sched, mm) == cuda);
    T_CHECK(ggml_backend_sched_get_node_backend(sched, am) == cpu);
    T_CHECK(ggml_backend_sched_get_n_splits(sched) >= 2);
    int32_t got[8];
    ggml_backend_tensor_get(am, got, 0, sizeof(got));

    // the same graph on the CPU alone
    struct ggml_context * cctx = ggml_init((struct ggml_init_params) { 32 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true });
    struct ggml_tensor * wc = ggml_dup_tensor(cctx, w);
    struct ggml_tensor * xc = ggml_dup_tensor(cctx, x);
    struct ggml_tensor * ac = ggml_argmax(cctx, ggml_silu(cctx, ggml_mul_mat(cctx, wc, xc)));
    struct ggml_cgraph * gc = ggml_new_graph(cctx);
    ggml_build_forward_expand(gc, ac);
    ggml_backend_buffer_t cb = ggml_backend_alloc_ctx_tensors(cctx, cpu);
    char * wbytes = malloc(ggml_nbytes(w));
    ggml_backend_tensor_get(w, wbytes, 0, ggml_nbytes(w));
    ggml_backend_tensor_set(wc, wbytes, 0, ggml_nbytes(w));
    ggml_backend_tensor_set(xc, xv, 0, sizeof(xv));
    T_CHECK(ggml_backend_graph_compute(cpu, gc));
    int32_t want[8];
    ggml_backend_tensor_get(ac, want, 0, sizeof(want));
    int same = 0;
    for (int i = 0; i < N; i++) same += got[i] == want[i];
    // argmax of nearly tied values may differ by rounding; nearly all must agree
    T_CHECK_MSG(same >= N - 1, "argmax agrees on %d of %d rows", same, (int) N);

    free(wbytes);
    ggml_backend_buffer_free(cb);
    ggml_free(cctx);
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(xb);
    ggml_free(gctx);
    ggml_backend_buffer_free(wb);
    ggml_free(wctx);
}

static void test_registry(void) {
    T_CHECK(ggml_backend_reg_find_by_name("CUDA0") != SIZE_MAX);
    ggml_backend_t b = ggml_backend_reg_init_backend_from_str("CUDA0");
    T_CHECK(b != NULL && ggml_backend_is_cuda(b) && strcmp(ggml_backend_name(b), "CUDA0") == 0);
    ggml_backend_free(b);
    char desc[256];
    ggml_backend_cuda_get_device_description(0, desc, sizeof(desc));
    size_t fr = 0, tot = 0;
    ggml_backend_cuda_get_device_memory(0, &fr, &tot);
    printf("  device 0: %s, %.1f of %.1f GiB free\n", desc, fr / 1073741824.0, tot / 1073741824.0);
    T_CHECK(desc[0] != '\0' && tot > 0 && fr <= tot);
}

// several host threads, each with its own CUDA backend (devices round-robin), compute the same
// graph concurrently: MUL_MAT with weights in one shared CUDA_Split buffer (so the per-device
// helper contexts are used by every backend at once) and with the thread's own copy of the
// weights, then ADD and SOFT_MAX. Every result must be bit-identical to the single-threaded one.
// With GGML_CUDA_EMU_STREAMS=threads the emulator runs each stream's work on a thread of its own.
#define STRESS_THREADS 4
#define STRESS_ITERS   5
#define STRESS_K       512
#define STRESS_M       96
#define STRESS_N       3

struct stress_arg {
    int                  device;
    struct ggml_tensor * wsplit; // shared, in the split buffer
    const char *         wbytes; // the same weights, to upload into the thread's own buffer
    const float *        x;
    const float *        want;   // [2][STRESS_M * STRESS_N]: split result, local result
    int                  bad;    // failures seen by the thread (checked by the main thread)
};

// builds and computes the graph on `be` `iters` times; out (when not NULL) receives the results
static int stress_run(ggml_backend_t be, struct stress_arg * a, int iters, float * out) {
    struct ggml_context * ctx = ggml_init((struct ggml_init_params) { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true });
    struct ggml_tensor * x  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, STRESS_K, STRESS_N);
    struct ggml_tensor * wl = ggml_new_tensor_2d(ctx, a->wsplit->type, STRESS_K, STRESS_M);
    struct ggml_tensor * y1 = ggml_mul_mat(ctx, a->wsplit, x);
    struct ggml_tensor * y2 = ggml_soft_max(ctx, ggml_add(ctx, ggml_mul_mat(ctx, wl, x), y1));
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, y1);
    ggml_build_forward_expand(gf, y2);
    int bad = 0;
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    if (buf == NULL) {
        ggml_free(ctx);
        return 1;
    }
    ggml_backend_tensor_set(x, a->x, 0, ggml_nbytes(x));
    ggml_backend_tensor_set(wl, a->wbytes, 0, ggml_nbytes(wl));
    float got[2][STRESS_M * STRESS_N];
    for (int it = 0; it < iters; it++) {
        if (!ggml_backend_graph_compute(be, gf)) {
            bad++;
            continue;
        }
        ggml_backend_tensor_get(y1, got[0], 0, sizeof(got[0]));
        ggml_backend_tensor_get(y2, got[1], 0, sizeof(got[1]));
        if (out != NULL) {
            memcpy(out, got, sizeof(got));
        } else if (memcmp(got, a->want, sizeof(got)) != 0) {
            bad++;
        }
    }
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return bad;
}

static void * stress_thread(void * p) {
    struct stress_arg * a = p;
    ggml_backend_t be = ggml_backend_cuda_init(a->device);
    if (be == NULL) {
        a->bad++;
        return NULL;
    }
    a->bad += stress_run(be, a, STRESS_ITERS, NULL);
    ggml_backend_free(be);
    return NULL;
}

static void test_threads(void) {
    const int ndev = ggml_backend_cuda_get_device_count();
    struct ggml_context * wctx = ggml_init((struct ggml_init_params) { 4 * ggml_tensor_overhead(), NULL, true });
    struct ggml_tensor * w = ggml_new_tensor_2d(wctx, GGML_TYPE_Q4_0, STRESS_K, STRESS_M);
    ggml_backend_buffer_t wb = ggml_backend_alloc_ctx_tensors_from_buft(wctx, ggml_backend_cuda_split_buffer_type(NULL));
    T_CHECK(wb != NULL);
    if (wb == NULL) {
        ggml_free(wctx);
        return;
    }
    n_inputs = 0;
    inputs[n_inputs++] = (struct input) { w, -1.0f, 1.0f };
    fill_input(&inputs[0]);
    char * wbytes = malloc(ggml_nbytes(w));
    ggml_backend_tensor_get(w, wbytes, 0, ggml_nbytes(w));
    // every thread its own src1 (a thread that computes with another's data is caught)
    static float x[STRESS_THREADS][STRESS_K * STRESS_N];
    static float want[STRESS_THREADS][2][STRESS_M * STRESS_N];
    struct stress_arg args[STRESS_THREADS];
    for (int t = 0; t < STRESS_THREADS; t++) {
        for (int i = 0; i < STRESS_K * STRESS_N; i++) x[t][i] = cosf(0.37f * (float) i + (float) t);
        args[t] = (struct stress_arg) { t % ndev, w, wbytes, x[t], &want[t][0][0], 0 };
        // the reference: one thread, the main backend
        T_CHECK(stress_run(cuda, &args[t], 1, &want[t][0][0]) == 0);
    }
    pthread_t th[STRESS_THREADS];
    for (int t = 0; t < STRESS_THREADS; t++) {
        T_CHECK(pthread_create(&th[t], NULL, stress_thread, &args[t]) == 0);
    }
    for (int t = 0; t < STRESS_THREADS; t++) {
        pthread_join(th[t], NULL);
        T_CHECK_MSG(args[t].bad == 0, "thread %d (CUDA%d): %d of %d computations failed or differed", t,
                    args[t].device, args[t].bad, STRESS_ITERS);
    }
    free(wbytes);
    ggml_backend_buffer_free(wb);
    ggml_free(wctx);
}

int main(void) {
    ggml_x_backend_cuda_register();
    const int n = ggml_backend_cuda_get_device_count();
    if (n == 0) {
        printf("test-cuda: SKIP: no CUDA device present (cudaGetDeviceCount found none)\n");
        return 0;
    }
    cpu = ggml_backend_cpu_init();
    cuda = ggml_backend_cuda_init(0);
    if (cpu == NULL || cuda == NULL) {
        fprintf(stderr, "test-cuda: backend initialisation failed\n");
        return 1;
    }
    T_RUN(test_registry);
    T_RUN(test_buffer_types);
    T_RUN(test_host_buffer_cpu_compute);
    T_RUN(test_split_buffer);
    T_RUN(test_sched_fallback);
    T_RUN(test_ops);
    T_RUN(test_threads);
    ggml_backend_free(cuda);
    ggml_backend_free(cpu);
    return T_SUMMARY();
}
