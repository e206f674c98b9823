// cpy.cu - DUP, CONT and CPY: element k of src in flat order (i0 fastest, by src->ne) goes to
// element k of dst in flat order (by dst->ne); any strides on both sides.
//   * same plain type (1, 2 or 4 bytes): copied bitwise
//   * F32 <-> F16: converted (round to nearest even)
//   * F32/F16 -> Q4_0/Q4_1/Q5_0/Q5_1/Q8_0: the reference quantizers (dst rows dense blocks)
//   * quantized weight type -> F32/F16: dequantized (src rows dense blocks)
//   * quantized -> same quantized type: block for block (both dense blocks)

#include "quants.cuh"

template <typename I = int64_t> __device__ __forceinline__ char * cu_flat_ptr(const cu_t & t, int64_t k) {
    int64_t i0, i1, i2, i3;
    cu_unravel_t<I>(k, t.ne, i0, i1, i2, i3);
    return cu_ptr(t, i0, i1, i2, i3);
}

// pointer to the block holding flat element k (k at a block boundary) of a dense-block tensor
__device__ __forceinline__ char * cu_flat_block(const cu_t & t, int64_t k, int64_t bs, int64_t ts) {
    int64_t i0, i1, i2, i3;
    cu_unravel(k, t.ne, i0, i1, i2, i3);
    return t.data + (i0 / bs) * ts + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// I: the index type (uint32_t when n <= INT32_MAX, cu_small_index)
template <typename I>
__global__ void __launch_bounds__(CU_THREADS) cu_cpy_elem_kernel(cu_t src, cu_t dst, int es, bool same, int64_t n) {
    CU_GRID_STRIDE(k, n) {
        const char * s = cu_flat_ptr<I>(src, k);
        char * d = cu_flat_ptr<I>(dst, k);
        if (same) {
            switch (es) {
                case 4: *(uint32_t *) d = *(const uint32_t *) s; break;
                case 2: *(uint16_t *) d = *(const uint16_t *) s; break;
                default: *(uint8_t *) d = *(const uint8_t *) s; break;
            }
        } else {
            cu_store(d, dst.type, cu_load(s, src.type));
        }
    }
}

// one thread per 32-element destination block (I: the index type of the element count)
template <typename I>
__global__ void __launch_bounds__(CU_THREADS) cu_cpy_quantize_kernel(cu_t src, cu_t dst, int64_t ts, int64_t nblocks) {
    CU_GRID_STRIDE(b, nblocks) {
        const int64_t k0 = b * 32;
        float x[32];
        for (int j = 0; j < 32; j++) {
            x[j] = cu_load(cu_flat_ptr<I>(src, k0 + j), src.type);
        }
        cu_quantize32(dst.type, x, cu_flat_block(dst, k0, 32, ts));
    }
}

// one thread per 32-element source chunk (I: the index type of the element count)
template <typename I>
__global__ void __launch_bounds__(CU_THREADS) cu_cpy_dequantize_kernel(cu_t src, cu_t dst, int64_t nchunks) {
    const int64_t per_row = src.ne[0] / 32;
    CU_GRID_STRIDE(c, nchunks) {
        const int64_t ir = c / per_row;
        const int64_t cc = c % per_row;
        const int64_t i1 = ir % src.ne[1];
        const int64_t i2 = (ir / src.ne[1]) % src.ne[2];
        const int64_t i3 = ir / (src.ne[1] * src.ne[2]);
        const char * row = src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3];
        float v[32];
        cu_dq32(src.type, row, cc, v);
        const int64_t k0 = c * 32;
        for (int j = 0; j < 32; j++) {
            cu_store(cu_flat_ptr<I>(dst, k0 + j), dst.type, v[j]);
        }
    }
}

// one thread per block, same quantized type
__global__ void __launch_bounds__(CU_THREADS)
cu_cpy_blocks_kernel(cu_t src, cu_t dst, int64_t bs, int64_t ts, int64_t nblocks) {
    CU_GRID_STRIDE(b, nblocks) {
        const int64_t k0 = b * bs;
        const char * s = cu_flat_block(src, k0, bs, ts);
        char * d = cu_flat_block(dst, k0, bs, ts);
        for (int64_t j = 0; j < ts; j++) {
            d[j] = s[j];
        }
    }
}

