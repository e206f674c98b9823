// quants-kq-cols-avx512.c - AVX-512 VNNI multi-column dot products of the k-quants (Q2_K,
// Q3_K, Q4_K, Q5_K, Q6_K) with Q8_K activations: s[j] = dot(weight row x, activation row y[j])
// for j < nc (the ggml_x_vec_dot_cols_t of quants-simd.h). Only called after run-time detection.
//
// Why: MUL_MAT of a weight matrix by a few columns (token generation, small batches) calls a
// dot product per (row, column), so every weight block is decoded once per column; the
// single-column kernels are compute-bound (one core decodes less than the memory delivers).
// Here each super-block of the weight row is decoded ONCE into registers (the int8 levels of
// its 256 elements as four 64-byte vectors, and its sub-block scales spread over the int16
// lanes) and then multiplied with up to KC_GROUP activation columns; more columns take further
// passes over the row, which is then in L1.
//
// The integer math is that of the single-column kernels of quants-kq-avx512.c (unsigned levels
// by activation bytes, sub-block scales, offsets through the activation sub-block sums; exact
// in int32), with fewer multiplier instructions per column (kc_pair: vpdpbusd, vpackssdw,
// vpdpwssd); per column one fused multiply-add per super-block and one reduction at the end.
// The int32 partial sums sit in other lanes than in the single-column kernels, so results
// differ from theirs by float rounding only; each column's result does not depend on nc or on
// which columns share a call (the same instructions run per column).

#if defined(__x86_64__)

#include "cpu/quants-simd.h"
#include "ggml-quants.h"

#include <immintrin.h>
#include <string.h>

#include "cpu/quants-kq-avx512.h"

// columns per pass over a weight row (registers: 4 level vectors, 2 pair-scale vectors, and per
// column a float accumulator and, for the types with mins, an 8-lane min accumulator: at most 22
// of the 32 vector registers). 8, the column count of the serving issue's batched decode: each
// super-block is then decoded once per step (with 4, twice: measured on TinyLlama-shaped
// layers, 2 threads, 8 columns, Q6_K 2770 -> 1970 us, Q5_K 2980 -> 2050 us; tools/bench/bench-cols.c)
#define KC_GROUP 8
_Static_assert(KC_GROUP == 8, "KC_ENTRY dispatches up to 8 columns");

// distance of the software prefetch of the weight stream, in bytes ahead of the current block
#define KC_PREFETCH 512

void ggml_x_quant_kernels_kq_cols_vnni(struct ggml_x_quant_kernels * k);

// The scales of vectors a and b for kc_pair: in each 128-bit lane, int16 positions 0..3 hold
// the scale lane uses for vector a, positions 4..7 the one for vector b (t16 as in kq_scales16)
GGML_X_VNNI_INLINE __m512i kc_pair_scale(__m512i t16, int a, int b) {
    const short sa = (short) ((2 * a) | ((2 * a + 1) << 8));
    const short sb = (short) ((2 * b) | ((2 * b + 1) << 8));
    return _mm512_shuffle_epi8(t16, _mm512_set4_epi32((sb << 16) | (unsigned short) sb, (sb << 16) | (unsigned short) sb,
                                                      (sa << 16) | (unsigned short) sa, (sa << 16) | (unsigned short) sa));
}

// Products of two decoded vectors qa, qb (unsigned levels) with 64 activation bytes each:
// vpdpbusd sums 4 products into an int32 (|sum| <= 4 * 63 * 128 < 2^15 for every k-quant, so
// the int16 packing below is exact), vpackssdw puts a's and b's sums of a 128-bit lane (one
// sub-block scale each) side by side, and vpdpwssd multiplies them by their scales and adds
// pairs into the int32 accumulator: 3 multiplier instructions per 128 elements instead of 4.
GGML_X_VNNI_INLINE __m512i kc_pair(__m512i sumi, __m512i qa, __m512i qb, const int8_t * ya, const int8_t * yb, __m512i sc) {
    const __m512i z = _mm512_setzero_si512();
    const __m512i ra = _mm512_dpbusd_epi32(z, qa, _mm512_loadu_si512((const void *) ya));
    const __m512i rb = _mm512_dpbusd_epi32(z, qb, _mm512_loadu_si512((const void *) yb));
    return _mm512_dpwssd_epi32(sumi, _mm512_packs_epi32(ra, rb), sc);
}

