// ggml-quants.c - the quantized types of doc/gguf-and-quant-formats.md: scalar quantizers (the simple types
// bit-exact to the reference formulas, the k-quants by a least-squares scale search),
// dequantizers, reference dot products against the activation partner types and the public
// ggml_quantize_* entry points. The core traits (ggml-types.c) point at the conversions; the CPU
// backend (cpu/traits.c) installs the dot products, or their SIMD variants.

#include "ggml-quants.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

// round half to even, as the default FP rounding mode does (|v| far below 2^31 here)
static inline int ggml_x_nearest_int(float v) {
    return (int) lrintf(v);
}

static inline int ggml_x_clampi(int v, int lo, int hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

static inline uint32_t ggml_x_load_u32le(const uint8_t * p) {
    return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

static inline void ggml_x_store_u32le(uint8_t * p, uint32_t v) {
    p[0] = (uint8_t) v;
    p[1] = (uint8_t) (v >> 8);
    p[2] = (uint8_t) (v >> 16);
    p[3] = (uint8_t) (v >> 24);
}

// =============================================================================================
// 32-element block types: reference quantizers (bit-exact formulas of
// doc/gguf-and-quant-formats.md §2)

// signed value of largest magnitude (the first one on ties)
static inline float ggml_x_signed_absmax(const float * x, int n, float * amax_out) {
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < n; j++) {
        const float a = fabsf(x[j]);
        if (amax < a) {
            amax = a;
            max = x[j];
        }
    }
    *amax_out = amax;
    return max;
}

void ggml_x_quantize_row_q4_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q4_0 * y = (block_q4_0 *) vy;
    const int nb = k / QK4_0;
    for (int ib = 0; ib < nb; ib++, x += QK4_0) {
        float amax;
        const float max = ggml_x_signed_absmax(x, QK4_0, &amax);
        const float d = max / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = GGML_FP32_TO_FP16(d);
        for (int j = 0; j < QK4_0 / 2; j++) {
            const int q0 = GGML_X_MIN(15, (int8_t) (x[j] * id + 8.5f));
            const int q1 = GGML_X_MIN(15, (int8_t) (x[j + QK4_0 / 2] * id + 8.5f));
            y[ib].qs[j] = (uint8_t) (q0 | (q1 << 4));
        }
    }
}

void ggml_x_quantize_row_q4_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q4_1 * y = (block_q4_1 *) vy;
    const int nb = k / QK4_1;
    for (int ib = 0; ib < nb; ib++, x += QK4_1) {
        float min = FLT_MAX, max = -FLT_MAX;
        for (int j = 0; j < QK4_1; j++) {
            min = x[j] < min ? x[j] : min;
            max = x[j] > max ? x[j] : max;
        }
        const float d = (max - min) / 15.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = GGML_FP32_TO_FP16(d);
        y[ib].m = GGML_FP32_TO_FP16(min);
        for (int j = 0; j < QK4_1 / 2; j++) {
            const int q0 = GGML_X_MIN(15, (int8_t) ((x[j] - min) * id + 0.5f));
            const int q1 = GGML_X_MIN(15, (int8_t) ((x[j + QK4_1 / 2] - min) * id + 0.5f));
            y[ib].qs[j] = (uint8_t) (q0 | (q1 << 4));
        }
    }
}

void ggml_x_quantize_row_q5_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q5_0 * y = (block_q5_0 *) vy;
    const int nb = k / QK5_0;
    for (int ib = 0; ib < nb; ib++, x += QK5_0) {
        float amax;
        const float max = ggml_x_signed_absmax(x, QK5_0, &amax);
        const float d = max / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = GGML_FP32_TO_FP16(d);
        uint32_t qh = 0;
        for (int j = 0; j < QK5_0 / 2; j++) {
            const int q0 = GGML_X_MIN(31, (int8_t) (x[j] * id + 16.5f));
            const int q1 = GGML_X_MIN(31, (int8_t) (x[j + QK5_0 / 2] * id + 16.5f));
            y[ib].qs[j] = (uint8_t) ((q0 & 15) | ((q1 & 15) << 4));
            qh |= (uint32_t) ((q0 >> 4) & 1) << j;
            qh |= (uint32_t) ((q1 >> 4) & 1) << (j + QK5_0 / 2);
        }
        ggml_x_store_u32le(y[ib].qh, qh);
    }
}

void ggml_x_quantize_row_q5_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q5_1 * y = (block_q5_1 *) vy;
    const int nb = k / QK5_1;
    for (int ib = 0; ib < nb; ib++, x += QK5_1) {
        float min = FLT_MAX, max = -FLT_MAX;
        for (int j = 0; j < QK5_1; j++) {
            min = x[j] < min ? x[j] : min;
            max = x[j] > max ? x[j] : max;
        }
        const float d = (max - min) / 31.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = GGML_FP32_TO_FP16(d);
        y[ib].m = GGML_FP32_TO_FP16(min);
        uint32_t qh = 0;
        for (int j = 0; j < QK5_1 / 2; j++) {
            const int q0 = GGML_X_MIN(31, (int8_t) ((x[j] - min) * id + 0.5f));
            const int q1 = GGML_X_MIN(31, (int8_t) ((x[j + QK5_1 / 2] - min) * id + 0.5f));
            y[ib].qs[j] = (uint8_t) ((q0 & 15) | ((q1 & 15) << 4));
            qh |= (uint32_t) ((q0 >> 4) & 1) << j;
            qh |= (uint32_t) ((q1 >> 4) & 1) << (j + QK5_1 / 2);
        }
        ggml_x_store_u32le(y[ib].qh, qh);
    }
}

void ggml_x_quantize_row_q8_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q8_0 * y = (block_q8_0 *) vy;
    const int nb = k / QK8_0;
    for (int ib = 0; ib < nb; ib++, x += QK8_0) {
        float amax = 0.0f;
        for (int j = 0; j < QK8_0; j++) {
            amax = GGML_X_MAX(amax, fabsf(x[j]));
        }
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = GGML_FP32_TO_FP16(d);
        for (int j = 0; j < QK8_0; j++) {
            y[ib].qs[j] = (int8_t) roundf(x[j] * id);
        }
    }
}

