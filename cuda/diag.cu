// diag.cu - DIAG_MASK_INF / DIAG_MASK_ZERO (i32[0] = n_past) on F32: in row i1 the elements
// i0 >= n_past + i1 + 1 become -inf (or 0), the others are copied. Any strides; dst may alias src.

#include "common.cuh"

__global__ void __launch_bounds__(CU_THREADS)
cu_diagmask_kernel(cu_t src, cu_t dst, int64_t n_past, float value, int64_t n) {
    CU_GRID_STRIDE(idx, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel(idx, dst.ne, i0, i1, i2, i3);
        const float x = *(const float *) cu_ptr(src, i0, i1, i2, i3);
        *(float *) cu_ptr(dst, i0, i1, i2, i3) = i0 >= n_past + i1 + 1 ? value : x;
    }
}

bool ggml_cu_diag_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    return a != NULL && a->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && cu_same_shape(a, dst);
}

bool ggml_cu_diag(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const int64_t n = ggml_nelements(dst);
    if (n == 0) {
        return true;
    }
    const float value = dst->op == GGML_OP_DIAG_MASK_INF ? -INFINITY : 0.0f;
    CU_LAUNCH(cu_diagmask_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)(cu_make(dst->src[0]), cu_make(dst),
                                                                    (int64_t) ggml_x_get_op_params_i32(dst, 0), value, n);
    return CU_LAUNCH_OK();
}
