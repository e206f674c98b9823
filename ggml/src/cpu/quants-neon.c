// quants-neon.c - arm64 variants of the activation quantizers (q8_0, q8_K) and of the dot
// products q8_0.q8_0, q4_0.q8_0, q4_K.q8_K, q6_K.q8_K (the other types' dot products are in
// quants-more-neon.c, registered from here), in two levels: plain NEON (baseline
// of every AArch64 CPU) and NEON with the SDOT instruction (Armv8.2 dotprod extension). The
// dotprod functions carry a per-function target attribute, so the file builds with the
// default arm64 flags; they are only called after run-time detection (quants-dispatch.c).
//
// The quantizers produce the same bytes as the scalar ones (same products, same rounding
// rules: vcvtaq is roundf's half-away-from-zero, vcvtnq is lrintf's half-to-even). The dot
// products compute each block's integer sum exactly and then combine the blocks in float in
// the same order and with the same expressions as the scalar code.

#if defined(__aarch64__)

#include "cpu/quants-simd.h"
#include "ggml-quants.h"

#include <arm_neon.h>
#include <math.h>
#include <string.h>

#define GGML_X_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))

void ggml_x_quant_kernels_neon(struct ggml_x_quant_kernels * k);
void ggml_x_quant_kernels_neon_dotprod(struct ggml_x_quant_kernels * k);
void ggml_x_convert_kernels_neon(struct ggml_x_quant_kernels * k);

// ---------------------------------------------------------------------------------------------
// activation quantizers

static void ggml_x_quantize_row_q8_0_neon(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q8_0 * y = (block_q8_0 *) vy;
    const int nb = k / QK8_0;
    for (int ib = 0; ib < nb; ib++, x += QK8_0) {
        float32x4_t v[8];
        float32x4_t amaxv = vdupq_n_f32(0.0f);
        for (int j = 0; j < 8; j++) {
            v[j] = vld1q_f32(x + 4 * j);
            amaxv = vmaxq_f32(amaxv, vabsq_f32(v[j]));
        }
        const float d = vmaxvq_f32(amaxv) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = GGML_FP32_TO_FP16(d);
        const float32x4_t vid = vdupq_n_f32(id);
        for (int j = 0; j < 8; j += 4) {
            // round half away from zero, like roundf; the values are within [-127, 127]
            const int32x4_t q0 = vcvtaq_s32_f32(vmulq_f32(v[j + 0], vid));
            const int32x4_t q1 = vcvtaq_s32_f32(vmulq_f32(v[j + 1], vid));
            const int32x4_t q2 = vcvtaq_s32_f32(vmulq_f32(v[j + 2], vid));
            const int32x4_t q3 = vcvtaq_s32_f32(vmulq_f32(v[j + 3], vid));
            const int16x8_t h0 = vcombine_s16(vqmovn_s32(q0), vqmovn_s32(q1));
            const int16x8_t h1 = vcombine_s16(vqmovn_s32(q2), vqmovn_s32(q3));
            vst1q_s8(y[ib].qs + 4 * j, vcombine_s8(vqmovn_s16(h0), vqmovn_s16(h1)));
        }
    }
}

