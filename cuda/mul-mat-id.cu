// mul-mat-id.cu - MUL_MAT_ID: src0 = ids (I32), src1 = b, src[2 + e] = as[e], i32[0] = id,
// i32[1] = n_as. For every src1 row (i11, i12, i13): e = ids[id, i11, i12 % ids->ne2,
// i13 % ids->ne3] and dst row (i11, i12, i13) = as[e] (batch i12 / r2, i13 / r3) x that row; an
// expert outside [0, n_as) gives a zero row (as on the CPU).
//
// The ids are read back to the host (the op's one host synchronisation), rows are grouped per
// (expert, batch), the row lists copied to the device at once; each group is gathered into a
// dense block, multiplied through ggml_cu_mm_2d (mat-vec or cuBLAS, as MUL_MAT) and scattered
// back, all queued on the stream.

#include "common.cuh"

#include <vector>

// xg[j][:] = xd row rows[j] of batch (i12, i13)
__global__ void __launch_bounds__(CU_THREADS)
cu_mmid_gather_kernel(const float * xd, const int32_t * rows, int64_t cnt, int64_t k, int64_t row_base,
                                      float * xg) {
    const int64_t n = cnt * k;
    CU_GRID_STRIDE(t, n) {
        const int64_t j = t / k, c = t % k;
        xg[t] = xd[(row_base + rows[j]) * k + c];
    }
}

// dst(i0, rows[j], i12, i13) = yg[j][i0] (or 0 when yg is NULL)
__global__ void __launch_bounds__(CU_THREADS)
cu_mmid_scatter_kernel(const float * yg, const int32_t * rows, int64_t cnt, int64_t m, char * dst,
                                       int64_t nb0, int64_t nb1) {
    const int64_t n = cnt * m;
    CU_GRID_STRIDE(t, n) {
        const int64_t j = t / m, i0 = t % m;
        *(float *) (dst + rows[j] * nb1 + i0 * nb0) = yg != NULL ? yg[t] : 0.0f;
    }
}

bool ggml_cu_mul_mat_id_supported(const ggml_tensor * dst) {
    const ggml_tensor * ids = dst->src[0];
    const ggml_tensor * b   = dst->src[1];
    const int32_t id   = ggml_x_get_op_params_i32(dst, 0);
    const int32_t n_as = ggml_x_get_op_params_i32(dst, 1);
    if (ids == NULL || b == NULL || ids->type != GGML_TYPE_I32 || dst->type != GGML_TYPE_F32) {
        return false;
    }
    if (n_as < 1 || n_as > GGML_MAX_SRC - 2 || id < 0 || id >= ids->ne[0]) {
        return false;
    }
    if (ids->ne[1] != b->ne[1] || ids->ne[2] == 0 || ids->ne[3] == 0) {
        return false;
    }
    const ggml_tensor * a0 = dst->src[2];
    if (a0 == NULL) {
        return false;
    }
    for (int e = 0; e < n_as; e++) {
        const ggml_tensor * ae = dst->src[2 + e];
        if (ae == NULL || ae->type != a0->type || !cu_same_shape(ae, a0) || ae->nb[0] != a0->nb[0] ||
            ae->nb[1] != a0->nb[1] || ae->nb[2] != a0->nb[2] || ae->nb[3] != a0->nb[3] ||
            ggml_cu_tensor_is_split(ae)) {
            return false;
        }
    }
    if (a0->ne[0] != b->ne[0] || a0->ne[2] == 0 || a0->ne[3] == 0 || b->ne[2] % a0->ne[2] != 0 ||
        b->ne[3] % a0->ne[3] != 0) {
        return false;
    }
    if (dst->ne[0] != a0->ne[1] || dst->ne[1] != b->ne[1] || dst->ne[2] != b->ne[2] || dst->ne[3] != b->ne[3]) {
        return false;
    }
    if (!cu_is_float(b->type) || !ggml_cu_mm_weight_type(a0->type)) {
        return false;
    }
    if (a0->ne[0] > INT32_MAX || a0->ne[1] > INT32_MAX || b->ne[1] > INT32_MAX) {
        return false;
    }
    const size_t ts = ggml_type_size(a0->type);
    if (a0->nb[0] != ts || a0->nb[1] % ts != 0 || (ggml_blck_size(a0->type) > 1 && a0->ne[0] % 32 != 0)) {
        return false;
    }
    return dst->nb[0] == sizeof(float);
}

