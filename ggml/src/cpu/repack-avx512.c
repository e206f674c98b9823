// repack-avx512.c - AVX-512 VNNI kernels of weights repacked by groups of 8 rows (layout:
// repack.c).
//
// One 512-bit load of a block's quant bytes holds two byte quads of each of the 8 rows (int32
// lanes 0-7: quad 2c of rows 0..7, lanes 8-15: quad 2c+1), which the prepared activations match
// vector for vector (repack.h), so a column costs 4 vpdpbusd per block with memory operands,
// a masked broadcast of the prepared offset correction (lanes 0-7 only) as their start, one
// conversion and one multiply-add. Weights are made unsigned for vpdpbusd: Q4_0 nibbles are
// 0..15 (correction -8 * sum(x)), Q8_0 bytes get + 128 (xor 0x80, correction -128 * sum(x)).
// Lanes r and r + 8 are added once, at the end of the row. All 8 columns in one pass.

#if defined(__x86_64__)

#include "cpu/gemm.h"
#include "cpu/repack.h"
#include "ggml-quants.h"

#include <immintrin.h>

#define GXV __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#define GXV_INLINE GXV __attribute__((always_inline)) static inline

// bytes ahead of the current block that the kernels prefetch
#define RP_PREFETCH 1024

GXV_INLINE void rp_cols(int64_t nblk, const int nc, const uint8_t * grp, const uint8_t * const * xp, float * out,
                        const bool q4) {
    const int64_t k = nblk * QK8_0;
    const size_t bs8 = GGML_X_RP_ROWS * (q4 ? sizeof(block_q4_0) : sizeof(block_q8_0));
    const size_t dx_off = ggml_x_rp_prep_dx_off(k), corr_off = ggml_x_rp_prep_corr_off(k);
    __m512 acc[GGML_X_RP_COLS];
    for (int j = 0; j < nc; j++) {
        acc[j] = _mm512_setzero_ps();
    }
    const __m512i m4 = _mm512_set1_epi8(15);
    const __m512i x80 = _mm512_set1_epi8((char) 0x80);
    for (int64_t b = 0; b < nblk; b++) {
        const uint8_t * blk = grp + (size_t) b * bs8;
        _mm_prefetch((const char *) blk + RP_PREFETCH, _MM_HINT_T0);
        _mm_prefetch((const char *) blk + RP_PREFETCH + 64, _MM_HINT_T0);
        _mm_prefetch((const char *) blk + RP_PREFETCH + 128, _MM_HINT_T0);
        if (!q4) {
            _mm_prefetch((const char *) blk + RP_PREFETCH + 192, _MM_HINT_T0);
            _mm_prefetch((const char *) blk + RP_PREFETCH + 256, _MM_HINT_T0);
        }
        const __m512 dw = _mm512_broadcast_f32x8(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) blk)));
        __m512i w0, w1, w2, w3;
        if (q4) {
            const __m512i r0 = _mm512_loadu_si512((const void *) (blk + 16));
            const __m512i r1 = _mm512_loadu_si512((const void *) (blk + 80));
            w0 = _mm512_and_si512(r0, m4);
            w1 = _mm512_and_si512(r1, m4);
            w2 = _mm512_and_si512(_mm512_srli_epi16(r0, 4), m4);
            w3 = _mm512_and_si512(_mm512_srli_epi16(r1, 4), m4);
        } else {
            w0 = _mm512_xor_si512(_mm512_loadu_si512((const void *) (blk + 16)), x80);
            w1 = _mm512_xor_si512(_mm512_loadu_si512((const void *) (blk + 80)), x80);
            w2 = _mm512_xor_si512(_mm512_loadu_si512((const void *) (blk + 144)), x80);
            w3 = _mm512_xor_si512(_mm512_loadu_si512((const void *) (blk + 208)), x80);
        }
#pragma GCC unroll 8
        for (int j = 0; j < nc; j++) {
            const uint8_t * xe = xp[j] + (size_t) b * 256;
            const int32_t c = ((const int32_t *) (xp[j] + corr_off))[b];
            __m512i is = _mm512_maskz_set1_epi32(0x00ff, c);
            is = _mm512_dpbusd_epi32(is, w0, _mm512_load_si512((const void *) xe));
            is = _mm512_dpbusd_epi32(is, w1, _mm512_load_si512((const void *) (xe + 64)));
            is = _mm512_dpbusd_epi32(is, w2, _mm512_load_si512((const void *) (xe + 128)));
            is = _mm512_dpbusd_epi32(is, w3, _mm512_load_si512((const void *) (xe + 192)));
            const float d = ((const float *) (xp[j] + dx_off))[b];
            acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_mul_ps(dw, _mm512_set1_ps(d)), acc[j]);
        }
    }
    for (int j = 0; j < nc; j++) {
        const __m256 s = _mm256_add_ps(_mm512_castps512_ps256(acc[j]), _mm512_extractf32x8_ps(acc[j], 1));
        _mm256_storeu_ps(out + j*GGML_X_RP_ROWS, s);
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
