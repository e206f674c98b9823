// upscale.cu - UPSCALE (i32[0] = scale factor sf) on F32, nearest neighbour in dimensions 0 and 1:
// dst[i0, i1, i2, i3] = src[i0 / sf, i1 / sf, i2, i3]. One thread per dst element.

#include "common.cuh"

__global__ void __launch_bounds__(CU_THREADS) cu_upscale_kernel(cu_t src, cu_t dst, int sf, int64_t n) {
    CU_GRID_STRIDE(t, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel(t, dst.ne, i0, i1, i2, i3);
        *(float *) cu_ptr(dst, i0, i1, i2, i3) = *(const float *) cu_ptr(src, i0 / sf, i1 / sf, i2, i3);
    }
}

bool ggml_cu_upscale_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (a == NULL || a->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32) {
        return false;
    }
    const int32_t sf = ggml_x_get_op_params_i32(dst, 0);
    return sf > 0 && dst->ne[0] <= a->ne[0] * sf && dst->ne[1] <= a->ne[1] * sf && dst->ne[2] == a->ne[2] &&
           dst->ne[3] == a->ne[3];
}

bool ggml_cu_upscale(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const int64_t n = ggml_nelements(dst);
    if (n == 0) {
        return true;
    }
    CU_LAUNCH(cu_upscale_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)(cu_make(dst->src[0]), cu_make(dst),
                                                                   ggml_x_get_op_params_i32(dst, 0), n);
    return CU_LAUNCH_OK();
}
