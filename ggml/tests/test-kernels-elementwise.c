// test-kernels-elementwise.c - CPU kernels of the element-wise families (dup/cpy/cont, binary,
// acc/set, unary, reduce, repeat/concat, get_rows, diag) against straightforward double
// precision references on small random inputs, including broadcast and permuted (non-contiguous)
// sources. Every graph is computed with 1 and with 3 threads; both results must be identical.

#include "ggml.h"
#include "testing.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// helpers

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static double rnd(void) { // uniform [0, 1)
    g_rng += 0x9e3779b97f4a7c15ull;
    uint64_t z = g_rng;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double) (z >> 11) / 9007199254740992.0;
}

static struct ggml_context * new_ctx(void) {
    struct ggml_init_params p = { 64 * 1024 * 1024, NULL, false };
    return ggml_init(p);
}

static char * elem_ptr(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

static double get(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const char * p = elem_ptr(t, i0, i1, i2, i3);
    switch (t->type) {
        case GGML_TYPE_F32: return *(const float *) p;
        case GGML_TYPE_F16: return ggml_fp16_to_fp32(*(const ggml_fp16_t *) p);
        case GGML_TYPE_I32: return *(const int32_t *) p;
        case GGML_TYPE_I16: return *(const int16_t *) p;
        default: return NAN;
    }
}

static void set(struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3, double v) {
    char * p = elem_ptr(t, i0, i1, i2, i3);
    switch (t->type) {
        case GGML_TYPE_F32: *(float *) p = (float) v; break;
        case GGML_TYPE_F16: *(ggml_fp16_t *) p = ggml_fp32_to_fp16((float) v); break;
        case GGML_TYPE_I32: *(int32_t *) p = (int32_t) v; break;
        case GGML_TYPE_I16: *(int16_t *) p = (int16_t) v; break;
        default: break;
    }
}

#define FOR4(t) \
    for (int64_t i3 = 0; i3 < (t)->ne[3]; i3++) \
        for (int64_t i2 = 0; i2 < (t)->ne[2]; i2++) \
            for (int64_t i1 = 0; i1 < (t)->ne[1]; i1++) \
                for (int64_t i0 = 0; i0 < (t)->ne[0]; i0++)

// new tensor with values uniform in [lo, hi) (integers for integer types)
static struct ggml_tensor * rand_tensor(struct ggml_context * ctx, enum ggml_type type, int64_t n0, int64_t n1,
                                        int64_t n2, int64_t n3, double lo, double hi) {
    struct ggml_tensor * t = ggml_new_tensor_4d(ctx, type, n0, n1, n2, n3);
    FOR4(t) {
        double v = lo + (hi - lo) * rnd();
        if (type == GGML_TYPE_I32 || type == GGML_TYPE_I16) {
            v = floor(v);
        }
        set(t, i0, i1, i2, i3, v);
    }
    return t;
}

// computes out with 1 thread, then with 3 threads; checks that both results are identical
static void compute_1_3(struct ggml_context * ctx, struct ggml_tensor * out) {
    T_CHECK(out != NULL);
    if (out == NULL) {
        return;
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    // an inplace result (e.g. CLAMP, a view of its input) overwrites its input: keep a copy of the
    // aliased tensor to restore it before the second run
    struct ggml_tensor * base = out->view_src;
    char * saved = NULL;
    if (base != NULL) {
        saved = malloc(ggml_nbytes(base));
        memcpy(saved, base->data, ggml_nbytes(base));
    }
    ggml_graph_compute_with_ctx(ctx, gf, 1);
    const size_t n = ggml_nbytes(out);
    char * first = malloc(n);
    memcpy(first, out->data, n);
    if (base != NULL) {
        memcpy(base->data, saved, ggml_nbytes(base));
    } else {
        memset(out->data, 0x7f, n); // poison: the second run must rewrite everything
    }
    ggml_graph_compute_with_ctx(ctx, gf, 3);
    T_CHECK_MSG(memcmp(first, out->data, n) == 0, "1-thread and 3-thread results differ (%s)",
                ggml_op_desc(out));
    free(saved);
    free(first);
}

// |got - want| <= tol * max(1, |want|) over all elements; reports the first mismatch only
#define CHECK_ALL(out, expr, tol) \
    do { \
        int bad_ = 0; \
        FOR4(out) { \
            const double want_ = (expr); \
            const double got_ = get((out), i0, i1, i2, i3); \
            const double sc_ = fabs(want_) > 1.0 ? fabs(want_) : 1.0; \
            const bool same_inf_ = isinf(want_) && got_ == want_; \
            if (!bad_ && !same_inf_ && !(fabs(got_ - want_) <= (tol) * sc_)) { \
                bad_ = 1; \
                T_CHECK_MSG(0, "%s at [%lld,%lld,%lld,%lld]: got %.9g want %.9g", #expr, (long long) i0, \
                            (long long) i1, (long long) i2, (long long) i3, got_, want_); \
            } \
        } \
        t_checks_run++; \
    } while (0)

// ---------------------------------------------------------------------------------------------
// binary ops

static double bin_ref(int op, double x, double y) {
    switch (op) {
        case 0: return x + y;
        case 1: return x - y;
        case 2: return x * y;
        default: return x / y;
    }
}

static struct ggml_tensor * bin_build(struct ggml_context * ctx, int op, struct ggml_tensor * a, struct ggml_tensor * b) {
    switch (op) {
        case 0: return ggml_add(ctx, a, b);
        case 1: return ggml_sub(ctx, a, b);
        case 2: return ggml_mul(ctx, a, b);
        default: return ggml_div(ctx, a, b);
    }
}

static void test_binary_broadcast(void) {
    static const int64_t bshapes[][4] = { { 8, 6, 4, 3 }, { 4, 3, 2, 1 }, { 8, 1, 4, 1 }, { 1, 1, 1, 1 }, { 2, 6, 1, 3 } };
    for (int op = 0; op < 4; op++) {
        for (int s = 0; s < 5; s++) {
            struct ggml_context * ctx = new_ctx();
            const double lo = op == 3 ? 1.0 : -1.0, hi = op == 3 ? 2.0 : 1.0;
            struct ggml_tensor * a = rand_tensor(ctx, GGML_TYPE_F32, 8, 6, 4, 3, lo, hi);
            const int64_t * bs = bshapes[s];
            struct ggml_tensor * b = rand_tensor(ctx, GGML_TYPE_F32, bs[0], bs[1], bs[2], bs[3], lo, hi);
            struct ggml_tensor * out = bin_build(ctx, op, a, b);
            compute_1_3(ctx, out);
            CHECK_ALL(out, (double) (float) bin_ref(op, get(a, i0, i1, i2, i3),
                                                    get(b, i0 % bs[0], i1 % bs[1], i2 % bs[2], i3 % bs[3])), 1e-7);
            ggml_free(ctx);
        }
    }
}

static void test_binary_noncontig(void) {
    for (int op = 0; op < 4; op++) {
        struct ggml_context * ctx = new_ctx();
        const double lo = op == 3 ? 1.0 : -1.0, hi = op == 3 ? 2.0 : 1.0;
        // a: permuted [8, 5, 6, 2] ; b: transposed [8, 5, 1, 1] (nb0 != 4)
        struct ggml_tensor * a0 = rand_tensor(ctx, GGML_TYPE_F32, 8, 6, 5, 2, lo, hi);
        struct ggml_tensor * a = ggml_permute(ctx, a0, 0, 2, 1, 3);
        struct ggml_tensor * b0 = rand_tensor(ctx, GGML_TYPE_F32, 5, 8, 1, 1, lo, hi);
        struct ggml_tensor * b = ggml_transpose(ctx, b0);
        struct ggml_tensor * out = bin_build(ctx, op, a, b);
        compute_1_3(ctx, out);
        CHECK_ALL(out, (double) (float) bin_ref(op, get(a, i0, i1, i2, i3), get(b, i0, i1, 0, 0)), 1e-7);
        ggml_free(ctx);
    }
}

static void test_add_types(void) {
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * a16 = rand_tensor(ctx, GGML_TYPE_F16, 16, 5, 3, 1, -1, 1);
    struct ggml_tensor * b32 = rand_tensor(ctx, GGML_TYPE_F32, 16, 5, 1, 1, -1, 1);
    struct ggml_tensor * b16 = rand_tensor(ctx, GGML_TYPE_F16, 16, 5, 3, 1, -1, 1);

    struct ggml_tensor * o1 = ggml_add(ctx, a16, b32); // F16 + F32 -> F16
    compute_1_3(ctx, o1);
    T_CHECK(o1->type == GGML_TYPE_F16);
    CHECK_ALL(o1, ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) (get(a16, i0, i1, i2, i3) + get(b32, i0, i1, 0, 0)))), 1e-7);

    struct ggml_tensor * o2 = ggml_add(ctx, a16, b16); // F16 + F16 -> F16
    compute_1_3(ctx, o2);
    CHECK_ALL(o2, ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) (get(a16, i0, i1, i2, i3) + get(b16, i0, i1, i2, i3)))), 1e-7);

    struct ggml_tensor * o3 = ggml_add_cast(ctx, a16, b32, GGML_TYPE_F32); // F16 + F32 -> F32
    compute_1_3(ctx, o3);
    T_CHECK(o3->type == GGML_TYPE_F32);
    CHECK_ALL(o3, (float) (get(a16, i0, i1, i2, i3) + get(b32, i0, i1, 0, 0)), 1e-7);

    struct ggml_tensor * s = rand_tensor(ctx, GGML_TYPE_F32, 1, 1, 1, 1, -1, 1);
    struct ggml_tensor * a32 = rand_tensor(ctx, GGML_TYPE_F32, 7, 3, 2, 2, -1, 1);
    struct ggml_tensor * o4 = ggml_add1(ctx, a32, s);
    compute_1_3(ctx, o4);
    CHECK_ALL(o4, (float) (get(a32, i0, i1, i2, i3) + get(s, 0, 0, 0, 0)), 1e-7);
    ggml_free(ctx);
}

