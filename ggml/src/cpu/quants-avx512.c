// quants-avx512.c - AVX-512 (F/BW/VL/DQ) variants, and the AVX-512 VNNI dot products.
// The activation quantizers q8_0 / q8_K produce the same bytes as the scalar ones; the
// 32-element dot products handle two blocks per 512-bit vector. The k-quant dot products of
// the plain AVX-512 level are the AVX2 ones (quants-avx2.c and its family files); the VNNI
// level has its own: all k-quants in quants-kq-avx512.c, Q4_1 / Q5_0 / Q5_1 in
// quants-q32-avx512.c.

#if defined(__x86_64__)

#include "cpu/quants-simd.h"
#include "cpu/prefetch.h"
#include "ggml-quants.h"

#include <immintrin.h>
#include <math.h>

#define GGML_X_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#define GGML_X_VNNI   __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))

void ggml_x_convert_kernels_avx512(struct ggml_x_quant_kernels * k);

// roundf (half away from zero), exactly (see quants-avx2.c)
GGML_X_AVX512 static inline __m512 ggml_x_roundf512(__m512 v) {
    const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512 frac = _mm512_abs_ps(_mm512_sub_ps(v, t));
    const __mmask16 ge = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    const __m512 one = _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(_mm512_set1_ps(1.0f)),
        _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32((int) 0x80000000u))));
    return _mm512_mask_add_ps(t, ge, t, one);
}

GGML_X_AVX512 static void ggml_x_quantize_row_q8_0_avx512(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q8_0 * y = (block_q8_0 *) vy;
    const int nb = k / QK8_0;
    for (int ib = 0; ib < nb; ib++, x += QK8_0) {
        const __m512 v0 = _mm512_loadu_ps(x);
        const __m512 v1 = _mm512_loadu_ps(x + 16);
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(_mm512_abs_ps(v0), _mm512_abs_ps(v1)));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = GGML_FP32_TO_FP16(d);
        const __m512 vid = _mm512_set1_ps(id);
        const __m512i q0 = _mm512_cvttps_epi32(ggml_x_roundf512(_mm512_mul_ps(v0, vid)));
        const __m512i q1 = _mm512_cvttps_epi32(ggml_x_roundf512(_mm512_mul_ps(v1, vid)));
        _mm_storeu_si128((__m128i *) y[ib].qs, _mm512_cvtsepi32_epi8(q0));
        _mm_storeu_si128((__m128i *) (y[ib].qs + 16), _mm512_cvtsepi32_epi8(q1));
    }
}

GGML_X_AVX512 static void ggml_x_quantize_row_q8_K_avx512(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q8_K * y = (block_q8_K *) vy;
    const int nb = k / QK_K;
    for (int ib = 0; ib < nb; ib++, x += QK_K) {
        __m512 amaxv = _mm512_setzero_ps();
        for (int j = 0; j < QK_K; j += 16) {
            amaxv = _mm512_max_ps(amaxv, _mm512_abs_ps(_mm512_loadu_ps(x + j)));
        }
        const float amax = _mm512_reduce_max_ps(amaxv);
        if (amax == 0.0f) {
            memset(&y[ib], 0, sizeof(y[ib]));
            continue;
        }
        float max = 0.0f;
        for (int j = 0; j < QK_K; j++) {
            if (fabsf(x[j]) == amax) {
                max = x[j];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const __m512 vis = _mm512_set1_ps(iscale);
        const __m512i lim = _mm512_set1_epi32(127);
        for (int g = 0; g < QK_K / 16; g++) {
            const __m512 r = _mm512_roundscale_ps(_mm512_mul_ps(_mm512_loadu_ps(x + 16 * g), vis),
                                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            const __m512i q = _mm512_min_epi32(_mm512_cvtps_epi32(r), lim);
            _mm_storeu_si128((__m128i *) (y[ib].qs + 16 * g), _mm512_cvtsepi32_epi8(q));
            y[ib].bsums[g] = (int16_t) _mm512_reduce_add_epi32(q);
        }
        y[ib].d = 1.0f / iscale;
    }
}

// two consecutive 32-byte blocks in one vector
GGML_X_AVX512 static inline __m512i ggml_x_load2x32(const void * a, const void * b) {
    return _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_loadu_si256((const __m256i *) a)),
                              _mm256_loadu_si256((const __m256i *) b), 1);
}

// 16 int32 sums of 4 products (lanes 0..7: first block, 8..15: second), x, y in [-127, 127]
GGML_X_AVX512 static inline __m512i ggml_x_dot_i8_512(__m512i x, __m512i y) {
    const __m512i ax = _mm512_abs_epi8(x);
    const __mmask64 neg = _mm512_movepi8_mask(x);
    const __m512i sy = _mm512_mask_sub_epi8(y, neg, _mm512_setzero_si512(), y);
    return _mm512_madd_epi16(_mm512_maddubs_epi16(ax, sy), _mm512_set1_epi16(1));
}

GGML_X_VNNI static inline __m512i ggml_x_dot_i8_vnni(__m512i x, __m512i y) {
    const __m512i ax = _mm512_abs_epi8(x);
    const __mmask64 neg = _mm512_movepi8_mask(x);
    const __m512i sy = _mm512_mask_sub_epi8(y, neg, _mm512_setzero_si512(), y);
    return _mm512_dpbusd_epi32(_mm512_setzero_si512(), ax, sy);
}

GGML_X_AVX512 static inline __m512 ggml_x_d2(float da, float db) {
    return _mm512_insertf32x8(_mm512_set1_ps(da), _mm256_set1_ps(db), 1);
}

GGML_X_AVX512 static inline __m512i ggml_x_unpack_nibbles_512(const uint8_t * qa, const uint8_t * qb) {
    const __m128i a = _mm_loadu_si128((const __m128i *) qa);
    const __m128i b = _mm_loadu_si128((const __m128i *) qb);
    const __m256i lo = _mm256_set_m128i(b, a);
    const __m256i hi = _mm256_srli_epi16(lo, 4);
    // per block: low nibbles (elements 0..15) then high nibbles (16..31)
    const __m512i r = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_permute2x128_si256(lo, hi, 0x20)),
                                         _mm256_permute2x128_si256(lo, hi, 0x31), 1);
    return _mm512_and_si512(r, _mm512_set1_epi8(15));
}

