// attn-avx2.c - the AVX2 kernel of ggml_x_attn_masked: one (token, KV head) task, for
// any number G of query heads per KV head and head sizes D a multiple of 8.
//
// The AVX-512 kernel (attn-avx512.c) on 8 lanes: every inner loop keeps 8 independent
// accumulators (two FMA pipes of latency 4) and ends in one 8-to-1 transposing reduction:
// - scores: 8 cells at a time, their K rows converted to F32 once (kf, by pieces of 8: piece p
//   of cell c at kf + 64p + 8c), then per head 8 dot products over the head dimension;
// - softmax: the row kernels of SOFT_MAX (vec.h) per head, into per block of 8 cells the 8
//   probabilities of each head (rounded to F16 for an F16 cache), zeros after the last cell;
// - outputs: lanes are 8 cells of a V row (V is stored transposed): R rows of V times GP
//   probability rows, R * GP = 8 accumulators (heads rounded up to a power of two, 8 at most
//   per pass). Cells that are not consecutive are gathered.

#if defined(__x86_64__)

#include "attn.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

#define AX2 __attribute__((target("avx2,fma,f16c")))
#define AX2_INLINE AX2 __attribute__((always_inline)) static inline

// lane i of the result = the sum of the 8 lanes of v[i]
AX2_INLINE __m256 attn2_hsum8(const __m256 v[8]) {
    __m256 a[4], b[2];
#pragma GCC unroll 4
    for (int i = 0; i < 4; i++) { // per 128-bit lane: v2i(0+2), v2i+1(0+2), v2i(1+3), v2i+1(1+3)
        a[i] = _mm256_add_ps(_mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]), _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1]));
    }
#pragma GCC unroll 2
    for (int i = 0; i < 2; i++) { // per 128-bit lane: the lane's sums of v4i .. v4i+3
        b[i] = _mm256_add_ps(_mm256_shuffle_ps(a[2 * i], a[2 * i + 1], 0x44),
                             _mm256_shuffle_ps(a[2 * i], a[2 * i + 1], 0xEE));
    }
    return _mm256_add_ps(_mm256_permute2f128_ps(b[0], b[1], 0x20), _mm256_permute2f128_ps(b[0], b[1], 0x31));
}

// x rounded to F16 and back (round to nearest even, as GGML_FP32_TO_FP16)
AX2_INLINE __m256 attn2_round16(__m256 x) {
    return _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
}

// scores of the G heads (queries qf, a row of D per head) for the cells idx[0 .. 8) into sc (a
// row of stride nvp per head)
AX2_INLINE void attn2_scores8(const struct attn_masked_op * a, const char * kbase, const int32_t * idx,
                              const float * qf, const struct attn_masked_scratch * s, float * sc, int64_t nvp,
                              int64_t G) {
    const int64_t D = a->D;
    const size_t nb1 = a->k->nb[1];
    float * kf = s->kf;
    if (a->kq8) { // Q8_0 keys decoded here: 8 values of a block times its scale
        for (int c = 0; c < 8; c++) {
            const block_q8_0 * kb = (const block_q8_0 *) (kbase + (size_t) idx[c] * nb1);
            for (int64_t d = 0; d < D; d += 8) {
                const block_q8_0 * b = kb + d / QK8_0;
                const __m256 x = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (b->qs + d % QK8_0))));
                _mm256_store_ps(kf + d * 8 + c * 8, _mm256_mul_ps(x, _mm256_set1_ps(GGML_FP16_TO_FP32(b->d))));
            }
        }
    } else if (a->kq4) { // Q4_0 keys decoded here: 8 low (values 0..15 of a block) or high nibbles
                         // (16..31), minus 8, times the block's scale, as the reference
        const __m128i m4 = _mm_set1_epi8(15);
        for (int c = 0; c < 8; c++) {
            const block_q4_0 * kb = (const block_q4_0 *) (kbase + (size_t) idx[c] * nb1);
            for (int64_t d = 0; d < D; d += 8) {
                const block_q4_0 * b = kb + d / QK4_0;
                const int64_t o = d % QK4_0;
                const __m128i q = _mm_loadl_epi64((const __m128i *) (b->qs + o % 16));
                const __m128i nib = _mm_and_si128(o < 16 ? q : _mm_srli_epi16(q, 4), m4);
                const __m256i v = _mm256_sub_epi32(_mm256_cvtepu8_epi32(nib), _mm256_set1_epi32(8));
                _mm256_store_ps(kf + d * 8 + c * 8,
                                _mm256_mul_ps(_mm256_cvtepi32_ps(v), _mm256_set1_ps(GGML_FP16_TO_FP32(b->d))));
            }
        }
    } else {
#pragma GCC unroll 8
        for (int c = 0; c < 8; c++) {
            const char * krow = attn_k_row(a, kbase + (size_t) idx[c] * nb1, s);
            for (int64_t d = 0; d < D; d += 8) {
                const __m256 x = a->kf16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (krow + d * 2)))
                                         : _mm256_loadu_ps((const float *) krow + d);
                _mm256_store_ps(kf + d * 8 + c * 8, x);
            }
        }
    }
    for (int64_t j = 0; j < G; j++) {
        const float * qj = qf + j * D;
        __m256 acc[8];
        const __m256 q0 = _mm256_load_ps(qj);
#pragma GCC unroll 8
        for (int c = 0; c < 8; c++) {
            acc[c] = _mm256_mul_ps(_mm256_load_ps(kf + c * 8), q0);
        }
        for (int64_t d = 8; d < D; d += 8) {
            const __m256 qd = _mm256_load_ps(qj + d);
            const float * kp = kf + d * 8;
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++) {
                acc[c] = _mm256_fmadd_ps(_mm256_load_ps(kp + c * 8), qd, acc[c]);
            }
        }
        _mm256_storeu_ps(sc + j * nvp, attn2_hsum8(acc));
    }
}