// the integer dot product of one decoded super-block (levels q[4], pair scales ls[2]) with one
// activation block, added to sumi
GGML_X_VNNI_INLINE __m512i kc_dot256(__m512i sumi, const __m512i q[4], const __m512i ls[2], const int8_t * qy) {
    sumi = kc_pair(sumi, q[0], q[1], qy, qy + 64, ls[0]);
    sumi = kc_pair(sumi, q[2], q[3], qy + 128, qy + 192, ls[1]);
    return sumi;
}

GGML_X_VNNI_INLINE void kc_prefetch(const void * p) {
    _mm_prefetch((const char *) p + KC_PREFETCH, _MM_HINT_T0);
    _mm_prefetch((const char *) p + KC_PREFETCH + 64, _MM_HINT_T0);
}

// ---------------------------------------------------------------------------------------------
// Q2_K

GGML_X_VNNI_INLINE void kc_q2_K(int n, float * s, const block_q2_K * x, const void * const * vy, const int nc) {
    const int nb = n / QK_K;
    const __m512i m3 = _mm512_set1_epi8(3);
    const __m128i m4 = _mm_set1_epi8(15);
    __m512 acc[KC_GROUP];
    __m256 accm[KC_GROUP];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
        accm[c] = _mm256_setzero_ps();
    }
    for (int ib = 0; ib < nb; ib++) {
        kc_prefetch(x + ib);
        const __m128i sc = _mm_loadu_si128((const __m128i *) x[ib].scales);
        const __m512i t16 = kq_scales16(_mm_and_si128(sc, m4), 0);
        const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(sc, 4), m4));
        const __m512i b0 = kq_bcast32(x[ib].qs);
        const __m512i b1 = kq_bcast32(x[ib].qs + 32);
        __m512i q[4], ls[2];
        q[0] = _mm512_and_si512(kq_shift2(b0, 0, 2), m3);
        q[1] = _mm512_and_si512(kq_shift2(b0, 4, 6), m3);
        q[2] = _mm512_and_si512(kq_shift2(b1, 0, 2), m3);
        q[3] = _mm512_and_si512(kq_shift2(b1, 4, 6), m3);
        ls[0] = kc_pair_scale(t16, 0, 1);
        ls[1] = kc_pair_scale(t16, 2, 3);
        const float dx = GGML_FP16_TO_FP32(x[ib].d);
        const float mx = GGML_FP16_TO_FP32(x[ib].dmin);
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            const block_q8_K * y = (const block_q8_K *) vy[c] + ib;
            const __m256i summ = _mm256_madd_epi16(mn16, _mm256_loadu_si256((const __m256i *) y->bsums));
            const __m512i sumi = kc_dot256(_mm512_setzero_si512(), q, ls, y->qs);
            const float dy = y->d;
            acc[c] = _mm512_fmadd_ps(_mm512_set1_ps(dy * dx), _mm512_cvtepi32_ps(sumi), acc[c]);
            accm[c] = _mm256_fmadd_ps(_mm256_set1_ps(-dy * mx), _mm256_cvtepi32_ps(summ), accm[c]);
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        s[c] = _mm512_reduce_add_ps(_mm512_add_ps(acc[c], _mm512_zextps256_ps512(accm[c])));
    }
}

// ---------------------------------------------------------------------------------------------
// Q3_K

