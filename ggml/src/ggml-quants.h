// ggml-quants.h - quantized block formats (doc/gguf-and-quant-formats.md §2-3) and their kernels.
//
// The block structs below are the exact byte layouts of the formats (all fields little-endian).
// ggml-quants.c holds the scalar kernels, which define correct behaviour; SIMD variants live in
// cpu/quants-<level>.c and are selected at run time (cpu/quants-simd.h).

#ifndef GGML_QUANTS_H
#define GGML_QUANTS_H

#include "ggml-impl.h"

#include <assert.h>

#ifdef __cplusplus
extern "C" {
#endif

#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK8_1 32
#define QK_K  256
#define K_SCALE_SIZE 12

typedef struct {
    ggml_fp16_t d;
    uint8_t     qs[QK4_0 / 2];
} block_q4_0;
static_assert(sizeof(block_q4_0) == 18, "block_q4_0 size");

typedef struct {
    ggml_fp16_t d;
    ggml_fp16_t m;
    uint8_t     qs[QK4_1 / 2];
} block_q4_1;
static_assert(sizeof(block_q4_1) == 20, "block_q4_1 size");

typedef struct {
    ggml_fp16_t d;
    uint8_t     qh[4]; // u32 little-endian: bit i = 5th bit of element i
    uint8_t     qs[QK5_0 / 2];
} block_q5_0;
static_assert(sizeof(block_q5_0) == 22, "block_q5_0 size");

typedef struct {
    ggml_fp16_t d;
    ggml_fp16_t m;
    uint8_t     qh[4];
    uint8_t     qs[QK5_1 / 2];
} block_q5_1;
static_assert(sizeof(block_q5_1) == 24, "block_q5_1 size");

typedef struct {
    ggml_fp16_t d;
    int8_t      qs[QK8_0];
} block_q8_0;
static_assert(sizeof(block_q8_0) == 34, "block_q8_0 size");

typedef struct {
    float  d;
    float  s; // d * sum(qs)
    int8_t qs[QK8_1];
} block_q8_1;
// d:f32, s:f32 and 32 bytes: the reference block is 40 bytes, not the 36 some write-ups give
// (doc/gguf-and-quant-formats.md §2)
static_assert(sizeof(block_q8_1) == 40, "block_q8_1 size");

typedef struct {
    uint8_t     scales[QK_K / 16]; // low nibble scale, high nibble min
    uint8_t     qs[QK_K / 4];
    ggml_fp16_t d;
    ggml_fp16_t dmin;
} block_q2_K;
static_assert(sizeof(block_q2_K) == 84, "block_q2_K size");

typedef struct {
    uint8_t     hmask[QK_K / 8];
    uint8_t     qs[QK_K / 4];
    uint8_t     scales[12];
    ggml_fp16_t d;
} block_q3_K;
static_assert(sizeof(block_q3_K) == 110, "block_q3_K size");

typedef struct {
    ggml_fp16_t d;
    ggml_fp16_t dmin;
    uint8_t     scales[K_SCALE_SIZE];
    uint8_t     qs[QK_K / 2];
} block_q4_K;
static_assert(sizeof(block_q4_K) == 144, "block_q4_K size");

typedef struct {
    ggml_fp16_t d;
    ggml_fp16_t dmin;
    uint8_t     scales[K_SCALE_SIZE];
    uint8_t     qh[QK_K / 8];
    uint8_t     qs[QK_K / 2];
} block_q5_K;
static_assert(sizeof(block_q5_K) == 176, "block_q5_K size");

typedef struct {
    uint8_t     ql[QK_K / 2];
    uint8_t     qh[QK_K / 4];
    int8_t      scales[QK_K / 16];
    ggml_fp16_t d;
} block_q6_K;
static_assert(sizeof(block_q6_K) == 210, "block_q6_K size");

typedef struct {
    float   d;
    int8_t  qs[QK_K];
    int16_t bsums[QK_K / 16]; // sum of each group of 16 qs
} block_q8_K;
static_assert(sizeof(block_q8_K) == 292, "block_q8_K size");

// ---------------------------------------------------------------------------------------------
// scalar kernels (the reference the SIMD variants are tested against)

void ggml_x_quantize_row_q4_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);
void ggml_x_quantize_row_q4_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);
void ggml_x_quantize_row_q5_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);
void ggml_x_quantize_row_q5_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);
void ggml_x_quantize_row_q8_0_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);
void ggml_x_quantize_row_q8_1_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);
void ggml_x_quantize_row_q2_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);
void ggml_x_quantize_row_q3_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);
void ggml_x_quantize_row_q4_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);
void ggml_x_quantize_row_q5_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);
void ggml_x_quantize_row_q6_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);
void ggml_x_quantize_row_q8_K_ref(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k);

void ggml_x_dequantize_row_q4_0(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);
void ggml_x_dequantize_row_q4_1(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);
void ggml_x_dequantize_row_q5_0(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);
void ggml_x_dequantize_row_q5_1(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);
void ggml_x_dequantize_row_q8_0(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);
void ggml_x_dequantize_row_q8_1(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);
void ggml_x_dequantize_row_q2_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);
void ggml_x_dequantize_row_q3_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);
void ggml_x_dequantize_row_q4_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);
void ggml_x_dequantize_row_q5_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);
void ggml_x_dequantize_row_q6_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);
void ggml_x_dequantize_row_q8_K(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k);

void ggml_x_vec_dot_q4_0_q8_0_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y);
void ggml_x_vec_dot_q4_1_q8_1_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y);
void ggml_x_vec_dot_q5_0_q8_0_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y);
void ggml_x_vec_dot_q5_1_q8_1_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y);
void ggml_x_vec_dot_q8_0_q8_0_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y);
void ggml_x_vec_dot_q2_K_q8_K_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y);
void ggml_x_vec_dot_q3_K_q8_K_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y);
void ggml_x_vec_dot_q4_K_q8_K_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y);
void ggml_x_vec_dot_q5_K_q8_K_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y);
void ggml_x_vec_dot_q6_K_q8_K_ref(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y);

// Q4_K / Q5_K: 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes
static inline void ggml_x_get_scale_min_k4(int j, const uint8_t * GGML_RESTRICT q, uint8_t * sc, uint8_t * mn) {
    if (j < 4) {
        *sc = q[j] & 63;
        *mn = q[j + 4] & 63;
    } else {
        *sc = (q[j + 4] & 15) | ((q[j - 4] >> 6) << 4);
        *mn = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// Q3_K: the 16 signed 6-bit scales (already minus 32)
static inline void ggml_x_get_scales_q3_K(const uint8_t * GGML_RESTRICT s, int8_t out[16]) {
    for (int j = 0; j < 16; j++) {
        const int lo = j < 8 ? (s[j] & 15) : (s[j - 8] >> 4);
        const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
        out[j] = (int8_t) ((lo | (hi << 4)) - 32);
    }
}

#ifdef __cplusplus
}
#endif

#endif // GGML_QUANTS_H
