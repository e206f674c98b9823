// test-kernels-spatial.c - CPU kernels of IM2COL, CONV_TRANSPOSE_1D/2D, POOL_1D/2D, UPSCALE, PAD,
// ARGSORT and the MAP_* custom ops, each against a direct reference computed here on small
// inputs. Every graph runs with 1, 2 and 4 threads; the results must be bit-identical.

#include "ggml.h"
#include "ggml-impl.h"

#include "test-util.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// helpers

static bool same_shape(const struct ggml_tensor * t, int64_t n0, int64_t n1, int64_t n2, int64_t n3) {
    return t->ne[0] == n0 && t->ne[1] == n1 && t->ne[2] == n2 && t->ne[3] == n3;
}

// ---------------------------------------------------------------------------------------------
// IM2COL

static void check_im2col(bool is_2D, int64_t IW, int64_t IH, int64_t IC, int64_t N, int64_t KW, int64_t KH,
                         int s0, int s1, int p0, int p1, int d0, int d1) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * in;
    struct ggml_tensor * ker;
    if (is_2D) {
        in  = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, IW, IH, IC, N);
        ker = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, KW, KH, IC, 2);
    } else {
        IH = 1;
        KH = 1;
        in  = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, IW, IC, N);
        ker = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, KW, IC, 2);
    }
    fill(in);
    fill(ker);
    struct ggml_tensor * out = ggml_im2col(ctx, ker, in, s0, s1, p0, p1, d0, d1, is_2D);
    if (!compute_all(ctx, out)) {
        ggml_free(ctx);
        return;
    }
    const int64_t OW = (IW + 2 * p0 - d0 * (KW - 1) - 1) / s0 + 1;
    const int64_t OH = is_2D ? (IH + 2 * p1 - d1 * (KH - 1) - 1) / s1 + 1 : 1;
    T_CHECK(out->type == GGML_TYPE_F16);
    if (is_2D) {
        T_CHECK(same_shape(out, IC * KH * KW, OW, OH, N));
    } else {
        T_CHECK(same_shape(out, IC * KW, OW, N, 1));
    }
    int bad = 0;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t oy = 0; oy < OH; oy++) {
            for (int64_t ox = 0; ox < OW; ox++) {
                for (int64_t c = 0; c < IC; c++) {
                    for (int64_t ky = 0; ky < KH; ky++) {
                        for (int64_t kx = 0; kx < KW; kx++) {
                            const int64_t x = ox * s0 + kx * d0 - p0;
                            const int64_t y = is_2D ? oy * s1 + ky * d1 - p1 : 0;
                            float want = 0.0f;
                            if (x >= 0 && x < IW && y >= 0 && y < IH) {
                                want = round_f16(is_2D ? at(in, x, y, c, n) : at(in, x, c, n, 0));
                            }
                            const int64_t j = (c * KH + ky) * KW + kx;
                            const float got = is_2D ? at(out, j, ox, oy, n) : at(out, j, ox, n, 0);
                            bad += got != want;
                        }
                    }
                }
            }
        }
    }
    T_CHECK_MSG(bad == 0, "im2col is_2D=%d: %d wrong elements", (int) is_2D, bad);
    ggml_free(ctx);
}

static void test_im2col_2d(void) {
    check_im2col(true, 7, 6, 3, 2, 3, 2, 2, 1, 1, 2, 1, 2);
    check_im2col(true, 10, 10, 3, 1, 3, 3, 1, 1, 1, 1, 1, 1);
    check_im2col(true, 9, 5, 2, 1, 2, 3, 3, 2, 0, 1, 2, 1);
}

static void test_im2col_1d(void) {
    check_im2col(false, 9, 1, 2, 3, 3, 1, 2, 1, 2, 0, 2, 1);
    check_im2col(false, 16, 1, 4, 1, 5, 1, 1, 1, 2, 0, 1, 1);
}

