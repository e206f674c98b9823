// ops-conv.c - convolution building blocks: IM2COL, CONV_TRANSPOSE_1D, CONV_TRANSPOSE_2D.
//
// IM2COL unfolds the input into patch rows (ggml_conv_1d / ggml_conv_2d multiply them with the
// kernel through MUL_MAT). The transposed convolutions scatter every input position into the
// output: they first repack kernel and input into the work buffer so that the input channels are
// contiguous (one dot product per (input position, kernel tap)), then each thread accumulates its
// own output channels. Per element the accumulation order does not depend on the thread count.
//
// With an F16 kernel the input is rounded to fp16 before the products, as the reference does.

#include "../ggml-impl.h"
#include "ops.h"

// contiguous range [*r0, *r1) of n items for thread ith of nth
static void conv_split(int64_t n, int ith, int nth, int64_t * r0, int64_t * r1) {
    const int64_t dr = (n + nth - 1) / nth;
    *r0 = GGML_X_MIN(dr * ith, n);
    *r1 = GGML_X_MIN(*r0 + dr, n);
}

static inline float conv_load(const struct ggml_tensor * t, const char * p) {
    return t->type == GGML_TYPE_F16 ? GGML_FP16_TO_FP32(*(const ggml_fp16_t *) p) : *(const float *) p;
}

static inline float conv_round_f16(float x) {
    return GGML_FP16_TO_FP32(GGML_FP32_TO_FP16(x));
}

// dot product with independent partial sums (plain C, vectorisable without -ffast-math)
static float conv_dot(const float * x, const float * y, int64_t n) {
    float acc[8] = { 0 };
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (int k = 0; k < 8; k++) {
            acc[k] += x[i + k] * y[i + k];
        }
    }
    float sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (; i < n; i++) {
        sum += x[i] * y[i];
    }
    return sum;
}

static inline size_t conv_align(size_t n) {
    return (n + 63) & ~(size_t) 63;
}

// ---------------------------------------------------------------------------------------------
// IM2COL
//
// 2D: input [IW, IH, IC, N], kernel [KW, KH, IC, OC] -> dst [IC*KH*KW, OW, OH, N]
// 1D: input [IW, IC, N],     kernel [KW, IC, OC]     -> dst [IC*KW, OW, N]
// dst row (iow, ioh, in) holds the patch in (ic, ky, kx) order, kx fastest; outside: zero.

struct im2col_shape {
    int32_t s0, s1, p0, p1, d0, d1;
    bool is_2D;
    int64_t N, IC, IH, IW, KH, KW, OH, OW;
    size_t snw, snh, snc, snn; // input strides (w, h, c, n)
    size_t dnw, dnh, dnn;      // dst row strides (w, h, n)
};

static void im2col_get_shape(const struct ggml_tensor * dst, struct im2col_shape * s) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    s->s0 = ggml_x_get_op_params_i32(dst, 0);
    s->s1 = ggml_x_get_op_params_i32(dst, 1);
    s->p0 = ggml_x_get_op_params_i32(dst, 2);
    s->p1 = ggml_x_get_op_params_i32(dst, 3);
    s->d0 = ggml_x_get_op_params_i32(dst, 4);
    s->d1 = ggml_x_get_op_params_i32(dst, 5);
    s->is_2D = ggml_x_get_op_params_i32(dst, 6) != 0;

    s->IW = src1->ne[0];
    s->KW = src0->ne[0];
    s->OW = dst->ne[1];
    s->snw = src1->nb[0];
    s->dnw = dst->nb[1];
    if (s->is_2D) {
        s->N  = src1->ne[3];
        s->IC = src1->ne[2];
        s->IH = src1->ne[1];
        s->KH = src0->ne[1];
        s->OH = dst->ne[2];
        s->snh = src1->nb[1];
        s->snc = src1->nb[2];
        s->snn = src1->nb[3];
        s->dnh = dst->nb[2];
        s->dnn = dst->nb[3];
    } else {
        s->N  = src1->ne[2];
        s->IC = src1->ne[1];
        s->IH = 1;
        s->KH = 1;
        s->OH = 1;
        s->snh = 0;
        s->snc = src1->nb[1];
        s->snn = src1->nb[2];
        s->dnh = 0;
        s->dnn = dst->nb[2];
    }
}

