// quants.cuh - device-side block formats (doc/gguf-and-quant-formats.md): dequantization of one 32-element chunk
// of a row for every weight type, and the reference quantizers of the 32-element block types
// (bit-exact with ggml_x_quantize_row_*_ref: every product and sum is rounded separately, no
// fused multiply-add).
//
// A chunk is 32 consecutive elements of a row: for the 32-element block types it is one block,
// for the k-quants one eighth of a 256-element super-block.

#ifndef GGML_CUDA_QUANTS_CUH
#define GGML_CUDA_QUANTS_CUH

#include "common.cuh"
#include <stddef.h>

// the block layouts the kernels address (doc/gguf-and-quant-formats.md), pinned here, in device code, whatever
// ggml_fp16_t is for this compiler: sizes, and each 16-bit scale at its byte offset
#define CU_BLOCK_LAYOUT(T, size) static_assert(sizeof(T) == (size), #T " must be " #size " bytes")
#define CU_SCALE_AT(T, f, off)                                                                   \
    static_assert(offsetof(T, f) == (off) && sizeof(((T *) 0)->f) == 2, #T "." #f " must be the " \
                                                                         "16 bits at byte " #off)
CU_BLOCK_LAYOUT(block_q4_0, 18);
CU_SCALE_AT(block_q4_0, d, 0);
CU_BLOCK_LAYOUT(block_q4_1, 20);
CU_SCALE_AT(block_q4_1, d, 0);
CU_SCALE_AT(block_q4_1, m, 2);
CU_BLOCK_LAYOUT(block_q5_0, 22);
CU_SCALE_AT(block_q5_0, d, 0);
CU_BLOCK_LAYOUT(block_q5_1, 24);
CU_SCALE_AT(block_q5_1, d, 0);
CU_SCALE_AT(block_q5_1, m, 2);
CU_BLOCK_LAYOUT(block_q8_0, 34);
CU_SCALE_AT(block_q8_0, d, 0);
CU_BLOCK_LAYOUT(block_q2_K, 84);
CU_SCALE_AT(block_q2_K, d, 80);
CU_SCALE_AT(block_q2_K, dmin, 82);
CU_BLOCK_LAYOUT(block_q3_K, 110);
CU_SCALE_AT(block_q3_K, d, 108);
CU_BLOCK_LAYOUT(block_q4_K, 144);
CU_SCALE_AT(block_q4_K, d, 0);
CU_SCALE_AT(block_q4_K, dmin, 2);
CU_BLOCK_LAYOUT(block_q5_K, 176);
CU_SCALE_AT(block_q5_K, d, 0);
CU_SCALE_AT(block_q5_K, dmin, 2);
CU_BLOCK_LAYOUT(block_q6_K, 210);
CU_SCALE_AT(block_q6_K, d, 208);
#undef CU_BLOCK_LAYOUT
#undef CU_SCALE_AT

static inline bool cu_dq_type(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32:
        case GGML_TYPE_F16:
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_Q5_1:
        case GGML_TYPE_Q8_0:
        case GGML_TYPE_Q2_K:
        case GGML_TYPE_Q3_K:
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K:
        case GGML_TYPE_Q6_K:
            return true;
        default:
            return false;
    }
}

