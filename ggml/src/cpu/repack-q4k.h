// repack-q4k.h - the Q4_K kernel of weights repacked by groups of 8 rows (layout: repack.c),
// included by repack-avx2.c (RPK_VNNI 0: vpmaddubsw) and repack-avx512.c (RPK_VNNI 1: vpdpbusd
// with embedded broadcasts, dpbusd_b), which define RPK_INLINE (target attributes) first.
//
// Per 8-row super-block: the 96 scale/min bytes (3 loads, byte i of the 8 rows side by side)
// are unpacked to 6-bit scales and mins of the 8 sub-blocks for all rows at once; then per
// sub-block the 8 quant chunks (lane = row, low or high nibbles) are unpacked once into
// registers and every column runs its dot products against broadcast activation quads:
//   VNNI: two vpdpbusd chains of 4 (|dot| <= 32 * 15 * 128), times the rows' scales (vpmulld);
//   AVX2: 8 vpmaddubsw summed in int16 (|sum| <= 8 * 2 * 15 * 128 < 2^15), one vpmaddwd by the
//         scale duplicated in both halves of each 32-bit lane.
// The integer sum over the sub-blocks is exact (the reference's sumi); the mins term (the
// reference's summ) is 4 vpmaddwd of the rows' (min[2p], min[2p+1]) pairs with the column's
// prepared sub-block sums. Both are scaled to float once per super-block and accumulated in one
// vector per column: acc += sumi * d * dy - summ * dmin * dy.

#include <string.h>

#define RPK_SB   (GGML_X_RP_ROWS * sizeof(block_q4_K))   // bytes of an 8-row super-block: 1152
#define RPK_HDR  128                                     // its header (repack.c)
#define RPK_FAR  GGML_X_FAR_DISTANCE                     // far prefetch distance into L2 (cpu/prefetch.h)

// The k-quant kernels' prefetch distances in bytes ahead of the current super-block, into L1
// (near; 0: two super-blocks) and into L2 (far; 0: none), for the kernels of this file
// and repack-q6k.h, used while a walk's column set holds at most rpk_pf_max_act bytes of
// activations (0: always); above that, the activations no longer fit beside the near window in
// L1 and the walk takes two super-blocks and RPK_FAR. The defaults here are those, always; a
// level may change them when its kernel table is set up (repack-avx512.c, also from
// GGML_X_RPK_PF / _FAR / _MAX_ACT for measurements: build/bin/bench-rp-kernels pf=...); relaxed
// atomics, as tables may be set up while kernels run.
static size_t rpk_pf_near    = 0;
static size_t rpk_pf_far     = RPK_FAR;
static size_t rpk_pf_max_act = 0;
// 1: with up to RPK_SPREAD_COLS columns in a pass, the near prefetches of a super-block are
// spread over its steps (a share of its lines before each), 0: all before its first step
// (GGML_X_RPK_SPREAD). A burst of 18 (Q4_K) or 27 (Q6_K) misses at once competes with the
// super-block's own loads for the miss buffers, as in the 16-row kernels (repack-avx512.c).
// Measured at the AVX2 level (GGML_X_CPU_LEVEL=avx2), Q4_K, burst -> spread: bench-matvec 4096 x
// 4096, one column, share of the read probe, two rounds: 1 thread 82 / 71 % -> 91 / 87 %,
// 2 threads 81 / 76 % -> 89 / 91 %; the TinyLlama-shaped Q4_K file at 2 threads, tok/s: np1 59 /
// 64 -> 73 / 73, np2 101 / 100 -> 104 / 104, np4 and np8 the same within 1 %; Q6_K, bench-matvec
// as above: 1 thread 75 / 72 % -> 84 / 82 %, 2 threads 74 / 74 % -> 79 / 81 %. The AVX-512 VNNI
// level sets 0: there these kernels serve Q6_K with one column (its near distance 4608), where
// spreading was slower (1 thread 82 / 79 / 85 % -> 75 / 82 / 73 %).
static size_t rpk_pf_spread  = 1;
#define RPK_SPREAD_COLS 4