void ggml_x_quantize_row_q8_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q8_1 * y = (block_q8_1 *) vy;
    const int nb = k / QK8_1;
    for (int ib = 0; ib < nb; ib++, x += QK8_1) {
        float amax = 0.0f;
        for (int j = 0; j < QK8_1; j++) {
            amax = GGML_X_MAX(amax, fabsf(x[j]));
        }
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int sum = 0;
        for (int j = 0; j < QK8_1; j++) {
            const int8_t q = (int8_t) roundf(x[j] * id);
            y[ib].qs[j] = q;
            sum += q;
        }
        y[ib].d = d;
        y[ib].s = (float) sum * d;
    }
}

// =============================================================================================
// 32-element block types: dequantization

void ggml_x_dequantize_row_q4_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q4_0 * x = (const block_q4_0 *) vx;
    const int nb = k / QK4_0;
    for (int ib = 0; ib < nb; ib++, y += QK4_0) {
        const float d = GGML_FP16_TO_FP32(x[ib].d);
        for (int j = 0; j < QK4_0 / 2; j++) {
            y[j]             = (float) ((x[ib].qs[j] & 15) - 8) * d;
            y[j + QK4_0 / 2] = (float) ((x[ib].qs[j] >> 4) - 8) * d;
        }
    }
}

void ggml_x_dequantize_row_q4_1(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q4_1 * x = (const block_q4_1 *) vx;
    const int nb = k / QK4_1;
    for (int ib = 0; ib < nb; ib++, y += QK4_1) {
        const float d = GGML_FP16_TO_FP32(x[ib].d);
        const float m = GGML_FP16_TO_FP32(x[ib].m);
        for (int j = 0; j < QK4_1 / 2; j++) {
            y[j]             = (float) (x[ib].qs[j] & 15) * d + m;
            y[j + QK4_1 / 2] = (float) (x[ib].qs[j] >> 4) * d + m;
        }
    }
}

void ggml_x_dequantize_row_q5_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q5_0 * x = (const block_q5_0 *) vx;
    const int nb = k / QK5_0;
    for (int ib = 0; ib < nb; ib++, y += QK5_0) {
        const float d = GGML_FP16_TO_FP32(x[ib].d);
        const uint32_t qh = ggml_x_load_u32le(x[ib].qh);
        for (int j = 0; j < QK5_0 / 2; j++) {
            const int q0 = (x[ib].qs[j] & 15) | (int) (((qh >> j) & 1) << 4);
            const int q1 = (x[ib].qs[j] >> 4) | (int) (((qh >> (j + 16)) & 1) << 4);
            y[j]             = (float) (q0 - 16) * d;
            y[j + QK5_0 / 2] = (float) (q1 - 16) * d;
        }
    }
}

void ggml_x_dequantize_row_q5_1(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q5_1 * x = (const block_q5_1 *) vx;
    const int nb = k / QK5_1;
    for (int ib = 0; ib < nb; ib++, y += QK5_1) {
        const float d = GGML_FP16_TO_FP32(x[ib].d);
        const float m = GGML_FP16_TO_FP32(x[ib].m);
        const uint32_t qh = ggml_x_load_u32le(x[ib].qh);
        for (int j = 0; j < QK5_1 / 2; j++) {
            const int q0 = (x[ib].qs[j] & 15) | (int) (((qh >> j) & 1) << 4);
            const int q1 = (x[ib].qs[j] >> 4) | (int) (((qh >> (j + 16)) & 1) << 4);
            y[j]             = (float) q0 * d + m;
            y[j + QK5_1 / 2] = (float) q1 * d + m;
        }
    }
}

void ggml_x_dequantize_row_q8_0(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q8_0 * x = (const block_q8_0 *) vx;
    const int nb = k / QK8_0;
    for (int ib = 0; ib < nb; ib++, y += QK8_0) {
        const float d = GGML_FP16_TO_FP32(x[ib].d);
        for (int j = 0; j < QK8_0; j++) {
            y[j] = (float) x[ib].qs[j] * d;
        }
    }
}

void ggml_x_dequantize_row_q8_1(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q8_1 * x = (const block_q8_1 *) vx;
    const int nb = k / QK8_1;
    for (int ib = 0; ib < nb; ib++, y += QK8_1) {
        for (int j = 0; j < QK8_1; j++) {
            y[j] = (float) x[ib].qs[j] * x[ib].d;
        }
    }
}

// =============================================================================================
// 32-element block types: dot products (integer sum per block, then scaled in float)

void ggml_x_vec_dot_q4_0_q8_0_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_0 * x = (const block_q4_0 *) vx;
    const block_q8_0 * y = (const block_q8_0 *) vy;
    const int nb = n / QK8_0;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        int sumi = 0;
        for (int j = 0; j < QK8_0 / 2; j++) {
            sumi += ((x[ib].qs[j] & 15) - 8) * y[ib].qs[j];
            sumi += ((x[ib].qs[j] >> 4) - 8) * y[ib].qs[j + QK8_0 / 2];
        }
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d));
    }
    *s = sum;
}

void ggml_x_vec_dot_q4_1_q8_1_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_1 * x = (const block_q4_1 *) vx;
    const block_q8_1 * y = (const block_q8_1 *) vy;
    const int nb = n / QK8_1;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        int sumi = 0;
        for (int j = 0; j < QK8_1 / 2; j++) {
            sumi += (x[ib].qs[j] & 15) * y[ib].qs[j];
            sumi += (x[ib].qs[j] >> 4) * y[ib].qs[j + QK8_1 / 2];
        }
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * y[ib].d) + GGML_FP16_TO_FP32(x[ib].m) * y[ib].s;
    }
    *s = sum;
}

void ggml_x_vec_dot_q5_0_q8_0_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q5_0 * x = (const block_q5_0 *) vx;
    const block_q8_0 * y = (const block_q8_0 *) vy;
    const int nb = n / QK8_0;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        const uint32_t qh = ggml_x_load_u32le(x[ib].qh);
        int sumi = 0;
        for (int j = 0; j < QK8_0 / 2; j++) {
            const int q0 = ((x[ib].qs[j] & 15) | (int) (((qh >> j) & 1) << 4)) - 16;
            const int q1 = ((x[ib].qs[j] >> 4) | (int) (((qh >> (j + 16)) & 1) << 4)) - 16;
            sumi += q0 * y[ib].qs[j] + q1 * y[ib].qs[j + QK8_0 / 2];
        }
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d));
    }
    *s = sum;
}

