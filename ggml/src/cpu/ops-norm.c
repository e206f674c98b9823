// ops-norm.c - normalisations: NORM, RMS_NORM, GROUP_NORM (F32), and RMS_NORM_BACK (the gradient
// of RMS_NORM) at the end.
//
// NORM:       y = (x - mean) / sqrt(var + eps) per row (dim 0)
// RMS_NORM:   y = x / sqrt(mean(x^2) + eps) per row
// GROUP_NORM: channels (dim 2) form n_groups groups of ceil(ne2 / n_groups) channels (the last
//             one may be smaller); each group of each dim-3 slice is normalised like NORM over
//             all its ne0*ne1*channels elements, with eps = 1e-6.
// Sums are accumulated in double; mean, variance and the scale are then rounded to float as the
// reference does, so results agree to float rounding. Dense rows (NORM, RMS_NORM) run the row
// kernels of vec.h.

#include "../ggml-impl.h"
#include "rowconv.h"
#include "vec.h"

#include <math.h>

#define GROUP_NORM_EPS 1e-6f

// ---------------------------------------------------------------------------------------------
// NORM

static void norm_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const float eps = ggml_x_get_op_params_f32(dst, 0);
    const int64_t ne0 = a->ne[0];
    const int64_t nr  = a->ne[1] * a->ne[2] * a->ne[3];
    const size_t nb00 = a->nb[0], nb0 = dst->nb[0];

    const struct ggml_x_vec_kernels * vk = ggml_x_vec_kernels_active();
    const bool dense = nb00 == sizeof(float) && nb0 == sizeof(float);

    for (int64_t ir = cc->ith; ir < nr; ir += cc->nth) {
        const char * x = rowconv_row_flat(a, ir);
        char * y = rowconv_row_flat(dst, ir);

        if (dense) {
            const float mean = (float) (vk->sum(ne0, (const float *) x) / (double) ne0);
            const double sum2 = vk->sub_sum_sq(ne0, (float *) y, (const float *) x, mean);
            const float variance = (float) (sum2 / (double) ne0);
            vk->scale(ne0, (float *) y, (const float *) y, 1.0f / sqrtf(variance + eps));
            continue;
        }

        double sum = 0.0;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            sum += (double) *(const float *) (x + i0*nb00);
        }
        const float mean = (float) (sum / (double) ne0);

        double sum2 = 0.0;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            const float v = *(const float *) (x + i0*nb00) - mean;
            *(float *) (y + i0*nb0) = v;
            sum2 += (double) (v*v);
        }
        const float variance = (float) (sum2 / (double) ne0);
        const float scale = 1.0f / sqrtf(variance + eps);
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            *(float *) (y + i0*nb0) *= scale;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_norm = {
    .forward  = norm_forward,
    .supports = rowconv_f32_same_shape,
};

// ---------------------------------------------------------------------------------------------
// RMS_NORM

static void rms_norm_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const float eps = ggml_x_get_op_params_f32(dst, 0);
    const int64_t ne0 = a->ne[0];
    const int64_t nr  = a->ne[1] * a->ne[2] * a->ne[3];
    const size_t nb00 = a->nb[0], nb0 = dst->nb[0];

    const struct ggml_x_vec_kernels * vk = ggml_x_vec_kernels_active();
    const bool dense = nb00 == sizeof(float) && nb0 == sizeof(float);

    for (int64_t ir = cc->ith; ir < nr; ir += cc->nth) {
        const char * x = rowconv_row_flat(a, ir);
        char * y = rowconv_row_flat(dst, ir);

        if (dense) {
            const float mean = (float) (vk->sum_sq(ne0, (const float *) x) / (double) ne0);
            vk->scale(ne0, (float *) y, (const float *) x, 1.0f / sqrtf(mean + eps));
            continue;
        }

        double sum = 0.0;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            const float v = *(const float *) (x + i0*nb00);
            sum += (double) (v*v);
        }
        const float mean = (float) (sum / (double) ne0);
        const float scale = 1.0f / sqrtf(mean + eps);
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            *(float *) (y + i0*nb0) = *(const float *) (x + i0*nb00) * scale;
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_rms_norm = {
    .forward  = rms_norm_forward,
    .supports = rowconv_f32_same_shape,
};

