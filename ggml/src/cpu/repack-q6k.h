// repack-q6k.h - the Q6_K kernel of weights repacked by groups of 8 rows (layout: repack.c),
// included by repack-avx2.c (RPK6_VNNI 0: vpmaddubsw) and repack-avx512.c (RPK6_VNNI 1:
// vpdpbusd with embedded broadcasts, dpbusd_b, and vpternlogd), which define RPK6_INLINE
// (target attributes) first, after repack-q4k.h.
//
// A Q6_K weight is d * scale[g] * (q - 32), q = 4 low bits (ql) | 2 high bits (qh) << 4, one
// int8 scale per group g of 16 elements. Per 8-row super-block and per step (a half n, chunks
// c = 4h..4h+3, a field f), 4 ql chunks and the 4 qh chunks are loaded and joined into the
// unsigned 6-bit q of one group for all 8 rows (lane = row, 4 elements per lane); every column
// then runs its dot products against broadcast activation quads:
//   VNNI: one vpdpbusd chain of 4 per group (|dot| <= 16 * 63 * 128), times the rows' scales
//         (vpmulld);
//   AVX2: 2 x 2 vpmaddubsw summed in int16 (|sum| <= 2 * 2 * 63 * 128 < 2^15), vpmaddwd by the
//         scale in both halves of each 32-bit lane.
// The - 32 of every q is applied once per super-block: 32 * sum over groups of scale * (the
// column's sum of the group's 16 activation bytes, prepared), 8 vpmaddwd of the rows' scale
// pairs. The integer sum over the super-block is the reference's (exact); it is scaled to float
// once per super-block and accumulated in one vector per column: acc += isum * d * dy.

#include <string.h>

#ifndef RPK_SB
#error "include cpu/repack-q4k.h first (its rpk_b4 serves both)"
#endif

#define RPK6_SB   (GGML_X_RP_ROWS * sizeof(block_q6_K))  // bytes of an 8-row super-block: 1680
#define RPK6_HDR  144                                    // its header (repack.c)
// prefetch distances: rpk_distances of repack-q4k.h

// the 6-bit q of 4 elements per row: bits 0..3 from lo (its high nibble ignored), bits 4..5
// from hi (already masked to 0x30)
RPK6_INLINE __m256i rpk6_join(__m256i lo, __m256i hi, __m256i m4) {
#if RPK6_VNNI
    return _mm256_ternarylogic_epi32(lo, hi, m4, 0xE4); // m4 ? lo : hi, bit by bit
#else
    return _mm256_or_si256(_mm256_and_si256(lo, m4), hi);
#endif
}

// group g's scale of the 8 rows, one per 32-bit lane (AVX2: in both int16 halves)
RPK6_INLINE __m256i rpk6_scale(const uint8_t * kb, int g) {
    const __m256i sc = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (kb + 16 + 8*g)));
#if RPK6_VNNI
    return sc;
#else
    return _mm256_blend_epi16(sc, _mm256_slli_epi32(sc, 16), 0xAA);
#endif
}

// isum + the scaled dot of one group (4 chunks w) with the 16 activation bytes at x
RPK6_INLINE __m256i rpk6_group(__m256i isum, const __m256i * w, const int8_t * x, __m256i sc) {
#if RPK6_VNNI
    __m256i s = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int m = 0; m < 4; m++) {
        s = dpbusd_b(s, w[m], x + 4*m);
    }
    return _mm256_add_epi32(isum, _mm256_mullo_epi32(s, sc));
#else
    const __m256i s0 = _mm256_add_epi16(_mm256_maddubs_epi16(w[0], rpk_b4(x)), _mm256_maddubs_epi16(w[1], rpk_b4(x + 4)));
    const __m256i s1 = _mm256_add_epi16(_mm256_maddubs_epi16(w[2], rpk_b4(x + 8)), _mm256_maddubs_epi16(w[3], rpk_b4(x + 12)));
    return _mm256_add_epi32(isum, _mm256_add_epi32(_mm256_madd_epi16(s0, sc), _mm256_madd_epi16(s1, sc)));
#endif
}

