// ops-out-prod.c - OUT_PROD: dst[i0, i1, i2, i3] = sum_k a[i0, k, i2', i3'] * b[i1, k, i2, i3]
// with i2' = i2 / (ne2/ne02), i3' = i3 / (ne3/ne03) (a broadcasts over the batch dims).
//
// a may be F32 (any strides), or F16 / a quantized type with contiguous rows (converted row by
// row with the type's to_float); b is F32 with any strides; dst is F32.
//
// Two strategies:
//   * the float GEMM of MUL_MAT (gemm.h), when a is F32 or F16 with adjacent elements along
//     i0 and k > 0: OUT_PROD is the product D = A·Bᵀ with A = a read as "W given transposed"
//     (ggml_x_gemm_f_compute_at) and the columns of b packed as X panels
//     (ggml_x_gemm_f_pack_x_strided), so the backward pass of every mat-mul runs on the same
//     packed, register-blocked, threaded kernels as the forward pass. Phase 1 packs b (units:
//     batch x panel), all threads meet at the barrier, phase 2 splits the rows i0 of every
//     batch between the threads. Each element is one multiply-add chain over k in increasing
//     order, as in the reference.
//   * otherwise (other types of a, strided a rows, k = 0) the row kernel below: each thread owns
//     a contiguous range of dst rows (i1, i2, i3), handled in blocks of OUT_PROD_BLK rows of the
//     same batch: for every k the row a[:, k] is loaded (converted) once and accumulated into
//     all rows of the block, in increasing k.

#include "../ggml-impl.h"
#include "cpu/gemm.h"
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

// ---------------------------------------------------------------------------------------------
// the GEMM strategy

#define OP_ALIGN 64

static size_t op_align(size_t n) {
    return (n + OP_ALIGN - 1) & ~(size_t) (OP_ALIGN - 1);
}

struct out_prod_gemm_plan {
    int64_t m, n, k, nbatch;
    size_t xpack;  // bytes of one batch's X pack
    size_t thread; // scratch bytes per thread
};

static bool out_prod_gemm_plan(const struct ggml_tensor * dst, struct out_prod_gemm_plan * g) {
    const struct ggml_tensor * a = dst->src[0];
    if ((a->type != GGML_TYPE_F32 && a->type != GGML_TYPE_F16) || a->nb[0] != ggml_type_size(a->type) ||
        a->ne[1] == 0 || ggml_x_gemm_testing_mode() == 1 || !ggml_x_gemm_f_supported(a->type)) {
        return false;
    }
    g->m      = dst->ne[0];
    g->n      = dst->ne[1];
    g->k      = a->ne[1];
    g->nbatch = dst->ne[2] * dst->ne[3];
    g->xpack  = op_align(ggml_x_gemm_f_xpack_size(g->n, g->k));
    g->thread = op_align(ggml_x_gemm_f_thread_size(g->k));
    return true;
}

static void out_prod_split(int64_t n, int ith, int nth, int64_t * r0, int64_t * r1) {
    const int64_t per = (n + nth - 1) / nth;
    *r0 = GGML_X_MIN(per * ith, n);
    *r1 = GGML_X_MIN(*r0 + per, n);
}

static void out_prod_gemm(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst, const struct out_prod_gemm_plan * g) {
    const struct ggml_tensor * a = dst->src[0];
    const struct ggml_tensor * b = dst->src[1];
    const struct ggml_x_gemm_kernels * kr = ggml_x_gemm_kernels_active();
    char * xbase = (char *) (((uintptr_t) cc->wdata + OP_ALIGN - 1) & ~(uintptr_t) (OP_ALIGN - 1));
    char * scratch = xbase + (size_t) g->nbatch * g->xpack + (size_t) cc->ith * g->thread;
    const int64_t ne2 = dst->ne[2];

    // phase 1: the X panels of every batch (b's columns i1, k-major)
    const int64_t np = (g->n + kr->nr - 1) / kr->nr;
    int64_t u0, u1;
    out_prod_split(g->nbatch * np, cc->ith, cc->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t bi = u / np, p = u % np;
        const int64_t i2 = bi % ne2, i3 = bi / ne2;
        const char * bb = (const char *) b->data + i2*b->nb[2] + i3*b->nb[3];
        const int64_t j0 = p * kr->nr;
        ggml_x_gemm_f_pack_x_strided(bb, b->nb[0], b->nb[1], j0, GGML_X_MIN((int64_t) kr->nr, g->n - j0), g->k,
                                     (float *) (xbase + (size_t) bi * g->xpack));
    }
    ggml_cpu_barrier(cc);

    // phase 2: rows i0 of every batch, in chunks of whole micro-panels
    const int64_t per = (g->m + cc->nth - 1) / cc->nth;
    const int64_t rchunk = GGML_X_MAX((int64_t) kr->mr, (per + kr->mr - 1) / kr->mr * kr->mr);
    const int64_t nrc = (g->m + rchunk - 1) / rchunk;
    const int64_t r2 = ne2 / a->ne[2], r3 = dst->ne[3] / a->ne[3];
    const int64_t ldd = (int64_t) (dst->nb[1] / sizeof(float));
    out_prod_split(g->nbatch * nrc, cc->ith, cc->nth, &u0, &u1);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t bi = u / nrc;
        const int64_t i0 = (u % nrc) * rchunk, i1 = GGML_X_MIN(g->m, i0 + rchunk);
        const int64_t i2 = bi % ne2, i3 = bi / ne2;
        const char * w = (const char *) a->data + (i2 / r2)*a->nb[2] + (i3 / r3)*a->nb[3];
        float * d = (float *) ((char *) dst->data + i2*dst->nb[2] + i3*dst->nb[3]);
        ggml_x_gemm_f_compute_at(a->type, w, a->nb[1], i0, i1, g->n, g->k,
                                 (const float *) (xbase + (size_t) bi * g->xpack), d, ldd, scratch);
    }
}

// ---------------------------------------------------------------------------------------------
// the row strategy

static size_t out_prod_work_size(const struct ggml_tensor * dst, int n_threads) {
    struct out_prod_gemm_plan g;
    if (out_prod_gemm_plan(dst, &g)) {
        return OP_ALIGN + (size_t) g.nbatch * g.xpack + (size_t) n_threads * g.thread;
    }
    return 64 + (size_t) n_threads * (size_t) ((dst->ne[0] + 16) * sizeof(float));
}

static void out_prod_rows(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
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

static void out_prod_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    struct out_prod_gemm_plan g;
    if (out_prod_gemm_plan(dst, &g)) {
        out_prod_gemm(cc, dst, &g);
    } else {
        out_prod_rows(cc, dst);
    }
}

const struct ggml_cpu_op ggml_cpu_op_out_prod = {
    .forward   = out_prod_forward,
    .supports  = out_prod_supports,
    .work_size = out_prod_work_size,
};
