// ops-upscale.c - UPSCALE (nearest neighbour along dims 0 and 1). F32 only; rows are split
// across threads.

#include "../ggml-impl.h"
#include "rowconv.h"

// ---------------------------------------------------------------------------------------------
// UPSCALE: dst[i0, i1, i2, i3] = src[i0 / sf, i1 / sf, i2, i3]

static bool upscale_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    if (src0 == NULL || src0->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32) {
        return false;
    }
    const int32_t sf = ggml_x_get_op_params_i32(dst, 0);
    return sf > 0 && dst->ne[0] <= src0->ne[0] * sf && dst->ne[1] <= src0->ne[1] * sf &&
           dst->ne[2] == src0->ne[2] && dst->ne[3] == src0->ne[3];
}

static void upscale_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const int32_t sf = ggml_x_get_op_params_i32(dst, 0);
    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    const size_t snb0 = src0->nb[0], dnb0 = dst->nb[0];

    int64_t r0, r1;
    rowconv_split(ne1 * ne2 * dst->ne[3], cc->ith, cc->nth, &r0, &r1);

    for (int64_t ir = r0; ir < r1; ir++) {
        const int64_t i1 = ir % ne1, i2 = (ir / ne1) % ne2, i3 = ir / (ne1 * ne2);
        const char * srow = (const char *) src0->data + (i1 / sf) * src0->nb[1] + i2 * src0->nb[2] + i3 * src0->nb[3];
        char * drow = rowconv_row(dst, i1, i2, i3);
        if (snb0 == sizeof(float) && dnb0 == sizeof(float)) {
            const float * s = (const float *) srow;
            float * d = (float *) drow;
            int64_t i0 = 0;
            for (int64_t j = 0; i0 < ne0; j++) {
                const float v = s[j];
                for (int32_t k = 0; k < sf && i0 < ne0; k++, i0++) {
                    d[i0] = v;
                }
            }
        } else {
            for (int64_t i0 = 0; i0 < ne0; i0++) {
                *(float *) (drow + i0 * dnb0) = *(const float *) (srow + (i0 / sf) * snb0);
            }
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_upscale = {
    .forward  = upscale_forward,
    .supports = upscale_supports,
};
