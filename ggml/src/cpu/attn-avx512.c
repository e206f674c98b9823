// attn-avx512.c - the AVX-512 kernel of ggml_x_attn_masked: one (token, KV head) task,
// for any number G of query heads per KV head and head sizes D a multiple of 16.
//
// Every inner loop keeps 16 independent accumulators and ends in one 16-to-1 transposing
// reduction (attn_hsum16), so no chain waits on the latency of the one before:
// - scores: 16 cells at a time. Their K rows are converted to F32 once (kf), then per head the
//   16 dot products run over the head dimension (lanes over d), with the query's piece of 16 in
//   a register for all 16 cells;
// - softmax: the row kernels of SOFT_MAX (vec.h), per head, into a row of probabilities per head
//   (rounded to F16 for an F16 cache, as MUL_MAT does with F16 weights), padded with zeros to a
//   multiple of 16 cells;
// - outputs: V is stored transposed (a row per channel, cells contiguous), so lanes are 16 cells:
//   per block of 16 cells, R rows of V times the G probability rows, R * G = 16 accumulators
//   (heads rounded up to a power of two, 16 at most per pass). Cells that are not consecutive
//   (several sequences in one cache) are gathered with the block's 16 indices.

#if defined(__x86_64__)

#include "attn.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define AX5 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#define AX5_INLINE AX5 __attribute__((always_inline)) static inline

