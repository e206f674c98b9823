// test-kernels-matrix.c - CPU kernels of MUL_MAT, MUL_MAT_ID, OUT_PROD, NORM, RMS_NORM,
// GROUP_NORM, SOFT_MAX, ROPE and ALIBI against direct references computed here in double.
// Every graph runs with 1, 2 and 4 threads; the results must be bit-identical.

#include "ggml.h"
#include "ggml-impl.h"

#define TEST_RNG_SEED 0x2545f4914f6cdd1dull
#include "test-util.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// MUL_MAT

// a [k, m, a2, a3] (type ta), b [k, n, a2*r2, a3*r3] (type tb, stored transposed when bt)
static void check_mul_mat(enum ggml_type ta, enum ggml_type tb, int k, int m, int n, int a2, int a3, int r2, int r3,
                          bool bt) {
    struct ggml_context * ctx = new_ctx(64);
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, ta, k, m, a2, a3);
    struct ggml_tensor * b;
    if (bt) {
        b = ggml_new_tensor_4d(ctx, tb, n, k, a2 * r2, a3 * r3);
        fill(b);
        b = ggml_transpose(ctx, b);
    } else {
        b = ggml_new_tensor_4d(ctx, tb, k, n, a2 * r2, a3 * r3);
        fill(b);
    }
    fill(a);
    struct ggml_tensor * d = ggml_mul_mat(ctx, a, b);
    if (compute_all(ctx, d)) {
        // the dot products see b rounded to the weights' vec_dot_type (F16 for F16 weights)
        const bool round_b = ta == GGML_TYPE_F16;
        double max_err = 0.0;
        for (int64_t i3 = 0; i3 < d->ne[3]; i3++) {
            for (int64_t i2 = 0; i2 < d->ne[2]; i2++) {
                for (int64_t i1 = 0; i1 < n; i1++) {
                    for (int64_t i0 = 0; i0 < m; i0++) {
                        double s = 0.0, sa = 0.0;
                        for (int64_t ik = 0; ik < k; ik++) {
                            float bv = at(b, ik, i1, i2, i3);
                            if (round_b) {
                                bv = round_f16(bv);
                            }
                            const double p = (double) at(a, ik, i0, i2 / r2, i3 / r3) * bv;
                            s += p;
                            sa += fabs(p);
                        }
                        const double err = fabs(at(d, i0, i1, i2, i3) - s) / (sa + 1e-30);
                        max_err = err > max_err ? err : max_err;
                    }
                }
            }
        }
        T_CHECK_MSG(max_err < 1e-5, "mul_mat %s x %s k=%d m=%d n=%d: max rel err %g", ggml_type_name(ta),
                    ggml_type_name(tb), k, m, n, max_err);
    }
    ggml_free(ctx);
}

static void test_mul_mat_f32(void) {
    check_mul_mat(GGML_TYPE_F32, GGML_TYPE_F32, 37, 19, 7, 1, 1, 1, 1, false);
    check_mul_mat(GGML_TYPE_F32, GGML_TYPE_F32, 64, 5, 70, 2, 1, 2, 3, false);   // many columns, few rows
    check_mul_mat(GGML_TYPE_F32, GGML_TYPE_F32, 33, 70, 3, 1, 2, 3, 1, false);   // many rows
    check_mul_mat(GGML_TYPE_F32, GGML_TYPE_F32, 17, 9, 5, 2, 2, 1, 2, true);     // transposed b
}

static void test_mul_mat_f16(void) {
    check_mul_mat(GGML_TYPE_F16, GGML_TYPE_F32, 37, 19, 7, 1, 1, 1, 1, false);
    check_mul_mat(GGML_TYPE_F16, GGML_TYPE_F32, 48, 40, 13, 2, 1, 2, 2, false);
    check_mul_mat(GGML_TYPE_F16, GGML_TYPE_F16, 31, 11, 9, 1, 3, 2, 1, false);
    check_mul_mat(GGML_TYPE_F16, GGML_TYPE_F16, 15, 6, 4, 1, 1, 1, 1, true);     // transposed f16 b
    check_mul_mat(GGML_TYPE_F16, GGML_TYPE_F32, 15, 6, 4, 2, 1, 1, 1, true);
}

