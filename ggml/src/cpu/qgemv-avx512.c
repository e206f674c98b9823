// qgemv-avx512.c - AVX-512 VNNI matrix-vector kernels for Q4_0, Q8_0 and Q4_K weights.
//
// The activation row is prepared once per src1 row (in MUL_MAT's conversion phase) into a
// layout that matches what one 512-bit load of weights becomes, so that the per-weight-row work
// is only: load, unpack, one vpdpbusd, scale. Everything that depends on the activations alone
// (byte order, the offset correction of unsigned weights, per-lane scales, sub-block sums) is
// computed in the preparation, not once per weight row.
//
// Prepared layouts (lane = one int32 of a zmm, covering 4 consecutive bytes):
//   Q4_0, per pair of blocks (192 bytes): 64 int8 in the order of the unpacked weights
//     [x0[0:16], x1[0:16], x0[16:32], x1[16:32]]; 16 int32 corrections (-8 * sum of the lane's 4
//     bytes); 16 float lane scales [dx0 x4, dx1 x4, dx0 x4, dx1 x4]
//   Q8_0, per pair of blocks (192 bytes): 64 int8 [x0, x1]; 16 int32 corrections (-128 * lane
//     sum, the weights are made unsigned by + 128); 16 float lane scales [dx0 x8, dx1 x8]
//   Q4_K, per super-block (320 bytes): 256 int8; float scale; 8 int16 sub-block sums; padding
// A missing second block of an odd block count is all zero.

#if defined(__x86_64__)

#include "cpu/gemm.h"
#include "cpu/prefetch.h"
#include "ggml-quants.h"
#include "cpu/traits.h"

#include <immintrin.h>
#include <stddef.h>

#define GXV __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#define GXV_INLINE GXV __attribute__((always_inline)) static inline

#define PAIR_BYTES 192

// How far ahead of the current block the Q4_0/Q8_0 kernel prefetches its weight row. Measured
// on a shared 2-core AVX-512 VM (4096x4096 mat-vec, weights cold, rounds alternating with the
// kernel without prefetch, issue 17): Q8_0 at 2 threads, median ratios 1.04, 1.09, 1.17 and 1.05
// (12 of 16 rounds faster) in four runs, 0.93 in a fifth; 1.06 at 1 thread; Q4_0 1.12. The
// machine's bandwidth moved by up to 2x between rounds, so these are modest, noisy gains; 256,
// 512, 1024 and 1536 bytes were no better.
#define QGEMV_PREFETCH 768
#define QK_BYTES   320

static size_t prep_size(enum ggml_type wtype, int64_t k) {
    if (wtype == GGML_TYPE_Q4_K) {
        return (size_t) (k / QK_K) * QK_BYTES;
    }
    return (size_t) ((k / QK8_0 + 1) / 2) * PAIR_BYTES;
}

// ---------------------------------------------------------------------------------------------
// preparation (scalar: once per activation row)

static void prep_pairs(const float * x, void * vy, int k, bool q4) {
    const ggml_from_float_t quantize = ggml_x_cpu_type_traits(GGML_TYPE_Q8_0)->from_float;
    const int nblk = k / QK8_0;
    uint8_t * y = (uint8_t *) vy;
    for (int b = 0; b < nblk; b += 2, y += PAIR_BYTES) {
        block_q8_0 q[2];
        memset(q, 0, sizeof(q));
        const int nb = b + 1 < nblk ? 2 : 1;
        quantize(x + (int64_t) b * QK8_0, q, nb * QK8_0);
        int8_t * xs = (int8_t *) y;
        int32_t corr[16];
        float sc[16];
        const float d[2] = { GGML_FP16_TO_FP32(q[0].d), nb == 2 ? GGML_FP16_TO_FP32(q[1].d) : 0.0f };
        if (q4) {
            memcpy(xs,      q[0].qs,      16);
            memcpy(xs + 16, q[1].qs,      16);
            memcpy(xs + 32, q[0].qs + 16, 16);
            memcpy(xs + 48, q[1].qs + 16, 16);
        } else {
            memcpy(xs,      q[0].qs, 32);
            memcpy(xs + 32, q[1].qs, 32);
        }
        for (int l = 0; l < 16; l++) {
            const int s = xs[4*l] + xs[4*l + 1] + xs[4*l + 2] + xs[4*l + 3];
            corr[l] = (q4 ? -8 : -128) * s;
            sc[l] = q4 ? d[(l >> 2) & 1] : d[l >> 3];
        }
        memcpy(y + 64, corr, sizeof(corr));
        memcpy(y + 128, sc, sizeof(sc));
    }
}

