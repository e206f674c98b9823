// pad.cu - PAD on F32: dst has src's elements at the same coordinates and zeros where any
// coordinate is past src's extent. One thread per dst element.

#include "common.cuh"

__global__ void __launch_bounds__(CU_THREADS) cu_pad_kernel(cu_t src, cu_t dst, int64_t n) {
    CU_GRID_STRIDE(t, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel(t, dst.ne, i0, i1, i2, i3);
        float v = 0.0f;
        if (i0 < src.ne[0] && i1 < src.ne[1] && i2 < src.ne[2] && i3 < src.ne[3]) {
            v = *(const float *) cu_ptr(src, i0, i1, i2, i3);
        }
        *(float *) cu_ptr(dst, i0, i1, i2, i3) = v;
    }
}

bool ggml_cu_pad_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (a == NULL || a->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (dst->ne[i] < a->ne[i]) {
            return false;
        }
    }
    return true;
}

bool ggml_cu_pad(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const int64_t n = ggml_nelements(dst);
    if (n == 0) {
        return true;
    }
    CU_LAUNCH(cu_pad_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)(cu_make(dst->src[0]), cu_make(dst), n);
    return CU_LAUNCH_OK();
}