void ggml_x_vec_dot_q5_1_q8_1_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q5_1 * x = (const block_q5_1 *) vx;
    const block_q8_1 * y = (const block_q8_1 *) vy;
    const int nb = n / QK8_1;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        const uint32_t qh = ggml_x_load_u32le(x[ib].qh);
        int sumi = 0;
        for (int j = 0; j < QK8_1 / 2; j++) {
            const int q0 = (x[ib].qs[j] & 15) | (int) (((qh >> j) & 1) << 4);
            const int q1 = (x[ib].qs[j] >> 4) | (int) (((qh >> (j + 16)) & 1) << 4);
            sumi += q0 * y[ib].qs[j] + q1 * y[ib].qs[j + QK8_1 / 2];
        }
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * y[ib].d) + GGML_FP16_TO_FP32(x[ib].m) * y[ib].s;
    }
    *s = sum;
}

void ggml_x_vec_dot_q8_0_q8_0_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q8_0 * x = (const block_q8_0 *) vx;
    const block_q8_0 * y = (const block_q8_0 *) vy;
    const int nb = n / QK8_0;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        int sumi = 0;
        for (int j = 0; j < QK8_0; j++) {
            sumi += x[ib].qs[j] * y[ib].qs[j];
        }
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d));
    }
    *s = sum;
}

// =============================================================================================
// K-quants: unpacking to integer levels in element order. In every k-quant format sub-block s
// covers the contiguous elements [s*len, (s+1)*len).

// Q2_K / Q3_K share the 2-bit walk: element 128h + 32k + l uses bits 2k of qs[32h + l]
static void ggml_x_unpack_2bit(const uint8_t * qs, int8_t * q) {
    for (int h = 0; h < 2; h++) {
        for (int k = 0; k < 4; k++) {
            for (int l = 0; l < 32; l++) {
                q[128 * h + 32 * k + l] = (int8_t) ((qs[32 * h + l] >> (2 * k)) & 3);
            }
        }
    }
}

static void ggml_x_pack_2bit(const uint8_t * L, uint8_t * qs) {
    memset(qs, 0, QK_K / 4);
    for (int h = 0; h < 2; h++) {
        for (int k = 0; k < 4; k++) {
            for (int l = 0; l < 32; l++) {
                qs[32 * h + l] |= (uint8_t) ((L[128 * h + 32 * k + l] & 3) << (2 * k));
            }
        }
    }
}

// Q3_K high bits: element 128h + 32k + l uses bit 4h + k of hmask[l]
static void ggml_x_unpack_q3_K(const block_q3_K * b, int8_t * q) {
    ggml_x_unpack_2bit(b->qs, q);
    for (int h = 0; h < 2; h++) {
        for (int k = 0; k < 4; k++) {
            for (int l = 0; l < 32; l++) {
                const int hb = (b->hmask[l] >> (4 * h + k)) & 1;
                q[128 * h + 32 * k + l] -= (int8_t) (hb ? 0 : 4);
            }
        }
    }
}

static void ggml_x_unpack_q4_K(const block_q4_K * b, int8_t * q) {
    for (int c = 0; c < 4; c++) {
        for (int l = 0; l < 32; l++) {
            q[64 * c + l]      = (int8_t) (b->qs[32 * c + l] & 15);
            q[64 * c + 32 + l] = (int8_t) (b->qs[32 * c + l] >> 4);
        }
    }
}

static void ggml_x_unpack_q5_K(const block_q5_K * b, int8_t * q) {
    for (int c = 0; c < 4; c++) {
        for (int l = 0; l < 32; l++) {
            q[64 * c + l]      = (int8_t) ((b->qs[32 * c + l] & 15) | (((b->qh[l] >> (2 * c)) & 1) << 4));
            q[64 * c + 32 + l] = (int8_t) ((b->qs[32 * c + l] >> 4) | (((b->qh[l] >> (2 * c + 1)) & 1) << 4));
        }
    }
}

static void ggml_x_unpack_q6_K(const block_q6_K * b, int8_t * q) {
    for (int h = 0; h < 2; h++) {
        const uint8_t * ql = b->ql + 64 * h;
        const uint8_t * qh = b->qh + 32 * h;
        int8_t * y = q + 128 * h;
        for (int l = 0; l < 32; l++) {
            y[l]      = (int8_t) (((ql[l] & 15)      | (((qh[l] >> 0) & 3) << 4)) - 32);
            y[l + 32] = (int8_t) (((ql[l + 32] & 15) | (((qh[l] >> 2) & 3) << 4)) - 32);
            y[l + 64] = (int8_t) (((ql[l] >> 4)      | (((qh[l] >> 4) & 3) << 4)) - 32);
            y[l + 96] = (int8_t) (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
        }
    }
}

// =============================================================================================
// K-quants: dequantization

void ggml_x_dequantize_row_q2_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q2_K * x = (const block_q2_K *) vx;
    const int nb = k / QK_K;
    int8_t q[QK_K];
    for (int ib = 0; ib < nb; ib++, y += QK_K) {
        const float d = GGML_FP16_TO_FP32(x[ib].d);
        const float dmin = GGML_FP16_TO_FP32(x[ib].dmin);
        ggml_x_unpack_2bit(x[ib].qs, q);
        for (int s = 0; s < 16; s++) {
            const float dl = d * (float) (x[ib].scales[s] & 15);
            const float ml = dmin * (float) (x[ib].scales[s] >> 4);
            for (int l = 0; l < 16; l++) {
                y[16 * s + l] = dl * (float) q[16 * s + l] - ml;
            }
        }
    }
}

void ggml_x_dequantize_row_q3_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q3_K * x = (const block_q3_K *) vx;
    const int nb = k / QK_K;
    int8_t q[QK_K];
    int8_t sc[16];
    for (int ib = 0; ib < nb; ib++, y += QK_K) {
        const float d = GGML_FP16_TO_FP32(x[ib].d);
        ggml_x_unpack_q3_K(&x[ib], q);
        ggml_x_get_scales_q3_K(x[ib].scales, sc);
        for (int s = 0; s < 16; s++) {
            const float dl = d * (float) sc[s];
            for (int l = 0; l < 16; l++) {
                y[16 * s + l] = dl * (float) q[16 * s + l];
            }
        }
    }
}

