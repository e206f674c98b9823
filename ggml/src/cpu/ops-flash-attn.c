// ops-flash-attn.c - FLASH_ATTN and FLASH_ATTN_BACK (F32).
//
// q [D, N, H, B], k [D, M, Hk, B], v [M, D, Hk, B] (v transposed); query head h uses key/value head
// h % Hk. For query n of head h: s_m = scale * k_m . q_n with scale = 1/sqrt(D); masked (i32[0]):
// keys m > M - N + n get s_m = -inf; p = softmax(s); out_n[d] = sum_m v[m, d] * p_m.
//
// FLASH_ATTN_BACK (src3 = dout, q's shape) writes dq, dk, dv one after the other, each dense in
// the shape of q, k, v. With ds_m = p_m * (dp_m - sum_j p_j dp_j), dp_m = dout_n . v[m, :]:
//   dq_n += scale * sum_m ds_m k_m,  dk_m += scale * ds_m q_n,  dv[m, :] += p_m dout_n.
// Each thread owns whole key/value heads (and the query heads that read them), so no two threads
// write the same gradient element. Softmax and dot products are evaluated in double.

#include "../ggml-impl.h"
#include "attn.h"
#include "rowconv.h"
#include "vec.h"

#include <math.h>

// ggml_x_attn_masked (op_params i32[1] = 1) is at the end of the file; the FLASH_ATTN entry
// points dispatch to it.
static bool attn_masked_supports(const struct ggml_tensor * dst);
static size_t attn_masked_work_size(const struct ggml_tensor * dst, int n_threads);
static void attn_masked_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst);

static inline bool attn_is_masked_ext(const struct ggml_tensor * dst) {
    return ggml_x_get_op_params_i32(dst, 1) == 1;
}

static bool attn_plain_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * q = dst->src[0];
    const struct ggml_tensor * k = dst->src[1];
    const struct ggml_tensor * v = dst->src[2];
    return q != NULL && k != NULL && v != NULL && q->type == GGML_TYPE_F32 && k->type == GGML_TYPE_F32 &&
           v->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && k->ne[0] == q->ne[0] && v->ne[1] == q->ne[0] &&
           v->ne[0] == k->ne[1] && v->ne[2] == k->ne[2] && k->ne[2] > 0 && q->ne[2] % k->ne[2] == 0 &&
           k->ne[3] == q->ne[3] && v->ne[3] == q->ne[3];
}

static bool attn_supports(const struct ggml_tensor * dst) {
    return attn_is_masked_ext(dst) ? attn_masked_supports(dst) : attn_plain_supports(dst);
}

static size_t attn_work_size(const struct ggml_tensor * dst, int n_threads) {
    if (attn_is_masked_ext(dst)) {
        return attn_masked_work_size(dst, n_threads);
    }
    const int64_t M = dst->src[1]->ne[1];
    return 64 + (size_t) n_threads * (size_t) (2 * M + 8) * sizeof(double);
}

static double * attn_scratch(const struct ggml_cpu_ctx * cc, int64_t M) {
    double * base = (double *) (((uintptr_t) cc->wdata + 63) & ~(uintptr_t) 63);
    return base + (size_t) cc->ith * (size_t) (2 * M + 8);
}

#define AT(t, i0, i1, i2, i3) \
    (*(float *) ((char *) (t)->data + (i0) * (t)->nb[0] + (i1) * (t)->nb[1] + (i2) * (t)->nb[2] + (i3) * (t)->nb[3]))

