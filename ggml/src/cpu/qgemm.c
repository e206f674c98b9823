// qgemm.c - int8 GEMM driver for Q4_0, Q8_0 and Q4_K weights: packing of W panels and X panels,
// and the loop over them (see gemm.h). The micro-kernels are in qgemm-avx2.c / qgemm-avx512.c.
//
// Packed layouts (R = rows per W panel, C = columns per X panel; "dword (g, r)" = 4 bytes for
// k = 4g..4g+3 of row r, so one vector of R dwords feeds vpdpbusd / vpmaddubsw for R rows):
//
//   Q4_0 / Q8_0 W, per 32-element block (36 R bytes):
//     [0, 32R)    dwords (g, r) for g = 0..7 at (g R + r) * 4, unsigned bytes: Q4_0 nibbles
//                 (0..15, the -8 goes to the X side), Q8_0 either signed (q8_signed) or + 128
//     [32R, 36R)  float scale of row r
//   Q4_K W, per 256-element super-block (312 R bytes):
//     [0, 256R)   dwords (sub-block j, group g, r) at ((8 j + g) R + r) * 4, nibbles 0..15
//     [256R, 288R) int32 (j, r): the 6-bit scale s in both 16-bit halves (s | s << 16)
//     [288R, 304R) int32 (p, r): the mins of sub-blocks 2p and 2p+1 as two int16
//     [304R, 308R) float d, [308R, 312R) float dmin
//   q8_0 X, per block (40 C bytes): [0, 32C) the 32 int8 of column c at 32 c; [32C, 36C) float
//     scale; [36C, 40C) int32 offset correction -off * sum(q) (off: 8 for Q4_0, 128 for
//     unsigned Q8_0, 0 for signed Q8_0), the initial value of the block's integer sum
//   q8_K X, per super-block (276 C bytes): [0, 256C) the int8 of column c at 256 c;
//     [256C, 260C) float scale; [260C, 276C) int32 (c, p): sums of sub-blocks 2p, 2p+1 (int16 each)
//
// Every result element is computed from the same integer block sums combined in block order,
// whatever the tiling and thread count.

#include "cpu/gemm.h"
#include "ggml-quants.h"

static int64_t q_blk(enum ggml_type t) {
    return t == GGML_TYPE_Q4_K ? QK_K : QK8_0;
}

static size_t q_wblk(enum ggml_type t, int r) {
    return (size_t) (t == GGML_TYPE_Q4_K ? 312 : 36) * (size_t) r;
}

static size_t q_xblk(enum ggml_type t, int c) {
    return (size_t) (t == GGML_TYPE_Q4_K ? 276 : 40) * (size_t) c;
}

bool ggml_x_qgemm_supported(enum ggml_type wtype) {
    const struct ggml_x_gemm_kernels * k = ggml_x_gemm_kernels_active();
    switch (wtype) {
        case GGML_TYPE_Q4_0: return k->qmicro_q4_0 != NULL;
        case GGML_TYPE_Q8_0: return k->qmicro_q8_0 != NULL;
        case GGML_TYPE_Q4_K: return k->qmicro_q4_K != NULL;
        default:             return false;
    }
}

size_t ggml_x_qgemm_xpack_size(enum ggml_type wtype, int64_t n, int64_t k) {
    const int c = ggml_x_gemm_kernels_active()->qc;
    const int64_t np = (n + c - 1) / c;
    return (size_t) (np * (k / q_blk(wtype))) * q_xblk(wtype, c);
}

size_t ggml_x_qgemm_thread_size(enum ggml_type wtype, int64_t k) {
    const int r = ggml_x_gemm_kernels_active()->qr;
    return (size_t) (k / q_blk(wtype)) * q_wblk(wtype, r);
}

static inline void q_put32(uint8_t * p, uint32_t v) {
    memcpy(p, &v, sizeof(v));
}