static void test_acc_set(void) {
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * a = rand_tensor(ctx, GGML_TYPE_F32, 10, 9, 4, 2, -1, 1);
    struct ggml_tensor * b = rand_tensor(ctx, GGML_TYPE_F32, 5, 4, 2, 2, -1, 1);
    const int o[4] = { 2, 3, 1, 0 };
    const size_t off = o[0] * a->nb[0] + o[1] * a->nb[1] + o[2] * a->nb[2] + o[3] * a->nb[3];

    struct ggml_tensor * acc = ggml_acc(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], off);
    compute_1_3(ctx, acc);
#define IN_WIN (i0 >= o[0] && i0 < o[0] + 5 && i1 >= o[1] && i1 < o[1] + 4 && i2 >= o[2] && i2 < o[2] + 2 && i3 >= o[3] && i3 < o[3] + 2)
    CHECK_ALL(acc, IN_WIN ? (float) (get(a, i0, i1, i2, i3) + get(b, i0 - o[0], i1 - o[1], i2 - o[2], i3 - o[3]))
                          : get(a, i0, i1, i2, i3), 1e-7);

    struct ggml_tensor * st = ggml_set(ctx, a, b, a->nb[1], a->nb[2], a->nb[3], off);
    compute_1_3(ctx, st);
    CHECK_ALL(st, IN_WIN ? get(b, i0 - o[0], i1 - o[1], i2 - o[2], i3 - o[3]) : get(a, i0, i1, i2, i3), 0);

    // SET on I32, b a transposed view
    struct ggml_tensor * ai = rand_tensor(ctx, GGML_TYPE_I32, 10, 9, 4, 2, -1000, 1000);
    struct ggml_tensor * bi0 = rand_tensor(ctx, GGML_TYPE_I32, 4, 5, 2, 2, -1000, 1000);
    struct ggml_tensor * bi = ggml_cont(ctx, ggml_transpose(ctx, bi0));
    struct ggml_tensor * sti = ggml_set(ctx, ai, bi, ai->nb[1], ai->nb[2], ai->nb[3], off);
    compute_1_3(ctx, sti);
    CHECK_ALL(sti, IN_WIN ? get(bi0, i1 - o[1], i0 - o[0], i2 - o[2], i3 - o[3]) : get(ai, i0, i1, i2, i3), 0);
