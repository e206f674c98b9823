// repack-avx512.c - AVX-512 VNNI kernels of weights repacked by groups of 8 rows (layout:
// repack.c): 8 rows on 256-bit vectors (AVX512-VL), and 16 rows (two groups) on 512-bit vectors.
//
// As in repack-avx2.c, one 256-bit load of a block's quant bytes is one byte quad of each of the
// 8 rows (lane = row), so a source column needs its matching 4 activation bytes broadcast to all
// lanes, which vpdpbusd takes as an embedded broadcast of the prepared row's q8_0 bytes (compact:
// it stays in L1). Widening the lanes of one group to 512 bits would need the activations
// expanded (4x the bytes, out of L1) or permuted; the 16-row kernels instead put the same quad
// of two groups side by side (rows 0..7 of group g in the low half, of g + 1 in the high half),
// so the {1to16} broadcast still serves all lanes. On CPUs with full-width 512-bit units (this
// machine: Zen 5) that halves the instructions per weight, which decides the speed with several
// columns (the kernels are vpdpbusd-bound there: 46-47 cycles per 16-row block with 8 columns
// hot, 64 vpdpbusd and 8 x (mul, fma) on the two multiply pipes, at least 40; the cvt runs
// beside them: tools/bench/bench-rp-kernels.c); with the prefetch of
// each stream placed in the next pair (rp16_pf) they also beat the 8-row kernels' single stream
// from one column on for Q4_0 and Q8_0, where memory is the limit (MUL_MAT picks, ops-mul-mat.c).
// vpdpbusd wants unsigned weights: Q4_0 nibbles are 0..15 (the accumulator starts at the prepared
// -8 * sum(x)), Q8_0 bytes get + 128 (xor 0x80, start -128 * sum(x)). All 8 columns in one pass
// (32 vector registers).

#if defined(__x86_64__)

#include "cpu/gemm.h"
#include "cpu/repack.h"
#include "cpu/prefetch.h"
#include "ggml-quants.h"

#include <immintrin.h>

#define GXV __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#define GXV_INLINE GXV __attribute__((always_inline)) static inline

// bytes ahead of the current block that the kernels prefetch
#define RP_PREFETCH 1024

typedef int32_t rp_i32u __attribute__((may_alias, aligned(4)));

// acc + dot of the unsigned bytes of w with the 4 signed bytes at p in every lane: vpdpbusd with
// an embedded broadcast memory operand (compilers do not fold _mm256_set1_epi32 of a load into
// it; a separate broadcast per vpdpbusd costs a third of the throughput with 8 columns)
GXV_INLINE __m256i dpbusd_b(__m256i acc, __m256i w, const int8_t * p) {
    __asm__("vpdpbusd %2%{1to8%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*(const rp_i32u *) p));
    return acc;
}

// Prefetch distances of the 8-row kernels, in bytes ahead of the current run of blocks: into L1
// (near) and into L2 (far). Tunable for measurements through GGML_X_RP_PF / GGML_X_RP_FAR
// (read when the level's kernel table is set up; relaxed atomics, as tables may be set up while
// kernels run).
static size_t rp_pf_near = RP_PREFETCH;
static size_t rp_pf_far  = GGML_X_FAR_DISTANCE;

// One block of 8 rows: the weight vectors are unpacked once into registers, then each column
// runs its vpdpbusd chains (two, of 4 steps, for latency) and one multiply-add into its
// accumulator. Only the accumulators live across blocks, so everything stays in registers.
GXV_INLINE void rp_block(const int nc, const uint8_t * blk, const uint8_t * scl, const int8_t * xq,
                         const int32_t * corr, const float * dx, __m256 * acc, const bool q4) {
    const __m256i m4 = _mm256_set1_epi8(15);
    const __m256i x80 = _mm256_set1_epi8((char) 0x80);
    // w[c]: activation bytes 4c..4c+3 of each row (Q4_0: c < 4 low nibbles, c >= 4 the high
    // nibbles, activation bytes 16 + 4(c-4)..)
    __m256i w[8];
    if (q4) {
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            const __m256i v = _mm256_loadu_si256((const __m256i *) (blk + 32*c));
            w[c]     = _mm256_and_si256(v, m4);
            w[4 + c] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        }
    } else {
#pragma GCC unroll 8
        for (int c = 0; c < 8; c++) {
            w[c] = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *) (blk + 32*c)), x80);
        }
    }
    const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) scl));
#pragma GCC unroll 8
    for (int j = 0; j < nc; j++) {
        const int8_t * xj = xq + 32*j;
        __m256i s0 = _mm256_set1_epi32(corr[j]);
        __m256i s1 = _mm256_setzero_si256();
        if (q4) {
#pragma GCC unroll 4
            for (int c = 0; c < 4; c++) {
                s0 = dpbusd_b(s0, w[c], xj + 4*c);
                s1 = dpbusd_b(s1, w[4 + c], xj + 16 + 4*c);
            }
        } else {
#pragma GCC unroll 4
            for (int c = 0; c < 8; c += 2) {
                s0 = dpbusd_b(s0, w[c], xj + 4*c);
                s1 = dpbusd_b(s1, w[c + 1], xj + 4*c + 4);
            }
        }
        const __m256 sc = _mm256_mul_ps(dw, _mm256_set1_ps(dx[j]));
        acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(s0, s1)), sc, acc[j]);
    }
}