// ---------------------------------------------------------------------------------------------
// CONV_TRANSPOSE_1D: kernel [K, Cout, Cin], input [L, Cin] -> [(L-1)*s0 + K, Cout]

static void check_conv_t1d(enum ggml_type kt, int64_t K, int64_t Cout, int64_t Cin, int64_t L, int s0) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * ker = ggml_new_tensor_3d(ctx, kt, K, Cout, Cin);
    struct ggml_tensor * in  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, L, Cin);
    fill(ker);
    fill(in);
    struct ggml_tensor * out = ggml_conv_transpose_1d(ctx, ker, in, s0, 0, 1);
    if (!compute_all(ctx, out)) {
        ggml_free(ctx);
        return;
    }
    const int64_t OL = (L - 1) * s0 + K;
    T_CHECK(out->type == GGML_TYPE_F32);
    T_CHECK(same_shape(out, OL, Cout, 1, 1));
    double err = 0.0;
    for (int64_t co = 0; co < Cout; co++) {
        for (int64_t o = 0; o < OL; o++) {
            double want = 0.0;
            for (int64_t l = 0; l < L; l++) {
                const int64_t k = o - l * s0;
                if (k < 0 || k >= K) {
                    continue;
                }
                for (int64_t ci = 0; ci < Cin; ci++) {
                    float x = at(in, l, ci, 0, 0);
                    if (kt == GGML_TYPE_F16) {
                        x = round_f16(x);
                    }
                    want += (double) x * at(ker, k, co, ci, 0);
                }
            }
            const double d = fabs(at(out, o, co, 0, 0) - want);
            err = d > err ? d : err;
        }
    }
    T_CHECK_MSG(err < 1e-5, "conv_transpose_1d max error %g", err);
    ggml_free(ctx);
}

static void test_conv_transpose_1d(void) {
    check_conv_t1d(GGML_TYPE_F32, 3, 4, 5, 10, 1);
    check_conv_t1d(GGML_TYPE_F16, 3, 4, 5, 10, 2);
    check_conv_t1d(GGML_TYPE_F32, 4, 3, 19, 7, 3);
}

// ---------------------------------------------------------------------------------------------
// CONV_TRANSPOSE_2D: kernel [KW, KH, Cout, Cin] F16, input [W, H, Cin]

static void check_conv_t2d(int64_t KW, int64_t KH, int64_t Cout, int64_t Cin, int64_t W, int64_t H, int s) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * ker = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, KW, KH, Cout, Cin);
    struct ggml_tensor * in  = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, W, H, Cin);
    fill(ker);
    fill(in);
    struct ggml_tensor * out = ggml_conv_transpose_2d_p0(ctx, ker, in, s);
    if (!compute_all(ctx, out)) {
        ggml_free(ctx);
        return;
    }
    const int64_t OW = (W - 1) * s + KW, OH = (H - 1) * s + KH;
    T_CHECK(same_shape(out, OW, OH, Cout, 1));
    double err = 0.0;
    for (int64_t co = 0; co < Cout; co++) {
        for (int64_t oy = 0; oy < OH; oy++) {
            for (int64_t ox = 0; ox < OW; ox++) {
                double want = 0.0;
                for (int64_t y = 0; y < H; y++) {
                    const int64_t ky = oy - y * s;
                    if (ky < 0 || ky >= KH) {
                        continue;
                    }
                    for (int64_t x = 0; x < W; x++) {
                        const int64_t kx = ox - x * s;
                        if (kx < 0 || kx >= KW) {
                            continue;
                        }
                        for (int64_t ci = 0; ci < Cin; ci++) {
                            want += (double) round_f16(at(in, x, y, ci, 0)) * at(ker, kx, ky, co, ci);
                        }
                    }
                }
                const double d = fabs(at(out, ox, oy, co, 0) - want);
                err = d > err ? d : err;
            }
        }
    }
    T_CHECK_MSG(err < 1e-5, "conv_transpose_2d max error %g", err);
    ggml_free(ctx);
}