// p[0..M) = softmax over the keys for query n of head h in batch b
static void attn_probs(const struct ggml_tensor * q, const struct ggml_tensor * k, bool masked, int64_t n,
                       int64_t h, int64_t b, double * p) {
    const int64_t D = q->ne[0], N = q->ne[1], M = k->ne[1];
    const int64_t hk = h % k->ne[2];
    const double scale = 1.0 / sqrt((double) D);
    double mx = -INFINITY;
    for (int64_t m = 0; m < M; m++) {
        if (masked && m > M - N + n) {
            p[m] = -INFINITY;
            continue;
        }
        double s = 0.0;
        for (int64_t d = 0; d < D; d++) {
            s += (double) AT(k, d, m, hk, b) * (double) AT(q, d, n, h, b);
        }
        p[m] = s * scale;
        mx = p[m] > mx ? p[m] : mx;
    }
    double sum = 0.0;
    for (int64_t m = 0; m < M; m++) {
        p[m] = p[m] == -INFINITY ? 0.0 : exp(p[m] - mx);
        sum += p[m];
    }
    for (int64_t m = 0; m < M; m++) {
        p[m] = sum > 0.0 ? p[m] / sum : 0.0;
    }
}

static void flash_attn_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    if (attn_is_masked_ext(dst)) {
        attn_masked_forward(cc, dst);
        return;
    }
    const struct ggml_tensor * q = dst->src[0];
    const struct ggml_tensor * k = dst->src[1];
    const struct ggml_tensor * v = dst->src[2];
    const bool masked = ggml_x_get_op_params_i32(dst, 0) != 0;
    const int64_t D = q->ne[0], N = q->ne[1], H = q->ne[2], M = k->ne[1];
    double * p = attn_scratch(cc, M);
    int64_t ir0, ir1;
    rowconv_split(N * H * q->ne[3], cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t n, h, b;
        rowconv_unravel(ir, N, H, &n, &h, &b);
        attn_probs(q, k, masked, n, h, b, p);
        const int64_t hk = h % k->ne[2];
        for (int64_t d = 0; d < D; d++) {
            double o = 0.0;
            for (int64_t m = 0; m < M; m++) {
                o += (double) AT(v, m, d, hk, b) * p[m];
            }
            AT(dst, d, n, h, b) = (float) o;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_flash_attn = {
    .forward   = flash_attn_forward,
    .supports  = attn_supports,
    .work_size = attn_work_size,
};

static bool attn_back_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * q = dst->src[0];
    const struct ggml_tensor * d = dst->src[3];
    return !attn_is_masked_ext(dst) && attn_plain_supports(dst) && d != NULL && d->type == GGML_TYPE_F32 && ggml_are_same_shape(q, d) &&
           ggml_is_contiguous(dst) &&
           ggml_nelements(dst) == ggml_nelements(q) + ggml_nelements(dst->src[1]) + ggml_nelements(dst->src[2]);
}

static void flash_attn_back_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * q = dst->src[0];
    const struct ggml_tensor * k = dst->src[1];
    const struct ggml_tensor * v = dst->src[2];
    const struct ggml_tensor * dout = dst->src[3];
    const bool masked = ggml_x_get_op_params_i32(dst, 0) != 0;
    const int64_t D = q->ne[0], N = q->ne[1], H = q->ne[2], B = q->ne[3], M = k->ne[1], Hk = k->ne[2];
    const double scale = 1.0 / sqrt((double) D);
    float * dq = (float *) dst->data;
    float * dk = dq + ggml_nelements(q);
    float * dv = dk + ggml_nelements(k);
    double * p = attn_scratch(cc, M);
    double * dp = p + M;

    // dense indices
#define DQ(d, n, h, b)  dq[(((b) * H + (h)) * N + (n)) * D + (d)]
#define DK(d, m, h, b)  dk[(((b) * Hk + (h)) * M + (m)) * D + (d)]
#define DV(m, d, h, b)  dv[(((b) * Hk + (h)) * D + (d)) * M + (m)]

    int64_t g0, g1;
    rowconv_split(Hk * B, cc->ith, cc->nth, &g0, &g1);
    for (int64_t g = g0; g < g1; g++) {
        const int64_t hk = g % Hk, b = g / Hk;
        memset(&DK(0, 0, hk, b), 0, (size_t) (D * M) * sizeof(float));
        memset(&DV(0, 0, hk, b), 0, (size_t) (D * M) * sizeof(float));
        for (int64_t h = hk; h < H; h += Hk) {
            for (int64_t n = 0; n < N; n++) {
                attn_probs(q, k, masked, n, h, b, p);
                double pdp = 0.0;
                for (int64_t m = 0; m < M; m++) {
                    double s = 0.0;
                    for (int64_t d = 0; d < D; d++) {
                        s += (double) AT(dout, d, n, h, b) * (double) AT(v, m, d, hk, b);
                    }
                    dp[m] = s;
                    pdp += p[m] * s;
                }
                for (int64_t d = 0; d < D; d++) {
                    DQ(d, n, h, b) = 0.0f;
                }
                for (int64_t m = 0; m < M; m++) {
                    const double ds = p[m] * (dp[m] - pdp) * scale;
                    for (int64_t d = 0; d < D; d++) {
                        DQ(d, n, h, b) += (float) (ds * (double) AT(k, d, m, hk, b));
                        DK(d, m, hk, b) += (float) (ds * (double) AT(q, d, n, h, b));
                        DV(m, d, hk, b) += (float) (p[m] * (double) AT(dout, d, n, h, b));
                    }
                }
            }
        }
    }
#undef DQ
#undef DK
#undef DV
}

