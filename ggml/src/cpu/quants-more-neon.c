// quants-more-neon.c - arm64 dot products of the types quants-neon.c leaves scalar: Q4_1 and
// Q5_1 (with Q8_1), Q5_0 (with Q8_0), Q2_K, Q3_K and Q5_K (with Q8_K), in the two levels of
// quants-neon.c: plain NEON (widening multiplies, pairwise accumulation) and NEON with SDOT
// (per-function target attribute; called only after run-time detection).
//
// The levels are unpacked to bytes in element order and multiplied with the activation bytes
// into int32 lanes (exact). 16-element sub-blocks keep their own int32x4 and are scaled with
// one multiply-accumulate by their (scalar) scale; the offsets (mins, Q3_K's -4) go through the
// activation sums. Blocks are combined in a float vector per row and reduced once.

#if defined(__aarch64__)

#include "cpu/quants-simd.h"
#include "ggml-quants.h"

#include <arm_neon.h>
#include <string.h>

#define GGML_X_DOTPROD __attribute__((target("arch=armv8.2-a+dotprod")))

void ggml_x_quant_kernels_more_neon(struct ggml_x_quant_kernels * k);
void ggml_x_quant_kernels_more_neon_dotprod(struct ggml_x_quant_kernels * k);

// acc + the 16 products a*b summed into 4 int32 lanes (levels < 64, activations within int8)
static inline int32x4_t mn_dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
}

GGML_X_DOTPROD static inline int32x4_t mn_sdot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
    return vdotq_s32(acc, a, b);
}

// bytes 0..15 of the result: 16 where bit i of the 16 bits h has is set, else 0
static inline uint8x16_t mn_bits16(uint32_t h) {
    static const uint8_t bit[16] = { 1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128 };
    const uint8x16_t v = vcombine_u8(vdup_n_u8((uint8_t) (h & 255)), vdup_n_u8((uint8_t) ((h >> 8) & 255)));
    return vandq_u8(vtstq_u8(v, vld1q_u8(bit)), vdupq_n_u8(16));
}

static inline int8x16_t mn_s8(uint8x16_t v) {
    return vreinterpretq_s8_u8(v);
}

// ---------------------------------------------------------------------------------------------
// the kernels, once per level (DOT: mn_dot16 or mn_sdot16)