#define GGML_X_DEFINE_DOT_Q8_0(NAME, ATTR, DOT) \
ATTR static void NAME(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) { \
    const block_q8_0 * x = (const block_q8_0 *) vx; \
    const block_q8_0 * y = (const block_q8_0 *) vy; \
    const int nb = n / QK8_0; \
    __m512 acc = _mm512_setzero_ps(); \
    int ib = 0; \
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y)); \
    for (; ib + 2 <= nb; ib += 2) { \
        ggml_x_prefetch_far(x + ib, far, 2 * sizeof(*x)); \
        const __m512i qx = ggml_x_load2x32(x[ib].qs, x[ib + 1].qs); \
        const __m512i qy = ggml_x_load2x32(y[ib].qs, y[ib + 1].qs); \
        const __m512 d = ggml_x_d2(GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d), \
                                   GGML_FP16_TO_FP32(x[ib + 1].d) * GGML_FP16_TO_FP32(y[ib + 1].d)); \
        acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(DOT(qx, qy)), acc); \
    } \
    float sum = _mm512_reduce_add_ps(acc); \
    for (; ib < nb; ib++) { \
        int sumi = 0; \
        for (int j = 0; j < QK8_0; j++) { \
            sumi += x[ib].qs[j] * y[ib].qs[j]; \
        } \
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d)); \
    } \
    *s = sum; \
}

#define GGML_X_DEFINE_DOT_Q4_0(NAME, ATTR, DOT) \
ATTR static void NAME(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) { \
    const block_q4_0 * x = (const block_q4_0 *) vx; \
    const block_q8_0 * y = (const block_q8_0 *) vy; \
    const int nb = n / QK8_0; \
    const __m512i eight = _mm512_set1_epi8(8); \
    __m512 acc = _mm512_setzero_ps(); \
    int ib = 0; \
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y)); \
    for (; ib + 2 <= nb; ib += 2) { \
        ggml_x_prefetch_far(x + ib, far, 2 * sizeof(*x)); \
        const __m512i qx = _mm512_sub_epi8(ggml_x_unpack_nibbles_512(x[ib].qs, x[ib + 1].qs), eight); \
        const __m512i qy = ggml_x_load2x32(y[ib].qs, y[ib + 1].qs); \
        const __m512 d = ggml_x_d2(GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d), \
                                   GGML_FP16_TO_FP32(x[ib + 1].d) * GGML_FP16_TO_FP32(y[ib + 1].d)); \
        acc = _mm512_fmadd_ps(d, _mm512_cvtepi32_ps(DOT(qx, qy)), acc); \
    } \
    float sum = _mm512_reduce_add_ps(acc); \
    for (; ib < nb; ib++) { \
        int sumi = 0; \
        for (int j = 0; j < QK8_0 / 2; j++) { \
            sumi += ((x[ib].qs[j] & 15) - 8) * y[ib].qs[j]; \
            sumi += ((x[ib].qs[j] >> 4) - 8) * y[ib].qs[j + QK8_0 / 2]; \
        } \
        sum += (float) sumi * (GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d)); \
    } \
    *s = sum; \
}

GGML_X_DEFINE_DOT_Q8_0(ggml_x_vec_dot_q8_0_q8_0_avx512, GGML_X_AVX512, ggml_x_dot_i8_512)
GGML_X_DEFINE_DOT_Q4_0(ggml_x_vec_dot_q4_0_q8_0_avx512, GGML_X_AVX512, ggml_x_dot_i8_512)
GGML_X_DEFINE_DOT_Q8_0(ggml_x_vec_dot_q8_0_q8_0_vnni, GGML_X_VNNI, ggml_x_dot_i8_vnni)
GGML_X_DEFINE_DOT_Q4_0(ggml_x_vec_dot_q4_0_q8_0_vnni, GGML_X_VNNI, ggml_x_dot_i8_vnni)

void ggml_x_quant_kernels_avx512(struct ggml_x_quant_kernels * k) {
    k->quantize_row_q8_0 = ggml_x_quantize_row_q8_0_avx512;
    k->quantize_row_q8_K = ggml_x_quantize_row_q8_K_avx512;
    k->vec_dot_q8_0_q8_0 = ggml_x_vec_dot_q8_0_q8_0_avx512;
    k->vec_dot_q4_0_q8_0 = ggml_x_vec_dot_q4_0_q8_0_avx512;
    ggml_x_convert_kernels_avx512(k);
}

void ggml_x_quant_kernels_avx512_vnni(struct ggml_x_quant_kernels * k) {
    k->vec_dot_q8_0_q8_0 = ggml_x_vec_dot_q8_0_q8_0_vnni;
    k->vec_dot_q4_0_q8_0 = ggml_x_vec_dot_q4_0_q8_0_vnni;
    ggml_x_quant_kernels_q32_vnni(k);
    ggml_x_quant_kernels_kq_vnni(k);
    ggml_x_quant_kernels_kq_cols_vnni(k);
}

#endif // __x86_64__