bool ggml_cu_mul_mat_id(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const ggml_tensor * ids = dst->src[0];
    const ggml_tensor * b   = dst->src[1];
    const ggml_tensor * a0  = dst->src[2];
    const int32_t id   = ggml_x_get_op_params_i32(dst, 0);
    const int32_t n_as = ggml_x_get_op_params_i32(dst, 1);
    if (ggml_nelements(dst) == 0) {
        return true;
    }
    const int64_t k = b->ne[0], ne11 = b->ne[1], ne12 = b->ne[2], ne13 = b->ne[3];
    const int64_t m = a0->ne[1];
    const int64_t r2 = ne12 / a0->ne[2], r3 = ne13 / a0->ne[3];
    const bool prec_f32 = false; // MUL_MAT_ID has no precision parameter: TF32 for F32 experts

    // ids to the host
    std::vector<char> ids_host(ggml_nbytes(ids));
    if (!CU_OK(cudaMemcpyAsync(ids_host.data(), ids->data, ids_host.size(), cudaMemcpyDeviceToHost, ctx.stream)) ||
        !CU_OK(cudaStreamSynchronize(ctx.stream))) {
        return false;
    }

    // src1 as dense F32: in place when it already is, else gathered into scratch slot 2
    const float * xd = (const float *) b->data;
    if (b->type != GGML_TYPE_F32 || !ggml_is_contiguous(b)) {
        float * xs = (float *) ggml_cu_scratch(ctx, 2, (size_t) ggml_nelements(b) * sizeof(float));
        if (xs == NULL || !ggml_cu_to_f32_dense(ctx, cu_make(b), xs)) {
            return false;
        }
        xd = xs;
    }
    // the groups on the host: for every batch (i12, i13) and expert e (-1: rows with an
    // out-of-range expert, zero rows), the list of its rows; all lists go to the device in one
    // copy, so the groups are then queued without waiting for the device
    struct group {
        int64_t i12, i13, off, cnt;
        int32_t e;
    };
    std::vector<group> groups;
    std::vector<int32_t> rows;
    rows.reserve((size_t) (ne11 * ne12 * ne13));
    for (int64_t i13 = 0; i13 < ne13; i13++) {
        for (int64_t i12 = 0; i12 < ne12; i12++) {
            for (int32_t e = -1; e < n_as; e++) {
                const int64_t off = (int64_t) rows.size();
                for (int64_t i11 = 0; i11 < ne11; i11++) {
                    const char * p = ids_host.data() + id * ids->nb[0] + i11 * ids->nb[1] +
                                     (i12 % ids->ne[2]) * ids->nb[2] + (i13 % ids->ne[3]) * ids->nb[3];
                    int32_t ev = *(const int32_t *) p;
                    if (ev < 0 || ev >= n_as) {
                        ev = -1;
                    }
                    if (ev == e) {
                        rows.push_back((int32_t) i11);
                    }
                }
                if ((int64_t) rows.size() > off) {
                    groups.push_back(group{ i12, i13, off, (int64_t) rows.size() - off, e });
                }
            }
        }
    }

    // slot 3: every row list, then the gathered rows and results of one group (the largest
    // possible: ne11 rows; groups reuse them in stream order)
    const size_t rows_bytes = GGML_PAD(rows.size() * sizeof(int32_t), 256);
    const size_t xg_bytes   = GGML_PAD((size_t) (ne11 * k) * sizeof(float), 256);
    const size_t yg_bytes   = (size_t) (ne11 * m) * sizeof(float);
    char * work = (char *) ggml_cu_scratch(ctx, 3, rows_bytes + xg_bytes + yg_bytes);
    if (work == NULL) {
        return false;
    }
    int32_t * rows_dev = (int32_t *) work;
    float * xg = (float *) (work + rows_bytes);
    float * yg = (float *) (work + rows_bytes + xg_bytes);
    // from pageable memory: the call returns once it has taken the data (the vector may go)
    if (!CU_OK(cudaMemcpyAsync(rows_dev, rows.data(), rows.size() * sizeof(int32_t), cudaMemcpyHostToDevice,
                               ctx.stream))) {
        return false;
    }

    for (const group & g : groups) {
        char * dbatch = (char *) dst->data + g.i12 * dst->nb[2] + g.i13 * dst->nb[3];
        const int64_t row_base = (g.i12 + g.i13 * ne12) * ne11;
        const int32_t * grows = rows_dev + g.off;
        const int64_t cnt = g.cnt;
        if (g.e < 0) {
            CU_LAUNCH(cu_mmid_scatter_kernel, cu_blocks(cnt * m), CU_THREADS, 0, ctx.stream)(
                NULL, grows, cnt, m, dbatch, (int64_t) dst->nb[0], (int64_t) dst->nb[1]);
            if (!CU_LAUNCH_OK()) {
                return false;
            }
            continue;
        }
        const ggml_tensor * ae = dst->src[2 + g.e];
        const char * w = (const char *) ae->data + (g.i12 / r2) * ae->nb[2] + (g.i13 / r3) * ae->nb[3];
        CU_LAUNCH(cu_mmid_gather_kernel, cu_blocks(cnt * k), CU_THREADS, 0, ctx.stream)(xd, grows, cnt, k, row_base,
                                                                                      xg);
        if (!CU_LAUNCH_OK()) {
            return false;
        }
        if (!ggml_cu_mm_2d(ctx, ae->type, w, ae->nb[1], m, xg, cnt, k, yg, m, prec_f32)) {
            return false;
        }
        CU_LAUNCH(cu_mmid_scatter_kernel, cu_blocks(cnt * m), CU_THREADS, 0, ctx.stream)(
            yg, grows, cnt, m, dbatch, (int64_t) dst->nb[0], (int64_t) dst->nb[1]);
        if (!CU_LAUNCH_OK()) {
            return false;
        }
    }
    return true;
}