// prefetch lines l0 .. l1-1 from p into L1
RPK_INLINE void rpk_pf_lines(const uint8_t * p, int l0, int l1) {
#pragma GCC unroll 27
    for (int l = l0; l < l1; l++) {
        _mm_prefetch((const char *) p + 64*l, _MM_HINT_T0);
    }
}

// the near and far distances of a walk over super-blocks of sb bytes with act bytes of
// activations in its column set
RPK_INLINE void rpk_distances(size_t sb, size_t act, size_t * near, size_t * far) {
    const size_t lim = __atomic_load_n(&rpk_pf_max_act, __ATOMIC_RELAXED);
    if (lim != 0 && act > lim) {
        *near = 2 * sb;
        *far = RPK_FAR;
        return;
    }
    const size_t n = __atomic_load_n(&rpk_pf_near, __ATOMIC_RELAXED);
    *near = n != 0 ? n : 2 * sb;
    *far = __atomic_load_n(&rpk_pf_far, __ATOMIC_RELAXED);
}

// the 4 bytes at p in every 32-bit lane (repack-q6k.h uses it too)
RPK_INLINE __m256i rpk_b4(const void * p) {
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return _mm256_set1_epi32(v);
}

// columns j0 .. j0+nc-1 of a set of nct columns
RPK_INLINE void rpk_cols(int64_t nblk, const int nc, const int nct, const int j0, const uint8_t * grp,
                         const uint8_t * set, float * out) {
    const int64_t k = nblk * QK_K;
    const float * dx = (const float *) (set + ggml_x_rp_set_dx_off(k));
    const int16_t * bsum = (const int16_t *) (set + ggml_x_rp_set_corr_off(k));
    const __m256i m4  = _mm256_set1_epi8(15);
    const __m256i m63 = _mm256_set1_epi8(63);
    const __m256i m30 = _mm256_set1_epi8(0x30);
    _Alignas(32) uint8_t scm[128]; // [0, 64): scale of sub-block j, row r at 8j + r; [64, 128): mins
    size_t near, far;
    rpk_distances(RPK_SB, (size_t) nc * (size_t) k, &near, &far);
    const bool spread = nc <= RPK_SPREAD_COLS && __atomic_load_n(&rpk_pf_spread, __ATOMIC_RELAXED) != 0;
    const int nl = (int) (RPK_SB / 64); // lines of a super-block
    __m256 acc[GGML_X_RP_COLS];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm256_setzero_ps();
    }
    for (int64_t b = 0; b < nblk; b++) {
        const uint8_t * kb = grp + (size_t) b * RPK_SB;
        const uint8_t * qb = kb + RPK_HDR;
        if (!spread) {
            rpk_pf_lines(kb + near, 0, nl);
        }
        if (far != 0) {
#pragma GCC unroll 18
            for (int l = 0; l < (int) RPK_SB; l += 64) {
                _mm_prefetch((const char *) kb + far + l, _MM_HINT_T1);
            }
        }
        {
            const __m256i A = _mm256_loadu_si256((const __m256i *) (kb + 32)); // bytes 0..3
            const __m256i B = _mm256_loadu_si256((const __m256i *) (kb + 64)); // bytes 4..7
            const __m256i C = _mm256_loadu_si256((const __m256i *) (kb + 96)); // bytes 8..11
            _mm256_store_si256((__m256i *) scm, _mm256_and_si256(A, m63));
            _mm256_store_si256((__m256i *) (scm + 32),
                               _mm256_or_si256(_mm256_and_si256(C, m4), _mm256_and_si256(_mm256_srli_epi16(A, 2), m30)));
            _mm256_store_si256((__m256i *) (scm + 64), _mm256_and_si256(B, m63));
            _mm256_store_si256((__m256i *) (scm + 96),
                               _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(C, 4), m4),
                                               _mm256_and_si256(_mm256_srli_epi16(B, 2), m30)));
        }
        const int8_t * xq = (const int8_t *) set + (size_t) b * nct * QK_K + (size_t) j0 * QK_K;
        __m256i isum[GGML_X_RP_COLS];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            isum[c] = _mm256_setzero_si256();
        }
