// ops-diag.c - DIAG, DIAG_MASK_INF and DIAG_MASK_ZERO (F32).
//
// DIAG: src0 [ne0, 1, ne2, ne3] -> dst [ne0, ne0, ne2, ne3] with src0's row on the diagonal of
// every matrix and zeros elsewhere.
// DIAG_MASK_INF / _ZERO (i32[0] = n_past): dst = src0, except that element (i0, i1) of every
// matrix becomes -inf / 0 where i0 > n_past + i1. dst may alias src0 (inplace variants).
// Any strides; work is split over dst rows.

#include "../ggml-impl.h"
#include "rowconv.h"

#include <math.h>

static bool diag_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    return src0 != NULL && src0->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && src0->ne[1] == 1 &&
           dst->ne[0] == src0->ne[0] && dst->ne[1] == src0->ne[0] && dst->ne[2] == src0->ne[2] &&
           dst->ne[3] == src0->ne[3];
}

static void diag_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const int64_t ne0 = dst->ne[0];
    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, dst->ne[1], dst->ne[2], &i1, &i2, &i3);
        const char * s = (const char *) src0->data + i2 * src0->nb[2] + i3 * src0->nb[3];
        char * d = rowconv_row(dst, i1, i2, i3);
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            *(float *) (d + i0 * dst->nb[0]) = i0 == i1 ? *(const float *) (s + i0 * src0->nb[0]) : 0.0f;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_diag = { .forward = diag_forward, .supports = diag_supports };

static void diag_mask_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst, float value) {
    const struct ggml_tensor * src0 = dst->src[0];
    const int64_t n_past = ggml_x_get_op_params_i32(dst, 0);
    const int64_t ne0 = dst->ne[0];
    const size_t snb0 = src0->nb[0], dnb0 = dst->nb[0];
    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, dst->ne[1], dst->ne[2], &i1, &i2, &i3);
        const char * s = rowconv_row(src0, i1, i2, i3);
        char * d = rowconv_row(dst, i1, i2, i3);
        // elements i0 > n_past + i1 are masked
        const int64_t keep = GGML_X_MAX((int64_t) 0, GGML_X_MIN(ne0, n_past + i1 + 1));
        if (s != d || snb0 != dnb0) {
            for (int64_t i0 = 0; i0 < keep; i0++) {
                *(float *) (d + i0 * dnb0) = *(const float *) (s + i0 * snb0);
            }
        }
        for (int64_t i0 = keep; i0 < ne0; i0++) {
            *(float *) (d + i0 * dnb0) = value;
        }
    }
}

static void diag_mask_inf_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    diag_mask_forward(cc, dst, -INFINITY);
}

static void diag_mask_zero_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    diag_mask_forward(cc, dst, 0.0f);
}

const struct ggml_cpu_op ggml_cpu_op_diag_mask_inf = { .forward = diag_mask_inf_forward, .supports = rowconv_f32_same_shape };
const struct ggml_cpu_op ggml_cpu_op_diag_mask_zero = { .forward = diag_mask_zero_forward, .supports = rowconv_f32_same_shape };
