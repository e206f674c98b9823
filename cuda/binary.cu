// binary.cu - ADD, SUB, MUL, DIV and ADD1 with src1 broadcast over src0 (src0->ne[i] a multiple
// of src1->ne[i], dimension 0 included), as the CPU kernel: dst(i) = src0(i) op src1(i mod ne1).
// src0, src1 and dst may each be F32 or F16 (computed in F32); any strides; dst may alias src0.

#include "common.cuh"

enum { CU_BIN_ADD, CU_BIN_SUB, CU_BIN_MUL, CU_BIN_DIV };

// I: the index type (uint32_t when n <= INT32_MAX, cu_small_index)
template <typename I>
__global__ void __launch_bounds__(CU_THREADS) cu_binary_kernel(cu_t a, cu_t b, cu_t dst, int kind, int64_t n) {
    CU_GRID_STRIDE(idx, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel_t<I>(idx, dst.ne, i0, i1, i2, i3);
        const float x = cu_load(cu_ptr(a, i0, i1, i2, i3), a.type);
        const float y = cu_load(cu_ptr(b, cu_mod_t<I>(i0, b.ne[0]), cu_mod_t<I>(i1, b.ne[1]), cu_mod_t<I>(i2, b.ne[2]),
                                       cu_mod_t<I>(i3, b.ne[3])),
                                b.type);
        float z;
        switch (kind) {
            case CU_BIN_ADD: z = x + y; break;
            case CU_BIN_SUB: z = x - y; break;
            case CU_BIN_MUL: z = x * y; break;
            default:         z = x / y; break;
        }
        cu_store(cu_ptr(dst, i0, i1, i2, i3), dst.type, z);
    }
}

bool ggml_cu_binary_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    if (a == NULL || b == NULL || !cu_is_float(a->type) || !cu_is_float(b->type) || !cu_is_float(dst->type)) {
        return false;
    }
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (dst->ne[d] != a->ne[d] || b->ne[d] <= 0 || a->ne[d] % b->ne[d] != 0) {
            return false;
        }
    }
    if (dst->op == GGML_OP_ADD1) {
        return ggml_nelements(b) == 1;
    }
    return true;
}

bool ggml_cu_binary(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    int kind;
    switch (dst->op) {
        case GGML_OP_ADD:
        case GGML_OP_ADD1: kind = CU_BIN_ADD; break;
        case GGML_OP_SUB:  kind = CU_BIN_SUB; break;
        case GGML_OP_MUL:  kind = CU_BIN_MUL; break;
        default:           kind = CU_BIN_DIV; break;
    }
    const int64_t n = ggml_nelements(dst);
    if (n == 0) {
        return true;
    }
    const cu_t a = cu_make(dst->src[0]), b = cu_make(dst->src[1]), d = cu_make(dst);
    if (cu_small_index(n)) {
        CU_LAUNCH(cu_binary_kernel<uint32_t>, cu_blocks(n), CU_THREADS, 0, ctx.stream)(a, b, d, kind, n);
    } else {
        CU_LAUNCH(cu_binary_kernel<int64_t>, cu_blocks(n), CU_THREADS, 0, ctx.stream)(a, b, d, kind, n);
    }
    return CU_LAUNCH_OK();
}
