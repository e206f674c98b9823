// qgemv-avx2.c - AVX2 matrix-vector kernels for Q4_0, Q8_0 and Q4_K weights (the interface of
// qgemv-avx512.c, see gemm.h).
//
// AVX2 has no int8 dot instruction: a byte dot is vpmaddubsw (unsigned x signed byte pairs ->
// int16, saturating) followed by vpmaddwd. The int16 stage is what the layouts are built around:
// as long as the int16 sums cannot overflow, several of them are added (or pair-added with
// vphaddw) before the one widening step, and per-block results are reduced eight blocks at a time
// into one vector of eight int32 block sums, so that the float work (conversion, activation and
// weight scales, accumulation) is one vector operation per eight blocks instead of per block.
// The activation row is prepared once per src1 row; everything that depends on it alone (order,
// offset corrections, scales, sub-block sums) is computed there.
//
// Prepared layouts, per group of 8 blocks (a missing block of a partial last group is all zero):
//   Q4_0 (320 bytes): for each pair of blocks (b, b+1): 32 int8 [x_b[0:16], x_b+1[0:16]] and
//     32 int8 [x_b[16:32], x_b+1[16:32]] (the order of one 256-bit load of the two blocks' nibbles,
//     low and high); 8 int32 corrections -8 * sum(x_b); 8 float scales dx_b. Corrections and scales
//     are in the order the reduction produces: blocks 0, 2, 4, 6, 1, 3, 5, 7.
//     Bound: |w x + w x| <= 2*15*127, two of them per block (low + high), then two vphaddw levels:
//     8 * 3810 = 30480 < 32767.
//   Q8_0 (288 bytes): 8 x 32 int8 in block order; 8 float scales dx_b. Signed weights go through
//     the sign trick |w| * (x with the sign of w), so no correction; each block is widened alone.
//   Q4_K, per super-block (288 bytes): for each 64-weight chunk c (sub-blocks 2c, 2c+1):
//     [y_2c[0:16], y_2c+1[0:16]], [y_2c[16:32], y_2c+1[16:32]] (each 32 int8: low nibbles of 16
//     weight bytes in the low 128-bit lane, their high nibbles in the high lane); float scale;
//     8 int16 sub-block sums; padding.

#if defined(__x86_64__)

#include "cpu/gemm.h"
#include "cpu/prefetch.h"
#include "ggml-quants.h"
#include "cpu/traits.h"

#include <immintrin.h>
#include <stddef.h>

#define GX2 __attribute__((target("avx2,fma,f16c")))
#define GX2_INLINE GX2 __attribute__((always_inline)) static inline

#define GROUP      8
#define Q40_BYTES  320
#define Q80_BYTES  288
#define Q4K_BYTES  288

static size_t prep_size(enum ggml_type wtype, int64_t k) {
    const int64_t groups = (k / QK8_0 + GROUP - 1) / GROUP;
    switch (wtype) {
        case GGML_TYPE_Q4_K: return (size_t) (k / QK_K) * Q4K_BYTES;
        case GGML_TYPE_Q8_0: return (size_t) groups * Q80_BYTES;
        default:             return (size_t) groups * Q40_BYTES;
    }
}

// position of block i of a group in the Q4_0 reduction's output
static inline int q40_pos(int i) {
    return (i >> 1) + 4 * (i & 1);
}

// ---------------------------------------------------------------------------------------------
// preparation (scalar: once per activation row)

static void prep_q4_0(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    const ggml_from_float_t quantize = ggml_x_cpu_type_traits(GGML_TYPE_Q8_0)->from_float;
    const int nblk = k / QK8_0;
    uint8_t * y = (uint8_t *) vy;
    for (int b = 0; b < nblk; b += GROUP, y += Q40_BYTES) {
        const int nb = GGML_X_MIN(GROUP, nblk - b);
        block_q8_0 q[GROUP];
        memset(q, 0, sizeof(q));
        quantize(x + (int64_t) b * QK8_0, q, nb * QK8_0);
        int32_t corr[GROUP] = { 0 };
        float sc[GROUP] = { 0 };
        for (int i = 0; i < GROUP; i++) {
            int8_t * lo = (int8_t *) y + 64 * (i >> 1) + 16 * (i & 1);
            memcpy(lo, q[i].qs, 16);
            memcpy(lo + 32, q[i].qs + 16, 16);
            int s = 0;
            for (int l = 0; l < QK8_0; l++) {
                s += q[i].qs[l];
            }
            corr[q40_pos(i)] = -8 * s;
            sc[q40_pos(i)] = i < nb ? GGML_FP16_TO_FP32(q[i].d) : 0.0f;
        }
        memcpy(y + 256, corr, sizeof(corr));
        memcpy(y + 288, sc, sizeof(sc));
    }
}

