// test-vec.c - the row kernels of cpu/vec.h (norm sums, silu/gelu, softmax pieces) of every
// level this CPU runs against the scalar ones, on odd sizes and extreme values (+-inf masks,
// large magnitudes, subnormals); and the decode-step paths around them through graphs: the
// F32/F16 CPY fast paths (KV-cache writes, transposed views) and the attention matrix products
// over an F16 cache (interleaved heads, one matrix per head), at 1 and 2 threads, against direct
// double-precision references.

#include "ggml.h"
#include "ggml-impl.h"
#include "cpu/vec.h"

#include "testing.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t g_state = 0x2545F4914F6CDD1Dull;

static double rnd(void) { // uniform [-1, 1)
    g_state ^= g_state << 13;
    g_state ^= g_state >> 7;
    g_state ^= g_state << 17;
    return (double) (g_state >> 11) / 4503599627370496.0 - 1.0;
}

static const enum ggml_x_cpu_level k_levels[] = {
    GGML_X_CPU_AVX2, GGML_X_CPU_AVX512, GGML_X_CPU_AVX512_VNNI, GGML_X_CPU_NEON, GGML_X_CPU_NEON_DOTPROD,
};

static const int k_sizes[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 127, 257, 1000, 4099 };

#define MAXN 4099

// x[0..n): random values of magnitude up to `mag`, with extreme values sprinkled in
static void fill(float * x, int n, float mag, bool extremes) {
    static const float ext[] = { 0.0f, -0.0f, 1e-40f, -1e-40f, 1e-30f, 87.5f, -87.5f, 88.5f, -88.5f,
                                 100.0f, -100.0f, 1e20f, -1e20f, 3e38f, -3e38f };
    for (int i = 0; i < n; i++) {
        x[i] = mag * (float) rnd();
        if (extremes && i % 5 == 2) {
            x[i] = ext[(i / 5) % (int) (sizeof(ext) / sizeof(ext[0]))];
        }
    }
}

static bool level_kernels(enum ggml_x_cpu_level lv, struct ggml_x_vec_kernels * k) {
    return ggml_x_vec_kernels_for_level(lv, k);
}

static void test_vec_unary(void) {
    struct ggml_x_vec_kernels ref, k;
    T_CHECK(level_kernels(GGML_X_CPU_SCALAR, &ref));
    static float x[MAXN], ya[MAXN], yb[MAXN];
    int checked = 0;
    for (size_t li = 0; li < sizeof(k_levels) / sizeof(k_levels[0]); li++) {
        if (!level_kernels(k_levels[li], &k)) {
            continue;
        }
        for (int kind = 0; kind < GGML_X_VEC_UNARY_COUNT; kind++) {
            for (size_t si = 0; si < sizeof(k_sizes) / sizeof(k_sizes[0]); si++) {
                const int n = k_sizes[si];
                for (int ex = 0; ex < 2; ex++) {
                    fill(x, n, ex ? 20.0f : 6.0f, ex == 1);
                    ref.unary(kind, n, ya, x);
                    k.unary(kind, n, yb, x);
                    for (int i = 0; i < n; i++) {
                        const double a = ya[i], b = yb[i];
                        const bool ok = (isnan(a) && isnan(b)) || a == b || fabs(a - b) <= 2e-5 * fabs(a) + 1e-7;
                        T_CHECK_MSG(ok, "level %s kind %d n %d: f(%g) = %.9g, scalar %.9g",
                                    ggml_x_cpu_level_name(k_levels[li]), kind, n, (double) x[i], b, a);
                        if (!ok) {
                            return;
                        }
                    }
                    // in place
                    memcpy(yb, x, sizeof(float) * (size_t) n);
                    k.unary(kind, n, yb, yb);
                    for (int i = 0; i < n; i++) {
                        T_CHECK(fabs((double) ya[i] - yb[i]) <= 2e-5 * fabs((double) ya[i]) + 1e-7 ||
                                (isnan(ya[i]) && isnan(yb[i])));
                    }
                }
            }
        }
        checked++;
    }
    printf("     unary: %d SIMD level(s) checked\n", checked);
}

