// mul-mat.cu - MUL_MAT: dst[i0, i1, i2, i3] = sum_k src0[k, i0, i2 / r2, i3 / r3] * src1[k, i1, i2, i3]
// with r2 = ne12 / ne02, r3 = ne13 / ne03 (src0 broadcast over the batch dimensions).
//
//   * F32 / F16 weights: cuBLAS (F32: TF32 tensor cores unless i32[0] = GGML_PREC_F32; F16:
//     src1 converted to F16, F32 accumulation and output, as the CPU converts src1 to F16).
//   * quantized weights, at most CU_MMV_MAX_COLS src1 columns: our mat-vec kernel, one warp per
//     weight row, dequantizing 32-element chunks and accumulating in F32 against F32 src1.
//   * quantized weights, more columns: weights dequantized to F16, src1 converted to F16, cuBLAS.
//   * batches (ne12, ne13 > 1): the slices that share a weight matrix (broadcast) or that step
//     through the weights with one stride are one strided-batched GEMM (cu_mm_batched).
//
// src1 may have any strides and be F32 or F16: unless it is dense F32 already, it is first
// gathered into a dense F32 array.
// Weights in a CUDA_Split buffer (2D): each device multiplies its own row range.

#include "quants.cuh"

#define CU_MMV_MAX_COLS 8
#define CU_MMV_WARPS    4 // weight rows per block

bool ggml_cu_mm_weight_type(enum ggml_type type) {
    return cu_dq_type(type);
}

// out[k] = src element k in flat order (F32 / F16 source)
__global__ void __launch_bounds__(CU_THREADS) cu_to_f32_kernel(cu_t src, float * out, int64_t n) {
    CU_GRID_STRIDE(k, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel(k, src.ne, i0, i1, i2, i3);
        out[k] = cu_load(cu_ptr(src, i0, i1, i2, i3), src.type);
    }
}

bool ggml_cu_to_f32_dense(ggml_cu_ctx & ctx, const cu_t & src, float * out) {
    const int64_t n = cu_nelements(src);
    if (n == 0) {
        return true;
    }
    CU_LAUNCH(cu_to_f32_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)(src, out, n);
    return CU_LAUNCH_OK();
}

__global__ void __launch_bounds__(CU_THREADS) cu_f32_to_f16_kernel(const float * x, __half * y, int64_t n) {
    CU_GRID_STRIDE(k, n) {
        y[k] = __float2half_rn(x[k]);
    }
}

// W (m rows of k_len elements, rows w_row_bytes apart) -> dense F16 [m][k_len]; one thread per chunk
__global__ void __launch_bounds__(CU_THREADS)
cu_dequant_f16_kernel(int wtype, const char * w, int64_t w_row_bytes, int64_t k_len, __half * out,
                                      int64_t nchunks) {
    const int64_t per_row = k_len / 32;
    CU_GRID_STRIDE(c, nchunks) {
        const int64_t r = c / per_row;
        const int64_t cc = c % per_row;
        float v[32];
        cu_dq32(wtype, w + r * w_row_bytes, cc, v);
        __half * o = out + r * k_len + cc * 32;
        for (int j = 0; j < 32; j++) {
            o[j] = __float2half_rn(v[j]);
        }
    }
}

// y[j * ldy + r] = W row r . x column j, for r < m and j < N (N <= CU_MMV_MAX_COLS; a template
// parameter so that the accumulators stay in registers)
template <int N>
__global__ void __launch_bounds__(32 * CU_MMV_WARPS)
cu_mmv_kernel(int wtype, const char * w, int64_t w_row_bytes, int64_t m, const float * x,
                              int64_t k_len, float * y, int64_t ldy) {
    const int lane = threadIdx.x & 31;
    const int64_t r = (int64_t) blockIdx.x * CU_MMV_WARPS + (threadIdx.x >> 5);
    if (r >= m) {
        return; // whole warp leaves together
    }
    const char * row = w + r * w_row_bytes;
    const int64_t nchunks = k_len / 32;
    float acc[N];
    CU_UNROLL
    for (int j = 0; j < N; j++) {
        acc[j] = 0.0f;
    }
    for (int64_t c = lane; c < nchunks; c += 32) {
        float v[32];
        cu_dq32(wtype, row, c, v);
        CU_UNROLL
        for (int j = 0; j < N; j++) {
            const float * xs = x + j * k_len + c * 32;
            float s = 0.0f;
            for (int t = 0; t < 32; t++) {
                s += v[t] * xs[t];
            }
            acc[j] += s;
        }
    }
    CU_UNROLL
    for (int j = 0; j < N; j++) {
        const float s = cu_warp_sum(acc[j]);
        if (lane == 0) {
            y[j * ldy + r] = s;
        }
    }
}

