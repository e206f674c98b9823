// test-out-prod.c - OUT_PROD on the float GEMM (cpu/gemm.h, ggml_x_gemm_f_compute_at) against a
// double-precision reference and the row kernel: F32 and F16 first operands, sizes that are not
// multiples of the micro-tiles or of the cache blocks (k over one K block, rows over one M block),
// a second operand stored transposed (ggml_transpose: the layout of the backward pass of
// MUL_MAT), broadcast batches, 1..3 threads (identical results), extreme values, every kernel
// level this CPU runs.

#include "ggml.h"
#include "ggml-impl.h"
#include "cpu/gemm.h"

#include "test-util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct op_case {
    enum ggml_type ta;
    int m, n, k;   // dst is m x n (m = a->ne[0], n = b->ne[0]), k = a->ne[1] = b->ne[1]
    int a2, r2;    // batches of a, broadcast factor of b's batches
    bool bt;       // b given as ggml_transpose of a contiguous (k, n) tensor
    float scale;   // magnitude of the values (extreme-value cases)
};

static const struct op_case k_cases[] = {
    { GGML_TYPE_F32, 37, 29, 531, 1, 1, false, 1.0f }, // k over one K block, odd m, n
    { GGML_TYPE_F32, 300, 40, 17, 1, 1, false, 1.0f }, // m over one M block
    { GGML_TYPE_F32, 1, 9, 3, 1, 1, false, 1.0f },
    { GGML_TYPE_F32, 70, 13, 64, 2, 2, false, 1.0f },  // broadcast batches
    { GGML_TYPE_F32, 33, 15, 45, 3, 1, true, 1.0f },   // transposed b
    { GGML_TYPE_F32, 64, 96, 256, 1, 1, true, 1.0f },  // the backward pass of a mat-mul
    { GGML_TYPE_F32, 17, 5, 1, 1, 1, false, 1.0f },    // k = 1
    { GGML_TYPE_F32, 23, 11, 40, 1, 1, false, 1e18f }, // large values (no overflow in the sums)
    { GGML_TYPE_F32, 23, 11, 40, 1, 1, true, 1e-18f }, // tiny values
    { GGML_TYPE_F16, 41, 19, 77, 1, 1, false, 1.0f },
    { GGML_TYPE_F16, 64, 33, 600, 2, 1, true, 1.0f },
};
#define N_CASES ((int) (sizeof(k_cases) / sizeof(k_cases[0])))

static const enum ggml_x_cpu_level k_levels[] = {
    GGML_X_CPU_SCALAR, GGML_X_CPU_AVX2, GGML_X_CPU_AVX512, GGML_X_CPU_AVX512_VNNI,
    GGML_X_CPU_NEON, GGML_X_CPU_NEON_DOTPROD,
};

static void fill_scaled(struct ggml_tensor * t, float scale) {
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        const float v = rnd() * scale;
        if (t->type == GGML_TYPE_F32) {
            ((float *) t->data)[i] = v;
        } else {
            ((ggml_fp16_t *) t->data)[i] = ggml_fp32_to_fp16(v);
        }
    }
}

static double elem(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2) {
    const char * p = (const char *) t->data + i0*t->nb[0] + i1*t->nb[1] + i2*t->nb[2];
    return t->type == GGML_TYPE_F16 ? (double) ggml_fp16_to_fp32(*(const ggml_fp16_t *) p) : (double) *(const float *) p;
}

static void run(struct ggml_context * ctx, struct ggml_tensor * d, int nth, float * out) {
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, d);
    memset(d->data, 0x7f, ggml_nbytes(d)); // every element must be written
    ggml_graph_compute_with_ctx(ctx, gf, nth);
    memcpy(out, d->data, ggml_nbytes(d));
}