// q4_K and q5_K share the super-block header (d, dmin, 6-bit scales and mins): the values of one
// unpacked super-block
static void ggml_x_dequantize_k4_block(const int8_t * q, const uint8_t * scales, ggml_fp16_t d16,
                                       ggml_fp16_t dmin16, float * GGML_RESTRICT y) {
    const float d = GGML_FP16_TO_FP32(d16);
    const float dmin = GGML_FP16_TO_FP32(dmin16);
    for (int j = 0; j < 8; j++) {
        uint8_t sc, mn;
        ggml_x_get_scale_min_k4(j, scales, &sc, &mn);
        const float dl = d * (float) sc;
        const float ml = dmin * (float) mn;
        for (int l = 0; l < 32; l++) {
            y[32 * j + l] = dl * (float) q[32 * j + l] - ml;
        }
    }
}

void ggml_x_dequantize_row_q4_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q4_K * x = (const block_q4_K *) vx;
    int8_t q[QK_K];
    for (int ib = 0; ib < k / QK_K; ib++, y += QK_K) {
        ggml_x_unpack_q4_K(&x[ib], q);
        ggml_x_dequantize_k4_block(q, x[ib].scales, x[ib].d, x[ib].dmin, y);
    }
}

void ggml_x_dequantize_row_q5_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q5_K * x = (const block_q5_K *) vx;
    int8_t q[QK_K];
    for (int ib = 0; ib < k / QK_K; ib++, y += QK_K) {
        ggml_x_unpack_q5_K(&x[ib], q);
        ggml_x_dequantize_k4_block(q, x[ib].scales, x[ib].d, x[ib].dmin, y);
    }
}

void ggml_x_dequantize_row_q6_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q6_K * x = (const block_q6_K *) vx;
    const int nb = k / QK_K;
    int8_t q[QK_K];
    for (int ib = 0; ib < nb; ib++, y += QK_K) {
        const float d = GGML_FP16_TO_FP32(x[ib].d);
        ggml_x_unpack_q6_K(&x[ib], q);
        for (int s = 0; s < 16; s++) {
            const float dl = d * (float) x[ib].scales[s];
            for (int l = 0; l < 16; l++) {
                y[16 * s + l] = dl * (float) q[16 * s + l];
            }
        }
    }
}

void ggml_x_dequantize_row_q8_K(const void * GGML_RESTRICT vx, float * GGML_RESTRICT y, int k) {
    const block_q8_K * x = (const block_q8_K *) vx;
    const int nb = k / QK_K;
    for (int ib = 0; ib < nb; ib++, y += QK_K) {
        for (int j = 0; j < QK_K; j++) {
            y[j] = x[ib].d * (float) x[ib].qs[j];
        }
    }
}

// =============================================================================================
// K-quants: dot products with Q8_K (integer sums per super-block, then scaled in float)

void ggml_x_vec_dot_q2_K_q8_K_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q2_K * x = (const block_q2_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    int8_t q[QK_K];
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_unpack_2bit(x[ib].qs, q);
        int sumi = 0, summ = 0;
        for (int sb = 0; sb < 16; sb++) {
            int dot = 0;
            for (int l = 0; l < 16; l++) {
                dot += q[16 * sb + l] * y[ib].qs[16 * sb + l];
            }
            sumi += (x[ib].scales[sb] & 15) * dot;
            summ += (x[ib].scales[sb] >> 4) * y[ib].bsums[sb];
        }
        const float dy = y[ib].d;
        sum += dy * GGML_FP16_TO_FP32(x[ib].d) * (float) sumi - dy * GGML_FP16_TO_FP32(x[ib].dmin) * (float) summ;
    }
    *s = sum;
}

void ggml_x_vec_dot_q3_K_q8_K_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q3_K * x = (const block_q3_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    int8_t q[QK_K];
    int8_t sc[16];
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_unpack_q3_K(&x[ib], q);
        ggml_x_get_scales_q3_K(x[ib].scales, sc);
        int sumi = 0;
        for (int sb = 0; sb < 16; sb++) {
            int dot = 0;
            for (int l = 0; l < 16; l++) {
                dot += q[16 * sb + l] * y[ib].qs[16 * sb + l];
            }
            sumi += sc[sb] * dot;
        }
        sum += y[ib].d * GGML_FP16_TO_FP32(x[ib].d) * (float) sumi;
    }
    *s = sum;
}

// q4_K and q5_K share the super-block header (d, dmin, 12 bytes of 6-bit scales and mins): the
// dot product of one unpacked super-block with its q8_K partner
static float ggml_x_dot_k4_block(const int8_t * q, const uint8_t * scales, ggml_fp16_t d, ggml_fp16_t dmin,
                                 const block_q8_K * y) {
    int sumi = 0, summ = 0;
    for (int j = 0; j < 8; j++) {
        uint8_t sc, mn;
        ggml_x_get_scale_min_k4(j, scales, &sc, &mn);
        int dot = 0;
        for (int l = 0; l < 32; l++) {
            dot += q[32 * j + l] * y->qs[32 * j + l];
        }
        sumi += sc * dot;
        summ += mn * (y->bsums[2 * j] + y->bsums[2 * j + 1]);
    }
    const float dy = y->d;
    return dy * GGML_FP16_TO_FP32(d) * (float) sumi - dy * GGML_FP16_TO_FP32(dmin) * (float) summ;
}

void ggml_x_vec_dot_q4_K_q8_K_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_K * x = (const block_q4_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    int8_t q[QK_K];
    float sum = 0.0f;
    for (int ib = 0; ib < n / QK_K; ib++) {
        ggml_x_unpack_q4_K(&x[ib], q);
        sum += ggml_x_dot_k4_block(q, x[ib].scales, x[ib].d, x[ib].dmin, &y[ib]);
    }
    *s = sum;
}

void ggml_x_vec_dot_q5_K_q8_K_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q5_K * x = (const block_q5_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    int8_t q[QK_K];
    float sum = 0.0f;
    for (int ib = 0; ib < n / QK_K; ib++) {
        ggml_x_unpack_q5_K(&x[ib], q);
        sum += ggml_x_dot_k4_block(q, x[ib].scales, x[ib].d, x[ib].dmin, &y[ib]);
    }
    *s = sum;
}

