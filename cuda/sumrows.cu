// sumrows.cu - SUM_ROWS and MEAN (dst row = sum / mean of the src row) and SUM (one value), on
// F32/F16 inputs and outputs, accumulating in double as the CPU does. One block per row; SUM
// runs one block over all rows in flat order.

#include "common.cuh"

#define CU_SUM_THREADS 256

__global__ void cu_sumrows_kernel(cu_t src, cu_t dst, bool mean, int64_t nrows) {
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

__global__ void cu_sum_kernel(cu_t src, char * dst, int dtype, int64_t n) {
    __shared__ double red[32];
    double s = 0.0;
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
        int64_t i0, i1, i2, i3;
        cu_unravel(k, src.ne, i0, i1, i2, i3);
        s += (double) cu_load(cu_ptr(src, i0, i1, i2, i3), src.type);
    }
    s = cu_block_sum_d(s, red);
    if (threadIdx.x == 0) {
        cu_store(dst, dtype, (float) s);
    }
}

bool ggml_cu_sumrows_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (a == NULL || !cu_is_float(a->type) || !cu_is_float(dst->type)) {
        return false;
    }
    if (dst->op == GGML_OP_SUM) {
        return ggml_nelements(dst) >= 1;
    }
    return dst->ne[0] >= 1 && dst->ne[1] == a->ne[1] && dst->ne[2] == a->ne[2] && dst->ne[3] == a->ne[3];
}

bool ggml_cu_sumrows(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (dst->op == GGML_OP_SUM) {
        CU_LAUNCH(cu_sum_kernel, 1, 1024, 0, ctx.stream)(cu_make(a), (char *) dst->data, (int) dst->type, ggml_nelements(a));
        return CU_LAUNCH_OK();
    }
    const int64_t nrows = ggml_nrows(a);
    if (nrows == 0) {
        return true;
    }
    CU_LAUNCH(cu_sumrows_kernel, cu_row_blocks(nrows), CU_SUM_THREADS, 0, ctx.stream)(cu_make(a), cu_make(dst),
                                                                              dst->op == GGML_OP_MEAN, nrows);
    return CU_LAUNCH_OK();
}
