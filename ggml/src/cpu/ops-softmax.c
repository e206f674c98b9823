// ops-softmax.c - SOFT_MAX (F32): dst row = softmax(scale * x + mask row); SOFT_MAX_BACK (its
// gradient) at the end.
//
// f32[0] = scale; src1 = optional F32 mask; dst row ir (flattened over dims 1..3) adds mask row
// ir % mask->ne[1]. The row maximum is subtracted before exponentiation; elements equal to -inf
// give 0. As in the reference, exp() is evaluated on the fp16-rounded argument and its result
// rounded to fp16 (the reference looks it up in an fp16 table; our scalar kernel does too, the
// SIMD ones compute the same values, vec.h); the sum is
// accumulated in double. Dense rows (and mask rows) run the row kernels of vec.h.
// A row that is entirely -inf has a zero sum and comes out as NaN, like the reference.

#include "../ggml-impl.h"
#include "rowconv.h"
#include "vec.h"

#include <math.h>

#define SOFTMAX_PAD 16 // floats between the per-thread rows of the work buffer

static bool soft_max_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * mask = dst->src[1];
    if (!rowconv_f32_same_shape(dst)) {
        return false;
    }
    if (mask != NULL) {
        if (mask->type != GGML_TYPE_F32 || mask->ne[0] < a->ne[0] || mask->ne[1] < 1) {
            return false;
        }
    }
    return true;
}

static size_t soft_max_work_size(const struct ggml_tensor * dst, int n_threads) {
    return 64 + (size_t) n_threads * (size_t) (dst->ne[0] + SOFTMAX_PAD) * sizeof(float);
}

static void soft_max_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * a    = dst->src[0];
    const struct ggml_tensor * mask = dst->src[1];
    const float scale = ggml_x_soft_max_scale_get(dst);

    const int64_t ne0 = a->ne[0], ne1 = a->ne[1], ne2 = a->ne[2];
    const int64_t nr  = ne1 * ne2 * a->ne[3];

    float * wp = (float *) (((uintptr_t) cc->wdata + 63) & ~(uintptr_t) 63);
    wp += (size_t) cc->ith * (size_t) (ne0 + SOFTMAX_PAD);

    const int64_t dr  = (nr + cc->nth - 1) / cc->nth;
    const int64_t ir0 = GGML_X_MIN(dr * cc->ith, nr);
    const int64_t ir1 = GGML_X_MIN(ir0 + dr, nr);

    const struct ggml_x_vec_kernels * vk = ggml_x_vec_kernels_active();
    const bool dense = a->nb[0] == sizeof(float) && dst->nb[0] == sizeof(float) &&
                       (mask == NULL || mask->nb[0] == sizeof(float));

    for (int64_t ir = ir0; ir < ir1; ir++) {
        const int64_t i1 = ir % ne1;
        const int64_t i2 = (ir / ne1) % ne2;
        const int64_t i3 = ir / (ne1 * ne2);
        const char * sp = (const char *) a->data + i1*a->nb[1] + i2*a->nb[2] + i3*a->nb[3];
        char * dp = (char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3];

        if (dense) {
            const float * mrow = mask != NULL ? (const float *) ((const char *) mask->data + (ir % mask->ne[1]) * mask->nb[1]) : NULL;
            const float max = vk->scale_mask_max(ne0, wp, (const float *) sp, scale, mrow);
            const double sum = vk->exp_sum(ne0, wp, max);
            vk->scale(ne0, (float *) dp, wp, (float) (1.0 / sum));
            continue;
        }

        if (a->nb[0] == sizeof(float)) {
            const float * s = (const float *) sp;
            for (int64_t i0 = 0; i0 < ne0; i0++) {
                wp[i0] = s[i0] * scale;
            }
        } else {
            for (int64_t i0 = 0; i0 < ne0; i0++) {
                wp[i0] = *(const float *) (sp + i0*a->nb[0]) * scale;
            }
        }
        if (mask != NULL) {
            const char * mp = (const char *) mask->data + (ir % mask->ne[1]) * mask->nb[1];
            for (int64_t i0 = 0; i0 < ne0; i0++) {
                wp[i0] += *(const float *) (mp + i0*mask->nb[0]);
            }
        }

        float max = -INFINITY;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            max = max > wp[i0] ? max : wp[i0];
        }

        const double sum = vk->exp_sum(ne0, wp, max);

        const float inv = (float) (1.0 / sum);
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            *(float *) (dp + i0*dst->nb[0]) = wp[i0] * inv;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_soft_max = {
    .forward   = soft_max_forward,
    .supports  = soft_max_supports,
    .work_size = soft_max_work_size,
};

// ---------------------------------------------------------------------------------------------
// SOFT_MAX_BACK
// SOFT_MAX_BACK (the gradient of SOFT_MAX, F32): dx = y * (dy - sum(dy * y)) per row; src0 = dy,
// src1 = y. The sum is accumulated in double (four partial sums on dense rows).

// one dense row: dx = y * (dy - sum(dy * y)), the products and the difference in double as in
// the strided loop; the loops are plain so that the compiler vectorizes them
static void soft_max_back_row(int64_t n, float * restrict d, const float * restrict dy, const float * restrict y) {
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += (double) dy[i + 0] * (double) y[i + 0];
        s1 += (double) dy[i + 1] * (double) y[i + 1];
        s2 += (double) dy[i + 2] * (double) y[i + 2];
        s3 += (double) dy[i + 3] * (double) y[i + 3];
    }
    for (; i < n; i++) {
        s0 += (double) dy[i] * (double) y[i];
    }
    const double dot = (s0 + s1) + (s2 + s3);
    for (i = 0; i < n; i++) {
        d[i] = (float) ((double) y[i] * ((double) dy[i] - dot));
    }
}

static void soft_max_back_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * dy = dst->src[0];
    const struct ggml_tensor * y = dst->src[1];
    const int64_t ne0 = dst->ne[0];
    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    const bool dense = dst->nb[0] == sizeof(float) && dy->nb[0] == sizeof(float) && y->nb[0] == sizeof(float);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const char * gr = rowconv_row_flat(dy, ir);
        const char * yr = rowconv_row_flat(y, ir);
        char * d = rowconv_row_flat(dst, ir);
        if (dense && (const char *) d != gr && (const char *) d != yr) {
            soft_max_back_row(ne0, (float *) d, (const float *) gr, (const float *) yr);
            continue;
        }
        double dot = 0.0;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            dot += (double) ROWCONV_F32_AT(dy, i0, gr) * (double) ROWCONV_F32_AT(y, i0, yr);
        }
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            const double yv = ROWCONV_F32_AT(y, i0, yr);
            ROWCONV_F32_AT(dst, i0, d) = (float) (yv * ((double) ROWCONV_F32_AT(dy, i0, gr) - dot));
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_soft_max_back = {
    .forward  = soft_max_back_forward,
    .supports = rowconv_back_pair_supports,
};