static void prep_q8_0(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    const ggml_from_float_t quantize = ggml_x_cpu_type_traits(GGML_TYPE_Q8_0)->from_float;
    const int nblk = k / QK8_0;
    uint8_t * y = (uint8_t *) vy;
    for (int b = 0; b < nblk; b += GROUP, y += Q80_BYTES) {
        const int nb = GGML_X_MIN(GROUP, nblk - b);
        block_q8_0 q[GROUP];
        memset(q, 0, sizeof(q));
        quantize(x + (int64_t) b * QK8_0, q, nb * QK8_0);
        float sc[GROUP] = { 0 };
        for (int i = 0; i < GROUP; i++) {
            memcpy(y + 32 * i, q[i].qs, 32);
            sc[i] = i < nb ? GGML_FP16_TO_FP32(q[i].d) : 0.0f;
        }
        memcpy(y + 256, sc, sizeof(sc));
    }
}

static void prep_q4_K(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    const ggml_from_float_t quantize = ggml_x_cpu_type_traits(GGML_TYPE_Q8_K)->from_float;
    uint8_t * y = (uint8_t *) vy;
    for (int b = 0; b < k / QK_K; b++, y += Q4K_BYTES) {
        block_q8_K q;
        quantize(x + (int64_t) b * QK_K, &q, QK_K);
        for (int c = 0; c < 4; c++) {
            const int8_t * s0 = q.qs + 64 * c;      // sub-block 2c
            const int8_t * s1 = q.qs + 64 * c + 32; // sub-block 2c + 1
            memcpy(y + 64 * c,      s0,      16);
            memcpy(y + 64 * c + 16, s1,      16);
            memcpy(y + 64 * c + 32, s0 + 16, 16);
            memcpy(y + 64 * c + 48, s1 + 16, 16);
        }
        memcpy(y + 256, &q.d, sizeof(float));
        int16_t bs[8];
        for (int j = 0; j < 8; j++) {
            bs[j] = (int16_t) (q.bsums[2*j] + q.bsums[2*j + 1]);
        }
        memcpy(y + 260, bs, sizeof(bs));
        memset(y + 276, 0, Q4K_BYTES - 276);
    }
}

// ---------------------------------------------------------------------------------------------
// kernels

GX2_INLINE float hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// an fp16 value as an integer; kept in a general register (the empty asm) so that the compiler
// does not turn the scalar packing of eight of them into a longer chain of vector shuffles
GX2_INLINE uint64_t h16(const ggml_fp16_t * p) {
    uint16_t h;
    memcpy(&h, p, sizeof(h));
    uint64_t v = h;
    __asm__("" : "+r"(v));
    return v;
}

// the fp16 scales of nb (<= 8) blocks, bs bytes apart, as floats in the order pos(i); missing: 0
GX2_INLINE __m256 w_scales(const uint8_t * blocks, int bs, int nb, const bool q4) {
    uint64_t lo = 0, hi = 0;
#pragma GCC unroll 8
    for (int i = 0; i < GROUP; i++) {
        if (i < nb) {
            const int p = q4 ? q40_pos(i) : i;
            const uint64_t h = h16((const ggml_fp16_t *) (blocks + (size_t) i * bs));
            if (p < 4) {
                lo |= h << (16 * p);
            } else {
                hi |= h << (16 * (p - 4));
            }
        }
    }
    return _mm256_cvtph_ps(_mm_set_epi64x((long long) hi, (long long) lo));
}

