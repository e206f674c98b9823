// quants-kq-avx512.c - AVX-512 VNNI dot products of the k-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)
// with Q8_K activations (the scalar definitions are in ggml-quants.c; the AVX2 ones, which the
// plain AVX-512 level keeps, in quants-avx2.c and quants-kq-avx2.c). Only called after run-time
// detection.
//
// One 512-bit vector covers 64 consecutive elements, so the activation bytes are read straight
// from the Q8_K block: the weight bytes that hold those elements are broadcast to both 256-bit
// halves and each half shifted by its own amount (vpsrlvw) to bring its bit field down. High
// bits (Q3_K hmask, Q5_K qh) are tested into a byte mask and added where set. Products:
// vpmaddubsw (unsigned levels x activation bytes -> int16 pairs), then vpdpwssd with the
// sub-block scales spread over the lanes (int16 x int16 summed into int32). Offsets go through
// the activation's sub-block sums, as in the AVX2 kernels; one float reduction per row.

#if defined(__x86_64__)

#include "cpu/quants-simd.h"
#include "cpu/prefetch.h"
#include "ggml-quants.h"

#include <immintrin.h>
#include <string.h>

#include "cpu/quants-kq-avx512.h"

void ggml_x_quant_kernels_kq_vnni(struct ggml_x_quant_kernels * k);

// the int16 scale of each 128-bit lane for vector j: t16 holds, in lane i, the scales that lane
// i uses for j = 0..3 at int16 positions 0..3
GGML_X_VNNI_INLINE __m512i kq5_lane_scale(__m512i t16, int j) {
    return _mm512_shuffle_epi8(t16, _mm512_set1_epi16((short) ((2 * j) | ((2 * j + 1) << 8))));
}

GGML_X_VNNI_INLINE __m512i kq5_dot64(__m512i acc, __m512i q, const int8_t * y, __m512i scale) {
    const __m512i p = _mm512_maddubs_epi16(q, _mm512_loadu_si512((const void *) y));
    return _mm512_dpwssd_epi32(acc, p, scale);
}

// ---------------------------------------------------------------------------------------------

GGML_X_VNNI static void ggml_x_vec_dot_q2_K_q8_K_vnni(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q2_K * x = (const block_q2_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    const __m512i m3 = _mm512_set1_epi8(3);
    const __m128i m4 = _mm_set1_epi8(15);
    __m512 acc = _mm512_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(block_q8_K));
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_prefetch_far(x + ib, far, sizeof(block_q2_K));
        const __m128i sc = _mm_loadu_si128((const __m128i *) x[ib].scales);
        const __m512i t16 = kq_scales16(_mm_and_si128(sc, m4), 0);
        const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc, 4), m4));
        const __m256i summ = _mm256_madd_epi16(mn16, _mm256_loadu_si256((const __m256i *) y[ib].bsums));
        const int8_t * qy = y[ib].qs;
        // elements 128h + 64t + 32u + l: bits 2(2t + u) of qs[32h + l]
        const __m512i b0 = kq_bcast32(x[ib].qs);
        const __m512i b1 = kq_bcast32(x[ib].qs + 32);
        __m512i sumi = _mm512_setzero_si512();
        sumi = kq5_dot64(sumi, _mm512_and_si512(kq_shift2(b0, 0, 2), m3), qy, kq5_lane_scale(t16, 0));
        sumi = kq5_dot64(sumi, _mm512_and_si512(kq_shift2(b0, 4, 6), m3), qy + 64, kq5_lane_scale(t16, 1));
        sumi = kq5_dot64(sumi, _mm512_and_si512(kq_shift2(b1, 0, 2), m3), qy + 128, kq5_lane_scale(t16, 2));
        sumi = kq5_dot64(sumi, _mm512_and_si512(kq_shift2(b1, 4, 6), m3), qy + 192, kq5_lane_scale(t16, 3));
        const float dy = y[ib].d;
        acc = _mm512_fmadd_ps(_mm512_set1_ps(dy * GGML_FP16_TO_FP32(x[ib].d)), _mm512_cvtepi32_ps(sumi), acc);
        accm = _mm256_fmadd_ps(_mm256_set1_ps(-dy * GGML_FP16_TO_FP32(x[ib].dmin)), _mm256_cvtepi32_ps(summ), accm);
    }
    *s = _mm512_reduce_add_ps(_mm512_add_ps(acc, _mm512_zextps256_ps512(accm)));
}