static void test_conv_transpose_2d(void) {
    check_conv_t2d(3, 2, 4, 5, 6, 5, 2);
    check_conv_t2d(2, 2, 3, 11, 4, 3, 1);
    check_conv_t2d(3, 3, 2, 3, 3, 4, 3);
}

// ---------------------------------------------------------------------------------------------
// POOL_1D / POOL_2D

static float pool_ref(const struct ggml_tensor * in, int op, int64_t x0, int64_t k0, int64_t y0, int64_t k1,
                      int64_t i2, bool two_d) {
    float acc = op == GGML_OP_POOL_MAX ? -FLT_MAX : 0.0f;
    for (int64_t ky = 0; ky < k1; ky++) {
        const int64_t y = y0 + ky;
        if (two_d && (y < 0 || y >= in->ne[1])) {
            continue;
        }
        for (int64_t kx = 0; kx < k0; kx++) {
            const int64_t x = x0 + kx;
            if (x < 0 || x >= in->ne[0]) {
                continue;
            }
            const float v = two_d ? at(in, x, y, i2, 0) : at(in, x, y0, i2, 0);
            if (op == GGML_OP_POOL_MAX) {
                acc = v > acc ? v : acc;
            } else {
                acc += v;
            }
        }
    }
    return op == GGML_OP_POOL_AVG ? acc / (float) (k0 * k1) : acc;
}

static void check_pool_1d(int op, int64_t n0, int64_t n1, int k0, int s0, int p0) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * in = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n0, n1);
    fill(in);
    struct ggml_tensor * out = ggml_pool_1d(ctx, in, (enum ggml_op_pool) op, k0, s0, p0);
    if (!compute_all(ctx, out)) {
        ggml_free(ctx);
        return;
    }
    const int64_t o0 = (n0 + 2 * p0 - k0) / s0 + 1;
    T_CHECK(same_shape(out, o0, n1, 1, 1));
    int bad = 0;
    for (int64_t i2 = 0; i2 < 1; i2++) {
        for (int64_t i1 = 0; i1 < n1; i1++) {
            for (int64_t i0 = 0; i0 < o0; i0++) {
                const float want = pool_ref(in, op, i0 * s0 - p0, k0, i1, 1, i2, false);
                bad += fabsf(at(out, i0, i1, i2, 0) - want) > 1e-6f;
            }
        }
    }
    T_CHECK_MSG(bad == 0, "pool_1d op=%d k=%d s=%d p=%d: %d wrong", op, k0, s0, p0, bad);
    ggml_free(ctx);
}

static void check_pool_2d(int op, int64_t n0, int64_t n1, int64_t n2, int k0, int k1, int s0, int s1, int p0, int p1) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * in = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n0, n1, n2);
    fill(in);
    struct ggml_tensor * out = ggml_pool_2d(ctx, in, (enum ggml_op_pool) op, k0, k1, s0, s1, (float) p0, (float) p1);
    if (!compute_all(ctx, out)) {
        ggml_free(ctx);
        return;
    }
    const int64_t o0 = (n0 + 2 * p0 - k0) / s0 + 1, o1 = (n1 + 2 * p1 - k1) / s1 + 1;
    T_CHECK(same_shape(out, o0, o1, n2, 1));
    int bad = 0;
    for (int64_t i2 = 0; i2 < n2; i2++) {
        for (int64_t i1 = 0; i1 < o1; i1++) {
            for (int64_t i0 = 0; i0 < o0; i0++) {
                const float want = pool_ref(in, op, i0 * s0 - p0, k0, i1 * s1 - p1, k1, i2, true);
                bad += fabsf(at(out, i0, i1, i2, 0) - want) > 1e-6f;
            }
        }
    }
    T_CHECK_MSG(bad == 0, "pool_2d op=%d: %d wrong", op, bad);
    ggml_free(ctx);
}