// 8 values of V row vrow at the block's cells idx[0 .. 8): one load where they are consecutive
AX2_INLINE __m256 attn2_vload(bool f16, bool run, const char * vrow, const int32_t * idx, __m256i vi) {
    if (f16) {
        if (run) {
            return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (vrow + (size_t) idx[0] * 2)));
        }
        uint16_t h[8];
#pragma GCC unroll 8
        for (int c = 0; c < 8; c++) {
            memcpy(&h[c], vrow + (size_t) idx[c] * 2, 2);
        }
        return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) h));
    }
    if (run) {
        return _mm256_loadu_ps((const float *) vrow + idx[0]);
    }
    return _mm256_i32gather_ps((const float *) vrow, vi, 4);
}

// outputs of heads j0 .. j0 + GP (GP a power of two <= 8; probabilities of heads beyond G are
// zeros): R = 8 / GP rows of V per pass. pp holds per block of 8 cells the Gr heads' 8
// probabilities one after the other.
AX2_INLINE void attn2_outputs(const struct attn_masked_op * a, const char * vbase, const int32_t * idx, int64_t nv,
                              int64_t nvp, const float * pp, int64_t Gr, int64_t j0, char * out, int64_t G, const int GP) {
    const int R = 8 / GP;
    const int64_t Dv = a->Dv;
    const size_t nb1 = a->v->nb[1];
    const bool f16 = a->f16;
    float res[8] __attribute__((aligned(32)));
    for (int64_t d0 = 0; d0 < Dv; d0 += R) {
        const char * vr[8];
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            vr[r] = vbase + (size_t) GGML_X_MIN(d0 + r, Dv - 1) * nb1;
        }
        __m256 acc[8];
#pragma GCC unroll 8
        for (int e = 0; e < 8; e++) {
            acc[e] = _mm256_setzero_ps();
        }
        for (int64_t i = 0; i < nvp; i += 8) {
            const bool run = i + 8 <= nv && idx[i + 7] - idx[i] == 7; // 8 increasing cells: consecutive
            const __m256i vi = _mm256_loadu_si256((const __m256i *) (idx + i));
            const float * pb = pp + i * Gr + j0 * 8;
#pragma GCC unroll 8
            for (int r = 0; r < R; r++) {
                _mm_prefetch(vr[r] + (size_t) R * nb1 + (size_t) idx[i] * (f16 ? 2 : 4), _MM_HINT_T0);
                const __m256 vv = attn2_vload(f16, run, vr[r], idx + i, vi);
#pragma GCC unroll 8
                for (int j = 0; j < GP; j++) {
                    acc[r * GP + j] = _mm256_fmadd_ps(vv, _mm256_load_ps(pb + j * 8), acc[r * GP + j]);
                }
            }
        }
        _mm256_store_ps(res, attn2_hsum8(acc));
        for (int r = 0; r < R && d0 + r < Dv; r++) {
            for (int j = 0; j < GP && j0 + j < G; j++) {
                ((float *) (out + (j0 + j) * a->dst->nb[1]))[d0 + r] = res[r * GP + j];
            }
        }
    }
}