static void ggml_x_quantize_row_q8_K_neon(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q8_K * y = (block_q8_K *) vy;
    const int nb = k / QK_K;
    for (int ib = 0; ib < nb; ib++, x += QK_K) {
        float32x4_t amaxv = vdupq_n_f32(0.0f);
        for (int j = 0; j < QK_K; j += 4) {
            amaxv = vmaxq_f32(amaxv, vabsq_f32(vld1q_f32(x + j)));
        }
        const float amax = vmaxvq_f32(amaxv);
        if (amax == 0.0f) {
            memset(&y[ib], 0, sizeof(y[ib]));
            continue;
        }
        // the signed value of the first element of largest magnitude
        float max = 0.0f;
        for (int j = 0; j < QK_K; j++) {
            if (fabsf(x[j]) == amax) {
                max = x[j];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const float32x4_t vis = vdupq_n_f32(iscale);
        const int32x4_t lim = vdupq_n_s32(127);
        for (int j = 0; j < QK_K; j += 16) {
            // round half to even, like lrintf, then clamp the top at 127
            int32x4_t q[4];
            for (int u = 0; u < 4; u++) {
                q[u] = vminq_s32(vcvtnq_s32_f32(vmulq_f32(vis, vld1q_f32(x + j + 4 * u))), lim);
            }
            const int16x8_t h0 = vcombine_s16(vqmovn_s32(q[0]), vqmovn_s32(q[1]));
            const int16x8_t h1 = vcombine_s16(vqmovn_s32(q[2]), vqmovn_s32(q[3]));
            const int8x16_t b = vcombine_s8(vqmovn_s16(h0), vqmovn_s16(h1));
            vst1q_s8(y[ib].qs + j, b);
            y[ib].bsums[j / 16] = vaddlvq_s8(b);
        }
        y[ib].d = 1.0f / iscale;
    }
}

// ---------------------------------------------------------------------------------------------
// unpacking helpers shared by both levels (plain NEON; inlined into the dotprod functions)

// 16 packed nibbles of q4_0 -> elements 0..15 (low nibbles) and 16..31 (high nibbles), minus 8
static inline void ggml_x_unpack_q4_0_neon(const uint8_t * qs, int8x16_t * lo, int8x16_t * hi) {
    const uint8x16_t q = vld1q_u8(qs);
    const int8x16_t eight = vdupq_n_s8(8);
    *lo = vsubq_s8(vreinterpretq_s8_u8(vandq_u8(q, vdupq_n_u8(15))), eight);
    *hi = vsubq_s8(vreinterpretq_s8_u8(vshrq_n_u8(q, 4)), eight);
}

// chunk c (0..3) of a q4_K block: 32 bytes -> levels of sub-block 2c (low nibbles, q[0..1])
// and of sub-block 2c+1 (high nibbles, q[2..3]), 16 each
static inline void ggml_x_unpack_q4_K_chunk_neon(const uint8_t * qs, int8x16_t q[4]) {
    const uint8x16_t m4 = vdupq_n_u8(15);
    const uint8x16_t a = vld1q_u8(qs);
    const uint8x16_t b = vld1q_u8(qs + 16);
    q[0] = vreinterpretq_s8_u8(vandq_u8(a, m4));
    q[1] = vreinterpretq_s8_u8(vandq_u8(b, m4));
    q[2] = vreinterpretq_s8_u8(vshrq_n_u8(a, 4));
    q[3] = vreinterpretq_s8_u8(vshrq_n_u8(b, 4));
}

// half h of a q6_K block (128 elements) -> 8 vectors of 16 signed levels (minus 32) in element
// order: vector i covers sub-block 8h + i
static inline void ggml_x_unpack_q6_K_half_neon(const uint8_t * ql, const uint8_t * qh, int8x16_t q[8]) {
    const uint8x16_t m4 = vdupq_n_u8(15);
    const uint8x16_t m30 = vdupq_n_u8(0x30);
    const int8x16_t bias = vdupq_n_s8(32);
    for (int t = 0; t < 2; t++) {
        const uint8x16_t l0 = vld1q_u8(ql + 16 * t);      // elements 16t.. (low) and 64+16t.. (high)
        const uint8x16_t l1 = vld1q_u8(ql + 32 + 16 * t); // elements 32+16t.. and 96+16t..
        const uint8x16_t hb = vld1q_u8(qh + 16 * t);      // 2-bit high parts of all four
        const uint8x16_t u0 = vorrq_u8(vandq_u8(l0, m4), vandq_u8(vshlq_n_u8(hb, 4), m30));
        const uint8x16_t u1 = vorrq_u8(vandq_u8(l1, m4), vandq_u8(vshlq_n_u8(hb, 2), m30));
        const uint8x16_t u2 = vorrq_u8(vshrq_n_u8(l0, 4), vandq_u8(hb, m30));
        const uint8x16_t u3 = vorrq_u8(vshrq_n_u8(l1, 4), vandq_u8(vshrq_n_u8(hb, 2), m30));
        q[0 + t] = vsubq_s8(vreinterpretq_s8_u8(u0), bias);
        q[2 + t] = vsubq_s8(vreinterpretq_s8_u8(u1), bias);
        q[4 + t] = vsubq_s8(vreinterpretq_s8_u8(u2), bias);
        q[6 + t] = vsubq_s8(vreinterpretq_s8_u8(u3), bias);
    }
}

// q4_K: sum over sub-blocks of min * (sum of the activations), from the q8_K group sums
static inline int ggml_x_q4_K_mins_neon(const block_q4_K * x, const block_q8_K * y, uint8_t sc[8]) {
    int summ = 0;
    for (int j = 0; j < 8; j++) {
        uint8_t mn;
        ggml_x_get_scale_min_k4(j, x->scales, &sc[j], &mn);
        summ += mn * (y->bsums[2 * j] + y->bsums[2 * j + 1]);
    }
    return summ;
}

// ---------------------------------------------------------------------------------------------
// dot products, plain NEON: widening multiplies, pairwise accumulation into int32 lanes

// acc + the 16 products a*b, summed pairwise into the 4 int32 lanes (exact: each int16
// product is at most 2^14 in magnitude)
static inline int32x4_t ggml_x_dot16_neon(int32x4_t acc, int8x16_t a, int8x16_t b) {
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
}

static void ggml_x_vec_dot_q8_0_q8_0_neon(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q8_0 * x = (const block_q8_0 *) vx;
    const block_q8_0 * y = (const block_q8_0 *) vy;
    const int nb = n / QK8_0;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        int32x4_t acc = vdupq_n_s32(0);
        acc = ggml_x_dot16_neon(acc, vld1q_s8(x[ib].qs), vld1q_s8(y[ib].qs));
        acc = ggml_x_dot16_neon(acc, vld1q_s8(x[ib].qs + 16), vld1q_s8(y[ib].qs + 16));
        const int sumi = vaddvq_s32(acc);
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d));
    }
    *s = sum;
}