// lane i of the result = the sum of the 16 lanes of v[i]
AX5_INLINE __m512 attn_hsum16(const __m512 v[16]) {
    __m512 a[8], b[4];
#pragma GCC unroll 16
    for (int i = 0; i < 8; i++) { // per 128-bit lane: v2i(0+2), v2i+1(0+2), v2i(1+3), v2i+1(1+3)
        a[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
    }
#pragma GCC unroll 16
    for (int i = 0; i < 4; i++) { // per 128-bit lane: the lane's sums of v4i .. v4i+3
        b[i] = _mm512_add_ps(_mm512_shuffle_ps(a[2 * i], a[2 * i + 1], 0x44),
                             _mm512_shuffle_ps(a[2 * i], a[2 * i + 1], 0xEE));
    }
    // 128-bit lanes: b0 (0+2, 1+3), b1 (0+2, 1+3), then b2, b3; then the two halves summed
    const __m512 c0 = _mm512_add_ps(_mm512_shuffle_f32x4(b[0], b[1], 0x44), _mm512_shuffle_f32x4(b[0], b[1], 0xEE));
    const __m512 c1 = _mm512_add_ps(_mm512_shuffle_f32x4(b[2], b[3], 0x44), _mm512_shuffle_f32x4(b[2], b[3], 0xEE));
    return _mm512_add_ps(_mm512_shuffle_f32x4(c0, c1, 0x88), _mm512_shuffle_f32x4(c0, c1, 0xDD));
}

// x rounded to F16 and back (round to nearest even, as GGML_FP32_TO_FP16)
AX5_INLINE __m512 attn_round16(__m512 x) {
    return _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
}

// scores of the G heads (queries qf, a row of D per head) for the cells idx[i0 .. i0 + 16) into
// sc (a row of stride nvp per head). The 16 K rows are first converted into kf by pieces of 16:
// piece p of cell c at kf + 256p + 16c, so that one pointer reaches the 16 cells of a piece
// (a quantized row is decoded first).
AX5_INLINE void attn_scores16(const struct attn_masked_op * a, const char * kbase, const int32_t * idx,
                              const float * qf, const struct attn_masked_scratch * s, float * sc, int64_t nvp,
                              int64_t G) {
    const int64_t D = a->D;
    const size_t nb1 = a->k->nb[1];
    float * kf = s->kf;
    if (a->kq8) { // Q8_0 keys decoded here: 16 values of a block times its scale
        for (int c = 0; c < 16; c++) {
            const block_q8_0 * kb = (const block_q8_0 *) (kbase + (size_t) idx[c] * nb1);
            for (int64_t d = 0; d < D; d += 16) {
                const block_q8_0 * b = kb + d / QK8_0;
                const __m512 x = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *) (b->qs + d % QK8_0))));
                _mm512_store_ps(kf + d * 16 + c * 16, _mm512_mul_ps(x, _mm512_set1_ps(GGML_FP16_TO_FP32(b->d))));
            }
        }
    } else if (a->kq4) { // Q4_0 keys decoded here: the 16 low (values 0..15 of a block) or high
                         // nibbles (16..31), minus 8, times the block's scale, as the reference
        const __m128i m4 = _mm_set1_epi8(15);
        for (int c = 0; c < 16; c++) {
            const block_q4_0 * kb = (const block_q4_0 *) (kbase + (size_t) idx[c] * nb1);
            for (int64_t d = 0; d < D; d += 16) {
                const block_q4_0 * b = kb + d / QK4_0;
                const __m128i q = _mm_loadu_si128((const __m128i *) b->qs);
                const __m128i nib = _mm_and_si128(d % QK4_0 == 0 ? q : _mm_srli_epi16(q, 4), m4);
                const __m512i v = _mm512_sub_epi32(_mm512_cvtepu8_epi32(nib), _mm512_set1_epi32(8));
                _mm512_store_ps(kf + d * 16 + c * 16,
                                _mm512_mul_ps(_mm512_cvtepi32_ps(v), _mm512_set1_ps(GGML_FP16_TO_FP32(b->d))));
            }
        }
    } else {
#pragma GCC unroll 16
        for (int c = 0; c < 16; c++) {
            const char * krow = attn_k_row(a, kbase + (size_t) idx[c] * nb1, s);
            for (int64_t d = 0; d < D; d += 16) {
                const __m512 x = a->kf16 ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (krow + d * 2)))
                                         : _mm512_loadu_ps((const float *) krow + d);
                _mm512_store_ps(kf + d * 16 + c * 16, x);
            }
        }
    }
    for (int64_t j = 0; j < G; j++) {
        const float * qj = qf + j * D;
        __m512 acc[16];
        const __m512 q0 = _mm512_load_ps(qj);
#pragma GCC unroll 16
        for (int c = 0; c < 16; c++) {
            acc[c] = _mm512_mul_ps(_mm512_load_ps(kf + c * 16), q0);
        }
        for (int64_t d = 16; d < D; d += 16) {
            const __m512 qd = _mm512_load_ps(qj + d);
            const float * kp = kf + d * 16;
#pragma GCC unroll 16
            for (int c = 0; c < 16; c++) {
                acc[c] = _mm512_fmadd_ps(_mm512_load_ps(kp + c * 16), qd, acc[c]);
            }
        }
        _mm512_storeu_ps(sc + j * nvp, attn_hsum16(acc));
    }
}

// 16 values of V row vrow at the block's cells: consecutive cells are one load, others a gather
// of the 16 indices vi (an F16 gather reads 4 bytes per cell, so it is used only where those
// stay inside the cache: vend)
AX5_INLINE __m512 attn_vload(bool f16, bool run, const char * vrow, int32_t m0, __m512i vi, const int32_t * idx,
                             const char * vend) {
    if (f16) {
        if (run) {
            return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (vrow + (size_t) m0 * 2)));
        }
        if (vrow + (size_t) idx[15] * 2 + 4 <= vend) {
            const __m512i w = _mm512_i32gather_epi32(vi, vrow, 2);
            return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(w));
        }
        uint16_t h[16];
#pragma GCC unroll 16
        for (int c = 0; c < 16; c++) {
            memcpy(&h[c], vrow + (size_t) idx[c] * 2, 2);
        }
        return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) h));
    }
    if (run) {
        return _mm512_loadu_ps((const float *) vrow + m0);
    }
    return _mm512_i32gather_ps(vi, vrow, 4);
}