// the 16 scales of a Q3_K super-block (minus 32) as int8 (see quants-kq-avx2.c)
GGML_X_VNNI_INLINE __m128i kq5_q3_K_scales(const uint8_t * s) {
    uint64_t lo8;
    uint32_t hi4;
    memcpy(&lo8, s, 8);
    memcpy(&hi4, s + 8, 4);
    const __m128i m4 = _mm_set1_epi8(15);
    const __m128i l = _mm_cvtsi64_si128((long long) lo8);
    const __m128i low = _mm_and_si128(_mm_unpacklo_epi64(l, _mm_srli_epi16(l, 4)), m4);
    const __m128i hv = _mm_srlv_epi32(_mm_set1_epi32((int) hi4), _mm_setr_epi32(0, 2, 4, 6));
    const __m128i high = _mm_slli_epi16(_mm_and_si128(hv, _mm_set1_epi8(3)), 4);
    return _mm_sub_epi8(_mm_or_si128(low, high), _mm_set1_epi8(32));
}

GGML_X_VNNI static void ggml_x_vec_dot_q3_K_q8_K_vnni(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q3_K * x = (const block_q3_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    const __m512i m3 = _mm512_set1_epi8(3);
    __m512 acc = _mm512_setzero_ps();
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(block_q8_K));
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_prefetch_far(x + ib, far, sizeof(block_q3_K));
        const __m128i sc = kq5_q3_K_scales(x[ib].scales);
        const __m512i t16 = kq_scales16(sc, 1);
        // levels are value + 4: start from -4 * sum of scale x sub-block activation sum
        const __m256i bs = _mm256_loadu_si256((const __m256i *) y[ib].bsums);
        const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(sc), bs), 2);
        __m512i sumi = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), corr));
        const int8_t * qy = y[ib].qs;
        const __m512i hb = kq_bcast32(x[ib].hmask);
        const __m512i b0 = kq_bcast32(x[ib].qs);
        const __m512i b1 = kq_bcast32(x[ib].qs + 32);
        // vector j = 2h + t: elements 128h + 64t + 32u + l, high bit 4h + 2t + u of hmask[l]
        sumi = kq5_dot64(sumi, kq_or_bit(_mm512_and_si512(kq_shift2(b0, 0, 2), m3), hb, 0, 1, 2), qy, kq5_lane_scale(t16, 0));
        sumi = kq5_dot64(sumi, kq_or_bit(_mm512_and_si512(kq_shift2(b0, 4, 6), m3), hb, 2, 3, 2), qy + 64, kq5_lane_scale(t16, 1));
        sumi = kq5_dot64(sumi, kq_or_bit(_mm512_and_si512(kq_shift2(b1, 0, 2), m3), hb, 4, 5, 2), qy + 128, kq5_lane_scale(t16, 2));
        sumi = kq5_dot64(sumi, kq_or_bit(_mm512_and_si512(kq_shift2(b1, 4, 6), m3), hb, 6, 7, 2), qy + 192, kq5_lane_scale(t16, 3));
        acc = _mm512_fmadd_ps(_mm512_set1_ps(y[ib].d * GGML_FP16_TO_FP32(x[ib].d)), _mm512_cvtepi32_ps(sumi), acc);
    }
    *s = _mm512_reduce_add_ps(acc);
}

