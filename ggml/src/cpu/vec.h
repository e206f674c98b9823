// vec.h - row kernels of the element-wise, normalisation and softmax ops, one table per SIMD
// level (scalar, AVX2, AVX-512; other levels use the best lower one of their architecture).
//
// The scalar functions are the reference: the SIMD ones compute the same thing, with sums
// regrouped (RMS/NORM: double accumulators; softmax: double sum) and, for the sigmoid-type
// unaries, exp evaluated in float by vec_exp (relative error under 2 float ulp) instead of in
// double. The softmax exp is that of the fp16 table of vec_exp_f16_table in every variant: the
// scalar one looks it up, the SIMD ones compute it (the table is cold in a decode step) and equal
// the table for every one of the 65536 fp16 arguments (test-vec checks them all), so softmax rows
// agree exactly apart from the order of the double sum.

#ifndef GGML_X_CPU_VEC_H
#define GGML_X_CPU_VEC_H

#include "ggml-impl.h"
#include "cpu/cpu-features.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ggml_x_vec_unary {
    GGML_X_VEC_SILU,
    GGML_X_VEC_GELU,
    GGML_X_VEC_GELU_QUICK,
    GGML_X_VEC_UNARY_COUNT,
};

struct ggml_x_vec_kernels {
    // y[i] = f(x[i]) for the unary above; y may equal x
    void (*unary)(int kind, int64_t n, float * y, const float * x);
    // sum of x[i]^2 (double accumulation)
    double (*sum_sq)(int64_t n, const float * x);
    // sum of x[i] (double accumulation)
    double (*sum)(int64_t n, const float * x);
    // y[i] = x[i] - m, returns the sum of (x[i] - m)^2 (the float difference, squared in
    // float, accumulated in double); y may equal x
    double (*sub_sum_sq)(int64_t n, float * y, const float * x, float m);
    // y[i] = x[i] * s; y may equal x
    void (*scale)(int64_t n, float * y, const float * x, float s);
    // softmax pieces: w[i] = x[i]*scale (+ mask[i] when mask != NULL), returns max w[i]
    float (*scale_mask_max)(int64_t n, float * w, const float * x, float scale, const float * mask);
    // w[i] = expf16(w[i] - max) (0 where w[i] == -inf), returns the sum in double
    double (*exp_sum)(int64_t n, float * w, float max);
    // y[i] = table[fp16 bits of x[i]] as float (x[i] rounded to fp16, nearest even, as
    // GGML_FP32_TO_FP16), except y[i] = 0 where x[i] <= lo and y[i] = x[i] where x[i] >= hi (a
    // NaN lo or hi: never): the fp16 tables of gelu and gelu_quick. table: 65536 values and at
    // least one more of padding (the SIMD kernels read 4 bytes at every entry); y may equal x
    void (*lookup_f16)(int64_t n, float * y, const float * x, const ggml_fp16_t * table, float lo, float hi);
    // y[i] = c * tanh(x[i] / c), the soft-capping of attention scores (c > 0); the SIMD kernels
    // take tanh from exp as (1 - e) / (1 + e) with e = exp(-2|t|), t = x * (1 / c): within 3
    // float ulps of c absolutely (not relatively near 0), NaN kept; y may equal x
    void (*softcap)(int64_t n, float * y, const float * x, float c);
};

// kernels of `level` into *k (the scalar ones for a level this machine lacks: returns false)
bool ggml_x_vec_kernels_for_level(enum ggml_x_cpu_level level, struct ggml_x_vec_kernels * k);

// kernels of ggml_x_cpu_level(), chosen once
const struct ggml_x_vec_kernels * ggml_x_vec_kernels_active(void);

// exp as the softmax of the reference computes it, indexed by the fp16 bits of the argument:
// table[h] = fp16-rounded expf(fp16 h) as float; 65536 entries (+ padding), built once
const float * ggml_x_vec_exp_f16_table(void);

#ifdef __cplusplus
}
#endif

#endif // GGML_X_CPU_VEC_H
