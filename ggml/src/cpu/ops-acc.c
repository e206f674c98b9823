// ops-acc.c - ACC and SET (a strided window of src0 added to / overwritten by src1).
//
// i32[0..3] = nb1, nb2, nb3, offset (bytes), i32[4] = inplace. Unless inplace, src0 is
// first copied into dst; then src1 is added into (ACC) or written over (SET) the window of dst
// that starts at byte `offset` and has the row/plane strides nb1..nb3 (element stride = dst's
// element size). Window elements that would lie outside dst are skipped.

#include "../ggml-impl.h"
#include "rowconv.h"

// ---------------------------------------------------------------------------------------------
// ACC / SET

// ACC: dst, src0 F32; src1 F32 or F16. SET: dst and src0 of one non-quantized type; src1 of the
// same type, or F32/F16 into an F32/F16 dst (converted).
static bool accset_supports_common(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    if (src0 == NULL || src1 == NULL || src0->type != dst->type) {
        return false;
    }
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (src0->ne[d] != dst->ne[d]) {
            return false;
        }
    }
    return true;
}

static bool acc_supports(const struct ggml_tensor * dst) {
    return accset_supports_common(dst) && dst->type == GGML_TYPE_F32 &&
           (dst->src[1]->type == GGML_TYPE_F32 || dst->src[1]->type == GGML_TYPE_F16);
}

static bool set_supports(const struct ggml_tensor * dst) {
    if (!accset_supports_common(dst) || !ggml_x_type_valid(dst->type) || rowconv_is_quant(dst->type)) {
        return false;
    }
    const enum ggml_type t1 = dst->src[1]->type;
    if (t1 == dst->type) {
        return true;
    }
    return (t1 == GGML_TYPE_F32 || t1 == GGML_TYPE_F16) &&
           (dst->type == GGML_TYPE_F32 || dst->type == GGML_TYPE_F16);
}

// dst = src0 (same shape and type, not quantized), split over all threads
static void accset_copy(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst, const struct ggml_tensor * src0) {
    const size_t es = rowconv_type_size(dst->type);
    if (ggml_is_contiguous(dst) && ggml_is_contiguous(src0)) {
        int64_t u0, u1;
        rowconv_split(ggml_nelements(dst), cc->ith, cc->nth, &u0, &u1);
        if (u1 > u0) {
            memcpy((char *) dst->data + u0 * es, (const char *) src0->data + u0 * es, (size_t) (u1 - u0) * es);
        }
        return;
    }
    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, dst->ne[1], dst->ne[2], &i1, &i2, &i3);
        const char * s = rowconv_row(src0, i1, i2, i3);
        char * d = rowconv_row(dst, i1, i2, i3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            memcpy(d + i0 * dst->nb[0], s + i0 * src0->nb[0], es);
        }
    }
}

static void accset_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst, bool acc) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];

    const size_t wnb1 = (size_t) (uint32_t) ggml_x_get_op_params_i32(dst, 0);
    const size_t wnb2 = (size_t) (uint32_t) ggml_x_get_op_params_i32(dst, 1);
    const size_t wnb3 = (size_t) (uint32_t) ggml_x_get_op_params_i32(dst, 2);
    const size_t offset = (size_t) (uint32_t) ggml_x_get_op_params_i32(dst, 3);
    const bool inplace = ggml_x_get_op_params_i32(dst, 4) != 0;

    if (!inplace && dst->data != src0->data) {
        accset_copy(cc, dst, src0);
        ggml_cpu_barrier(cc);
    }

    const size_t es = rowconv_type_size(dst->type);
    const size_t nbytes = ggml_nbytes(dst);
    const int64_t ne10 = src1->ne[0], ne11 = src1->ne[1], ne12 = src1->ne[2];
    const bool same = src1->type == dst->type;

    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(src1), cc->ith, cc->nth, &ir0, &ir1);

    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, ne11, ne12, &i1, &i2, &i3);
        const char * s = rowconv_row(src1, i1, i2, i3);
        const size_t base = offset + (size_t) i1 * wnb1 + (size_t) i2 * wnb2 + (size_t) i3 * wnb3;
        char * d = (char *) dst->data + base;
        // elements of this window row that fit inside dst
        int64_t n = 0;
        if (base < nbytes) {
            n = GGML_X_MIN(ne10, (int64_t) ((nbytes - base) / es));
        }
        for (int64_t i0 = 0; i0 < n; i0++) {
            const char * sp = s + i0 * src1->nb[0];
            char * dp = d + i0 * es;
            if (acc) {
                const float v = src1->type == GGML_TYPE_F32 ? *(const float *) sp
                                                            : GGML_FP16_TO_FP32(*(const ggml_fp16_t *) sp);
                *(float *) dp += v;
            } else if (same) {
                memcpy(dp, sp, es);
            } else {
                const float v = src1->type == GGML_TYPE_F32 ? *(const float *) sp
                                                            : GGML_FP16_TO_FP32(*(const ggml_fp16_t *) sp);
                if (dst->type == GGML_TYPE_F32) {
                    *(float *) dp = v;
                } else {
                    *(ggml_fp16_t *) dp = GGML_FP32_TO_FP16(v);
                }
            }
        }
    }
}

static void acc_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    accset_forward(cc, dst, true);
}

static void set_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    accset_forward(cc, dst, false);
}

const struct ggml_cpu_op ggml_cpu_op_acc = { .forward = acc_forward, .supports = acc_supports };
const struct ggml_cpu_op ggml_cpu_op_set = { .forward = set_forward, .supports = set_supports };