void ggml_x_qgemm_pack_x(enum ggml_type wtype, const void * q8row, int64_t j, int64_t k, void * xp) {
    const struct ggml_x_gemm_kernels * kr = ggml_x_gemm_kernels_active();
    const int C = kr->qc;
    const int64_t nblk = k / q_blk(wtype);
    const size_t xb = q_xblk(wtype, C);
    const int c = (int) (j % C);
    uint8_t * base = (uint8_t *) xp + (size_t) (j / C) * (size_t) nblk * xb;
    if (wtype == GGML_TYPE_Q4_K) {
        const block_q8_K * y = (const block_q8_K *) q8row;
        for (int64_t b = 0; b < nblk; b++) {
            uint8_t * blk = base + (size_t) b * xb;
            memcpy(blk + 256*c, y[b].qs, 256);
            memcpy(blk + 256*C + 4*c, &y[b].d, sizeof(float));
            for (int p = 0; p < 4; p++) {
                const int s0 = y[b].bsums[4*p]     + y[b].bsums[4*p + 1];
                const int s1 = y[b].bsums[4*p + 2] + y[b].bsums[4*p + 3];
                q_put32(blk + 260*C + 4*(4*c + p), (uint32_t) (uint16_t) s0 | (uint32_t) (uint16_t) s1 << 16);
            }
        }
        return;
    }
    const int off = wtype == GGML_TYPE_Q4_0 ? 8 : (kr->q8_signed ? 0 : 128);
    const block_q8_0 * y = (const block_q8_0 *) q8row;
    for (int64_t b = 0; b < nblk; b++) {
        uint8_t * blk = base + (size_t) b * xb;
        memcpy(blk + 32*c, y[b].qs, 32);
        const float d = GGML_FP16_TO_FP32(y[b].d);
        memcpy(blk + 32*C + 4*c, &d, sizeof(float));
        int sum = 0;
        for (int i = 0; i < 32; i++) {
            sum += y[b].qs[i];
        }
        const int32_t corr = -off * sum;
        memcpy(blk + 36*C + 4*c, &corr, sizeof(corr));
    }
}

// 8 little-endian bytes -> their low / high nibbles as 8 bytes each
static inline void q_nibbles(const uint8_t * q, uint64_t * lo, uint64_t * hi) {
    uint64_t v;
    memcpy(&v, q, sizeof(v));
    *lo = v & 0x0f0f0f0f0f0f0f0full;
    *hi = (v >> 4) & 0x0f0f0f0f0f0f0f0full;
}

// the two dwords of a 64-bit value to dword slots (g, r) and (g + 1, r)
static inline void q_put2(uint8_t * q, int R, int g, int r, uint64_t v) {
    q_put32(q + 4*(g*R + r), (uint32_t) v);
    q_put32(q + 4*((g + 1)*R + r), (uint32_t) (v >> 32));
}