// outputs of heads j0 .. j0 + GP (GP a power of two <= 16; probabilities of heads beyond G are
// zeros): R = 16 / GP rows of V per pass. pp holds per block of 16 cells the Gr heads' 16
// probabilities one after the other.
AX5_INLINE void attn_outputs(const struct attn_masked_op * a, const char * vbase, const char * vend,
                             const int32_t * idx, int64_t nv, int64_t nvp, const float * pp, int64_t Gr, int64_t j0,
                             char * out, int64_t G, const int GP) {
    const int R = 16 / GP;
    const int64_t Dv = a->Dv;
    const size_t nb1 = a->v->nb[1];
    const bool f16 = a->f16;
    float res[16] __attribute__((aligned(64)));
    for (int64_t d0 = 0; d0 < Dv; d0 += R) {
        const char * vr[16];
#pragma GCC unroll 16
        for (int r = 0; r < R; r++) {
            vr[r] = vbase + (size_t) GGML_X_MIN(d0 + r, Dv - 1) * nb1;
        }
        __m512 acc[16];
#pragma GCC unroll 16
        for (int e = 0; e < 16; e++) {
            acc[e] = _mm512_setzero_ps();
        }
        for (int64_t i = 0; i < nvp; i += 16) {
            const int32_t m0 = idx[i];
            const bool run = i + 16 <= nv && idx[i + 15] - m0 == 15; // 16 increasing cells: consecutive
            const __m512i vi = _mm512_loadu_si512((const void *) (idx + i));
            const float * pb = pp + i * Gr + j0 * 16;
#pragma GCC unroll 16
            for (int r = 0; r < R; r++) {
                // the same cells of the row one pass ahead (rows are a few KiB: too short for the
                // hardware prefetcher to lock on)
                _mm_prefetch(vr[r] + (size_t) R * nb1 + (size_t) m0 * (f16 ? 2 : 4), _MM_HINT_T0);
                const __m512 vv = attn_vload(f16, run, vr[r], m0, vi, idx + i, vend);
#pragma GCC unroll 16
                for (int j = 0; j < GP; j++) {
                    acc[r * GP + j] = _mm512_fmadd_ps(vv, _mm512_load_ps(pb + j * 16), acc[r * GP + j]);
                }
            }
        }
        _mm512_store_ps(res, attn_hsum16(acc));
        for (int r = 0; r < R && d0 + r < Dv; r++) {
            for (int j = 0; j < GP && j0 + j < G; j++) {
                ((float *) (out + (j0 + j) * a->dst->nb[1]))[d0 + r] = res[r * GP + j];
            }
        }
    }
}

// 16 values (fewer at the end of a row: zeros after) of the V row vrow from value d0, as F32
AX5_INLINE __m512 attn_vrow_piece(const struct attn_masked_op * a, const char * vrow, int64_t d0,
                                  const struct attn_masked_scratch * s) {
    if (a->vq8) {
        const block_q8_0 * b = (const block_q8_0 *) vrow + d0 / QK8_0;
        const __m512 x = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *) (b->qs + d0 % QK8_0))));
        return _mm512_mul_ps(x, _mm512_set1_ps(GGML_FP16_TO_FP32(b->d)));
    }
    if (a->vquant) { // (rows of whole blocks: never a partial piece)
        return _mm512_loadu_ps(ggml_x_attn_v_piece(a, vrow, d0, s));
    }
    const int64_t left = a->Dv - d0;
    if (left >= 16) {
        return a->f16 ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) (vrow + d0 * 2)))
                      : _mm512_loadu_ps((const float *) vrow + d0);
    }
    const __mmask16 m = (__mmask16) ((1u << left) - 1);
    if (a->f16) {
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, vrow + d0 * 2));
    }
    return _mm512_maskz_loadu_ps(m, (const float *) vrow + d0);
}