#define MN_DEFINE_KERNELS(SUFFIX, ATTR, DOT) \
\
ATTR static void ggml_x_vec_dot_q4_1_q8_1_##SUFFIX(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) { \
    const block_q4_1 * x = (const block_q4_1 *) vx; \
    const block_q8_1 * y = (const block_q8_1 *) vy; \
    const int nb = n / QK8_1; \
    float32x4_t acc = vdupq_n_f32(0.0f); \
    float summ = 0.0f; \
    for (int ib = 0; ib < nb; ib++) { \
        const uint8x16_t q = vld1q_u8(x[ib].qs); \
        int32x4_t d = DOT(vdupq_n_s32(0), mn_s8(vandq_u8(q, vdupq_n_u8(15))), vld1q_s8(y[ib].qs)); \
        d = DOT(d, mn_s8(vshrq_n_u8(q, 4)), vld1q_s8(y[ib].qs + 16)); \
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(d), GGML_FP16_TO_FP32(x[ib].d) * y[ib].d); \
        summ += GGML_FP16_TO_FP32(x[ib].m) * y[ib].s; \
    } \
    *s = vaddvq_f32(acc) + summ; \
} \
\
ATTR static void ggml_x_vec_dot_q5_0_q8_0_##SUFFIX(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) { \
    const block_q5_0 * x = (const block_q5_0 *) vx; \
    const block_q8_0 * y = (const block_q8_0 *) vy; \
    const int nb = n / QK8_0; \
    const int8x16_t sixteen = vdupq_n_s8(16); \
    float32x4_t acc = vdupq_n_f32(0.0f); \
    for (int ib = 0; ib < nb; ib++) { \
        uint32_t qh; \
        memcpy(&qh, x[ib].qh, 4); \
        const uint8x16_t q = vld1q_u8(x[ib].qs); \
        const int8x16_t lo = vsubq_s8(mn_s8(vorrq_u8(vandq_u8(q, vdupq_n_u8(15)), mn_bits16(qh))), sixteen); \
        const int8x16_t hi = vsubq_s8(mn_s8(vorrq_u8(vshrq_n_u8(q, 4), mn_bits16(qh >> 16))), sixteen); \
        int32x4_t d = DOT(vdupq_n_s32(0), lo, vld1q_s8(y[ib].qs)); \
        d = DOT(d, hi, vld1q_s8(y[ib].qs + 16)); \
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(d), GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d)); \
    } \
    *s = vaddvq_f32(acc); \
} \
\
ATTR static void ggml_x_vec_dot_q5_1_q8_1_##SUFFIX(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) { \
    const block_q5_1 * x = (const block_q5_1 *) vx; \
    const block_q8_1 * y = (const block_q8_1 *) vy; \
    const int nb = n / QK8_1; \
    float32x4_t acc = vdupq_n_f32(0.0f); \
    float summ = 0.0f; \
    for (int ib = 0; ib < nb; ib++) { \
        uint32_t qh; \
        memcpy(&qh, x[ib].qh, 4); \
        const uint8x16_t q = vld1q_u8(x[ib].qs); \
        const int8x16_t lo = mn_s8(vorrq_u8(vandq_u8(q, vdupq_n_u8(15)), mn_bits16(qh))); \
        const int8x16_t hi = mn_s8(vorrq_u8(vshrq_n_u8(q, 4), mn_bits16(qh >> 16))); \
        int32x4_t d = DOT(vdupq_n_s32(0), lo, vld1q_s8(y[ib].qs)); \
        d = DOT(d, hi, vld1q_s8(y[ib].qs + 16)); \
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(d), GGML_FP16_TO_FP32(x[ib].d) * y[ib].d); \
        summ += GGML_FP16_TO_FP32(x[ib].m) * y[ib].s; \
    } \
    *s = vaddvq_f32(acc) + summ; \
} \
\
/* Q2_K / Q3_K: element 128h + 32k + l is bits 2k of qs[32h + l] (Q3_K: plus bit 4h + k of \
   hmask[l] as bit 2); sub-block 8h + 2k + (l >= 16) */ \
