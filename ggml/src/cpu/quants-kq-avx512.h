// quants-kq-avx512.h - AVX-512 VNNI helpers shared by the k-quant dot products of one column
// (quants-kq-avx512.c) and of several columns (quants-kq-cols-avx512.c). x86-64 only; include
// inside the files' `#if defined(__x86_64__)`.

#ifndef GGML_X_QUANTS_KQ_AVX512_H
#define GGML_X_QUANTS_KQ_AVX512_H

#include <immintrin.h>
#include <stdint.h>

#define GGML_X_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#define GGML_X_VNNI_INLINE GGML_X_VNNI __attribute__((always_inline)) static inline

// 32 weight bytes in both 256-bit halves of a zmm
GGML_X_VNNI_INLINE __m512i kq_bcast32(const uint8_t * p) {
    return _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *) p));
}

// low 256-bit half shifted right by a, high half by b (16-bit lanes; the caller masks the field)
GGML_X_VNNI_INLINE __m512i kq_shift2(__m512i v, int a, int b) {
    const __m512i sh = _mm512_inserti64x4(_mm512_set1_epi16((short) a), _mm256_set1_epi16((short) b), 1);
    return _mm512_srlv_epi16(v, sh);
}

// Scales as "t16": 128-bit lane i holds, at int16 positions j = 0..3, the scale that lane i of
// level vector j uses. From 16 scale bytes of 16-element sub-blocks (lane i of vector j is
// sub-block 4j + i, so lane i holds scales i, 4 + i, 8 + i, 12 + i):
GGML_X_VNNI_INLINE __m512i kq_scales16(__m128i sc, int is_signed) {
    const __m128i by4 = _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m128i g = _mm_shuffle_epi8(sc, by4);
    const __m256i w = is_signed ? _mm256_cvtepi8_epi16(g) : _mm256_cvtepu8_epi16(g);
    // qword q of w (4 int16) goes to lane q
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3), _mm512_castsi256_si512(w));
}

// q with bit `to` of each byte set where bit a (low 256-bit half) / bit b (high half) of the same
// byte of hb is set; bit `to` of q must be clear (Q3_K: 2-bit levels + 4 x high bit; Q5_K:
// nibbles + 16 x high bit). A rotate within 32-bit lanes by (to - a) mod 32 moves bit 8j + a to
// 8j + to in every byte j, so one rotate, one mask and one or do what a byte test and a masked add
// did (Q5_K's dot product took 11.2 ns per super-block that way, Q4_K's 7.5).
GGML_X_VNNI_INLINE __m512i kq_or_bit(__m512i q, __m512i hb, int a, int b, int to) {
    const __m512i rot = _mm512_inserti64x4(_mm512_set1_epi32((to - a) & 31), _mm256_set1_epi32((to - b) & 31), 1);
    // q | (rot(hb) & (1 << to))
    return _mm512_ternarylogic_epi32(q, _mm512_rolv_epi32(hb, rot), _mm512_set1_epi8((char) (1 << to)), 0xF8);
}

#endif // GGML_X_QUANTS_KQ_AVX512_H