static void prep_q4_0(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k) {
    prep_pairs(x, y, k, true);
}

static void prep_q8_0(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k) {
    prep_pairs(x, y, k, false);
}

static void prep_q4_K(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    const ggml_from_float_t quantize = ggml_x_cpu_type_traits(GGML_TYPE_Q8_K)->from_float;
    uint8_t * y = (uint8_t *) vy;
    for (int b = 0; b < k / QK_K; b++, y += QK_BYTES) {
        block_q8_K q;
        quantize(x + (int64_t) b * QK_K, &q, QK_K);
        memcpy(y, q.qs, 256);
        memcpy(y + 256, &q.d, sizeof(float));
        int16_t bs[8];
        for (int j = 0; j < 8; j++) {
            bs[j] = (int16_t) (q.bsums[2*j] + q.bsums[2*j + 1]);
        }
        memcpy(y + 260, bs, sizeof(bs));
        memset(y + 276, 0, QK_BYTES - 276);
    }
}

// ---------------------------------------------------------------------------------------------
// kernels

// the two fp16 scales at p0, p1 as float lanes, selected by idx
GXV_INLINE __m512 d2_lanes(const ggml_fp16_t * p0, const ggml_fp16_t * p1, __m512i idx) {
    uint16_t h0, h1;
    memcpy(&h0, p0, sizeof(h0));
    memcpy(&h1, p1, sizeof(h1));
    const __m128 d = _mm_cvtph_ps(_mm_cvtsi32_si128((int) ((uint32_t) h0 | (uint32_t) h1 << 16)));
    return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(d));
}

// scales of nb consecutive blocks (fp16 at the start of each, bs bytes apart, all within the
// first 128 bytes): one two-source word permute of two 64-byte loads
GXV_INLINE __m512 d_blocks(const void * blocks, int bs, int nb) {
    int16_t idx[32] = { 0 };
    for (int i = 0; i < nb; i++) {
        idx[i] = (int16_t) (i * bs / 2);
    }
    const __m512i vi = _mm512_loadu_si512((const void *) idx);
    const __m512i lo = _mm512_loadu_si512(blocks);
    const __m512i hi = _mm512_loadu_si512((const void *) ((const char *) blocks + 64));
    const __m512i h = _mm512_permutex2var_epi16(lo, vi, hi);
    return _mm512_castps256_ps512(_mm256_cvtph_ps(_mm512_castsi512_si128(h)));
}

// Q4_0 and Q8_0 share the loop: per pair of blocks, W bytes as in the prepared activations
GXV_INLINE __m512i w_pair(const void * x, int b, const bool q4) {
    if (q4) {
        const block_q4_0 * xb = (const block_q4_0 *) x + b;
        const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) xb[0].qs)),
                                                  _mm_loadu_si128((const __m128i *) xb[1].qs), 1);
        return _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(v), _mm256_srli_epi16(v, 4), 1), _mm512_set1_epi8(15));
    }
    const block_q8_0 * xb = (const block_q8_0 *) x + b;
    return _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) xb[0].qs)),
                                               _mm256_loadu_si256((const __m256i *) xb[1].qs), 1), _mm512_set1_epi8((char) 0x80));
}

// lane -> block of the pair (0 or 1) + 2 h
GXV_INLINE __m512i pair_sel(int h, const bool q4) {
    const int a = 2*h, c = 2*h + 1;
    return q4 ? _mm512_setr_epi32(a, a, a, a, c, c, c, c, a, a, a, a, c, c, c, c)
              : _mm512_setr_epi32(a, a, a, a, a, a, a, a, c, c, c, c, c, c, c, c);
}