// ---------------------------------------------------------------------------------------------
// GROUP_NORM

static bool group_norm_supports(const struct ggml_tensor * dst) {
    return rowconv_f32_same_shape(dst) && ggml_x_get_op_params_i32(dst, 0) > 0;
}

static void group_norm_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const int n_groups = ggml_x_get_op_params_i32(dst, 0);
    const int64_t ne0 = a->ne[0], ne1 = a->ne[1], ne2 = a->ne[2], ne3 = a->ne[3];
    const int64_t per_group = (ne2 + n_groups - 1) / n_groups;

    // work items: (group, i3)
    const int64_t n_items = (int64_t) n_groups * ne3;
    for (int64_t it = cc->ith; it < n_items; it += cc->nth) {
        const int64_t g  = it % n_groups;
        const int64_t i3 = it / n_groups;
        const int64_t c0 = g * per_group;
        const int64_t c1 = GGML_X_MIN(c0 + per_group, ne2);
        if (c0 >= c1) {
            continue;
        }
        const double n = (double) (ne0 * ne1 * (c1 - c0));

        double sum = 0.0;
        for (int64_t i2 = c0; i2 < c1; i2++) {
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                const char * x = (const char *) a->data + i1*a->nb[1] + i2*a->nb[2] + i3*a->nb[3];
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    sum += (double) *(const float *) (x + i0*a->nb[0]);
                }
            }
        }
        const float mean = (float) (sum / n);

        double sum2 = 0.0;
        for (int64_t i2 = c0; i2 < c1; i2++) {
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                const char * x = (const char *) a->data + i1*a->nb[1] + i2*a->nb[2] + i3*a->nb[3];
                char * y = (char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3];
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    const float v = *(const float *) (x + i0*a->nb[0]) - mean;
                    *(float *) (y + i0*dst->nb[0]) = v;
                    sum2 += (double) (v*v);
                }
            }
        }
        const float variance = (float) (sum2 / n);
        const float scale = 1.0f / sqrtf(variance + GROUP_NORM_EPS);

        for (int64_t i2 = c0; i2 < c1; i2++) {
            for (int64_t i1 = 0; i1 < ne1; i1++) {
                char * y = (char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3];
                for (int64_t i0 = 0; i0 < ne0; i0++) {
                    *(float *) (y + i0*dst->nb[0]) *= scale;
                }
            }
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_group_norm = {
    .forward  = group_norm_forward,
    .supports = group_norm_supports,
};

// ---------------------------------------------------------------------------------------------
// RMS_NORM_BACK
// RMS_NORM_BACK (the gradient of RMS_NORM, F32): with r = 1/sqrt(mean(x^2) + eps) per row,
// dx = r * dy - r^3 * x * mean(x * dy); src0 = x, src1 = dy, f32[0] = eps. Sums in double.

static void rms_norm_back_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * x = dst->src[0];
    const struct ggml_tensor * dy = dst->src[1];
    const double eps = ggml_x_get_op_params_f32(dst, 0);
    const int64_t ne0 = dst->ne[0];
    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const char * xr = rowconv_row_flat(x, ir);
        const char * gr = rowconv_row_flat(dy, ir);
        char * d = rowconv_row_flat(dst, ir);
        double sxx = 0.0, sxg = 0.0;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            const double v = ROWCONV_F32_AT(x, i0, xr);
            sxx += v * v;
            sxg += v * (double) ROWCONV_F32_AT(dy, i0, gr);
        }
        const double r = 1.0 / sqrt(sxx / (double) ne0 + eps);
        const double c = r * r * r * sxg / (double) ne0;
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            ROWCONV_F32_AT(dst, i0, d) = (float) (r * (double) ROWCONV_F32_AT(dy, i0, gr) - c * (double) ROWCONV_F32_AT(x, i0, xr));
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_rms_norm_back = {
    .forward  = rms_norm_back_forward,
    .supports = rowconv_back_pair_supports,
};