#undef IN_WIN
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// unary ops

static double unary_ref(int op, double x) {
    switch (op) {
        case GGML_UNARY_OP_ABS: return fabs(x);
        case GGML_UNARY_OP_SGN: return x > 0 ? 1 : (x < 0 ? -1 : 0);
        case GGML_UNARY_OP_NEG: return -x;
        case GGML_UNARY_OP_STEP: return x > 0 ? 1 : 0;
        case GGML_UNARY_OP_TANH: return tanh(x);
        case GGML_UNARY_OP_ELU: return x > 0 ? x : expm1(x);
        case GGML_UNARY_OP_RELU: return x > 0 ? x : 0;
        case GGML_UNARY_OP_GELU: return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
        case GGML_UNARY_OP_GELU_QUICK: return x / (1 + exp(-1.702 * x));
        case GGML_UNARY_OP_SILU: return x / (1 + exp(-x));
        default: return NAN;
    }
}

static void test_unary(void) {
    for (int op = 0; op < GGML_UNARY_OP_COUNT; op++) {
        struct ggml_context * ctx = new_ctx();
        // rows with gaps between them: a view of every other row of a bigger tensor
        struct ggml_tensor * big = rand_tensor(ctx, GGML_TYPE_F32, 33, 14, 3, 2, -3, 3);
        struct ggml_tensor * x = ggml_view_4d(ctx, big, 33, 7, 3, 2, 2 * big->nb[1], big->nb[2], big->nb[3], 0);
        struct ggml_tensor * out = ggml_unary(ctx, x, (enum ggml_unary_op) op);
        compute_1_3(ctx, out);
        // gelu and gelu_quick are ggml's fp16 tables: the input and the value rounded to fp16
        // (within 3e-3 of the exact function on [-3, 3]); the others are float-exact
        const bool table = op == GGML_UNARY_OP_GELU || op == GGML_UNARY_OP_GELU_QUICK;
        CHECK_ALL(out, unary_ref(op, get(x, i0, i1, i2, i3)), table ? 3e-3 : 2e-7);
        ggml_free(ctx);
    }
}