// the 8 scales (bytes 0..7) and 8 mins (bytes 8..15) of the Q4_K / Q5_K 12-byte packing
GGML_X_VNNI_INLINE __m128i kq5_k4_scales_mins(const uint8_t * q) {
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

// Q4_K and Q5_K: element 64c + l is the low nibble of qs[32c + l], element 64c + 32 + l the high
// nibble; Q5_K adds bit 2c (resp. 2c + 1) of qh[l] as bit 4. 8 sub-blocks of 32 with 6-bit
// scales and mins
// (vx holds Q5_K blocks when q5, else Q4_K; q5 is a compile-time constant at both call sites, so
// each type gets its own loop: testing a pointer instead left the type test and a rolled inner
// loop in the Q5_K kernel)
GGML_X_VNNI_INLINE void kq5_dot_k4(int n, float * GGML_RESTRICT s, const void * vx, const bool q5,
                                   const block_q8_K * y) {
    const block_q4_K * x4 = (const block_q4_K *) vx;
    const block_q5_K * x5 = (const block_q5_K *) vx;
    const int nb = n / QK_K;
    const __m512i m4 = _mm512_set1_epi8(15);
    __m512 acc = _mm512_setzero_ps();
    __m256 accm = _mm256_setzero_ps();
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(block_q8_K));
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_prefetch_far(q5 ? (const void *) (x5 + ib) : (const void *) (x4 + ib), far,
                            q5 ? sizeof(block_q5_K) : sizeof(block_q4_K));
        const uint8_t * scales = q5 ? x5[ib].scales : x4[ib].scales;
        const uint8_t * qs = q5 ? x5[ib].qs : x4[ib].qs;
        const ggml_fp16_t d = q5 ? x5[ib].d : x4[ib].d;
        const ggml_fp16_t dmin = q5 ? x5[ib].dmin : x4[ib].dmin;
        const __m128i sm = kq5_k4_scales_mins(scales);
        // vector c = sub-blocks 2c (lanes 0, 1) and 2c + 1 (lanes 2, 3): lanes 0, 1 hold the even
        // scales, lanes 2, 3 the odd ones, as int16
        const __m128i evod = _mm_setr_epi8(0, 2, 4, 6, 1, 3, 5, 7, -1, -1, -1, -1, -1, -1, -1, -1);
        const __m256i w = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(sm, evod));
        const __m512i t16 = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 0, 0, 0, 1, 1, 1, 1), _mm512_castsi256_si512(w));
        const __m128i mn = _mm_cvtepu8_epi16(_mm_srli_si128(sm, 8));
        const __m256i mn2 = _mm256_setr_m128i(_mm_unpacklo_epi16(mn, mn), _mm_unpackhi_epi16(mn, mn));
        const __m256i summ = _mm256_madd_epi16(mn2, _mm256_loadu_si256((const __m256i *) y[ib].bsums));
        const int8_t * qy = y[ib].qs;
        __m512i sumi = _mm512_setzero_si512();
        if (q5) {
            const __m512i hb = kq_bcast32(x5[ib].qh);
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++) {
                const __m512i q = _mm512_and_si512(kq_shift2(kq_bcast32(qs + 32 * c), 0, 4), m4);
                sumi = kq5_dot64(sumi, kq_or_bit(q, hb, 2 * c, 2 * c + 1, 4), qy + 64 * c, kq5_lane_scale(t16, c));
            }
        } else {
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++) {
                const __m512i q = _mm512_and_si512(kq_shift2(kq_bcast32(qs + 32 * c), 0, 4), m4);
                sumi = kq5_dot64(sumi, q, qy + 64 * c, kq5_lane_scale(t16, c));
            }
        }
        const float dy = y[ib].d;
        acc = _mm512_fmadd_ps(_mm512_set1_ps(dy * GGML_FP16_TO_FP32(d)), _mm512_cvtepi32_ps(sumi), acc);
        accm = _mm256_fmadd_ps(_mm256_set1_ps(-dy * GGML_FP16_TO_FP32(dmin)), _mm256_cvtepi32_ps(summ), accm);
    }
    *s = _mm512_reduce_add_ps(_mm512_add_ps(acc, _mm512_zextps256_ps512(accm)));
}