// The group is walked run by run (runs of 4 blocks: their quant bytes, then their scales,
// repack.c), so whole runs need no per-block address arithmetic, and each cache line of the
// weight stream is prefetched once (into L1 near ahead, into L2 far ahead: with 8 rows per pass
// the activation is small, but one core's demand misses alone do not keep enough reads in
// flight, cpu/prefetch.h).
GXV_INLINE void rp_cols(int64_t nblk, const int nc, const uint8_t * grp, const uint8_t * set, float * out,
                        const bool q4) {
    const int64_t k = nblk * QK8_0;
    const size_t qb8 = GGML_X_RP_ROWS * (q4 ? QK4_0 / 2 : QK8_0); // quant bytes of a block of 8 rows
    const size_t bs8 = GGML_X_RP_ROWS * (q4 ? sizeof(block_q4_0) : sizeof(block_q8_0));
    const float * dx = (const float *) (set + ggml_x_rp_set_dx_off(k));
    const int32_t * corr = (const int32_t *) (set + ggml_x_rp_set_corr_off(k));
    const size_t pf = __atomic_load_n(&rp_pf_near, __ATOMIC_RELAXED);
    const size_t far = __atomic_load_n(&rp_pf_far, __ATOMIC_RELAXED);
    __m256 acc[GGML_X_RP_COLS];
#pragma GCC unroll 8
    for (int j = 0; j < nc; j++) {
        acc[j] = _mm256_setzero_ps();
    }
    int64_t b0 = 0;
    for (; b0 + 4 <= nblk; b0 += 4) {
        const uint8_t * run = grp + (size_t) b0 * bs8;
#pragma GCC unroll 18
        for (size_t o = 0; o < 4 * bs8; o += 64) {
            _mm_prefetch((const char *) run + pf + o, _MM_HINT_T0);
            _mm_prefetch((const char *) run + far + o, _MM_HINT_T1);
        }
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            const int64_t b = b0 + i;
            rp_block(nc, run + (size_t) i * qb8, run + 4 * qb8 + (size_t) i * 16,
                     (const int8_t *) set + (size_t) b * nc * QK8_0, corr + b*nc, dx + b*nc, acc, q4);
        }
    }
    if (b0 < nblk) { // the last, shorter run
        const int64_t nin = nblk - b0;
        const uint8_t * run = grp + (size_t) b0 * bs8;
        for (int64_t i = 0; i < nin; i++) {
            const int64_t b = b0 + i;
            rp_block(nc, run + (size_t) i * qb8, run + (size_t) nin * qb8 + (size_t) i * 16,
                     (const int8_t *) set + (size_t) b * nc * QK8_0, corr + b*nc, dx + b*nc, acc, q4);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < nc; j++) {
        _mm256_storeu_ps(out + j*GGML_X_RP_ROWS, acc[j]);
    }
}

GXV_INLINE void rp_kernel(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out,
                          const bool q4) {
    switch (ncols) {
        case 1:  rp_cols(nblk, 1, grp, set, out, q4); break;
        case 2:  rp_cols(nblk, 2, grp, set, out, q4); break;
        case 3:  rp_cols(nblk, 3, grp, set, out, q4); break;
        case 4:  rp_cols(nblk, 4, grp, set, out, q4); break;
        case 5:  rp_cols(nblk, 5, grp, set, out, q4); break;
        case 6:  rp_cols(nblk, 6, grp, set, out, q4); break;
        case 7:  rp_cols(nblk, 7, grp, set, out, q4); break;
        default: rp_cols(nblk, 8, grp, set, out, q4); break;
    }
}

GXV static void rp_q4_0_vnni(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    rp_kernel(nblk, ncols, grp, set, out, true);
}

GXV static void rp_q8_0_vnni(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    rp_kernel(nblk, ncols, grp, set, out, false);
}

// ---------------------------------------------------------------------------------------------
// 16 rows at once: two consecutive groups side by side in 512-bit vectors (lane = row: rows
// 0..7 of the first group in the low half, of the second in the high half), so one vpdpbusd
// does 64 multiply-adds (16 rows x 4) against a column's broadcast activation quad. With
// several columns the kernels are bound by vpdpbusd throughput, and on CPUs that execute
// 512-bit vectors at full width (Zen 5) this halves the instructions per weight; the
// activations stay compact ({1to16} embedded broadcasts of the prepared q8_0 bytes, in L1).

GXV_INLINE __m512i dpbusd_z(__m512i acc, __m512i w, const int8_t * p) {
    __asm__("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*(const rp_i32u *) p));
    return acc;
}

// the 256-bit vectors at p (low half) and p + gs (high half)
GXV_INLINE __m512i rp_load2(const uint8_t * p, size_t gs) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) p)),
                              _mm256_loadu_si256((const __m256i *) (p + gs)), 1);
}

// Prefetch distances of the Q4_0 / Q8_0 16-row kernels, in bytes ahead in each of the two weight
// streams: into L1 (near) and L2 (far, 0: none). Tunable through GGML_X_RP16_PF / GGML_X_RP16_FAR.
// Measured with build/bin/bench-rp-kernels pf=... (one thread, weights streamed from DRAM, the
// settings alternating within each repetition), cycles per 16 rows x 256 elements:
//   K = 2048   1024:24576 (the former default)  ->  3072:0
//     Q4_0  1 column 309 -> 287, 2 columns 276 -> 256, 8 columns 590 -> 500
//     Q8_0  1 column 534 -> 479, 2 columns 633 -> 489, 8 columns 800 -> 665
//   K = 11008  Q4_0 1 column 240 -> 212, 8 columns 436 -> 393; Q8_0 420 -> 372, 645 -> 534
// Every setting with a far prefetch into L2 was slower than every one without (near 2048 to
// 6144): a prefetch into L2 of a stream that the hardware prefetchers already follow only takes
// miss slots here. (The far prefetch came from runs one after the other, not alternating, which
// had found far 24576 better than 12288 with 8 columns: 15.7 -> 18.7 GB/s; no far prefetch was
// not among them.) The Q4_K 16-row kernel keeps its far prefetch (rpk16_pf_far).
static size_t rp16_pf_near = 3072;
static size_t rp16_pf_far  = 0;
// 1: the near prefetches of a run are spread over its 4 blocks (about a quarter of the lines
// before each block), 0: all issued before its first block. A burst of 18 (Q4_0) or 34 (Q8_0)
// misses at once competes with the blocks' own loads for the miss buffers; spread, the streams
// are steadier. bench-rp-kernels, 256 MiB cold, K = 2048, near 3072, burst -> spread, GB/s in
// two runs: Q4_0 8 columns 15.3 -> 16.1 and 13.6 -> 13.7; Q8_0 1 column 28.0 -> 29.7 and
// 27.5 -> 30.8, 2 columns 28.0 -> 29.8 and 26.9 -> 29.8, 8 columns 22.2 -> 24.8 and 21.6 -> 23.1.
// GGML_X_RP16_SPREAD=0 restores the burst (measurements).
static size_t rp16_pf_spread = 1;