static void test_unary_params(void) {
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * x = rand_tensor(ctx, GGML_TYPE_F32, 17, 5, 3, 2, -2, 2);
    struct ggml_tensor * p = rand_tensor(ctx, GGML_TYPE_F32, 17, 5, 3, 2, 0.01, 2);

    struct ggml_tensor * o = ggml_sqr(ctx, x);
    compute_1_3(ctx, o);
    CHECK_ALL(o, get(x, i0, i1, i2, i3) * get(x, i0, i1, i2, i3), 1e-7);
    o = ggml_sqrt(ctx, p);
    compute_1_3(ctx, o);
    CHECK_ALL(o, sqrt(get(p, i0, i1, i2, i3)), 1e-7);
    o = ggml_log(ctx, p);
    compute_1_3(ctx, o);
    CHECK_ALL(o, log(get(p, i0, i1, i2, i3)), 2e-7);
    o = ggml_scale(ctx, x, 0.75f);
    compute_1_3(ctx, o);
    CHECK_ALL(o, 0.75 * get(x, i0, i1, i2, i3), 1e-7);
    {
        // ggml_clamp works in place (its result is a view of its input), as in the reference
        struct ggml_tensor * xc = ggml_dup_tensor(ctx, x);
        memcpy(xc->data, x->data, ggml_nbytes(x));
        o = ggml_clamp(ctx, xc, -0.5f, 0.25f);
        compute_1_3(ctx, o);
        CHECK_ALL(o, fmax(-0.5, fmin(0.25, get(x, i0, i1, i2, i3))), 0);
    }
    o = ggml_leaky_relu(ctx, x, 0.1f, false);
    compute_1_3(ctx, o);
    CHECK_ALL(o, get(x, i0, i1, i2, i3) > 0 ? get(x, i0, i1, i2, i3) : (double) 0.1f * get(x, i0, i1, i2, i3), 1e-7);
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// reductions

static void test_reduce(void) {
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * x0 = rand_tensor(ctx, GGML_TYPE_F32, 13, 6, 4, 3, -1, 1);
    struct ggml_tensor * x = ggml_permute(ctx, x0, 0, 2, 1, 3); // [13, 4, 6, 3], rows not in memory order

    double total = 0;
    FOR4(x) total += get(x, i0, i1, i2, i3);

    struct ggml_tensor * s = ggml_sum(ctx, x);
    compute_1_3(ctx, s);
    T_NEAR(get(s, 0, 0, 0, 0), total, 1e-6);

    struct ggml_tensor * sr = ggml_sum_rows(ctx, x);
    compute_1_3(ctx, sr);
    T_CHECK(sr->ne[0] == 1 && sr->ne[1] == 4 && sr->ne[2] == 6);
    {
        double rs[4 * 6 * 3] = { 0 };
        FOR4(x) rs[i1 + 4 * (i2 + 6 * i3)] += get(x, i0, i1, i2, i3);
        CHECK_ALL(sr, rs[i1 + 4 * (i2 + 6 * i3)], 1e-6);
        struct ggml_tensor * m = ggml_mean(ctx, x);
        compute_1_3(ctx, m);
        CHECK_ALL(m, rs[i1 + 4 * (i2 + 6 * i3)] / 13, 1e-6);
    }

    struct ggml_tensor * h = rand_tensor(ctx, GGML_TYPE_F16, 100, 3, 1, 1, -1, 1);
    struct ggml_tensor * hs = ggml_sum(ctx, h);
    compute_1_3(ctx, hs);
    double htot = 0;
    FOR4(h) htot += get(h, i0, i1, i2, i3);
    T_NEAR(get(hs, 0, 0, 0, 0), htot, 1e-3);

    // argmax: distinct values, plus a row with a tie (first index wins)
    struct ggml_tensor * am = rand_tensor(ctx, GGML_TYPE_F32, 37, 9, 1, 1, -1, 1);
    set(am, 5, 2, 0, 0, 7.0);
    set(am, 30, 2, 0, 0, 7.0);
    struct ggml_tensor * ai = ggml_argmax(ctx, am);
    compute_1_3(ctx, ai);
    T_CHECK(ai->type == GGML_TYPE_I32 && ai->ne[0] == 9);
    for (int64_t r = 0; r < 9; r++) {
        int64_t best = 0;
        for (int64_t i = 1; i < 37; i++) {
            if (get(am, i, r, 0, 0) > get(am, best, r, 0, 0)) best = i;
        }
        T_CHECK_MSG(get(ai, r, 0, 0, 0) == best, "row %lld: got %g want %lld", (long long) r, get(ai, r, 0, 0, 0),
                    (long long) best);
    }
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// repeat / concat

static void test_repeat_concat(void) {
    const enum ggml_type types[3] = { GGML_TYPE_F32, GGML_TYPE_I32, GGML_TYPE_I16 };
    for (int t = 0; t < 3; t++) {
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * x0 = rand_tensor(ctx, types[t], 3, 4, 2, 1, -1000, 1000);
        struct ggml_tensor * x = ggml_permute(ctx, x0, 0, 2, 1, 3); // [3, 2, 4, 1]
        struct ggml_tensor * shape = ggml_new_tensor_4d(ctx, types[t], 6, 4, 8, 3);
        struct ggml_tensor * r = ggml_repeat(ctx, x, shape);
        compute_1_3(ctx, r);
        CHECK_ALL(r, get(x, i0 % 3, i1 % 2, i2 % 4, i3 % 1), 0);

        struct ggml_tensor * a = rand_tensor(ctx, types[t], 5, 3, 2, 2, -1000, 1000);
        struct ggml_tensor * b0 = rand_tensor(ctx, types[t], 3, 5, 4, 2, -1000, 1000);
        struct ggml_tensor * b = ggml_transpose(ctx, b0); // [5, 3, 4, 2]
        struct ggml_tensor * c = ggml_concat(ctx, a, b);
        compute_1_3(ctx, c);
        T_CHECK(c->ne[2] == 6);
        CHECK_ALL(c, i2 < 2 ? get(a, i0, i1, i2, i3) : get(b, i0, i1, i2 - 2, i3), 0);
        ggml_free(ctx);
    }
}

// ---------------------------------------------------------------------------------------------
// dup / cpy / cont

static void test_dup_cpy(void) {
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * x = rand_tensor(ctx, GGML_TYPE_F32, 6, 5, 4, 3, -1, 1);
    struct ggml_tensor * xp = ggml_permute(ctx, x, 2, 0, 3, 1); // non-contiguous, ne = [5, 3, 6, 4]

    struct ggml_tensor * d = ggml_dup(ctx, xp);
    compute_1_3(ctx, d);
    CHECK_ALL(d, get(xp, i0, i1, i2, i3), 0);

    struct ggml_tensor * c = ggml_cont(ctx, ggml_transpose(ctx, x));
    compute_1_3(ctx, c);
    CHECK_ALL(c, get(x, i1, i0, i2, i3), 0);

    // F32 -> F16 from a permuted source, F16 -> F32, F16 -> F16 permuted
    struct ggml_tensor * h = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 5, 3, 6, 4);
    struct ggml_tensor * ch = ggml_cpy(ctx, xp, h);
    compute_1_3(ctx, ch);
    CHECK_ALL(ch, ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) get(xp, i0, i1, i2, i3))), 0);

    struct ggml_tensor * h2 = rand_tensor(ctx, GGML_TYPE_F16, 7, 4, 3, 1, -1, 1);
    struct ggml_tensor * f = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 4, 7, 3, 1);
    struct ggml_tensor * cf = ggml_cpy(ctx, ggml_transpose(ctx, h2), f);
    compute_1_3(ctx, cf);
    CHECK_ALL(cf, get(h2, i1, i0, i2, i3), 0);

    // I16 permuted dup
    struct ggml_tensor * s16 = rand_tensor(ctx, GGML_TYPE_I16, 5, 4, 3, 2, -30000, 30000);
    struct ggml_tensor * ds = ggml_dup(ctx, ggml_permute(ctx, s16, 1, 2, 0, 3));
    compute_1_3(ctx, ds);
    CHECK_ALL(ds, get(s16, i1, i2, i0, i3), 0); // permute(1,2,0,3): src dim k -> dst dim axis[k]

    // copy into a tensor of another shape with the same element count (logical order kept)
    struct ggml_tensor * y = rand_tensor(ctx, GGML_TYPE_F32, 6, 4, 1, 1, -1, 1);
    struct ggml_tensor * z = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 8, 3, 1, 1);
    struct ggml_tensor * cz = ggml_cpy(ctx, ggml_transpose(ctx, y), z); // logical order of [4, 6]
    compute_1_3(ctx, cz);
    CHECK_ALL(cz, ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) get(y, (i0 + 8 * i1) / 4, (i0 + 8 * i1) % 4, 0, 0))), 0);
    ggml_free(ctx);
}