static void ggml_x_vec_dot_q4_0_q8_0_neon(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_0 * x = (const block_q4_0 *) vx;
    const block_q8_0 * y = (const block_q8_0 *) vy;
    const int nb = n / QK8_0;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        int8x16_t lo, hi;
        ggml_x_unpack_q4_0_neon(x[ib].qs, &lo, &hi);
        int32x4_t acc = vdupq_n_s32(0);
        acc = ggml_x_dot16_neon(acc, lo, vld1q_s8(y[ib].qs));
        acc = ggml_x_dot16_neon(acc, hi, vld1q_s8(y[ib].qs + 16));
        const int sumi = vaddvq_s32(acc);
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d));
    }
    *s = sum;
}

static void ggml_x_vec_dot_q4_K_q8_K_neon(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_K * x = (const block_q4_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        uint8_t sc[8];
        const int summ = ggml_x_q4_K_mins_neon(&x[ib], &y[ib], sc);
        int sumi = 0;
        for (int c = 0; c < 4; c++) {
            int8x16_t q[4];
            ggml_x_unpack_q4_K_chunk_neon(x[ib].qs + 32 * c, q);
            const int8_t * qy = y[ib].qs + 64 * c;
            int32x4_t lo = vdupq_n_s32(0), hi = vdupq_n_s32(0);
            lo = ggml_x_dot16_neon(lo, q[0], vld1q_s8(qy));
            lo = ggml_x_dot16_neon(lo, q[1], vld1q_s8(qy + 16));
            hi = ggml_x_dot16_neon(hi, q[2], vld1q_s8(qy + 32));
            hi = ggml_x_dot16_neon(hi, q[3], vld1q_s8(qy + 48));
            sumi += sc[2 * c] * vaddvq_s32(lo) + sc[2 * c + 1] * vaddvq_s32(hi);
        }
        const float dy = y[ib].d;
        sum += dy * GGML_FP16_TO_FP32(x[ib].d) * (float) sumi - dy * GGML_FP16_TO_FP32(x[ib].dmin) * (float) summ;
    }
    *s = sum;
}

static void ggml_x_vec_dot_q6_K_q8_K_neon(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q6_K * x = (const block_q6_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        int sumi = 0;
        for (int h = 0; h < 2; h++) {
            int8x16_t q[8];
            ggml_x_unpack_q6_K_half_neon(x[ib].ql + 64 * h, x[ib].qh + 32 * h, q);
            const int8_t * qy = y[ib].qs + 128 * h;
            for (int i = 0; i < 8; i++) {
                const int32x4_t acc = ggml_x_dot16_neon(vdupq_n_s32(0), q[i], vld1q_s8(qy + 16 * i));
                sumi += x[ib].scales[8 * h + i] * vaddvq_s32(acc);
            }
        }
        sum += y[ib].d * GGML_FP16_TO_FP32(x[ib].d) * (float) sumi;
    }
    *s = sum;
}

// ---------------------------------------------------------------------------------------------
// dot products with SDOT: each instruction sums four int8 products into each int32 lane

GGML_X_DOTPROD static void ggml_x_vec_dot_q8_0_q8_0_dotprod(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q8_0 * x = (const block_q8_0 *) vx;
    const block_q8_0 * y = (const block_q8_0 *) vy;
    const int nb = n / QK8_0;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        int32x4_t acc = vdupq_n_s32(0);
        acc = vdotq_s32(acc, vld1q_s8(x[ib].qs), vld1q_s8(y[ib].qs));
        acc = vdotq_s32(acc, vld1q_s8(x[ib].qs + 16), vld1q_s8(y[ib].qs + 16));
        const int sumi = vaddvq_s32(acc);
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d));
    }
    *s = sum;
}

