// quants-avx2.c - AVX2 + FMA + F16C variants of the activation quantizers (q8_0, q8_K) and of
// the dot products q8_0.q8_0, q4_0.q8_0, q4_K.q8_K, q6_K.q8_K. Compiled with per-function
// target attributes; only called after run-time detection (quants-dispatch.c).
//
// The quantizers produce the same bytes as the scalar ones. The k-quant dot products compute
// the same integer sums and combine them in the same float order as the scalar code; the
// 32-element dot products accumulate in float vectors (rounding differs slightly). The other
// types' AVX2 dot products are in the family files quants-q32-avx2.c (Q4_1, Q5_0, Q5_1) and
// quants-kq-avx2.c (Q2_K, Q3_K, Q5_K), registered from ggml_x_quant_kernels_avx2.

#if defined(__x86_64__)

#include "cpu/quants-simd.h"
#include "cpu/prefetch.h"
#include "ggml-quants.h"

#include <immintrin.h>
#include <math.h>

#define GGML_X_AVX2 __attribute__((target("avx2,fma,f16c")))

void ggml_x_convert_kernels_avx2(struct ggml_x_quant_kernels * k);

GGML_X_AVX2 static inline float ggml_x_hmax_ps(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

GGML_X_AVX2 static inline float ggml_x_hsum_ps(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

GGML_X_AVX2 static inline int ggml_x_hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

// roundf (half away from zero), exactly: truncate, then step away from zero when the
// dropped fraction (computed exactly) is at least one half
GGML_X_AVX2 static inline __m256 ggml_x_roundf_ps(__m256 v) {
    const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 frac = _mm256_andnot_ps(sign, _mm256_sub_ps(v, t));
    const __m256 ge = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.0f), _mm256_and_ps(sign, v));
    return _mm256_add_ps(t, _mm256_and_ps(ge, one));
}

// four vectors of 8 int32 (each within int8 range) -> 32 int8 in order
GGML_X_AVX2 static inline __m256i ggml_x_pack_i32_to_i8(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i ab = _mm256_packs_epi32(a, b);
    const __m256i cd = _mm256_packs_epi32(c, d);
    const __m256i r = _mm256_packs_epi16(ab, cd);
    return _mm256_permutevar8x32_epi32(r, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

GGML_X_AVX2 static void ggml_x_quantize_row_q8_0_avx2(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q8_0 * y = (block_q8_0 *) vy;
    const int nb = k / QK8_0;
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int ib = 0; ib < nb; ib++, x += QK8_0) {
        __m256 v[4];
        __m256 amax = _mm256_setzero_ps();
        for (int j = 0; j < 4; j++) {
            v[j] = _mm256_loadu_ps(x + 8 * j);
            amax = _mm256_max_ps(amax, _mm256_and_ps(v[j], abs_mask));
        }
        const float d = ggml_x_hmax_ps(amax) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[ib].d = GGML_FP32_TO_FP16(d);
        const __m256 vid = _mm256_set1_ps(id);
        __m256i q[4];
        for (int j = 0; j < 4; j++) {
            q[j] = _mm256_cvttps_epi32(ggml_x_roundf_ps(_mm256_mul_ps(v[j], vid)));
        }
        _mm256_storeu_si256((__m256i *) y[ib].qs, ggml_x_pack_i32_to_i8(q[0], q[1], q[2], q[3]));
    }
}

GGML_X_AVX2 static void ggml_x_quantize_row_q8_K_avx2(const float * GGML_RESTRICT x, void * GGML_RESTRICT vy, int k) {
    block_q8_K * y = (block_q8_K *) vy;
    const int nb = k / QK_K;
    const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const __m256i ones16 = _mm256_set1_epi16(1);
    for (int ib = 0; ib < nb; ib++, x += QK_K) {
        __m256 amaxv = _mm256_setzero_ps();
        for (int j = 0; j < QK_K; j += 8) {
            amaxv = _mm256_max_ps(amaxv, _mm256_and_ps(_mm256_loadu_ps(x + j), abs_mask));
        }
        const float amax = ggml_x_hmax_ps(amaxv);
        if (amax == 0.0f) {
            memset(&y[ib], 0, sizeof(y[ib]));
            continue;
        }
        // the signed value of the first element of largest magnitude
        float max = 0.0f;
        for (int j = 0; j < QK_K; j++) {
            if (fabsf(x[j]) == amax) {
                max = x[j];
                break;
            }
        }
        const float iscale = -127.0f / max;
        const __m256 vis = _mm256_set1_ps(iscale);
        const __m256i lim = _mm256_set1_epi32(127);
        for (int j = 0; j < QK_K; j += 32) {
            __m256i q[4];
            for (int u = 0; u < 4; u++) {
                const __m256 r = _mm256_round_ps(_mm256_mul_ps(_mm256_loadu_ps(x + j + 8 * u), vis),
                                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
                q[u] = _mm256_min_epi32(_mm256_cvtps_epi32(r), lim);
            }
            _mm256_storeu_si256((__m256i *) (y[ib].qs + j), ggml_x_pack_i32_to_i8(q[0], q[1], q[2], q[3]));
        }
        for (int g = 0; g < QK_K / 16; g++) {
            const __m256i w = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *) (y[ib].qs + 16 * g)));
            y[ib].bsums[g] = (int16_t) ggml_x_hsum_epi32(_mm256_madd_epi16(w, ones16));
        }
        y[ib].d = 1.0f / iscale;
    }
}

