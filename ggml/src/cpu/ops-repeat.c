// ops-repeat.c - REPEAT (tile src0 over dst's shape) and CONCAT (src0 then src1 along dim 2).
//
// Both only move elements, so any non-quantized type works (F32, F16, I32, I16, I8), as byte
// copies of whole elements; src0/src1 may have any strides. Work is split over dst rows.

#include "../ggml-impl.h"
#include "rowconv.h"

// copy n elements of es bytes from s (stride snb0) to d (stride dnb0)
static void repeat_copy_elems(char * d, size_t dnb0, const char * s, size_t snb0, size_t es, int64_t n) {
    if (snb0 == es && dnb0 == es) {
        memcpy(d, s, (size_t) n * es);
        return;
    }
    switch (es) {
        case 4:
            for (int64_t i = 0; i < n; i++) *(uint32_t *) (d + i * dnb0) = *(const uint32_t *) (s + i * snb0);
            break;
        case 2:
            for (int64_t i = 0; i < n; i++) *(uint16_t *) (d + i * dnb0) = *(const uint16_t *) (s + i * snb0);
            break;
        default:
            for (int64_t i = 0; i < n; i++) memcpy(d + i * dnb0, s + i * snb0, es);
            break;
    }
}

static bool repeat_type_ok(enum ggml_type type) {
    return ggml_x_type_valid(type) && !rowconv_is_quant(type);
}

// ---------------------------------------------------------------------------------------------
// REPEAT: dst[i0, i1, i2, i3] = src0[i0 % ne00, i1 % ne01, i2 % ne02, i3 % ne03]

static bool repeat_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    if (src0 == NULL || src0->type != dst->type || !repeat_type_ok(dst->type)) {
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
            repeat_copy_elems(d + r * ne00 * dst->nb[0], dst->nb[0], s, src0->nb[0], es, ne00);
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_repeat = { .forward = repeat_forward, .supports = repeat_supports };

// ---------------------------------------------------------------------------------------------
// CONCAT: dst[:, :, i2, :] = i2 < ne02 ? src0[:, :, i2, :] : src1[:, :, i2 - ne02, :]

static bool concat_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    if (src0 == NULL || src1 == NULL || src0->type != dst->type || src1->type != dst->type ||
        !repeat_type_ok(dst->type)) {
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
        repeat_copy_elems(d, dst->nb[0], x, s->nb[0], es, dst->ne[0]);
    }
}

const struct ggml_cpu_op ggml_cpu_op_concat = { .forward = concat_forward, .supports = concat_supports };
