// test-gemm.c - the packed GEMMs of MUL_MAT (cpu/gemm.h) against the dot-product path:
// F32, F16, Q4_0, Q8_0 and Q4_K weights, sizes that are not multiples of the tiles or of the
// cache blocks, broadcast batches, non-contiguous and pre-quantized src1, 1..3 threads, and every
// kernel level this CPU runs (each against the scalar dot-product results).

#include "ggml.h"
#include "ggml-impl.h"
#include "ggml-quants.h"
#include "cpu/gemm.h"

#include "test-util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct mm_case {
    enum ggml_type ta, tb;
    int k, m, n;
    int a2, r2;       // weight batches, broadcast factor of src1
    bool bt;          // src1 stored transposed (non-contiguous rows)
};

static const struct mm_case k_cases[] = {
    { GGML_TYPE_F32, GGML_TYPE_F32, 531, 37, 29, 1, 1, false }, // K over one K block, odd M, N
    { GGML_TYPE_F32, GGML_TYPE_F32, 17, 300, 40, 1, 1, false }, // M over one M block
    { GGML_TYPE_F32, GGML_TYPE_F32, 3, 1, 9, 1, 1, false },
    { GGML_TYPE_F32, GGML_TYPE_F32, 64, 70, 13, 2, 2, false },  // broadcast batches
    { GGML_TYPE_F32, GGML_TYPE_F32, 45, 33, 15, 3, 1, true },   // transposed src1
    { GGML_TYPE_F32, GGML_TYPE_F32, 4100, 520, 13, 1, 1, false }, // > 8 MB of W: prefetching path
    { GGML_TYPE_F16, GGML_TYPE_F32, 531, 37, 29, 1, 1, false },
    { GGML_TYPE_F16, GGML_TYPE_F32, 4100, 1030, 15, 1, 1, false },
    { GGML_TYPE_F16, GGML_TYPE_F32, 40, 65, 12, 2, 3, false },
    { GGML_TYPE_F16, GGML_TYPE_F16, 33, 20, 11, 1, 1, false },  // F16 src1
    { GGML_TYPE_F16, GGML_TYPE_F32, 29, 18, 10, 1, 1, true },
    { GGML_TYPE_Q4_0, GGML_TYPE_F32, 96, 37, 19, 1, 1, false },
    { GGML_TYPE_Q4_0, GGML_TYPE_F32, 320, 17, 9, 3, 1, false },
    { GGML_TYPE_Q4_0, GGML_TYPE_F32, 64, 300, 25, 1, 1, false },
    { GGML_TYPE_Q4_0, GGML_TYPE_F32, 64, 21, 11, 1, 1, true },
    { GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, 128, 19, 13, 1, 1, false }, // pre-quantized src1
    { GGML_TYPE_Q8_0, GGML_TYPE_F32, 96, 37, 19, 1, 1, false },
    { GGML_TYPE_Q8_0, GGML_TYPE_F32, 160, 50, 33, 2, 2, false },
    { GGML_TYPE_Q4_K, GGML_TYPE_F32, 512, 23, 11, 1, 1, false },
    { GGML_TYPE_Q4_K, GGML_TYPE_F32, 256, 40, 17, 2, 1, false },
    { GGML_TYPE_Q4_K, GGML_TYPE_F32, 768, 9, 8, 1, 1, false },
    // k-quants through the multi-column dot products (cpu/quants-simd.h ggml_x_vec_dot_cols_t)
    // at the detected level: 1..8 columns and more, row counts not multiples of the row tile,
    // few rows (the threads split the columns), 1..17 super-blocks, pre-quantized src1
    { GGML_TYPE_Q4_K, GGML_TYPE_F32, 512, 33, 4, 1, 1, false },
    { GGML_TYPE_Q2_K, GGML_TYPE_F32, 768, 37, 1, 1, 1, false },
    { GGML_TYPE_Q2_K, GGML_TYPE_F32, 4352, 21, 2, 2, 2, false },
    { GGML_TYPE_Q3_K, GGML_TYPE_F32, 512, 19, 3, 1, 1, false },
    { GGML_TYPE_Q3_K, GGML_TYPE_F32, 256, 13, 6, 1, 1, true },
    { GGML_TYPE_Q5_K, GGML_TYPE_F32, 256, 23, 8, 1, 1, false },
    { GGML_TYPE_Q5_K, GGML_TYPE_Q8_K, 512, 21, 7, 1, 1, false },
    { GGML_TYPE_Q6_K, GGML_TYPE_F32, 1280, 17, 5, 1, 1, false },
    { GGML_TYPE_Q6_K, GGML_TYPE_F32, 256, 9, 13, 1, 1, false },
    // Q4_0 / Q8_0 through the multi-column matrix-vector kernels (2..5 columns; odd block counts)
    { GGML_TYPE_Q4_0, GGML_TYPE_F32, 96, 37, 3, 1, 1, false },
    { GGML_TYPE_Q8_0, GGML_TYPE_F32, 224, 9, 5, 1, 1, false },
    { GGML_TYPE_Q4_0, GGML_TYPE_F32, 544, 18, 2, 2, 1, false },
    // matrix-vector products with long rows: the activation row is over GGML_X_FAR_MIN_ACT bytes,
    // so the kernels also prefetch the weights far ahead (cpu/prefetch.h)
    { GGML_TYPE_F16, GGML_TYPE_F32, 9000, 13, 1, 1, 1, false },
    { GGML_TYPE_F32, GGML_TYPE_F32, 4100, 11, 1, 1, 1, false },
    { GGML_TYPE_Q4_0, GGML_TYPE_F32, 8448, 9, 1, 1, 1, false },
    { GGML_TYPE_Q8_0, GGML_TYPE_F32, 8448, 9, 1, 1, 1, false },
    { GGML_TYPE_Q4_K, GGML_TYPE_F32, 11008, 9, 1, 1, 1, false },
    { GGML_TYPE_Q6_K, GGML_TYPE_F32, 11008, 7, 1, 1, 1, false },
    { GGML_TYPE_Q2_K, GGML_TYPE_F32, 8192, 5, 1, 1, 1, false },
};
#define N_CASES ((int) (sizeof(k_cases) / sizeof(k_cases[0])))