// one block of 16 rows (the block at blk in the first group, at blk + gs in the second) against
// nc columns; the float steps are rp_block's, so each row's result is bit for bit the 8-row
// kernel's (only the integer sums are grouped differently, which is exact)
GXV_INLINE void rp16_block(const int nc, const uint8_t * blk, const uint8_t * scl, size_t gs, const int8_t * xq,
                           const int32_t * corr, const float * dx, __m512 * acc, const bool q4) {
    const __m512i m4 = _mm512_set1_epi8(15);
    const __m512i x80 = _mm512_set1_epi8((char) 0x80);
    __m512i w[8];
    if (q4) {
#pragma GCC unroll 4
        for (int c = 0; c < 4; c++) {
            const __m512i v = rp_load2(blk + 32*c, gs);
            w[c]     = _mm512_and_si512(v, m4);
            w[4 + c] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
        }
    } else {
#pragma GCC unroll 8
        for (int c = 0; c < 8; c++) {
            w[c] = _mm512_xor_si512(rp_load2(blk + 32*c, gs), x80);
        }
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) scl)),
        _mm_loadu_si128((const __m128i *) (scl + gs)), 1));
#pragma GCC unroll 8
    for (int j = 0; j < nc; j++) {
        const int8_t * xj = xq + 32*j;
        __m512i s;
        if (nc >= 4) {
            // enough columns for independent chains: one chain per column (no final add)
            s = _mm512_set1_epi32(corr[j]);
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++) {
                s = dpbusd_z(s, w[c], xj + (q4 ? (c < 4 ? 4*c : 16 + 4*(c - 4)) : 4*c));
            }
        } else {
            __m512i s0 = _mm512_set1_epi32(corr[j]);
            __m512i s1 = _mm512_setzero_si512();
            if (q4) {
#pragma GCC unroll 4
                for (int c = 0; c < 4; c++) {
                    s0 = dpbusd_z(s0, w[c], xj + 4*c);
                    s1 = dpbusd_z(s1, w[4 + c], xj + 16 + 4*c);
                }
            } else {
#pragma GCC unroll 4
                for (int c = 0; c < 8; c += 2) {
                    s0 = dpbusd_z(s0, w[c], xj + 4*c);
                    s1 = dpbusd_z(s1, w[c + 1], xj + 4*c + 4);
                }
            }
            s = _mm512_add_epi32(s0, s1);
        }
        const __m512 sc = _mm512_mul_ps(dw, _mm512_set1_ps(dx[j]));
        acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), sc, acc[j]);
    }
}

// a prefetch position in the first stream of a pair: pair base, offset in its first group
struct rp16_pf {
    const uint8_t * base;
    size_t in;
};

// the position `dist` bytes into the first streams of the pairs from grp on
GXV_INLINE struct rp16_pf rp16_pf_at(const uint8_t * grp, size_t dist, size_t gs) {
    const size_t q = dist / gs;
    return (struct rp16_pf) { grp + q * 2 * gs, dist - q * gs };
}

GXV_INLINE void rp16_pf_step(struct rp16_pf * p, size_t step, size_t gs) {
    p->in += step;
    while (p->in >= gs) {
        p->in -= gs;
        p->base += 2 * gs;
    }
}

// lines l0 .. l1-1 from p of both streams of a pair, into L1 (or into L2: to_l2)
GXV_INLINE void rp16_pf_lines(const uint8_t * p, size_t gs, size_t l0, size_t l1, const bool to_l2) {
#pragma GCC unroll 18
    for (size_t l = l0; l < l1; l++) {
        if (to_l2) {
            _mm_prefetch((const char *) p + l * 64, _MM_HINT_T1);
            _mm_prefetch((const char *) p + gs + l * 64, _MM_HINT_T1);
        } else {
            _mm_prefetch((const char *) p + l * 64, _MM_HINT_T0);
            _mm_prefetch((const char *) p + gs + l * 64, _MM_HINT_T0);
        }
    }
}