GXV_INLINE float gemv_q32(int n, const void * x, const uint8_t * y, const bool q4) {
    const int bs = q4 ? (int) sizeof(block_q4_0) : (int) sizeof(block_q8_0);
    const int nblk = n / QK8_0;
    __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
    int b = 0;
    const int step = q4 ? 8 : 4; // blocks whose scales lie in 128 bytes
    const size_t far = ggml_x_far_distance(prep_size(q4 ? GGML_TYPE_Q4_0 : GGML_TYPE_Q8_0, n));
    for (; b + step <= nblk; b += step, y += (step / 2)*PAIR_BYTES) {
        // the weights stream from memory: ask for them QGEMV_PREFETCH bytes ahead (past the row
        // end this is the next row, which the next call reads)
        _mm_prefetch((const char *) x + (size_t) b * bs + QGEMV_PREFETCH, _MM_HINT_T0);
        _mm_prefetch((const char *) x + (size_t) b * bs + QGEMV_PREFETCH + 64, _MM_HINT_T0);
        ggml_x_prefetch_far((const char *) x + (size_t) b * bs, far, 128);
        const __m512 dv = d_blocks((const char *) x + (size_t) b * bs, bs, step);
#pragma GCC unroll 4
        for (int h = 0; h < step / 2; h++) {
            const uint8_t * yb = y + h*PAIR_BYTES;
            const __m512i is = _mm512_dpbusd_epi32(_mm512_load_si512((const void *) (yb + 64)), w_pair(x, b + 2*h, q4),
                                                   _mm512_load_si512((const void *) yb));
            const __m512 sc = _mm512_mul_ps(_mm512_permutexvar_ps(pair_sel(h, q4), dv), _mm512_load_ps((const float *) (yb + 128)));
            if (h & 1) {
                acc1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), sc, acc1);
            } else {
                acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), sc, acc0);
            }
        }
    }
    for (; b < nblk; b += 2, y += PAIR_BYTES) {
        const bool two = b + 1 < nblk;
        __m512i w;
        ggml_fp16_t d0, d1;
        if (q4) {
            const block_q4_0 * xb = (const block_q4_0 *) x + b;
            const __m128i q1 = two ? _mm_loadu_si128((const __m128i *) xb[1].qs) : _mm_setzero_si128();
            const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) xb[0].qs)), q1, 1);
            w = _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(v), _mm256_srli_epi16(v, 4), 1), _mm512_set1_epi8(15));
            d0 = xb[0].d;
            d1 = two ? xb[1].d : xb[0].d;
        } else {
            const block_q8_0 * xb = (const block_q8_0 *) x + b;
            const __m256i q1 = two ? _mm256_loadu_si256((const __m256i *) xb[1].qs) : _mm256_set1_epi8((char) 0x80);
            w = _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) xb[0].qs)), q1, 1),
                                 _mm512_set1_epi8((char) 0x80));
            d0 = xb[0].d;
            d1 = two ? xb[1].d : xb[0].d;
        }
        const __m512i is = _mm512_dpbusd_epi32(_mm512_load_si512((const void *) (y + 64)), w, _mm512_load_si512((const void *) y));
        const __m512 sc = _mm512_mul_ps(d2_lanes(&d0, &d1, pair_sel(0, q4)), _mm512_load_ps((const float *) (y + 128)));
        acc0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), sc, acc0);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(acc0, acc1));
}

// Several prepared activation rows at once (MUL_MAT with 2..8 columns): each pair of weight
// blocks is loaded and unpacked once, its scales selected once, then used for every column. Per
// column the operations are the same whatever nc (one accumulator, blocks in order), so a
// column's result does not depend on the other columns.
#define GEMV_COLS 4