static void fill_rows(struct ggml_tensor * t) {
    const int64_t k = t->ne[0];
    const int64_t nrows = ggml_nelements(t) / k;
    float * tmp = malloc(sizeof(float) * (size_t) k);
    for (int64_t r = 0; r < nrows; r++) {
        for (int64_t i = 0; i < k; i++) {
            tmp[i] = rnd();
        }
        char * dst = (char *) t->data + r * t->nb[1]; // 2D/4D contiguous: rows in order
        if (t->type == GGML_TYPE_F32) {
            memcpy(dst, tmp, sizeof(float) * (size_t) k);
        } else {
            ggml_internal_get_type_traits(t->type).from_float(tmp, dst, (int) k);
        }
    }
    free(tmp);
}

// computes d with nth threads into out (ggml_nelements floats)
static void run(struct ggml_context * ctx, struct ggml_tensor * d, int nth, float * out) {
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, d);
    memset(d->data, 0x7f, ggml_nbytes(d)); // every element must be written
    ggml_graph_compute_with_ctx(ctx, gf, nth);
    memcpy(out, d->data, ggml_nbytes(d));
}

// sum over k of |a_i b_i| for every result element, from the dequantized operands
static void abs_sums(const struct ggml_tensor * a, const struct ggml_tensor * b, const struct ggml_tensor * d, double * sa) {
    const int64_t k = a->ne[0];
    float * ar = malloc(sizeof(float) * (size_t) k);
    float * br = malloc(sizeof(float) * (size_t) k);
    const ggml_type_traits_t tta = ggml_internal_get_type_traits(a->type);
    const ggml_type_traits_t ttb = ggml_internal_get_type_traits(b->type);
    const int64_t r2 = b->ne[2] / a->ne[2];
    size_t idx = 0;
    for (int64_t i2 = 0; i2 < d->ne[2]; i2++) {
        for (int64_t i1 = 0; i1 < d->ne[1]; i1++) {
            for (int64_t i = 0; i < k; i++) {
                const char * p = (const char *) b->data + i * b->nb[0] + i1 * b->nb[1] + i2 * b->nb[2];
                if (b->type == GGML_TYPE_F32) {
                    br[i] = *(const float *) p;
                } else if (b->type == GGML_TYPE_F16) {
                    br[i] = ggml_fp16_to_fp32(*(const ggml_fp16_t *) p);
                } else if (i == 0) {
                    ttb.to_float(p, br, (int) k);
                }
            }
            for (int64_t i0 = 0; i0 < d->ne[0]; i0++) {
                const char * arow = (const char *) a->data + i0 * a->nb[1] + (i2 / r2) * a->nb[2];
                if (a->type == GGML_TYPE_F32) {
                    memcpy(ar, arow, sizeof(float) * (size_t) k);
                } else {
                    tta.to_float(arow, ar, (int) k);
                }
                double s = 0.0;
                for (int64_t i = 0; i < k; i++) {
                    s += fabs((double) ar[i] * br[i]);
                }
                sa[idx++] = s;
            }
        }
    }
    free(ar);
    free(br);
}