// 8 values (fewer at the end of a row: zeros after) of the V row vrow from value d0, as F32
AX2_INLINE __m256 attn2_vrow_piece(const struct attn_masked_op * a, const char * vrow, int64_t d0,
                                   const struct attn_masked_scratch * s) {
    if (a->vq8) {
        const block_q8_0 * b = (const block_q8_0 *) vrow + d0 / QK8_0;
        const __m256 x = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *) (b->qs + d0 % QK8_0))));
        return _mm256_mul_ps(x, _mm256_set1_ps(GGML_FP16_TO_FP32(b->d)));
    }
    if (a->vquant) { // (rows of whole blocks: never a partial piece)
        return _mm256_loadu_ps(ggml_x_attn_v_piece(a, vrow, d0, s));
    }
    const int64_t left = a->Dv - d0;
    if (left >= 8) {
        return a->f16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) (vrow + d0 * 2)))
                      : _mm256_loadu_ps((const float *) vrow + d0);
    }
    float t[8] = { 0 };
    for (int64_t e = 0; e < left; e++) {
        t[e] = a->f16 ? GGML_FP16_TO_FP32(((const ggml_fp16_t *) vrow)[d0 + e]) : ((const float *) vrow)[d0 + e];
    }
    return _mm256_loadu_ps(t);
}

// outputs of heads j0 .. j0 + GP from V stored by cells (ggml_x_attn_masked_vrows), as
// attn_outputs_vrows of the AVX-512 kernel with pieces of 8 (pp: per block of 8 cells, 8 per head)
AX2_INLINE void attn2_outputs_vrows(const struct attn_masked_op * a, const char * vbase, const int32_t * idx,
                                    int64_t nv, const float * pp, int64_t Gr, int64_t j0, char * out, int64_t G,
                                    const struct attn_masked_scratch * s, const int GP) {
    const int64_t Dv = a->Dv, Dp = (Dv + 7) / 8 * 8;
    const size_t nb1 = a->v->nb[1];
    float * sums = s->acc;
    for (int64_t e = 0; e < GP * Dp; e += 8) {
        _mm256_storeu_ps(sums + e, _mm256_setzero_ps());
    }
    const int P = GP >= 2 ? 8 / GP : 4; // pieces per pass: GP * P <= 8 sums in registers
    for (int64_t c0 = 0; c0 < nv; c0 += 32) {
        const int64_t c1 = GGML_X_MIN(c0 + 32, nv);
        for (int64_t d0 = 0; d0 < Dv; d0 += 8 * P) {
            const int np = (int) GGML_X_MIN(P, (Dv - d0 + 7) / 8); // pieces in this pass
            __m256 acc[8];
#pragma GCC unroll 8
            for (int j = 0; j < GP; j++) {
#pragma GCC unroll 4
                for (int p = 0; p < P; p++) {
                    acc[j * P + p] = p < np ? _mm256_loadu_ps(sums + j * Dp + d0 + 8 * p) : _mm256_setzero_ps();
                }
            }
            for (int64_t i = c0; i < c1; i++) {
                const char * vrow = vbase + (size_t) idx[i] * nb1;
                __m256 vv[4];
#pragma GCC unroll 4
                for (int p = 0; p < P; p++) {
                    vv[p] = p < np ? attn2_vrow_piece(a, vrow, d0 + 8 * p, s) : _mm256_setzero_ps();
                }
                const float * pi = pp + (i & ~(int64_t) 7) * Gr + j0 * 8 + (i & 7);
#pragma GCC unroll 8
                for (int j = 0; j < GP; j++) {
                    const __m256 pj = _mm256_set1_ps(pi[j * 8]);
#pragma GCC unroll 4
                    for (int p = 0; p < P; p++) {
                        acc[j * P + p] = _mm256_fmadd_ps(pj, vv[p], acc[j * P + p]);
                    }
                }
            }
#pragma GCC unroll 8
            for (int j = 0; j < GP; j++) {
#pragma GCC unroll 4
                for (int p = 0; p < np && p < P; p++) {
                    _mm256_storeu_ps(sums + j * Dp + d0 + 8 * p, acc[j * P + p]);
                }
            }
        }
    }
    for (int j = 0; j < GP && j0 + j < G; j++) {
        memcpy(out + (j0 + j) * a->dst->nb[1], sums + j * Dp, (size_t) Dv * sizeof(float));
    }
}

