// get-rows.cu - GET_ROWS: dst[:, i10, i11, i12] = src0[:, src1[i10, i11, i12], i11, i12].
// src1 is I32; an index outside [0, src0->ne[1]) (or i11/i12 outside src0) gives a zero row, as on
// the CPU. src0 may be any plain type copied as is (dst of the same type), F32/F16 converted to
// F32/F16, or a quantized weight type dequantized to F32/F16, or copied block for block when dst
// has the same quantized type.

#include "quants.cuh"

static __device__ __forceinline__ int64_t cu_gr_index(const cu_t & idx, int64_t i10, int64_t i11, int64_t i12) {
    return *(const int32_t *) (idx.data + i10 * idx.nb[0] + i11 * idx.nb[1] + i12 * idx.nb[2]);
}

static __device__ __forceinline__ bool cu_gr_valid(const cu_t & src, int64_t r, int64_t i11, int64_t i12) {
    return r >= 0 && r < src.ne[1] && i11 < src.ne[2] && i12 < src.ne[3];
}

// element-wise: plain types (same type: bytes; F32/F16: converted)
__global__ void __launch_bounds__(CU_THREADS)
cu_getrows_elem_kernel(cu_t src, cu_t idx, cu_t dst, int es, bool same, int64_t n) {
    CU_GRID_STRIDE(k, n) {
        int64_t i0, i10, i11, i12;
        cu_unravel(k, dst.ne, i0, i10, i11, i12);
        const int64_t r = cu_gr_index(idx, i10, i11, i12);
        char * d = cu_ptr(dst, i0, i10, i11, i12);
        const bool ok = cu_gr_valid(src, r, i11, i12);
        const char * s = ok ? cu_ptr(src, i0, r, i11, i12) : NULL;
        if (same) {
            switch (es) {
                case 4: *(uint32_t *) d = ok ? *(const uint32_t *) s : 0u; break;
                case 2: *(uint16_t *) d = ok ? *(const uint16_t *) s : (uint16_t) 0; break;
                default: *(uint8_t *) d = ok ? *(const uint8_t *) s : (uint8_t) 0; break;
            }
        } else {
            cu_store(d, dst.type, ok ? cu_load(s, src.type) : 0.0f);
        }
    }
}

// quantized rows: one thread per 32-element chunk (dequantized) or per block (copied)
__global__ void __launch_bounds__(CU_THREADS)
cu_getrows_quant_kernel(cu_t src, cu_t idx, cu_t dst, bool same, int64_t units_per_row,
                                        int64_t unit_bytes, int64_t n) {
    CU_GRID_STRIDE(k, n) {
        const int64_t u   = k % units_per_row;
        const int64_t ir  = k / units_per_row;
        const int64_t i10 = ir % dst.ne[1];
        const int64_t i11 = (ir / dst.ne[1]) % dst.ne[2];
        const int64_t i12 = ir / (dst.ne[1] * dst.ne[2]);
        const int64_t r = cu_gr_index(idx, i10, i11, i12);
        const bool ok = cu_gr_valid(src, r, i11, i12);
        char * drow = dst.data + i10 * dst.nb[1] + i11 * dst.nb[2] + i12 * dst.nb[3];
        const char * srow = ok ? src.data + r * src.nb[1] + i11 * src.nb[2] + i12 * src.nb[3] : NULL;
        if (same) {
            char * d = drow + u * unit_bytes;
            const char * s = ok ? srow + u * unit_bytes : NULL;
            for (int64_t b = 0; b < unit_bytes; b++) {
                d[b] = ok ? s[b] : (char) 0;
            }
            continue;
        }
        float v[32];
        if (ok) {
            cu_dq32(src.type, srow, u, v);
        } else {
            for (int j = 0; j < 32; j++) v[j] = 0.0f;
        }
        for (int j = 0; j < 32; j++) {
            cu_store(drow + (32 * u + j) * dst.nb[0], dst.type, v[j]);
        }
    }
}

bool ggml_cu_get_rows_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * ids = dst->src[1];
    if (a == NULL || ids == NULL || ids->type != GGML_TYPE_I32 || !ggml_x_type_valid(a->type) ||
        !ggml_x_type_valid(dst->type)) {
        return false;
    }
    if (dst->ne[0] != a->ne[0] || dst->ne[1] != ids->ne[0] || dst->ne[2] != ids->ne[1] ||
        dst->ne[3] != ids->ne[2] || ids->ne[3] != 1) {
        return false;
    }
    const int64_t bs = ggml_blck_size(a->type);
    if (bs == 1) {
        const size_t es = ggml_type_size(a->type);
        if (a->type == dst->type) {
            return es == 1 || es == 2 || es == 4;
        }
        return cu_is_float(a->type) && cu_is_float(dst->type);
    }
    // quantized: whole dense blocks
    if (a->nb[0] != ggml_type_size(a->type) || a->ne[0] % bs != 0) {
        return false;
    }
    if (a->type == dst->type) {
        return dst->nb[0] == ggml_type_size(dst->type);
    }
    return cu_dq_type(a->type) && cu_is_float(dst->type);
}

bool ggml_cu_get_rows(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * ids = dst->src[1];
    const int64_t nrows = ggml_nrows(dst);
    if (ggml_nelements(dst) == 0) {
        return true;
    }
    if (ggml_blck_size(a->type) == 1) {
        const int64_t n = ggml_nelements(dst);
        CU_LAUNCH(cu_getrows_elem_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)(
            cu_make(a), cu_make(ids), cu_make(dst), (int) ggml_type_size(a->type), a->type == dst->type, n);
        return CU_LAUNCH_OK();
    }
    const bool same = a->type == dst->type;
    const int64_t units = same ? a->ne[0] / ggml_blck_size(a->type) : a->ne[0] / 32;
    const int64_t unit_bytes = (int64_t) ggml_type_size(a->type);
    const int64_t n = nrows * units;
    CU_LAUNCH(cu_getrows_quant_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)(cu_make(a), cu_make(ids), cu_make(dst),
                                                                         same, units, unit_bytes, n);
    return CU_LAUNCH_OK();
}