// quantized weights: every type whose traits have vec_dot (and a quantizer for its vec_dot_type)
// against a double product of the dequantized weights and the dequantized quantized activations
static void test_mul_mat_quantized(void) {
    const int k = 512, m = 5, n = 3;
    int n_tested = 0;
    for (int ti = 0; ti < GGML_TYPE_COUNT; ti++) {
        const enum ggml_type type = (enum ggml_type) ti;
        if (!ggml_x_type_valid(type) || !ggml_is_quantized(type)) {
            continue;
        }
        const ggml_type_traits_t ta = ggml_internal_get_type_traits(type);
        const ggml_type_traits_t tv = ggml_internal_get_type_traits(ta.vec_dot_type);
        if (ta.vec_dot == NULL || ta.from_float == NULL || ta.to_float == NULL || tv.from_float == NULL ||
            tv.to_float == NULL || k % ta.blck_size != 0) {
            continue;
        }
        struct ggml_context * ctx = new_ctx(16);
        struct ggml_tensor * a = ggml_new_tensor_2d(ctx, type, k, m);
        struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, n);
        float * af = malloc(sizeof(float) * k * m);
        float * bq = malloc(sizeof(float) * k * n);
        void * qrow = malloc(ggml_row_size(ta.vec_dot_type, k));
        for (int i = 0; i < k * m; i++) {
            af[i] = rnd();
        }
        for (int r = 0; r < m; r++) {
            ta.from_float(af + r * k, (char *) a->data + r * a->nb[1], k);
            ta.to_float((char *) a->data + r * a->nb[1], af + r * k, k); // dequantized weights
        }
        fill(b);
        for (int c = 0; c < n; c++) {
            tv.from_float((const float *) b->data + c * k, qrow, k);
            tv.to_float(qrow, bq + c * k, k); // activations as vec_dot sees them
        }
        struct ggml_tensor * d = ggml_mul_mat(ctx, a, b);
        if (compute_all(ctx, d)) {
            for (int c = 0; c < n; c++) {
                for (int r = 0; r < m; r++) {
                    double s = 0.0, sa = 0.0;
                    for (int i = 0; i < k; i++) {
                        s += (double) af[r * k + i] * bq[c * k + i];
                        sa += fabs((double) af[r * k + i] * bq[c * k + i]);
                    }
                    const double err = fabs(at(d, r, c, 0, 0) - s) / sa;
                    T_CHECK_MSG(err < 1e-4, "%s: row %d col %d: %g vs %g", ggml_type_name(type), r, c,
                                (double) at(d, r, c, 0, 0), s);
                }
            }
        }
        n_tested++;
        free(af);
        free(bq);
        free(qrow);
        ggml_free(ctx);
    }
    printf("     (%d quantized types tested)\n", n_tested);
}

static void test_mul_mat_permuted(void) {
    // a and b permuted in dims 1, 2 (rows contiguous, batch strides swapped)
    struct ggml_context * ctx = new_ctx(16);
    const int k = 24, m = 7, n = 5, bs = 3;
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, k, bs, m, 1);
    struct ggml_tensor * b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, k, bs, n, 1);
    fill(a);
    fill(b);
    struct ggml_tensor * ap = ggml_permute(ctx, a, 0, 2, 1, 3);
    struct ggml_tensor * bp = ggml_permute(ctx, b, 0, 2, 1, 3);
    struct ggml_tensor * d = ggml_mul_mat(ctx, ap, bp);
    if (compute_all(ctx, d)) {
        for (int i2 = 0; i2 < bs; i2++) {
            for (int i1 = 0; i1 < n; i1++) {
                for (int i0 = 0; i0 < m; i0++) {
                    double s = 0.0;
                    for (int ik = 0; ik < k; ik++) {
                        s += (double) at(ap, ik, i0, i2, 0) * at(bp, ik, i1, i2, 0);
                    }
                    T_NEAR(at(d, i0, i1, i2, 0), s, 1e-5);
                }
            }
        }
    }
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// MUL_MAT_ID

