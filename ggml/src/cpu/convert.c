// convert.c - fp16 <-> fp32 row conversions: portable bit-exact scalar code (round to nearest
// even, NaNs kept quiet with their top payload bits, as F16C does) and the F16C / AVX-512 /
// NEON variants, selected at run time through quants-simd.h.

#include "cpu/quants-simd.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

static inline float ggml_x_half_bits_to_float(uint16_t h) {
    const uint32_t sign = (uint32_t) (h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        // zero or subnormal: mant * 2^-24 is exact in float
        float f = (float) mant * 0x1p-24f;
        memcpy(&bits, &f, sizeof(bits));
        bits |= sign;
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float out;
    memcpy(&out, &bits, sizeof(out));
    return out;
}

static inline uint16_t ggml_x_float_to_half_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    const uint16_t sign = (uint16_t) ((x >> 16) & 0x8000);
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) { // inf, nan
        return (uint16_t) (sign | 0x7c00 | (x > 0x7f800000u ? 0x200 | ((x >> 13) & 0x3ff) : 0));
    }
    if (x >= 0x477ff000u) { // 65520 and above round to infinity
        return (uint16_t) (sign | 0x7c00);
    }
    if (x < 0x38800000u) { // below 2^-14: subnormal half (scaling by 2^24 is exact)
        float a;
        memcpy(&a, &x, sizeof(a));
        return (uint16_t) (sign | (uint16_t) lrintf(a * 0x1p24f));
    }
    x += 0xfffu + ((x >> 13) & 1); // round to nearest even on the 13 dropped bits
    x -= 0x38000000u;             // exponent bias 127 -> 15
    return (uint16_t) (sign | (x >> 13));
}

void ggml_x_fp16_to_fp32_row_scalar(const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y, int n) {
    for (int i = 0; i < n; i++) {
        uint16_t h;
        memcpy(&h, &x[i], sizeof(h));
        y[i] = ggml_x_half_bits_to_float(h);
    }
}

void ggml_x_fp32_to_fp16_row_scalar(const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y, int n) {
    for (int i = 0; i < n; i++) {
        const uint16_t h = ggml_x_float_to_half_bits(x[i]);
        memcpy(&y[i], &h, sizeof(h));
    }
}

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
