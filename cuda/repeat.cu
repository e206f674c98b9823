// repeat.cu - REPEAT: dst[i0, i1, i2, i3] = src[i0 % ne00, i1 % ne01, i2 % ne02, i3 % ne03] for
// any plain type of 1, 2 or 4 bytes (dst of the same type), any strides.

#include "common.cuh"

// I: the index type (uint32_t when n <= INT32_MAX, cu_small_index)
template <typename I>
__global__ void __launch_bounds__(CU_THREADS) cu_repeat_kernel(cu_t src, cu_t dst, int es, int64_t n) {
    CU_GRID_STRIDE(t, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel_t<I>(t, dst.ne, i0, i1, i2, i3);
        const char * s = cu_ptr(src, cu_mod_t<I>(i0, src.ne[0]), cu_mod_t<I>(i1, src.ne[1]), cu_mod_t<I>(i2, src.ne[2]),
                                cu_mod_t<I>(i3, src.ne[3]));
        char * d = cu_ptr(dst, i0, i1, i2, i3);
        switch (es) {
            case 4: *(uint32_t *) d = *(const uint32_t *) s; break;
            case 2: *(uint16_t *) d = *(const uint16_t *) s; break;
            default: *(uint8_t *) d = *(const uint8_t *) s; break;
        }
    }
}

bool ggml_cu_repeat_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (a == NULL || a->type != dst->type || ggml_blck_size(dst->type) != 1) {
        return false;
    }
    const size_t es = ggml_type_size(dst->type);
    if (es != 1 && es != 2 && es != 4) {
        return false;
    }
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (a->ne[d] <= 0 || dst->ne[d] % a->ne[d] != 0) {
            return false;
        }
    }
    return true;
}

bool ggml_cu_repeat(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const int64_t n = ggml_nelements(dst);
    if (n == 0) {
        return true;
    }
    const cu_t s = cu_make(dst->src[0]), d = cu_make(dst);
    const int es = (int) ggml_type_size(dst->type);
    if (cu_small_index(n)) {
        CU_LAUNCH(cu_repeat_kernel<uint32_t>, cu_blocks(n), CU_THREADS, 0, ctx.stream)(s, d, es, n);
    } else {
        CU_LAUNCH(cu_repeat_kernel<int64_t>, cu_blocks(n), CU_THREADS, 0, ctx.stream)(s, d, es, n);
    }
    return CU_LAUNCH_OK();
}
