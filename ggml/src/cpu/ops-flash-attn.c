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
#include "rowconv.h"

#include <math.h>

static bool attn_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * q = dst->src[0];
    const struct ggml_tensor * k = dst->src[1];
    const struct ggml_tensor * v = dst->src[2];
    return q != NULL && k != NULL && v != NULL && q->type == GGML_TYPE_F32 && k->type == GGML_TYPE_F32 &&
           v->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && k->ne[0] == q->ne[0] && v->ne[1] == q->ne[0] &&
           v->ne[0] == k->ne[1] && v->ne[2] == k->ne[2] && k->ne[2] > 0 && q->ne[2] % k->ne[2] == 0 &&
           k->ne[3] == q->ne[3] && v->ne[3] == q->ne[3];
}

static size_t attn_work_size(const struct ggml_tensor * dst, int n_threads) {
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
    return attn_supports(dst) && d != NULL && d->type == GGML_TYPE_F32 && ggml_are_same_shape(q, d) &&
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
