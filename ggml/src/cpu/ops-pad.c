// ops-pad.c - PAD (zeros appended at the end of every dimension). F32 only; rows are split
// across threads.

#include "../ggml-impl.h"
#include "rowconv.h"

// ---------------------------------------------------------------------------------------------
// PAD: dst[i] = src[i] where i is inside src's shape, 0 elsewhere

static bool pad_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    if (src0 == NULL || src0->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (dst->ne[i] < src0->ne[i]) {
            return false;
        }
    }
    return true;
}

static void pad_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    const int64_t ne00 = src0->ne[0], ne01 = src0->ne[1], ne02 = src0->ne[2], ne03 = src0->ne[3];
    const size_t snb0 = src0->nb[0], dnb0 = dst->nb[0];

    int64_t r0, r1;
    rowconv_split(ne1 * ne2 * dst->ne[3], cc->ith, cc->nth, &r0, &r1);

    for (int64_t ir = r0; ir < r1; ir++) {
        const int64_t i1 = ir % ne1, i2 = (ir / ne1) % ne2, i3 = ir / (ne1 * ne2);
        char * drow = rowconv_row(dst, i1, i2, i3);
        int64_t n_src = 0; // elements copied from src0 in this row
        if (i1 < ne01 && i2 < ne02 && i3 < ne03) {
            const char * srow = rowconv_row(src0, i1, i2, i3);
            n_src = ne00;
            if (snb0 == sizeof(float) && dnb0 == sizeof(float)) {
                memcpy(drow, srow, (size_t) ne00 * sizeof(float));
            } else {
                for (int64_t i0 = 0; i0 < ne00; i0++) {
                    *(float *) (drow + i0 * dnb0) = *(const float *) (srow + i0 * snb0);
                }
            }
        }
        for (int64_t i0 = n_src; i0 < ne0; i0++) {
            *(float *) (drow + i0 * dnb0) = 0.0f;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_pad = {
    .forward  = pad_forward,
    .supports = pad_supports,
};
