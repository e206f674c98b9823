// ops-backward.c - kernels of the ops that only backward passes use (F32): REPEAT_BACK,
// SILU_BACK, RMS_NORM_BACK, GET_ROWS_BACK, SOFT_MAX_BACK. (ROPE_BACK lives with ROPE in
// ops-rope.c, FLASH_ATTN_BACK in ops-flash-attn.c, CROSS_ENTROPY_LOSS_BACK in ops-loss.c.)
//
// REPEAT_BACK   dst = sum of the tiles of src0 that have dst's shape
// SILU_BACK     dst = dy * s(x) * (1 + x * (1 - s(x))), s the logistic function; src0 = x, src1 = dy
// RMS_NORM_BACK with r = 1/sqrt(mean(x^2) + eps) per row:
//               dx = r * dy - r^3 * x * mean(x * dy); src0 = x, src1 = dy, f32[0] = eps
// GET_ROWS_BACK dst = 0, then dst[:, b[i], i2, i3] += src0[:, i, i2, i3]; src1 = b (I32)
// SOFT_MAX_BACK dx = y * (dy - sum(dy * y)) per row; src0 = dy, src1 = y
//
// Row sums are accumulated in double. These are plain C loops over dense or strided rows; the
// compiler vectorizes the dense inner loops at every SIMD level the library is built for.

#include "../ggml-impl.h"
#include "rowconv.h"

#include <math.h>

// src0 and src1 (when present) are F32 of dst's shape, dst F32
static bool back_pair_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * b = dst->src[1];
    return rowconv_f32_same_shape(dst) && b != NULL && b->type == GGML_TYPE_F32 && ggml_are_same_shape(b, dst);
}

#define F32_AT(t, i0, row) (*(float *) ((row) + (i0) * (t)->nb[0]))

// ---------------------------------------------------------------------------------------------
// REPEAT_BACK

static bool repeat_back_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    if (a == NULL || a->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (dst->ne[i] == 0 ? a->ne[i] != 0 : a->ne[i] % dst->ne[i] != 0) {
            return false;
        }
    }
    return true;
}

static void repeat_back_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2], ne3 = dst->ne[3];
    const int64_t nr0 = a->ne[0] / ne0, nr1 = a->ne[1] / ne1, nr2 = a->ne[2] / ne2, nr3 = a->ne[3] / ne3;
    int64_t ir0, ir1;
    rowconv_split(ne1 * ne2 * ne3, cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, ne1, ne2, &i1, &i2, &i3);
        char * d = rowconv_row(dst, i1, i2, i3);
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            double sum = 0.0;
            for (int64_t k3 = 0; k3 < nr3; k3++) {
                for (int64_t k2 = 0; k2 < nr2; k2++) {
                    for (int64_t k1 = 0; k1 < nr1; k1++) {
                        const char * s = rowconv_row(a, i1 + k1 * ne1, i2 + k2 * ne2, i3 + k3 * ne3);
                        for (int64_t k0 = 0; k0 < nr0; k0++) {
                            sum += (double) F32_AT(a, i0 + k0 * ne0, s);
                        }
                    }
                }
            }
            F32_AT(dst, i0, d) = (float) sum;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_repeat_back = {
    .forward  = repeat_back_forward,
    .supports = repeat_back_supports,
};

// ---------------------------------------------------------------------------------------------
// SILU_BACK

static void silu_back_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * x = dst->src[0];
    const struct ggml_tensor * dy = dst->src[1];
    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const char * xr = rowconv_row_flat(x, ir);
        const char * gr = rowconv_row_flat(dy, ir);
        char * d = rowconv_row_flat(dst, ir);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const double v = F32_AT(x, i0, xr);
            const double s = 1.0 / (1.0 + exp(-v));
            F32_AT(dst, i0, d) = (float) ((double) F32_AT(dy, i0, gr) * s * (1.0 + v * (1.0 - s)));
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_silu_back = {
    .forward  = silu_back_forward,
    .supports = back_pair_supports,
};

// ---------------------------------------------------------------------------------------------
// RMS_NORM_BACK

static void rms_norm_back_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * x = dst->src[0];
    const struct ggml_tensor * dy = dst->src[1];
    const double eps = ggml_x_get_op_params_f32(dst, 0);
    const int64_t ne0 = dst->ne[0];
    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const char * xr = rowconv_row_flat(x, ir);
        const char * gr = rowconv_row_flat(dy, ir);
        char * d = rowconv_row_flat(dst, ir);
        double sxx = 0.0, sxg = 0.0;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            const double v = F32_AT(x, i0, xr);
            sxx += v * v;
            sxg += v * (double) F32_AT(dy, i0, gr);
        }
        const double r = 1.0 / sqrt(sxx / (double) ne0 + eps);
        const double c = r * r * r * sxg / (double) ne0;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            F32_AT(dst, i0, d) = (float) (r * (double) F32_AT(dy, i0, gr) - c * (double) F32_AT(x, i0, xr));
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_rms_norm_back = {
    .forward  = rms_norm_back_forward,
    .supports = back_pair_supports,
};

// ---------------------------------------------------------------------------------------------
// GET_ROWS_BACK: threads split the columns, so every thread owns its part of every dst row

static bool get_rows_back_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    return a != NULL && b != NULL && a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_I32 &&
           dst->type == GGML_TYPE_F32 && a->ne[0] == dst->ne[0] && a->ne[1] == b->ne[0] && a->ne[2] == b->ne[1] &&
           a->ne[3] == b->ne[2] && dst->ne[2] == a->ne[2] && dst->ne[3] == a->ne[3];
}

static void get_rows_back_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    int64_t c0, c1;
    rowconv_split(dst->ne[0], cc->ith, cc->nth, &c0, &c1);
    for (int64_t ir = 0; ir < ggml_nrows(dst); ir++) {
        char * d = rowconv_row_flat(dst, ir);
        for (int64_t i0 = c0; i0 < c1; i0++) {
            F32_AT(dst, i0, d) = 0.0f;
        }
    }
    for (int64_t i3 = 0; i3 < a->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < a->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < a->ne[1]; i1++) {
                const int64_t r = *(const int32_t *) ((const char *) b->data + i1 * b->nb[0] + i2 * b->nb[1] +
                                                      i3 * b->nb[2]);
                if (r < 0 || r >= dst->ne[1]) {
                    continue; // get_rows gave zeros for this index: nothing flows back
                }
                const char * s = rowconv_row(a, i1, i2, i3);
                char * d = rowconv_row(dst, r, i2, i3);
                for (int64_t i0 = c0; i0 < c1; i0++) {
                    F32_AT(dst, i0, d) += F32_AT(a, i0, s);
                }
            }
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_get_rows_back = {
    .forward  = get_rows_back_forward,
    .supports = get_rows_back_supports,
};

// ---------------------------------------------------------------------------------------------
// SOFT_MAX_BACK

static void soft_max_back_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * dy = dst->src[0];
    const struct ggml_tensor * y = dst->src[1];
    const int64_t ne0 = dst->ne[0];
    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const char * gr = rowconv_row_flat(dy, ir);
        const char * yr = rowconv_row_flat(y, ir);
        char * d = rowconv_row_flat(dst, ir);
        double dot = 0.0;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            dot += (double) F32_AT(dy, i0, gr) * (double) F32_AT(y, i0, yr);
        }
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            const double yv = F32_AT(y, i0, yr);
            F32_AT(dst, i0, d) = (float) (yv * ((double) F32_AT(dy, i0, gr) - dot));
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_soft_max_back = {
    .forward  = soft_max_back_forward,
    .supports = back_pair_supports,
};