// one group of nb (<= 8) Q4_0 blocks: sum over blocks of dw * dx * (w . x - 8 sum x), per lane
GX2_INLINE __m256 group_q4_0(const block_q4_0 * xb, const uint8_t * y, int nb, __m256 acc) {
    const __m256i m4 = _mm256_set1_epi8(15);
    __m256i q[4];
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) {
        if (2*p >= nb) {
            q[p] = _mm256_setzero_si256();
            continue;
        }
        const __m128i a = _mm_loadu_si128((const __m128i *) xb[2*p].qs);
        const __m128i b = 2*p + 1 < nb ? _mm_loadu_si128((const __m128i *) xb[2*p + 1].qs) : _mm_setzero_si128();
        const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(a), b, 1);
        const __m256i lo = _mm256_and_si256(v, m4);
        const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        const uint8_t * yp = y + 64*p;
        q[p] = _mm256_add_epi16(_mm256_maddubs_epi16(lo, _mm256_load_si256((const __m256i *) yp)),
                                _mm256_maddubs_epi16(hi, _mm256_load_si256((const __m256i *) (yp + 32))));
    }
    const __m256i h = _mm256_hadd_epi16(_mm256_hadd_epi16(q[0], q[1]), _mm256_hadd_epi16(q[2], q[3]));
    const __m256i is = _mm256_add_epi32(_mm256_madd_epi16(h, _mm256_set1_epi16(1)),
                                        _mm256_load_si256((const __m256i *) (y + 256)));
    const __m256 dx = _mm256_load_ps((const float *) (y + 288));
    const __m256 dw = w_scales((const uint8_t *) xb, (int) sizeof(block_q4_0), nb, true);
    return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(is), dx), dw, acc);
}

GX2 static void gemv_q4_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_0 * x = (const block_q4_0 *) vx;
    const uint8_t * y = (const uint8_t *) vy;
    const int nblk = n / QK8_0;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int b = 0;
    const size_t far = ggml_x_far_distance(prep_size(GGML_TYPE_Q4_0, n));
    for (; b + 2*GROUP <= nblk; b += 2*GROUP, y += 2*Q40_BYTES) {
        ggml_x_prefetch_far(x + b, far, 2 * GROUP * sizeof(*x));
        acc0 = group_q4_0(x + b, y, GROUP, acc0);
        acc1 = group_q4_0(x + b + GROUP, y + Q40_BYTES, GROUP, acc1);
    }
    for (; b < nblk; b += GROUP, y += Q40_BYTES) {
        const int nb = nblk - b;
        acc0 = nb >= GROUP ? group_q4_0(x + b, y, GROUP, acc0) : group_q4_0(x + b, y, nb, acc0);
    }
    *s = hsum_ps(_mm256_add_ps(acc0, acc1));
}

// one group of nb (<= 8) Q8_0 blocks
GX2_INLINE __m256 group_q8_0(const block_q8_0 * xb, const uint8_t * y, int nb, __m256 acc) {
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i p[GROUP];
#pragma GCC unroll 8
    for (int i = 0; i < GROUP; i++) {
        if (i >= nb) {
            p[i] = _mm256_setzero_si256();
            continue;
        }
        const __m256i w = _mm256_loadu_si256((const __m256i *) xb[i].qs);
        const __m256i t = _mm256_sign_epi8(_mm256_load_si256((const __m256i *) (y + 32*i)), w);
        p[i] = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_abs_epi8(w), t), ones);
    }
    // [b0 b1 b2 b3] of each 128-bit half, then the halves added
    const __m256i a = _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3]));
    const __m256i c = _mm256_hadd_epi32(_mm256_hadd_epi32(p[4], p[5]), _mm256_hadd_epi32(p[6], p[7]));
    const __m256i is = _mm256_add_epi32(_mm256_permute2x128_si256(a, c, 0x20), _mm256_permute2x128_si256(a, c, 0x31));
    const __m256 dx = _mm256_load_ps((const float *) (y + 256));
    const __m256 dw = w_scales((const uint8_t *) xb, (int) sizeof(block_q8_0), nb, false);
    return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(is), dx), dw, acc);
}

GX2 static void gemv_q8_0(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q8_0 * x = (const block_q8_0 *) vx;
    const uint8_t * y = (const uint8_t *) vy;
    const int nblk = n / QK8_0;
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int b = 0;
    const size_t far = ggml_x_far_distance(prep_size(GGML_TYPE_Q8_0, n));
    for (; b + 2*GROUP <= nblk; b += 2*GROUP, y += 2*Q80_BYTES) {
        ggml_x_prefetch_far(x + b, far, 2 * GROUP * sizeof(*x));
        acc0 = group_q8_0(x + b, y, GROUP, acc0);
        acc1 = group_q8_0(x + b + GROUP, y + Q80_BYTES, GROUP, acc1);
    }
    for (; b < nblk; b += GROUP, y += Q80_BYTES) {
        const int nb = nblk - b;
        acc0 = nb >= GROUP ? group_q8_0(x + b, y, GROUP, acc0) : group_q8_0(x + b, y, nb, acc0);
    }
    *s = hsum_ps(_mm256_add_ps(acc0, acc1));
}