static void test_cpy_quant(void) {
    const ggml_type_traits_t tr = ggml_internal_get_type_traits(GGML_TYPE_Q8_0);
    if (tr.from_float == NULL || tr.to_float == NULL) {
        printf("     (q8_0 traits not available: skipped)\n");
        return;
    }
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * x = rand_tensor(ctx, GGML_TYPE_F32, 64, 3, 2, 1, -1, 1);
    struct ggml_tensor * q = ggml_new_tensor_4d(ctx, GGML_TYPE_Q8_0, 64, 3, 2, 1);
    struct ggml_tensor * cq = ggml_cpy(ctx, x, q);
    compute_1_3(ctx, cq);
    // back to F32 through DUP of the quantized data into an F32 tensor
    struct ggml_tensor * back = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 64, 3, 2, 1);
    struct ggml_tensor * cb = ggml_cpy(ctx, q, back);
    compute_1_3(ctx, cb);
    CHECK_ALL(cb, get(x, i0, i1, i2, i3), 1e-2);
    // quantized same-type copy
    struct ggml_tensor * q2 = ggml_dup(ctx, q);
    compute_1_3(ctx, q2);
    T_CHECK(memcmp(q2->data, q->data, ggml_nbytes(q)) == 0);
    // ADD of a quantized tensor and F32 (dequantize, add, requantize)
    struct ggml_tensor * b = rand_tensor(ctx, GGML_TYPE_F32, 64, 3, 2, 1, -0.1, 0.1);
    struct ggml_tensor * qa = ggml_add(ctx, q, b);
    compute_1_3(ctx, qa);
    T_CHECK(qa->type == GGML_TYPE_Q8_0);
    struct ggml_tensor * back2 = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 64, 3, 2, 1);
    struct ggml_tensor * cb2 = ggml_cpy(ctx, qa, back2);
    compute_1_3(ctx, cb2);
    CHECK_ALL(cb2, get(x, i0, i1, i2, i3) + get(b, i0, i1, i2, i3), 2e-2);
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// get_rows

