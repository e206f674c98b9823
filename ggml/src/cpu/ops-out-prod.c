// ops-out-prod.c - OUT_PROD: dst[i0, i1, i2, i3] = sum_k a[i0, k, i2', i3'] * b[i1, k, i2, i3]
// with i2' = i2 / (ne2/ne02), i3' = i3 / (ne3/ne03) (a broadcasts over the batch dims).
//
// a may be F32 (any strides), or F16 / a quantized type with contiguous rows (converted row by
// row with the type's to_float); b is F32 with any strides; dst is F32.
// Each thread owns a contiguous range of dst rows (i1, i2, i3). It handles them in blocks of
// OUT_PROD_BLK rows of the same batch: for every k the row a[:, k] is loaded (converted) once
// and accumulated into all rows of the block, in increasing k as the reference does.

#include "../ggml-impl.h"
#include "ops.h"
#include "traits.h"

#define OUT_PROD_BLK 16

static bool out_prod_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    if (a == NULL || b == NULL || dst->type != GGML_TYPE_F32 || b->type != GGML_TYPE_F32) {
        return false;
    }
    if (dst->nb[0] != sizeof(float) || !ggml_x_type_valid(a->type)) {
        return false;
    }
    if (a->type != GGML_TYPE_F32) {
        const ggml_type_traits_t * ta = ggml_x_cpu_type_traits(a->type);
        if (ta->to_float == NULL || a->nb[0] != ta->type_size || a->ne[0] % ta->blck_size != 0) {
            return false;
        }
    }
    if (a->ne[0] != dst->ne[0] || b->ne[0] != dst->ne[1] || a->ne[1] != b->ne[1] ||
        b->ne[2] != dst->ne[2] || b->ne[3] != dst->ne[3]) {
        return false;
    }
    if (a->ne[2] == 0 || a->ne[3] == 0 || dst->ne[2] % a->ne[2] != 0 || dst->ne[3] % a->ne[3] != 0) {
        return false;
    }
    return true;
}

static size_t out_prod_work_size(const struct ggml_tensor * dst, int n_threads) {
    return 64 + (size_t) n_threads * (size_t) ((dst->ne[0] + 16) * sizeof(float));
}

static void out_prod_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];

    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2], ne3 = dst->ne[3];
    const int64_t nk = a->ne[1];
    const int64_t r2 = ne2 / a->ne[2];
    const int64_t r3 = ne3 / a->ne[3];
    const int64_t nr = ne1 * ne2 * ne3;

    const bool a_direct = a->type == GGML_TYPE_F32 && a->nb[0] == sizeof(float);
    const ggml_to_float_t to_float = a->type == GGML_TYPE_F32 ? NULL : ggml_x_cpu_type_traits(a->type)->to_float;

    float * arow_buf = (float *) (((uintptr_t) cc->wdata + 63) & ~(uintptr_t) 63);
    arow_buf += (size_t) cc->ith * (size_t) (ne0 + 16);

    const int64_t dr  = (nr + cc->nth - 1) / cc->nth;
    const int64_t ir0 = GGML_X_MIN(dr * cc->ith, nr);
    const int64_t ir1 = GGML_X_MIN(ir0 + dr, nr);

    for (int64_t ib = ir0; ib < ir1; ) {
        const int64_t i1s = ib % ne1;
        const int64_t i2  = (ib / ne1) % ne2;
        const int64_t i3  = ib / (ne1 * ne2);
        const int64_t n   = GGML_X_MIN(GGML_X_MIN(ne1 - i1s, ir1 - ib), (int64_t) OUT_PROD_BLK);

        float * d[OUT_PROD_BLK];
        for (int64_t j = 0; j < n; j++) {
            d[j] = (float *) ((char *) dst->data + (i1s + j)*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3]);
            memset(d[j], 0, (size_t) ne0 * sizeof(float));
        }

        const char * abase = (const char *) a->data + (i2 / r2)*a->nb[2] + (i3 / r3)*a->nb[3];
        const char * bbase = (const char *) b->data + i1s*b->nb[0] + i2*b->nb[2] + i3*b->nb[3];
        for (int64_t k = 0; k < nk; k++) {
            const char * ap = abase + k*a->nb[1];
            const float * arow;
            if (a_direct) {
                arow = (const float *) ap;
            } else if (to_float != NULL) {
                to_float(ap, arow_buf, (int) ne0);
                arow = arow_buf;
            } else {
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    arow_buf[i0] = *(const float *) (ap + i0*a->nb[0]);
                }
                arow = arow_buf;
            }
            const char * bp = bbase + k*b->nb[1];
            for (int64_t j = 0; j < n; j++) {
                const float bv = *(const float *) (bp + j*b->nb[0]);
                float * y = d[j];
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    y[i0] += arow[i0] * bv;
                }
            }
        }
        ib += n;
    }
}

const struct ggml_cpu_op ggml_cpu_op_out_prod = {
    .forward   = out_prod_forward,
    .supports  = out_prod_supports,
    .work_size = out_prod_work_size,
};