// Walked run by run (runs of 4 blocks, repack.c) as rp_cols; each cache line of both streams is
// prefetched once per run, near (L1; spread over the run's blocks: rp16_pf_spread) and far (L2)
// ahead.
GXV_INLINE void rp16_cols(int64_t nblk, const int nc, const uint8_t * grp, size_t gs, const uint8_t * set, float * out,
                          const bool q4) {
    const int64_t k = nblk * QK8_0;
    const size_t qb8 = GGML_X_RP_ROWS * (q4 ? QK4_0 / 2 : QK8_0);
    const size_t bs8 = GGML_X_RP_ROWS * (q4 ? sizeof(block_q4_0) : sizeof(block_q8_0));
    const float * dx = (const float *) (set + ggml_x_rp_set_dx_off(k));
    const int32_t * corr = (const int32_t *) (set + ggml_x_rp_set_corr_off(k));
    const size_t pf = __atomic_load_n(&rp16_pf_near, __ATOMIC_RELAXED);
    const bool spread = __atomic_load_n(&rp16_pf_spread, __ATOMIC_RELAXED) != 0;
    const size_t far = __atomic_load_n(&rp16_pf_far, __ATOMIC_RELAXED);
    __m512 acc[GGML_X_RP_COLS];
#pragma GCC unroll 8
    for (int j = 0; j < nc; j++) {
        acc[j] = _mm512_setzero_ps();
    }
    const int64_t bfull = nblk & ~(int64_t) 3; // end of the whole runs
    // prefetch positions: the two streams advance together, so a distance past the end of the
    // first group continues in the next pair (at grp + 2 gs: MUL_MAT walks consecutive pairs),
    // not in the second group, which the other stream is reading already
    struct rp16_pf pf_near = rp16_pf_at(grp, pf, gs);
    struct rp16_pf pf_far  = rp16_pf_at(grp, far, gs);
    int64_t b0 = 0;
    for (; b0 + 4 <= bfull; b0 += 4) {
        const uint8_t * run = grp + (size_t) b0 * bs8;
        const uint8_t * pn = pf_near.base + pf_near.in;
        const uint8_t * pfar = pf_far.base + pf_far.in;
        rp16_pf_step(&pf_near, 4 * bs8, gs);
        rp16_pf_step(&pf_far, 4 * bs8, gs);
        const size_t nl = (4 * bs8 + 63) / 64; // lines of a run, per stream
        if (!spread) {
            rp16_pf_lines(pn, gs, 0, nl, false);
        }
        if (far != 0) {
            rp16_pf_lines(pfar, gs, 0, nl, true);
        }
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            const int64_t b = b0 + i;
            if (spread) { // a quarter of the run's lines before each of its blocks
                rp16_pf_lines(pn, gs, ((size_t) i * nl + 3) / 4, ((size_t) (i + 1) * nl + 3) / 4, false);
            }
            rp16_block(nc, run + (size_t) i * qb8, run + 4 * qb8 + (size_t) i * 16, gs,
                       (const int8_t *) set + (size_t) b * nc * QK8_0, corr + b*nc, dx + b*nc, acc, q4);
        }
    }
    if (b0 < nblk) { // the last, shorter run
        const int64_t nin = nblk - b0;
        const uint8_t * run = grp + (size_t) b0 * bs8;
        for (int64_t i = 0; i < nin; i++) {
            const int64_t b = b0 + i;
            rp16_block(nc, run + (size_t) i * qb8, run + (size_t) nin * qb8 + (size_t) i * 16, gs,
                       (const int8_t *) set + (size_t) b * nc * QK8_0, corr + b*nc, dx + b*nc, acc, q4);
        }
    }
#pragma GCC unroll 8
    for (int j = 0; j < nc; j++) {
        _mm512_storeu_ps(out + j*2*GGML_X_RP_ROWS, acc[j]);
    }
}

GXV_INLINE void rp16_kernel(int64_t nblk, int ncols, const uint8_t * grp, size_t gs, const uint8_t * set, float * out,
                            const bool q4) {
    switch (ncols) {
        case 1:  rp16_cols(nblk, 1, grp, gs, set, out, q4); break;
        case 2:  rp16_cols(nblk, 2, grp, gs, set, out, q4); break;
        case 3:  rp16_cols(nblk, 3, grp, gs, set, out, q4); break;
        case 4:  rp16_cols(nblk, 4, grp, gs, set, out, q4); break;
        case 5:  rp16_cols(nblk, 5, grp, gs, set, out, q4); break;
        case 6:  rp16_cols(nblk, 6, grp, gs, set, out, q4); break;
        case 7:  rp16_cols(nblk, 7, grp, gs, set, out, q4); break;
        default: rp16_cols(nblk, 8, grp, gs, set, out, q4); break;
    }
}

GXV static void rp16_q4_0_vnni(int64_t nblk, int ncols, const uint8_t * grp, size_t gs, const uint8_t * set, float * out) {
    rp16_kernel(nblk, ncols, grp, gs, set, out, true);
}

GXV static void rp16_q8_0_vnni(int64_t nblk, int ncols, const uint8_t * grp, size_t gs, const uint8_t * set, float * out) {
    rp16_kernel(nblk, ncols, grp, gs, set, out, false);
}

#define RPK_INLINE GXV_INLINE
#define RPK_VNNI 1
#include "cpu/repack-q4k.h"

// the k-quant kernels (repack-q4k.h, repack-q6k.h) with all columns in one pass: cols is
// rpk_cols or rpk6_cols, instantiated for each column count
#define RPK_ALL_COLS(cols)                                                         \
    switch (ncols) {                                                               \
        case 1:  cols(nblk, 1, 1, 0, grp, set, out); break;                        \
        case 2:  cols(nblk, 2, 2, 0, grp, set, out); break;                        \
        case 3:  cols(nblk, 3, 3, 0, grp, set, out); break;                        \
        case 4:  cols(nblk, 4, 4, 0, grp, set, out); break;                        \
        case 5:  cols(nblk, 5, 5, 0, grp, set, out); break;                        \
        case 6:  cols(nblk, 6, 6, 0, grp, set, out); break;                        \
        case 7:  cols(nblk, 7, 7, 0, grp, set, out); break;                        \
        default: cols(nblk, 8, 8, 0, grp, set, out); break;                        \
    }

GXV static void rp_q4_K_vnni(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    RPK_ALL_COLS(rpk_cols)
}

#define RPK6_INLINE GXV_INLINE
#define RPK6_VNNI 1
#include "cpu/repack-q6k.h"

