// repack-avx512.c - AVX-512 VNNI kernels of weights repacked by groups of 8 rows (layout:
// repack.c), on 256-bit vectors (AVX512-VL).
//
// As in repack-avx2.c, one 256-bit load of a block's quant bytes is one byte quad of each of the
// 8 rows (lane = row), so a source column needs its matching 4 activation bytes broadcast to all
// lanes, which vpdpbusd takes as an embedded broadcast of the prepared row's q8_0 bytes (compact:
// it stays in L1). 512-bit vectors were measured slower here: they need the activations expanded
// (4x the bytes, out of L1) or permuted, and the CPUs at hand execute them as two 256-bit halves.
// vpdpbusd wants unsigned weights: Q4_0 nibbles are 0..15 (the accumulator starts at the prepared
// -8 * sum(x)), Q8_0 bytes get + 128 (xor 0x80, start -128 * sum(x)). All 8 columns in one pass
// (32 vector registers).

#if defined(__x86_64__)

#include "cpu/gemm.h"
#include "cpu/repack.h"
#include "ggml-quants.h"

#include <immintrin.h>

#define GXV __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#define GXV_INLINE GXV __attribute__((always_inline)) static inline

// bytes ahead of the current block that the kernels prefetch
#define RP_PREFETCH 1024

GXV_INLINE __m256i bcast4(const int8_t * p) {
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return _mm256_set1_epi32(v);
}

GXV_INLINE void rp_cols(int64_t nblk, const int nc, const uint8_t * grp, const uint8_t * const * xp, float * out,
                        const bool q4) {
    const int64_t k = nblk * QK8_0;
    const size_t qb8 = GGML_X_RP_ROWS * (q4 ? QK4_0 / 2 : QK8_0); // quant bytes of a block of 8 rows
    const size_t bs8 = GGML_X_RP_ROWS * (q4 ? sizeof(block_q4_0) : sizeof(block_q8_0));
    const block_q8_0 * y[GGML_X_RP_COLS];
    const float * dx[GGML_X_RP_COLS];
    const int32_t * corr[GGML_X_RP_COLS];
    __m256 acc[GGML_X_RP_COLS];
    for (int j = 0; j < nc; j++) {
        y[j]    = (const block_q8_0 *) (xp[j] + ggml_x_rp_prep_q8_off(k));
        dx[j]   = (const float *) (xp[j] + ggml_x_rp_prep_dx_off(k));
        corr[j] = (const int32_t *) (xp[j] + ggml_x_rp_prep_corr_off(k));
        acc[j]  = _mm256_setzero_ps();
    }
    const __m256i m4 = _mm256_set1_epi8(15);
    const __m256i x80 = _mm256_set1_epi8((char) 0x80);
    for (int64_t b = 0; b < nblk; b++) {
        // runs of 4 blocks: quant bytes, then the scales (repack.c)
        const int64_t b0 = b & ~(int64_t) 3;
        const int64_t nin = nblk - b0 < 4 ? nblk - b0 : 4;
        const uint8_t * run = grp + (size_t) b0 * bs8;
        const uint8_t * blk = run + (size_t) (b - b0) * qb8;
        const uint8_t * scl = run + (size_t) nin * qb8 + (size_t) (b - b0) * 16;
        _mm_prefetch((const char *) blk + RP_PREFETCH, _MM_HINT_T0);
        _mm_prefetch((const char *) blk + RP_PREFETCH + 64, _MM_HINT_T0);
        _mm_prefetch((const char *) blk + RP_PREFETCH + 128, _MM_HINT_T0);
        if (!q4) {
            _mm_prefetch((const char *) blk + RP_PREFETCH + 192, _MM_HINT_T0);
            _mm_prefetch((const char *) blk + RP_PREFETCH + 256, _MM_HINT_T0);
        }
        __m256i s[GGML_X_RP_COLS];
        for (int j = 0; j < nc; j++) {
            s[j] = _mm256_set1_epi32(corr[j][b]);
        }
        if (q4) {
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++) {
                const __m256i w = _mm256_loadu_si256((const __m256i *) (blk + 32*c));
                const __m256i lo = _mm256_and_si256(w, m4);
                const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), m4);
#pragma GCC unroll 8
                for (int j = 0; j < nc; j++) {
                    s[j] = _mm256_dpbusd_epi32(s[j], lo, bcast4(y[j][b].qs + 4*c));
                    s[j] = _mm256_dpbusd_epi32(s[j], hi, bcast4(y[j][b].qs + 16 + 4*c));
                }
            }
        } else {
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++) {
                const __m256i w = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (blk + 32*c)), x80);
#pragma GCC unroll 8
                for (int j = 0; j < nc; j++) {
                    s[j] = _mm256_dpbusd_epi32(s[j], w, bcast4(y[j][b].qs + 4*c));
                }
            }
        }
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) scl));
#pragma GCC unroll 8
        for (int j = 0; j < nc; j++) {
            acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[j]), _mm256_mul_ps(dw, _mm256_set1_ps(dx[j][b])), acc[j]);
        }
    }
    for (int j = 0; j < nc; j++) {
        _mm256_storeu_ps(out + j*GGML_X_RP_ROWS, acc[j]);
    }
}

GXV_INLINE void rp_kernel(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * const * xp, float * out,
                          const bool q4) {
    switch (ncols) {
        case 1:  rp_cols(nblk, 1, grp, xp, out, q4); break;
        case 2:  rp_cols(nblk, 2, grp, xp, out, q4); break;
        case 3:  rp_cols(nblk, 3, grp, xp, out, q4); break;
        case 4:  rp_cols(nblk, 4, grp, xp, out, q4); break;
        case 5:  rp_cols(nblk, 5, grp, xp, out, q4); break;
        case 6:  rp_cols(nblk, 6, grp, xp, out, q4); break;
        case 7:  rp_cols(nblk, 7, grp, xp, out, q4); break;
        default: rp_cols(nblk, 8, grp, xp, out, q4); break;
    }
}

GXV static void rp_q4_0_vnni(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * const * xp, float * out) {
    rp_kernel(nblk, ncols, grp, xp, out, true);
}

GXV static void rp_q8_0_vnni(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * const * xp, float * out) {
    rp_kernel(nblk, ncols, grp, xp, out, false);
}

void ggml_x_rp_kernels_vnni(struct ggml_x_gemm_kernels * k) {
    k->rp_q4_0 = rp_q4_0_vnni;
    k->rp_q8_0 = rp_q8_0_vnni;
}

#endif // __x86_64__
