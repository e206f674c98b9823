// repack-avx2.c - AVX2 kernels of weights repacked by groups of 8 rows (layout: repack.c).
//
// One 256-bit load of a block's quant bytes is one byte quad of each of the 8 rows (lane = row),
// so each source column needs only a broadcast of its matching 4 activation bytes (from the
// prepared column set, repack.h) and every lane ends as the dot product of one row.
//   Q4_0: low and high nibbles x activations with vpmaddubsw; the 8 products of a block fit in
//         int16 (|sum| <= 8 * 2 * 15 * 127), one vpmaddwd per block, plus the -8 * sum(x)
//         correction prepared per block.
//   Q8_0: signed x signed through |w| and sign(x, w) (vpsignb), |pair| <= 2 * 128 * 127.
// Columns are processed four at a time (the accumulators of more do not fit in 16 registers);
// the group's weights are then re-read from L1/L2, not from memory.

#if defined(__x86_64__)

#include "cpu/gemm.h"
#include "cpu/repack.h"
#include "cpu/prefetch.h"
#include "ggml-quants.h"

#include <immintrin.h>

#define GXR __attribute__((target("avx2,fma,f16c")))
#define GXR_INLINE GXR __attribute__((always_inline)) static inline

// bytes ahead of the current block that the kernels prefetch (the next blocks of the group, or
// past its end the next group, which the next call reads)
#define RP_PREFETCH 1024

// The Q4_0 / Q8_0 kernels' prefetch distances: into L1 (near) and into L2 (far; 0: none), per
// block. Tunable for measurements through GGML_X_RP_PF / GGML_X_RP_FAR, as the k-quant kernels'
// through GGML_X_RPK_PF / _FAR / _MAX_ACT (repack-q4k.h), read when the level's kernel table
// is set up (build/bin/bench-rp-kernels pf=... with GGML_X_CPU_LEVEL=avx2); relaxed atomics,
// as tables may be set up while kernels run.
static size_t rp_pf_near = RP_PREFETCH;
static size_t rp_pf_far  = GGML_X_FAR_DISTANCE;

GXR_INLINE __m256i bcast4(const int8_t * p) {
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return _mm256_set1_epi32(v);
}

GXR_INLINE void rp_cols(int64_t nblk, const int nc, const int nct, const int j0, const uint8_t * grp, const uint8_t * set, float * out,
                        const bool q4) {
    const int64_t k = nblk * QK8_0;
    const size_t qb8 = GGML_X_RP_ROWS * (q4 ? QK4_0 / 2 : QK8_0); // quant bytes of a block of 8 rows
    const size_t bs8 = GGML_X_RP_ROWS * (q4 ? sizeof(block_q4_0) : sizeof(block_q8_0));
    const float * dx = (const float *) (set + ggml_x_rp_set_dx_off(k));
    const int32_t * corr = (const int32_t *) (set + ggml_x_rp_set_corr_off(k));
    __m256 acc[4];
#pragma GCC unroll 4
    for (int j = 0; j < nc; j++) {
        acc[j]  = _mm256_setzero_ps();
    }
    const __m256i m4 = _mm256_set1_epi8(15);
    const __m256i ones = _mm256_set1_epi16(1);
    const size_t near = __atomic_load_n(&rp_pf_near, __ATOMIC_RELAXED);
    const size_t far = __atomic_load_n(&rp_pf_far, __ATOMIC_RELAXED);
    for (int64_t b = 0; b < nblk; b++) {
        // runs of 4 blocks: quant bytes, then the scales (repack.c)
        const int64_t b0 = b & ~(int64_t) 3;
        const int64_t nin = nblk - b0 < 4 ? nblk - b0 : 4;
        const uint8_t * run = grp + (size_t) b0 * bs8;
        const uint8_t * blk = run + (size_t) (b - b0) * qb8;
        const uint8_t * scl = run + (size_t) nin * qb8 + (size_t) (b - b0) * 16;
        const int8_t * xq = (const int8_t *) set + (size_t) b * nct * QK8_0;
        if (near != 0) {
            _mm_prefetch((const char *) blk + near, _MM_HINT_T0);
            _mm_prefetch((const char *) blk + near + 64, _MM_HINT_T0);
            _mm_prefetch((const char *) blk + near + 128, _MM_HINT_T0);
            if (!q4) {
                _mm_prefetch((const char *) blk + near + 192, _MM_HINT_T0);
                _mm_prefetch((const char *) blk + near + 256, _MM_HINT_T0);
            }
        }
        // and into L2 from further ahead (cpu/prefetch.h): with 8 rows per pass the activation is
        // small, but one core's demand misses alone do not keep enough reads in flight
        ggml_x_prefetch_far(blk, far, bs8);
        const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) scl));
        __m256i s[4];
#pragma GCC unroll 4
        for (int j = 0; j < nc; j++) {
            s[j] = _mm256_setzero_si256();
        }
        if (q4) {
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++) {
                const __m256i w = _mm256_loadu_si256((const __m256i *) (blk + 32*c));
                const __m256i lo = _mm256_and_si256(w, m4);
                const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), m4);