const struct ggml_cpu_op ggml_cpu_op_flash_attn_back = {
    .forward   = flash_attn_back_forward,
    .supports  = attn_back_supports,
    .work_size = attn_work_size,
};

// ---------------------------------------------------------------------------------------------
// ggml_x_attn_masked: q [D, H, N] F32, k [D, M, Hk] (F32, F16 or quantized: a quantized KV
// cache's keys, decoded row by row), v [M, Dv, Hk] (F16 or F32; op_params i32[4] = 1: [Dv, M,
// Hk], a row per cell, of any type k may have: ggml_x_attn_masked_vrows), mask F32
// [>= M, >= N], f32[2] = scale, f32[3] = softcap; dst [Dv, H, N] F32. Query head h reads KV
// head h / G, G = H / Hk. One task is a (token, KV head) pair: it lists the cells the token's
// mask row lets through, scores them for the G query heads that share the KV head (each K row
// converted once), takes the softmax of each head's scores with the row kernels of SOFT_MAX
// (vec.h: the same fp16 exp), then sums the V columns of the listed cells weighted by the
// probabilities. As MUL_MAT with F16 weights does, q is rounded to F16 when k is F16, and p
// when v is. The SIMD kernels (attn-avx512.c, attn-avx2.c) put cells in the lanes
// and keep 16 or 8 independent accumulators per loop; the scalar one below interleaves the
// per-head values (G per element) so that its inner loops run over the G heads.

// heads the probabilities are stored for: the SIMD kernels round G up to 8 or to 16 per pass
static int64_t attn_heads_padded(int64_t G) {
    return G <= 8 ? 8 : (G + 15) / 16 * 16;
}

static size_t attn_masked_floats(int64_t M, int64_t G, int64_t D, int64_t Dv) {
    const int64_t Gp = attn_heads_padded(G);
    const int64_t n = (M + ATTN_PAD) * (2 + G + Gp) + M + D * G + (Dv + 16) * Gp + ATTN_PAD * D + D + GGML_X_MAX(Dv, 256);
    return (size_t) ((n + 16 * 10 + 15) / 16 * 16); // each array rounded up to a cache line below
}