static bool close_or_same(double a, double b, double tol) {
    return a == b || fabs(a - b) <= tol || (isnan(a) && isnan(b));
}

static void test_vec_sums(void) {
    struct ggml_x_vec_kernels ref, k;
    T_CHECK(level_kernels(GGML_X_CPU_SCALAR, &ref));
    static float x[MAXN], ya[MAXN], yb[MAXN];
    for (size_t li = 0; li < sizeof(k_levels) / sizeof(k_levels[0]); li++) {
        if (!level_kernels(k_levels[li], &k)) {
            continue;
        }
        for (size_t si = 0; si < sizeof(k_sizes) / sizeof(k_sizes[0]); si++) {
            const int n = k_sizes[si];
            for (int ex = 0; ex < 3; ex++) {
                fill(x, n, ex == 2 ? 1e15f : 3.0f, ex >= 1); // 1e15^2 stays finite in float
                if (ex == 2) {
                    for (int i = 0; i < n; i++) {
                        if (fabsf(x[i]) > 1e15f) x[i] = x[i] > 0 ? 1e15f : -1e15f;
                    }
                }
                double asum = 0.0, asq = 0.0;
                for (int i = 0; i < n; i++) {
                    asum += fabs((double) x[i]);
                    asq += (double) x[i] * x[i];
                }
                // (the extremes' squares overflow float: both sides give inf)
                T_CHECK(close_or_same(ref.sum(n, x), k.sum(n, x), 1e-12 * asum));
                T_CHECK(close_or_same(ref.sum_sq(n, x), k.sum_sq(n, x), 1e-12 * asq));
                const float m = (float) (ref.sum(n, x) / n);
                const double sa = ref.sub_sum_sq(n, ya, x, m);
                const double sb = k.sub_sum_sq(n, yb, x, m);
                T_CHECK(memcmp(ya, yb, sizeof(float) * (size_t) n) == 0);
                T_CHECK(close_or_same(sa, sb, 1e-12 * fabs(sa)));
                ref.scale(n, ya, x, 0.37f);
                k.scale(n, yb, x, 0.37f);
                T_CHECK(memcmp(ya, yb, sizeof(float) * (size_t) n) == 0);
                memcpy(yb, x, sizeof(float) * (size_t) n);
                k.scale(n, yb, yb, 0.37f); // in place
                T_CHECK(memcmp(ya, yb, sizeof(float) * (size_t) n) == 0);
            }
        }
    }
}

// the fp16 bits of f (ggml_fp16_t is __fp16 on arm64, so it cannot index an array directly)
static uint16_t f16_bits(float f) {
    const ggml_fp16_t h = ggml_fp32_to_fp16(f);
    uint16_t bits;
    memcpy(&bits, &h, sizeof(bits));
    return bits;
}

