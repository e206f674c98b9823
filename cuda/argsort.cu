// argsort.cu - ARGSORT (i32[0] = enum ggml_sort_order) of F32 rows into I32 indices. Stable, like
// the CPU merge sort: equal values keep their index order. Each output position is found by
// ranking: the rank of element i is the number of elements that come before it in the order
// (value order, then index), which is a permutation for any input (NaN sorts after everything in
// both orders). One thread per element, O(ne0) work each: straightforward and exact.

#include "common.cuh"

__device__ __forceinline__ bool cu_sort_before(float vj, int64_t j, float vi, int64_t i, bool desc) {
    const bool nj = isnan(vj), ni = isnan(vi);
    if (nj || ni) {
        if (nj && ni) {
            return j < i;
        }
        return ni; // a number comes before NaN
    }
    if (vj != vi) {
        return desc ? vj > vi : vj < vi;
    }
    return j < i;
}

__global__ void __launch_bounds__(CU_THREADS) cu_argsort_kernel(cu_t src, cu_t dst, bool desc, int64_t n) {
    const int64_t ne0 = src.ne[0];
    CU_GRID_STRIDE(t, n) {
        const int64_t i  = t % ne0;
        const int64_t ir = t / ne0;
        const char * x = cu_row(src, ir);
        const float vi = *(const float *) (x + i * src.nb[0]);
        int64_t rank = 0;
        for (int64_t j = 0; j < ne0; j++) {
            const float vj = *(const float *) (x + j * src.nb[0]);
            rank += cu_sort_before(vj, j, vi, i, desc) ? 1 : 0;
        }
        *(int32_t *) (cu_row(dst, ir) + rank * dst.nb[0]) = (int32_t) i;
    }
}

bool ggml_cu_argsort_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const int32_t order = ggml_x_get_op_params_i32(dst, 0);
    return a != NULL && a->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_I32 && cu_same_shape(a, dst) &&
           (order == GGML_SORT_ASC || order == GGML_SORT_DESC) && a->ne[0] <= INT32_MAX;
}

bool ggml_cu_argsort(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const int64_t n = ggml_nelements(dst);
    if (n == 0) {
        return true;
    }
    const bool desc = ggml_x_get_op_params_i32(dst, 0) == GGML_SORT_DESC;
    CU_LAUNCH(cu_argsort_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)(cu_make(dst->src[0]), cu_make(dst), desc, n);
    return CU_LAUNCH_OK();
}