static struct attn_masked_scratch attn_masked_carve(const struct ggml_cpu_ctx * cc, int64_t M, int64_t G,
                                                    int64_t D, int64_t Dv) {
    const int64_t Gp = attn_heads_padded(G);
    float * base = (float *) (((uintptr_t) cc->wdata + 63) & ~(uintptr_t) 63);
    float * p = base + (size_t) cc->ith * attn_masked_floats(M, G, D, Dv);
#define CARVE(n) (p += ((n) + 15) / 16 * 16, p - ((n) + 15) / 16 * 16)
    // (attn_masked_floats counts the same arrays, plus slack)
    struct attn_masked_scratch s;
    s.idx  = (int32_t *) CARVE(M + ATTN_PAD);
    s.mval = CARVE(M);
    s.sc   = CARVE(G * (M + ATTN_PAD));
    s.w    = CARVE(M + ATTN_PAD);
    s.pt   = CARVE((M + ATTN_PAD) * Gp);
    s.qt   = CARVE(D * G);
    s.acc  = CARVE((Dv + 16) * Gp);
    s.kf   = CARVE(ATTN_PAD * D);
    s.kr   = CARVE(D);
    s.vr   = CARVE(GGML_X_MAX(Dv, 256));
#undef CARVE
    return s;
}

// is V stored by cells (ggml_x_attn_masked_vrows)?
static inline bool attn_v_rows(const struct ggml_tensor * dst) {
    return ggml_x_get_op_params_i32(dst, 4) != 0;
}

// rows of t the node reads: F32, F16 or quantized whole blocks, dense
static bool attn_operand_ok(const struct ggml_tensor * t) {
    if (t->type == GGML_TYPE_F16 || t->type == GGML_TYPE_F32) {
        return true;
    }
    return rowconv_is_quant(t->type) && rowconv_can_load(t->type, t->nb[0]) && t->ne[0] % rowconv_blck(t->type) == 0;
}

static bool attn_masked_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * q = dst->src[0];
    const struct ggml_tensor * k = dst->src[1];
    const struct ggml_tensor * v = dst->src[2];
    const struct ggml_tensor * mask = dst->src[3];
    if (q == NULL || k == NULL || v == NULL || mask == NULL) {
        return false;
    }
    const bool vrows = attn_v_rows(dst);
    if (q->type != GGML_TYPE_F32 || mask->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32 ||
        !attn_operand_ok(k) || !(vrows ? attn_operand_ok(v) : v->type == GGML_TYPE_F16 || v->type == GGML_TYPE_F32)) {
        return false;
    }
    const int64_t vcells = vrows ? v->ne[1] : v->ne[0], Dv = vrows ? v->ne[0] : v->ne[1];
    return k->nb[0] == ggml_type_size(k->type) && v->nb[0] == ggml_type_size(v->type) &&
           mask->nb[0] == sizeof(float) && q->nb[0] == sizeof(float) &&
           ggml_is_contiguous(dst) && k->ne[0] == q->ne[0] && k->ne[2] > 0 && q->ne[1] % k->ne[2] == 0 &&
           vcells == k->ne[1] && v->ne[2] == k->ne[2] && mask->ne[0] >= k->ne[1] && mask->ne[1] >= q->ne[2] &&
           dst->ne[0] == Dv && dst->ne[1] == q->ne[1] && dst->ne[2] == q->ne[2] && dst->ne[3] == 1 &&
           q->ne[3] == 1 && k->ne[3] == 1 && v->ne[3] == 1;
}

static size_t attn_masked_work_size(const struct ggml_tensor * dst, int n_threads) {
    const struct ggml_tensor * q = dst->src[0];
    const struct ggml_tensor * k = dst->src[1];
    const struct ggml_tensor * v = dst->src[2];
    const int64_t G = q->ne[1] / k->ne[2];
    const int64_t Dv = attn_v_rows(dst) ? v->ne[0] : v->ne[1];
    return 64 + (size_t) n_threads * attn_masked_floats(k->ne[1], G, k->ne[0], Dv) * sizeof(float);
}

static inline float attn_load(bool f16, const char * p) {
    return f16 ? GGML_FP16_TO_FP32(*(const ggml_fp16_t *) p) : *(const float *) p;
}