// The prefetch distances of the 8-row k-quant kernels at this level (rpk_distances of
// repack-q4k.h): 4608 bytes ahead into L1 and nothing into L2 while the column set holds at
// most GGML_X_FAR_MIN_ACT bytes of activations (cpu/prefetch.h: the limit above which the other
// mat-vec kernels start their far prefetch), the header's defaults above it (two super-blocks
// into L1, GGML_X_FAR_DISTANCE into L2). Measured with build/bin/bench-rp-kernels pf=... (one
// thread, weights from DRAM, the settings alternating within each repetition), cycles per 16
// rows x 256 elements, former -> these:
//   K = 2048   Q4_K 1 / 2 columns 279 / 282 -> 277 / 286, Q6_K 430 / 457 -> 377 / 389
//   K = 11008  Q4_K 1 column 318 -> 267, Q6_K 458 -> 417
// and 8 columns of K = 2048 (16 KiB) about even in that benchmark, but whole decode steps of a
// Q6_K TinyLlama-shaped model with 8 sequences were 5-15 % slower with these distances, so a
// column set above the limit keeps the far prefetch. The same model, 1 sequence, 3 rounds
// alternating with the former build: 1 thread 25.3 / 26.8 / 26.1 -> 31.2 / 25.1 / 31.9 tokens/s,
// 2 threads 46.5 / 44.2 / 49.1 -> 54.2 / 55.5 / 52.4; 8 sequences within noise.
#define RPK_PF_NEAR    4608
#define RPK_PF_MAX_ACT GGML_X_FAR_MIN_ACT

GXV static void rp_q6_K_vnni(int64_t nblk, int ncols, const uint8_t * grp, const uint8_t * set, float * out) {
    RPK_ALL_COLS(rpk6_cols)
}

// the 16-row k-quant kernels (rpk16_cols, rpk6_16_cols) with all columns in one pass, as
// RPK_ALL_COLS for the 8-row ones
#define RPK16_ALL_COLS(cols)                                                       \
    switch (ncols) {                                                               \
        case 1:  cols(nblk, 1, grp, gs, set, out); break;                          \
        case 2:  cols(nblk, 2, grp, gs, set, out); break;                          \
        case 3:  cols(nblk, 3, grp, gs, set, out); break;                          \
        case 4:  cols(nblk, 4, grp, gs, set, out); break;                          \
        case 5:  cols(nblk, 5, grp, gs, set, out); break;                          \
        case 6:  cols(nblk, 6, grp, gs, set, out); break;                          \
        case 7:  cols(nblk, 7, grp, gs, set, out); break;                          \
        default: cols(nblk, 8, grp, gs, set, out); break;                          \
    }

// Q4_K on 16 rows (two groups in 512-bit vectors), as rpk_cols of repack-q4k.h with every step
// widened: the scales and mins are unpacked per group (256-bit, as there) and joined per
// sub-block; the float steps are the same operations in the same order, so each row's result
// is bit for bit the 8-row kernel's. Two changes to the integer steps (both exact) and a far
// prefetch as rp16_cols has:
//  - the quant chunks of a sub-block pair (2p: low nibbles, 2p + 1: high nibbles of the same
//    bytes) are loaded and joined once, not once per sub-block;
//  - a sub-block's dot is two vpdpbusd chains of 16 elements each (|sum| <= 16 * 15 * 128 <
//    2^15, so each fits an int16), put side by side in the halves of each 32-bit lane and
//    multiplied by the row's scale (in both halves) with one vpdpwssd, instead of an add and a
//    vpmulld per sub-block and column;
//  - each line of both streams is also prefetched into L2 rpk16_pf_far ahead (without it the
//    kernel, which now asks for a pair's 16 chunks at once, waited on memory: 20 % slower than
//    before in the cold layer benchmark although 20 % faster on weights in L2);
//  - the near prefetch positions continue in the next pair past the end of the first group
//    (rp16_pf_at, as rp16_cols), not in the second group, which the other stream reads already.
//    bench-rp-kernels, cold, 16-row against 8-row in the same run, 1 / 2 / 4 / 8 columns:
//    before 336 / 365 / 459 / 624 against 298 / 324 / 457 / 793; after 286 / 304 / 347 / 571
//    against 294 / 323 / 442 / 816; so MUL_MAT now uses it from one column (bench-matvec 4096 x
//    4096, one column, 2 threads: 69-71 % -> 74-75 % of the read bandwidth; TinyLlama-shaped
//    Q4_K, 8 sequences: 281-284 -> 308-316 tokens/s, 1 sequence unchanged).
// Measured (tools/bench/bench-cols.c, TinyLlama-shaped Q4_K layer, cold, interleaved with the
// previous kernel): 1 thread 2 columns 1279-1394 -> 1182-1208 us, 8 columns 2128-2262 ->
// 1961-2015; 2 threads 2 columns 650-716 -> 628-672, 8 columns 1122-1258 -> 1034-1086.
GXV_INLINE void rpk16_unpack_scales(const uint8_t * kb, uint8_t * scm) {
    const __m256i m4  = _mm256_set1_epi8(15);
    const __m256i m63 = _mm256_set1_epi8(63);
    const __m256i m30 = _mm256_set1_epi8(0x30);
    const __m256i A = _mm256_loadu_si256((const __m256i *) (kb + 32));
    const __m256i B = _mm256_loadu_si256((const __m256i *) (kb + 64));
    const __m256i C = _mm256_loadu_si256((const __m256i *) (kb + 96));
    _mm256_store_si256((__m256i *) scm, _mm256_and_si256(A, m63));
    _mm256_store_si256((__m256i *) (scm + 32),
                       _mm256_or_si256(_mm256_and_si256(C, m4), _mm256_and_si256(_mm256_srli_epi16(A, 2), m30)));
    _mm256_store_si256((__m256i *) (scm + 64), _mm256_and_si256(B, m63));
    _mm256_store_si256((__m256i *) (scm + 96),
                       _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(C, 4), m4),
                                       _mm256_and_si256(_mm256_srli_epi16(B, 2), m30)));
}

