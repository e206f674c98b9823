// ops-binary.c - ADD, SUB, MUL, DIV and ADD1.
//
// ADD/SUB/MUL/DIV: dst = src0 (op) src1, where src1 broadcasts over src0 (src0->ne[i] is a
// multiple of src1->ne[i]: element i of dim d of src0 uses element i % src1->ne[d]). dst has
// src0's shape; its type may differ (ggml_add_cast). All F32 with dense rows is the fast path;
// every other combination goes through F32 rows: src0/src1 of type F32, F16 or quantized (with
// traits to_float; dense rows), dst F32, F16 or quantized (traits from_float), the result being
// rounded to dst's type once. Rows may have any strides otherwise.
// ADD1: src1 is a single element; the same kernel as ADD.

#include "../ggml-impl.h"
#include "rowconv.h"

enum binary_kind { BIN_ADD, BIN_SUB, BIN_MUL, BIN_DIV };

static bool binary_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    if (src0 == NULL || src1 == NULL) {
        return false;
    }
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        // (the division only for a broadcast dimension: this runs for every node of every compute)
        if (dst->ne[d] != src0->ne[d] || src1->ne[d] <= 0 ||
            (src1->ne[d] != src0->ne[d] && src0->ne[d] % src1->ne[d] != 0)) {
            return false;
        }
    }
    return rowconv_can_load(src0->type, src0->nb[0]) && rowconv_can_load(src1->type, src1->nb[0]) &&
           rowconv_can_store(dst->type, dst->nb[0], dst->ne[0]) &&
           (!rowconv_is_quant(src1->type) || src1->ne[0] % rowconv_blck(src1->type) == 0);
}

static bool binary_all_f32(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    return dst->type == GGML_TYPE_F32 && src0->type == GGML_TYPE_F32 && src1->type == GGML_TYPE_F32 &&
           dst->nb[0] == sizeof(float) && src0->nb[0] == sizeof(float) && src1->nb[0] == sizeof(float);
}

static size_t binary_work_size(const struct ggml_tensor * dst, int n_threads) {
    if (binary_all_f32(dst)) {
        return 0;
    }
    return rowconv_work_size(dst->src[0]->ne[0] + dst->src[1]->ne[0] + 16, n_threads);
}

// Blocks of BINARY_BLK elements go through a local array: a loop of a constant count between
// arrays that cannot alias is one the compiler vectorises at -O2 (a plain loop over z, x, y is
// not: z may alias x, and -O2 does not version loops for aliasing), and the result is the same,
// element by element.
#define BINARY_BLK 16

#define BINARY_LOOP(OP) \
    do { \
        int64_t i = 0; \
        for (; i + BINARY_BLK <= n; i += BINARY_BLK) { \
            float t[BINARY_BLK]; \
            for (int k = 0; k < BINARY_BLK; k++) t[k] = x[i + k] OP y[i + k]; \
            for (int k = 0; k < BINARY_BLK; k++) z[i + k] = t[k]; \
        } \
        for (; i < n; i++) z[i] = x[i] OP y[i]; \
    } while (0)

// z[i] = x[i] (op) y[i]; z may be x (the same array), no other overlap
static inline void binary_vec(enum binary_kind kind, int64_t n, float * z, const float * x, const float * y) {
    switch (kind) {
        case BIN_ADD: BINARY_LOOP(+); break;
        case BIN_SUB: BINARY_LOOP(-); break;
        case BIN_MUL: BINARY_LOOP(*); break;
        case BIN_DIV: BINARY_LOOP(/); break;
    }
}

static void binary_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst, enum binary_kind kind) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];

    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    const int64_t ne10 = src1->ne[0], ne11 = src1->ne[1], ne12 = src1->ne[2], ne13 = src1->ne[3];
    const int64_t nrep = ne0 / ne10;

    const bool fast = binary_all_f32(dst);
    const int64_t nr = ggml_nrows(dst);
    if (fast && nr < cc->nth && nrep == 1) {
        // fewer rows than threads (one token's activations): split the rows along dim 0
        int64_t e0, e1;
        rowconv_split_aligned(ne0, cc->ith, cc->nth, 16, &e0, &e1);
        for (int64_t ir = 0; ir < nr && e1 > e0; ir++) {
            int64_t i1, i2, i3;
            rowconv_unravel(ir, ne1, ne2, &i1, &i2, &i3);
            const float * x = (const float *) rowconv_row(src0, i1, i2, i3);
            const float * y = (const float *) ((const char *) src1->data + (i1 % ne11) * src1->nb[1] +
                                               (i2 % ne12) * src1->nb[2] + (i3 % ne13) * src1->nb[3]);
            float * z = (float *) rowconv_row(dst, i1, i2, i3);
            binary_vec(kind, e1 - e0, z + e0, x + e0, y + e0);
        }
        return;
    }

    int64_t ir0, ir1;
    rowconv_split(nr, cc->ith, cc->nth, &ir0, &ir1);

    float * buf0 = fast ? NULL : rowconv_slice(cc, ne0 + ne10 + 16);
    float * buf1 = fast ? NULL : buf0 + GGML_PAD(ne0, 16);

    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, ne1, ne2, &i1, &i2, &i3);
        const char * x = rowconv_row(src0, i1, i2, i3);
        const char * y = (const char *) src1->data + (i1 % ne11) * src1->nb[1] + (i2 % ne12) * src1->nb[2] +
                         (i3 % ne13) * src1->nb[3];
        char * z = rowconv_row(dst, i1, i2, i3);
        if (fast) {
            for (int64_t r = 0; r < nrep; r++) {
                binary_vec(kind, ne10, (float *) z + r * ne10, (const float *) x + r * ne10, (const float *) y);
            }
        } else {
            rowconv_load(buf0, x, src0->nb[0], src0->type, ne0);
            rowconv_load(buf1, y, src1->nb[0], src1->type, ne10);
            for (int64_t r = 0; r < nrep; r++) {
                binary_vec(kind, ne10, buf0 + r * ne10, buf0 + r * ne10, buf1);
            }
            rowconv_store(z, dst->nb[0], dst->type, buf0, ne0);
        }
    }
}

static void add_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    binary_forward(cc, dst, BIN_ADD);
}
static void sub_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    binary_forward(cc, dst, BIN_SUB);
}
static void mul_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    binary_forward(cc, dst, BIN_MUL);
}
static void div_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    binary_forward(cc, dst, BIN_DIV);
}

static bool add1_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src1 = dst->src[1];
    return src1 != NULL && ggml_nelements(src1) == 1 && binary_supports(dst);
}

const struct ggml_cpu_op ggml_cpu_op_add = {
    .forward = add_forward, .supports = binary_supports, .work_size = binary_work_size,
};
const struct ggml_cpu_op ggml_cpu_op_sub = {
    .forward = sub_forward, .supports = binary_supports, .work_size = binary_work_size,
};
const struct ggml_cpu_op ggml_cpu_op_mul = {
    .forward = mul_forward, .supports = binary_supports, .work_size = binary_work_size,
};
const struct ggml_cpu_op ggml_cpu_op_div = {
    .forward = div_forward, .supports = binary_supports, .work_size = binary_work_size,
};
const struct ggml_cpu_op ggml_cpu_op_add1 = {
    .forward = add_forward, .supports = add1_supports, .work_size = binary_work_size,
};