static void test_vec_softmax(void) {
    struct ggml_x_vec_kernels ref, k;
    T_CHECK(level_kernels(GGML_X_CPU_SCALAR, &ref));
    static float x[MAXN], mask[MAXN], wa[MAXN], wb[MAXN];
    // the table is expf of the fp16 argument, rounded to fp16
    const float * t = ggml_x_vec_exp_f16_table();
    T_CHECK(t[f16_bits(0.0f)] == 1.0f);
    T_CHECK(t[f16_bits(-INFINITY)] == 0.0f);
    T_CHECK(t[f16_bits(-1.0f)] == ggml_fp16_to_fp32(ggml_fp32_to_fp16(expf(-1.0f))));
    for (size_t li = 0; li < sizeof(k_levels) / sizeof(k_levels[0]); li++) {
        if (!level_kernels(k_levels[li], &k)) {
            continue;
        }
        for (size_t si = 0; si < sizeof(k_sizes) / sizeof(k_sizes[0]); si++) {
            const int n = k_sizes[si];
            for (int mode = 0; mode < 5; mode++) {
                // 0: no mask; 1: causal-style -inf tail; 2: scattered -inf; 3: all -inf;
                // 4: large magnitudes
                fill(x, n, mode == 4 ? 1e4f : 8.0f, false);
                for (int i = 0; i < n; i++) {
                    mask[i] = mode == 1 ? (i > n / 2 ? -INFINITY : 0.0f)
                            : mode == 2 ? (i % 3 == 1 ? -INFINITY : (float) rnd())
                            : mode == 3 ? -INFINITY : (float) rnd();
                }
                const float * mp = mode == 0 ? NULL : mask;
                const float ma = ref.scale_mask_max(n, wa, x, 0.125f, mp);
                const float mb = k.scale_mask_max(n, wb, x, 0.125f, mp);
                T_CHECK_MSG(ma == mb || (isnan(ma) && isnan(mb)), "level %s n %d mode %d: max %g vs %g",
                            ggml_x_cpu_level_name(k_levels[li]), n, mode, (double) mb, (double) ma);
                T_CHECK(memcmp(wa, wb, sizeof(float) * (size_t) n) == 0);
                const double sa = ref.exp_sum(n, wa, ma);
                const double sb = k.exp_sum(n, wb, mb);
                T_CHECK_MSG(fabs(sa - sb) <= 1e-12 * sa || (isnan(sa) && isnan(sb)),
                            "level %s n %d mode %d: sum %.17g vs %.17g", ggml_x_cpu_level_name(k_levels[li]), n,
                            mode, sb, sa);
                bool same = true;
                for (int i = 0; i < n; i++) {
                    same = same && (wa[i] == wb[i] || (isnan(wa[i]) && isnan(wb[i])));
                }
                T_CHECK_MSG(same, "level %s n %d mode %d: exp values differ", ggml_x_cpu_level_name(k_levels[li]),
                            n, mode);
                if (mode == 3) {
                    T_CHECK(sa == 0.0);
                }
            }
        }
    }
}

// every level's softmax exp against the fp16 table for all 65536 fp16 arguments (the SIMD
// levels compute the exp instead of looking it up): w[i] holds the float value of fp16 bit
// pattern i and max = 0, so the argument is exactly that fp16 value
static void test_vec_exp_every_f16(void) {
    static float w[65536], ref[65536];
    const float * t = ggml_x_vec_exp_f16_table();
    for (size_t li = 0; li < sizeof(k_levels) / sizeof(k_levels[0]); li++) {
        struct ggml_x_vec_kernels k;
        if (!level_kernels(k_levels[li], &k)) {
            continue;
        }
        for (uint32_t h = 0; h < 65536; h++) {
            const uint16_t bits = (uint16_t) h;
            ggml_fp16_t hv;
            memcpy(&hv, &bits, sizeof(hv));
            w[h] = ggml_fp16_to_fp32(hv);
            // -inf is masked out (0); NaN and +inf arguments are not finite softmax inputs but
            // still must not differ from the table
            ref[h] = w[h] == -INFINITY ? 0.0f : t[h];
        }
        k.exp_sum(65536, w, 0.0f);
        int bad = 0;
        uint32_t first = 0;
        for (uint32_t h = 0; h < 65536; h++) {
            const bool same = w[h] == ref[h] || (isnan(w[h]) && isnan(ref[h]));
            if (!same && bad++ == 0) {
                first = h;
            }
        }
        T_CHECK_MSG(bad == 0, "level %s: %d of 65536 fp16 arguments differ from the table, first 0x%04x: %a vs %a",
                    ggml_x_cpu_level_name(k_levels[li]), bad, (unsigned) first, (double) w[first], (double) ref[first]);
    }
}

// ---------------------------------------------------------------------------------------------
// graphs

static struct ggml_context * new_ctx(void) {
    struct ggml_init_params p = { 64 * 1024 * 1024, NULL, false };
    return ggml_init(p);
}

