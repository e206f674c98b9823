// concat.cu - CONCAT along dimension 2: dst[.., i2, ..] = src0 for i2 < src0->ne[2], else src1 at
// i2 - src0->ne[2]. Any plain type of 1, 2 or 4 bytes (the same for all three), any strides.

#include "common.cuh"

// I: the index type (uint32_t when n <= INT32_MAX, cu_small_index)
template <typename I>
__global__ void __launch_bounds__(CU_THREADS) cu_concat_kernel(cu_t a, cu_t b, cu_t dst, int es, int64_t n) {
    CU_GRID_STRIDE(t, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel_t<I>(t, dst.ne, i0, i1, i2, i3);
        const char * s = i2 < a.ne[2] ? cu_ptr(a, i0, i1, i2, i3) : cu_ptr(b, i0, i1, i2 - a.ne[2], i3);
        char * d = cu_ptr(dst, i0, i1, i2, i3);
        switch (es) {
            case 4: *(uint32_t *) d = *(const uint32_t *) s; break;
            case 2: *(uint16_t *) d = *(const uint16_t *) s; break;
            default: *(uint8_t *) d = *(const uint8_t *) s; break;
        }
    }
}

bool ggml_cu_concat_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    if (a == NULL || b == NULL || a->type != dst->type || b->type != dst->type || ggml_blck_size(dst->type) != 1) {
        return false;
    }
    const size_t es = ggml_type_size(dst->type);
    if (es != 1 && es != 2 && es != 4) {
        return false;
    }
    return a->ne[0] == dst->ne[0] && b->ne[0] == dst->ne[0] && a->ne[1] == dst->ne[1] && b->ne[1] == dst->ne[1] &&
           a->ne[3] == dst->ne[3] && b->ne[3] == dst->ne[3] && a->ne[2] + b->ne[2] == dst->ne[2];
}

bool ggml_cu_concat(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const int64_t n = ggml_nelements(dst);
    if (n == 0) {
        return true;
    }
    const cu_t a = cu_make(dst->src[0]), b = cu_make(dst->src[1]), d = cu_make(dst);
    const int es = (int) ggml_type_size(dst->type);
    if (cu_small_index(n)) {
        CU_LAUNCH(cu_concat_kernel<uint32_t>, cu_blocks(n), CU_THREADS, 0, ctx.stream)(a, b, d, es, n);
    } else {
        CU_LAUNCH(cu_concat_kernel<int64_t>, cu_blocks(n), CU_THREADS, 0, ctx.stream)(a, b, d, es, n);
    }
    return CU_LAUNCH_OK();
}
