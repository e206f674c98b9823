// ops-repeat.c - REPEAT (tile src0 over dst's shape) and REPEAT_BACK (its gradient).
//
// REPEAT only moves elements, so any non-quantized type works (F32, F16, I32, I16, I8), as byte
// copies of whole elements; src0/src1 may have any strides. Work is split over dst rows.

#include "../ggml-impl.h"
#include "rowconv.h"

// ---------------------------------------------------------------------------------------------
// REPEAT: dst[i0, i1, i2, i3] = src0[i0 % ne00, i1 % ne01, i2 % ne02, i3 % ne03]

static bool repeat_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    if (src0 == NULL || src0->type != dst->type || !rowconv_is_movable(dst->type)) {
        return false;
    }
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (src0->ne[d] <= 0 || dst->ne[d] % src0->ne[d] != 0) {
            return false;
        }
    }
    return true;
}

static void repeat_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const size_t es = rowconv_type_size(dst->type);
    const int64_t ne00 = src0->ne[0];
    const int64_t nrep0 = dst->ne[0] / ne00;

    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, dst->ne[1], dst->ne[2], &i1, &i2, &i3);
        const char * s = (const char *) src0->data + (i1 % src0->ne[1]) * src0->nb[1] +
                         (i2 % src0->ne[2]) * src0->nb[2] + (i3 % src0->ne[3]) * src0->nb[3];
        char * d = rowconv_row(dst, i1, i2, i3);
        for (int64_t r = 0; r < nrep0; r++) {
            rowconv_copy_elems(d + r * ne00 * dst->nb[0], dst->nb[0], s, src0->nb[0], es, ne00);
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_repeat = { .forward = repeat_forward, .supports = repeat_supports };

// ---------------------------------------------------------------------------------------------
// REPEAT_BACK
// REPEAT_BACK (the gradient of REPEAT, F32): dst = sum of the tiles of src0 that have dst's shape;
// sums in double.

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
                            sum += (double) ROWCONV_F32_AT(a, i0 + k0 * ne0, s);
                        }
                    }
                }
            }
            ROWCONV_F32_AT(dst, i0, d) = (float) sum;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_repeat_back = {
    .forward  = repeat_back_forward,
    .supports = repeat_back_supports,
};