// the 16 scales of a Q3_K super-block (minus 32) as int8
GGML_X_VNNI_INLINE __m128i kc_q3_K_scales(const uint8_t * s) {
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

GGML_X_VNNI_INLINE void kc_q3_K(int n, float * s, const block_q3_K * x, const void * const * vy, const int nc) {
    const int nb = n / QK_K;
    const __m512i m3 = _mm512_set1_epi8(3);
    __m512 acc[KC_GROUP];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
    }
    for (int ib = 0; ib < nb; ib++) {
        kc_prefetch(x + ib);
        const __m128i sc = kc_q3_K_scales(x[ib].scales);
        const __m512i t16 = kq_scales16(sc, 1);
        const __m256i sc16 = _mm256_cvtepi8_epi16(sc);
        const __m512i hb = kq_bcast32(x[ib].hmask);
        const __m512i b0 = kq_bcast32(x[ib].qs);
        const __m512i b1 = kq_bcast32(x[ib].qs + 32);
        // levels are value + 4 (the high bit adds 4 to the 2-bit level)
        __m512i q[4], ls[2];
        q[0] = kq_or_bit(_mm512_and_si512(kq_shift2(b0, 0, 2), m3), hb, 0, 1, 2);
        q[1] = kq_or_bit(_mm512_and_si512(kq_shift2(b0, 4, 6), m3), hb, 2, 3, 2);
        q[2] = kq_or_bit(_mm512_and_si512(kq_shift2(b1, 0, 2), m3), hb, 4, 5, 2);
        q[3] = kq_or_bit(_mm512_and_si512(kq_shift2(b1, 4, 6), m3), hb, 6, 7, 2);
        ls[0] = kc_pair_scale(t16, 0, 1);
        ls[1] = kc_pair_scale(t16, 2, 3);
        const float dx = GGML_FP16_TO_FP32(x[ib].d);
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            const block_q8_K * y = (const block_q8_K *) vy[c] + ib;
            // start from -4 * sum of scale x sub-block activation sum
            const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *) y->bsums)), 2);
            const __m512i s0 = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), corr));
            const __m512i sumi = kc_dot256(s0, q, ls, y->qs);
            acc[c] = _mm512_fmadd_ps(_mm512_set1_ps(y->d * dx), _mm512_cvtepi32_ps(sumi), acc[c]);
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        s[c] = _mm512_reduce_add_ps(acc[c]);
    }
}

// ---------------------------------------------------------------------------------------------
// Q4_K and Q5_K: element 64c + l is the low nibble of qs[32c + l], element 64c + 32 + l the high
// nibble; Q5_K adds bit 2c (resp. 2c + 1) of qh[l] as bit 4. 8 sub-blocks of 32 with 6-bit
// scales and mins.