static void check_case(const struct op_case * c) {
    struct ggml_init_params ip = { 64u * 1024 * 1024, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * a = ggml_new_tensor_3d(ctx, c->ta, c->m, c->k, c->a2);
    fill_scaled(a, c->scale);
    struct ggml_tensor * b;
    if (c->bt) {
        struct ggml_tensor * bs = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, c->k, c->n, c->a2 * c->r2);
        fill_scaled(bs, 1.0f);
        b = ggml_transpose(ctx, bs);
    } else {
        b = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, c->n, c->k, c->a2 * c->r2);
        fill_scaled(b, 1.0f);
    }
    struct ggml_tensor * d = ggml_out_prod(ctx, a, b);
    const size_t ne = (size_t) ggml_nelements(d);
    double * ref = malloc(sizeof(double) * ne);
    double * mag = malloc(sizeof(double) * ne);
    float * got = malloc(sizeof(float) * ne);
    float * got1 = malloc(sizeof(float) * ne);
    size_t idx = 0;
    for (int64_t i2 = 0; i2 < d->ne[2]; i2++) {
        for (int64_t i1 = 0; i1 < d->ne[1]; i1++) {
            for (int64_t i0 = 0; i0 < d->ne[0]; i0++) {
                double s = 0.0, sa = 0.0;
                for (int64_t kk = 0; kk < c->k; kk++) {
                    const double p = elem(a, i0, kk, i2 / c->r2) * elem(b, i1, kk, i2);
                    s += p;
                    sa += fabs(p);
                }
                ref[idx] = s;
                mag[idx++] = sa;
            }
        }
    }
    const double tol = 2e-6 * sqrt((double) c->k) + 1e-6;
    for (size_t li = 0; li < sizeof(k_levels) / sizeof(k_levels[0]); li++) {
        if (!ggml_x_gemm_testing_set_level(k_levels[li])) {
            continue;
        }
        for (int mode = 0; mode <= 1; mode++) { // 0: the GEMM, 1: the row kernel
            ggml_x_gemm_testing_set_mode(mode);
            for (int nth = 1; nth <= 3; nth++) {
                run(ctx, d, nth, nth == 1 ? got1 : got);
                if (nth > 1) {
                    T_CHECK_MSG(memcmp(got, got1, sizeof(float) * ne) == 0,
                                "out_prod %s m=%d n=%d k=%d level %s mode %d: %d threads differ from 1",
                                ggml_type_name(c->ta), c->m, c->n, c->k, ggml_x_cpu_level_name(k_levels[li]), mode, nth);
                }
            }
            double worst = 0.0;
            for (size_t i = 0; i < ne; i++) {
                const double e = fabs((double) got1[i] - ref[i]) / (mag[i] + 1e-300);
                worst = (e <= worst) ? worst : (isnan(e) ? INFINITY : e);
            }
            T_CHECK_MSG(worst < tol, "out_prod %s m=%d n=%d k=%d a2=%d r2=%d bt=%d scale=%g level %s mode %d: max rel err %g",
                        ggml_type_name(c->ta), c->m, c->n, c->k, c->a2, c->r2, c->bt, (double) c->scale,
                        ggml_x_cpu_level_name(k_levels[li]), mode, worst);
        }
    }
    ggml_x_gemm_testing_set_mode(0);
    ggml_x_gemm_testing_set_level(ggml_x_cpu_level());
    free(ref);
    free(mag);
    free(got);
    free(got1);
    ggml_free(ctx);
}

static void test_out_prod_cases(void) {
    for (int i = 0; i < N_CASES; i++) {
        check_case(&k_cases[i]);
    }
}

// a quantized first operand (Q8_0) takes the row kernel (rows converted with to_float)
static void test_out_prod_quantized_a(void) {
    struct ggml_init_params ip = { 16u * 1024 * 1024, NULL, false };
    struct ggml_context * ctx = ggml_init(ip);
    const int m = 64, k = 21, n = 7;
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, m, k);
    float * av = malloc(sizeof(float) * (size_t) (m * k));
    for (int i = 0; i < m * k; i++) {
        av[i] = rnd();
    }
    ggml_internal_get_type_traits(GGML_TYPE_Q8_0).from_float(av, a->data, m * k);
    ggml_internal_get_type_traits(GGML_TYPE_Q8_0).to_float(a->data, av, m * k); // what a holds
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, k);
    fill_scaled(b, 1.0f);
    struct ggml_tensor * d = ggml_out_prod(ctx, a, b);
    float * got = malloc(sizeof(float) * (size_t) ggml_nelements(d));
    run(ctx, d, 2, got);
    double worst = 0.0;
    for (int i1 = 0; i1 < n; i1++) {
        for (int i0 = 0; i0 < m; i0++) {
            double s = 0.0, sa = 0.0;
            for (int kk = 0; kk < k; kk++) {
                const double p = (double) av[kk * m + i0] * elem(b, i1, kk, 0);
                s += p;
                sa += fabs(p);
            }
            worst = fmax(worst, fabs(got[i1 * m + i0] - s) / (sa + 1e-300));
        }
    }
    T_CHECK_MSG(worst < 1e-5, "Q8_0 a: max rel err %g", worst);
    free(av);
    free(got);
    ggml_free(ctx);
}

int main(void) {
    T_RUN(test_out_prod_cases);
    T_RUN(test_out_prod_quantized_a);
    return T_SUMMARY();
}
