// quants-q32-avx2.c - AVX2 dot products of the 32-element block types Q4_1 (with Q8_1), Q5_0
// (with Q8_0) and Q5_1 (with Q8_1); the scalar definitions are in ggml-quants.c. Compiled with
// per-function target attributes; only called after run-time detection (quants-dispatch.c).
//
// A block's 32 levels become 32 bytes in element order (low nibbles are elements 0..15, high
// nibbles 16..31; the fifth bits of Q5 come from the 32-bit qh, bit i for element i). The
// integer dot product of a block is converted to float and accumulated with its scale product
// in one float vector per row; the offset terms of Q4_1 / Q5_1 (m * s of the activation block)
// are accumulated apart. Two blocks per iteration, with two accumulators, keep the dependency
// chains short; one reduction at the end.

#if defined(__x86_64__)

#include "cpu/quants-simd.h"
#include "cpu/prefetch.h"
#include "ggml-quants.h"

#include <immintrin.h>
#include <string.h>

#define GGML_X_AVX2 __attribute__((target("avx2,fma,f16c")))
#define GGML_X_AVX2_INLINE GGML_X_AVX2 __attribute__((always_inline)) static inline

void ggml_x_quant_kernels_q32_avx2(struct ggml_x_quant_kernels * k);

GGML_X_AVX2_INLINE float q32_hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// 16 packed nibbles -> 32 bytes 0..15 in element order
GGML_X_AVX2_INLINE __m256i q32_nibbles(const uint8_t * qs) {
    const __m128i q = _mm_loadu_si128((const __m128i *) qs);
    return _mm256_and_si256(_mm256_setr_m128i(q, _mm_srli_epi16(q, 4)), _mm256_set1_epi8(15));
}

// the 32 bits of qh -> 16 in byte i where bit i is set, else 0
GGML_X_AVX2_INLINE __m256i q32_bit4(const uint8_t * qh) {
    uint32_t h;
    memcpy(&h, qh, 4);
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
                                            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x((long long) 0x8040201008040201ull);
    const __m256i b = _mm256_and_si256(_mm256_shuffle_epi8(_mm256_set1_epi32((int) h), spread), bit);
    return _mm256_and_si256(_mm256_cmpeq_epi8(b, bit), _mm256_set1_epi8(16));
}

// 8 int32 sums of 4 products of unsigned bytes u (< 128) and signed bytes of y
GGML_X_AVX2_INLINE __m256 q32_dot_u(__m256i u, const int8_t * y) {
    const __m256i p = _mm256_maddubs_epi16(u, _mm256_loadu_si256((const __m256i *) y));
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}

// the same for signed levels q (|q| <= 16): |q| times y with q's sign
GGML_X_AVX2_INLINE __m256 q32_dot_s(__m256i q, const int8_t * y) {
    const __m256i yv = _mm256_loadu_si256((const __m256i *) y);
    const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(q, q), _mm256_sign_epi8(yv, q));
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(p, _mm256_set1_epi16(1)));
}

GGML_X_AVX2 static void ggml_x_vec_dot_q4_1_q8_1_avx2(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_1 * x = (const block_q4_1 *) vx;
    const block_q8_1 * y = (const block_q8_1 *) vy;
    const int nb = n / QK8_1;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    float summ = 0.0f;
    int ib = 0;
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (; ib + 2 <= nb; ib += 2) {
        ggml_x_prefetch_far(x + ib, far, 2 * sizeof(*x));
        const __m256 f0 = q32_dot_u(q32_nibbles(x[ib].qs), y[ib].qs);
        const __m256 f1 = q32_dot_u(q32_nibbles(x[ib + 1].qs), y[ib + 1].qs);
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(GGML_FP16_TO_FP32(x[ib].d) * y[ib].d), f0, acc0);
        acc1 = _mm256_fmadd_ps(_mm256_set1_ps(GGML_FP16_TO_FP32(x[ib + 1].d) * y[ib + 1].d), f1, acc1);
        summ += GGML_FP16_TO_FP32(x[ib].m) * y[ib].s + GGML_FP16_TO_FP32(x[ib + 1].m) * y[ib + 1].s;
    }
    for (; ib < nb; ib++) {
        const __m256 f0 = q32_dot_u(q32_nibbles(x[ib].qs), y[ib].qs);
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(GGML_FP16_TO_FP32(x[ib].d) * y[ib].d), f0, acc0);
        summ += GGML_FP16_TO_FP32(x[ib].m) * y[ib].s;
    }
    *s = q32_hsum_ps(_mm256_add_ps(acc0, acc1)) + summ;
}