static double get_f(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2) {
    const char * p = (const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2];
    return t->type == GGML_TYPE_F16 ? ggml_fp16_to_fp32(*(const ggml_fp16_t *) p) : *(const float *) p;
}

static void fill_tensor(struct ggml_tensor * t) {
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        const float v = (float) rnd();
        if (t->type == GGML_TYPE_F16) {
            ((ggml_fp16_t *) t->data)[i] = ggml_fp32_to_fp16(v);
        } else {
            ((float *) t->data)[i] = v;
        }
    }
}

// writes of a new position into F16 K and transposed V caches, and F16 -> F32 copies
static void test_cpy_kv(void) {
    for (int nth = 1; nth <= 2; nth++) {
        struct ggml_context * ctx = new_ctx();
        const int hd = 24, nh = 5, nctx = 37, pos = 29, embd = hd * nh;
        struct ggml_tensor * kc = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, embd, nctx);
        struct ggml_tensor * vc = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, nctx, embd);
        struct ggml_tensor * k = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, hd, nh, 1);
        struct ggml_tensor * v = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, embd, 1);
        struct ggml_tensor * h = ggml_new_tensor_3d(ctx, GGML_TYPE_F16, 7, 9, 3);
        fill_tensor(kc);
        fill_tensor(vc);
        fill_tensor(k);
        fill_tensor(v);
        fill_tensor(h);
        ggml_fp16_t * kc0 = malloc(ggml_nbytes(kc));
        ggml_fp16_t * vc0 = malloc(ggml_nbytes(vc));
        memcpy(kc0, kc->data, ggml_nbytes(kc));
        memcpy(vc0, vc->data, ggml_nbytes(vc));
        struct ggml_tensor * kd = ggml_view_1d(ctx, kc, embd, (size_t) pos * kc->nb[1]);
        struct ggml_tensor * vd = ggml_view_2d(ctx, vc, 1, embd, vc->nb[1], (size_t) pos * vc->nb[0]);
        struct ggml_tensor * hp = ggml_permute(ctx, h, 2, 0, 1, 3);             // [9, 3, 7] strided F16
        struct ggml_tensor * hf = ggml_cpy(ctx, hp, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 9, 3, 7));
        struct ggml_tensor * ht = ggml_cpy(ctx, h, ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 7, 9, 3)); // dense
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, ggml_cpy(ctx, k, kd));
        ggml_build_forward_expand(gf, ggml_cpy(ctx, ggml_transpose(ctx, v), vd));
        ggml_build_forward_expand(gf, hf);
        ggml_build_forward_expand(gf, ht);
        ggml_graph_compute_with_ctx(ctx, gf, nth);

        int bad = 0;
        for (int r = 0; r < nctx; r++) {
            for (int c = 0; c < embd; c++) {
                const ggml_fp16_t want = r == pos ? ggml_fp32_to_fp16(((float *) k->data)[c]) : kc0[r * embd + c];
                bad += ((ggml_fp16_t *) kc->data)[r * embd + c] != want;
                const ggml_fp16_t wv = r == pos ? ggml_fp32_to_fp16(((float *) v->data)[c]) : vc0[c * nctx + r];
                bad += ((ggml_fp16_t *) vc->data)[c * nctx + r] != wv;
            }
        }
        T_CHECK_MSG(bad == 0, "%d threads: %d cache elements wrong", nth, bad);
        bad = 0;
        for (int i2 = 0; i2 < 7; i2++) {
            for (int i1 = 0; i1 < 3; i1++) {
                for (int i0 = 0; i0 < 9; i0++) {
                    bad += get_f(hf, i0, i1, i2) != get_f(hp, i0, i1, i2);
                    bad += get_f(ht, i2, i0, i1) != get_f(h, i2, i0, i1);
                }
            }
        }
        T_CHECK_MSG(bad == 0, "%d threads: %d F16 -> F32 elements wrong", nth, bad);
        free(kc0);
        free(vc0);
        ggml_free(ctx);
    }
}