GXV_INLINE void gemv_q32_cols(int n, float * s, const void * x, const void * const * vy, const bool q4, const int nc) {
    const int bs = q4 ? (int) sizeof(block_q4_0) : (int) sizeof(block_q8_0);
    const int nblk = n / QK8_0;
    __m512 acc[GEMV_COLS];
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
    }
    int b = 0;
    const int step = q4 ? 8 : 4; // blocks whose scales lie in 128 bytes
    for (; b + step <= nblk; b += step) {
        _mm_prefetch((const char *) x + (size_t) b * bs + QGEMV_PREFETCH, _MM_HINT_T0);
        _mm_prefetch((const char *) x + (size_t) b * bs + QGEMV_PREFETCH + 64, _MM_HINT_T0);
        const __m512 dv = d_blocks((const char *) x + (size_t) b * bs, bs, step);
#pragma GCC unroll 4
        for (int h = 0; h < step / 2; h++) {
            const __m512i w = w_pair(x, b + 2*h, q4);
            const __m512 dw = _mm512_permutexvar_ps(pair_sel(h, q4), dv);
            const size_t off = (size_t) (b / 2 + h) * PAIR_BYTES;
            for (int c = 0; c < nc; c++) {
                const uint8_t * yb = (const uint8_t *) vy[c] + off;
                const __m512i is = _mm512_dpbusd_epi32(_mm512_load_si512((const void *) (yb + 64)), w,
                                                       _mm512_load_si512((const void *) yb));
                const __m512 sc = _mm512_mul_ps(dw, _mm512_load_ps((const float *) (yb + 128)));
                acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), sc, acc[c]);
            }
        }
    }
    for (; b < nblk; b += 2) {
        const bool two = b + 1 < nblk;
        __m512i w;
        ggml_fp16_t d0, d1;
        if (q4) {
            const block_q4_0 * xb = (const block_q4_0 *) x + b;
            const __m128i q1 = two ? _mm_loadu_si128((const __m128i *) xb[1].qs) : _mm_setzero_si128();
            const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) xb[0].qs)), q1, 1);
            w = _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(v), _mm256_srli_epi16(v, 4), 1), _mm512_set1_epi8(15));
            d0 = xb[0].d;
            d1 = two ? xb[1].d : xb[0].d;
        } else {
            const block_q8_0 * xb = (const block_q8_0 *) x + b;
            const __m256i q1 = two ? _mm256_loadu_si256((const __m256i *) xb[1].qs) : _mm256_set1_epi8((char) 0x80);
            w = _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) xb[0].qs)), q1, 1),
                                 _mm512_set1_epi8((char) 0x80));
            d0 = xb[0].d;
            d1 = two ? xb[1].d : xb[0].d;
        }
        const __m512 dw = d2_lanes(&d0, &d1, pair_sel(0, q4));
        const size_t off = (size_t) (b / 2) * PAIR_BYTES;
        for (int c = 0; c < nc; c++) {
            const uint8_t * y = (const uint8_t *) vy[c] + off;
            const __m512i is = _mm512_dpbusd_epi32(_mm512_load_si512((const void *) (y + 64)), w, _mm512_load_si512((const void *) y));
            const __m512 sc = _mm512_mul_ps(dw, _mm512_load_ps((const float *) (y + 128)));
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), sc, acc[c]);
        }
    }
    for (int c = 0; c < nc; c++) {
        s[c] = _mm512_reduce_add_ps(acc[c]);
    }
}

#define GEMV_COLS_ENTRY(name, q4)                                                                    \
    GXV static void name(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx,               \
                         const void * const * vy, int nc) {                                          \
        for (int c0 = 0; c0 < nc; c0 += GEMV_COLS) {                                                 \
            switch (nc - c0 < GEMV_COLS ? nc - c0 : GEMV_COLS) {                                     \
                case 1:  gemv_q32_cols(n, s + c0, vx, vy + c0, q4, 1); break;                        \
                case 2:  gemv_q32_cols(n, s + c0, vx, vy + c0, q4, 2); break;                        \
                case 3:  gemv_q32_cols(n, s + c0, vx, vy + c0, q4, 3); break;                        \
                default: gemv_q32_cols(n, s + c0, vx, vy + c0, q4, 4); break;                        \
            }                                                                                        \
        }                                                                                            \
    }