static void test_pool(void) {
    for (int op = 0; op < 2; op++) {
        check_pool_1d(op, 10, 10, 2, 2, 0);
        check_pool_1d(op, 11, 3, 3, 3, 0);
        check_pool_1d(op, 11, 3, 3, 2, 1);
        check_pool_2d(op, 10, 10, 3, 2, 2, 2, 2, 0, 0);
        check_pool_2d(op, 9, 8, 3, 3, 2, 2, 2, 1, 1);
        check_pool_2d(op, 7, 7, 2, 3, 3, 1, 1, 1, 0);
    }
}

// ---------------------------------------------------------------------------------------------
// UPSCALE / PAD

static void test_upscale(void) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * in = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 4, 3, 2);
    fill(in);
    struct ggml_tensor * out = ggml_upscale(ctx, in, 3);
    if (compute_all(ctx, out)) {
        T_CHECK(same_shape(out, 15, 12, 3, 2));
        int bad = 0;
        for (int64_t i3 = 0; i3 < 2; i3++) {
            for (int64_t i2 = 0; i2 < 3; i2++) {
                for (int64_t i1 = 0; i1 < 12; i1++) {
                    for (int64_t i0 = 0; i0 < 15; i0++) {
                        bad += at(out, i0, i1, i2, i3) != at(in, i0 / 3, i1 / 3, i2, i3);
                    }
                }
            }
        }
        T_CHECK_MSG(bad == 0, "upscale: %d wrong", bad);
    }
    ggml_free(ctx);
}

static void test_pad(void) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * in = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 5, 4, 3, 2);
    fill(in);
    struct ggml_tensor * out = ggml_pad(ctx, in, 2, 1, 0, 3);
    if (compute_all(ctx, out)) {
        T_CHECK(same_shape(out, 7, 5, 3, 5));
        int bad = 0;
        for (int64_t i3 = 0; i3 < 5; i3++) {
            for (int64_t i2 = 0; i2 < 3; i2++) {
                for (int64_t i1 = 0; i1 < 5; i1++) {
                    for (int64_t i0 = 0; i0 < 7; i0++) {
                        const bool inside = i0 < 5 && i1 < 4 && i3 < 2;
                        bad += at(out, i0, i1, i2, i3) != (inside ? at(in, i0, i1, i2, i3) : 0.0f);
                    }
                }
            }
        }
        T_CHECK_MSG(bad == 0, "pad: %d wrong", bad);
    }
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// ARGSORT

static void check_argsort(int64_t n0, int64_t n1, int order, bool ties) {
    struct ggml_context * ctx = new_ctx(64);
    struct ggml_tensor * in = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n0, n1);
    fill(in);
    if (ties) { // few distinct values: many ties
        float * d = (float *) in->data;
        for (int64_t i = 0; i < n0 * n1; i++) {
            d[i] = floorf(d[i] * 4.0f);
        }
    }
    struct ggml_tensor * out = ggml_argsort(ctx, in, (enum ggml_sort_order) order);
    if (!compute_all(ctx, out)) {
        ggml_free(ctx);
        return;
    }
    T_CHECK(out->type == GGML_TYPE_I32 && same_shape(out, n0, n1, 1, 1));
    char * seen = malloc((size_t) n0);
    int bad_perm = 0, bad_order = 0;
    for (int64_t i1 = 0; i1 < n1; i1++) {
        const int32_t * idx = (const int32_t *) ((const char *) out->data + i1 * out->nb[1]);
        const float * v = (const float *) ((const char *) in->data + i1 * in->nb[1]);
        memset(seen, 0, (size_t) n0);
        for (int64_t i0 = 0; i0 < n0; i0++) {
            if (idx[i0] < 0 || idx[i0] >= n0 || seen[idx[i0]]) {
                bad_perm++;
                break;
            }
            seen[idx[i0]] = 1;
        }
        if (bad_perm) {
            break;
        }
        for (int64_t i0 = 1; i0 < n0; i0++) {
            const float a = v[idx[i0 - 1]], b = v[idx[i0]];
            const bool in_order = order == GGML_SORT_ASC ? a <= b : a >= b;
            const bool stable = a != b || idx[i0 - 1] < idx[i0];
            bad_order += !(in_order && stable);
        }
    }
    free(seen);
    T_CHECK_MSG(bad_perm == 0, "argsort n0=%lld: not a permutation", (long long) n0);
    T_CHECK_MSG(bad_order == 0, "argsort n0=%lld order=%d: %d misordered pairs", (long long) n0, order, bad_order);
    ggml_free(ctx);
}