// K^T q and V att over an F16 cache: heads interleaved in the K rows, one V matrix per head,
// with grouped heads (n_head = 2 * n_head_kv) and without
static void test_attention_mul_mat(void) {
    for (int gqa = 1; gqa <= 2; gqa++) {
        for (int nth = 1; nth <= 2; nth++) {
            struct ggml_context * ctx = new_ctx();
            const int hd = 40, nhkv = 6, nh = nhkv * gqa, nkv = 53, embd_kv = hd * nhkv;
            struct ggml_tensor * kc = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, embd_kv, nkv);
            struct ggml_tensor * vc = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, nkv, embd_kv);
            struct ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, hd, nh, 1);
            struct ggml_tensor * a = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, nkv, 1, nh);
            fill_tensor(kc);
            fill_tensor(vc);
            fill_tensor(q);
            fill_tensor(a);
            struct ggml_tensor * K = ggml_view_3d(ctx, kc, hd, nkv, nhkv, kc->nb[1], (size_t) hd * kc->nb[0], 0);
            struct ggml_tensor * V = ggml_view_3d(ctx, vc, nkv, hd, nhkv, vc->nb[1], (size_t) hd * vc->nb[1], 0);
            struct ggml_tensor * Q = ggml_permute(ctx, q, 0, 2, 1, 3);
            struct ggml_tensor * kq = ggml_mul_mat(ctx, K, Q); // [nkv, 1, nh]
            struct ggml_tensor * kqv = ggml_mul_mat(ctx, V, a); // [hd, 1, nh]
            struct ggml_cgraph * gf = ggml_new_graph(ctx);
            ggml_build_forward_expand(gf, kq);
            ggml_build_forward_expand(gf, kqv);
            ggml_graph_compute_with_ctx(ctx, gf, nth);

            double err = 0.0;
            for (int h = 0; h < nh; h++) {
                const int hk = h / gqa;
                for (int j = 0; j < nkv; j++) {
                    double s = 0.0;
                    for (int i = 0; i < hd; i++) {
                        // F16 weights see src1 rounded to F16, as in the reference
                        s += get_f(kc, hk * hd + i, j, 0) * ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) get_f(Q, i, 0, h)));
                    }
                    err = fmax(err, fabs(s - get_f(kq, j, 0, h)));
                }
                for (int i = 0; i < hd; i++) {
                    double s = 0.0;
                    for (int j = 0; j < nkv; j++) {
                        s += get_f(vc, j, hk * hd + i, 0) * ggml_fp16_to_fp32(ggml_fp32_to_fp16((float) get_f(a, j, 0, h)));
                    }
                    err = fmax(err, fabs(s - get_f(kqv, i, 0, h)));
                }
            }
            T_CHECK_MSG(err < 1e-4, "gqa %d, %d threads: max error %g", gqa, nth, err);
            ggml_free(ctx);
        }
    }
}

// one-row element-wise nodes (a token's activations) split along the row between threads
static void test_one_row_split(void) {
    float out[2][3][4099];
    for (int nth = 1; nth <= 2; nth++) {
        struct ggml_context * ctx = new_ctx();
        const int n = 4099;
        struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
        struct ggml_tensor * y = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
        g_state = 12345;
        fill_tensor(x);
        fill_tensor(y);
        struct ggml_tensor * m = ggml_mul(ctx, x, y);
        struct ggml_tensor * a = ggml_add(ctx, x, y);
        struct ggml_tensor * u = ggml_silu(ctx, x);
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, m);
        ggml_build_forward_expand(gf, a);
        ggml_build_forward_expand(gf, u);
        ggml_graph_compute_with_ctx(ctx, gf, nth);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            const float xv = ((float *) x->data)[i], yv = ((float *) y->data)[i];
            bad += ((float *) m->data)[i] != xv * yv;
            bad += ((float *) a->data)[i] != xv + yv;
            bad += fabs(((float *) u->data)[i] - xv / (1.0 + exp(-(double) xv))) > 1e-6;
        }
        T_CHECK_MSG(bad == 0, "%d threads: %d wrong elements", nth, bad);
        memcpy(out[nth - 1][0], m->data, sizeof(float) * n);
        memcpy(out[nth - 1][1], a->data, sizeof(float) * n);
        memcpy(out[nth - 1][2], u->data, sizeof(float) * n);
        ggml_free(ctx);
    }
    T_CHECK(memcmp(out[0], out[1], sizeof(out[0])) == 0);
}