void ggml_x_vec_dot_q6_K_q8_K_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q6_K * x = (const block_q6_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    int8_t q[QK_K];
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_unpack_q6_K(&x[ib], q);
        int sumi = 0;
        for (int sb = 0; sb < 16; sb++) {
            int dot = 0;
            for (int l = 0; l < 16; l++) {
                dot += q[16 * sb + l] * y[ib].qs[16 * sb + l];
            }
            sumi += x[ib].scales[sb] * dot;
        }
        sum += y[ib].d * GGML_FP16_TO_FP32(x[ib].d) * (float) sumi;
    }
    *s = sum;
}

// =============================================================================================
// K-quants: quantization
//
// Each sub-block is first fitted on its own: a range of candidate scales is tried, the levels
// are rounded for each, and scale (and offset) are refitted by least squares on those levels;
// the fit with the smallest squared error wins. The per-sub-block scales (and mins) are then
// quantized against one super-block scale, and finally every sub-block picks, among the
// quantized scale codes next to its own, the one that (after re-rounding its levels) gives the
// smallest squared error.

// Affine fit x ~ a * L + b, L in [0, nmax], with b <= 0 (the formats store -b as an unsigned
// min). Returns a (>= 0) and the min (-b >= 0).
static float ggml_x_fit_affine(int n, int nmax, const float * x, uint8_t * L, float * the_min) {
    float xmin = x[0], xmax = x[0];
    for (int i = 1; i < n; i++) {
        xmin = GGML_X_MIN(xmin, x[i]);
        xmax = GGML_X_MAX(xmax, x[i]);
    }
    if (xmin > 0.0f) {
        xmin = 0.0f;
    }
    if (xmax <= xmin) {
        memset(L, 0, (size_t) n);
        *the_min = -xmin;
        return 0.0f;
    }
    uint8_t Lc[32];
    float best_err = INFINITY, best_a = 0.0f, best_b = xmin;
    const int nstep = 24;
    for (int is = 0; is <= nstep; is++) {
        // candidate scale: range mapped onto nmax - 1 .. nmax + 1.4 levels
        const float iscale = ((float) nmax - 1.0f + 0.1f * (float) is) / (xmax - xmin);
        float a = 0.0f, b = xmin;
        for (int iter = 0; iter < 2; iter++) {
            float sl = 0, sl2 = 0, sx = 0, sxl = 0;
            for (int i = 0; i < n; i++) {
                const float v = iter == 0 ? iscale * (x[i] - xmin) : (x[i] - b) / a;
                const int l = ggml_x_clampi(ggml_x_nearest_int(v), 0, nmax);
                Lc[i] = (uint8_t) l;
                sl += (float) l;
                sl2 += (float) (l * l);
                sx += x[i];
                sxl += x[i] * (float) l;
            }
            const float det = (float) n * sl2 - sl * sl;
            if (det > 0.0f) {
                a = ((float) n * sxl - sl * sx) / det;
                b = (sl2 * sx - sl * sxl) / det;
            } else {
                a = 0.0f;
                b = sx / (float) n;
            }
            if (b > 0.0f) {
                b = 0.0f;
                a = sl2 > 0.0f ? sxl / sl2 : 0.0f;
            }
            if (a < 0.0f) {
                a = 0.0f;
            }
            float err = 0.0f;
            for (int i = 0; i < n; i++) {
                const float diff = a * (float) Lc[i] + b - x[i];
                err += diff * diff;
            }
            if (err < best_err) {
                best_err = err;
                best_a = a;
                best_b = b;
                memcpy(L, Lc, (size_t) n);
            }
            if (a <= 0.0f) {
                break;
            }
        }
    }
    *the_min = -best_b;
    return best_a;
}

// Symmetric fit x ~ a * L, L in [-nmax, nmax - 1]. Returns a (any sign).
static float ggml_x_fit_sym(int n, int nmax, const float * x, int8_t * L) {
    float amax;
    const float max = ggml_x_signed_absmax(x, n, &amax);
    if (amax == 0.0f) {
        memset(L, 0, (size_t) n);
        return 0.0f;
    }
    int8_t Lc[32];
    float best_score = -1.0f, best_a = 0.0f;
    const int nstep = 12;
    for (int is = -nstep; is <= nstep; is++) {
        float iscale = -((float) nmax + 0.1f * (float) is) / max;
        for (int iter = 0; iter < 2; iter++) {
            float sxl = 0, sl2 = 0;
            for (int i = 0; i < n; i++) {
                const int l = ggml_x_clampi(ggml_x_nearest_int(iscale * x[i]), -nmax, nmax - 1);
                Lc[i] = (int8_t) l;
                sxl += x[i] * (float) l;
                sl2 += (float) (l * l);
            }
            if (sl2 <= 0.0f) {
                break;
            }
            // squared error = sum x^2 - sxl^2 / sl2 for the least-squares a
            const float score = sxl * sxl / sl2;
            const float a = sxl / sl2;
            if (score > best_score) {
                best_score = score;
                best_a = a;
                memcpy(L, Lc, (size_t) n);
            }
            if (a == 0.0f) {
                break;
            }
            iscale = 1.0f / a;
        }
    }
    return best_a;
}

// squared error of sub-block x with levels rounded for value = dl * L - ml, L in [0, nmax]
static float ggml_x_requant_affine(int n, int nmax, const float * x, float dl, float ml, uint8_t * L) {
    const float idl = dl != 0.0f ? 1.0f / dl : 0.0f;
    float err = 0.0f;
    for (int i = 0; i < n; i++) {
        const int l = ggml_x_clampi(ggml_x_nearest_int((x[i] + ml) * idl), 0, nmax);
        L[i] = (uint8_t) l;
        const float diff = dl * (float) l - ml - x[i];
        err += diff * diff;
    }
    return err;
}

// squared error of sub-block x with levels rounded for value = dl * L, L in [-nmax, nmax-1]
static float ggml_x_requant_sym(int n, int nmax, const float * x, float dl, int8_t * L) {
    const float idl = dl != 0.0f ? 1.0f / dl : 0.0f;
    float err = 0.0f;
    for (int i = 0; i < n; i++) {
        const int l = ggml_x_clampi(ggml_x_nearest_int(x[i] * idl), -nmax, nmax - 1);
        L[i] = (int8_t) l;
        const float diff = dl * (float) l - x[i];
        err += diff * diff;
    }
    return err;
}