__device__ __forceinline__ uint32_t cu_u32le(const uint8_t * p) {
    return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

// v[0..31] = elements [32c, 32c + 32) of a row that starts at `row` (dense blocks)
__device__ __forceinline__ void cu_dq32(int type, const char * row, int64_t c, float * v) {
    switch (type) {
        case GGML_TYPE_F32: {
            const float * x = (const float *) row + 32 * c;
            for (int j = 0; j < 32; j++) v[j] = x[j];
            break;
        }
        case GGML_TYPE_F16: {
            const __half * x = (const __half *) row + 32 * c;
            for (int j = 0; j < 32; j++) v[j] = __half2float(x[j]);
            break;
        }
        case GGML_TYPE_Q4_0: {
            const block_q4_0 * b = (const block_q4_0 *) row + c;
            const float d = cu_h2f(b->d);
            for (int j = 0; j < 16; j++) {
                v[j]      = (float) ((b->qs[j] & 15) - 8) * d;
                v[j + 16] = (float) ((b->qs[j] >> 4) - 8) * d;
            }
            break;
        }
        case GGML_TYPE_Q4_1: {
            const block_q4_1 * b = (const block_q4_1 *) row + c;
            const float d = cu_h2f(b->d), m = cu_h2f(b->m);
            for (int j = 0; j < 16; j++) {
                v[j]      = __fadd_rn(__fmul_rn((float) (b->qs[j] & 15), d), m);
                v[j + 16] = __fadd_rn(__fmul_rn((float) (b->qs[j] >> 4), d), m);
            }
            break;
        }
        case GGML_TYPE_Q5_0: {
            const block_q5_0 * b = (const block_q5_0 *) row + c;
            const float d = cu_h2f(b->d);
            const uint32_t qh = cu_u32le(b->qh);
            for (int j = 0; j < 16; j++) {
                const int q0 = (b->qs[j] & 15) | (((qh >> j) & 1) << 4);
                const int q1 = (b->qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
                v[j]      = (float) (q0 - 16) * d;
                v[j + 16] = (float) (q1 - 16) * d;
            }
            break;
        }
        case GGML_TYPE_Q5_1: {
            const block_q5_1 * b = (const block_q5_1 *) row + c;
            const float d = cu_h2f(b->d), m = cu_h2f(b->m);
            const uint32_t qh = cu_u32le(b->qh);
            for (int j = 0; j < 16; j++) {
                const int q0 = (b->qs[j] & 15) | (((qh >> j) & 1) << 4);
                const int q1 = (b->qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
                v[j]      = __fadd_rn(__fmul_rn((float) q0, d), m);
                v[j + 16] = __fadd_rn(__fmul_rn((float) q1, d), m);
            }
            break;
        }
        case GGML_TYPE_Q8_0: {
            const block_q8_0 * b = (const block_q8_0 *) row + c;
            const float d = cu_h2f(b->d);
            for (int j = 0; j < 32; j++) v[j] = (float) b->qs[j] * d;
            break;
        }
        case GGML_TYPE_Q2_K: {
            const block_q2_K * b = (const block_q2_K *) row + c / 8;
            const int sub = (int) (c % 8);
            const int h = sub / 4, k = sub % 4;
            const float d = cu_h2f(b->d), dmin = cu_h2f(b->dmin);
            const uint8_t * q = b->qs + 32 * h;
            for (int l = 0; l < 32; l++) {
                const uint8_t sc = b->scales[8 * h + 2 * k + (l >= 16 ? 1 : 0)];
                const float dl = d * (float) (sc & 15);
                const float ml = dmin * (float) (sc >> 4);
                v[l] = __fsub_rn(__fmul_rn(dl, (float) ((q[l] >> (2 * k)) & 3)), ml);
            }
            break;
        }
        case GGML_TYPE_Q3_K: {
            const block_q3_K * b = (const block_q3_K *) row + c / 8;
            const int sub = (int) (c % 8);
            const int h = sub / 4, k = sub % 4;
            const float d = cu_h2f(b->d);
            const uint8_t * q = b->qs + 32 * h;
            for (int l = 0; l < 32; l++) {
                const int s = 8 * h + 2 * k + (l >= 16 ? 1 : 0);
                const int lo = s < 8 ? (b->scales[s] & 15) : (b->scales[s - 8] >> 4);
                const int hi = (b->scales[8 + s % 4] >> (2 * (s / 4))) & 3;
                const int sc = (lo | (hi << 4)) - 32;
                int qv = (q[l] >> (2 * k)) & 3;
                if (((b->hmask[l] >> (4 * h + k)) & 1) == 0) {
                    qv -= 4;
                }
                v[l] = __fmul_rn(d * (float) sc, (float) qv);
            }
            break;
        }
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K: {
            const bool q5 = type == GGML_TYPE_Q5_K;
            const block_q4_K * b4 = (const block_q4_K *) row + c / 8;
            const block_q5_K * b5 = (const block_q5_K *) row + c / 8;
            const int sub = (int) (c % 8);
            const ggml_fp16_t dh = q5 ? b5->d : b4->d;
            const ggml_fp16_t mh = q5 ? b5->dmin : b4->dmin;
            const uint8_t * S = q5 ? b5->scales : b4->scales;
            const uint8_t * qs = (q5 ? b5->qs : b4->qs) + 32 * (sub / 2);
            uint8_t sc, mn;
            if (sub < 4) {
                sc = S[sub] & 63;
                mn = S[sub + 4] & 63;
            } else {
                sc = (S[sub + 4] & 15) | ((S[sub - 4] >> 6) << 4);
                mn = (S[sub + 4] >> 4) | ((S[sub] >> 6) << 4);
            }
            const float d1 = cu_h2f(dh) * (float) sc;
            const float m1 = cu_h2f(mh) * (float) mn;
            for (int l = 0; l < 32; l++) {
                int qv = (sub & 1) ? (qs[l] >> 4) : (qs[l] & 15);
                if (q5 && ((b5->qh[l] >> sub) & 1)) {
                    qv += 16;
                }
                v[l] = __fsub_rn(__fmul_rn(d1, (float) qv), m1);
            }
            break;
        }
        case GGML_TYPE_Q6_K: {
            const block_q6_K * b = (const block_q6_K *) row + c / 8;
            const int sub = (int) (c % 8);
            const int h = sub / 4, j = sub % 4;
            const float d = cu_h2f(b->d);
            const uint8_t * ql = b->ql + 64 * h;
            const uint8_t * qh = b->qh + 32 * h;
            const int8_t * sc = b->scales + 8 * h;
            for (int l = 0; l < 32; l++) {
                int qv;
                switch (j) {
                    case 0:  qv = (ql[l] & 15)      | (((qh[l] >> 0) & 3) << 4); break;
                    case 1:  qv = (ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4); break;
                    case 2:  qv = (ql[l] >> 4)      | (((qh[l] >> 4) & 3) << 4); break;
                    default: qv = (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4); break;
                }
                v[l] = __fmul_rn(d * (float) sc[l / 16 + 2 * j], (float) (qv - 32));
            }
            break;
        }
        default:
            for (int j = 0; j < 32; j++) v[j] = 0.0f;
            break;
    }
}

// ---------------------------------------------------------------------------------------------
// quantizers of the 32-element block types (x: 32 floats, out: one block)

static inline bool cu_q_type(enum ggml_type t) {
    return t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_0 || t == GGML_TYPE_Q5_1 ||
           t == GGML_TYPE_Q8_0;
}

__device__ __forceinline__ float cu_signed_absmax(const float * x, int n) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; j++) {
        const float a = fabsf(x[j]);
        if (amax < a) {
            amax = a;
            max = x[j];
        }
    }
    return max;
}

__device__ __forceinline__ int cu_trunc_i8(float v) {
    return (int) (int8_t) (int) v; // C's (int8_t) conversion of an in-range float
}

static __device__ void cu_quantize32(int type, const float * x, char * out) {
    switch (type) {
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q5_0: {
            const bool q5 = type == GGML_TYPE_Q5_0;
            const float max = cu_signed_absmax(x, 32);
            const float d = max / (q5 ? -16.0f : -8.0f);
            const float id = d != 0.0f ? 1.0f / d : 0.0f;
            const float bias = q5 ? 16.5f : 8.5f;
            const int top = q5 ? 31 : 15;
            uint8_t qs[16];
            uint32_t qh = 0;
            for (int j = 0; j < 16; j++) {
                const int q0 = min(top, cu_trunc_i8(__fadd_rn(__fmul_rn(x[j], id), bias)));
                const int q1 = min(top, cu_trunc_i8(__fadd_rn(__fmul_rn(x[j + 16], id), bias)));
                qs[j] = (uint8_t) ((q0 & 15) | ((q1 & 15) << 4));
                qh |= (uint32_t) ((q0 >> 4) & 1) << j;
                qh |= (uint32_t) ((q1 >> 4) & 1) << (j + 16);
            }
            if (q5) {
                block_q5_0 * b = (block_q5_0 *) out;
                b->d = cu_f2h(d);
                for (int j = 0; j < 4; j++) b->qh[j] = (uint8_t) (qh >> (8 * j));
                for (int j = 0; j < 16; j++) b->qs[j] = qs[j];
            } else {
                block_q4_0 * b = (block_q4_0 *) out;
                b->d = cu_f2h(d);
                for (int j = 0; j < 16; j++) b->qs[j] = qs[j];
            }
            break;
        }
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_1: {
            const bool q5 = type == GGML_TYPE_Q5_1;
            float mn = 3.402823466e+38f, mx = -3.402823466e+38f;
            for (int j = 0; j < 32; j++) {
                mn = x[j] < mn ? x[j] : mn;
                mx = x[j] > mx ? x[j] : mx;
            }
            const float d = (mx - mn) / (q5 ? 31.0f : 15.0f);
            const float id = d != 0.0f ? 1.0f / d : 0.0f;
            const int top = q5 ? 31 : 15;
            uint8_t qs[16];
            uint32_t qh = 0;
            for (int j = 0; j < 16; j++) {
                const int q0 = min(top, cu_trunc_i8(__fadd_rn(__fmul_rn(__fsub_rn(x[j], mn), id), 0.5f)));
                const int q1 = min(top, cu_trunc_i8(__fadd_rn(__fmul_rn(__fsub_rn(x[j + 16], mn), id), 0.5f)));
                qs[j] = (uint8_t) ((q0 & 15) | ((q1 & 15) << 4));
                qh |= (uint32_t) ((q0 >> 4) & 1) << j;
                qh |= (uint32_t) ((q1 >> 4) & 1) << (j + 16);
            }
            if (q5) {
                block_q5_1 * b = (block_q5_1 *) out;
                b->d = cu_f2h(d);
                b->m = cu_f2h(mn);
                for (int j = 0; j < 4; j++) b->qh[j] = (uint8_t) (qh >> (8 * j));
                for (int j = 0; j < 16; j++) b->qs[j] = qs[j];
            } else {
                block_q4_1 * b = (block_q4_1 *) out;
                b->d = cu_f2h(d);
                b->m = cu_f2h(mn);
                for (int j = 0; j < 16; j++) b->qs[j] = qs[j];
            }
            break;
        }
        case GGML_TYPE_Q8_0: {
            float amax = 0.0f;
            for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
            const float d = amax / 127.0f;
            const float id = d != 0.0f ? 1.0f / d : 0.0f;
            block_q8_0 * b = (block_q8_0 *) out;
            b->d = cu_f2h(d);
            for (int j = 0; j < 32; j++) b->qs[j] = (int8_t) roundf(__fmul_rn(x[j], id));
            break;
        }
        default:
            break;
    }
}

#endif // GGML_CUDA_QUANTS_CUH
