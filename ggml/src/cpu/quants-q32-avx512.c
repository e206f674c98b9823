// quants-q32-avx512.c - AVX-512 VNNI dot products of the 32-element block types Q4_1 (with
// Q8_1), Q5_0 (with Q8_0) and Q5_1 (with Q8_1); scalar definitions in ggml-quants.c, AVX2 ones
// (kept by the plain AVX-512 level) in quants-q32-avx2.c. Only called after run-time detection.
//
// Two blocks per 512-bit vector, in element order (bytes 0..31 the first block, 32..63 the
// second): each block's 16 nibble bytes are broadcast to two 128-bit lanes and the second lane
// shifted right by 4. The fifth bits of Q5 are the two blocks' 32-bit qh fields joined into one
// 64-bit byte mask. Levels are unsigned, so one vpdpbusd gives the 16 int32 sums of 4 products
// (Q5_0's offset of 16 is a second vpdpbusd of 16 with the activations, subtracted). Scales are
// applied per block in float, accumulated per row, reduced once.

#if defined(__x86_64__)

#include "cpu/quants-simd.h"
#include "cpu/prefetch.h"
#include "ggml-quants.h"

#include <immintrin.h>
#include <string.h>

#define GGML_X_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#define GGML_X_VNNI_INLINE GGML_X_VNNI __attribute__((always_inline)) static inline

void ggml_x_quant_kernels_q32_vnni(struct ggml_x_quant_kernels * k);

// the nibbles of two blocks -> 64 bytes 0..15 in element order
GGML_X_VNNI_INLINE __m512i q32v_nibbles2(const uint8_t * qa, const uint8_t * qb) {
    const __m256i a = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) qa));
    const __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) qb));
    const __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
    // lanes 1 and 3 (the high nibbles) shifted right by 4
    const __m512i sh = _mm512_mask_srli_epi16(v, (__mmask32) 0xff00ff00u, v, 4);
    return _mm512_and_si512(sh, _mm512_set1_epi8(15));
}

// the fifth bits of two blocks as a byte mask (bit i = element i of the pair)
GGML_X_VNNI_INLINE __mmask64 q32v_bit4(const uint8_t * qha, const uint8_t * qhb) {
    uint32_t a, b;
    memcpy(&a, qha, 4);
    memcpy(&b, qhb, 4);
    return _cvtu64_mask64((uint64_t) a | ((uint64_t) b << 32));
}

GGML_X_VNNI_INLINE __m512i q32v_load2(const int8_t * ya, const int8_t * yb) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) ya)),
                              _mm256_loadu_si256((const __m256i *) yb), 1);
}

GGML_X_VNNI_INLINE __m512 q32v_scale2(float da, float db) {
    return _mm512_insertf32x8(_mm512_set1_ps(da), _mm256_set1_ps(db), 1);
}

GGML_X_VNNI static void ggml_x_vec_dot_q4_1_q8_1_vnni(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_1 * x = (const block_q4_1 *) vx;
    const block_q8_1 * y = (const block_q8_1 *) vy;
    const int nb = n / QK8_1;
    __m512 acc = _mm512_setzero_ps();
    float summ = 0.0f;
    int ib = 0;
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (; ib + 2 <= nb; ib += 2) {
        ggml_x_prefetch_far(x + ib, far, 2 * sizeof(*x));
        const __m512i u = q32v_nibbles2(x[ib].qs, x[ib + 1].qs);
        const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, q32v_load2(y[ib].qs, y[ib + 1].qs));
        const __m512 d = q32v_scale2(GGML_FP16_TO_FP32(x[ib].d) * y[ib].d, GGML_FP16_TO_FP32(x[ib + 1].d) * y[ib + 1].d);
        acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(p), acc);
        summ += GGML_FP16_TO_FP32(x[ib].m) * y[ib].s + GGML_FP16_TO_FP32(x[ib + 1].m) * y[ib + 1].s;
    }
    float sum = _mm512_reduce_add_ps(acc) + summ;
    for (; ib < nb; ib++) {
        int sumi = 0;
        for (int j = 0; j < QK8_1 / 2; j++) {
            sumi += (x[ib].qs[j] & 15) * y[ib].qs[j] + (x[ib].qs[j] >> 4) * y[ib].qs[j + QK8_1 / 2];
        }
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * y[ib].d) + GGML_FP16_TO_FP32(x[ib].m) * y[ib].s;
    }
    *s = sum;
}