static void test_argsort(void) {
    for (int order = 0; order < 2; order++) {
        check_argsort(8, 1, order, false);
        check_argsort(16, 100, order, false);
        check_argsort(37, 13, order, true);
        check_argsort(1000, 7, order, true);
        check_argsort(100000, 2, order, false);
    }
}

// ---------------------------------------------------------------------------------------------
// MAP_CUSTOM1/2/3 (multi-threaded user ops)

struct custom_log {
    int nth_seen[16];
    int calls;
};

// dst = a * 2 (+ b) (+ c), elements split by ith/nth; records nth
static void custom_body(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                        const struct ggml_tensor * c, int ith, int nth, void * userdata) {
    struct custom_log * log = userdata;
    if (ith < 16) {
        log->nth_seen[ith] = nth;
    }
    __atomic_fetch_add(&log->calls, 1, __ATOMIC_SEQ_CST);
    const int64_t n = ggml_nelements(dst);
    for (int64_t i = ith; i < n; i += nth) {
        float v = 2.0f * ((const float *) a->data)[i];
        if (b != NULL) {
            v += ((const float *) b->data)[i];
        }
        if (c != NULL) {
            v += ((const float *) c->data)[i];
        }
        ((float *) dst->data)[i] = v;
    }
}

static void custom1(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * ud) {
    custom_body(dst, a, NULL, NULL, ith, nth, ud);
}
static void custom2(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith,
                    int nth, void * ud) {
    custom_body(dst, a, b, NULL, ith, nth, ud);
}
static void custom3(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                    const struct ggml_tensor * c, int ith, int nth, void * ud) {
    custom_body(dst, a, b, c, ith, nth, ud);
}

static void check_custom(int arity, int n_tasks) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 33, 7);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 33, 7);
    struct ggml_tensor * c = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 33, 7);
    fill(a);
    fill(b);
    fill(c);
    struct custom_log log;
    struct ggml_tensor * out = NULL;
    switch (arity) {
        case 1: out = ggml_map_custom1(ctx, a, custom1, n_tasks, &log); break;
        case 2: out = ggml_map_custom2(ctx, a, b, custom2, n_tasks, &log); break;
        default: out = ggml_map_custom3(ctx, a, b, c, custom3, n_tasks, &log); break;
    }
    T_CHECK(out != NULL);
    if (out == NULL) {
        ggml_free(ctx);
        return;
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    for (int k = 0; k < N_THREAD_CONFIGS; k++) {
        const int nt = k_threads[k];
        memset(&log, 0, sizeof(log));
        memset(out->data, 0, ggml_nbytes(out));
        ggml_graph_compute_with_ctx(ctx, gf, nt);
        const int want_nth = n_tasks == GGML_N_TASKS_MAX ? nt : (n_tasks < nt ? n_tasks : nt);
        T_CHECK_MSG(log.calls == want_nth, "custom%d n_tasks=%d threads=%d: %d calls", arity, n_tasks, nt, log.calls);
        for (int i = 0; i < want_nth && i < 16; i++) {
            T_CHECK_MSG(log.nth_seen[i] == want_nth, "custom%d: ith %d saw nth %d, want %d", arity, i,
                        log.nth_seen[i], want_nth);
        }
        int bad = 0;
        for (int64_t i = 0; i < ggml_nelements(out); i++) {
            float want = 2.0f * ((float *) a->data)[i];
            if (arity >= 2) {
                want += ((float *) b->data)[i];
            }
            if (arity >= 3) {
                want += ((float *) c->data)[i];
            }
            bad += ((float *) out->data)[i] != want;
        }
        T_CHECK_MSG(bad == 0, "custom%d: %d wrong", arity, bad);
    }
    ggml_free(ctx);
}

