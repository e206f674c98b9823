// ops-reduce.c - SUM (all elements -> one value), SUM_ROWS and MEAN (per row -> [1, ne1, ne2,
// ne3]) and ARGMAX (index of the largest element of each row, I32).
//
// Sums are accumulated in double precision in element order and rounded once; MEAN divides the
// rounded row sum by ne0 in single precision, as the reference does. SUM runs on one thread so
// the result does not depend on the thread count. ARGMAX returns the first index of the maximum
// (NaNs are never selected unless the whole row is NaN, then 0). Sources may have any strides.

#include "../ggml-impl.h"
#include "rowconv.h"

#include <math.h>

// sum of one row in double (F32 or F16 elements with stride nb0)
static double reduce_row_sum(const char * x, size_t nb0, enum ggml_type type, int64_t n) {
    double s = 0.0;
    if (type == GGML_TYPE_F32) {
        if (nb0 == sizeof(float)) {
            const float * xf = (const float *) x;
            for (int64_t i = 0; i < n; i++) {
                s += (double) xf[i];
            }
        } else {
            for (int64_t i = 0; i < n; i++) {
                s += (double) *(const float *) (x + i * nb0);
            }
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            s += (double) GGML_FP16_TO_FP32(*(const ggml_fp16_t *) (x + i * nb0));
        }
    }
    return s;
}

static bool reduce_float_type(enum ggml_type type) {
    return type == GGML_TYPE_F32 || type == GGML_TYPE_F16;
}

// ---------------------------------------------------------------------------------------------
// SUM

static bool sum_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    return src0 != NULL && reduce_float_type(src0->type) && reduce_float_type(dst->type) &&
           ggml_nelements(dst) >= 1;
}

static int sum_n_tasks(const struct ggml_tensor * dst, int n_threads) {
    GGML_UNUSED(dst);
    GGML_UNUSED(n_threads);
    return 1;
}

static void sum_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    if (cc->ith != 0) {
        return;
    }
    const struct ggml_tensor * src0 = dst->src[0];
    double s = 0.0;
    const int64_t nr = ggml_nrows(src0);
    for (int64_t ir = 0; ir < nr; ir++) {
        const char * x = rowconv_row_flat(src0, ir);
        s += reduce_row_sum(x, src0->nb[0], src0->type, src0->ne[0]);
    }
    if (dst->type == GGML_TYPE_F32) {
        *(float *) dst->data = (float) s;
    } else {
        *(ggml_fp16_t *) dst->data = GGML_FP32_TO_FP16((float) s);
    }
}

const struct ggml_cpu_op ggml_cpu_op_sum = {
    .forward = sum_forward, .supports = sum_supports, .n_tasks = sum_n_tasks,
};

// ---------------------------------------------------------------------------------------------
// SUM_ROWS, MEAN

static bool rows_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    return src0 != NULL && reduce_float_type(src0->type) && reduce_float_type(dst->type) && dst->ne[0] >= 1 &&
           dst->ne[1] == src0->ne[1] && dst->ne[2] == src0->ne[2] && dst->ne[3] == src0->ne[3];
}

static void rows_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst, bool mean) {
    const struct ggml_tensor * src0 = dst->src[0];
    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(src0), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, src0->ne[1], src0->ne[2], &i1, &i2, &i3);
        const char * x = rowconv_row(src0, i1, i2, i3);
        float v = (float) reduce_row_sum(x, src0->nb[0], src0->type, src0->ne[0]);
        if (mean) {
            v /= (float) src0->ne[0];
        }
        char * y = rowconv_row(dst, i1, i2, i3);
        if (dst->type == GGML_TYPE_F32) {
            *(float *) y = v;
        } else {
            *(ggml_fp16_t *) y = GGML_FP32_TO_FP16(v);
        }
    }
}

static void sum_rows_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    rows_forward(cc, dst, false);
}

static void mean_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    rows_forward(cc, dst, true);
}

const struct ggml_cpu_op ggml_cpu_op_sum_rows = { .forward = sum_rows_forward, .supports = rows_supports };
const struct ggml_cpu_op ggml_cpu_op_mean = { .forward = mean_forward, .supports = rows_supports };

// ---------------------------------------------------------------------------------------------
// ARGMAX: src0 F32 [ne0, ne1, ne2, ne3] -> dst I32 [ne1, ne2, ne3]

static bool argmax_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    return src0 != NULL && src0->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_I32 &&
           dst->ne[0] == src0->ne[1] && dst->ne[1] == src0->ne[2] && dst->ne[2] == src0->ne[3] && dst->ne[3] == 1;
}

static void argmax_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const int64_t ne00 = src0->ne[0];
    const size_t nb00 = src0->nb[0];
    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(src0), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, src0->ne[1], src0->ne[2], &i1, &i2, &i3);
        const char * x = rowconv_row(src0, i1, i2, i3);
        int64_t best = -1;
        float best_v = 0.0f;
        for (int64_t i0 = 0; i0 < ne00; i0++) {
            const float v = *(const float *) (x + i0 * nb00);
            if (isnan(v)) {
                continue;
            }
            if (best < 0 || v > best_v) {
                best = i0;
                best_v = v;
            }
        }
        *(int32_t *) ((char *) dst->data + i1 * dst->nb[0] + i2 * dst->nb[1] + i3 * dst->nb[2]) =
            (int32_t) (best < 0 ? 0 : best);
    }
}

const struct ggml_cpu_op ggml_cpu_op_argmax = { .forward = argmax_forward, .supports = argmax_supports };