// the 8 bytes at a (rows 0..7) then at b (rows 8..15)
GXV_INLINE __m128i rpk16_join8(const uint8_t * a, const uint8_t * b) {
    return _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *) a), _mm_loadl_epi64((const __m128i *) b));
}

// the 16 rows' scales of sub-block j, in both int16 halves of each row's 32-bit lane
GXV_INLINE __m512i rpk16_scale2(const uint8_t scm[2][128], int j) {
    const __m512i sc = _mm512_cvtepu8_epi32(rpk16_join8(scm[0] + 8*j, scm[1] + 8*j));
    return _mm512_or_si512(sc, _mm512_slli_epi32(sc, 16));
}

// isum + scale * (a + b) per 32-bit lane, for a and b that fit an int16: a in the low half,
// b in the high half, one vpdpwssd with the scale in both halves
GXV_INLINE __m512i rpk16_scaled_add(__m512i isum, __m512i a, __m512i b, __m512i sc2) {
    return _mm512_dpwssd_epi32(isum, _mm512_mask_mov_epi16(a, 0xAAAAAAAA, _mm512_slli_epi32(b, 16)), sc2);
}

// the far prefetch distance of rpk16_cols (0: none; GGML_X_RPK16_FAR); near it prefetches two
// super-blocks ahead in each stream. Measured as RPK_PF_* below, 1 / 2 / 8 columns: far 24576
// (the former default) 327 / 338 / 577, 12288: 305 / 314 / 555, none: 340 / 362 / 677; a
// longer near distance only made it slower. Since the near prefetch follows the pairs
// (rp16_pf_at), none is best: 300 / 319 / 549 against 24576: 324 / 332 / 665, and bench-matvec
// (4096 x 4096, one column, three rounds alternating) 1 thread 81-82 % -> 89-95 % of the read
// bandwidth, 2 threads 82-84 % -> 86-91 %.
// With up to 4 columns the near prefetches of a super-block are spread over its 4 pairs of
// sub-blocks, as rp16_cols spreads a run's (rp16_pf_spread, GGML_X_RP16_SPREAD=0: all before
// the super-block): bench-matvec, 4096 x 4096, one column, three rounds alternating, share of the
// read probe, burst -> spread: 1 thread 90 / 90 / 82 % -> 96 / 94 / 87 %, 2 threads 80 / 79 / 74 %
// -> 98 / 95 / 90 %; the TinyLlama-shaped Q4_K file at 2 threads, tok/s, np2 135-143 -> 144-159,
// np4 238-240 -> 245-257. With 8 columns spreading was slower (np8 322 -> 300), so those keep
// the burst.
static size_t rpk16_pf_far = 0;

GXV_INLINE void rpk16_cols(int64_t nblk, const int nc, const uint8_t * grp, size_t gs, const uint8_t * set,
                           float * out) {
    const int64_t k = nblk * QK_K;
    const size_t sb = GGML_X_RP_ROWS * sizeof(block_q4_K);
    const float * dx = (const float *) (set + ggml_x_rp_set_dx_off(k));
    const int16_t * bsum = (const int16_t *) (set + ggml_x_rp_set_corr_off(k));
    const size_t near = 2 * sb;
    const size_t far = __atomic_load_n(&rpk16_pf_far, __ATOMIC_RELAXED);
    const bool spread = nc <= 4 && __atomic_load_n(&rp16_pf_spread, __ATOMIC_RELAXED) != 0;
    const __m512i m4 = _mm512_set1_epi8(15);
    _Alignas(32) uint8_t scm[2][128]; // per group: scales of sub-block j row r at 8j + r; mins at 64 + ...
    __m512 acc[GGML_X_RP_COLS];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
    }
    const __m128i pair = _mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    // far prefetch position (as rp16_cols: past the end of the first group it continues in the
    // next pair, which MUL_MAT walks next)
    struct rp16_pf pf_near = rp16_pf_at(grp, near, gs);
    struct rp16_pf pf_far = rp16_pf_at(grp, far, gs);
    for (int64_t b = 0; b < nblk; b++) {
        const uint8_t * kb = grp + (size_t) b * sb;
        const uint8_t * qb = kb + 128;
        const uint8_t * pn = pf_near.base + pf_near.in;
        rp16_pf_step(&pf_near, sb, gs);
        const size_t nl = sb / 64; // lines of a super-block, per stream
        if (!spread) {
            rp16_pf_lines(pn, gs, 0, nl, false);
        }
        if (far != 0) {
            const uint8_t * pfar = pf_far.base + pf_far.in;
            rp16_pf_step(&pf_far, sb, gs);
#pragma GCC unroll 18
            for (size_t l = 0; l < sb; l += 64) {
                _mm_prefetch((const char *) pfar + l, _MM_HINT_T1);
                _mm_prefetch((const char *) pfar + gs + l, _MM_HINT_T1);
            }
        }
        rpk16_unpack_scales(kb, scm[0]);
        rpk16_unpack_scales(kb + gs, scm[1]);
        const int8_t * xq = (const int8_t *) set + (size_t) b * nc * QK_K;
        __m512i isum[GGML_X_RP_COLS];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            isum[c] = _mm512_setzero_si512();
        }