// Affine super-block: nsub sub-blocks of len elements, levels 0..nmax, scale and min codes
// 0..smax. Writes levels (element order) and codes; returns the f16 d and dmin.
static void ggml_x_quant_affine_super(const float * x, int nsub, int len, int nmax, int smax,
                                      uint8_t * L, uint8_t * sc, uint8_t * mn,
                                      ggml_fp16_t * d_out, ggml_fp16_t * dmin_out) {
    float scales[16], mins[16];
    float max_scale = 0.0f, max_min = 0.0f;
    for (int j = 0; j < nsub; j++) {
        scales[j] = ggml_x_fit_affine(len, nmax, x + len * j, L + len * j, &mins[j]);
        max_scale = GGML_X_MAX(max_scale, scales[j]);
        max_min = GGML_X_MAX(max_min, mins[j]);
    }
    const float d0 = max_scale / (float) smax;
    const float m0 = max_min / (float) smax;
    *d_out = GGML_FP32_TO_FP16(d0);
    *dmin_out = GGML_FP32_TO_FP16(m0);
    const float d = GGML_FP16_TO_FP32(*d_out);
    const float dmin = GGML_FP16_TO_FP32(*dmin_out);
    uint8_t Lt[32];
    for (int j = 0; j < nsub; j++) {
        const int sc0 = d > 0.0f ? ggml_x_clampi(ggml_x_nearest_int(scales[j] / d), 0, smax) : 0;
        const int mn0 = dmin > 0.0f ? ggml_x_clampi(ggml_x_nearest_int(mins[j] / dmin), 0, smax) : 0;
        float best = INFINITY;
        for (int ds = -1; ds <= 1; ds++) {
            const int s = sc0 + ds;
            if (s < 0 || s > smax || (ds != 0 && d <= 0.0f)) {
                continue;
            }
            for (int dm = -1; dm <= 1; dm++) {
                const int m = mn0 + dm;
                if (m < 0 || m > smax || (dm != 0 && dmin <= 0.0f)) {
                    continue;
                }
                const float err = ggml_x_requant_affine(len, nmax, x + len * j, d * (float) s, dmin * (float) m, Lt);
                if (err < best) {
                    best = err;
                    sc[j] = (uint8_t) s;
                    mn[j] = (uint8_t) m;
                    memcpy(L + len * j, Lt, (size_t) len);
                }
            }
        }
    }
}

// Symmetric super-block: levels -nmax..nmax-1, signed scale codes -smax..smax-1.
static float ggml_x_quant_sym_super(const float * x, int nsub, int len, int nmax, int smax,
                                    int8_t * L, int8_t * sc) {
    float scales[16];
    for (int j = 0; j < nsub; j++) {
        scales[j] = ggml_x_fit_sym(len, nmax, x + len * j, L + len * j);
    }
    float amax;
    const float max_scale = ggml_x_signed_absmax(scales, nsub, &amax);
    if (amax == 0.0f) {
        memset(sc, 0, (size_t) nsub);
        memset(L, 0, (size_t) (nsub * len));
        return 0.0f;
    }
    const float d = GGML_FP16_TO_FP32(GGML_FP32_TO_FP16(max_scale / -(float) smax));
    int8_t Lt[32];
    for (int j = 0; j < nsub; j++) {
        const int s0 = d != 0.0f ? ggml_x_clampi(ggml_x_nearest_int(scales[j] / d), -smax, smax - 1) : 0;
        float best = INFINITY;
        for (int ds = -1; ds <= 1; ds++) {
            const int s = s0 + ds;
            if (s < -smax || s > smax - 1) {
                continue;
            }
            const float err = ggml_x_requant_sym(len, nmax, x + len * j, d * (float) s, Lt);
            if (err < best) {
                best = err;
                sc[j] = (int8_t) s;
                memcpy(L + len * j, Lt, (size_t) len);
            }
        }
    }
    return d;
}

void ggml_x_quantize_row_q2_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q2_K * y = (block_q2_K *) vy;
    const int nb = k / QK_K;
    uint8_t L[QK_K], sc[16], mn[16];
    for (int ib = 0; ib < nb; ib++, x += QK_K) {
        ggml_x_quant_affine_super(x, 16, 16, 3, 15, L, sc, mn, &y[ib].d, &y[ib].dmin);
        for (int j = 0; j < 16; j++) {
            y[ib].scales[j] = (uint8_t) (sc[j] | (mn[j] << 4));
        }
        ggml_x_pack_2bit(L, y[ib].qs);
    }
}

void ggml_x_quantize_row_q3_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q3_K * y = (block_q3_K *) vy;
    const int nb = k / QK_K;
    int8_t L[QK_K], sc[16];
    uint8_t U[QK_K];
    for (int ib = 0; ib < nb; ib++, x += QK_K) {
        const float d = ggml_x_quant_sym_super(x, 16, 16, 4, 32, L, sc);
        y[ib].d = GGML_FP32_TO_FP16(d);
        memset(y[ib].scales, 0, sizeof(y[ib].scales));
        for (int j = 0; j < 16; j++) {
            const int v = sc[j] + 32; // 0..63
            if (j < 8) {
                y[ib].scales[j] |= (uint8_t) (v & 15);
            } else {
                y[ib].scales[j - 8] |= (uint8_t) ((v & 15) << 4);
            }
            y[ib].scales[8 + j % 4] |= (uint8_t) ((v >> 4) << (2 * (j / 4)));
        }
        for (int i = 0; i < QK_K; i++) {
            U[i] = (uint8_t) (L[i] + 4); // 0..7
        }
        ggml_x_pack_2bit(U, y[ib].qs);
        memset(y[ib].hmask, 0, sizeof(y[ib].hmask));
        for (int h = 0; h < 2; h++) {
            for (int kk = 0; kk < 4; kk++) {
                for (int l = 0; l < 32; l++) {
                    if (U[128 * h + 32 * kk + l] & 4) {
                        y[ib].hmask[l] |= (uint8_t) (1 << (4 * h + kk));
                    }
                }
            }
        }
    }
}