// the 8 scales (bytes 0..7) and 8 mins (bytes 8..15) of the 12-byte packing
GGML_X_VNNI_INLINE __m128i kc_k4_scales_mins(const uint8_t * q) {
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

// (vx holds Q5_K blocks when q5, else Q4_K; q5 is a compile-time constant, as in quants-kq-avx512.c)
GGML_X_VNNI_INLINE void kc_k4(int n, float * s, const void * vx, const bool q5, const void * const * vy, const int nc) {
    const block_q4_K * x4 = (const block_q4_K *) vx;
    const block_q5_K * x5 = (const block_q5_K *) vx;
    const int nb = n / QK_K;
    const __m512i m4 = _mm512_set1_epi8(15);
    __m512 acc[KC_GROUP];
    __m256 accm[KC_GROUP];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
        accm[c] = _mm256_setzero_ps();
    }
    for (int ib = 0; ib < nb; ib++) {
        const uint8_t * scales = q5 ? x5[ib].scales : x4[ib].scales;
        const uint8_t * qs = q5 ? x5[ib].qs : x4[ib].qs;
        const ggml_fp16_t d = q5 ? x5[ib].d : x4[ib].d;
        const ggml_fp16_t dmin = q5 ? x5[ib].dmin : x4[ib].dmin;
        if (q5) {
            kc_prefetch(x5 + ib);
        } else {
            kc_prefetch(x4 + ib);
        }
        const __m128i sm = kc_k4_scales_mins(scales);
        // vector c = sub-blocks 2c (lanes 0, 1) and 2c + 1 (lanes 2, 3)
        const __m128i evod = _mm_setr_epi8(0, 2, 4, 6, 1, 3, 5, 7, -1, -1, -1, -1, -1, -1, -1, -1);
        const __m256i w = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(sm, evod));
        const __m512i t16 = _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 0, 0, 0, 1, 1, 1, 1), _mm512_castsi256_si512(w));
        const __m128i mn = _mm_cvtepu8_epi16(_mm_srli_si128(sm, 8));
        const __m256i mn2 = _mm256_setr_m128i(_mm_unpacklo_epi16(mn, mn), _mm_unpackhi_epi16(mn, mn));
        __m512i q[4], ls[2];
        if (q5) {
            const __m512i hb = kq_bcast32(x5[ib].qh);
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) {
                const __m512i l = _mm512_and_si512(kq_shift2(kq_bcast32(qs + 32 * j), 0, 4), m4);
                q[j] = kq_or_bit(l, hb, 2 * j, 2 * j + 1, 4);
            }
        } else {
#pragma GCC unroll 4
            for (int j = 0; j < 4; j++) {
                q[j] = _mm512_and_si512(kq_shift2(kq_bcast32(qs + 32 * j), 0, 4), m4);
            }
        }
        ls[0] = kc_pair_scale(t16, 0, 1);
        ls[1] = kc_pair_scale(t16, 2, 3);
        const float dx = GGML_FP16_TO_FP32(d);
        const float mx = GGML_FP16_TO_FP32(dmin);
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            const block_q8_K * y = (const block_q8_K *) vy[c] + ib;
            const __m256i summ = _mm256_madd_epi16(mn2, _mm256_loadu_si256((const __m256i *) y->bsums));
            const __m512i sumi = kc_dot256(_mm512_setzero_si512(), q, ls, y->qs);
            const float dy = y->d;
            acc[c] = _mm512_fmadd_ps(_mm512_set1_ps(dy * dx), _mm512_cvtepi32_ps(sumi), acc[c]);
            accm[c] = _mm256_fmadd_ps(_mm256_set1_ps(-dy * mx), _mm256_cvtepi32_ps(summ), accm[c]);
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        s[c] = _mm512_reduce_add_ps(_mm512_add_ps(acc[c], _mm512_zextps256_ps512(accm[c])));
    }
}

// ---------------------------------------------------------------------------------------------
// Q6_K: element 128h + 64t + 32u + l has the low 4 bits in ql[64h + 32u + l] (low nibble for
// t = 0, high for t = 1) and bits 4..5 from bits 2(2t + u) of qh[32h + l]; value = level - 32

GGML_X_VNNI_INLINE void kc_q6_K(int n, float * s, const block_q6_K * x, const void * const * vy, const int nc) {
    const int nb = n / QK_K;
    const __m512i m4 = _mm512_set1_epi8(15);
    const __m512i m2 = _mm512_set1_epi8(0x30);
    const __m512i sh0 = _mm512_inserti64x4(_mm512_set1_epi16(4), _mm256_set1_epi16(2), 1);
    __m512 acc[KC_GROUP];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
    }
    for (int ib = 0; ib < nb; ib++) {
        kc_prefetch(x + ib);
        kc_prefetch((const char *) (x + ib) + 128);
        const __m128i sc = _mm_loadu_si128((const __m128i *) x[ib].scales);
        const __m512i t16 = kq_scales16(sc, 1);
        const __m256i sc16 = _mm256_cvtepi8_epi16(sc);
        __m512i q[4], ls[2];
        for (int h = 0; h < 2; h++) {
            const __m512i lo = _mm512_loadu_si512((const void *) (x[ib].ql + 64 * h));
            const __m512i hb = kq_bcast32(x[ib].qh + 32 * h);
            const __m512i h0 = _mm512_and_si512(_mm512_sllv_epi16(hb, sh0), m2);
            const __m512i h1 = _mm512_and_si512(kq_shift2(hb, 0, 2), m2);
            q[2 * h]     = _mm512_ternarylogic_epi32(lo, m4, h0, 0xEA); // (lo & m4) | h0
            q[2 * h + 1] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(lo, 4), m4, h1, 0xEA);
        }
        ls[0] = kc_pair_scale(t16, 0, 1);
        ls[1] = kc_pair_scale(t16, 2, 3);
        const float dx = GGML_FP16_TO_FP32(x[ib].d);
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            const block_q8_K * y = (const block_q8_K *) vy[c] + ib;
            // levels are value + 32: start from -32 * sum of scale x sub-block activation sum
            const __m256i corr = _mm256_slli_epi32(_mm256_madd_epi16(sc16, _mm256_loadu_si256((const __m256i *) y->bsums)), 5);
            const __m512i s0 = _mm512_zextsi256_si512(_mm256_sub_epi32(_mm256_setzero_si256(), corr));
            const __m512i sumi = kc_dot256(s0, q, ls, y->qs);
            acc[c] = _mm512_fmadd_ps(_mm512_set1_ps(y->d * dx), _mm512_cvtepi32_ps(sumi), acc[c]);
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        s[c] = _mm512_reduce_add_ps(acc[c]);
    }
}

