// softmax.cu - SOFT_MAX: dst row = softmax(src row * scale + mask row), f32[0] = scale, src1 =
// optional F32 mask whose row (flat row index mod mask->ne[1]) is added. As on the CPU, the
// exponentials are taken on fp16-rounded inputs and rounded to fp16, -inf entries give 0 and the
// sum is accumulated in double. One block per row; the scaled row is kept in dynamic shared
// memory when it fits, else staged in dst itself.

#include "common.cuh"

#define CU_SOFTMAX_THREADS 256
#define CU_SOFTMAX_SHARED_MAX (32 * 1024) // bytes of dynamic shared memory per block

__device__ __forceinline__ float cu_softmax_exp(float x) {
    const float xh = __half2float(__float2half_rn(x));
    return __half2float(__float2half_rn(expf(xh)));
}

__global__ void __launch_bounds__(CU_SOFTMAX_THREADS)
cu_softmax_kernel(cu_t src, cu_t mask, bool has_mask, cu_t dst, float scale, bool use_shared,
                                  int64_t nrows) {
    CU_DYNAMIC_SHARED(float, row);
    __shared__ float redf[32];
    __shared__ double redd[32];
    const int64_t ne0 = src.ne[0];
    for (int64_t ir = blockIdx.x; ir < nrows; ir += gridDim.x) {
        const char * x = cu_row(src, ir);
        char * y = cu_row(dst, ir);
        const char * mp = has_mask ? mask.data + (ir % mask.ne[1]) * mask.nb[1] : NULL;

        float vmax = -INFINITY;
        for (int64_t i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            float v = *(const float *) (x + i0 * src.nb[0]) * scale;
            if (has_mask) {
                v += *(const float *) (mp + i0 * mask.nb[0]);
            }
            if (use_shared) {
                row[i0] = v;
            }
            vmax = fmaxf(vmax, v);
        }
        vmax = cu_block_max(vmax, redf);

        double sum = 0.0;
        for (int64_t i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            float v;
            if (use_shared) {
                v = row[i0];
            } else {
                v = *(const float *) (x + i0 * src.nb[0]) * scale;
                if (has_mask) {
                    v += *(const float *) (mp + i0 * mask.nb[0]);
                }
            }
            float e = 0.0f;
            if (v != -INFINITY) {
                e = cu_softmax_exp(v - vmax);
                sum += (double) e;
            }
            if (use_shared) {
                row[i0] = e;
            } else {
                // dst holds the exponentials until the last pass; when dst aliases src the
                // element was read just above by this same thread
                *(float *) (y + i0 * dst.nb[0]) = e;
            }
        }
        sum = cu_block_sum_d(sum, redd);
        const float inv = (float) (1.0 / sum);
        for (int64_t i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            float * yp = (float *) (y + i0 * dst.nb[0]);
            // each thread rescales the elements it wrote itself in the previous pass
            *yp = (use_shared ? row[i0] : *yp) * inv;
        }
        __syncthreads();
    }
}

bool ggml_cu_softmax_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * mask = dst->src[1];
    if (a == NULL || a->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32 || !cu_same_shape(a, dst)) {
        return false;
    }
    if (mask != NULL && (mask->type != GGML_TYPE_F32 || mask->ne[0] < a->ne[0] || mask->ne[1] < 1)) {
        return false;
    }
    return true;
}

bool ggml_cu_softmax(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * mask = dst->src[1];
    const float scale = ggml_x_soft_max_scale_get(dst);
    const int64_t nrows = ggml_nrows(a);
    if (ggml_nelements(dst) == 0) {
        return true;
    }
    const size_t shmem = (size_t) a->ne[0] * sizeof(float);
    const bool use_shared = shmem <= CU_SOFTMAX_SHARED_MAX;
    cu_t m = mask != NULL ? cu_make(mask) : cu_make(a);
    CU_LAUNCH(cu_softmax_kernel, cu_row_blocks(nrows), CU_SOFTMAX_THREADS, use_shared ? shmem : 0, ctx.stream)(
        cu_make(a), m, mask != NULL, cu_make(dst), scale, use_shared, nrows);
    return CU_LAUNCH_OK();
}