// max over elements of |x - y| / sum|a_i b_i|
static double max_rel(const float * x, const float * y, const double * sa, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double e = fabs((double) x[i] - (double) y[i]) / (sa[i] + 1e-30);
        if (!(e <= m)) {
            m = isnan(e) ? INFINITY : e;
        }
    }
    return m;
}

static const enum ggml_x_cpu_level k_levels[] = {
    GGML_X_CPU_SCALAR, GGML_X_CPU_AVX2, GGML_X_CPU_AVX512, GGML_X_CPU_AVX512_VNNI,
    GGML_X_CPU_NEON, GGML_X_CPU_NEON_DOTPROD,
};

// GGML_TEST_QUICK=1 (slow tools such as valgrind): a case with more than 10^7 multiply-adds
// runs only at the detected level, in the default mode, with 1 and 2 threads
static bool quick_mode(const struct mm_case * c) {
    const char * q = getenv("GGML_TEST_QUICK");
    return q != NULL && q[0] != '\0' && strcmp(q, "0") != 0 &&
           (double) c->k * c->m * c->n * c->a2 * c->r2 > 1e7;
}

static void check_case(const struct mm_case * c) {
    const bool quick = quick_mode(c);
    struct ggml_init_params ip = { 64u * 1024 * 1024, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * a = ggml_new_tensor_3d(ctx, c->ta, c->k, c->m, c->a2);
    struct ggml_tensor * b;
    fill_rows(a);
    if (c->bt) {
        struct ggml_tensor * bs = ggml_new_tensor_3d(ctx, c->tb, c->n, c->k, c->a2 * c->r2);
        fill_rows(bs);
        b = ggml_transpose(ctx, bs);
    } else {
        b = ggml_new_tensor_3d(ctx, c->tb, c->k, c->n, c->a2 * c->r2);
        fill_rows(b);
    }
    struct ggml_tensor * d = ggml_mul_mat(ctx, a, b);
    const size_t ne = (size_t) ggml_nelements(d);
    float * ref = malloc(sizeof(float) * ne);
    float * got = malloc(sizeof(float) * ne);
    float * got1 = malloc(sizeof(float) * ne);
    double * sa = malloc(sizeof(double) * ne);
    abs_sums(a, b, d, sa);

    // reference: the scalar level's dot-product path
    ggml_x_gemm_testing_set_level(GGML_X_CPU_SCALAR);
    ggml_x_gemm_testing_set_mode(1);
    run(ctx, d, 1, ref);

    const double tol = 2e-6 * sqrt((double) c->k) + 1e-6;
    for (size_t li = 0; li < sizeof(k_levels) / sizeof(k_levels[0]); li++) {
        if ((quick && k_levels[li] != ggml_x_cpu_level()) || !ggml_x_gemm_testing_set_level(k_levels[li])) {
            continue;
        }
        const char * lname = ggml_x_cpu_level_name(k_levels[li]);
        for (int mode = 0; mode <= (quick ? 0 : 2); mode++) {
            ggml_x_gemm_testing_set_mode(mode);
            for (int nth = 1; nth <= (quick ? 2 : 3); nth++) {
                run(ctx, d, nth, nth == 1 ? got1 : got);
                if (nth > 1) {
                    T_CHECK_MSG(memcmp(got, got1, sizeof(float) * ne) == 0,
                                "%s x %s k=%d m=%d n=%d level %s mode %d: %d threads differ from 1",
                                ggml_type_name(c->ta), ggml_type_name(c->tb), c->k, c->m, c->n, lname, mode, nth);
                }
            }
            const double err = max_rel(got1, ref, sa, ne);
            if (getenv("TEST_GEMM_VERBOSE") != NULL) {
                printf("     %s x %s k=%d m=%d n=%d level %s mode %d: max rel err %.3g\n", ggml_type_name(c->ta),
                       ggml_type_name(c->tb), c->k, c->m, c->n, lname, mode, err);
            }
            T_CHECK_MSG(err < tol, "%s x %s k=%d m=%d n=%d a2=%d r2=%d bt=%d level %s mode %d: max rel err %g",
                        ggml_type_name(c->ta), ggml_type_name(c->tb), c->k, c->m, c->n, c->a2, c->r2, c->bt,
                        lname, mode, err);
        }
    }
    ggml_x_gemm_testing_set_mode(0);
    ggml_x_gemm_testing_set_level(ggml_x_cpu_level());
    free(ref);
    free(got);
    free(got1);
    free(sa);
    ggml_free(ctx);
}

static void test_gemm_float(void) {
    for (int i = 0; i < N_CASES; i++) {
        if (k_cases[i].ta == GGML_TYPE_F32 || k_cases[i].ta == GGML_TYPE_F16) {
            check_case(&k_cases[i]);
        }
    }
}

static void test_gemm_quantized(void) {
    for (int i = 0; i < N_CASES; i++) {
        if (k_cases[i].ta != GGML_TYPE_F32 && k_cases[i].ta != GGML_TYPE_F16) {
            check_case(&k_cases[i]);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the int8 matrix-vector kernels (qgemv_*) of every level this CPU runs, called directly: odd
// block counts (partial groups of the prepared layouts), weight rows of random bytes (every
// nibble and byte value, Q8_0 -128 included) and rows at the int16 limits (all nibbles 15 or all
// bytes -128 against activations that quantize to +-127), against the reference dot product of
// the activations quantized as vec_dot does

// a weight row of nblk blocks: pattern 0 random bytes, 1 all 0xff, 2 all 0x80; then sane scales
static void qgemv_weights(enum ggml_type t, uint8_t * w, int nblk, int pattern) {
    const size_t bs = ggml_type_size(t);
    for (size_t i = 0; i < bs * (size_t) nblk; i++) {
        w[i] = pattern == 1 ? 0xff : pattern == 2 ? 0x80 : (uint8_t) (rnd() * 128.0f + 128.0f);
    }
    for (int b = 0; b < nblk; b++) {
        ggml_fp16_t d[2] = { ggml_fp32_to_fp16(0.01f + 0.05f * fabsf(rnd())), ggml_fp32_to_fp16(0.01f + 0.05f * fabsf(rnd())) };
        memcpy(w + (size_t) b * bs, d, t == GGML_TYPE_Q4_K ? 2 * sizeof(ggml_fp16_t) : sizeof(ggml_fp16_t));
    }
}

// the multi-column kernel on 1..8 prepared rows (x, -x, x with every other sign flipped: the
// same sum of |w_i x_i| sa): each result within tolerance of the single-row kernel and
// bit-identical to the multi-column kernel on that row alone
static void check_qgemv_cols(ggml_x_vec_dot_cols_t dotc, ggml_vec_dot_t dot, ggml_from_float_t prep, int k,
                             const void * w, const float * x, size_t psize, double sa, const char * lname,
                             enum ggml_type t) {
    float * xv = malloc(sizeof(float) * (size_t) k);
    void * cols[3];
    for (int v = 0; v < 3; v++) {
        for (int i = 0; i < k; i++) {
            xv[i] = v == 0 ? x[i] : v == 1 ? -x[i] : (i & 1 ? -x[i] : x[i]);
        }
        cols[v] = aligned_alloc(64, psize);
        memset(cols[v], 0x5a, psize);
        prep(xv, cols[v], k);
    }
    for (int nc = 1; nc <= 8; nc++) {
        const void * y[8];
        float s[8];
        for (int j = 0; j < nc; j++) {
            y[j] = cols[(j + nc) % 3];
        }
        dotc(k, s, w, y, nc);
        for (int j = 0; j < nc; j++) {
            float one = NAN, single = NAN;
            dotc(k, &one, w, &y[j], 1);
            dot(k, &single, w, y[j]);
            T_CHECK_MSG(memcmp(&one, &s[j], sizeof(float)) == 0, "qgemv cols %s level %s k=%d nc=%d col %d: %.9g alone %.9g",
                        ggml_type_name(t), lname, k, nc, j, s[j], one);
            T_CHECK_MSG(fabs((double) s[j] - single) / (sa + 1e-30) < 2e-6 * sqrt((double) k) + 1e-6,
                        "qgemv cols %s level %s k=%d nc=%d col %d: %.9g, single-row kernel %.9g",
                        ggml_type_name(t), lname, k, nc, j, s[j], single);
        }
    }
    for (int v = 0; v < 3; v++) {
        free(cols[v]);
    }
    free(xv);
}

static void test_qgemv_kernels(void) {
    static const int nblk32[] = { 1, 2, 3, 7, 8, 9, 15, 16, 17, 23, 24, 31, 33, 128 };
    static const int nblk256[] = { 1, 2, 3, 5, 16 };
    const enum ggml_type types[] = { GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K };
    int checked = 0;
    for (size_t li = 0; li < sizeof(k_levels) / sizeof(k_levels[0]); li++) {
        struct ggml_x_gemm_kernels kr;
        if (!ggml_x_gemm_kernels_for_level(k_levels[li], &kr)) {
            continue;
        }
#if defined(__x86_64__)
        T_CHECK_MSG(kr.qgemv_prep_size != NULL || k_levels[li] == GGML_X_CPU_SCALAR,
                    "level %s has no matrix-vector kernels", ggml_x_cpu_level_name(k_levels[li]));
#endif
        if (kr.qgemv_prep_size == NULL) {
            continue;
        }
        for (int ti = 0; ti < 3; ti++) {
            const enum ggml_type t = types[ti];
            const bool kq = t == GGML_TYPE_Q4_K;
            const enum ggml_type vd = kq ? GGML_TYPE_Q8_K : GGML_TYPE_Q8_0;
            ggml_from_float_t prep = t == GGML_TYPE_Q4_0 ? kr.qgemv_prep_q4_0 : t == GGML_TYPE_Q8_0 ? kr.qgemv_prep_q8_0 : kr.qgemv_prep_q4_K;
            ggml_vec_dot_t dot = t == GGML_TYPE_Q4_0 ? kr.qgemv_q4_0 : t == GGML_TYPE_Q8_0 ? kr.qgemv_q8_0 : kr.qgemv_q4_K;
            // several prepared rows at once (NULL where the level or type has none)
            ggml_x_vec_dot_cols_t dotc = t == GGML_TYPE_Q4_0 ? kr.qgemv_cols_q4_0 : t == GGML_TYPE_Q8_0 ? kr.qgemv_cols_q8_0 : NULL;
            ggml_vec_dot_t ref = t == GGML_TYPE_Q4_0 ? ggml_x_vec_dot_q4_0_q8_0_ref
                               : t == GGML_TYPE_Q8_0 ? ggml_x_vec_dot_q8_0_q8_0_ref : ggml_x_vec_dot_q4_K_q8_K_ref;
            T_CHECK(prep != NULL && dot != NULL);
            if (prep == NULL || dot == NULL) {
                continue;
            }
            const int nsizes = kq ? (int) (sizeof(nblk256) / sizeof(nblk256[0])) : (int) (sizeof(nblk32) / sizeof(nblk32[0]));
            for (int si = 0; si < nsizes; si++) {
                const int nblk = kq ? nblk256[si] : nblk32[si];
                const int k = nblk * (kq ? QK_K : QK8_0);
                uint8_t * w = malloc(ggml_row_size(t, k));
                float * x = malloc(sizeof(float) * (size_t) k);
                void * xq = malloc(ggml_row_size(vd, k));
                const size_t psize = (kr.qgemv_prep_size(t, k) + 63) / 64 * 64;
                void * xp = aligned_alloc(64, psize);
                float * wf = malloc(sizeof(float) * (size_t) k);
                float * xf = malloc(sizeof(float) * (size_t) k);
                for (int pattern = 0; pattern < 3; pattern++) {
                    for (int xs = 0; xs < 3; xs++) {
                        qgemv_weights(t, w, nblk, pattern);
                        for (int i = 0; i < k; i++) { // random; all +1 (+127); +-1 (+-127)
                            x[i] = xs == 0 ? rnd() : xs == 1 ? 1.0f : (i % 3 == 0 ? -1.0f : 1.0f);
                        }
                        ggml_x_type_traits(vd)->from_float(x, xq, k);
                        memset(xp, 0x5a, psize);
                        prep(x, xp, k);
                        float got = NAN, want = NAN;
                        dot(k, &got, w, xp);
                        ref(k, &want, w, xq);
                        ggml_x_type_traits(t)->to_float(w, wf, k);
                        ggml_x_type_traits(vd)->to_float(xq, xf, k);
                        double sa = 0.0;
                        for (int i = 0; i < k; i++) {
                            sa += fabs((double) wf[i] * xf[i]);
                        }
                        const double err = fabs((double) got - (double) want) / (sa + 1e-30);
                        T_CHECK_MSG(err < 2e-6 * sqrt((double) k) + 1e-6,
                                    "qgemv %s level %s k=%d pattern %d x %d: %.9g, reference %.9g (rel err %g)",
                                    ggml_type_name(t), ggml_x_cpu_level_name(k_levels[li]), k, pattern, xs, got, want, err);
                        checked++;
                        if (dotc != NULL) {
                            check_qgemv_cols(dotc, dot, prep, k, w, x, psize, sa, ggml_x_cpu_level_name(k_levels[li]), t);
                        }
                    }
                }
                free(w);
                free(x);
                free(xq);
                free(xp);
                free(wf);
                free(xf);
            }
        }
    }
    printf("     (%d matrix-vector dot products checked)\n", checked);
}

// the GEMM paths are actually taken where the level has them
static void test_gemm_available(void) {
    const enum ggml_x_cpu_level level = ggml_x_cpu_level();
    ggml_x_gemm_testing_set_level(level);
    T_CHECK(ggml_x_gemm_f_supported(GGML_TYPE_F32));
    T_CHECK(ggml_x_gemm_f_supported(GGML_TYPE_F16));
#if defined(__x86_64__)
    if (level >= GGML_X_CPU_AVX2 && level <= GGML_X_CPU_AVX512_VNNI) {
        T_CHECK(ggml_x_qgemm_supported(GGML_TYPE_Q4_0));
        T_CHECK(ggml_x_qgemm_supported(GGML_TYPE_Q8_0));
        T_CHECK(ggml_x_qgemm_supported(GGML_TYPE_Q4_K));
    }
#endif
    printf("     (level %s)\n", ggml_x_cpu_level_name(level));
}

int main(void) {
    T_RUN(test_gemm_available);
    T_RUN(test_gemm_float);
    T_RUN(test_gemm_quantized);
    T_RUN(test_qgemv_kernels);
    return T_SUMMARY();
}