// ---------------------------------------------------------------------------------------------
// entry points: passes of KC_GROUP columns (a constant column count per instantiation, so the
// per-column loops unroll and the accumulators stay in registers)

#define KC_ENTRY(name, call)                                                                        \
    GGML_X_VNNI static void name(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,     \
                                 const void * const * vy, int nc) {                                 \
        for (int c0 = 0; c0 < nc; c0 += KC_GROUP) {                                                 \
            float * sc = s + c0;                                                                    \
            const void * const * yc = vy + c0;                                                      \
            switch (nc - c0 < KC_GROUP ? nc - c0 : KC_GROUP) {                                      \
                case 1:  call(1); break;                                                            \
                case 2:  call(2); break;                                                            \
                case 3:  call(3); break;                                                            \
                case 4:  call(4); break;                                                            \
                case 5:  call(5); break;                                                            \
                case 6:  call(6); break;                                                            \
                case 7:  call(7); break;                                                            \
                default: call(8); break;                                                            \
            }                                                                                       \
        }                                                                                           \
    }

#define KC_CALL_Q2_K(m) kc_q2_K(n, sc, (const block_q2_K *) vx, yc, m)
#define KC_CALL_Q3_K(m) kc_q3_K(n, sc, (const block_q3_K *) vx, yc, m)
#define KC_CALL_Q4_K(m) kc_k4(n, sc, vx, false, yc, m)
#define KC_CALL_Q5_K(m) kc_k4(n, sc, vx, true, yc, m)
#define KC_CALL_Q6_K(m) kc_q6_K(n, sc, (const block_q6_K *) vx, yc, m)

KC_ENTRY(ggml_x_vec_dot_cols_q2_K_vnni, KC_CALL_Q2_K)
KC_ENTRY(ggml_x_vec_dot_cols_q3_K_vnni, KC_CALL_Q3_K)
KC_ENTRY(ggml_x_vec_dot_cols_q4_K_vnni, KC_CALL_Q4_K)
KC_ENTRY(ggml_x_vec_dot_cols_q5_K_vnni, KC_CALL_Q5_K)
KC_ENTRY(ggml_x_vec_dot_cols_q6_K_vnni, KC_CALL_Q6_K)

void ggml_x_quant_kernels_kq_cols_vnni(struct ggml_x_quant_kernels * k) {
    k->vec_dot_cols_q2_K = ggml_x_vec_dot_cols_q2_K_vnni;
    k->vec_dot_cols_q3_K = ggml_x_vec_dot_cols_q3_K_vnni;
    k->vec_dot_cols_q4_K = ggml_x_vec_dot_cols_q4_K_vnni;
    k->vec_dot_cols_q5_K = ggml_x_vec_dot_cols_q5_K_vnni;
    k->vec_dot_cols_q6_K = ggml_x_vec_dot_cols_q6_K_vnni;
}

#endif // __x86_64__
