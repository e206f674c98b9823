// quants-simd.h - the kernels with SIMD variants and their run-time selection.
//
// A struct ggml_x_quant_kernels holds one implementation of each kernel. The scalar level holds
// the reference kernels of ggml-quants.c and ggml.c; each SIMD level file
// (cpu/quants-avx2.c, cpu/quants-avx512.c, ...) overrides the entries it implements. Every
// variant computes what the scalar kernel computes (quantizers bit-exact, dot products to
// float rounding).

#ifndef GGML_X_QUANTS_SIMD_H
#define GGML_X_QUANTS_SIMD_H

#include "ggml.h"
#include "cpu/cpu-features.h"

#ifdef __cplusplus
extern "C" {
#endif

// Multi-column dot product: s[j] = dot(weight row x, activation row y[j]) for j < nc (n
// elements; y rows of the type's vec_dot_type). Each weight block is decoded once for all the
// columns; every s[j] equals, to float rounding, the type's vec_dot of x and y[j], and does not
// depend on nc or on the other columns.
typedef void (*ggml_x_vec_dot_cols_t)(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x,
                                      const void * const * y, int nc);

struct ggml_x_quant_kernels {
    ggml_from_float_t quantize_row_q8_0;
    ggml_from_float_t quantize_row_q8_K;
    ggml_vec_dot_t    vec_dot_q8_0_q8_0;
    ggml_vec_dot_t    vec_dot_q4_0_q8_0;
    ggml_vec_dot_t    vec_dot_q4_K_q8_K;
    ggml_vec_dot_t    vec_dot_q6_K_q8_K;
    ggml_vec_dot_t    vec_dot_q4_1_q8_1;
    ggml_vec_dot_t    vec_dot_q5_0_q8_0;
    ggml_vec_dot_t    vec_dot_q5_1_q8_1;
    ggml_vec_dot_t    vec_dot_q2_K_q8_K;
    ggml_vec_dot_t    vec_dot_q3_K_q8_K;
    ggml_vec_dot_t    vec_dot_q5_K_q8_K;
    // multi-column dot products (NULL: the level has none; MUL_MAT then calls vec_dot per column)
    ggml_x_vec_dot_cols_t vec_dot_cols_q2_K;
    ggml_x_vec_dot_cols_t vec_dot_cols_q3_K;
    ggml_x_vec_dot_cols_t vec_dot_cols_q4_K;
    ggml_x_vec_dot_cols_t vec_dot_cols_q5_K;
    ggml_x_vec_dot_cols_t vec_dot_cols_q6_K;
    void (*fp16_to_fp32_row)(const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y, int n);
    void (*fp32_to_fp16_row)(const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y, int n);
};

// Kernels of exactly `level` (scalar entries where the level has no variant). Returns false
// (and fills scalar kernels) when the level is not compiled in or this CPU cannot run it.
bool ggml_x_quant_kernels_for_level(enum ggml_x_cpu_level level, struct ggml_x_quant_kernels * k);

// the kernels of ggml_x_cpu_level(), selected once (thread-safe)
const struct ggml_x_quant_kernels * ggml_x_quant_kernels_active(void);

// the multi-column dot product of weights of type wtype in k (NULL: none)
ggml_x_vec_dot_cols_t ggml_x_quant_dot_cols(const struct ggml_x_quant_kernels * k, enum ggml_type wtype);

// level files: override the entries they implement (defined on x86-64 only)
void ggml_x_quant_kernels_avx2(struct ggml_x_quant_kernels * k);
void ggml_x_quant_kernels_avx512(struct ggml_x_quant_kernels * k);
void ggml_x_quant_kernels_avx512_vnni(struct ggml_x_quant_kernels * k);
// family files of a level, called by its level file
void ggml_x_quant_kernels_q32_avx2(struct ggml_x_quant_kernels * k); // cpu/quants-q32-avx2.c
void ggml_x_quant_kernels_kq_avx2(struct ggml_x_quant_kernels * k);  // cpu/quants-kq-avx2.c
void ggml_x_quant_kernels_q32_vnni(struct ggml_x_quant_kernels * k); // cpu/quants-q32-avx512.c
void ggml_x_quant_kernels_kq_vnni(struct ggml_x_quant_kernels * k);  // cpu/quants-kq-avx512.c
void ggml_x_quant_kernels_kq_cols_vnni(struct ggml_x_quant_kernels * k); // cpu/quants-kq-cols-avx512.c
void ggml_x_quant_kernels_more_neon(struct ggml_x_quant_kernels * k);         // cpu/quants-more-neon.c
void ggml_x_quant_kernels_more_neon_dotprod(struct ggml_x_quant_kernels * k); // cpu/quants-more-neon.c

// the selected fp16 row conversions (cpu/convert.c): what ggml_fp16_to_fp32_row /
// ggml_fp32_to_fp16_row use (the scalar rows are ggml_x_fp16_to_fp32_row_scalar, ggml-impl.h)
void ggml_x_fp16_to_fp32_row_simd(const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y, int n);
void ggml_x_fp32_to_fp16_row_simd(const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y, int n);

#ifdef __cplusplus
}
#endif

#endif // GGML_X_QUANTS_SIMD_H