static void test_map_custom(void) {
    for (int arity = 1; arity <= 3; arity++) {
        check_custom(arity, 1);
        check_custom(arity, 2);
        check_custom(arity, GGML_N_TASKS_MAX);
    }
}

// ---------------------------------------------------------------------------------------------
// MAP_UNARY / MAP_BINARY / MAP_CUSTOM1_F32 (deprecated, single-threaded; built by hand here)

static void unary_sq(const int n, float * d, const float * a) {
    for (int i = 0; i < n; i++) {
        d[i] = a[i] * a[i];
    }
}

static void binary_sub(const int n, float * d, const float * a, const float * b) {
    for (int i = 0; i < n; i++) {
        d[i] = a[i] - b[i];
    }
}

static int custom_f32_calls;

static void custom1_f32_neg(struct ggml_tensor * dst, const struct ggml_tensor * a) {
    custom_f32_calls++;
    for (int64_t i = 0; i < ggml_nelements(dst); i++) {
        ((float *) dst->data)[i] = -((const float *) a->data)[i];
    }
}

static struct ggml_tensor * fn_node(struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a,
                                    struct ggml_tensor * b, void (*fn)(void)) {
    struct ggml_tensor * srcs[2] = { a, b };
    struct ggml_tensor * t = ggml_x_new_op_tensor(ctx, op, GGML_TYPE_F32, a->ne, b ? 2 : 1, srcs);
    if (t != NULL) {
        ggml_x_set_op_params(t, &fn, sizeof(fn));
    }
    return t;
}

static void test_map_f32(void) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 9, 4, 3);
    struct ggml_tensor * b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 9, 4, 3);
    fill(a);
    fill(b);
    struct ggml_tensor * u = fn_node(ctx, GGML_OP_MAP_UNARY, a, NULL, (void (*)(void)) unary_sq);
    struct ggml_tensor * s = fn_node(ctx, GGML_OP_MAP_BINARY, a, b, (void (*)(void)) binary_sub);
    struct ggml_tensor * n = fn_node(ctx, GGML_OP_MAP_CUSTOM1_F32, a, NULL, (void (*)(void)) custom1_f32_neg);
    if (compute_all(ctx, u) && compute_all(ctx, s)) {
        int bad = 0;
        for (int64_t i = 0; i < ggml_nelements(a); i++) {
            const float x = ((float *) a->data)[i], y = ((float *) b->data)[i];
            bad += ((float *) u->data)[i] != x * x;
            bad += ((float *) s->data)[i] != x - y;
        }
        T_CHECK_MSG(bad == 0, "map_unary/map_binary: %d wrong", bad);
    }
    custom_f32_calls = 0;
    if (compute_all(ctx, n)) {
        T_CHECK_MSG(custom_f32_calls == N_THREAD_CONFIGS, "custom1_f32 called %d times", custom_f32_calls);
        int bad = 0;
        for (int64_t i = 0; i < ggml_nelements(a); i++) {
            bad += ((float *) n->data)[i] != -((float *) a->data)[i];
        }
        T_CHECK_MSG(bad == 0, "map_custom1_f32: %d wrong", bad);
    }
    ggml_free(ctx);
}

int main(void) {
    T_RUN(test_im2col_2d);
    T_RUN(test_im2col_1d);
    T_RUN(test_conv_transpose_1d);
    T_RUN(test_conv_transpose_2d);
    T_RUN(test_pool);
    T_RUN(test_upscale);
    T_RUN(test_pad);
    T_RUN(test_argsort);
    T_RUN(test_map_custom);
    T_RUN(test_map_f32);
    return T_SUMMARY();
}
