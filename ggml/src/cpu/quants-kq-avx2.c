// quants-kq-avx2.c - AVX2 dot products of the k-quants Q2_K, Q3_K and Q5_K with Q8_K
// activations (the scalar definitions are in ggml-quants.c). Compiled with per-function target
// attributes; only called after run-time detection (quants-dispatch.c).
//
// Every super-block is done in integers: the weight levels are unpacked to unsigned bytes,
// multiplied with the activation bytes (vpmaddubsw: pairs of products as int16), and the int16
// pair sums multiplied by their sub-block scale (vpmaddwd: int32). The scale of each 16- or
// 32-element sub-block is spread over the lanes of its elements with one byte shuffle of a
// per-super-block vector. The offsets of the formats (Q2_K/Q5_K mins, the -4 of Q3_K) are
// applied through the activation's sub-block sums (bsums). The two int32 results of a
// super-block go to one float accumulator per row, reduced once at the end.
//
// The integer sums are exact; only the float combination differs from the scalar order.

#if defined(__x86_64__)

#include "cpu/quants-simd.h"
#include "cpu/prefetch.h"
#include "ggml-quants.h"

#include <immintrin.h>
#include <string.h>

#define GGML_X_AVX2 __attribute__((target("avx2,fma,f16c")))
#define GGML_X_AVX2_INLINE GGML_X_AVX2 __attribute__((always_inline)) static inline

void ggml_x_quant_kernels_kq_avx2(struct ggml_x_quant_kernels * k);

GGML_X_AVX2_INLINE float kq_hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// 16 scale bytes of the 16-element sub-blocks -> int16 [even sub-blocks | odd sub-blocks], so
// that kq_pair_scale spreads a pair (2j, 2j+1) over the two 128-bit halves with one shuffle
GGML_X_AVX2_INLINE __m256i kq_scales16_u8(__m128i sc) {
    const __m128i evod = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    return _mm256_cvtepu8_epi16(_mm_shuffle_epi8(sc, evod));
}

GGML_X_AVX2_INLINE __m256i kq_scales16_i8(__m128i sc) {
    const __m128i evod = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
    return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(sc, evod));
}

// int16 lanes: the scale of sub-block 2j in the low half, of 2j+1 in the high half
GGML_X_AVX2_INLINE __m256i kq_pair_scale(__m256i s16, int j) {
    return _mm256_shuffle_epi8(s16, _mm256_set1_epi16((short) ((2 * j) | ((2 * j + 1) << 8))));
}

// 32 unsigned levels (< 64) times 32 activation bytes, pair sums weighted by the int16 scales
GGML_X_AVX2_INLINE __m256i kq_dot32(__m256i q, const int8_t * y, __m256i scale) {
    const __m256i yv = _mm256_loadu_si256((const __m256i *) y);
    return _mm256_madd_epi16(_mm256_maddubs_epi16(q, yv), scale);
}

// ---------------------------------------------------------------------------------------------
// Q2_K: element 128h + 32k + l is bits 2k..2k+1 of qs[32h + l]; sub-block of 16 elements s
// has scale scales[s] & 15 and min scales[s] >> 4: x = d * sc * q - dmin * mn

GGML_X_AVX2 static void ggml_x_vec_dot_q2_K_q8_K_avx2(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q2_K * x = (const block_q2_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    const __m256i m3 = _mm256_set1_epi8(3);
    const __m128i m4 = _mm_set1_epi8(15);
    __m256 acc = _mm256_setzero_ps();
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_prefetch_far(x + ib, far, sizeof(*x));
        const __m128i sc = _mm_loadu_si128((const __m128i *) x[ib].scales);
        const __m256i s16 = kq_scales16_u8(_mm_and_si128(sc, m4));
        const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc, 4), m4));
        const __m256i bs = _mm256_loadu_si256((const __m256i *) y[ib].bsums);
        const __m256i summ = _mm256_madd_epi16(mn16, bs);
        const int8_t * qy = y[ib].qs;
        __m256i sumi = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *) (x[ib].qs + 32 * h));
            const __m256i q0 = _mm256_and_si256(q, m3);
            const __m256i q1 = _mm256_and_si256(_mm256_srli_epi16(q, 2), m3);
            const __m256i q2 = _mm256_and_si256(_mm256_srli_epi16(q, 4), m3);
            const __m256i q3 = _mm256_and_si256(_mm256_srli_epi16(q, 6), m3);
            const __m256i p0 = kq_dot32(q0, qy + 128 * h, kq_pair_scale(s16, 4 * h));
            const __m256i p1 = kq_dot32(q1, qy + 128 * h + 32, kq_pair_scale(s16, 4 * h + 1));
            const __m256i p2 = kq_dot32(q2, qy + 128 * h + 64, kq_pair_scale(s16, 4 * h + 2));
            const __m256i p3 = kq_dot32(q3, qy + 128 * h + 96, kq_pair_scale(s16, 4 * h + 3));
            sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(_mm256_add_epi32(p0, p1), _mm256_add_epi32(p2, p3)));
        }
        const float dy = y[ib].d;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(dy * GGML_FP16_TO_FP32(x[ib].d)), _mm256_cvtepi32_ps(sumi), acc);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(-dy * GGML_FP16_TO_FP32(x[ib].dmin)), _mm256_cvtepi32_ps(summ), acc);
    }
    *s = kq_hsum_ps(acc);
}