GX2 static void gemv_q4_K(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_K * x = (const block_q4_K *) vx;
    const uint8_t * y = (const uint8_t *) vy;
    const int nblk = n / QK_K;
    const __m256i m4 = _mm256_set1_epi8(15);
    const __m256i shift = _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4); // low lane: low nibbles, high lane: high
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    const size_t far = ggml_x_far_distance(prep_size(GGML_TYPE_Q4_K, n));
    for (int b = 0; b < nblk; b++, y += Q4K_BYTES) {
        ggml_x_prefetch_far(x + b, far, sizeof(block_q4_K));
        // 6-bit scales and mins of the 8 sub-blocks, one byte each
        uint32_t u[3];
        memcpy(u, x[b].scales, sizeof(u));
        const uint32_t sc03 = u[0] & 0x3f3f3f3fu, mn03 = u[1] & 0x3f3f3f3fu;
        const uint32_t sc47 = (u[2] & 0x0f0f0f0fu) | (((u[0] >> 6) & 0x03030303u) << 4);
        const uint32_t mn47 = ((u[2] >> 4) & 0x0f0f0f0fu) | (((u[1] >> 6) & 0x03030303u) << 4);
        const __m256i scb = _mm256_set1_epi64x((long long) ((uint64_t) sc03 | (uint64_t) sc47 << 32));
        const __m128i mnv = _mm_cvtepu8_epi16(_mm_cvtsi64_si128((long long) ((uint64_t) mn03 | (uint64_t) mn47 << 32)));
        const __m128i mp = _mm_madd_epi16(mnv, _mm_loadu_si128((const __m128i *) (y + 260)));
        const __m128i m2 = _mm_add_epi32(mp, _mm_shuffle_epi32(mp, 0x4e));
        const int summ = _mm_cvtsi128_si32(_mm_add_epi32(m2, _mm_shuffle_epi32(m2, 0xb1)));

        __m256i isum = _mm256_setzero_si256();
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            const uint8_t * q = x[b].qs + 32*c;
            const __m256i a = _mm256_and_si256(_mm256_srlv_epi32(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) q)), shift), m4);
            const __m256i e = _mm256_and_si256(_mm256_srlv_epi32(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *) (q + 16))), shift), m4);
            const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(a, _mm256_load_si256((const __m256i *) (y + 64*c))),
                                               _mm256_maddubs_epi16(e, _mm256_load_si256((const __m256i *) (y + 64*c + 32))));
            // int16 scale of sub-block 2c in the low lane, 2c + 1 in the high lane
            const char l = (char) (2*c), h = (char) (2*c + 1), z = (char) 0x80;
            const __m256i sel = _mm256_setr_epi8(l, z, l, z, l, z, l, z, l, z, l, z, l, z, l, z,
                                                 h, z, h, z, h, z, h, z, h, z, h, z, h, z, h, z);
            isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, _mm256_shuffle_epi8(scb, sel)));
        }
        float dy;
        memcpy(&dy, y + 256, sizeof(dy));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_set1_ps(dy * GGML_FP16_TO_FP32(x[b].d)), acc);
        mins += dy * GGML_FP16_TO_FP32(x[b].dmin) * (float) summ;
    }
    *s = hsum_ps(acc) - mins;
}

void ggml_x_qgemv_kernels_avx2(struct ggml_x_gemm_kernels * k) {
    k->qgemv_prep_size = prep_size;
    k->qgemv_prep_q4_0 = prep_q4_0;
    k->qgemv_prep_q8_0 = prep_q8_0;
    k->qgemv_prep_q4_K = prep_q4_K;
    k->qgemv_q4_0      = gemv_q4_0;
    k->qgemv_q8_0      = gemv_q8_0;
    k->qgemv_q4_K      = gemv_q4_K;
}

#endif // __x86_64__
