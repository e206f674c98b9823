// ops-get-rows.c - GET_ROWS: gather rows of src0 selected by the I32 indices in src1 (and
// GET_ROWS_BACK, its gradient, at the end).
//
//   dst[:, i10, i11, i12] = src0[:, src1[i10, i11, i12], i11, i12]
//
// src0 of any type: same-type results (e.g. I32) are byte copies of the row; otherwise the row is
// converted to F32 (quantized rows through the traits' to_float, which must exist) and stored in
// dst's type (F32 or F16). src1 may be a non-contiguous view. An index outside [0, ne01) (or a
// batch position outside src0) gives a row of zeros in dst instead of reading out of bounds.

#include "../ggml-impl.h"
#include "rowconv.h"

static bool get_rows_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    if (src0 == NULL || src1 == NULL || src1->type != GGML_TYPE_I32 || !ggml_x_type_valid(src0->type) ||
        !ggml_x_type_valid(dst->type)) {
        return false;
    }
    if (dst->ne[0] != src0->ne[0] || dst->ne[1] != src1->ne[0] || dst->ne[2] != src1->ne[1] ||
        dst->ne[3] != src1->ne[2] || src1->ne[3] != 1) {
        return false;
    }
    if (src0->type == dst->type) {
        if (!rowconv_is_quant(src0->type)) {
            return true;
        }
        const size_t ts = rowconv_type_size(src0->type);
        return src0->nb[0] == ts && dst->nb[0] == ts;
    }
    return rowconv_can_load(src0->type, src0->nb[0]) && rowconv_can_store(dst->type, dst->nb[0], dst->ne[0]);
}

static bool get_rows_needs_buf(const struct ggml_tensor * dst) {
    return dst->src[0]->type != dst->type && !(dst->type == GGML_TYPE_F32 && dst->nb[0] == sizeof(float));
}

static size_t get_rows_work_size(const struct ggml_tensor * dst, int n_threads) {
    return get_rows_needs_buf(dst) ? rowconv_work_size(dst->ne[0], n_threads) : 0;
}

static void get_rows_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const int64_t nc = src0->ne[0];
    const int64_t ne10 = src1->ne[0], ne11 = src1->ne[1];
    const bool same = src0->type == dst->type;
    const size_t es = rowconv_type_size(dst->type);
    const bool quant = rowconv_is_quant(src0->type);
    const size_t row_bytes = ggml_row_size(src0->type, nc);

    float * buf = get_rows_needs_buf(dst) ? rowconv_slice(cc, nc) : NULL;

    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i10, i11, i12;
        rowconv_unravel(ir, ne10, ne11, &i10, &i11, &i12);
        const int64_t r = *(const int32_t *) ((const char *) src1->data + i10 * src1->nb[0] + i11 * src1->nb[1] +
                                              i12 * src1->nb[2]);
        char * d = (char *) dst->data + i10 * dst->nb[1] + i11 * dst->nb[2] + i12 * dst->nb[3];

        if (r < 0 || r >= src0->ne[1] || i11 >= src0->ne[2] || i12 >= src0->ne[3]) {
            if (same && quant) {
                memset(d, 0, row_bytes); // all-zero blocks (zero scales) decode to zeros
            } else if (dst->nb[0] == es) {
                memset(d, 0, (size_t) nc * es);
            } else {
                for (int64_t i0 = 0; i0 < nc; i0++) {
                    memset(d + i0 * dst->nb[0], 0, es);
                }
            }
            continue;
        }

        const char * s = (const char *) src0->data + r * src0->nb[1] + i11 * src0->nb[2] + i12 * src0->nb[3];
        if (same) {
            if (quant || (src0->nb[0] == es && dst->nb[0] == es)) {
                memcpy(d, s, quant ? row_bytes : (size_t) nc * es);
            } else {
                for (int64_t i0 = 0; i0 < nc; i0++) {
                    memcpy(d + i0 * dst->nb[0], s + i0 * src0->nb[0], es);
                }
            }
        } else if (buf == NULL) {
            rowconv_load((float *) d, s, src0->nb[0], src0->type, nc);
        } else {
            rowconv_load(buf, s, src0->nb[0], src0->type, nc);
            rowconv_store(d, dst->nb[0], dst->type, buf, nc);
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_get_rows = {
    .forward = get_rows_forward, .supports = get_rows_supports, .work_size = get_rows_work_size,
};

// ---------------------------------------------------------------------------------------------
// GET_ROWS_BACK: threads split the columns, so every thread owns its part of every dst row
// GET_ROWS_BACK (the gradient of GET_ROWS, F32): dst = 0, then
// dst[:, b[i], i2, i3] += src0[:, i, i2, i3]; src1 = b (I32).

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
            ROWCONV_F32_AT(dst, i0, d) = 0.0f;
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
                    ROWCONV_F32_AT(dst, i0, d) += ROWCONV_F32_AT(a, i0, s);
                }
            }
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_get_rows_back = {
    .forward  = get_rows_back_forward,
    .supports = get_rows_back_supports,
};