// ---------------------------------------------------------------------------------------------
// Q3_K: the Q2_K 2-bit walk plus a high bit (bit 4h + k of hmask[l]); level = low | high << 2,
// value = level - 4; 16 signed 6-bit scales

// the 16 scales of a Q3_K super-block (minus 32) as int8
GGML_X_AVX2_INLINE __m128i kq_q3_K_scales(const uint8_t * s) {
    uint64_t lo8;
    uint32_t hi4;
    memcpy(&lo8, s, 8);
    memcpy(&hi4, s + 8, 4);
    const __m128i m4 = _mm_set1_epi8(15);
    const __m128i l = _mm_cvtsi64_si128((long long) lo8);
    // scale j < 8: low nibble of s[j]; j >= 8: high nibble of s[j - 8]
    const __m128i low = _mm_and_si128(_mm_unpacklo_epi64(l, _mm_srli_epi16(l, 4)), m4);
    // bits 4..5 of scale j: bits 2(j/4) of s[8 + j%4]
    const __m128i hv = _mm_srlv_epi32(_mm_set1_epi32((int) hi4), _mm_setr_epi32(0, 2, 4, 6));
    const __m128i high = _mm_slli_epi16(_mm_and_si128(hv, _mm_set1_epi8(3)), 4);
    return _mm_sub_epi8(_mm_or_si128(low, high), _mm_set1_epi8(32));
}

// bit b of every byte of hm moved to bit 2
GGML_X_AVX2_INLINE __m256i kq_bit_to_2(__m256i hm, int b) {
    const __m256i m = _mm256_set1_epi8(4);
    switch (b) {
        case 0: return _mm256_and_si256(_mm256_slli_epi16(hm, 2), m);
        case 1: return _mm256_and_si256(_mm256_slli_epi16(hm, 1), m);
        case 2: return _mm256_and_si256(hm, m);
        default: return _mm256_and_si256(_mm256_srli_epi16(hm, b - 2), m);
    }
}

GGML_X_AVX2 static void ggml_x_vec_dot_q3_K_q8_K_avx2(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q3_K * x = (const block_q3_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    const __m256i m3 = _mm256_set1_epi8(3);
    __m256 acc = _mm256_setzero_ps();
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_prefetch_far(x + ib, far, sizeof(*x));
        const __m128i sc = kq_q3_K_scales(x[ib].scales);
        const __m256i s16 = kq_scales16_i8(sc);
        // the levels are value + 4: subtract 4 * scale * sum of the sub-block's activations
        const __m256i bs = _mm256_loadu_si256((const __m256i *) y[ib].bsums);
        const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(sc), bs), 2);
        const __m256i hm = _mm256_loadu_si256((const __m256i *) x[ib].hmask);
        const int8_t * qy = y[ib].qs;
        __m256i sumi = _mm256_sub_epi32(_mm256_setzero_si256(), corr);
        for (int h = 0; h < 2; h++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *) (x[ib].qs + 32 * h));
            const __m256i q0 = _mm256_or_si256(_mm256_and_si256(q, m3), kq_bit_to_2(hm, 4 * h));
            const __m256i q1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2), m3), kq_bit_to_2(hm, 4 * h + 1));
            const __m256i q2 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m3), kq_bit_to_2(hm, 4 * h + 2));
            const __m256i q3 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 6), m3), kq_bit_to_2(hm, 4 * h + 3));
            const __m256i p0 = kq_dot32(q0, qy + 128 * h, kq_pair_scale(s16, 4 * h));
            const __m256i p1 = kq_dot32(q1, qy + 128 * h + 32, kq_pair_scale(s16, 4 * h + 1));
            const __m256i p2 = kq_dot32(q2, qy + 128 * h + 64, kq_pair_scale(s16, 4 * h + 2));
            const __m256i p3 = kq_dot32(q3, qy + 128 * h + 96, kq_pair_scale(s16, 4 * h + 3));
            sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(_mm256_add_epi32(p0, p1), _mm256_add_epi32(p2, p3)));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(y[ib].d * GGML_FP16_TO_FP32(x[ib].d)), _mm256_cvtepi32_ps(sumi), acc);
    }
    *s = kq_hsum_ps(acc);
}