static bool im2col_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    if (src0 == NULL || src1 == NULL) {
        return false;
    }
    if (src1->type != GGML_TYPE_F32 || (dst->type != GGML_TYPE_F16 && dst->type != GGML_TYPE_F32)) {
        return false;
    }
    struct im2col_shape s;
    im2col_get_shape(dst, &s);
    if (dst->ne[0] != s.IC * s.KH * s.KW) {
        return false;
    }
    if (s.is_2D) {
        return dst->ne[3] == s.N;
    }
    return dst->ne[2] == s.N && dst->ne[3] == 1 && src1->ne[3] == 1;
}

static void im2col_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src1 = dst->src[1];
    struct im2col_shape s;
    im2col_get_shape(dst, &s);

    const bool out_f16 = dst->type == GGML_TYPE_F16;
    const size_t dnb0 = dst->nb[0];
    const int64_t nrows = s.N * s.OH * s.OW;

    int64_t r0, r1;
    conv_split(nrows, cc->ith, cc->nth, &r0, &r1);

    for (int64_t ir = r0; ir < r1; ir++) {
        const int64_t iow = ir % s.OW;
        const int64_t ioh = (ir / s.OW) % s.OH;
        const int64_t in  = ir / (s.OW * s.OH);

        char * drow = (char *) dst->data + iow * s.dnw + ioh * s.dnh + in * s.dnn;
        const char * sbat = (const char *) src1->data + in * s.snn;

        int64_t j = 0; // element index within the row
        for (int64_t ic = 0; ic < s.IC; ic++) {
            const char * schan = sbat + ic * s.snc;
            for (int64_t ky = 0; ky < s.KH; ky++) {
                const int64_t iy = ioh * s.s1 + ky * s.d1 - s.p1;
                const bool row_ok = iy >= 0 && iy < s.IH;
                const char * srow = schan + (row_ok ? iy : 0) * s.snh;
                for (int64_t kx = 0; kx < s.KW; kx++, j++) {
                    const int64_t ix = iow * s.s0 + kx * s.d0 - s.p0;
                    float v = 0.0f;
                    if (row_ok && ix >= 0 && ix < s.IW) {
                        v = *(const float *) (srow + ix * s.snw);
                    }
                    if (out_f16) {
                        *(ggml_fp16_t *) (drow + j * dnb0) = GGML_FP32_TO_FP16(v);
                    } else {
                        *(float *) (drow + j * dnb0) = v;
                    }
                }
            }
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_im2col = {
    .forward  = im2col_forward,
    .supports = im2col_supports,
};

// ---------------------------------------------------------------------------------------------
// CONV_TRANSPOSE_1D
//
// kernel src0 [K, Cout, Cin] (F32/F16), input src1 [L, Cin, B2, B3] (F32),
// dst [OL, Cout, B2, B3] with dst[l*s0 + k*d0 - p0, co] += sum_ci in[l, ci] * ker[k, co, ci]
// Work buffer: kernel as [Cout][K][Cin] floats, input as [B3][B2][L][Cin] floats.

// types both transposed convolutions take: kernel src0 F32/F16, input src1 F32, dst F32
static bool conv_t_types_ok(const struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    return src0 != NULL && src1 != NULL && (src0->type == GGML_TYPE_F32 || src0->type == GGML_TYPE_F16) &&
           src1->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32;
}

// work buffer of the transposed convolutions: nk kernel floats, then ni input floats
static size_t conv_t_work_bytes(size_t nk, size_t ni) {
    return conv_align(nk * sizeof(float)) + conv_align(ni * sizeof(float));
}

static bool conv_t1d_supports(const struct ggml_tensor * dst) {
    if (!conv_t_types_ok(dst)) {
        return false;
    }
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const int32_t s0 = ggml_x_get_op_params_i32(dst, 0);
    const int32_t d0 = ggml_x_get_op_params_i32(dst, 2);
    return s0 > 0 && d0 > 0 && src0->ne[3] == 1 && src1->ne[1] == src0->ne[2] && dst->ne[1] == src0->ne[1] &&
           dst->ne[2] <= src1->ne[2] && dst->ne[3] <= src1->ne[3];
}

static size_t conv_t1d_work_size(const struct ggml_tensor * dst, int n_threads) {
    (void) n_threads;
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    return conv_t_work_bytes((size_t) (src0->ne[0] * src0->ne[1] * src0->ne[2]),
                             (size_t) (src1->ne[0] * src1->ne[1] * dst->ne[2] * dst->ne[3]));
}

static void conv_t1d_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const int ith = cc->ith, nth = cc->nth;

    const int32_t s0 = ggml_x_get_op_params_i32(dst, 0);
    const int32_t p0 = ggml_x_get_op_params_i32(dst, 1);
    const int32_t d0 = ggml_x_get_op_params_i32(dst, 2);

    const int64_t K = src0->ne[0], Cout = src0->ne[1], Cin = src0->ne[2];
    const int64_t L = src1->ne[0];
    const int64_t OL = dst->ne[0];
    const int64_t B2 = dst->ne[2], B3 = dst->ne[3];
    const bool round_in = src0->type == GGML_TYPE_F16;

    float * wk = (float *) cc->wdata;
    float * wi = (float *) ((char *) cc->wdata + conv_align((size_t) (K * Cout * Cin) * sizeof(float)));

    // phase 1: repack the kernel (rows (co, k)) and the input (rows (b, l))
    {
        int64_t r0, r1;
        conv_split(Cout * K, ith, nth, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) {
            const int64_t co = r / K, k = r % K;
            float * out = wk + r * Cin;
            const char * base = (const char *) src0->data + k * src0->nb[0] + co * src0->nb[1];
            for (int64_t ci = 0; ci < Cin; ci++) {
                out[ci] = conv_load(src0, base + ci * src0->nb[2]);
            }
        }
        conv_split(B3 * B2 * L, ith, nth, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) {
            const int64_t l = r % L, b2 = (r / L) % B2, b3 = r / (L * B2);
            float * out = wi + r * Cin;
            const char * base = (const char *) src1->data + l * src1->nb[0] + b2 * src1->nb[2] + b3 * src1->nb[3];
            for (int64_t ci = 0; ci < Cin; ci++) {
                const float v = *(const float *) (base + ci * src1->nb[1]);
                out[ci] = round_in ? conv_round_f16(v) : v;
            }
        }
    }
    ggml_cpu_barrier(cc);

    // phase 2: output rows (b, co)
    int64_t r0, r1;
    conv_split(B3 * B2 * Cout, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t co = r % Cout, b2 = (r / Cout) % B2, b3 = r / (Cout * B2);
        char * drow = (char *) dst->data + co * dst->nb[1] + b2 * dst->nb[2] + b3 * dst->nb[3];
        const size_t dnb0 = dst->nb[0];
        for (int64_t i0 = 0; i0 < OL; i0++) {
            *(float *) (drow + i0 * dnb0) = 0.0f;
        }
        const float * in = wi + (b3 * B2 + b2) * L * Cin;
        const float * ker = wk + co * K * Cin;
        for (int64_t l = 0; l < L; l++) {
            for (int64_t k = 0; k < K; k++) {
                const int64_t pos = l * s0 + k * d0 - p0;
                if (pos < 0 || pos >= OL) {
                    continue;
                }
                *(float *) (drow + pos * dnb0) += conv_dot(in + l * Cin, ker + k * Cin, Cin);
            }
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_conv_transpose_1d = {
    .forward   = conv_t1d_forward,
    .supports  = conv_t1d_supports,
    .work_size = conv_t1d_work_size,
};

// ---------------------------------------------------------------------------------------------
// CONV_TRANSPOSE_2D
//
// kernel src0 [KW, KH, Cout, Cin] (F16/F32), input src1 [W, H, Cin, N] (F32),
// dst [(W-1)*s + KW, (H-1)*s + KH, Cout, N]:
//   dst[x*s + kx, y*s + ky, co, n] += sum_ci in[x, y, ci, n] * ker[kx, ky, co, ci]
// Work buffer: kernel as [Cout][KH][KW][Cin] floats, input as [N][H][W][Cin] floats.

static bool conv_t2d_supports(const struct ggml_tensor * dst) {
    if (!conv_t_types_ok(dst)) {
        return false;
    }
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    return ggml_x_get_op_params_i32(dst, 0) > 0 && src1->ne[2] == src0->ne[3] && dst->ne[2] == src0->ne[2] &&
           dst->ne[3] <= src1->ne[3];
}

static size_t conv_t2d_work_size(const struct ggml_tensor * dst, int n_threads) {
    (void) n_threads;
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    return conv_t_work_bytes((size_t) (src0->ne[0] * src0->ne[1] * src0->ne[2] * src0->ne[3]),
                             (size_t) (src1->ne[0] * src1->ne[1] * src1->ne[2] * dst->ne[3]));
}

static void conv_t2d_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const int ith = cc->ith, nth = cc->nth;

    const int32_t s = ggml_x_get_op_params_i32(dst, 0);

    const int64_t KW = src0->ne[0], KH = src0->ne[1], Cout = src0->ne[2], Cin = src0->ne[3];
    const int64_t W = src1->ne[0], H = src1->ne[1];
    const int64_t OW = dst->ne[0], OH = dst->ne[1], N = dst->ne[3];
    const bool round_in = src0->type == GGML_TYPE_F16;

    float * wk = (float *) cc->wdata;
    float * wi = (float *) ((char *) cc->wdata + conv_align((size_t) (KW * KH * Cout * Cin) * sizeof(float)));

    // phase 1: repack kernel rows (co, ky, kx) and input rows (n, y, x)
    {
        int64_t r0, r1;
        conv_split(Cout * KH * KW, ith, nth, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) {
            const int64_t kx = r % KW, ky = (r / KW) % KH, co = r / (KW * KH);
            float * out = wk + r * Cin;
            const char * base = (const char *) src0->data + kx * src0->nb[0] + ky * src0->nb[1] + co * src0->nb[2];
            for (int64_t ci = 0; ci < Cin; ci++) {
                out[ci] = conv_load(src0, base + ci * src0->nb[3]);
            }
        }
        conv_split(N * H * W, ith, nth, &r0, &r1);
        for (int64_t r = r0; r < r1; r++) {
            const int64_t x = r % W, y = (r / W) % H, n = r / (W * H);
            float * out = wi + r * Cin;
            const char * base = (const char *) src1->data + x * src1->nb[0] + y * src1->nb[1] + n * src1->nb[3];
            for (int64_t ci = 0; ci < Cin; ci++) {
                const float v = *(const float *) (base + ci * src1->nb[2]);
                out[ci] = round_in ? conv_round_f16(v) : v;
            }
        }
    }
    ggml_cpu_barrier(cc);

    // phase 2: output planes (n, co)
    int64_t r0, r1;
    conv_split(N * Cout, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t co = r % Cout, n = r / Cout;
        char * dplane = (char *) dst->data + co * dst->nb[2] + n * dst->nb[3];
        const size_t dnb0 = dst->nb[0], dnb1 = dst->nb[1];
        for (int64_t i1 = 0; i1 < OH; i1++) {
            for (int64_t i0 = 0; i0 < OW; i0++) {
                *(float *) (dplane + i0 * dnb0 + i1 * dnb1) = 0.0f;
            }
        }
        const float * in = wi + n * H * W * Cin;
        const float * ker = wk + co * KH * KW * Cin;
        for (int64_t y = 0; y < H; y++) {
            for (int64_t x = 0; x < W; x++) {
                const float * v = in + (y * W + x) * Cin;
                for (int64_t ky = 0; ky < KH; ky++) {
                    const int64_t oy = y * s + ky;
                    if (oy >= OH) {
                        continue;
                    }
                    char * drow = dplane + oy * dnb1;
                    for (int64_t kx = 0; kx < KW; kx++) {
                        const int64_t ox = x * s + kx;
                        if (ox >= OW) {
                            continue;
                        }
                        *(float *) (drow + ox * dnb0) += conv_dot(v, ker + (ky * KW + kx) * Cin, Cin);
                    }
                }
            }
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_conv_transpose_2d = {
    .forward   = conv_t2d_forward,
    .supports  = conv_t2d_supports,
    .work_size = conv_t2d_work_size,
};