// Q5_0 levels: nibble | bit4, minus 16
GGML_X_AVX2_INLINE __m256i q32_q5_0(const block_q5_0 * b) {
    return _mm256_sub_epi8(_mm256_or_si256(q32_nibbles(b->qs), q32_bit4(b->qh)), _mm256_set1_epi8(16));
}

GGML_X_AVX2 static void ggml_x_vec_dot_q5_0_q8_0_avx2(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q5_0 * x = (const block_q5_0 *) vx;
    const block_q8_0 * y = (const block_q8_0 *) vy;
    const int nb = n / QK8_0;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int ib = 0;
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (; ib + 2 <= nb; ib += 2) {
        ggml_x_prefetch_far(x + ib, far, 2 * sizeof(*x));
        const __m256 f0 = q32_dot_s(q32_q5_0(&x[ib]), y[ib].qs);
        const __m256 f1 = q32_dot_s(q32_q5_0(&x[ib + 1]), y[ib + 1].qs);
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d)), f0, acc0);
        acc1 = _mm256_fmadd_ps(_mm256_set1_ps(GGML_FP16_TO_FP32(x[ib + 1].d) * GGML_FP16_TO_FP32(y[ib + 1].d)), f1, acc1);
    }
    for (; ib < nb; ib++) {
        const __m256 f0 = q32_dot_s(q32_q5_0(&x[ib]), y[ib].qs);
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d)), f0, acc0);
    }
    *s = q32_hsum_ps(_mm256_add_ps(acc0, acc1));
}

GGML_X_AVX2 static void ggml_x_vec_dot_q5_1_q8_1_avx2(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q5_1 * x = (const block_q5_1 *) vx;
    const block_q8_1 * y = (const block_q8_1 *) vy;
    const int nb = n / QK8_1;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    float summ = 0.0f;
    int ib = 0;
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (; ib + 2 <= nb; ib += 2) {
        ggml_x_prefetch_far(x + ib, far, 2 * sizeof(*x));
        const __m256i u0 = _mm256_or_si256(q32_nibbles(x[ib].qs), q32_bit4(x[ib].qh));
        const __m256i u1 = _mm256_or_si256(q32_nibbles(x[ib + 1].qs), q32_bit4(x[ib + 1].qh));
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(GGML_FP16_TO_FP32(x[ib].d) * y[ib].d), q32_dot_u(u0, y[ib].qs), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_set1_ps(GGML_FP16_TO_FP32(x[ib + 1].d) * y[ib + 1].d), q32_dot_u(u1, y[ib + 1].qs), acc1);
        summ += GGML_FP16_TO_FP32(x[ib].m) * y[ib].s + GGML_FP16_TO_FP32(x[ib + 1].m) * y[ib + 1].s;
    }
    for (; ib < nb; ib++) {
        const __m256i u0 = _mm256_or_si256(q32_nibbles(x[ib].qs), q32_bit4(x[ib].qh));
        acc0 = _mm256_fmadd_ps(_mm256_set1_ps(GGML_FP16_TO_FP32(x[ib].d) * y[ib].d), q32_dot_u(u0, y[ib].qs), acc0);
        summ += GGML_FP16_TO_FP32(x[ib].m) * y[ib].s;
    }
    *s = q32_hsum_ps(_mm256_add_ps(acc0, acc1)) + summ;
}

void ggml_x_quant_kernels_q32_avx2(struct ggml_x_quant_kernels * k) {
    k->vec_dot_q4_1_q8_1 = ggml_x_vec_dot_q4_1_q8_1_avx2;
    k->vec_dot_q5_0_q8_0 = ggml_x_vec_dot_q5_0_q8_0_avx2;
    k->vec_dot_q5_1_q8_1 = ggml_x_vec_dot_q5_1_q8_1_avx2;
}

#endif // __x86_64__