GEMV_COLS_ENTRY(gemv_cols_q4_0, true)
GEMV_COLS_ENTRY(gemv_cols_q8_0, false)

GXV static void gemv_q4_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    *s = gemv_q32(n, vx, (const uint8_t *) vy, true);
}

GXV static void gemv_q8_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    *s = gemv_q32(n, vx, (const uint8_t *) vy, false);
}

GXV static void gemv_q4_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_K * x = (const block_q4_K *) vx;
    const uint8_t * y = (const uint8_t *) vy;
    const int nblk = n / QK_K;
    const __m512i m4 = _mm512_set1_epi8(15);
    __m512 acc = _mm512_setzero_ps();
    float mins = 0.0f;
    const size_t far = ggml_x_far_distance(prep_size(GGML_TYPE_Q4_K, n));
    for (int b = 0; b < nblk; b++, y += QK_BYTES) {
        ggml_x_prefetch_far(x + b, far, sizeof(block_q4_K));
        // scales and mins (see the packing in qgemm-avx512.c)
        uint32_t u[3];
        memcpy(u, x[b].scales, sizeof(u));
        const uint32_t sc03 = u[0] & 0x3f3f3f3fu, mn03 = u[1] & 0x3f3f3f3fu;
        const uint32_t sc47 = (u[2] & 0x0f0f0f0fu) | (((u[0] >> 6) & 0x03030303u) << 4);
        const uint32_t mn47 = ((u[2] >> 4) & 0x0f0f0f0fu) | (((u[1] >> 6) & 0x03030303u) << 4);
        const __m512i scv = _mm512_castsi256_si512(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128((long long) ((uint64_t) sc03 | (uint64_t) sc47 << 32))));
        const __m128i mnv = _mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long) ((uint64_t) mn03 | (uint64_t) mn47 << 32)));
        const __m128i mp = _mm_madd_epi16(mnv, _mm_loadu_si128((const __m128i *) (y + 260)));
        const __m128i m2 = _mm_add_epi32(mp, _mm_shuffle_epi32(mp, 0x4e));
        const int summ = _mm_cvtsi128_si32(_mm_add_epi32(m2, _mm_shuffle_epi32(m2, 0xb1)));

        __m512i isum = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *) (x[b].qs + 32*c));
            const __m512i w = _mm512_and_si512(_mm512_inserti64x4(_mm512_castsi256_si512(v), _mm256_srli_epi16(v, 4), 1), m4);
            const __m512i t = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w, _mm512_load_si512((const void *) (y + 64*c)));
            const __m512i sel = _mm512_setr_epi32(2*c, 2*c, 2*c, 2*c, 2*c, 2*c, 2*c, 2*c,
                                                  2*c + 1, 2*c + 1, 2*c + 1, 2*c + 1, 2*c + 1, 2*c + 1, 2*c + 1, 2*c + 1);
            isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(t, _mm512_permutexvar_epi32(sel, scv)));
        }
        float dy;
        memcpy(&dy, y + 256, sizeof(dy));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_set1_ps(dy * GGML_FP16_TO_FP32(x[b].d)), acc);
        mins += dy * GGML_FP16_TO_FP32(x[b].dmin) * (float) summ;
    }
    *s = _mm512_reduce_add_ps(acc) - mins;
}

void ggml_x_qgemv_kernels_vnni(struct ggml_x_gemm_kernels * k) {
    k->qgemv_prep_size = prep_size;
    k->qgemv_prep_q4_0 = prep_q4_0;
    k->qgemv_prep_q8_0 = prep_q8_0;
    k->qgemv_prep_q4_K = prep_q4_K;
    k->qgemv_q4_0      = gemv_q4_0;
    k->qgemv_q8_0      = gemv_q8_0;
    k->qgemv_q4_K      = gemv_q4_K;
    k->qgemv_cols_q4_0 = gemv_cols_q4_0;
    k->qgemv_cols_q8_0 = gemv_cols_q8_0;
}

#endif // __x86_64__