// sum over pairs of x*y as 8 int32, x and y int8 in [-127, 127]
GGML_X_AVX2 static inline __m256i ggml_x_dot_i8(__m256i x, __m256i y) {
    const __m256i ax = _mm256_sign_epi8(x, x);
    const __m256i sy = _mm256_sign_epi8(y, x);
    return _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1));
}

GGML_X_AVX2 static void ggml_x_vec_dot_q8_0_q8_0_avx2(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q8_0 * x = (const block_q8_0 *) vx;
    const block_q8_0 * y = (const block_q8_0 *) vy;
    const int nb = n / QK8_0;
    __m256 acc = _mm256_setzero_ps();
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_prefetch_far(x + ib, far, sizeof(*x));
        const __m256i qx = _mm256_loadu_si256((const __m256i *) x[ib].qs);
        const __m256i qy = _mm256_loadu_si256((const __m256i *) y[ib].qs);
        const __m256 d = _mm256_set1_ps(GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(ggml_x_dot_i8(qx, qy)), acc);
    }
    *s = ggml_x_hsum_ps(acc);
}

// 16 packed nibbles -> 32 bytes: low nibbles (elements 0..15), then high nibbles (16..31)
GGML_X_AVX2 static inline __m256i ggml_x_unpack_nibbles32(const uint8_t * qs) {
    const __m128i q = _mm_loadu_si128((const __m128i *) qs);
    const __m256i b = _mm256_set_m128i(_mm_srli_epi16(q, 4), q);
    return _mm256_and_si256(b, _mm256_set1_epi8(15));
}

GGML_X_AVX2 static void ggml_x_vec_dot_q4_0_q8_0_avx2(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_0 * x = (const block_q4_0 *) vx;
    const block_q8_0 * y = (const block_q8_0 *) vy;
    const int nb = n / QK8_0;
    const __m256i eight = _mm256_set1_epi8(8);
    __m256 acc = _mm256_setzero_ps();
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_prefetch_far(x + ib, far, sizeof(*x));
        const __m256i qx = _mm256_sub_epi8(ggml_x_unpack_nibbles32(x[ib].qs), eight);
        const __m256i qy = _mm256_loadu_si256((const __m256i *) y[ib].qs);
        const __m256 d = _mm256_set1_ps(GGML_FP16_TO_FP32(x[ib].d) * GGML_FP16_TO_FP32(y[ib].d));
        acc = _mm256_fmadd_ps(d, _mm256_cvtepi32_ps(ggml_x_dot_i8(qx, qy)), acc);
    }
    *s = ggml_x_hsum_ps(acc);
}