static inline float attn_round(bool f16, float x) {
    return f16 ? GGML_FP16_TO_FP32(GGML_FP32_TO_FP16(x)) : x;
}

// y[j] += a * x[j] for j < G
static inline void attn_axpy(int64_t G, float * restrict y, float a, const float * restrict x) {
    if (G == 8) {
        for (int j = 0; j < 8; j++) {
            y[j] += a * x[j];
        }
        return;
    }
    for (int64_t j = 0; j < G; j++) {
        y[j] += a * x[j];
    }
}

const float * ggml_x_attn_k_decode(const struct attn_masked_op * a, const char * krow, const struct attn_masked_scratch * s) {
    rowconv_load(s->kr, krow, a->k->nb[0], a->k->type, a->D);
    return s->kr;
}

const float * ggml_x_attn_v_piece(const struct attn_masked_op * a, const char * vrow, int64_t d0,
                                  const struct attn_masked_scratch * s) {
    const int64_t bs = rowconv_blck(a->v->type), b = d0 / bs;
    rowconv_load(s->vr, vrow + (size_t) b * ggml_type_size(a->v->type), a->v->nb[0], a->v->type, bs);
    return s->vr + (d0 - b * bs);
}

// dst of every head of KV head hk for token n over the nv cells idx, without SIMD
static void attn_masked_heads_scalar(const struct attn_masked_op * a, int64_t n, int64_t hk, int64_t nv,
                                     const struct attn_masked_scratch * s) {
    const struct ggml_tensor * dst = a->dst, * q = a->q, * k = a->k, * v = a->v;
    const float scale = a->scale, softcap = a->softcap;
    const bool f16 = a->f16, kf16 = a->kf16;
    const int64_t D = a->D, Dv = a->Dv, G = a->G;
    const struct ggml_x_vec_kernels * vk = a->vk;
    float * out = (float *) ((char *) dst->data + hk * G * dst->nb[1] + n * dst->nb[2]);

    // queries of the G heads, interleaved
    for (int64_t j = 0; j < G; j++) {
        const char * qrow = (const char *) q->data + (hk * G + j) * q->nb[1] + n * q->nb[2];
        for (int64_t d = 0; d < D; d++) {
            s->qt[d * G + j] = attn_round(kf16, *(const float *) (qrow + d * q->nb[0]));
        }
    }

    // scores
    const char * kbase = (const char *) k->data + hk * k->nb[2];
    for (int64_t i = 0; i < nv; i++) {
        const char * krow = attn_k_row(a, kbase + s->idx[i] * k->nb[1], s);
        const float * kf;
        if (kf16) {
            ggml_fp16_to_fp32_row((const ggml_fp16_t *) krow, s->kf, (int) D);
            kf = s->kf;
        } else {
            kf = (const float *) krow;
        }
        float * acc = s->acc; // free until the V sum
        memset(acc, 0, (size_t) G * sizeof(float));
        for (int64_t d = 0; d < D; d++) {
            attn_axpy(G, acc, kf[d], s->qt + d * G);
        }
        for (int64_t j = 0; j < G; j++) {
            float x = acc[j];
            if (softcap > 0) {
                x = softcap * tanhf(x / softcap);
            }
            s->sc[j * nv + i] = x;
        }
    }

    // softmax per head
    for (int64_t j = 0; j < G; j++) {
        const float inv = attn_softmax_row(vk, nv, s->w, s->sc + j * nv, scale, s->mval);
        for (int64_t i = 0; i < nv; i++) {
            s->pt[i * G + j] = attn_round(f16, s->w[i] * inv);
        }
    }

    // weighted sum of the V columns (or of the cells' V rows)
    const char * vbase = (const char *) v->data + hk * v->nb[2];
    memset(s->acc, 0, (size_t) (Dv * G) * sizeof(float));
    for (int64_t i = 0; i < nv && a->vrows; i++) {
        const char * vrow = vbase + (size_t) s->idx[i] * v->nb[1];
        const float * vf = (const float *) vrow;
        if (a->f16) {
            ggml_fp16_to_fp32_row((const ggml_fp16_t *) vrow, s->vr, (int) Dv);
            vf = s->vr;
        } else if (a->vquant) {
            rowconv_load(s->vr, vrow, v->nb[0], v->type, Dv);
            vf = s->vr;
        }
        for (int64_t d = 0; d < Dv; d++) {
            attn_axpy(G, s->acc + d * G, vf[d], s->pt + i * G);
        }
    }
    for (int64_t d = 0; d < Dv && !a->vrows; d++) {
        const char * vrow = vbase + d * v->nb[1];
        float * acc = s->acc + d * G;
        for (int64_t i = 0; i < nv; i++) {
            attn_axpy(G, acc, attn_load(f16, vrow + (size_t) s->idx[i] * ggml_type_size(v->type)), s->pt + i * G);
        }
    }
    for (int64_t j = 0; j < G; j++) {
        float * o = (float *) ((char *) out + j * dst->nb[1]);
        for (int64_t d = 0; d < Dv; d++) {
            o[d] = s->acc[d * G + j];
        }
    }
}

