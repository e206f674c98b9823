// norm.cu - NORM, RMS_NORM (f32[0] = eps) and GROUP_NORM (i32[0] = n_groups, eps 1e-6) on F32,
// one thread block per row (per group for GROUP_NORM). Sums are accumulated in double, as on the
// CPU. dst may alias src: every element is read for the statistics before any is written.

#include "common.cuh"

#define CU_NORM_THREADS 256

__global__ void __launch_bounds__(CU_NORM_THREADS)
cu_norm_kernel(cu_t src, cu_t dst, float eps, bool rms, int64_t nrows) {
    __shared__ double red[32];
    const int64_t ne0 = src.ne[0];
    for (int64_t ir = blockIdx.x; ir < nrows; ir += gridDim.x) {
        const char * x = cu_row(src, ir);
        char * y = cu_row(dst, ir);
        float scale;
        float mean = 0.0f;
        if (rms) {
            double s2 = 0.0;
            for (int64_t i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
                const float v = *(const float *) (x + i0 * src.nb[0]);
                s2 += (double) (v * v);
            }
            s2 = cu_block_sum_d(s2, red);
            const float ms = (float) (s2 / (double) ne0);
            scale = 1.0f / sqrtf(ms + eps);
        } else {
            double s = 0.0;
            for (int64_t i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
                s += (double) *(const float *) (x + i0 * src.nb[0]);
            }
            s = cu_block_sum_d(s, red);
            mean = (float) (s / (double) ne0);
            double s2 = 0.0;
            for (int64_t i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
                const float v = *(const float *) (x + i0 * src.nb[0]) - mean;
                s2 += (double) (v * v);
            }
            s2 = cu_block_sum_d(s2, red);
            const float variance = (float) (s2 / (double) ne0);
            scale = 1.0f / sqrtf(variance + eps);
        }
        __syncthreads(); // all reads of the row are done before any write (dst may alias src)
        for (int64_t i0 = threadIdx.x; i0 < ne0; i0 += blockDim.x) {
            const float v = *(const float *) (x + i0 * src.nb[0]);
            *(float *) (y + i0 * dst.nb[0]) = rms ? v * scale : (v - mean) * scale;
        }
        __syncthreads();
    }
}

// one block per (group, i3): channels [c0, c1) of batch i3
__global__ void __launch_bounds__(CU_NORM_THREADS)
cu_group_norm_kernel(cu_t src, cu_t dst, int n_groups, int64_t per_group, float eps, int64_t nitems) {
    __shared__ double red[32];
    const int64_t ne0 = src.ne[0], ne1 = src.ne[1], ne2 = src.ne[2];
    for (int64_t it = blockIdx.x; it < nitems; it += gridDim.x) {
        const int64_t g  = it % n_groups;
        const int64_t i3 = it / n_groups;
        const int64_t c0 = g * per_group;
        const int64_t c1 = min(c0 + per_group, ne2);
        if (c0 >= c1) {
            continue; // uniform across the block
        }
        const int64_t n = ne0 * ne1 * (c1 - c0);
        double s = 0.0;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            const int64_t i0 = j % ne0, i1 = (j / ne0) % ne1, i2 = c0 + j / (ne0 * ne1);
            s += (double) *(const float *) cu_ptr(src, i0, i1, i2, i3);
        }
        s = cu_block_sum_d(s, red);
        const float mean = (float) (s / (double) n);
        double s2 = 0.0;
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            const int64_t i0 = j % ne0, i1 = (j / ne0) % ne1, i2 = c0 + j / (ne0 * ne1);
            const float v = *(const float *) cu_ptr(src, i0, i1, i2, i3) - mean;
            s2 += (double) (v * v);
        }
        s2 = cu_block_sum_d(s2, red);
        const float variance = (float) (s2 / (double) n);
        const float scale = 1.0f / sqrtf(variance + eps);
        __syncthreads();
        for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
            const int64_t i0 = j % ne0, i1 = (j / ne0) % ne1, i2 = c0 + j / (ne0 * ne1);
            const float v = *(const float *) cu_ptr(src, i0, i1, i2, i3) - mean;
            *(float *) cu_ptr(dst, i0, i1, i2, i3) = v * scale;
        }
        __syncthreads();
    }
}

bool ggml_cu_norm_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (a == NULL || a->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32 || !cu_same_shape(a, dst)) {
        return false;
    }
    if (dst->op == GGML_OP_GROUP_NORM) {
        return ggml_x_get_op_params_i32(dst, 0) > 0;
    }
    return true;
}

bool ggml_cu_norm(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (ggml_nelements(dst) == 0) {
        return true;
    }
    if (dst->op == GGML_OP_GROUP_NORM) {
        const int n_groups = ggml_x_get_op_params_i32(dst, 0);
        const int64_t per_group = (a->ne[2] + n_groups - 1) / n_groups;
        const int64_t nitems = (int64_t) n_groups * a->ne[3];
        CU_LAUNCH(cu_group_norm_kernel, cu_row_blocks(nitems), CU_NORM_THREADS, 0, ctx.stream)(
            cu_make(a), cu_make(dst), n_groups, per_group, 1e-6f, nitems);
        return CU_LAUNCH_OK();
    }
    const float eps = ggml_x_get_op_params_f32(dst, 0);
    const int64_t nrows = ggml_nrows(a);
    CU_LAUNCH(cu_norm_kernel, cu_row_blocks(nrows), CU_NORM_THREADS, 0, ctx.stream)(cu_make(a), cu_make(dst), eps,
                                                                            dst->op == GGML_OP_RMS_NORM, nrows);
    return CU_LAUNCH_OK();
}
