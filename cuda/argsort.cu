// argsort.cu - ARGSORT (i32[0] = enum ggml_sort_order) of F32 rows into I32 indices. Stable, like
// the CPU merge sort: equal values keep their index order. The order compares (value, index), so
// it is total and the result is the stable one whatever the algorithm (NaN sorts after everything
// in both orders).
//
//   * rows of at most CU_BITONIC_MAX elements: one block per row sorts (value, index) pairs in
//     shared memory with a bitonic network padded to a power of two (padding sorts last);
//     O(P log^2 P) work per row, P the padded length.
//   * longer rows: ranking, one thread per element counts the elements that come before it
//     (O(ne0) work each).

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

#define CU_BITONIC_MAX     4096 // (float, int) pairs: 32 KiB of dynamic shared memory
#define CU_BITONIC_THREADS 256

// does element (va, ia) come before (vb, ib)? indices >= ne0 are padding, after every element
__device__ __forceinline__ bool cu_key_before(float va, int ia, float vb, int ib, int ne0, bool desc) {
    if (ia >= ne0 || ib >= ne0) {
        return ia < ib;
    }
    return cu_sort_before(va, ia, vb, ib, desc);
}

__global__ void __launch_bounds__(CU_BITONIC_THREADS)
cu_argsort_bitonic_kernel(cu_t src, cu_t dst, bool desc, int p2, int64_t nrows) {
    CU_DYNAMIC_SHARED(float, kv);
    int * ki = (int *) (kv + p2);
    const int ne0 = (int) src.ne[0];
    for (int64_t ir = blockIdx.x; ir < nrows; ir += gridDim.x) {
        const char * x = cu_row(src, ir);
        for (int i = threadIdx.x; i < p2; i += blockDim.x) {
            kv[i] = i < ne0 ? *(const float *) (x + (int64_t) i * src.nb[0]) : 0.0f;
            ki[i] = i;
        }
        __syncthreads();
        for (int k = 2; k <= p2; k <<= 1) {
            for (int j = k >> 1; j > 0; j >>= 1) {
                for (int i = threadIdx.x; i < p2; i += blockDim.x) {
                    const int l = i ^ j;
                    if (l <= i) {
                        continue;
                    }
                    // (i & k) == 0: this run sorts in the order, else against it
                    const bool up = (i & k) == 0;
                    if (cu_key_before(kv[l], ki[l], kv[i], ki[i], ne0, desc) == up) {
                        const float tv = kv[i];
                        kv[i] = kv[l];
                        kv[l] = tv;
                        const int ti = ki[i];
                        ki[i] = ki[l];
                        ki[l] = ti;
                    }
                }
                __syncthreads();
            }
        }
        char * y = cu_row(dst, ir);
        for (int i = threadIdx.x; i < ne0; i += blockDim.x) {
            *(int32_t *) (y + (int64_t) i * dst.nb[0]) = (int32_t) ki[i];
        }
        __syncthreads(); // the next row overwrites kv / ki
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
    const ggml_tensor * a = dst->src[0];
    if (a->ne[0] <= CU_BITONIC_MAX) {
        int p2 = 1;
        while (p2 < a->ne[0]) {
            p2 <<= 1;
        }
        const int64_t nrows = ggml_nrows(a);
        const size_t shmem = (size_t) p2 * (sizeof(float) + sizeof(int));
        CU_LAUNCH(cu_argsort_bitonic_kernel, cu_row_blocks(nrows), CU_BITONIC_THREADS, shmem, ctx.stream)(
            cu_make(a), cu_make(dst), desc, p2, nrows);
        return CU_LAUNCH_OK();
    }
    CU_LAUNCH(cu_argsort_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)(cu_make(dst->src[0]), cu_make(dst), desc, n);
    return CU_LAUNCH_OK();
}
