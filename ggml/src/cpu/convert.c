// convert.c - fp16 <-> fp32 row conversions: the F16C / AVX-512 / NEON variants of the scalar
// rows of ggml.c (round to nearest even, NaNs made quiet as F16C does), selected at run time
// through quants-simd.h, and the public ggml_fp16_to_fp32_row / ggml_fp32_to_fp16_row, which use
// the selected variant.

#include "ggml-impl.h"
#include "cpu/quants-simd.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#if defined(__x86_64__)

__attribute__((target("avx2,fma,f16c")))
static void ggml_x_fp16_to_fp32_row_f16c(const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm_loadu_si128((const __m128i *) (x + i));
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(h));
    }
    ggml_x_fp16_to_fp32_row_scalar(x + i, y + i, n - i);
}

__attribute__((target("avx2,fma,f16c")))
static void ggml_x_fp32_to_fp16_row_f16c(const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm_storeu_si128((__m128i *) (y + i), h);
    }
    ggml_x_fp32_to_fp16_row_scalar(x + i, y + i, n - i);
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
static void ggml_x_fp16_to_fp32_row_avx512(const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i h = _mm256_loadu_si256((const __m256i *) (x + i));
        _mm512_storeu_ps(y + i, _mm512_cvtph_ps(h));
    }
    if (i < n) {
        const __mmask16 m = (__mmask16) ((1u << (n - i)) - 1);
        const __m256i h = _mm256_maskz_loadu_epi16(m, x + i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_cvtph_ps(h));
    }
}

__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
static void ggml_x_fp32_to_fp16_row_avx512(const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm256_storeu_si256((__m256i *) (y + i), h);
    }
    if (i < n) {
        const __mmask16 m = (__mmask16) ((1u << (n - i)) - 1);
        const __m256i h = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        _mm256_mask_storeu_epi16(y + i, m, h);
    }
}

void ggml_x_convert_kernels_avx2(struct ggml_x_quant_kernels * k);
void ggml_x_convert_kernels_avx512(struct ggml_x_quant_kernels * k);

void ggml_x_convert_kernels_avx2(struct ggml_x_quant_kernels * k) {
    k->fp16_to_fp32_row = ggml_x_fp16_to_fp32_row_f16c;
    k->fp32_to_fp16_row = ggml_x_fp32_to_fp16_row_f16c;
}

void ggml_x_convert_kernels_avx512(struct ggml_x_quant_kernels * k) {
    k->fp16_to_fp32_row = ggml_x_fp16_to_fp32_row_avx512;
    k->fp32_to_fp16_row = ggml_x_fp32_to_fp16_row_avx512;
}

#endif // __x86_64__

#if defined(__aarch64__)

// FCVT converts exactly like the scalar code under the default FPCR (round to nearest even,
// subnormals kept, NaNs quieted with their top payload bits)
static void ggml_x_fp16_to_fp32_row_neon(const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16((const uint16_t *) (x + i)));
        vst1q_f32(y + i, vcvt_f32_f16(vget_low_f16(h)));
        vst1q_f32(y + i + 4, vcvt_high_f32_f16(h));
    }
    for (; i + 4 <= n; i += 4) {
        vst1q_f32(y + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16((const uint16_t *) (x + i)))));
    }
    ggml_x_fp16_to_fp32_row_scalar(x + i, y + i, n - i);
}

static void ggml_x_fp32_to_fp16_row_neon(const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y, int n) {
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        const float16x8_t h = vcvt_high_f16_f32(vcvt_f16_f32(vld1q_f32(x + i)), vld1q_f32(x + i + 4));
        vst1q_u16((uint16_t *) (y + i), vreinterpretq_u16_f16(h));
    }
    for (; i + 4 <= n; i += 4) {
        vst1_u16((uint16_t *) (y + i), vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(x + i))));
    }
    ggml_x_fp32_to_fp16_row_scalar(x + i, y + i, n - i);
}

void ggml_x_convert_kernels_neon(struct ggml_x_quant_kernels * k);

void ggml_x_convert_kernels_neon(struct ggml_x_quant_kernels * k) {
    k->fp16_to_fp32_row = ggml_x_fp16_to_fp32_row_neon;
    k->fp32_to_fp16_row = ggml_x_fp32_to_fp16_row_neon;
}

#endif // __aarch64__

void ggml_x_fp16_to_fp32_row_simd(const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y, int n) {
    ggml_x_quant_kernels_active()->fp16_to_fp32_row(x, y, n);
}

void ggml_x_fp32_to_fp16_row_simd(const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y, int n) {
    ggml_x_quant_kernels_active()->fp32_to_fp16_row(x, y, n);
}

// the public row conversions (ggml.h) use the SIMD level chosen at start-up; bit-identical to
// the scalar rows of ggml.c
void ggml_fp16_to_fp32_row(const ggml_fp16_t * x, float * y, int n) {
    ggml_x_fp16_to_fp32_row_simd(x, y, n);
}

void ggml_fp32_to_fp16_row(const float * x, ggml_fp16_t * y, int n) {
    ggml_x_fp32_to_fp16_row_simd(x, y, n);
}
