// conv.cu - IM2COL (i32[0..6] = s0, s1, p0, p1, d0, d1, is_2D): src0 = kernel (only its shape is
// used), src1 = F32 input [IW, IH, IC, N] (2D) or [IW, IC, N] (1D); dst F16 or F32
// [IC*KH*KW, OW, OH, N] (2D) or [IC*KW, OW, N] (1D). Out-of-image taps are 0. One thread per
// dst element.

#include "common.cuh"

struct cu_im2col_shape {
    int s0, s1, p0, p1, d0, d1;
    int64_t IC, IH, IW, KH, KW, OH, OW, N;
    int64_t snw, snh, snc, snn; // input strides (bytes)
    int64_t dnj, dnw, dnh, dnn; // dst strides (bytes): element, w, h, n
};

__global__ void __launch_bounds__(CU_THREADS)
cu_im2col_kernel(const char * src, char * dst, int dtype, cu_im2col_shape s, int64_t n) {
    const int64_t rowlen = s.IC * s.KH * s.KW;
    CU_GRID_STRIDE(t, n) {
        const int64_t j   = t % rowlen;
        const int64_t r   = t / rowlen;
        const int64_t iow = r % s.OW;
        const int64_t ioh = (r / s.OW) % s.OH;
        const int64_t in  = r / (s.OW * s.OH);
        const int64_t kx = j % s.KW;
        const int64_t ky = (j / s.KW) % s.KH;
        const int64_t ic = j / (s.KW * s.KH);
        const int64_t iy = ioh * s.s1 + ky * s.d1 - s.p1;
        const int64_t ix = iow * s.s0 + kx * s.d0 - s.p0;
        float v = 0.0f;
        if (iy >= 0 && iy < s.IH && ix >= 0 && ix < s.IW) {
            v = *(const float *) (src + in * s.snn + ic * s.snc + iy * s.snh + ix * s.snw);
        }
        cu_store(dst + in * s.dnn + ioh * s.dnh + iow * s.dnw + j * s.dnj, dtype, v);
    }
}

static void cu_im2col_get_shape(const ggml_tensor * dst, cu_im2col_shape & s, bool & is_2D) {
    const ggml_tensor * k = dst->src[0];
    const ggml_tensor * in = dst->src[1];
    s.s0 = ggml_x_get_op_params_i32(dst, 0);
    s.s1 = ggml_x_get_op_params_i32(dst, 1);
    s.p0 = ggml_x_get_op_params_i32(dst, 2);
    s.p1 = ggml_x_get_op_params_i32(dst, 3);
    s.d0 = ggml_x_get_op_params_i32(dst, 4);
    s.d1 = ggml_x_get_op_params_i32(dst, 5);
    is_2D = ggml_x_get_op_params_i32(dst, 6) != 0;
    s.IW = in->ne[0];
    s.KW = k->ne[0];
    s.OW = dst->ne[1];
    s.snw = (int64_t) in->nb[0];
    s.dnj = (int64_t) dst->nb[0];
    s.dnw = (int64_t) dst->nb[1];
    if (is_2D) {
        s.N = in->ne[3]; s.IC = in->ne[2]; s.IH = in->ne[1]; s.KH = k->ne[1]; s.OH = dst->ne[2];
        s.snh = (int64_t) in->nb[1]; s.snc = (int64_t) in->nb[2]; s.snn = (int64_t) in->nb[3];
        s.dnh = (int64_t) dst->nb[2]; s.dnn = (int64_t) dst->nb[3];
    } else {
        s.N = in->ne[2]; s.IC = in->ne[1]; s.IH = 1; s.KH = 1; s.OH = 1;
        s.snh = 0; s.snc = (int64_t) in->nb[1]; s.snn = (int64_t) in->nb[2];
        s.dnh = 0; s.dnn = (int64_t) dst->nb[2];
    }
}

bool ggml_cu_im2col_supported(const ggml_tensor * dst) {
    const ggml_tensor * k = dst->src[0];
    const ggml_tensor * in = dst->src[1];
    if (k == NULL || in == NULL || in->type != GGML_TYPE_F32 || !cu_is_float(dst->type)) {
        return false;
    }
    cu_im2col_shape s;
    bool is_2D;
    cu_im2col_get_shape(dst, s, is_2D);
    if (dst->ne[0] != s.IC * s.KH * s.KW) {
        return false;
    }
    if (is_2D) {
        return dst->ne[3] == s.N;
    }
    return dst->ne[2] == s.N && dst->ne[3] == 1 && in->ne[3] == 1;
}

bool ggml_cu_im2col(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    cu_im2col_shape s;
    bool is_2D;
    cu_im2col_get_shape(dst, s, is_2D);
    const int64_t n = s.N * s.OH * s.OW * s.IC * s.KH * s.KW;
    if (n == 0) {
        return true;
    }
    CU_LAUNCH(cu_im2col_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)((const char *) dst->src[1]->data, (char *) dst->data,
                                                                  (int) dst->type, s, n);
    return CU_LAUNCH_OK();
}
