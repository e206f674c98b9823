// acc.cu - ACC and SET: dst = src0, then src1 written into dst at byte offset
// i32[3] + i1*i32[0] + i2*i32[1] + i3*i32[2] (+ i0 * element size), added (ACC) or stored (SET).
// Elements that would fall past the end of dst are skipped, as on the CPU.
// ACC: dst/src0 F32, src1 F32 or F16. SET: same float type, or F32/F16 in any combination
// (other same-type plain types are copied bytewise).

#include "common.cuh"

// dst = src0 element by element (any strides, any plain type of 1, 2 or 4 bytes)
__global__ void __launch_bounds__(CU_THREADS) cu_acc_copy_kernel(cu_t src, cu_t dst, int es, int64_t n) {
    CU_GRID_STRIDE(idx, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel(idx, dst.ne, i0, i1, i2, i3);
        const char * s = cu_ptr(src, i0, i1, i2, i3);
        char * d = cu_ptr(dst, i0, i1, i2, i3);
        switch (es) {
            case 4: *(uint32_t *) d = *(const uint32_t *) s; break;
            case 2: *(uint16_t *) d = *(const uint16_t *) s; break;
            default: *(uint8_t *) d = *(const uint8_t *) s; break;
        }
    }
}

__global__ void __launch_bounds__(CU_THREADS)
cu_acc_kernel(cu_t src1, char * dst, int dtype, int es, int64_t nbytes, int64_t wnb1, int64_t wnb2,
                              int64_t wnb3, int64_t offset, bool acc, int64_t n) {
    CU_GRID_STRIDE(idx, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel(idx, src1.ne, i0, i1, i2, i3);
        const int64_t pos = offset + i1 * wnb1 + i2 * wnb2 + i3 * wnb3 + i0 * es;
        if (pos + es > nbytes) {
            continue;
        }
        const char * s = cu_ptr(src1, i0, i1, i2, i3);
        char * d = dst + pos;
        if (acc) {
            *(float *) d += cu_load(s, src1.type);
        } else if (src1.type == dtype) {
            switch (es) {
                case 4: *(uint32_t *) d = *(const uint32_t *) s; break;
                case 2: *(uint16_t *) d = *(const uint16_t *) s; break;
                default: *(uint8_t *) d = *(const uint8_t *) s; break;
            }
        } else {
            cu_store(d, dtype, cu_load(s, src1.type));
        }
    }
}

static bool cu_acc_plain(enum ggml_type t) {
    const size_t ts = ggml_type_size(t);
    return ggml_blck_size(t) == 1 && (ts == 1 || ts == 2 || ts == 4);
}

bool ggml_cu_acc_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    if (a == NULL || b == NULL || a->type != dst->type || !cu_same_shape(a, dst)) {
        return false;
    }
    if (dst->op == GGML_OP_ACC) {
        return dst->type == GGML_TYPE_F32 && cu_is_float(b->type);
    }
    if (!cu_acc_plain(dst->type)) {
        return false;
    }
    return b->type == dst->type || (cu_is_float(b->type) && cu_is_float(dst->type));
}

bool ggml_cu_acc(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    const int64_t wnb1   = (int64_t) (uint32_t) ggml_x_get_op_params_i32(dst, 0);
    const int64_t wnb2   = (int64_t) (uint32_t) ggml_x_get_op_params_i32(dst, 1);
    const int64_t wnb3   = (int64_t) (uint32_t) ggml_x_get_op_params_i32(dst, 2);
    const int64_t offset = (int64_t) (uint32_t) ggml_x_get_op_params_i32(dst, 3);
    const bool inplace   = ggml_x_get_op_params_i32(dst, 4) != 0;
    const int es = (int) ggml_type_size(dst->type);

    const int64_t n = ggml_nelements(dst);
    if (!inplace && dst->data != a->data && n > 0) {
        CU_LAUNCH(cu_acc_copy_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)(cu_make(a), cu_make(dst), es, n);
        if (!CU_LAUNCH_OK()) {
            return false;
        }
    }
    const int64_t n1 = ggml_nelements(b);
    if (n1 == 0) {
        return true;
    }
    CU_LAUNCH(cu_acc_kernel, cu_blocks(n1), CU_THREADS, 0, ctx.stream)(cu_make(b), (char *) dst->data, (int) dst->type, es,
                                                                (int64_t) ggml_nbytes(dst), wnb1, wnb2, wnb3, offset,
                                                                dst->op == GGML_OP_ACC, n1);
    return CU_LAUNCH_OK();
}