GGML_X_DOTPROD static void ggml_x_vec_dot_q4_0_q8_0_dotprod(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_0 * x = (const block_q4_0 *) vx;
    const block_q8_0 * y = (const block_q8_0 *) vy;
    const int nb = n / QK8_0;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        int8x16_t lo, hi;
        ggml_x_unpack_q4_0_neon(x[ib].qs, &lo, &hi);
        int32x4_t acc = vdupq_n_s32(0);
        acc = vdotq_s32(acc, lo, vld1q_s8(y[ib].qs));
        acc = vdotq_s32(acc, hi, vld1q_s8(y[ib].qs + 16));
        const int sumi = vaddvq_s32(acc);
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d));
    }
    *s = sum;
}

GGML_X_DOTPROD static void ggml_x_vec_dot_q4_K_q8_K_dotprod(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_K * x = (const block_q4_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        uint8_t sc[8];
        const int summ = ggml_x_q4_K_mins_neon(&x[ib], &y[ib], sc);
        int sumi = 0;
        for (int c = 0; c < 4; c++) {
            int8x16_t q[4];
            ggml_x_unpack_q4_K_chunk_neon(x[ib].qs + 32 * c, q);
            const int8_t * qy = y[ib].qs + 64 * c;
            int32x4_t lo = vdupq_n_s32(0), hi = vdupq_n_s32(0);
            lo = vdotq_s32(lo, q[0], vld1q_s8(qy));
            lo = vdotq_s32(lo, q[1], vld1q_s8(qy + 16));
            hi = vdotq_s32(hi, q[2], vld1q_s8(qy + 32));
            hi = vdotq_s32(hi, q[3], vld1q_s8(qy + 48));
            sumi += sc[2 * c] * vaddvq_s32(lo) + sc[2 * c + 1] * vaddvq_s32(hi);
        }
        const float dy = y[ib].d;
        sum += dy * GGML_FP16_TO_FP32(x[ib].d) * (float) sumi - dy * GGML_FP16_TO_FP32(x[ib].dmin) * (float) summ;
    }
    *s = sum;
}

GGML_X_DOTPROD static void ggml_x_vec_dot_q6_K_q8_K_dotprod(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q6_K * x = (const block_q6_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    float sum = 0.0f;
    for (int ib = 0; ib < nb; ib++) {
        int sumi = 0;
        for (int h = 0; h < 2; h++) {
            int8x16_t q[8];
            ggml_x_unpack_q6_K_half_neon(x[ib].ql + 64 * h, x[ib].qh + 32 * h, q);
            const int8_t * qy = y[ib].qs + 128 * h;
            for (int i = 0; i < 8; i++) {
                const int32x4_t acc = vdotq_s32(vdupq_n_s32(0), q[i], vld1q_s8(qy + 16 * i));
                sumi += x[ib].scales[8 * h + i] * vaddvq_s32(acc);
            }
        }
        sum += y[ib].d * GGML_FP16_TO_FP32(x[ib].d) * (float) sumi;
    }
    *s = sum;
}

// ---------------------------------------------------------------------------------------------
// level tables

void ggml_x_quant_kernels_neon(struct ggml_x_quant_kernels * k) {
    k->quantize_row_q8_0 = ggml_x_quantize_row_q8_0_neon;
    k->quantize_row_q8_K = ggml_x_quantize_row_q8_K_neon;
    k->vec_dot_q8_0_q8_0 = ggml_x_vec_dot_q8_0_q8_0_neon;
    k->vec_dot_q4_0_q8_0 = ggml_x_vec_dot_q4_0_q8_0_neon;
    k->vec_dot_q4_K_q8_K = ggml_x_vec_dot_q4_K_q8_K_neon;
    k->vec_dot_q6_K_q8_K = ggml_x_vec_dot_q6_K_q8_K_neon;
    ggml_x_quant_kernels_more_neon(k);
    ggml_x_convert_kernels_neon(k);
}

// on top of the NEON entries
void ggml_x_quant_kernels_neon_dotprod(struct ggml_x_quant_kernels * k) {
    k->vec_dot_q8_0_q8_0 = ggml_x_vec_dot_q8_0_q8_0_dotprod;
    k->vec_dot_q4_0_q8_0 = ggml_x_vec_dot_q4_0_q8_0_dotprod;
    k->vec_dot_q4_K_q8_K = ggml_x_vec_dot_q4_K_q8_K_dotprod;
    k->vec_dot_q6_K_q8_K = ggml_x_vec_dot_q6_K_q8_K_dotprod;
    ggml_x_quant_kernels_more_neon_dotprod(k);
}

#endif // __aarch64__