static void test_mul_mat_id(void) {
    struct ggml_context * ctx = new_ctx(16);
    const int n_as = 3, k = 32, m = 9, n = 11, n_ids = 2;
    struct ggml_tensor * as[3];
    for (int e = 0; e < n_as; e++) {
        as[e] = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m);
        fill(as[e]);
    }
    struct ggml_tensor * ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, n_ids, n);
    for (int i = 0; i < n; i++) {
        ((int32_t *) ids->data)[i * n_ids + 0] = (i * 7) % n_as;
        ((int32_t *) ids->data)[i * n_ids + 1] = i == 4 ? n_as + 2 : (i + 1) % n_as; // one out of range
    }
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, n);
    fill(b);
    for (int id = 0; id < n_ids; id++) {
        struct ggml_tensor * d = ggml_mul_mat_id(ctx, as, n_as, ids, id, b);
        if (!compute_all(ctx, d)) {
            continue;
        }
        for (int i1 = 0; i1 < n; i1++) {
            const int e = ((int32_t *) ids->data)[i1 * n_ids + id];
            for (int i0 = 0; i0 < m; i0++) {
                double s = 0.0;
                if (e >= 0 && e < n_as) {
                    for (int ik = 0; ik < k; ik++) {
                        s += (double) at(as[e], ik, i0, 0, 0) * at(b, ik, i1, 0, 0);
                    }
                }
                T_NEAR(at(d, i0, i1, 0, 0), s, 1e-5);
            }
        }
    }
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// OUT_PROD

static void check_out_prod(enum ggml_type ta, int m, int kk, int n, int a2, int a3, int r2, int r3, bool bt) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * a = ggml_new_tensor_4d(ctx, ta, m, kk, a2, a3);
    fill(a);
    struct ggml_tensor * b;
    if (bt) {
        b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, kk, n, a2 * r2, a3 * r3);
        fill(b);
        b = ggml_transpose(ctx, b);
    } else {
        b = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, n, kk, a2 * r2, a3 * r3);
        fill(b);
    }
    struct ggml_tensor * d = ggml_out_prod(ctx, a, b);
    if (compute_all(ctx, d)) {
        for (int64_t i3 = 0; i3 < d->ne[3]; i3++) {
            for (int64_t i2 = 0; i2 < d->ne[2]; i2++) {
                for (int64_t i1 = 0; i1 < n; i1++) {
                    for (int64_t i0 = 0; i0 < m; i0++) {
                        double s = 0.0;
                        for (int64_t ik = 0; ik < kk; ik++) {
                            s += (double) at(a, i0, ik, i2 / r2, i3 / r3) * at(b, i1, ik, i2, i3);
                        }
                        T_NEAR(at(d, i0, i1, i2, i3), s, 1e-5);
                    }
                }
            }
        }
    }
    ggml_free(ctx);
}

static void test_out_prod(void) {
    check_out_prod(GGML_TYPE_F32, 16, 10, 12, 1, 1, 1, 1, false);
    check_out_prod(GGML_TYPE_F32, 7, 5, 21, 2, 1, 2, 3, false);
    check_out_prod(GGML_TYPE_F32, 9, 6, 5, 1, 1, 2, 1, true);
    check_out_prod(GGML_TYPE_F16, 8, 5, 19, 1, 2, 1, 1, false);
}

// ---------------------------------------------------------------------------------------------
// NORM, RMS_NORM, GROUP_NORM

static void test_norm(void) {
    struct ggml_context * ctx = new_ctx(16);
    const int64_t ne0 = 67, ne1 = 5, ne2 = 3, ne3 = 2;
    struct ggml_tensor * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne0, ne2, ne1, ne3);
    fill(x);
    struct ggml_tensor * xp = ggml_permute(ctx, x, 0, 2, 1, 3); // non-contiguous rows order
    const float eps = 1e-5f;
    struct ggml_tensor * y = ggml_norm(ctx, xp, eps);
    struct ggml_tensor * z = ggml_rms_norm(ctx, xp, eps);
    const bool ok_y = compute_all(ctx, y);
    const bool ok_z = compute_all(ctx, z);
    for (int64_t i3 = 0; i3 < ne3; i3++) {
        for (int64_t i2 = 0; i2 < ne2; i2++) {
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                double s = 0.0, s2 = 0.0;
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    const double v = at(xp, i0, i1, i2, i3);
                    s += v;
                    s2 += v * v;
                }
                const double mean = s / ne0;
                double var = 0.0;
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    const double v = at(xp, i0, i1, i2, i3) - mean;
                    var += v * v;
                }
                var /= ne0;
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    const double v = at(xp, i0, i1, i2, i3);
                    if (ok_y) {
                        T_NEAR(at(y, i0, i1, i2, i3), (v - mean) / sqrt(var + eps), 1e-5);
                    }
                    if (ok_z) {
                        T_NEAR(at(z, i0, i1, i2, i3), v / sqrt(s2 / ne0 + eps), 1e-5);
                    }
                }
            }
        }
    }
    ggml_free(ctx);
}