GGML_X_AVX2 static void ggml_x_vec_dot_q4_K_q8_K_avx2(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q4_K * x = (const block_q4_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    const __m256i m4 = _mm256_set1_epi8(15);
    float sum = 0.0f;
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_prefetch_far(x + ib, far, sizeof(*x));
        uint8_t sc[8], mn[8];
        int summ = 0;
        for (int j = 0; j < 8; j++) {
            ggml_x_get_scale_min_k4(j, x[ib].scales, &sc[j], &mn[j]);
            summ += mn[j] * (y[ib].bsums[2 * j] + y[ib].bsums[2 * j + 1]);
        }
        __m256i acc = _mm256_setzero_si256();
        for (int c = 0; c < 4; c++) {
            const __m256i q = _mm256_loadu_si256((const __m256i *) (x[ib].qs + 32 * c));
            const __m256i lo = _mm256_and_si256(q, m4);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
            const __m256i y0 = _mm256_loadu_si256((const __m256i *) (y[ib].qs + 64 * c));
            const __m256i y1 = _mm256_loadu_si256((const __m256i *) (y[ib].qs + 64 * c + 32));
            const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, y0), _mm256_set1_epi16(sc[2 * c]));
            const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, y1), _mm256_set1_epi16(sc[2 * c + 1]));
            acc = _mm256_add_epi32(acc, _mm256_add_epi32(p0, p1));
        }
        const int sumi = ggml_x_hsum_epi32(acc);
        const float dy = y[ib].d;
        sum += dy * GGML_FP16_TO_FP32(x[ib].d) * (float) sumi - dy * GGML_FP16_TO_FP32(x[ib].dmin) * (float) summ;
    }
    *s = sum;
}

GGML_X_AVX2 static void ggml_x_vec_dot_q6_K_q8_K_avx2(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT vx, const void * GGML_RESTRICT vy) {
    const block_q6_K * x = (const block_q6_K *) vx;
    const block_q8_K * y = (const block_q8_K *) vy;
    const int nb = n / QK_K;
    const __m256i m4 = _mm256_set1_epi8(15);
    const __m256i m2 = _mm256_set1_epi8(3);
    float sum = 0.0f;
    const size_t far = ggml_x_far_distance((size_t) nb * sizeof(*y));
    for (int ib = 0; ib < nb; ib++) {
        ggml_x_prefetch_far(x + ib, far, sizeof(*x));
        const int8_t * sc = x[ib].scales;
        // the levels are stored + 32: subtract 32 * sum(y) of each sub-block afterwards
        int corr = 0;
        for (int sb = 0; sb < 16; sb++) {
            corr += sc[sb] * y[ib].bsums[sb];
        }
        __m256i acc = _mm256_setzero_si256();
        for (int h = 0; h < 2; h++) {
            const uint8_t * ql = x[ib].ql + 64 * h;
            const int8_t * qy = y[ib].qs + 128 * h;
            const __m256i l0 = _mm256_loadu_si256((const __m256i *) ql);
            const __m256i l1 = _mm256_loadu_si256((const __m256i *) (ql + 32));
            const __m256i hb = _mm256_loadu_si256((const __m256i *) (x[ib].qh + 32 * h));
            __m256i q[4];
            q[0] = _mm256_or_si256(_mm256_and_si256(l0, m4), _mm256_slli_epi16(_mm256_and_si256(hb, m2), 4));
            q[1] = _mm256_or_si256(_mm256_and_si256(l1, m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 2), m2), 4));
            q[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 4), m2), 4));
            q[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), m4), _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(hb, 6), m2), 4));
            for (int u = 0; u < 4; u++) {
                const __m256i yv = _mm256_loadu_si256((const __m256i *) (qy + 32 * u));
                const int s0 = sc[8 * h + 2 * u], s1 = sc[8 * h + 2 * u + 1];
                const __m256i scv = _mm256_set_m128i(_mm_set1_epi16((short) s1), _mm_set1_epi16((short) s0));
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(q[u], yv), scv));
            }
        }
        const int sumi = ggml_x_hsum_epi32(acc) - 32 * corr;
        sum += y[ib].d * GGML_FP16_TO_FP32(x[ib].d) * (float) sumi;
    }
    *s = sum;
}

void ggml_x_quant_kernels_avx2(struct ggml_x_quant_kernels * k) {
    k->quantize_row_q8_0 = ggml_x_quantize_row_q8_0_avx2;
    k->quantize_row_q8_K = ggml_x_quantize_row_q8_K_avx2;
    k->vec_dot_q8_0_q8_0 = ggml_x_vec_dot_q8_0_q8_0_avx2;
    k->vec_dot_q4_0_q8_0 = ggml_x_vec_dot_q4_0_q8_0_avx2;
    k->vec_dot_q4_K_q8_K = ggml_x_vec_dot_q4_K_q8_K_avx2;
    k->vec_dot_q6_K_q8_K = ggml_x_vec_dot_q6_K_q8_K_avx2;
    ggml_x_quant_kernels_q32_avx2(k);
    ggml_x_quant_kernels_kq_avx2(k);
    ggml_x_convert_kernels_avx2(k);
}

#endif // __x86_64__
