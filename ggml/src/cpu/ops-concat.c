// ops-concat.c - CONCAT: src0 then src1 along dim 2.
//
// It only moves elements, so any non-quantized type works (F32, F16, I32, I16, I8), as byte
// copies of whole elements (rowconv_copy_elems); src0/src1 may have any strides. Work is split
// over dst rows.

#include "../ggml-impl.h"
#include "rowconv.h"

// ---------------------------------------------------------------------------------------------
// CONCAT: dst[:, :, i2, :] = i2 < ne02 ? src0[:, :, i2, :] : src1[:, :, i2 - ne02, :]

static bool concat_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    if (src0 == NULL || src1 == NULL || src0->type != dst->type || src1->type != dst->type ||
        !rowconv_is_movable(dst->type)) {
        return false;
    }
    return src0->ne[0] == dst->ne[0] && src1->ne[0] == dst->ne[0] && src0->ne[1] == dst->ne[1] &&
           src1->ne[1] == dst->ne[1] && src0->ne[3] == dst->ne[3] && src1->ne[3] == dst->ne[3] &&
           src0->ne[2] + src1->ne[2] == dst->ne[2];
}

static void concat_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const size_t es = rowconv_type_size(dst->type);
    const int64_t ne02 = src0->ne[2];

    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, dst->ne[1], dst->ne[2], &i1, &i2, &i3);
        const struct ggml_tensor * s = i2 < ne02 ? src0 : src1;
        const int64_t j2 = i2 < ne02 ? i2 : i2 - ne02;
        const char * x = (const char *) s->data + i1 * s->nb[1] + j2 * s->nb[2] + i3 * s->nb[3];
        char * d = rowconv_row(dst, i1, i2, i3);
        rowconv_copy_elems(d, dst->nb[0], x, s->nb[0], es, dst->ne[0]);
    }
}

const struct ggml_cpu_op ggml_cpu_op_concat = { .forward = concat_forward, .supports = concat_supports };