// ---------------------------------------------------------------------------------------------
// Q5_K: element 64c + l is the low nibble of qs[32c + l] with bit 2c of qh[l] as bit 4, element
// 64c + 32 + l the high nibble with bit 2c + 1; 8 sub-blocks of 32 with 6-bit scales and mins
// packed as in Q4_K

// the 8 scales (bytes 0..7) and 8 mins (bytes 8..15) of the Q4_K / Q5_K 12-byte packing
GGML_X_AVX2_INLINE __m128i kq_k4_scales_mins(const uint8_t * q) {
    uint32_t a0, a1, a2;
    memcpy(&a0, q, 4);
    memcpy(&a1, q + 4, 4);
    memcpy(&a2, q + 8, 4);
    const uint32_t sc03 = a0 & 0x3f3f3f3fu;
    const uint32_t mn03 = a1 & 0x3f3f3f3fu;
    const uint32_t sc47 = (a2 & 0x0f0f0f0fu) | ((a0 >> 2) & 0x30303030u);
    const uint32_t mn47 = ((a2 >> 4) & 0x0f0f0f0fu) | ((a1 >> 2) & 0x30303030u);
    return _mm_setr_epi32((int) sc03, (int) sc47, (int) mn03, (int) mn47);
}

// bit b of every byte of hm moved to bit 4
GGML_X_AVX2_INLINE __m256i kq_bit_to_4(__m256i hm, int b) {
    const __m256i m = _mm256_set1_epi8(16);
    if (b < 4) {
        return _mm256_and_si256(_mm256_slli_epi16(hm, 4 - b), m);
    }
    if (b == 4) {
        return _mm256_and_si256(hm, m);
    }
    return _mm256_and_si256(_mm256_srli_epi16(hm, b - 4), m);
}

GGML_X_AVX2 static void ggml_x_vec_dot_q5_K_q8_K_avx2(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q5_K * x = (const block_q5_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    const __m256i m4 = _mm256_set1_epi8(15);
    __m256 acc = _mm256_setzero_ps();
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_prefetch_far(x + ib, far, sizeof(*x));
        const __m256i sm16 = _mm256_cvtepu8_epi16(kq_k4_scales_mins(x[ib].scales)); // [scales | mins]
        const __m256i s16 = _mm256_permute2x128_si256(sm16, sm16, 0x00);             // scales in both halves
        // mins: each against the sum of its two 16-element activation sums
        const __m128i mn = _mm256_extracti128_si256(sm16, 1);
        const __m256i mn2 = _mm256_setr_m128i(_mm_unpacklo_epi16(mn, mn), _mm_unpackhi_epi16(mn, mn));
        const __m256i bs = _mm256_loadu_si256((const __m256i *) y[ib].bsums);
        const __m256i summ = _mm256_madd_epi16(mn2, bs);
        const __m256i hm = _mm256_loadu_si256((const __m256i *) x[ib].qh);
        const int8_t * qy = y[ib].qs;
        __m256i sumi = _mm256_setzero_si256();
        for (int c = 0; c < 4; c++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *) (x[ib].qs + 32 * c));
            const __m256i q0 = _mm256_or_si256(_mm256_and_si256(q, m4), kq_bit_to_4(hm, 2 * c));
            const __m256i q1 = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 4), m4), kq_bit_to_4(hm, 2 * c + 1));
            // one scale for all 32 lanes of a sub-block: shuffle (2j, 2j + 1) in both halves
            const __m256i sc0 = _mm256_shuffle_epi8(s16, _mm256_set1_epi16((short) ((4 * c) | ((4 * c + 1) << 8))));
            const __m256i sc1 = _mm256_shuffle_epi8(s16, _mm256_set1_epi16((short) ((4 * c + 2) | ((4 * c + 3) << 8))));
            const __m256i p0 = kq_dot32(q0, qy + 64 * c, sc0);
            const __m256i p1 = kq_dot32(q1, qy + 64 * c + 32, sc1);
            sumi = _mm256_add_epi32(sumi, _mm256_add_epi32(p0, p1));
        }
        const float dy = y[ib].d;
        acc = _mm256_fmadd_ps(_mm256_set1_ps(dy * GGML_FP16_TO_FP32(x[ib].d)), _mm256_cvtepi32_ps(sumi), acc);
        acc = _mm256_fmadd_ps(_mm256_set1_ps(-dy * GGML_FP16_TO_FP32(x[ib].dmin)), _mm256_cvtepi32_ps(summ), acc);
    }
    *s = kq_hsum_ps(acc);
}

void ggml_x_quant_kernels_kq_avx2(struct ggml_x_quant_kernels * k) {
    k->vec_dot_q2_K_q8_K = ggml_x_vec_dot_q2_K_q8_K_avx2;
    k->vec_dot_q3_K_q8_K = ggml_x_vec_dot_q3_K_q8_K_avx2;
    k->vec_dot_q5_K_q8_K = ggml_x_vec_dot_q5_K_q8_K_avx2;
}

#endif // __x86_64__