// launches cu_mmv_kernel<n> for a runtime n in [1, CU_MMV_MAX_COLS]
static bool cu_mmv(ggml_cu_ctx & ctx, enum ggml_type wtype, const char * w, size_t w_row_bytes, int64_t m,
                   const float * x, int64_t n, int64_t k_len, float * y, int64_t ldy) {
    const unsigned blocks = (unsigned) ((m + CU_MMV_WARPS - 1) / CU_MMV_WARPS);
    const unsigned threads = 32 * CU_MMV_WARPS;
    const int wt = (int) wtype;
    const int64_t rb = (int64_t) w_row_bytes;
    switch (n) {
        case 1: CU_LAUNCH(cu_mmv_kernel<1>, blocks, threads, 0, ctx.stream)(wt, w, rb, m, x, k_len, y, ldy); break;
        case 2: CU_LAUNCH(cu_mmv_kernel<2>, blocks, threads, 0, ctx.stream)(wt, w, rb, m, x, k_len, y, ldy); break;
        case 3: CU_LAUNCH(cu_mmv_kernel<3>, blocks, threads, 0, ctx.stream)(wt, w, rb, m, x, k_len, y, ldy); break;
        case 4: CU_LAUNCH(cu_mmv_kernel<4>, blocks, threads, 0, ctx.stream)(wt, w, rb, m, x, k_len, y, ldy); break;
        case 5: CU_LAUNCH(cu_mmv_kernel<5>, blocks, threads, 0, ctx.stream)(wt, w, rb, m, x, k_len, y, ldy); break;
        case 6: CU_LAUNCH(cu_mmv_kernel<6>, blocks, threads, 0, ctx.stream)(wt, w, rb, m, x, k_len, y, ldy); break;
        case 7: CU_LAUNCH(cu_mmv_kernel<7>, blocks, threads, 0, ctx.stream)(wt, w, rb, m, x, k_len, y, ldy); break;
        case 8: CU_LAUNCH(cu_mmv_kernel<8>, blocks, threads, 0, ctx.stream)(wt, w, rb, m, x, k_len, y, ldy); break;
        default: ggml_cu_report("cu_mmv", "column count outside [1, CU_MMV_MAX_COLS]", __FILE__, __LINE__); return false;
    }
    return CU_LAUNCH_OK();
}