GGML_X_VNNI static void ggml_x_vec_dot_q5_0_q8_0_vnni(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q5_0 * x = (const block_q5_0 *) vx;
    const block_q8_0 * y = (const block_q8_0 *) vy;
    const int nb = n / QK8_0;
    const __m512i sixteen = _mm512_set1_epi8(16);
    __m512 acc = _mm512_setzero_ps();
    int ib = 0;
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (; ib + 2 <= nb; ib += 2) {
        ggml_x_prefetch_far(x + ib, far, 2 * sizeof(*x));
        __m512i u = q32v_nibbles2(x[ib].qs, x[ib + 1].qs);
        u = _mm512_mask_add_epi8(u, q32v_bit4(x[ib].qh, x[ib + 1].qh), u, sixteen);
        const __m512i yv = q32v_load2(y[ib].qs, y[ib + 1].qs);
        // (u - 16) . y = u . y - 16 . y
        const __m512i p = _mm512_sub_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), u, yv),
                                           _mm512_dpbusd_epi32(_mm512_setzero_si512(), sixteen, yv));
        const __m512 d = q32v_scale2(GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d),
                                     GGML_FP16_TO_FP32(x[ib + 1].d) * GGML_FP16_TO_FP32(y[ib + 1].d));
        acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(p), acc);
    }
    float sum = _mm512_reduce_add_ps(acc);
    for (; ib < nb; ib++) {
        uint32_t qh;
        memcpy(&qh, x[ib].qh, 4);
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

GGML_X_VNNI static void ggml_x_vec_dot_q5_1_q8_1_vnni(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q5_1 * x = (const block_q5_1 *) vx;
    const block_q8_1 * y = (const block_q8_1 *) vy;
    const int nb = n / QK8_1;
    const __m512i sixteen = _mm512_set1_epi8(16);
    __m512 acc = _mm512_setzero_ps();
    float summ = 0.0f;
    int ib = 0;
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (; ib + 2 <= nb; ib += 2) {
        ggml_x_prefetch_far(x + ib, far, 2 * sizeof(*x));
        __m512i u = q32v_nibbles2(x[ib].qs, x[ib + 1].qs);
        u = _mm512_mask_add_epi8(u, q32v_bit4(x[ib].qh, x[ib + 1].qh), u, sixteen);
        const __m512i p = _mm512_dpbusd_epi32(_mm512_setzero_si512(), u, q32v_load2(y[ib].qs, y[ib + 1].qs));
        const __m512 d = q32v_scale2(GGML_FP16_TO_FP32(x[ib].d) * y[ib].d, GGML_FP16_TO_FP32(x[ib + 1].d) * y[ib + 1].d);
        acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(p), acc);
        summ += GGML_FP16_TO_FP32(x[ib].m) * y[ib].s + GGML_FP16_TO_FP32(x[ib + 1].m) * y[ib + 1].s;
    }
    float sum = _mm512_reduce_add_ps(acc) + summ;
    for (; ib < nb; ib++) {
        uint32_t qh;
        memcpy(&qh, x[ib].qh, 4);
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

void ggml_x_quant_kernels_q32_vnni(struct ggml_x_quant_kernels * k) {
    k->vec_dot_q4_1_q8_1 = ggml_x_vec_dot_q4_1_q8_1_vnni;
    k->vec_dot_q5_0_q8_0 = ggml_x_vec_dot_q5_0_q8_0_vnni;
    k->vec_dot_q5_1_q8_1 = ggml_x_vec_dot_q5_1_q8_1_vnni;
}

#endif // __x86_64__
