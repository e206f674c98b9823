// ops-loss.c - training losses (F32): CROSS_ENTROPY_LOSS and CROSS_ENTROPY_LOSS_BACK.
//
// CROSS_ENTROPY_LOSS: src0 = logits x, src1 = targets t (same shape), dst one element:
//   loss = -(1/nr) * sum over rows of sum_i t_i * log(eps + (1 - eps) * softmax(x)_i), eps = 1e-9
// (nr = number of rows; the eps keeps log away from zero, as in the reference).
// CROSS_ENTROPY_LOSS_BACK: src2 = the loss gradient d (one element):
//   dx_i = d/nr * (softmax(x)_i * sum_j t_j - t_i)
// This is the exact gradient for any targets (neglecting eps). The reference drops the sum_j t_j
// factor, which is only right when every target row sums to 1.
//
// The exponentials are evaluated in float (each element's exp once per pass over a row), the
// sums, the logs of the targets' probabilities and the gradient in double.

#include "../ggml-impl.h"
#include "rowconv.h"

#include <math.h>

#define CE_EPS 1e-9

static bool ce_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * x = dst->src[0];
    const struct ggml_tensor * t = dst->src[1];
    return x != NULL && t != NULL && x->type == GGML_TYPE_F32 && t->type == GGML_TYPE_F32 &&
           dst->type == GGML_TYPE_F32 && ggml_are_same_shape(x, t);
}

static size_t ce_work_size(const struct ggml_tensor * dst, int n_threads) {
    (void) dst;
    return (size_t) n_threads * 64; // one cache line per thread for its partial sum
}

// max and log(sum(exp(x - max))) of a row (exp in float, the sum in double)
static void ce_row_lse(const struct ggml_tensor * x, const char * xr, double * max, double * lse) {
    float m = -INFINITY;
    for (int64_t i0 = 0; i0 < x->ne[0]; i0++) {
        const float v = *(const float *) (xr + i0 * x->nb[0]);
        m = v > m ? v : m;
    }
    double s = 0.0;
    for (int64_t i0 = 0; i0 < x->ne[0]; i0++) {
        s += (double) expf(*(const float *) (xr + i0 * x->nb[0]) - m);
    }
    *max = m;
    *lse = log(s);
}

static void ce_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * x = dst->src[0];
    const struct ggml_tensor * t = dst->src[1];
    const int64_t nr = ggml_nrows(x);
    int64_t ir0, ir1;
    rowconv_split(nr, cc->ith, cc->nth, &ir0, &ir1);
    double sum = 0.0;
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const char * xr = rowconv_row_flat(x, ir);
        const char * tr = rowconv_row_flat(t, ir);
        double m, lse;
        ce_row_lse(x, xr, &m, &lse);
        for (int64_t i0 = 0; i0 < x->ne[0]; i0++) {
            // t_i * log(eps + ...): the log is finite, so a zero target (most of a one-hot row)
            // contributes exactly 0 and needs no exp or log
            const double tv = *(const float *) (tr + i0 * t->nb[0]);
            if (tv != 0.0) {
                const double p = exp((double) *(const float *) (xr + i0 * x->nb[0]) - m - lse);
                sum += tv * log(CE_EPS + (1.0 - CE_EPS) * p);
            }
        }
    }
    double * partial = (double *) ((char *) cc->wdata + (size_t) cc->ith * 64);
    *partial = sum;
    ggml_cpu_barrier(cc);
    if (cc->ith == 0) {
        double total = 0.0;
        for (int i = 0; i < cc->nth; i++) {
            total += *(const double *) ((const char *) cc->wdata + (size_t) i * 64);
        }
        *(float *) dst->data = (float) (-total / (double) (nr > 0 ? nr : 1));
    }
}

const struct ggml_cpu_op ggml_cpu_op_cross_entropy_loss = {
    .forward   = ce_forward,
    .supports  = ce_supports,
    .work_size = ce_work_size,
};

static bool ce_back_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * d = dst->src[2];
    return ce_supports(dst) && d != NULL && d->type == GGML_TYPE_F32 && ggml_nelements(d) == 1 &&
           ggml_are_same_shape(dst, dst->src[0]);
}

static void ce_back_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * x = dst->src[0];
    const struct ggml_tensor * t = dst->src[1];
    const int64_t nr = ggml_nrows(x);
    const double scale = (double) *(const float *) dst->src[2]->data / (double) (nr > 0 ? nr : 1);
    int64_t ir0, ir1;
    rowconv_split(nr, cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const char * xr = rowconv_row_flat(x, ir);
        const char * tr = rowconv_row_flat(t, ir);
        char * d = rowconv_row_flat(dst, ir);
        // one exp per element: exp(x - max) is kept in dst, then scaled by 1/sum
        float m = -INFINITY;
        double tsum = 0.0;
        for (int64_t i0 = 0; i0 < x->ne[0]; i0++) {
            const float v = *(const float *) (xr + i0 * x->nb[0]);
            m = v > m ? v : m;
            tsum += (double) *(const float *) (tr + i0 * t->nb[0]);
        }
        double s = 0.0;
        for (int64_t i0 = 0; i0 < x->ne[0]; i0++) {
            const float e = expf(*(const float *) (xr + i0 * x->nb[0]) - m);
            *(float *) (d + i0 * dst->nb[0]) = e;
            s += (double) e;
        }
        const double f = tsum / s;
        for (int64_t i0 = 0; i0 < x->ne[0]; i0++) {
            const double e = *(const float *) (d + i0 * dst->nb[0]);
            const double tv = *(const float *) (tr + i0 * t->nb[0]);
            *(float *) (d + i0 * dst->nb[0]) = (float) (scale * (e * f - tv));
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_cross_entropy_loss_back = {
    .forward  = ce_back_forward,
    .supports = ce_back_supports,
};