// columns j0 .. j0+nc-1 of a set of nct columns
RPK6_INLINE void rpk6_cols(int64_t nblk, const int nc, const int nct, const int j0, const uint8_t * grp,
                           const uint8_t * set, float * out) {
    const int64_t k = nblk * QK_K;
    const float * dx = (const float *) (set + ggml_x_rp_set_dx_off(k));
    const int16_t * bsum = (const int16_t *) (set + ggml_x_rp_set_corr_off(k));
    const __m256i m4  = _mm256_set1_epi8(15);
    const __m256i m30 = _mm256_set1_epi8(0x30);
    const __m128i pair = _mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    size_t near, far;
    rpk_distances(RPK6_SB, (size_t) nc * (size_t) k, &near, &far);
    const bool spread = nc <= RPK_SPREAD_COLS && __atomic_load_n(&rpk_pf_spread, __ATOMIC_RELAXED) != 0;
    const int nl = (int) ((RPK6_SB + 63) / 64); // lines of a super-block
    __m256 acc[GGML_X_RP_COLS];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nblk; b++) {
        const uint8_t * kb = grp + (size_t) b * RPK6_SB;
        if (!spread) {
            rpk_pf_lines(kb + near, 0, nl);
        }
        if (far != 0) {
#pragma GCC unroll 27
            for (int l = 0; l < (int) RPK6_SB; l += 64) {
                _mm_prefetch((const char *) kb + far + l, _MM_HINT_T1);
            }
        }
        const int8_t * xq = (const int8_t *) set + (size_t) b * nct * QK_K + (size_t) j0 * QK_K;
        __m256i isum[GGML_X_RP_COLS];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            isum[c] = _mm256_setzero_si256();
        }
#pragma GCC unroll 1
        for (int s = 0; s < 4; s++) { // half n = s / 2, chunks 4h..4h+3 with h = s % 2
            if (spread) { // a quarter of the super-block's lines before each step
                rpk_pf_lines(kb + near, (s * nl + 3) / 4, ((s + 1) * nl + 3) / 4);
            }
            const int n = s / 2, h = s % 2;
            const uint8_t * qs = kb + RPK6_HDR + 768*n + 96*4*h;
#pragma GCC unroll 4
            for (int f = 0; f < 4; f++) {
                // field f: the low (f < 2) or high nibbles of ql chunk f % 2 and qh bits 2f..2f+1,
                // the elements 128n + 32f + 4c .. + 3 (one field at a time: 4 weight vectors live,
                // so the sums of 8 columns stay in registers)
                __m256i w[4];
#pragma GCC unroll 4
                for (int m = 0; m < 4; m++) {
                    const __m256i x = _mm256_loadu_si256((const __m256i *) (qs + 96*m + 32*(f % 2)));
                    const __m256i q = _mm256_loadu_si256((const __m256i *) (qs + 96*m + 64));
                    const __m256i hq = f == 0 ? _mm256_slli_epi16(q, 4) : f == 1 ? _mm256_slli_epi16(q, 2) :
                                       f == 2 ? q : _mm256_srli_epi16(q, 2);
                    w[m] = rpk6_join(f < 2 ? x : _mm256_srli_epi16(x, 4), _mm256_and_si256(hq, m30), m4);
                }
                const __m256i sc = rpk6_scale(kb, 8*n + 2*f + h);
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++) {
                    isum[c] = rpk6_group(isum[c], w, xq + (size_t) c * QK_K + 128*n + 16*h + 32*f, sc);
                }
            }
        }
        // the - 32: lane r of sp[p] = (scale 2p, scale 2p + 1) of row r, as int16
        __m256i sp[8];
#pragma GCC unroll 8
        for (int p = 0; p < 8; p++) {
            const __m128i v = _mm_loadu_si128((const __m128i *) (kb + 16 + 16*p));
            sp[p] = _mm256_cvtepi8_epi16(_mm_shuffle_epi8(v, pair));
        }
        const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) kb));
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            const int16_t * bs = bsum + ((size_t) b * nct + (size_t) (j0 + c)) * (QK_K / 16);
            __m256i m = _mm256_madd_epi16(sp[0], rpk_b4(bs));
#pragma GCC unroll 7
            for (int p = 1; p < 8; p++) {
                m = _mm256_add_epi32(m, _mm256_madd_epi16(sp[p], rpk_b4(bs + 2*p)));
            }
            const __m256i t = _mm256_sub_epi32(isum[c], _mm256_slli_epi32(m, 5));
            const __m256 yd = _mm256_set1_ps(dx[(size_t) b * nct + (size_t) (j0 + c)]);
            acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t), _mm256_mul_ps(d, yd), acc[c]);
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        _mm256_storeu_ps(out + (j0 + c) * GGML_X_RP_ROWS, acc[c]);
    }
}