static bool cu_cpy_plain(enum ggml_type t) {
    const size_t ts = ggml_type_size(t);
    return ggml_blck_size(t) == 1 && (ts == 1 || ts == 2 || ts == 4);
}

static bool cu_dense_blocks(const ggml_tensor * t) {
    return t->nb[0] == ggml_type_size(t->type) && t->ne[0] % ggml_blck_size(t->type) == 0;
}

bool ggml_cu_cpy_supported(const ggml_tensor * dst) {
    const ggml_tensor * src = dst->src[0];
    if (src == NULL || !ggml_x_type_valid(src->type) || !ggml_x_type_valid(dst->type)) {
        return false;
    }
    if (ggml_nelements(src) != ggml_nelements(dst)) {
        return false;
    }
    const enum ggml_type st = src->type, dt = dst->type;
    if (st == dt) {
        if (cu_cpy_plain(st)) {
            return true;
        }
        return ggml_blck_size(st) > 1 && cu_dense_blocks(src) && cu_dense_blocks(dst);
    }
    if (cu_is_float(st) && cu_is_float(dt)) {
        return true;
    }
    if (cu_is_float(st) && cu_q_type(dt)) {
        return cu_dense_blocks(dst);
    }
    if (ggml_blck_size(st) > 1 && cu_dq_type(st) && cu_is_float(dt)) {
        return cu_dense_blocks(src);
    }
    return false;
}

bool ggml_cu_cpy(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const ggml_tensor * src = dst->src[0];
    const enum ggml_type st = src->type, dt = dst->type;
    const int64_t n = ggml_nelements(dst);
    if (n == 0 || (src->data == dst->data && st == dt && ggml_is_contiguous(src) && ggml_is_contiguous(dst) &&
                      cu_same_shape(src, dst))) {
        return true;
    }
    const cu_t s = cu_make(src), d = cu_make(dst);
    if (st == dt && ggml_blck_size(st) > 1) {
        const int64_t bs = ggml_blck_size(st);
        const int64_t nb = n / bs;
        CU_LAUNCH(cu_cpy_blocks_kernel, cu_blocks(nb), CU_THREADS, 0, ctx.stream)(s, d, bs, (int64_t) ggml_type_size(st), nb);
    } else if (ggml_blck_size(dt) > 1) {
        const int64_t nb = n / 32;
        const int64_t ts = (int64_t) ggml_type_size(dt);
        if (cu_small_index(n)) {
            CU_LAUNCH(cu_cpy_quantize_kernel<uint32_t>, cu_blocks(nb), CU_THREADS, 0, ctx.stream)(s, d, ts, nb);
        } else {
            CU_LAUNCH(cu_cpy_quantize_kernel<int64_t>, cu_blocks(nb), CU_THREADS, 0, ctx.stream)(s, d, ts, nb);
        }
    } else if (ggml_blck_size(st) > 1) {
        const int64_t nc = n / 32;
        if (cu_small_index(n)) {
            CU_LAUNCH(cu_cpy_dequantize_kernel<uint32_t>, cu_blocks(nc), CU_THREADS, 0, ctx.stream)(s, d, nc);
        } else {
            CU_LAUNCH(cu_cpy_dequantize_kernel<int64_t>, cu_blocks(nc), CU_THREADS, 0, ctx.stream)(s, d, nc);
        }
    } else {
        const int es = (int) ggml_type_size(st);
        if (cu_small_index(n)) {
            CU_LAUNCH(cu_cpy_elem_kernel<uint32_t>, cu_blocks(n), CU_THREADS, 0, ctx.stream)(s, d, es, st == dt, n);
        } else {
            CU_LAUNCH(cu_cpy_elem_kernel<int64_t>, cu_blocks(n), CU_THREADS, 0, ctx.stream)(s, d, es, st == dt, n);
        }
    }
    return CU_LAUNCH_OK();
}
