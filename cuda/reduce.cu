// reduce.cu - SUM_ROWS and MEAN (dst row = sum / mean of the src row) and SUM (one value), on
// F32/F16 inputs and outputs, accumulating in double as the CPU does. One block per row; SUM
// runs in two passes: up to CU_SUM_PARTS blocks each sum a grid-stride share of the elements into
// a double partial, then one block adds the partials in a fixed order (deterministic).

#include "common.cuh"

#define CU_SUM_THREADS 256

__global__ void __launch_bounds__(CU_SUM_THREADS) cu_sumrows_kernel(cu_t src, cu_t dst, bool mean, int64_t nrows) {
    __shared__ double red[32];
    const int64_t ne0 = src.ne[0];
    for (int64_t ir = blockIdx.x; ir < nrows; ir += gridDim.x) {
        const char * x = cu_row(src, ir);
        double s = 0.0;
        for (int64_t i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            s += (double) cu_load(x + i0 * src.nb[0], src.type);
        }
        s = cu_block_sum_d(s, red);
        if (threadIdx.x == 0) {
            float v = (float) s;
            if (mean) {
                v /= (float) ne0;
            }
            cu_store(cu_row(dst, ir), dst.type, v);
        }
    }
}

#define CU_SUM_PARTS 1024 // at most this many partial sums (blocks of the first pass)

__global__ void __launch_bounds__(CU_SUM_THREADS) cu_sum_partial_kernel(cu_t src, double * part, int64_t n) {
    __shared__ double red[32];
    double s = 0.0;
    CU_GRID_STRIDE(k, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel(k, src.ne, i0, i1, i2, i3);
        s += (double) cu_load(cu_ptr(src, i0, i1, i2, i3), src.type);
    }
    s = cu_block_sum_d(s, red);
    if (threadIdx.x == 0) {
        part[blockIdx.x] = s;
    }
}

__global__ void __launch_bounds__(CU_SUM_THREADS) cu_sum_final_kernel(const double * part, int nparts, char * dst,
                                                                       int dtype) {
    __shared__ double red[32];
    double s = 0.0;
    for (int i = threadIdx.x; i < nparts; i += blockDim.x) {
        s += part[i];
    }
    s = cu_block_sum_d(s, red);
    if (threadIdx.x == 0) {
        cu_store(dst, dtype, (float) s);
    }
}

static bool cu_sum(ggml_cu_ctx & ctx, const ggml_tensor * a, ggml_tensor * dst) {
    const int64_t n = ggml_nelements(a);
    unsigned parts = cu_blocks(n, CU_SUM_THREADS);
    if (parts > CU_SUM_PARTS) {
        parts = CU_SUM_PARTS;
    }
    double * part = (double *) ggml_cu_scratch(ctx, 0, (size_t) parts * sizeof(double));
    if (part == NULL) {
        return false;
    }
    CU_LAUNCH(cu_sum_partial_kernel, parts, CU_SUM_THREADS, 0, ctx.stream)(cu_make(a), part, n);
    if (!CU_LAUNCH_OK()) {
        return false;
    }
    CU_LAUNCH(cu_sum_final_kernel, 1, CU_SUM_THREADS, 0, ctx.stream)(part, (int) parts, (char *) dst->data,
                                                                     (int) dst->type);
    return CU_LAUNCH_OK();
}

bool ggml_cu_reduce_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (a == NULL || !cu_is_float(a->type) || !cu_is_float(dst->type)) {
        return false;
    }
    if (dst->op == GGML_OP_SUM) {
        return ggml_nelements(dst) >= 1;
    }
    return dst->ne[0] >= 1 && dst->ne[1] == a->ne[1] && dst->ne[2] == a->ne[2] && dst->ne[3] == a->ne[3];
}

bool ggml_cu_reduce(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (dst->op == GGML_OP_SUM) {
        return cu_sum(ctx, a, dst);
    }
    const int64_t nrows = ggml_nrows(a);
    if (nrows == 0) {
        return true;
    }
    CU_LAUNCH(cu_sumrows_kernel, cu_row_blocks(nrows), CU_SUM_THREADS, 0, ctx.stream)(cu_make(a), cu_make(dst),
                                                                              dst->op == GGML_OP_MEAN, nrows);
    return CU_LAUNCH_OK();
}