#pragma GCC unroll 4
                for (int j = 0; j < nc; j++) {
                    const int8_t * qs = xq + 32*(j0 + j);
                    const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(lo, bcast4(qs + 4*c)),
                                                       _mm256_maddubs_epi16(hi, bcast4(qs + 16 + 4*c)));
                    s[j] = _mm256_add_epi16(s[j], p);
                }
            }
#pragma GCC unroll 4
            for (int j = 0; j < nc; j++) {
                s[j] = _mm256_add_epi32(_mm256_madd_epi16(s[j], ones), _mm256_set1_epi32(corr[b*nct + j0 + j]));
            }
        } else {
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++) {
                const __m256i w = _mm256_loadu_si256((const __m256i *) (blk + 32*c));
                const __m256i aw = _mm256_abs_epi8(w);
#pragma GCC unroll 4
                for (int j = 0; j < nc; j++) {
                    const __m256i sx = _mm256_sign_epi8(bcast4(xq + 32*(j0 + j) + 4*c), w);
                    s[j] = _mm256_add_epi32(s[j], _mm256_madd_epi16(_mm256_maddubs_epi16(aw, sx), ones));
                }
            }
        }
#pragma GCC unroll 4
        for (int j = 0; j < nc; j++) {
            acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[j]), _mm256_mul_ps(dw, _mm256_set1_ps(dx[b*nct + j0 + j])), acc[j]);
        }
    }
#pragma GCC unroll 4
    for (int j = 0; j < nc; j++) {
        _mm256_storeu_ps(out + j*GGML_X_RP_ROWS, acc[j]);
    }
}

GXR_INLINE void rp_kernel(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out,
                          const bool q4) {
    for (int j0 = 0; j0 < ncols; j0 += 4) {
        const int nc = ncols - j0 < 4 ? ncols - j0 : 4;
        switch (nc) {
            case 1:  rp_cols(nblk, 1, ncols, j0, grp, set, out + j0*GGML_X_RP_ROWS, q4); break;
            case 2:  rp_cols(nblk, 2, ncols, j0, grp, set, out + j0*GGML_X_RP_ROWS, q4); break;
            case 3:  rp_cols(nblk, 3, ncols, j0, grp, set, out + j0*GGML_X_RP_ROWS, q4); break;
            default: rp_cols(nblk, 4, ncols, j0, grp, set, out + j0*GGML_X_RP_ROWS, q4); break;
        }
    }
}

GXR static void rp_q4_0_avx2(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    rp_kernel(nblk, ncols, grp, set, out, true);
}

GXR static void rp_q8_0_avx2(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    rp_kernel(nblk, ncols, grp, set, out, false);
}

#define RPK_INLINE GXR_INLINE
#define RPK_VNNI 0
#include "cpu/repack-q4k.h"

// the k-quant kernels (repack-q4k.h, repack-q6k.h) four columns per pass (16 registers), as
// above: cols is rpk_cols or rpk6_cols
#define RPK_FOUR_COLS_PER_PASS(cols)                                                \
    for (int j0 = 0; j0 < ncols; j0 += 4) {                                        \
        switch (ncols - j0 < 4 ? ncols - j0 : 4) {                                 \
            case 1:  cols(nblk, 1, ncols, j0, grp, set, out); break;               \
            case 2:  cols(nblk, 2, ncols, j0, grp, set, out); break;               \
            case 3:  cols(nblk, 3, ncols, j0, grp, set, out); break;               \
            default: cols(nblk, 4, ncols, j0, grp, set, out); break;               \
        }                                                                          \
    }

GXR static void rp_q4_K_avx2(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    RPK_FOUR_COLS_PER_PASS(rpk_cols)
}

#define RPK6_INLINE GXR_INLINE
#define RPK6_VNNI 0
#include "cpu/repack-q6k.h"

GXR static void rp_q6_K_avx2(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    RPK_FOUR_COLS_PER_PASS(rpk6_cols)
}

void ggml_x_rp_kernels_avx2(struct ggml_x_gemm_kernels * k) {
    ggml_x_rp_setting(&rp_pf_near, "GGML_X_RP_PF");
    ggml_x_rp_setting(&rp_pf_far, "GGML_X_RP_FAR");
    ggml_x_rp_setting(&rpk_pf_near, "GGML_X_RPK_PF");
    ggml_x_rp_setting(&rpk_pf_far, "GGML_X_RPK_FAR");
    ggml_x_rp_setting(&rpk_pf_max_act, "GGML_X_RPK_MAX_ACT");
    ggml_x_rp_setting(&rpk_pf_spread, "GGML_X_RPK_SPREAD");
    k->rp_q4_0 = rp_q4_0_avx2;
    k->rp_q8_0 = rp_q8_0_avx2;
    k->rp_q4_K = rp_q4_K_avx2;
    k->rp_q6_K = rp_q6_K_avx2;
}

#endif // __x86_64__