// the SIMD kernel of this machine for the node's head size; NULL: the scalar one
typedef void (*attn_simd_kernel_t)(const struct attn_masked_op * a, int64_t n, int64_t hk, int64_t jb, int64_t G,
                                   int64_t nv, const struct attn_masked_scratch * s);

static attn_simd_kernel_t attn_simd_kernel(int64_t D) {
#if defined(__x86_64__)
    const enum ggml_x_cpu_level level = ggml_x_cpu_level();
    if (level >= GGML_X_CPU_AVX512 && level < GGML_X_CPU_NEON && D % 16 == 0) {
        return ggml_x_attn_masked_avx512;
    }
    if (level >= GGML_X_CPU_AVX2 && level < GGML_X_CPU_NEON && D % 8 == 0) {
        return ggml_x_attn_masked_avx2;
    }
#endif
    GGML_UNUSED(D);
    return NULL;
}

// heads jb .. jb + G of KV head hk (all a->G of them without a SIMD kernel) for token n
static void attn_masked_task(const struct attn_masked_op * a, attn_simd_kernel_t simd, int64_t n, int64_t hk,
                             int64_t jb, int64_t G, const struct attn_masked_scratch * s) {
    const struct ggml_tensor * dst = a->dst, * k = a->k, * v = a->v, * mask = a->mask;
    const int64_t M = k->ne[1], Dv = a->Dv;

    // the cells the token sees
    const float * mrow = (const float *) ((const char *) mask->data + n * mask->nb[1]);
    int64_t nv = 0;
    for (int64_t m = 0; m < M; m++) {
        if (mrow[m] != -INFINITY) {
            s->idx[nv] = (int32_t) m;
            s->mval[nv] = mrow[m];
            nv++;
        }
    }
    if (nv == 0) {
        float * out = (float *) ((char *) dst->data + (hk * a->G + jb) * dst->nb[1] + n * dst->nb[2]);
        for (int64_t j = 0; j < G; j++) {
            memset((char *) out + j * dst->nb[1], 0, (size_t) Dv * sizeof(float));
        }
        return;
    }
    // request the K rows and the spans of the V rows the task reads, so that their misses (the
    // cache is cold in a decode step: the weights went through since the last one) overlap; a
    // few hundred lines at most (long runs of cells are for the hardware prefetcher)
    {
        const char * kb = (const char *) k->data + hk * k->nb[2];
        for (int64_t i = 0; i < GGML_X_MIN(nv, 64); i++) {
            for (size_t o = 0; o < a->krow; o += 64) {
                __builtin_prefetch(kb + s->idx[i] * k->nb[1] + o, 0, 3);
            }
        }
        const size_t ves = ggml_type_size(v->type);
        const char * vb = (const char *) v->data + hk * v->nb[2];
        for (int64_t i = 0; i < GGML_X_MIN(nv, 64) && a->vrows; i++) {
            for (size_t o = 0; o < a->vrow; o += 64) {
                __builtin_prefetch(vb + s->idx[i] * v->nb[1] + o, 0, 3);
            }
        }
        const size_t v0 = (size_t) s->idx[0] * ves, v1 = (size_t) s->idx[nv - 1] * ves;
        const size_t lines = (v1 - (v0 & ~(size_t) 63)) / 64 + 1;
        for (int64_t d = 0; d < Dv && !a->vrows && lines * (size_t) Dv <= 1024; d++) {
            for (size_t o = v0 & ~(size_t) 63; o <= v1; o += 64) {
                __builtin_prefetch(vb + d * v->nb[1] + o, 0, 3);
            }
        }
    }
    if (simd != NULL) {
        simd(a, n, hk, jb, G, nv, s);
        return;
    }
    attn_masked_heads_scalar(a, n, hk, nv, s);
}