// Packs rows [0, n_rows) of W (row stride nb1) into one panel of R rows; the other rows are zero.
static void q_pack_w(enum ggml_type wtype, const char * w, size_t nb1, int n_rows, int64_t nblk,
                     int R, bool q8_signed, uint8_t * out) {
    const size_t wb = q_wblk(wtype, R);
    if (n_rows < R) {
        memset(out, 0, (size_t) nblk * wb);
    }
    for (int r = 0; r < n_rows; r++) {
        const char * row = w + (size_t) r * nb1;
        if (wtype == GGML_TYPE_Q4_0) {
            const block_q4_0 * x = (const block_q4_0 *) row;
            for (int64_t b = 0; b < nblk; b++) {
                uint8_t * blk = out + (size_t) b * wb;
                uint64_t lo0, hi0, lo1, hi1;
                q_nibbles(x[b].qs, &lo0, &hi0);
                q_nibbles(x[b].qs + 8, &lo1, &hi1);
                q_put2(blk, R, 0, r, lo0);
                q_put2(blk, R, 2, r, lo1);
                q_put2(blk, R, 4, r, hi0);
                q_put2(blk, R, 6, r, hi1);
                const float d = GGML_FP16_TO_FP32(x[b].d);
                memcpy(blk + 32*R + 4*r, &d, sizeof(float));
            }
        } else if (wtype == GGML_TYPE_Q8_0) {
            const block_q8_0 * x = (const block_q8_0 *) row;
            const uint64_t flip = q8_signed ? 0 : 0x8080808080808080ull;
            for (int64_t b = 0; b < nblk; b++) {
                uint8_t * blk = out + (size_t) b * wb;
                for (int g = 0; g < 8; g += 2) {
                    uint64_t v;
                    memcpy(&v, x[b].qs + 4*g, sizeof(v));
                    q_put2(blk, R, g, r, v ^ flip);
                }
                const float d = GGML_FP16_TO_FP32(x[b].d);
                memcpy(blk + 32*R + 4*r, &d, sizeof(float));
            }
        } else {
            const block_q4_K * x = (const block_q4_K *) row;
            for (int64_t b = 0; b < nblk; b++) {
                uint8_t * blk = out + (size_t) b * wb;
                for (int ch = 0; ch < 4; ch++) {
                    // sub-block 2 ch: low nibbles of qs[32 ch ..], 2 ch + 1: high nibbles
                    for (int h = 0; h < 4; h++) {
                        uint64_t lo, hi;
                        q_nibbles(x[b].qs + 32*ch + 8*h, &lo, &hi);
                        q_put2(blk, R, 8*(2*ch) + 2*h, r, lo);
                        q_put2(blk, R, 8*(2*ch + 1) + 2*h, r, hi);
                    }
                }
                uint8_t sc[8], mn[8];
                for (int jj = 0; jj < 8; jj++) {
                    ggml_x_get_scale_min_k4(jj, x[b].scales, &sc[jj], &mn[jj]);
                    q_put32(blk + 256*R + 4*(jj*R + r), (uint32_t) sc[jj] | (uint32_t) sc[jj] << 16);
                }
                for (int p = 0; p < 4; p++) {
                    q_put32(blk + 288*R + 4*(p*R + r), (uint32_t) mn[2*p] | (uint32_t) mn[2*p + 1] << 16);
                }
                const float d = GGML_FP16_TO_FP32(x[b].d), dmin = GGML_FP16_TO_FP32(x[b].dmin);
                memcpy(blk + 304*R + 4*r, &d, sizeof(float));
                memcpy(blk + 308*R + 4*r, &dmin, sizeof(float));
            }
        }
    }
}

void ggml_x_qgemm_compute(enum ggml_type wtype, const void * w, size_t w_nb1, int64_t i0, int64_t i1,
                          int64_t n, int64_t k, const void * xp, float * d, int64_t ldd, void * scratch) {
    const struct ggml_x_gemm_kernels * kr = ggml_x_gemm_kernels_active();
    const int R = kr->qr, C = kr->qc;
    const int64_t nblk = k / q_blk(wtype);
    const size_t xpanel = (size_t) nblk * q_xblk(wtype, C);
    void (*micro)(int, const void *, const void *, float *, int64_t, int, int) =
        wtype == GGML_TYPE_Q4_0 ? kr->qmicro_q4_0 : wtype == GGML_TYPE_Q8_0 ? kr->qmicro_q8_0 : kr->qmicro_q4_K;
    uint8_t * wp = (uint8_t *) scratch;

    for (int64_t ir = i0; ir < i1; ir += R) {
        const int rows = (int) GGML_X_MIN((int64_t) R, i1 - ir);
        const char * wr = (const char *) w + (size_t) ir * w_nb1;
        if (rows < R || kr->qpack_w == NULL || !kr->qpack_w(wtype, wr, w_nb1, nblk, wp)) {
            q_pack_w(wtype, wr, w_nb1, rows, nblk, R, kr->q8_signed, wp);
        }
        for (int64_t jc = 0; jc < n; jc += C) {
            const int ncols = (int) GGML_X_MIN((int64_t) C, n - jc);
            micro((int) nblk, wp, (const uint8_t *) xp + (size_t) (jc / C) * xpanel, d + jc*ldd + ir, ldd, ncols, rows);
        }
    }
}
