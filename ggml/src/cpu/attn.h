// attn.h - what the masked attention kernels share (internal): the operands of one
// ggml_x_attn_masked node (ops-flash-attn.c), the per-thread scratch, and the SIMD kernels
// (attn-avx512.c, attn-avx2.c).

#ifndef GGML_X_ATTN_H
#define GGML_X_ATTN_H

#include "../ggml-impl.h"
#include "../ggml-quants.h"
#include "vec.h"

#include <math.h>

// cells (and heads) the scratch arrays are padded to: the AVX-512 kernel works on 16 at a time
#define ATTN_PAD 16

// the operands and parameters of one node, read once per thread (attn_masked_forward)
struct attn_masked_op {
    const struct ggml_tensor * dst;
    const struct ggml_tensor * q;    // [D, H, N]
    const struct ggml_tensor * k;    // [D, M, Hk]: F32, F16 or quantized
    const struct ggml_tensor * v;    // [M, Dv, Hk] (transposed): F32 or F16; vrows: [Dv, M, Hk], any type k may have
    const struct ggml_tensor * mask; // [M, N]
    float scale, softcap;
    bool kf16;                       // K is F16 (q rounded to F16, as MUL_MAT with F16 weights)
    bool kquant;                     // K is quantized: its rows are decoded to F32 (attn_k_row)
    bool kq8;                        // K is Q8_0 (decoded inline by the SIMD kernels)
    bool kq4;                        // K is Q4_0 (decoded inline by the SIMD kernels)
    bool f16;                        // V is F16 (p rounded to F16)
    bool vrows;                      // V is stored by cells (ggml_x_attn_masked_vrows)
    bool vquant, vq8;                // (vrows) V is quantized; V is Q8_0
    size_t krow, vrow;               // bytes of one K row of D values; (vrows) of one V row of Dv
    int64_t D, Dv, G;                // head sizes, query heads per KV head
    const struct ggml_x_vec_kernels * vk;
};

// per thread; Gp = G rounded up to 8, or above 8 to a multiple of 16
struct attn_masked_scratch {
    int32_t * idx;  // [M + 16] visible cells (padded with the last one)
    float *   mval; // [M] their mask values
    float *   sc;   // [G][M + 16] scores, then probabilities
    float *   w;    // [M + 16] softmax row
    float *   pt;   // [M + 16][Gp] probabilities (scalar: interleaved; SIMD: per block of cells)
    float *   qt;   // [D][G] queries (scalar: interleaved; SIMD: a row per head)
    float *   acc;  // [Dv][G] outputs, interleaved (scalar); SIMD, V by cells: [GP][Dv] partial sums
    float *   kf;   // [16][D] K rows as F32 (SIMD: by pieces, one pointer for a block of cells)
    float *   kr;   // [D] one quantized K row decoded
    float *   vr;   // [max(Dv, 256)] (vrows) a V row or one block of it decoded
};

// the D values of the quantized K row at krow decoded into s->kr
const float * ggml_x_attn_k_decode(const struct attn_masked_op * a, const char * krow, const struct attn_masked_scratch * s);

// the K row at krow as values the kernels load: itself (F32 or F16), or for a quantized K its
// values decoded (then read as F32)
static inline const char * attn_k_row(const struct attn_masked_op * a, const char * krow,
                                      const struct attn_masked_scratch * s) {
    return a->kquant ? (const char *) ggml_x_attn_k_decode(a, krow, s) : krow;
}

// (vrows, V quantized) values d0 .. d0 + n of the V row at vrow (n <= 16 within one block):
// the block holding them decoded into s->vr, and a pointer to them there
const float * ggml_x_attn_v_piece(const struct attn_masked_op * a, const char * vrow, int64_t d0,
                                  const struct attn_masked_scratch * s);

// the softmax of the nv scores sc (scaled, plus the mask values mval) into w, as SOFT_MAX
// computes a dense row; returns 1/sum
static inline float attn_softmax_row(const struct ggml_x_vec_kernels * vk, int64_t nv, float * w, const float * sc,
                                     float scale, const float * mval) {
    const float mx = vk->scale_mask_max(nv, w, sc, scale, mval);
    const double sum = vk->exp_sum(nv, w, mx);
    return (float) (1.0 / sum);
}

// the SIMD kernels' first steps: idx padded to nvp cells with the last one; the scores of G heads
// (rows of stride nvp) soft-capped when the node asks for it
static inline void attn_pad_cells(int32_t * idx, int64_t nv, int64_t nvp) {
    for (int64_t i = nv; i < nvp; i++) {
        idx[i] = idx[nv - 1];
    }
}

static inline void attn_softcap_scores(const struct attn_masked_op * a, int64_t G, float * sc, int64_t nv, int64_t nvp) {
    if (a->softcap > 0) {
        for (int64_t j = 0; j < G; j++) {
            a->vk->softcap(nv, sc + j * nvp, sc + j * nvp, a->softcap);
        }
    }
}

// dst of the G heads jb .. jb + G of KV head hk (of a->G) for token n over the nv cells idx
// (nv >= 1), with AVX-512 (D a multiple of 16) or AVX2 (D a multiple of 8)
void ggml_x_attn_masked_avx512(const struct attn_masked_op * a, int64_t n, int64_t hk, int64_t jb, int64_t G,
                               int64_t nv, const struct attn_masked_scratch * s);
void ggml_x_attn_masked_avx2(const struct attn_masked_op * a, int64_t n, int64_t hk, int64_t jb, int64_t G,
                             int64_t nv, const struct attn_masked_scratch * s);

#endif // GGML_X_ATTN_H