static void test_group_norm(void) {
    struct ggml_context * ctx = new_ctx(16);
    const int64_t ne0 = 6, ne1 = 5, ne2 = 10, ne3 = 2;
    const int n_groups = 4; // 3 channels per group, the last group has 1
    struct ggml_tensor * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne0, ne1, ne2, ne3);
    fill(x);
    struct ggml_tensor * y = ggml_group_norm(ctx, x, n_groups);
    if (compute_all(ctx, y)) {
        const int64_t per = (ne2 + n_groups - 1) / n_groups;
        for (int64_t i3 = 0; i3 < ne3; i3++) {
            for (int64_t c0 = 0; c0 < ne2; c0 += per) {
                const int64_t c1 = c0 + per < ne2 ? c0 + per : ne2;
                double s = 0.0, s2 = 0.0;
                const double cnt = (double) (ne0 * ne1 * (c1 - c0));
                for (int64_t i2 = c0; i2 < c1; i2++) {
                    for (int64_t i1 = 0; i1 < ne1; i1++) {
                        for (int64_t i0 = 0; i0 < ne0; i0++) {
                            s += at(x, i0, i1, i2, i3);
                        }
                    }
                }
                const double mean = s / cnt;
                for (int64_t i2 = c0; i2 < c1; i2++) {
                    for (int64_t i1 = 0; i1 < ne1; i1++) {
                        for (int64_t i0 = 0; i0 < ne0; i0++) {
                            const double v = at(x, i0, i1, i2, i3) - mean;
                            s2 += v * v;
                        }
                    }
                }
                const double inv = 1.0 / sqrt(s2 / cnt + 1e-6);
                for (int64_t i2 = c0; i2 < c1; i2++) {
                    for (int64_t i1 = 0; i1 < ne1; i1++) {
                        for (int64_t i0 = 0; i0 < ne0; i0++) {
                            T_NEAR(at(y, i0, i1, i2, i3), (at(x, i0, i1, i2, i3) - mean) * inv, 1e-5);
                        }
                    }
                }
            }
        }
    }
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// SOFT_MAX

static void test_soft_max(void) {
    struct ggml_context * ctx = new_ctx(16);
    const int64_t ne0 = 45, ne1 = 6, ne2 = 3;
    const float scale = 0.7f;
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, ne0, ne1, ne2);
    fill(x);
    const int64_t mrows = 3; // divides ne1: the mask repeats over the rows
    struct ggml_tensor * mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, ne0, mrows);
    for (int64_t r = 0; r < mrows; r++) {
        for (int64_t c = 0; c < ne0; c++) {
            ((float *) mask->data)[r * ne0 + c] = c > r + 30 ? -INFINITY : rnd();
        }
    }
    struct ggml_tensor * y0 = ggml_soft_max(ctx, x);
    struct ggml_tensor * y1 = ggml_soft_max_ext(ctx, x, mask, scale);
    const bool ok0 = compute_all(ctx, y0);
    const bool ok1 = compute_all(ctx, y1);
    for (int64_t i2 = 0; i2 < ne2; i2++) {
        for (int64_t i1 = 0; i1 < ne1; i1++) {
            const int64_t mr = (i1 + ne1 * i2) % mrows;
            double sum0 = 0.0, sum1 = 0.0, z0 = 0.0, z1 = 0.0, mx0 = -INFINITY, mx1 = -INFINITY;
            for (int64_t i0 = 0; i0 < ne0; i0++) {
                const double v0 = at(x, i0, i1, i2, 0);
                const double v1 = v0 * scale + ((float *) mask->data)[mr * ne0 + i0];
                mx0 = v0 > mx0 ? v0 : mx0;
                mx1 = v1 > mx1 ? v1 : mx1;
            }
            for (int64_t i0 = 0; i0 < ne0; i0++) {
                const double v0 = at(x, i0, i1, i2, 0);
                const double v1 = v0 * scale + ((float *) mask->data)[mr * ne0 + i0];
                z0 += exp(v0 - mx0);
                z1 += exp(v1 - mx1);
            }
            for (int64_t i0 = 0; i0 < ne0; i0++) {
                const double v0 = at(x, i0, i1, i2, 0);
                const double v1 = v0 * scale + ((float *) mask->data)[mr * ne0 + i0];
                if (ok0) {
                    sum0 += at(y0, i0, i1, i2, 0);
                    // exp goes through fp16 as in the reference: ~1e-3 relative
                    T_NEAR(at(y0, i0, i1, i2, 0), exp(v0 - mx0) / z0, 2e-3);
                }
                if (ok1) {
                    sum1 += at(y1, i0, i1, i2, 0);
                    T_NEAR(at(y1, i0, i1, i2, 0), exp(v1 - mx1) / z1, 2e-3);
                    if (isinf(v1)) {
                        T_CHECK(at(y1, i0, i1, i2, 0) == 0.0f);
                    }
                }
            }
            if (ok0) {
                T_NEAR(sum0, 1.0, 1e-5);
            }
            if (ok1) {
                T_NEAR(sum1, 1.0, 1e-5);
            }
        }
    }
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// ROPE