// lookup_f16 (the gelu tables) of every level against the scalar one, bit for bit: every fp16
// value as input (and its neighbours half an fp16 step away, which round either way), random
// and extreme floats, NaNs; the limits -10 / 10 (gelu) and NaN / NaN (never); every tail length
static void test_vec_lookup_f16(void) {
    struct ggml_x_vec_kernels ref, k;
    T_CHECK(level_kernels(GGML_X_CPU_SCALAR, &ref));
    // a table whose every entry differs from its neighbours: entry h = fp16 of h * 0.001 - 30
    // (and 0x7e00, a NaN, at odd multiples of 4099), plus padding
    static ggml_fp16_t table[65536 + 2];
    for (uint32_t h = 0; h < 65536 + 2; h++) {
        table[h] = ggml_fp32_to_fp16(h % 4099 == 7 ? NAN : (float) h * 0.001f - 30.0f);
    }
    enum { N = 3 * 65536 + 600 };
    static float x[N], ya[N], yb[N];
    int n = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        const uint16_t bits = (uint16_t) h;
        ggml_fp16_t hv;
        memcpy(&hv, &bits, sizeof(hv));
        const float v = ggml_fp16_to_fp32(hv);
        x[n++] = v;
        x[n++] = nextafterf(v, INFINITY) * 1.0004882f; // about half an fp16 step above
        x[n++] = v * 0.99951172f;                       // about half a step below
    }
    fill(x + n, 600, 40.0f, true);
    x[n] = NAN;
    x[n + 1] = -NAN;
    x[n + 2] = INFINITY;
    x[n + 3] = -INFINITY;
    x[n + 4] = 10.0f;
    x[n + 5] = -10.0f;
    x[n + 6] = nextafterf(10.0f, 0.0f);
    x[n + 7] = nextafterf(-10.0f, 0.0f);
    n += 600;
    int checked = 0;
    for (size_t li = 0; li < sizeof(k_levels) / sizeof(k_levels[0]); li++) {
        if (!level_kernels(k_levels[li], &k)) {
            continue;
        }
        for (int lim = 0; lim < 2; lim++) {
            const float lo = lim == 0 ? -10.0f : NAN, hi = lim == 0 ? 10.0f : NAN;
            ref.lookup_f16(n, ya, x, table, lo, hi);
            k.lookup_f16(n, yb, x, table, lo, hi);
            for (int i = 0; i < n; i++) {
                T_CHECK_MSG(memcmp(&ya[i], &yb[i], sizeof(float)) == 0 || (isnan(ya[i]) && isnan(yb[i])),
                            "level %s limits %d: x = %.9g gives %.9g, scalar %.9g", ggml_x_cpu_level_name(k_levels[li]),
                            lim, (double) x[i], (double) yb[i], (double) ya[i]);
            }
            // every tail length, in place (y == x)
            for (size_t si = 0; si < sizeof(k_sizes) / sizeof(k_sizes[0]); si++) {
                const int m = k_sizes[si];
                memcpy(yb, x + 1000, sizeof(float) * (size_t) m);
                yb[m] = 12345.0f;
                k.lookup_f16(m, yb, yb, table, lo, hi);
                ref.lookup_f16(m, ya, x + 1000, table, lo, hi);
                T_CHECK(memcmp(ya, yb, sizeof(float) * (size_t) m) == 0);
                T_CHECK(yb[m] == 12345.0f); // nothing past n written
            }
            checked++;
        }
    }
    // the scalar kernel itself: the limits, then the table at the fp16 rounding of x
    ref.lookup_f16(8, ya, x + n - 600, table, -10.0f, 10.0f);
    T_CHECK(isnan(ya[0]) || ya[0] == ggml_fp16_to_fp32(table[f16_bits(NAN)]));
    T_CHECK(ya[2] == INFINITY && ya[3] == 0.0f && ya[4] == 10.0f && ya[5] == 0.0f);
    T_CHECK(ya[6] == ggml_fp16_to_fp32(table[f16_bits(nextafterf(10.0f, 0.0f))]));
    T_CHECK_MSG(checked > 0 || ggml_x_cpu_level() == GGML_X_CPU_SCALAR, "no SIMD level checked");
}