static void attn_masked_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * q = dst->src[0];
    const struct ggml_tensor * k = dst->src[1];
    const struct ggml_tensor * v = dst->src[2];
    const int64_t Hk = k->ne[2], N = q->ne[2];
    const struct attn_masked_op a = {
        .dst     = dst,
        .q       = q,
        .k       = k,
        .v       = v,
        .mask    = dst->src[3],
        .scale   = ggml_x_get_op_params_f32(dst, 2),
        .softcap = ggml_x_get_op_params_f32(dst, 3),
        .kf16    = k->type == GGML_TYPE_F16,
        .kquant  = rowconv_is_quant(k->type),
        .kq8     = k->type == GGML_TYPE_Q8_0,
        .kq4     = k->type == GGML_TYPE_Q4_0,
        .f16     = v->type == GGML_TYPE_F16,
        .vrows   = attn_v_rows(dst),
        .vquant  = rowconv_is_quant(v->type),
        .vq8     = v->type == GGML_TYPE_Q8_0,
        .krow    = ggml_row_size(k->type, q->ne[0]),
        .vrow    = ggml_row_size(v->type, attn_v_rows(dst) ? v->ne[0] : v->ne[1]),
        .D       = q->ne[0],
        .Dv      = attn_v_rows(dst) ? v->ne[0] : v->ne[1],
        .G       = q->ne[1] / Hk,
        .vk      = ggml_x_vec_kernels_active(),
    };
    const struct attn_masked_scratch s = attn_masked_carve(cc, k->ne[1], a.G, a.D, a.Dv);
    const attn_simd_kernel_t simd = attn_simd_kernel(a.D);
    // With fewer (token, KV head) pairs than threads (one token, few KV heads), the query heads of
    // a KV head are split into S parts of gs heads, so that every thread has work (each part
    // reads the whole K and V of its head: the node is bound by its arithmetic, not by them).
    int64_t S = 1, gs = a.G;
    if (simd != NULL && N * Hk < cc->nth && a.G > 1) {
        S = GGML_X_MIN(a.G, (cc->nth + N * Hk - 1) / (N * Hk));
        gs = (a.G + S - 1) / S;
        S = (a.G + gs - 1) / gs;
    }
    // tasks ordered by KV head, then part, then token: a thread's tokens of one head read the same
    // K and V rows one after the other, while they are still in its caches
    int64_t t0, t1;
    rowconv_split(N * Hk * S, cc->ith, cc->nth, &t0, &t1);
    for (int64_t t = t0; t < t1; t++) {
        const int64_t hk = t / (N * S), part = t / N % S, jb = part * gs;
        attn_masked_task(&a, simd, t % N, hk, jb, GGML_X_MIN(gs, a.G - jb), &s);
    }
}
