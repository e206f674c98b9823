// ops-pool.c - POOL_1D and POOL_2D (max / average pooling, F32).
//
// Output position o covers input positions o*s - p .. o*s - p + k - 1. Positions outside the
// input are skipped: MAX takes the maximum of the rest (-FLT_MAX if there is none), AVG sums the
// rest and divides by the full window size (k0, or k0*k1), i.e. padding counts as zero. The
// padding is truncated towards zero to an integer offset, as the reference does.

#include "../ggml-impl.h"
#include "rowconv.h"

#include <float.h>

static void pool_split(int64_t n, int ith, int nth, int64_t * r0, int64_t * r1) {
    const int64_t dr = (n + nth - 1) / nth;
    *r0 = GGML_X_MIN(dr * ith, n);
    *r1 = GGML_X_MIN(*r0 + dr, n);
}

static bool pool_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    if (src0 == NULL || src0->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32) {
        return false;
    }
    const int32_t op = ggml_x_get_op_params_i32(dst, 0);
    return op == GGML_OP_POOL_MAX || op == GGML_OP_POOL_AVG;
}

// ---------------------------------------------------------------------------------------------
// POOL_1D: i32 = op, k0, s0, p0; pools dim 0 of every row

static bool pool_1d_supports(const struct ggml_tensor * dst) {
    if (!pool_supports(dst)) {
        return false;
    }
    const struct ggml_tensor * src0 = dst->src[0];
    // the reference's result is 2-D [OL, ne1]: only the rows that dst has are computed
    return ggml_x_get_op_params_i32(dst, 1) > 0 && ggml_x_get_op_params_i32(dst, 2) > 0 &&
           dst->ne[1] <= src0->ne[1] && dst->ne[2] <= src0->ne[2] && dst->ne[3] <= src0->ne[3];
}

static void pool_1d_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const int32_t op = ggml_x_get_op_params_i32(dst, 0);
    const int32_t k0 = ggml_x_get_op_params_i32(dst, 1);
    const int32_t s0 = ggml_x_get_op_params_i32(dst, 2);
    const int32_t p0 = ggml_x_get_op_params_i32(dst, 3);

    const int64_t ne00 = src0->ne[0];
    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    const size_t snb0 = src0->nb[0], dnb0 = dst->nb[0];

    int64_t r0, r1;
    pool_split(ne1 * ne2 * dst->ne[3], cc->ith, cc->nth, &r0, &r1);

    for (int64_t ir = r0; ir < r1; ir++) {
        const int64_t i1 = ir % ne1, i2 = (ir / ne1) % ne2, i3 = ir / (ne1 * ne2);
        const char * srow = rowconv_row(src0, i1, i2, i3);
        char * drow = rowconv_row(dst, i1, i2, i3);
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            const int64_t start = i0 * s0 - p0;
            float acc = op == GGML_OP_POOL_MAX ? -FLT_MAX : 0.0f;
            for (int64_t k = 0; k < k0; k++) {
                const int64_t j = start + k;
                if (j < 0 || j >= ne00) {
                    continue;
                }
                const float v = *(const float *) (srow + j * snb0);
                if (op == GGML_OP_POOL_MAX) {
                    acc = v > acc ? v : acc;
                } else {
                    acc += v;
                }
            }
            if (op == GGML_OP_POOL_AVG) {
                acc /= (float) k0;
            }
            *(float *) (drow + i0 * dnb0) = acc;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_pool_1d = {
    .forward  = pool_1d_forward,
    .supports = pool_1d_supports,
};

// ---------------------------------------------------------------------------------------------
// POOL_2D: i32 = op, k0, k1, s0, s1; f32[5] = p0, f32[6] = p1; pools dims 0 and 1 of every plane

static bool pool_2d_supports(const struct ggml_tensor * dst) {
    if (!pool_supports(dst)) {
        return false;
    }
    const struct ggml_tensor * src0 = dst->src[0];
    return ggml_x_get_op_params_i32(dst, 1) > 0 && ggml_x_get_op_params_i32(dst, 2) > 0 &&
           ggml_x_get_op_params_i32(dst, 3) > 0 && ggml_x_get_op_params_i32(dst, 4) > 0 &&
           dst->ne[2] == src0->ne[2] && dst->ne[3] == src0->ne[3];
}

static void pool_2d_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const int32_t op = ggml_x_get_op_params_i32(dst, 0);
    const int32_t k0 = ggml_x_get_op_params_i32(dst, 1);
    const int32_t k1 = ggml_x_get_op_params_i32(dst, 2);
    const int32_t s0 = ggml_x_get_op_params_i32(dst, 3);
    const int32_t s1 = ggml_x_get_op_params_i32(dst, 4);
    const int32_t off0 = (int32_t) -ggml_x_get_op_params_f32(dst, 5);
    const int32_t off1 = (int32_t) -ggml_x_get_op_params_f32(dst, 6);

    const int64_t ne00 = src0->ne[0], ne01 = src0->ne[1];
    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    const size_t snb0 = src0->nb[0], snb1 = src0->nb[1], dnb0 = dst->nb[0];
    const float ka = (float) k0 * (float) k1;

    // output rows (i1, i2, i3)
    int64_t r0, r1;
    pool_split(ne1 * ne2 * dst->ne[3], cc->ith, cc->nth, &r0, &r1);

    for (int64_t ir = r0; ir < r1; ir++) {
        const int64_t i1 = ir % ne1, i2 = (ir / ne1) % ne2, i3 = ir / (ne1 * ne2);
        const char * splane = (const char *) src0->data + i2 * src0->nb[2] + i3 * src0->nb[3];
        char * drow = rowconv_row(dst, i1, i2, i3);
        const int64_t iy = off1 + i1 * s1;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            const int64_t ix = off0 + i0 * s0;
            float acc = op == GGML_OP_POOL_MAX ? -FLT_MAX : 0.0f;
            for (int64_t ky = 0; ky < k1; ky++) {
                const int64_t y = iy + ky;
                if (y < 0 || y >= ne01) {
                    continue;
                }
                const char * srow = splane + y * snb1;
                for (int64_t kx = 0; kx < k0; kx++) {
                    const int64_t x = ix + kx;
                    if (x < 0 || x >= ne00) {
                        continue;
                    }
                    const float v = *(const float *) (srow + x * snb0);
                    if (op == GGML_OP_POOL_MAX) {
                        acc = v > acc ? v : acc;
                    } else {
                        acc += v;
                    }
                }
            }
            if (op == GGML_OP_POOL_AVG) {
                acc /= ka;
            }
            *(float *) (drow + i0 * dnb0) = acc;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_pool_2d = {
    .forward  = pool_2d_forward,
    .supports = pool_2d_supports,
};