#pragma GCC unroll 1
        for (int p = 0; p < QK_K / 64; p++) { // sub-blocks 2p (low nibbles) and 2p + 1 (high)
            if (spread) { // a quarter of the super-block's lines before each pair of sub-blocks
                rp16_pf_lines(pn, gs, ((size_t) p * nl + 3) / 4, ((size_t) (p + 1) * nl + 3) / 4, false);
            }
            const uint8_t * qc = qb + (size_t) p * 8 * 32;
            __m512i wl[8], wh[8];
#pragma GCC unroll 8
            for (int m = 0; m < 8; m++) {
                const __m512i v = rp_load2(qc + 32*m, gs);
                wl[m] = _mm512_and_si512(v, m4);
                wh[m] = _mm512_and_si512(_mm512_srli_epi16(v, 4), m4);
            }
            const __m512i sl = rpk16_scale2(scm, 2*p);
            const __m512i sh = rpk16_scale2(scm, 2*p + 1);
#pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                const int8_t * xj = xq + (size_t) c * QK_K + 64*p;
                const __m512i z = _mm512_setzero_si512();
                __m512i l0 = z, l1 = z, h0 = z, h1 = z; // even and odd quads of each sub-block
#pragma GCC unroll 4
                for (int m = 0; m < 8; m += 2) {
                    l0 = dpbusd_z(l0, wl[m], xj + 4*m);
                    l1 = dpbusd_z(l1, wl[m + 1], xj + 4*m + 4);
                    h0 = dpbusd_z(h0, wh[m], xj + 32 + 4*m);
                    h1 = dpbusd_z(h1, wh[m + 1], xj + 32 + 4*m + 4);
                }
                isum[c] = rpk16_scaled_add(isum[c], l0, l1, sl);
                isum[c] = rpk16_scaled_add(isum[c], h0, h1, sh);
            }
        }
        __m512i mn[4];
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            const __m128i v0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) (scm[0] + 64 + 16*q)), pair);
            const __m128i v1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) (scm[1] + 64 + 16*q)), pair);
            mn[q] = _mm512_cvtepu8_epi16(_mm256_inserti128_si256(_mm256_castsi128_si256(v0), v1, 1));
        }
        const __m512 d  = _mm512_cvtph_ps(_mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) kb)), _mm_loadu_si128((const __m128i *) (kb + gs)), 1));
        const __m512 dm = _mm512_cvtph_ps(_mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) (kb + 16))),
            _mm_loadu_si128((const __m128i *) (kb + gs + 16)), 1));
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            const int16_t * bs = bsum + ((size_t) b * nc + (size_t) c) * (QK_K / 32);
            int32_t bp[4];
            memcpy(bp, bs, sizeof(bp));
            __m512i s = _mm512_madd_epi16(mn[0], _mm512_set1_epi32(bp[0]));
#pragma GCC unroll 3
            for (int q = 1; q < 4; q++) {
                s = _mm512_add_epi32(s, _mm512_madd_epi16(mn[q], _mm512_set1_epi32(bp[q])));
            }
            const __m512 yd = _mm512_set1_ps(dx[(size_t) b * nc + (size_t) c]);
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(d, yd), acc[c]);
            acc[c] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dm, yd), acc[c]);
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        _mm512_storeu_ps(out + c*2*GGML_X_RP_ROWS, acc[c]);
    }
}

GXV static void rp16_q4_K_vnni(int64_t nblk, int ncols, const uint8_t * grp, size_t gs, const uint8_t * set, float * out) {
    RPK16_ALL_COLS(rpk16_cols)
}

// Q6_K on 16 rows (two groups in 512-bit vectors): rpk6_cols of repack-q6k.h with every step
// widened, the same operations in the same order per row, so each row's result is bit for bit
// the 8-row kernel's, at half the instructions per weight. Both streams are prefetched two
// super-blocks ahead into L1 at positions that continue in the next pair (rp16_pf_at), a
// quarter of the lines per step; no far prefetch (6144 and 12288 were no better, 12288 worse
// with 2 and 4 columns). Measured (bench-rp-kernels, one thread, cycles per 16 rows x 256, cold
// weights, alternating with the 8-row kernel): 3 columns 308 against 313, 5: 414 / 484, 7: 618 /
// 932, 8: 642 / 888; 1 and 2 columns even (MUL_MAT uses it from 2). The TinyLlama-shaped output
// matrix with 8 sequences (ggml-llama bench -np 8, 2 threads): 3.53 -> 2.66 ms per step.
// (Without the pair-aware positions the prefetch of the last two super-blocks of each group
// fell into the other stream's group: 16-row 601 against 373 for 8-row with 2 columns.)
GXV_INLINE void rpk6_16_cols(int64_t nblk, const int nc, const uint8_t * grp, size_t gs, const uint8_t * set,
                             float * out) {
    const int64_t k = nblk * QK_K;
    const size_t sb = RPK6_SB;
    const float * dx = (const float *) (set + ggml_x_rp_set_dx_off(k));
    const int16_t * bsum = (const int16_t *) (set + ggml_x_rp_set_corr_off(k));
    const size_t near = 2 * sb;
    const __m512i m4  = _mm512_set1_epi8(15);
    const __m512i m30 = _mm512_set1_epi8(0x30);
    const __m128i pair = _mm_setr_epi8(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15);
    __m512 acc[GGML_X_RP_COLS];
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
    }
    // the prefetch position in the first streams of the pairs (rp16_pf_at): past the end of
    // the first group it continues in the next pair, which MUL_MAT walks next
    struct rp16_pf pf_near = rp16_pf_at(grp, near, gs);
    for (int64_t b = 0; b < nblk; b++) {
        const uint8_t * kb = grp + (size_t) b * sb;
        const uint8_t * pn = pf_near.base + pf_near.in;
        rp16_pf_step(&pf_near, sb, gs);
        const int8_t * xq = (const int8_t *) set + (size_t) b * nc * QK_K;
        __m512i isum[GGML_X_RP_COLS];
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            isum[c] = _mm512_setzero_si512();
        }