// outputs of heads j0 .. j0 + GP from V stored by cells (ggml_x_attn_masked_vrows): per block of
// 32 cells (their rows of this KV head stay in L1) and per P pieces of 16 values (P = 16 / GP,
// at most 4: GP * P sums in registers, independent chains), each cell's pieces times its GP
// probabilities (pp as for attn_outputs: per block of 16 cells, 16 per head); the sums wait in
// s->acc ([GP][Dv], padded to 16) between blocks
AX5_INLINE void attn_outputs_vrows(const struct attn_masked_op * a, const char * vbase, const int32_t * idx,
                                   int64_t nv, const float * pp, int64_t Gr, int64_t j0, char * out, int64_t G,
                                   const struct attn_masked_scratch * s, const int GP) {
    const int P = GP >= 4 ? 16 / GP : 4;
    const int64_t Dv = a->Dv, Dp = (Dv + 15) / 16 * 16;
    const size_t nb1 = a->v->nb[1];
    float * sums = s->acc;
    for (int64_t e = 0; e < GP * Dp; e += 16) {
        _mm512_store_ps(sums + e, _mm512_setzero_ps());
    }
    for (int64_t c0 = 0; c0 < nv; c0 += 32) {
        const int64_t c1 = GGML_X_MIN(c0 + 32, nv);
        for (int64_t i = c0 + 64; i < GGML_X_MIN(c0 + 96, nv); i++) { // the rows of the block after next
            for (size_t o = 0; o < a->vrow; o += 64) {
                _mm_prefetch(vbase + (size_t) idx[i] * nb1 + o, _MM_HINT_T0);
            }
        }
        for (int64_t d0 = 0; d0 < Dv; d0 += 16 * P) {
            const int np = (int) GGML_X_MIN(P, (Dv - d0 + 15) / 16); // pieces in this pass
            __m512 acc[16];
#pragma GCC unroll 16
            for (int j = 0; j < GP; j++) {
#pragma GCC unroll 4
                for (int p = 0; p < P; p++) {
                    acc[j * P + p] = p < np ? _mm512_load_ps(sums + j * Dp + d0 + 16 * p) : _mm512_setzero_ps();
                }
            }
            for (int64_t i = c0; i < c1; i++) {
                const char * vrow = vbase + (size_t) idx[i] * nb1;
                __m512 vv[4];
#pragma GCC unroll 4
                for (int p = 0; p < P; p++) {
                    vv[p] = p < np ? attn_vrow_piece(a, vrow, d0 + 16 * p, s) : _mm512_setzero_ps();
                }
                const float * pi = pp + (i & ~(int64_t) 15) * Gr + j0 * 16 + (i & 15);
#pragma GCC unroll 16
                for (int j = 0; j < GP; j++) {
                    const __m512 pj = _mm512_set1_ps(pi[j * 16]);
#pragma GCC unroll 4
                    for (int p = 0; p < P; p++) {
                        acc[j * P + p] = _mm512_fmadd_ps(pj, vv[p], acc[j * P + p]);
                    }
                }
            }
#pragma GCC unroll 16
            for (int j = 0; j < GP; j++) {
#pragma GCC unroll 4
                for (int p = 0; p < np && p < P; p++) {
                    _mm512_store_ps(sums + j * Dp + d0 + 16 * p, acc[j * P + p]);
                }
            }
        }
    }
    for (int j = 0; j < GP && j0 + j < G; j++) {
        memcpy(out + (j0 + j) * a->dst->nb[1], sums + j * Dp, (size_t) Dv * sizeof(float));
    }
}