AX2 void ggml_x_attn_masked_avx2(const struct attn_masked_op * a, int64_t n, int64_t hk, int64_t jb, int64_t G,
                                   int64_t nv,
                                 const struct attn_masked_scratch * s) {
    const struct ggml_tensor * q = a->q, * k = a->k, * v = a->v;
    const int64_t D = a->D, hb = hk * a->G + jb; // the task's first head
    const bool f16 = a->f16;
    const int64_t nvp = (nv + 7) / 8 * 8;
    int32_t * idx = s->idx;
    attn_pad_cells(idx, nv, nvp);

    // queries, a row per head (rounded to F16 for F16 keys)
    float * qf = s->qt;
    for (int64_t j = 0; j < G; j++) {
        const float * qrow = (const float *) ((const char *) q->data + (hb + j) * q->nb[1] + n * q->nb[2]);
        for (int64_t d = 0; d < D; d += 8) {
            const __m256 x = _mm256_loadu_ps(qrow + d);
            _mm256_store_ps(qf + j * D + d, a->kf16 ? attn2_round16(x) : x);
        }
    }

    // scores, 8 cells at a time (the K rows of the block after next prefetched)
    const char * kbase = (const char *) k->data + hk * k->nb[2];
    const size_t krow = a->krow;
    for (int64_t i0 = 0; i0 < nvp; i0 += 8) {
        if (i0 + 16 < nvp) {
            for (int c = 0; c < 8; c++) {
                const char * r = kbase + (size_t) idx[i0 + 16 + c] * k->nb[1];
                for (size_t o = 0; o < krow; o += 64) {
                    _mm_prefetch(r + o, _MM_HINT_T0);
                }
            }
        }
        attn2_scores8(a, kbase, idx + i0, qf, s, s->sc + i0, nvp, G);
    }
    attn_softcap_scores(a, G, s->sc, nv, nvp);

    // probabilities: per block of 8 cells, 8 per head for Gr heads (G rounded up to GP; zeros
    // after nv and for the heads added)
    const int GP = G >= 8 ? 8 : G > 2 ? 4 : (int) G;
    const int64_t Gr = (G + GP - 1) / GP * GP;
    float * pp = s->pt;
    for (int64_t j = 0; j < Gr; j++) {
        if (j >= G) {
            for (int64_t i = 0; i < nvp; i += 8) {
                _mm256_store_ps(pp + i * Gr + j * 8, _mm256_setzero_ps());
            }
            continue;
        }
        const __m256 inv = _mm256_set1_ps(attn_softmax_row(a->vk, nv, s->w, s->sc + j * nvp, a->scale, s->mval));
        for (int64_t i = nv; i < nvp; i++) {
            s->w[i] = 0.0f;
        }
        for (int64_t i = 0; i < nvp; i += 8) {
            const __m256 x = _mm256_mul_ps(_mm256_loadu_ps(s->w + i), inv);
            _mm256_store_ps(pp + i * Gr + j * 8, f16 ? attn2_round16(x) : x);
        }
    }

    // outputs
    const char * vbase = (const char *) v->data + hk * v->nb[2];
    char * out = (char *) a->dst->data + hb * a->dst->nb[1] + n * a->dst->nb[2];
    for (int64_t j0 = 0; j0 < G && a->vrows; j0 += GP) {
        switch (GP) {
        case 8:  attn2_outputs_vrows(a, vbase, idx, nv, pp, Gr, j0, out, G, s, 8); break;
        case 4:  attn2_outputs_vrows(a, vbase, idx, nv, pp, Gr, j0, out, G, s, 4); break;
        case 2:  attn2_outputs_vrows(a, vbase, idx, nv, pp, Gr, j0, out, G, s, 2); break;
        default: attn2_outputs_vrows(a, vbase, idx, nv, pp, Gr, j0, out, G, s, 1); break;
        }
    }
    for (int64_t j0 = 0; j0 < G && !a->vrows; j0 += GP) {
        switch (GP) {
        case 8:  attn2_outputs(a, vbase, idx, nv, nvp, pp, Gr, j0, out, G, 8); break;
        case 4:  attn2_outputs(a, vbase, idx, nv, nvp, pp, Gr, j0, out, G, 4); break;
        case 2:  attn2_outputs(a, vbase, idx, nv, nvp, pp, Gr, j0, out, G, 2); break;
        default: attn2_outputs(a, vbase, idx, nv, nvp, pp, Gr, j0, out, G, 1); break;
        }
    }
}

#endif