#pragma GCC unroll 1
        for (int s = 0; s < 4; s++) { // half n = s / 2, chunks 4h..4h+3 with h = s % 2 (as rpk6_cols)
            const int n = s / 2, h = s % 2;
            const uint8_t * qs = kb + RPK6_HDR + 768*n + 96*4*h;
            // a quarter of the super-block's lines per step, so that the misses spread out
#pragma GCC unroll 7
            for (int i = 0; i < 7; i++) {
                const size_t l = (size_t) (7*s + i) * 64;
                if (l < sb) {
                    _mm_prefetch((const char *) pn + l, _MM_HINT_T0);
                    _mm_prefetch((const char *) pn + gs + l, _MM_HINT_T0);
                }
            }
#pragma GCC unroll 4
            for (int f = 0; f < 4; f++) {
                __m512i w[4];
#pragma GCC unroll 4
                for (int m = 0; m < 4; m++) {
                    const __m512i x = rp_load2(qs + 96*m + 32*(f % 2), gs);
                    const __m512i q = rp_load2(qs + 96*m + 64, gs);
                    const __m512i hq = f == 0 ? _mm512_slli_epi16(q, 4) : f == 1 ? _mm512_slli_epi16(q, 2) :
                                       f == 2 ? q : _mm512_srli_epi16(q, 2);
                    w[m] = _mm512_ternarylogic_epi32(f < 2 ? x : _mm512_srli_epi16(x, 4), _mm512_and_si512(hq, m30), m4, 0xE4);
                }
                const int g = 8*n + 2*f + h;
                const __m512i sc = _mm512_cvtepi8_epi32(rpk16_join8(kb + 16 + 8*g, kb + gs + 16 + 8*g));
#pragma GCC unroll 8
                for (int c = 0; c < nc; c++) {
                    const int8_t * x = xq + (size_t) c * QK_K + 128*n + 16*h + 32*f;
                    __m512i d4 = _mm512_setzero_si512();
#pragma GCC unroll 4
                    for (int m = 0; m < 4; m++) {
                        d4 = dpbusd_z(d4, w[m], x + 4*m);
                    }
                    isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(d4, sc));
                }
            }
        }
        // the - 32 (as rpk6_cols): lane r of sp[p] = (scale 2p, scale 2p + 1) of row r, as int16
        __m512i sp[8];
#pragma GCC unroll 8
        for (int p = 0; p < 8; p++) {
            const __m128i v0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) (kb + 16 + 16*p)), pair);
            const __m128i v1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *) (kb + gs + 16 + 16*p)), pair);
            sp[p] = _mm512_cvtepi8_epi16(_mm256_inserti128_si256(_mm256_castsi128_si256(v0), v1, 1));
        }
        const __m512 d = _mm512_cvtph_ps(_mm256_inserti128_si256(
            _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *) kb)), _mm_loadu_si128((const __m128i *) (kb + gs)), 1));
#pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            const int16_t * bs = bsum + ((size_t) b * nc + (size_t) c) * (QK_K / 16);
            int32_t bp[8];
            memcpy(bp, bs, sizeof(bp));
            __m512i m = _mm512_madd_epi16(sp[0], _mm512_set1_epi32(bp[0]));
#pragma GCC unroll 7
            for (int p = 1; p < 8; p++) {
                m = _mm512_add_epi32(m, _mm512_madd_epi16(sp[p], _mm512_set1_epi32(bp[p])));
            }
            const __m512i t = _mm512_sub_epi32(isum[c], _mm512_slli_epi32(m, 5));
            const __m512 yd = _mm512_set1_ps(dx[(size_t) b * nc + (size_t) c]);
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(t), _mm512_mul_ps(d, yd), acc[c]);
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        _mm512_storeu_ps(out + c*2*GGML_X_RP_ROWS, acc[c]);
    }
}

GXV static void rp16_q6_K_vnni(int64_t nblk, int ncols, const uint8_t * grp, size_t gs, const uint8_t * set, float * out) {
    RPK16_ALL_COLS(rpk6_16_cols)
}

void ggml_x_rp_kernels_vnni(struct ggml_x_gemm_kernels * k) {
    ggml_x_rp_setting(&rp_pf_near, "GGML_X_RP_PF");
    ggml_x_rp_setting(&rp_pf_far, "GGML_X_RP_FAR");
    ggml_x_rp_setting(&rp16_pf_near, "GGML_X_RP16_PF");
    ggml_x_rp_setting(&rp16_pf_far, "GGML_X_RP16_FAR");
    __atomic_store_n(&rp16_pf_spread, (size_t) 1, __ATOMIC_RELAXED);
    ggml_x_rp_setting(&rp16_pf_spread, "GGML_X_RP16_SPREAD");
    __atomic_store_n(&rpk_pf_near, (size_t) RPK_PF_NEAR, __ATOMIC_RELAXED);
    __atomic_store_n(&rpk_pf_far, (size_t) 0, __ATOMIC_RELAXED);
    __atomic_store_n(&rpk_pf_max_act, (size_t) RPK_PF_MAX_ACT, __ATOMIC_RELAXED);
    ggml_x_rp_setting(&rpk_pf_near, "GGML_X_RPK_PF");
    ggml_x_rp_setting(&rpk_pf_far, "GGML_X_RPK_FAR");
    ggml_x_rp_setting(&rpk_pf_max_act, "GGML_X_RPK_MAX_ACT");
    __atomic_store_n(&rpk_pf_spread, (size_t) 0, __ATOMIC_RELAXED); // (repack-q4k.h)
    ggml_x_rp_setting(&rpk_pf_spread, "GGML_X_RPK_SPREAD");
    ggml_x_rp_setting(&rpk16_pf_far, "GGML_X_RPK16_FAR");
    k->rp_q4_0 = rp_q4_0_vnni;
    k->rp_q8_0 = rp_q8_0_vnni;
    k->rp_q4_K = rp_q4_K_vnni;
    k->rp_q6_K = rp_q6_K_vnni;
    k->rp16_q4_0 = rp16_q4_0_vnni;
    k->rp16_q8_0 = rp16_q8_0_vnni;
    k->rp16_q4_K = rp16_q4_K_vnni;
    k->rp16_q6_K = rp16_q6_K_vnni;
}

#endif // __x86_64__