// direct reference: angle of pair k at position p, with theta advanced in float per pair as the
// kernel (and the reference library) do; rotation in double
static void check_rope(enum ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int n_dims, int mode, bool perm) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * x;
    if (perm) {
        x = ggml_new_tensor_3d(ctx, type, ne0, ne2, ne1);
        fill(x);
        x = ggml_permute(ctx, x, 0, 2, 1, 3);
    } else {
        x = ggml_new_tensor_3d(ctx, type, ne0, ne1, ne2);
        fill(x);
    }
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, ne2);
    for (int64_t i = 0; i < ne2; i++) {
        ((int32_t *) pos->data)[i] = (int32_t) ((i * 37 + 3) % 500);
    }
    struct ggml_tensor * y = ggml_rope(ctx, x, pos, n_dims, mode, 512);
    if (compute_all(ctx, y)) {
        const float theta_scale = powf(10000.0f, -2.0f / n_dims);
        const double tol = type == GGML_TYPE_F16 ? 2e-3 : 1e-5;
        for (int64_t i2 = 0; i2 < ne2; i2++) {
            const int32_t p = ((int32_t *) pos->data)[i2];
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                float theta = (float) p;
                for (int k = 0; k < n_dims / 2; k++) {
                    const int64_t j0 = mode == 2 ? k : 2 * k;
                    const int64_t j1 = mode == 2 ? k + n_dims / 2 : 2 * k + 1;
                    const double x0 = at(x, j0, i1, i2, 0), x1 = at(x, j1, i1, i2, 0);
                    const double c = cos(theta), s = sin(theta);
                    T_NEAR(at(y, j0, i1, i2, 0), x0 * c - x1 * s, tol);
                    T_NEAR(at(y, j1, i1, i2, 0), x0 * s + x1 * c, tol);
                    theta *= theta_scale;
                }
                for (int64_t i0 = n_dims; i0 < ne0; i0++) {
                    T_CHECK(at(y, i0, i1, i2, 0) == at(x, i0, i1, i2, 0));
                }
            }
        }
    }
    ggml_free(ctx);
}

static void test_rope(void) {
    check_rope(GGML_TYPE_F32, 64, 5, 7, 64, 0, false);
    check_rope(GGML_TYPE_F32, 64, 3, 6, 64, 2, false);
    check_rope(GGML_TYPE_F32, 80, 4, 5, 32, 2, false);  // partial rotation: tail copied
    check_rope(GGML_TYPE_F32, 48, 4, 5, 48, 0, true);   // permuted source
    check_rope(GGML_TYPE_F16, 64, 3, 5, 64, 0, false);
    check_rope(GGML_TYPE_F16, 40, 3, 5, 20, 2, true);
}