bool ggml_cu_mm_2d(ggml_cu_ctx & ctx, enum ggml_type wtype, const char * w, size_t w_row_bytes, int64_t m,
                   const float * x, int64_t n, int64_t k_len, float * y, int64_t ldy, bool prec_f32) {
    if (m == 0 || n == 0) {
        return true;
    }
    // cuBLAS's int arguments (ggml_cu_mul_mat_supported keeps tensors in range; this catches callers)
    const bool dense_w = wtype == GGML_TYPE_F32 || wtype == GGML_TYPE_F16;
    if (m > INT32_MAX || n > INT32_MAX || k_len > INT32_MAX || ldy > INT32_MAX ||
        (dense_w && w_row_bytes / ggml_type_size(wtype) > (size_t) INT32_MAX)) {
        ggml_cu_report("ggml_cu_mm_2d", "a dimension or leading dimension exceeds cuBLAS's int range", __FILE__,
                       __LINE__);
        return false;
    }
    const float alpha = 1.0f, beta = 0.0f;
    if (!CUBLAS_OK(cublasSetStream(ctx.cublas, ctx.stream))) {
        return false;
    }
    if (wtype == GGML_TYPE_F32) {
        // dst (m x n, column-major with ld ldy) = W^T (m x k) * X (k x n)
        const cublasComputeType_t ct = prec_f32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
        return CUBLAS_OK(cublasGemmEx(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int) m, (int) n, (int) k_len, &alpha,
                                      w, CUDA_R_32F, (int) (w_row_bytes / sizeof(float)), x, CUDA_R_32F, (int) k_len,
                                      &beta, y, CUDA_R_32F, (int) ldy, ct, CUBLAS_GEMM_DEFAULT));
    }
    if (wtype != GGML_TYPE_F16 && n <= CU_MMV_MAX_COLS) {
        return cu_mmv(ctx, wtype, w, w_row_bytes, m, x, n, k_len, y, ldy);
    }
    // F16 operands, F32 accumulation
    __half * x16 = (__half *) ggml_cu_scratch(ctx, 1, (size_t) (n * k_len) * sizeof(__half));
    if (x16 == NULL) {
        return false;
    }
    CU_LAUNCH(cu_f32_to_f16_kernel, cu_blocks(n * k_len), CU_THREADS, 0, ctx.stream)(x, x16, n * k_len);
    if (!CU_LAUNCH_OK()) {
        return false;
    }
    const void * w16 = w;
    int64_t ldw = (int64_t) (w_row_bytes / sizeof(__half));
    if (wtype != GGML_TYPE_F16) {
        __half * wd = (__half *) ggml_cu_scratch(ctx, 0, (size_t) (m * k_len) * sizeof(__half));
        if (wd == NULL) {
            return false;
        }
        const int64_t nchunks = m * (k_len / 32);
        CU_LAUNCH(cu_dequant_f16_kernel, cu_blocks(nchunks), CU_THREADS, 0, ctx.stream)((int) wtype, w, (int64_t) w_row_bytes,
                                                                                k_len, wd, nchunks);
        if (!CU_LAUNCH_OK()) {
            return false;
        }
        w16 = wd;
        ldw = k_len;
    }
    return CUBLAS_OK(cublasGemmEx(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int) m, (int) n, (int) k_len, &alpha, w16,
                                  CUDA_R_16F, (int) ldw, x16, CUDA_R_16F, (int) k_len, &beta, y, CUDA_R_32F, (int) ldy,
                                  CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// `batch` products y_b = W_b^T x_b (b < batch): W_b = w + b * w_stride bytes (0: one shared
// matrix), x_b = x + b * n * k_len (dense), y_b = y + b * y_stride floats. F32/F16 weights and
// quantized weights through cuBLAS (more than CU_MMV_MAX_COLS columns, one shared matrix,
// dequantized once) are one strided-batched GEMM; the rest goes slice by slice.
static bool cu_mm_batched(ggml_cu_ctx & ctx, enum ggml_type wtype, const char * w, size_t w_row_bytes,
                          int64_t w_stride, int64_t m, const float * x, int64_t n, int64_t k_len, float * y,
                          int64_t ldy, int64_t y_stride, int64_t batch, bool prec_f32) {
    const bool dense_w = wtype == GGML_TYPE_F32 || wtype == GGML_TYPE_F16;
    const bool blas = dense_w || (n > CU_MMV_MAX_COLS && w_stride == 0);
    if (batch == 1 || !blas || batch > INT32_MAX) {
        for (int64_t b = 0; b < batch; b++) {
            if (!ggml_cu_mm_2d(ctx, wtype, w + b * w_stride, w_row_bytes, m, x + b * n * k_len, n, k_len,
                               y + b * y_stride, ldy, prec_f32)) {
                return false;
            }
        }
        return true;
    }
    if (m == 0 || n == 0 || batch == 0) {
        return true;
    }
    if (m > INT32_MAX || n > INT32_MAX || k_len > INT32_MAX || ldy > INT32_MAX ||
        (dense_w && w_row_bytes / ggml_type_size(wtype) > (size_t) INT32_MAX)) {
        ggml_cu_report("cu_mm_batched", "a dimension or leading dimension exceeds cuBLAS's int range", __FILE__,
                       __LINE__);
        return false;
    }
    const float alpha = 1.0f, beta = 0.0f;
    if (!CUBLAS_OK(cublasSetStream(ctx.cublas, ctx.stream))) {
        return false;
    }
    const long long sx = (long long) (n * k_len);
    if (wtype == GGML_TYPE_F32) {
        const cublasComputeType_t ct = prec_f32 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
        return CUBLAS_OK(cublasGemmStridedBatchedEx(
            ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int) m, (int) n, (int) k_len, &alpha, w, CUDA_R_32F,
            (int) (w_row_bytes / sizeof(float)), (long long) (w_stride / (int64_t) sizeof(float)), x, CUDA_R_32F,
            (int) k_len, sx, &beta, y, CUDA_R_32F, (int) ldy, (long long) y_stride, (int) batch, ct,
            CUBLAS_GEMM_DEFAULT));
    }
    // F16 operands, F32 accumulation: every slice's x converted at once
    __half * x16 = (__half *) ggml_cu_scratch(ctx, 1, (size_t) (batch * n * k_len) * sizeof(__half));
    if (x16 == NULL) {
        return false;
    }
    CU_LAUNCH(cu_f32_to_f16_kernel, cu_blocks(batch * n * k_len), CU_THREADS, 0, ctx.stream)(x, x16, batch * n * k_len);
    if (!CU_LAUNCH_OK()) {
        return false;
    }
    const void * w16 = w;
    int64_t ldw = (int64_t) (w_row_bytes / sizeof(__half));
    long long sw = (long long) (w_stride / (int64_t) sizeof(__half));
    if (wtype != GGML_TYPE_F16) {
        __half * wd = (__half *) ggml_cu_scratch(ctx, 0, (size_t) (m * k_len) * sizeof(__half));
        if (wd == NULL) {
            return false;
        }
        const int64_t nchunks = m * (k_len / 32);
        CU_LAUNCH(cu_dequant_f16_kernel, cu_blocks(nchunks), CU_THREADS, 0, ctx.stream)(
            (int) wtype, w, (int64_t) w_row_bytes, k_len, wd, nchunks);
        if (!CU_LAUNCH_OK()) {
            return false;
        }
        w16 = wd;
        ldw = k_len;
        sw = 0;
    }
    return CUBLAS_OK(cublasGemmStridedBatchedEx(ctx.cublas, CUBLAS_OP_T, CUBLAS_OP_N, (int) m, (int) n, (int) k_len,
                                                &alpha, w16, CUDA_R_16F, (int) ldw, sw, x16, CUDA_R_16F, (int) k_len,
                                                sx, &beta, y, CUDA_R_32F, (int) ldy, (long long) y_stride,
                                                (int) batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// rows [r0, r1) of W live on another device: multiply there, bring the m x n block back. The
// device's helper context is shared by every backend of the process: its lock is held until the
// helper's stream has finished with the helper's scratch buffers.
static bool cu_mm_2d_remote(ggml_cu_ctx & ctx, int device, enum ggml_type wtype, const char * w, size_t w_row_bytes,
                            int64_t m, const float * x, int64_t n, int64_t k_len, float * y, int64_t ldy,
                            bool prec_f32) {
    std::lock_guard<std::mutex> lock(ggml_cu_device_helper_lock(device));
    ggml_cu_ctx * h = ggml_cu_device_helper(device);
    if (h == NULL) {
        return false;
    }
    // x must be complete before the other device reads it; nothing is queued on ctx.stream from
    // here until the result is back in ctx's scratch slot 3
    if (!CU_OK(cudaStreamSynchronize(ctx.stream))) {
        return false;
    }
    const size_t xbytes = (size_t) (n * k_len) * sizeof(float);
    const size_t ybytes = (size_t) (n * m) * sizeof(float);
    if (!CU_OK(cudaSetDevice(ctx.device))) {
        return false;
    }
    float * yl = (float *) ggml_cu_scratch(ctx, 3, ybytes);
    if (yl == NULL || !CU_OK(cudaSetDevice(device))) {
        return false;
    }
    bool ok = false;
    do {
        float * xr = (float *) ggml_cu_scratch(*h, 2, xbytes);
        float * yr = (float *) ggml_cu_scratch(*h, 3, ybytes);
        if (xr == NULL || yr == NULL) {
            break;
        }
        if (!CU_OK(cudaMemcpyPeerAsync(xr, device, x, ctx.device, xbytes, h->stream))) {
            break;
        }
        if (!ggml_cu_mm_2d(*h, wtype, w, w_row_bytes, m, xr, n, k_len, yr, m, prec_f32)) {
            break;
        }
        // the result travels back on the helper's stream, so that the helper's scratch is free
        // again when the lock is released
        if (!CU_OK(cudaMemcpyPeerAsync(yl, ctx.device, yr, device, ybytes, h->stream))) {
            break;
        }
        ok = CU_OK(cudaStreamSynchronize(h->stream));
    } while (0);
    if (!CU_OK(cudaSetDevice(ctx.device)) || !ok) {
        return false;
    }
    return CU_OK(cudaMemcpy2DAsync(y, (size_t) ldy * sizeof(float), yl, (size_t) m * sizeof(float),
                                   (size_t) m * sizeof(float), (size_t) n, cudaMemcpyDeviceToDevice, ctx.stream));
}

bool ggml_cu_mul_mat_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    if (a == NULL || b == NULL || dst->type != GGML_TYPE_F32) {
        return false;
    }
    if (a->ne[0] != b->ne[0] || a->ne[2] == 0 || a->ne[3] == 0 || b->ne[2] % a->ne[2] != 0 ||
        b->ne[3] % a->ne[3] != 0) {
        return false;
    }
    if (dst->ne[0] != a->ne[1] || dst->ne[1] != b->ne[1] || dst->ne[2] != b->ne[2] || dst->ne[3] != b->ne[3]) {
        return false;
    }
    if (!cu_is_float(b->type) || !cu_dq_type(a->type)) {
        return false;
    }
    // cuBLAS takes int dimensions and leading dimensions (weights' row stride in elements, dst's
    // row stride in floats); strides of big views could wrap in a cast
    if (a->ne[0] > INT32_MAX || a->ne[1] > INT32_MAX || b->ne[1] > INT32_MAX ||
        a->nb[1] / ggml_type_size(a->type) > (size_t) INT32_MAX || dst->nb[1] / sizeof(float) > (size_t) INT32_MAX) {
        return false;
    }
    // weights: dense rows (whole 32-element chunks for the quantized types); dst: dense rows
    const size_t ts = ggml_type_size(a->type);
    if (a->nb[0] != ts || a->nb[1] % ts != 0 || (ggml_blck_size(a->type) > 1 && a->ne[0] % 32 != 0)) {
        return false;
    }
    if (dst->nb[0] != sizeof(float) || dst->nb[1] % sizeof(float) != 0) {
        return false;
    }
    if (ggml_cu_tensor_is_split(a)) {
        // split weights: a plain 2D matrix owned by the split buffer (not a view)
        return a->view_src == NULL && a->ne[2] == 1 && a->ne[3] == 1 && a->extra != NULL;
    }
    return true;
}

bool ggml_cu_mul_mat(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    if (ggml_nelements(dst) == 0) {
        return true;
    }
    const int64_t k = b->ne[0], n = b->ne[1];
    const int64_t ne12 = b->ne[2], ne13 = b->ne[3];
    const int64_t r2 = ne12 / a->ne[2], r3 = ne13 / a->ne[3];
    const bool prec_f32 = ggml_x_get_op_params_i32(dst, 0) == GGML_PREC_F32;
    const int64_t ldy = (int64_t) (dst->nb[1] / sizeof(float));

    // src1 as dense F32: used in place when it already is, else gathered into scratch slot 2
    const float * xd = (const float *) b->data;
    // (split weights: always gathered, the copy to the other devices needs device memory)
    if (b->type != GGML_TYPE_F32 || !ggml_is_contiguous(b) || ggml_cu_tensor_is_split(a)) {
        float * xs = (float *) ggml_cu_scratch(ctx, 2, (size_t) ggml_nelements(b) * sizeof(float));
        if (xs == NULL || !ggml_cu_to_f32_dense(ctx, cu_make(b), xs)) {
            return false;
        }
        xd = xs;
    }

    if (ggml_cu_tensor_is_split(a)) {
        const ggml_cu_split_extra * ex = (const ggml_cu_split_extra *) a->extra;
        const size_t row_bytes = a->nb[1];
        for (int64_t i13 = 0; i13 < ne13; i13++) {
            for (int64_t i12 = 0; i12 < ne12; i12++) {
                const float * x = xd + (i12 + i13 * ne12) * n * k;
                float * y = (float *) ((char *) dst->data + i12 * dst->nb[2] + i13 * dst->nb[3]);
                for (int d = 0; d < GGML_CU_MAX_DEVICES; d++) {
                    const int64_t r0 = ex->row0[d], r1 = ex->row1[d];
                    if (ex->data[d] == NULL || r1 <= r0) {
                        continue;
                    }
                    const bool ok = d == ctx.device
                        ? ggml_cu_mm_2d(ctx, a->type, (const char *) ex->data[d], row_bytes, r1 - r0, x, n, k, y + r0,
                                        ldy, prec_f32)
                        : cu_mm_2d_remote(ctx, d, a->type, (const char *) ex->data[d], row_bytes, r1 - r0, x, n, k,
                                          y + r0, ldy, prec_f32);
                    if (!ok) {
                        return false;
                    }
                }
            }
        }
        return true;
    }

    // per i13: with r2 == 1 the ne12 slices are one strided batch (weight stride nb02), else the r2
    // slices that share each weight matrix are (weight stride 0)
    if (dst->nb[2] % sizeof(float) != 0) {
        for (int64_t i13 = 0; i13 < ne13; i13++) {
            for (int64_t i12 = 0; i12 < ne12; i12++) {
                const char * w = (const char *) a->data + (i12 / r2) * a->nb[2] + (i13 / r3) * a->nb[3];
                const float * x = xd + (i12 + i13 * ne12) * n * k;
                float * y = (float *) ((char *) dst->data + i12 * dst->nb[2] + i13 * dst->nb[3]);
                if (!ggml_cu_mm_2d(ctx, a->type, w, a->nb[1], a->ne[1], x, n, k, y, ldy, prec_f32)) {
                    return false;
                }
            }
        }
        return true;
    }
    const int64_t y_stride = (int64_t) (dst->nb[2] / sizeof(float));
    for (int64_t i13 = 0; i13 < ne13; i13++) {
        const char * w3 = (const char *) a->data + (i13 / r3) * a->nb[3];
        const float * x3 = xd + i13 * ne12 * n * k;
        float * y3 = (float *) ((char *) dst->data + i13 * dst->nb[3]);
        if (r2 == 1) {
            if (!cu_mm_batched(ctx, a->type, w3, a->nb[1], (int64_t) a->nb[2], a->ne[1], x3, n, k, y3, ldy, y_stride,
                               ne12, prec_f32)) {
                return false;
            }
            continue;
        }
        for (int64_t i02 = 0; i02 < a->ne[2]; i02++) {
            if (!cu_mm_batched(ctx, a->type, w3 + i02 * a->nb[2], a->nb[1], 0, a->ne[1], x3 + i02 * r2 * n * k, n, k,
                               y3 + i02 * r2 * y_stride, ldy, y_stride, r2, prec_f32)) {
                return false;
            }
        }
    }
    return true;
}