AX5 void ggml_x_attn_masked_avx512(const struct attn_masked_op * a, int64_t n, int64_t hk, int64_t jb, int64_t G,
                                   int64_t nv,
                                   const struct attn_masked_scratch * s) {
    const struct ggml_tensor * q = a->q, * k = a->k, * v = a->v;
    const int64_t D = a->D, hb = hk * a->G + jb; // the task's first head
    const bool f16 = a->f16;
    const int64_t nvp = (nv + 15) / 16 * 16;
    int32_t * idx = s->idx;
    attn_pad_cells(idx, nv, nvp);

    // queries, a row per head (rounded to F16 for F16 keys)
    float * qf = s->qt;
    for (int64_t j = 0; j < G; j++) {
        const float * qrow = (const float *) ((const char *) q->data + (hb + j) * q->nb[1] + n * q->nb[2]);
        for (int64_t d = 0; d < D; d += 16) {
            const __m512 x = _mm512_loadu_ps(qrow + d);
            _mm512_store_ps(qf + j * D + d, a->kf16 ? attn_round16(x) : x);
        }
    }

    // scores, 16 cells at a time
    const char * kbase = (const char *) k->data + hk * k->nb[2];
    const size_t krow = a->krow;
    for (int64_t i0 = 0; i0 < nvp; i0 += 16) {
        if (i0 + 32 < nvp) { // the K rows two blocks ahead (the cache is cold after a weight stream)
            for (int c = 0; c < 16; c++) {
                const char * r = kbase + (size_t) idx[i0 + 32 + c] * k->nb[1];
                for (size_t o = 0; o < krow; o += 64) {
                    _mm_prefetch(r + o, _MM_HINT_T0);
                }
            }
        }
        attn_scores16(a, kbase, idx + i0, qf, s, s->sc + i0, nvp, G);
    }
    attn_softcap_scores(a, G, s->sc, nv, nvp);

    // probabilities: per block of 16 cells, 16 per head for Gr heads (G rounded up to GP; zeros
    // after nv and for the heads added)
    const int GP = G >= 16 ? 16 : G > 4 ? 8 : G > 2 ? 4 : (int) G;
    const int64_t Gr = (G + GP - 1) / GP * GP;
    float * pp = s->pt;
    for (int64_t j = 0; j < Gr; j++) {
        if (j >= G) {
            for (int64_t i = 0; i < nvp; i += 16) {
                _mm512_store_ps(pp + i * Gr + j * 16, _mm512_setzero_ps());
            }
            continue;
        }
        const __m512 inv = _mm512_set1_ps(attn_softmax_row(a->vk, nv, s->w, s->sc + j * nvp, a->scale, s->mval));
        for (int64_t i = 0; i < nvp; i += 16) {
            const __mmask16 m = i + 16 <= nv ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (nv - i)) - 1);
            __m512 x = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, s->w + i), inv);
            _mm512_store_ps(pp + i * Gr + j * 16, f16 ? attn_round16(x) : x);
        }
    }

    // outputs
    const char * vbase = (const char *) v->data + hk * v->nb[2];
    const char * vend = (const char *) v->data + ggml_nbytes(v);
    char * out = (char *) a->dst->data + hb * a->dst->nb[1] + n * a->dst->nb[2];
    for (int64_t j0 = 0; j0 < G && a->vrows; j0 += GP) {
        switch (GP) {
        case 16: attn_outputs_vrows(a, vbase, idx, nv, pp, Gr, j0, out, G, s, 16); break;
        case 8:  attn_outputs_vrows(a, vbase, idx, nv, pp, Gr, j0, out, G, s, 8); break;
        case 4:  attn_outputs_vrows(a, vbase, idx, nv, pp, Gr, j0, out, G, s, 4); break;
        case 2:  attn_outputs_vrows(a, vbase, idx, nv, pp, Gr, j0, out, G, s, 2); break;
        default: attn_outputs_vrows(a, vbase, idx, nv, pp, Gr, j0, out, G, s, 1); break;
        }
    }
    for (int64_t j0 = 0; j0 < G && !a->vrows; j0 += GP) {
        switch (GP) {
        case 16: attn_outputs(a, vbase, vend, idx, nv, nvp, pp, Gr, j0, out, G, 16); break;
        case 8:  attn_outputs(a, vbase, vend, idx, nv, nvp, pp, Gr, j0, out, G, 8); break;
        case 4:  attn_outputs(a, vbase, vend, idx, nv, nvp, pp, Gr, j0, out, G, 4); break;
        case 2:  attn_outputs(a, vbase, vend, idx, nv, nvp, pp, Gr, j0, out, G, 2); break;
        default: attn_outputs(a, vbase, vend, idx, nv, nvp, pp, Gr, j0, out, G, 1); break;
        }
    }
}

#endif