// freq_scale without YaRN (ext_factor 0): mode 0 scales the angles by freq_scale; the NeoX path of
// the reference version scales the position once more (freq_scale applies twice); attn_factor
// scales the result
static void test_rope_freq_scale(void) {
    struct ggml_context * ctx = new_ctx(16);
    const int64_t ne0 = 32, ne1 = 2, ne2 = 4;
    const int n_dims = 32;
    const float fs = 0.25f, attn = 0.8f;
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, ne0, ne1, ne2);
    fill(x);
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, ne2);
    for (int64_t i = 0; i < ne2; i++) {
        ((int32_t *) pos->data)[i] = (int32_t) (i * 101 + 7);
    }
    for (int mode = 0; mode <= 2; mode += 2) {
        struct ggml_tensor * y = ggml_rope_custom(ctx, x, pos, n_dims, mode, 512, 0, 10000.0f, fs, 0.0f, attn, 32.0f, 1.0f);
        if (!compute_all(ctx, y)) {
            continue;
        }
        const float theta_scale = powf(10000.0f, -2.0f / n_dims);
        for (int64_t i2 = 0; i2 < ne2; i2++) {
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                float theta = (float) ((int32_t *) pos->data)[i2];
                if (mode == 2) {
                    theta *= fs;
                }
                for (int k = 0; k < n_dims / 2; k++) {
                    const int64_t j0 = mode == 2 ? k : 2 * k;
                    const int64_t j1 = mode == 2 ? k + n_dims / 2 : 2 * k + 1;
                    const double x0 = at(x, j0, i1, i2, 0), x1 = at(x, j1, i1, i2, 0);
                    const double c = cos(fs * theta) * attn, s = sin(fs * theta) * attn;
                    T_NEAR(at(y, j0, i1, i2, 0), x0 * c - x1 * s, 1e-5);
                    T_NEAR(at(y, j1, i1, i2, 0), x0 * s + x1 * c, 1e-5);
                    theta *= theta_scale;
                }
            }
        }
    }
    ggml_free(ctx);
}

static void test_rope_yarn_corr_dims(void) {
    float dims[2];
    ggml_rope_yarn_corr_dims(128, 4096, 10000.0f, 32.0f, 1.0f, dims);
    // n_dims * ln(n_orig / (2 pi beta)) / (2 ln base)
    const double lo = floor(128 * log(4096 / (2 * M_PI * 32)) / (2 * log(10000.0)));
    const double hi = ceil(128 * log(4096 / (2 * M_PI * 1)) / (2 * log(10000.0)));
    T_NEAR(dims[0], lo > 0 ? lo : 0, 1e-6);
    T_NEAR(dims[1], hi < 127 ? hi : 127, 1e-6);
}

// ---------------------------------------------------------------------------------------------
// ALIBI

static void test_alibi(void) {
    struct ggml_context * ctx = new_ctx(16);
    const int64_t ne0 = 7, ne1 = 3, ne2 = 6, ne3 = 2;
    const int n_head = 6;
    const float bias_max = 8.0f;
    struct ggml_tensor * x = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, ne0, ne1, ne2, ne3);
    fill(x);
    struct ggml_tensor * y = ggml_alibi(ctx, x, 0, n_head, bias_max);
    if (compute_all(ctx, y)) {
        const int h = 4; // largest power of two <= 6
        for (int64_t i3 = 0; i3 < ne3; i3++) {
            for (int64_t i2 = 0; i2 < ne2; i2++) {
                const int64_t k = i2 + ne2 * i3;
                const double slope = k < h ? pow(2.0, -(double) bias_max / h * (double) (k + 1))
                                           : pow(2.0, -(double) bias_max / 2 / h * (double) (2 * (k - h) + 1));
                for (int64_t i1 = 0; i1 < ne1; i1++) {
                    for (int64_t i0 = 0; i0 < ne0; i0++) {
                        T_NEAR(at(y, i0, i1, i2, i3), at(x, i0, i1, i2, i3) + slope * i0, 1e-5);
                    }
                }
            }
        }
    }
    ggml_free(ctx);
}

int main(void) {
    T_RUN(test_mul_mat_f32);
    T_RUN(test_mul_mat_f16);
    T_RUN(test_mul_mat_quantized);
    T_RUN(test_mul_mat_permuted);
    T_RUN(test_mul_mat_id);
    T_RUN(test_out_prod);
    T_RUN(test_norm);
    T_RUN(test_group_norm);
    T_RUN(test_soft_max);
    T_RUN(test_rope);
    T_RUN(test_rope_freq_scale);
    T_RUN(test_rope_yarn_corr_dims);
    T_RUN(test_alibi);
    return T_SUMMARY();
}