ATTR static inline int32x4_t mn_q23_K_##SUFFIX(const uint8_t * qs, const uint8_t * hmask, const int8_t * sc, \
                                                const int8_t * qy) { \
    int32x4_t isum = vdupq_n_s32(0); \
    const uint8x16_t m3 = vdupq_n_u8(3); \
    const uint8x16_t h0 = hmask ? vld1q_u8(hmask) : vdupq_n_u8(0); \
    const uint8x16_t h1 = hmask ? vld1q_u8(hmask + 16) : vdupq_n_u8(0); \
    for (int h = 0; h < 2; h++) { \
        const uint8x16_t a = vld1q_u8(qs + 32 * h); \
        const uint8x16_t b = vld1q_u8(qs + 32 * h + 16); \
        for (int k = 0; k < 4; k++) { \
            const int8x16_t sh = vdupq_n_s8((int8_t) (-2 * k)); \
            uint8x16_t qa = vandq_u8(vshlq_u8(a, sh), m3); \
            uint8x16_t qb = vandq_u8(vshlq_u8(b, sh), m3); \
            if (hmask) { \
                /* bit 4h + k to bit 2 */ \
                const int8x16_t hs = vdupq_n_s8((int8_t) (2 - (4 * h + k))); \
                qa = vorrq_u8(qa, vandq_u8(vshlq_u8(h0, hs), vdupq_n_u8(4))); \
                qb = vorrq_u8(qb, vandq_u8(vshlq_u8(h1, hs), vdupq_n_u8(4))); \
            } \
            const int8_t * y = qy + 128 * h + 32 * k; \
            const int sb = 8 * h + 2 * k; \
            isum = vmlaq_n_s32(isum, DOT(vdupq_n_s32(0), mn_s8(qa), vld1q_s8(y)), sc[sb]); \
            isum = vmlaq_n_s32(isum, DOT(vdupq_n_s32(0), mn_s8(qb), vld1q_s8(y + 16)), sc[sb + 1]); \
        } \
    } \
    return isum; \
} \
\
ATTR static void ggml_x_vec_dot_q2_K_q8_K_##SUFFIX(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) { \
    const block_q2_K * x = (const block_q2_K *) vx; \
    const block_q8_K * y = (const block_q8_K *) vy; \
    const int nb = n / QK_K; \
    float32x4_t acc = vdupq_n_f32(0.0f); \
    float summ = 0.0f; \
    for (int ib = 0; ib < nb; ib++) { \
        const uint8x16_t scb = vld1q_u8(x[ib].scales); \
        int8_t sc[16]; \
        vst1q_s8(sc, mn_s8(vandq_u8(scb, vdupq_n_u8(15)))); \
        /* mins against the activation sums */ \
        const uint8x16_t mn = vshrq_n_u8(scb, 4); \
        const int16x8_t m0 = vreinterpretq_s16_u16(vmovl_u8(vget_low_u8(mn))); \
        const int16x8_t m1 = vreinterpretq_s16_u16(vmovl_high_u8(mn)); \
        const int16x8_t b0 = vld1q_s16(y[ib].bsums), b1 = vld1q_s16(y[ib].bsums + 8); \
        int32x4_t ms = vmull_s16(vget_low_s16(m0), vget_low_s16(b0)); \
        ms = vmlal_high_s16(ms, m0, b0); \
        ms = vmlal_s16(ms, vget_low_s16(m1), vget_low_s16(b1)); \
        ms = vmlal_high_s16(ms, m1, b1); \
        const int32x4_t isum = mn_q23_K_##SUFFIX(x[ib].qs, NULL, sc, y[ib].qs); \
        const float dy = y[ib].d; \
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(isum), dy * GGML_FP16_TO_FP32(x[ib].d)); \
        summ += dy * GGML_FP16_TO_FP32(x[ib].dmin) * (float) vaddvq_s32(ms); \
    } \
    *s = vaddvq_f32(acc) - summ; \
} \
\
ATTR static void ggml_x_vec_dot_q3_K_q8_K_##SUFFIX(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) { \
    const block_q3_K * x = (const block_q3_K *) vx; \
    const block_q8_K * y = (const block_q8_K *) vy; \
    const int nb = n / QK_K; \
    float32x4_t acc = vdupq_n_f32(0.0f); \
    for (int ib = 0; ib < nb; ib++) { \
        int8_t sc[16]; \
        ggml_x_get_scales_q3_K(x[ib].scales, sc); \
        /* levels are value + 4: subtract 4 * scale * sub-block activation sum */ \
        const int8x16_t scv = vld1q_s8(sc); \
        const int16x8_t s0 = vmovl_s8(vget_low_s8(scv)), s1 = vmovl_high_s8(scv); \
        const int16x8_t b0 = vld1q_s16(y[ib].bsums), b1 = vld1q_s16(y[ib].bsums + 8); \
        int32x4_t corr = vmull_s16(vget_low_s16(s0), vget_low_s16(b0)); \
        corr = vmlal_high_s16(corr, s0, b0); \
        corr = vmlal_s16(corr, vget_low_s16(s1), vget_low_s16(b1)); \
        corr = vmlal_high_s16(corr, s1, b1); \
        const int32x4_t isum = vsubq_s32(mn_q23_K_##SUFFIX(x[ib].qs, x[ib].hmask, sc, y[ib].qs), vshlq_n_s32(corr, 2)); \
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(isum), y[ib].d * GGML_FP16_TO_FP32(x[ib].d)); \
    } \
    *s = vaddvq_f32(acc); \
} \
\
/* Q5_K: element 64c + l = low nibble of qs[32c + l] | bit 2c of qh[l] << 4, element \
   64c + 32 + l = high nibble | bit 2c + 1 << 4; sub-blocks of 32 */ \