// softcap (attention soft-capping, c * tanh(x / c)) of every level against tanh in double: within
// 3 float ulps of c absolutely (the SIMD tanh is (1 - e) / (1 + e), exact only to within an ulp
// of 1), the sign and NaN kept, +-inf to +-c; several caps, every tail length, in place
static void test_vec_softcap(void) {
    static const float caps[] = { 50.0f, 30.0f, 1.0f, 0.25f };
    static float x[MAXN + 1], y[MAXN + 1]; // + 1: the guard after n
    int checked = 0;
    for (size_t li = 0; li <= sizeof(k_levels) / sizeof(k_levels[0]); li++) {
        struct ggml_x_vec_kernels k;
        const enum ggml_x_cpu_level lv = li == 0 ? GGML_X_CPU_SCALAR : k_levels[li - 1];
        if (!level_kernels(lv, &k)) {
            continue;
        }
        for (size_t ci = 0; ci < sizeof(caps) / sizeof(caps[0]); ci++) {
            const float c = caps[ci];
            for (size_t si = 0; si < sizeof(k_sizes) / sizeof(k_sizes[0]); si++) {
                const int n = k_sizes[si];
                fill(x, n, 4.0f * c, true);
                for (int i = 0; i < n; i += 7) {
                    x[i] = c * 1e-3f * (float) rnd(); // near 0, where tanh(t) ~ t
                }
                if (n > 4) {
                    x[1] = INFINITY;
                    x[2] = -INFINITY;
                    x[3] = NAN;
                }
                x[n] = 777.0f;
                memcpy(y, x, sizeof(float) * (size_t) (n + 1));
                k.softcap(n, y, y, c);
                T_CHECK(y[n] == 777.0f); // nothing past n written
                for (int i = 0; i < n; i++) {
                    if (isnan(x[i])) {
                        T_CHECK_MSG(isnan(y[i]), "level %s: softcap(NaN) = %g", ggml_x_cpu_level_name(lv), (double) y[i]);
                        continue;
                    }
                    const double want = (double) c * tanh((double) x[i] / (double) c);
                    const double tol = 3.0 * 1.1920929e-7 * (double) c;
                    T_CHECK_MSG(fabs((double) y[i] - want) <= tol && (y[i] == 0.0f || signbit(y[i]) == signbit(x[i])),
                                "level %s c %g n %d: softcap(%.9g) = %.9g, tanh in double %.9g",
                                ggml_x_cpu_level_name(lv), (double) c, n, (double) x[i], (double) y[i], want);
                }
                checked++;
            }
        }
    }
    T_CHECK(checked > 0);
}

int main(void) {
    T_RUN(test_vec_unary);
    T_RUN(test_vec_softcap);
    T_RUN(test_vec_lookup_f16);
    T_RUN(test_vec_sums);
    T_RUN(test_vec_softmax);
    T_RUN(test_vec_exp_every_f16);
    T_RUN(test_cpy_kv);
    T_RUN(test_attention_mul_mat);
    T_RUN(test_one_row_split);
    return T_SUMMARY();
}