static void test_get_rows(void) {
    const enum ggml_type types[3] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_I32 };
    for (int t = 0; t < 3; t++) {
        struct ggml_context * ctx = new_ctx();
        // 3-D batch: data [7, 5, 3], indices [4, 3] viewed down to [2, 3] (non-contiguous)
        struct ggml_tensor * x = rand_tensor(ctx, types[t], 7, 5, 3, 1, -100, 100);
        struct ggml_tensor * idx = rand_tensor(ctx, GGML_TYPE_I32, 4, 3, 1, 1, 0, 5);
        struct ggml_tensor * iv = ggml_view_2d(ctx, idx, 2, 3, idx->nb[1], idx->nb[0]);
        struct ggml_tensor * g = ggml_get_rows(ctx, x, iv);
        compute_1_3(ctx, g);
        T_CHECK(g->type == (types[t] == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32));
        T_CHECK(g->ne[0] == 7 && g->ne[1] == 2 && g->ne[2] == 3);
        CHECK_ALL(g, get(x, i0, (int64_t) get(iv, i1, i2, 0, 0), i2, 0), 0);
        ggml_free(ctx);
    }
    // out-of-range indices give zero rows
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * x = rand_tensor(ctx, GGML_TYPE_F32, 4, 3, 1, 1, 1, 2);
    struct ggml_tensor * idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 3);
    ((int32_t *) idx->data)[0] = 2;
    ((int32_t *) idx->data)[1] = 3;
    ((int32_t *) idx->data)[2] = -1;
    struct ggml_tensor * g = ggml_get_rows(ctx, x, idx);
    compute_1_3(ctx, g);
    CHECK_ALL(g, i1 == 0 ? get(x, i0, 2, 0, 0) : 0.0, 0);
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// diag