static void ggml_x_pack_scales_k4(const uint8_t * sc, const uint8_t * mn, uint8_t * S) {
    for (int j = 0; j < 4; j++) {
        S[j]     = (uint8_t) ((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
        S[j + 4] = (uint8_t) ((mn[j] & 63) | ((mn[j + 4] >> 4) << 6));
        S[j + 8] = (uint8_t) ((sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4));
    }
}

void ggml_x_quantize_row_q4_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q4_K * y = (block_q4_K *) vy;
    const int nb = k / QK_K;
    uint8_t L[QK_K], sc[8], mn[8];
    for (int ib = 0; ib < nb; ib++, x += QK_K) {
        ggml_x_quant_affine_super(x, 8, 32, 15, 63, L, sc, mn, &y[ib].d, &y[ib].dmin);
        ggml_x_pack_scales_k4(sc, mn, y[ib].scales);
        for (int c = 0; c < 4; c++) {
            for (int l = 0; l < 32; l++) {
                y[ib].qs[32 * c + l] = (uint8_t) (L[64 * c + l] | (L[64 * c + 32 + l] << 4));
            }
        }
    }
}

void ggml_x_quantize_row_q5_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q5_K * y = (block_q5_K *) vy;
    const int nb = k / QK_K;
    uint8_t L[QK_K], sc[8], mn[8];
    for (int ib = 0; ib < nb; ib++, x += QK_K) {
        ggml_x_quant_affine_super(x, 8, 32, 31, 63, L, sc, mn, &y[ib].d, &y[ib].dmin);
        ggml_x_pack_scales_k4(sc, mn, y[ib].scales);
        memset(y[ib].qh, 0, sizeof(y[ib].qh));
        for (int c = 0; c < 4; c++) {
            for (int l = 0; l < 32; l++) {
                const int lo = L[64 * c + l], hi = L[64 * c + 32 + l];
                y[ib].qs[32 * c + l] = (uint8_t) ((lo & 15) | ((hi & 15) << 4));
                y[ib].qh[l] |= (uint8_t) (((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
            }
        }
    }
}

void ggml_x_quantize_row_q6_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q6_K * y = (block_q6_K *) vy;
    const int nb = k / QK_K;
    int8_t L[QK_K], sc[16];
    for (int ib = 0; ib < nb; ib++, x += QK_K) {
        const float d = ggml_x_quant_sym_super(x, 16, 16, 32, 128, L, sc);
        y[ib].d = GGML_FP32_TO_FP16(d);
        for (int j = 0; j < 16; j++) {
            y[ib].scales[j] = sc[j];
        }
        for (int h = 0; h < 2; h++) {
            uint8_t * ql = y[ib].ql + 64 * h;
            uint8_t * qh = y[ib].qh + 32 * h;
            const int8_t * Lh = L + 128 * h;
            for (int l = 0; l < 32; l++) {
                const int q1 = Lh[l] + 32, q2 = Lh[l + 32] + 32, q3 = Lh[l + 64] + 32, q4 = Lh[l + 96] + 32;
                ql[l]      = (uint8_t) ((q1 & 15) | ((q3 & 15) << 4));
                ql[l + 32] = (uint8_t) ((q2 & 15) | ((q4 & 15) << 4));
                qh[l]      = (uint8_t) ((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
            }
        }
    }
}

void ggml_x_quantize_row_q8_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q8_K * y = (block_q8_K *) vy;
    const int nb = k / QK_K;
    for (int ib = 0; ib < nb; ib++, x += QK_K) {
        float amax;
        const float max = ggml_x_signed_absmax(x, QK_K, &amax);
        if (amax == 0.0f) {
            memset(&y[ib], 0, sizeof(y[ib]));
            continue;
        }
        const float iscale = -127.0f / max;
        for (int j = 0; j < QK_K; j++) {
            y[ib].qs[j] = (int8_t) GGML_X_MIN(127, ggml_x_nearest_int(iscale * x[j]));
        }
        for (int g = 0; g < QK_K / 16; g++) {
            int sum = 0;
            for (int l = 0; l < 16; l++) {
                sum += y[ib].qs[16 * g + l];
            }
            y[ib].bsums[g] = (int16_t) sum;
        }
        y[ib].d = 1.0f / iscale;
    }
}

// =============================================================================================
// public quantize entry points

static void ggml_x_hist_nibbles(const uint8_t * qs, int nbytes, int64_t * hist) {
    for (int j = 0; j < nbytes; j++) {
        hist[qs[j] & 15]++;
        hist[qs[j] >> 4]++;
    }
}

// quantize n floats in rows of k with `row` (k a multiple of the block size)
static size_t ggml_x_quantize_rows(ggml_from_float_t row, enum ggml_type type, const float * src, void * dst, int n, int k) {
    ggml_x_init_tables(); // the quantizers round scales through fp16
    const int blck = ggml_blck_size(type);
    const size_t tsize = ggml_type_size(type);
    if (k <= 0 || n < 0 || k % blck != 0 || n % k != 0) {
        ggml_x_error(NULL, "ggml_quantize_%s: n (%d) must be a multiple of k (%d), and k of the block size (%d)",
                     ggml_type_name(type), n, k, blck);
        return 0;
    }
    for (int j = 0; j < n; j += k) {
        row(src + j, (char *) dst + (size_t) (j / blck) * tsize, k);
    }
    return (size_t) (n / blck) * tsize;
}

size_t ggml_quantize_q4_0(const float * src, void * dst, int n, int k, int64_t * hist) {
    const size_t r = ggml_x_quantize_rows(ggml_x_quantize_row_q4_0_ref, GGML_TYPE_Q4_0, src, dst, n, k);
    if (hist != NULL && r > 0) {
        const block_q4_0 * y = (const block_q4_0 *) dst;
        for (int ib = 0; ib < n / QK4_0; ib++) {
            ggml_x_hist_nibbles(y[ib].qs, QK4_0 / 2, hist);
        }
    }
    return r;
}

size_t ggml_quantize_q4_1(const float * src, void * dst, int n, int k, int64_t * hist) {
    const size_t r = ggml_x_quantize_rows(ggml_x_quantize_row_q4_1_ref, GGML_TYPE_Q4_1, src, dst, n, k);
    if (hist != NULL && r > 0) {
        const block_q4_1 * y = (const block_q4_1 *) dst;
        for (int ib = 0; ib < n / QK4_1; ib++) {
            ggml_x_hist_nibbles(y[ib].qs, QK4_1 / 2, hist);
        }
    }
    return r;
}

size_t ggml_quantize_q5_0(const float * src, void * dst, int n, int k, int64_t * hist) {
    const size_t r = ggml_x_quantize_rows(ggml_x_quantize_row_q5_0_ref, GGML_TYPE_Q5_0, src, dst, n, k);
    if (hist != NULL && r > 0) {
        const block_q5_0 * y = (const block_q5_0 *) dst;
        for (int ib = 0; ib < n / QK5_0; ib++) {
            const uint32_t qh = ggml_x_load_u32le(y[ib].qh);
            for (int j = 0; j < QK5_0 / 2; j++) {
                const int q0 = (y[ib].qs[j] & 15) | (int) (((qh >> j) & 1) << 4);
                const int q1 = (y[ib].qs[j] >> 4) | (int) (((qh >> (j + 16)) & 1) << 4);
                hist[q0 >> 1]++;
                hist[q1 >> 1]++;
            }
        }
    }
    return r;
}

size_t ggml_quantize_q5_1(const float * src, void * dst, int n, int k, int64_t * hist) {
    const size_t r = ggml_x_quantize_rows(ggml_x_quantize_row_q5_1_ref, GGML_TYPE_Q5_1, src, dst, n, k);
    if (hist != NULL && r > 0) {
        const block_q5_1 * y = (const block_q5_1 *) dst;
        for (int ib = 0; ib < n / QK5_1; ib++) {
            const uint32_t qh = ggml_x_load_u32le(y[ib].qh);
            for (int j = 0; j < QK5_1 / 2; j++) {
                const int q0 = (y[ib].qs[j] & 15) | (int) (((qh >> j) & 1) << 4);
                const int q1 = (y[ib].qs[j] >> 4) | (int) (((qh >> (j + 16)) & 1) << 4);
                hist[q0 >> 1]++;
                hist[q1 >> 1]++;
            }
        }
    }
    return r;
}

size_t ggml_quantize_q8_0(const float * src, void * dst, int n, int k, int64_t * hist) {
    const size_t r = ggml_x_quantize_rows(ggml_x_quantize_row_q8_0_ref, GGML_TYPE_Q8_0, src, dst, n, k);
    if (hist != NULL && r > 0) {
        const block_q8_0 * y = (const block_q8_0 *) dst;
        for (int ib = 0; ib < n / QK8_0; ib++) {
            for (int j = 0; j < QK8_0; j++) {
                hist[(y[ib].qs[j] + 128) >> 4]++;
            }
        }
    }
    return r;
}

// the k-quants collect no histogram (as in the reference)
size_t ggml_quantize_q2_K(const float * src, void * dst, int n, int k, int64_t * hist) {
    (void) hist;
    return ggml_x_quantize_rows(ggml_x_quantize_row_q2_K_ref, GGML_TYPE_Q2_K, src, dst, n, k);
}

size_t ggml_quantize_q3_K(const float * src, void * dst, int n, int k, int64_t * hist) {
    (void) hist;
    return ggml_x_quantize_rows(ggml_x_quantize_row_q3_K_ref, GGML_TYPE_Q3_K, src, dst, n, k);
}

size_t ggml_quantize_q4_K(const float * src, void * dst, int n, int k, int64_t * hist) {
    (void) hist;
    return ggml_x_quantize_rows(ggml_x_quantize_row_q4_K_ref, GGML_TYPE_Q4_K, src, dst, n, k);
}

size_t ggml_quantize_q5_K(const float * src, void * dst, int n, int k, int64_t * hist) {
    (void) hist;
    return ggml_x_quantize_rows(ggml_x_quantize_row_q5_K_ref, GGML_TYPE_Q5_K, src, dst, n, k);
}

size_t ggml_quantize_q6_K(const float * src, void * dst, int n, int k, int64_t * hist) {
    (void) hist;
    return ggml_x_quantize_rows(ggml_x_quantize_row_q6_K_ref, GGML_TYPE_Q6_K, src, dst, n, k);
}

size_t ggml_quantize_chunk(enum ggml_type type, const float * src, void * dst,
        int start, int nrows, int n_per_row, int64_t * hist, const float * imatrix) {
    (void) imatrix; // the quantizers minimise the plain squared error
    if (!ggml_x_type_valid(type)) {
        ggml_x_error(NULL, "ggml_quantize_chunk: invalid type %d", (int) type);
        return 0;
    }
    const int blck = ggml_blck_size(type);
    if (n_per_row <= 0 || nrows < 0 || start < 0 || n_per_row % blck != 0 || start % n_per_row != 0) {
        ggml_x_error(NULL, "ggml_quantize_chunk: bad geometry for %s (start %d, nrows %d, n_per_row %d, block %d)",
                     ggml_type_name(type), start, nrows, n_per_row, blck);
        return 0;
    }
    const int n = nrows * n_per_row;
    const float * x = src + start;
    void * y = (char *) dst + (size_t) (start / blck) * ggml_type_size(type);
    switch (type) {
        case GGML_TYPE_Q4_0: return ggml_quantize_q4_0(x, y, n, n_per_row, hist);
        case GGML_TYPE_Q4_1: return ggml_quantize_q4_1(x, y, n, n_per_row, hist);
        case GGML_TYPE_Q5_0: return ggml_quantize_q5_0(x, y, n, n_per_row, hist);
        case GGML_TYPE_Q5_1: return ggml_quantize_q5_1(x, y, n, n_per_row, hist);
        case GGML_TYPE_Q8_0: return ggml_quantize_q8_0(x, y, n, n_per_row, hist);
        case GGML_TYPE_Q2_K: return ggml_quantize_q2_K(x, y, n, n_per_row, hist);
        case GGML_TYPE_Q3_K: return ggml_quantize_q3_K(x, y, n, n_per_row, hist);
        case GGML_TYPE_Q4_K: return ggml_quantize_q4_K(x, y, n, n_per_row, hist);
        case GGML_TYPE_Q5_K: return ggml_quantize_q5_K(x, y, n, n_per_row, hist);
        case GGML_TYPE_Q6_K: return ggml_quantize_q6_K(x, y, n, n_per_row, hist);
        case GGML_TYPE_F16:
            ggml_x_fp32_to_fp16_row_scalar(x, (ggml_fp16_t *) y, n);
            return (size_t) n * sizeof(ggml_fp16_t);
        case GGML_TYPE_F32:
            memcpy(y, x, (size_t) n * sizeof(float));
            return (size_t) n * sizeof(float);
        default:
            ggml_x_error(NULL, "ggml_quantize_chunk: quantization to %s is not supported", ggml_type_name(type));
            return 0;
    }
}