GGML_X_VNNI static void ggml_x_vec_dot_q4_K_q8_K_vnni(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    kq5_dot_k4(n, s, vx, false, (const block_q8_K *) vy);
}

GGML_X_VNNI static void ggml_x_vec_dot_q5_K_q8_K_vnni(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    kq5_dot_k4(n, s, vx, true, (const block_q8_K *) vy);
}

// Q6_K: element 128h + 64t + 32u + l has the low 4 bits in ql[64h + 32u + l] (low nibble for
// t = 0, high for t = 1) and bits 4..5 from bits 2(2t + u) of qh[32h + l]; value = level - 32
GGML_X_VNNI static void ggml_x_vec_dot_q6_K_q8_K_vnni(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q6_K * x = (const block_q6_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    const __m512i m4 = _mm512_set1_epi8(15);
    const __m512i m2 = _mm512_set1_epi8(0x30);
    __m512 acc = _mm512_setzero_ps();
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(block_q8_K));
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_prefetch_far(x + ib, far, sizeof(block_q6_K));
        const __m128i sc = _mm_loadu_si128((const __m128i *) x[ib].scales);
        const __m512i t16 = kq_scales16(sc, 1);
        // levels are value + 32: start from -32 * sum of scale x sub-block activation sum
        const __m256i bs = _mm256_loadu_si256((const __m256i *) y[ib].bsums);
        const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(_mm256_cvtepi8_epi16(sc), bs), 5);
        __m512i sumi = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), corr));
        const int8_t * qy = y[ib].qs;
        for (int h = 0; h < 2; h++) {
            const __m512i lo = _mm512_loadu_si512((const void *) (x[ib].ql + 64 * h));
            const __m512i hb = kq_bcast32(x[ib].qh + 32 * h);
            // t = 0: bits 0..1 (low half) / 2..3 (high half) of qh up to bits 4..5
            const __m512i sh0 = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
            const __m512i h0 = _mm512_and_si512(_mm512_sllv_epi16(hb, sh0), m2);
            // t = 1: bits 4..5 / 6..7
            const __m512i h1 = _mm512_and_si512(kq_shift2(hb, 0, 2), m2);
            const __m512i q0 = _mm512_ternarylogic_epi32(lo, m4, h0, 0xEA);                          // (lo & m4) | h0
            const __m512i q1 = _mm512_ternarylogic_epi32(_mm512_srli_epi16(lo, 4), m4, h1, 0xEA);
            sumi = kq5_dot64(sumi, q0, qy + 128 * h, kq5_lane_scale(t16, 2 * h));
            sumi = kq5_dot64(sumi, q1, qy + 128 * h + 64, kq5_lane_scale(t16, 2 * h + 1));
        }
        acc = _mm512_fmadd_ps(_mm512_set1_ps(y[ib].d * GGML_FP16_TO_FP32(x[ib].d)), _mm512_cvtepi32_ps(sumi), acc);
    }
    *s = _mm512_reduce_add_ps(acc);
}

void ggml_x_quant_kernels_kq_vnni(struct ggml_x_quant_kernels * k) {
    k->vec_dot_q2_K_q8_K = ggml_x_vec_dot_q2_K_q8_K_vnni;
    k->vec_dot_q3_K_q8_K = ggml_x_vec_dot_q3_K_q8_K_vnni;
    k->vec_dot_q4_K_q8_K = ggml_x_vec_dot_q4_K_q8_K_vnni;
    k->vec_dot_q5_K_q8_K = ggml_x_vec_dot_q5_K_q8_K_vnni;
    k->vec_dot_q6_K_q8_K = ggml_x_vec_dot_q6_K_q8_K_vnni;
}

#endif // __x86_64__