static void test_diag(void) {
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * v = rand_tensor(ctx, GGML_TYPE_F32, 6, 1, 2, 2, -1, 1);
    struct ggml_tensor * d = ggml_diag(ctx, v);
    compute_1_3(ctx, d);
    CHECK_ALL(d, i0 == i1 ? get(v, i0, 0, i2, i3) : 0.0, 0);

    struct ggml_tensor * x = rand_tensor(ctx, GGML_TYPE_F32, 9, 7, 3, 2, -1, 1);
    for (int n_past = 0; n_past <= 3; n_past += 3) {
        struct ggml_tensor * mi = ggml_diag_mask_inf(ctx, x, n_past);
        compute_1_3(ctx, mi);
        CHECK_ALL(mi, i0 > n_past + i1 ? -INFINITY : get(x, i0, i1, i2, i3), 0);
        struct ggml_tensor * mz = ggml_diag_mask_zero(ctx, x, n_past);
        compute_1_3(ctx, mz);
        CHECK_ALL(mz, i0 > n_past + i1 ? 0.0 : get(x, i0, i1, i2, i3), 0);
    }
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// inplace variants (the result aliases the first operand)

// fresh copy of t in ctx
static struct ggml_tensor * clone(struct ggml_context * ctx, const struct ggml_tensor * t) {
    struct ggml_tensor * c = ggml_dup_tensor(ctx, t);
    memcpy(c->data, t->data, ggml_nbytes(t));
    return c;
}

static void test_inplace(void) {
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * x = rand_tensor(ctx, GGML_TYPE_F32, 12, 7, 3, 2, -1, 1);
    struct ggml_tensor * b = rand_tensor(ctx, GGML_TYPE_F32, 12, 1, 3, 1, -1, 1);
    struct ggml_tensor * o;

    o = ggml_add_inplace(ctx, clone(ctx, x), b);
    compute_1_3(ctx, o);
    CHECK_ALL(o, (float) (get(x, i0, i1, i2, i3) + get(b, i0, 0, i2, 0)), 1e-7);

    o = ggml_mul_inplace(ctx, clone(ctx, x), b);
    compute_1_3(ctx, o);
    CHECK_ALL(o, (float) (get(x, i0, i1, i2, i3) * get(b, i0, 0, i2, 0)), 1e-7);

    o = ggml_scale_inplace(ctx, clone(ctx, x), -2.5f);
    compute_1_3(ctx, o);
    CHECK_ALL(o, -2.5 * get(x, i0, i1, i2, i3), 1e-7);

    o = ggml_silu_inplace(ctx, clone(ctx, x));
    compute_1_3(ctx, o);
    CHECK_ALL(o, unary_ref(GGML_UNARY_OP_SILU, get(x, i0, i1, i2, i3)), 2e-7);

    o = ggml_diag_mask_inf_inplace(ctx, clone(ctx, x), 2);
    compute_1_3(ctx, o);
    CHECK_ALL(o, i0 > 2 + i1 ? -INFINITY : get(x, i0, i1, i2, i3), 0);

    struct ggml_tensor * w = rand_tensor(ctx, GGML_TYPE_F32, 4, 3, 1, 1, -1, 1);
    const size_t off = 5 * x->nb[0] + 2 * x->nb[1] + 1 * x->nb[2];
#define IN_WIN (i0 >= 5 && i0 < 9 && i1 >= 2 && i1 < 5 && i2 == 1 && i3 == 0)
    o = ggml_acc_inplace(ctx, clone(ctx, x), w, x->nb[1], x->nb[2], x->nb[3], off);
    compute_1_3(ctx, o);
    CHECK_ALL(o, IN_WIN ? (float) (get(x, i0, i1, i2, i3) + get(w, i0 - 5, i1 - 2, 0, 0)) : get(x, i0, i1, i2, i3), 1e-7);

    o = ggml_set_inplace(ctx, clone(ctx, x), w, x->nb[1], x->nb[2], x->nb[3], off);
    compute_1_3(ctx, o);
    CHECK_ALL(o, IN_WIN ? get(w, i0 - 5, i1 - 2, 0, 0) : get(x, i0, i1, i2, i3), 0);
#undef IN_WIN
    ggml_free(ctx);
}

int main(void) {
    T_RUN(test_binary_broadcast);
    T_RUN(test_binary_noncontig);
    T_RUN(test_add_types);
    T_RUN(test_acc_set);
    T_RUN(test_unary);
    T_RUN(test_unary_params);
    T_RUN(test_reduce);
    T_RUN(test_repeat_concat);
    T_RUN(test_dup_cpy);
    T_RUN(test_cpy_quant);
    T_RUN(test_get_rows);
    T_RUN(test_diag);
    T_RUN(test_inplace);
    return T_SUMMARY();
}