ATTR static void ggml_x_vec_dot_q5_K_q8_K_##SUFFIX(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) { \
    const block_q5_K * x = (const block_q5_K *) vx; \
    const block_q8_K * y = (const block_q8_K *) vy; \
    const int nb = n / QK_K; \
    const uint8x16_t m4 = vdupq_n_u8(15), m16 = vdupq_n_u8(16); \
    float32x4_t acc = vdupq_n_f32(0.0f); \
    float summ = 0.0f; \
    for (int ib = 0; ib < nb; ib++) { \
        uint8_t sc[8]; \
        int mins = 0; \
        for (int j = 0; j < 8; j++) { \
            uint8_t mn; \
            ggml_x_get_scale_min_k4(j, x[ib].scales, &sc[j], &mn); \
            mins += mn * (y[ib].bsums[2 * j] + y[ib].bsums[2 * j + 1]); \
        } \
        const uint8x16_t h0 = vld1q_u8(x[ib].qh), h1 = vld1q_u8(x[ib].qh + 16); \
        int32x4_t isum = vdupq_n_s32(0); \
        for (int c = 0; c < 4; c++) { \
            const uint8x16_t a = vld1q_u8(x[ib].qs + 32 * c), b = vld1q_u8(x[ib].qs + 32 * c + 16); \
            const int8x16_t sl = vdupq_n_s8((int8_t) (4 - 2 * c)), sh = vdupq_n_s8((int8_t) (3 - 2 * c)); \
            const uint8x16_t la = vorrq_u8(vandq_u8(a, m4), vandq_u8(vshlq_u8(h0, sl), m16)); \
            const uint8x16_t lb = vorrq_u8(vandq_u8(b, m4), vandq_u8(vshlq_u8(h1, sl), m16)); \
            const uint8x16_t ha = vorrq_u8(vshrq_n_u8(a, 4), vandq_u8(vshlq_u8(h0, sh), m16)); \
            const uint8x16_t hb = vorrq_u8(vshrq_n_u8(b, 4), vandq_u8(vshlq_u8(h1, sh), m16)); \
            const int8_t * qy = y[ib].qs + 64 * c; \
            int32x4_t dl = DOT(vdupq_n_s32(0), mn_s8(la), vld1q_s8(qy)); \
            dl = DOT(dl, mn_s8(lb), vld1q_s8(qy + 16)); \
            int32x4_t dh = DOT(vdupq_n_s32(0), mn_s8(ha), vld1q_s8(qy + 32)); \
            dh = DOT(dh, mn_s8(hb), vld1q_s8(qy + 48)); \
            isum = vmlaq_n_s32(isum, dl, sc[2 * c]); \
            isum = vmlaq_n_s32(isum, dh, sc[2 * c + 1]); \
        } \
        const float dy = y[ib].d; \
        acc = vfmaq_n_f32(acc, vcvtq_f32_s32(isum), dy * GGML_FP16_TO_FP32(x[ib].d)); \
        summ += dy * GGML_FP16_TO_FP32(x[ib].dmin) * (float) mins; \
    } \
    *s = vaddvq_f32(acc) - summ; \
}

MN_DEFINE_KERNELS(neon, , mn_dot16)
MN_DEFINE_KERNELS(dotprod, GGML_X_DOTPROD, mn_sdot16)

void ggml_x_quant_kernels_more_neon(struct ggml_x_quant_kernels * k) {
    k->vec_dot_q4_1_q8_1 = ggml_x_vec_dot_q4_1_q8_1_neon;
    k->vec_dot_q5_0_q8_0 = ggml_x_vec_dot_q5_0_q8_0_neon;
    k->vec_dot_q5_1_q8_1 = ggml_x_vec_dot_q5_1_q8_1_neon;
    k->vec_dot_q2_K_q8_K = ggml_x_vec_dot_q2_K_q8_K_neon;
    k->vec_dot_q3_K_q8_K = ggml_x_vec_dot_q3_K_q8_K_neon;
    k->vec_dot_q5_K_q8_K = ggml_x_vec_dot_q5_K_q8_K_neon;
}

void ggml_x_quant_kernels_more_neon_dotprod(struct ggml_x_quant_kernels * k) {
    k->vec_dot_q4_1_q8_1 = ggml_x_vec_dot_q4_1_q8_1_dotprod;
    k->vec_dot_q5_0_q8_0 = ggml_x_vec_dot_q5_0_q8_0_dotprod;
    k->vec_dot_q5_1_q8_1 = ggml_x_vec_dot_q5_1_q8_1_dotprod;
    k->vec_dot_q2_K_q8_K = ggml_x_vec_dot_q2_K_q8_K_dotprod;
    k->vec_dot_q3_K_q8_K = ggml_x_vec_dot_q3_K_q8_K_dotprod;
    k->vec_dot_q5_K_q8_K = ggml_x_vec_dot_q5_K_q8_K_dotprod;
}

#endif // __aarch64__