#pragma GCC unroll 1
        for (int j = 0; j < QK_K / 32; j++) {
            if (spread) { // an eighth of the super-block's lines before each sub-block
                rpk_pf_lines(kb + near, (j * nl + 7) / 8, ((j + 1) * nl + 7) / 8);
            }
            const uint8_t * qc = qb + (size_t) (j / 2) * 8 * 32;
            __m256i w[8];
#pragma GCC unroll 8
            for (int m = 0; m < 8; m++) {
                const __m256i v = _mm256_loadu_si256((const __m256i *) (qc + 32*m));
                w[m] = _mm256_and_si256(j & 1 ? _mm256_srli_epi16(v, 4) : v, m4);
            }
            __m256i sc = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *) (scm + 8*j)));
#if !RPK_VNNI
            sc = _mm256_or_si256(sc, _mm256_slli_epi32(sc, 16));
#endif
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                const int8_t * xj = xq + (size_t) c * QK_K + 32*j;
#if RPK_VNNI
                __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
#pragma GCC unroll 4
                for (int m = 0; m < 8; m += 2) {
                    s0 = dpbusd_b(s0, w[m], xj + 4*m);
                    s1 = dpbusd_b(s1, w[m + 1], xj + 4*m + 4);
                }
                isum[c] = _mm256_add_epi32(isum[c], _mm256_mullo_epi32(_mm256_add_epi32(s0, s1), sc));
#else
                __m256i s0 = _mm256_maddubs_epi16(w[0], rpk_b4(xj));
                __m256i s1 = _mm256_maddubs_epi16(w[1], rpk_b4(xj + 4));
#pragma GCC unroll 3
                for (int m = 2; m < 8; m += 2) {
                    s0 = _mm256_add_epi16(s0, _mm256_maddubs_epi16(w[m], rpk_b4(xj + 4*m)));
                    s1 = _mm256_add_epi16(s1, _mm256_maddubs_epi16(w[m + 1], rpk_b4(xj + 4*m + 4)));
                }
                isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(_mm256_add_epi16(s0, s1), sc));
#endif
            }
        }
        // mins: lane r of mn[p] = (min of sub-block 2p, of 2p + 1) of row r
        // (one 16-byte load and a byte shuffle: bytes 0..7 and 8..15 interleaved; two 8-byte
        // loads and an unpack made GCC emit a register-to-register vmovq that valgrind rejects)
        __m256i mn[4];
        const __m128i pair = _mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
#pragma GCC unroll 4
        for (int p = 0; p < 4; p++) {
            const __m128i v = _mm_loadu_si128((const __m128i *) (scm + 64 + 16*p));
            mn[p] = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(v, pair));
        }
        const __m256 d  = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) kb));
        const __m256 dm = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (kb + 16)));
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            const int16_t * bs = bsum + ((size_t) b * nct + (size_t) (j0 + c)) * (QK_K / 32);
            __m256i s = _mm256_madd_epi16(mn[0], rpk_b4(bs));
#pragma GCC unroll 3
            for (int p = 1; p < 4; p++) {
                s = _mm256_add_epi32(s, _mm256_madd_epi16(mn[p], rpk_b4(bs + 2*p)));
            }
            const __m256 yd = _mm256_set1_ps(dx[(size_t) b * nct + (size_t) (j0 + c)]);
            acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[c]), _mm256_mul_ps(d, yd), acc[c]);
            acc[c] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(s), _mm256_mul_ps(dm, yd), acc[c]);
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        _mm256_storeu_ps(out + (j0 + c) * GGML_X_RP_ROWS, acc[c]);
    }
}
