// vec-avx2.c - AVX2 + FMA + F16C row kernels of vec.h. Compiled with target attributes; used
// only after run-time detection. Tails of fewer than 8 elements run the scalar formulas.

#if defined(__x86_64__)

#include "cpu/vec.h"

#include <immintrin.h>
#include <math.h>

#define VX2 __attribute__((target("avx2,fma,f16c")))
#define VX2_INLINE VX2 __attribute__((always_inline)) static inline

// exp(x) in float: x = n*ln2 + r with |r| <= ln2/2, e^r by its degree-7 Taylor polynomial
// (truncation below 1e-8 relative), times 2^n built in the exponent field. Arguments above 88
// give +inf and below -87 give 0 (the float range ends at about +-87.3..88.7).
VX2_INLINE __m256 vx2_exp(__m256 x) {
    const __m256 hi = _mm256_set1_ps(88.0f), lo = _mm256_set1_ps(-87.0f);
    const __m256 over = _mm256_cmp_ps(x, hi, _CMP_GT_OQ);
    const __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ);
    const __m256 xc = _mm256_max_ps(_mm256_min_ps(x, hi), lo);
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), xc);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
    y = _mm256_blendv_ps(y, _mm256_set1_ps(INFINITY), over);
    return _mm256_andnot_ps(under, y);
}

// x / (1 + exp(-a*x)) with the product a*x given
VX2_INLINE __m256 vx2_sigmoid_mul(__m256 x, __m256 ax) {
    const __m256 e = vx2_exp(_mm256_sub_ps(_mm256_setzero_ps(), ax));
    return _mm256_div_ps(x, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
}

VX2 static void vx2_unary(int kind, int64_t n, float * y, const float * x) {
    int64_t i = 0;
    switch (kind) {
        case GGML_X_VEC_SILU:
            for (; i + 8 <= n; i += 8) {
                const __m256 v = _mm256_loadu_ps(x + i);
                _mm256_storeu_ps(y + i, vx2_sigmoid_mul(v, v));
            }
            break;
        case GGML_X_VEC_GELU: {
            // 0.5 x (1 + tanh(u)) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3)
            const __m256 c2 = _mm256_set1_ps(2.0f * 0.79788456080286535588f);
            const __m256 c3 = _mm256_set1_ps(0.044715f);
            for (; i + 8 <= n; i += 8) {
                const __m256 v = _mm256_loadu_ps(x + i);
                const __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
                const __m256 u2 = _mm256_mul_ps(c2, _mm256_fmadd_ps(c3, v3, v));
                _mm256_storeu_ps(y + i, vx2_sigmoid_mul(v, u2));
            }
            break;
        }
        case GGML_X_VEC_GELU_QUICK: {
            const __m256 a = _mm256_set1_ps(1.702f);
            for (; i + 8 <= n; i += 8) {
                const __m256 v = _mm256_loadu_ps(x + i);
                _mm256_storeu_ps(y + i, vx2_sigmoid_mul(v, _mm256_mul_ps(a, v)));
            }
            break;
        }
        default:
            return;
    }
    if (i < n) {
        float tx[8] = { 0 }, ty[8];
        for (int64_t j = i; j < n; j++) tx[j - i] = x[j];
        vx2_unary(kind, 8, ty, tx);
        for (int64_t j = i; j < n; j++) y[j] = ty[j - i];
    }
}

// adds the 8 float products (already in float) to the double accumulators
VX2_INLINE void vx2_acc_pd(__m256d * a0, __m256d * a1, __m256 v) {
    *a0 = _mm256_add_pd(*a0, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    *a1 = _mm256_add_pd(*a1, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

VX2_INLINE double vx2_hsum_pd(__m256d a) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

VX2 static double vx2_sum_sq(int64_t n, const float * x) {
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd(), a2 = _mm256_setzero_pd(), a3 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        vx2_acc_pd(&a0, &a1, _mm256_mul_ps(v0, v0));
        vx2_acc_pd(&a2, &a3, _mm256_mul_ps(v1, v1));
    }
    double s = vx2_hsum_pd(_mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
    for (; i < n; i++) {
        s += (double) (x[i] * x[i]);
    }
    return s;
}

VX2 static double vx2_sum(int64_t n, const float * x) {
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd(), a2 = _mm256_setzero_pd(), a3 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        vx2_acc_pd(&a0, &a1, _mm256_loadu_ps(x + i));
        vx2_acc_pd(&a2, &a3, _mm256_loadu_ps(x + i + 8));
    }
    double s = vx2_hsum_pd(_mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
    for (; i < n; i++) {
        s += (double) x[i];
    }
    return s;
}

VX2 static double vx2_sub_sum_sq(int64_t n, float * y, const float * x, float m) {
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    const __m256 vm = _mm256_set1_ps(m);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_sub_ps(_mm256_loadu_ps(x + i), vm);
        _mm256_storeu_ps(y + i, v);
        vx2_acc_pd(&a0, &a1, _mm256_mul_ps(v, v));
    }
    double s = vx2_hsum_pd(_mm256_add_pd(a0, a1));
    for (; i < n; i++) {
        const float v = x[i] - m;
        y[i] = v;
        s += (double) (v * v);
    }
    return s;
}

VX2 static void vx2_scale(int64_t n, float * y, const float * x, float s) {
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vs));
    }
    for (; i < n; i++) {
        y[i] = x[i] * s;
    }
}

VX2 static float vx2_scale_mask_max(int64_t n, float * w, const float * x, float scale, const float * mask) {
    const __m256 vs = _mm256_set1_ps(scale);
    __m256 vmax = _mm256_set1_ps(-INFINITY);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(x + i), vs);
        if (mask != NULL) {
            v = _mm256_add_ps(v, _mm256_loadu_ps(mask + i));
        }
        _mm256_storeu_ps(w + i, v);
        vmax = _mm256_max_ps(vmax, v);
    }
    __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
    m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
    m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
    float max = _mm_cvtss_f32(m4);
    for (; i < n; i++) {
        float v = x[i] * scale;
        if (mask != NULL) {
            v += mask[i];
        }
        w[i] = v;
        max = max > v ? max : v;
    }
    return max;
}

// exp of the fp16-rounded argument, rounded to fp16, computed (not looked up): equal to the fp16
// table of vec.c for every one of the 65536 fp16 arguments (test-vec checks them all); the table
// is cold in a decode step (see vec-avx512.c)
VX2_INLINE __m256 vx2_exp_f16(__m128i h) {
    const __m256 a = _mm256_cvtph_ps(h);
    const __m128i eh = _mm256_cvtps_ph(vx2_exp(a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm256_blendv_ps(_mm256_cvtph_ps(eh), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q)); // NaN stays NaN
}

// the softmax exp of 8 values w against max (-inf -> 0)
VX2_INLINE __m256 vx2_softmax_exp(__m256 v, __m256 vmax) {
    const __m128i h = _mm256_cvtps_ph(_mm256_sub_ps(v, vmax), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    return _mm256_andnot_ps(_mm256_cmp_ps(v, _mm256_set1_ps(-INFINITY), _CMP_EQ_OQ), vx2_exp_f16(h));
}

VX2 static double vx2_exp_sum(int64_t n, float * w, float max) {
    const __m256 vmax = _mm256_set1_ps(max);
    __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = vx2_softmax_exp(_mm256_loadu_ps(w + i), vmax);
        _mm256_storeu_ps(w + i, e);
        vx2_acc_pd(&a0, &a1, e);
    }
    double s = vx2_hsum_pd(_mm256_add_pd(a0, a1));
    if (i < n) {
        // the tail through a padded vector (lanes past n are -inf: exp 0, not stored)
        float tail[8];
        for (int j = 0; j < 8; j++) {
            tail[j] = i + j < n ? w[i + j] : -INFINITY;
        }
        _mm256_storeu_ps(tail, vx2_softmax_exp(_mm256_loadu_ps(tail), vmax));
        for (int64_t j = i; j < n; j++) {
            w[j] = tail[j - i];
            s += (double) tail[j - i];
        }
    }
    return s;
}

// the fp16 table lookup of vec.h for 8 values: rounded to fp16 (vcvtps2ph, nearest even: the
// scalar conversion's rounding, NaN included), 8 entries gathered (4 bytes each, the entry in the
// low half), packed and widened back to float
VX2_INLINE __m256 vx2_lookup8(__m256 v, const ggml_fp16_t * table, __m256 vlo, __m256 vhi) {
    const __m256i idx = _mm256_cvtepu16_epi32(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m256i g = _mm256_and_si256(_mm256_i32gather_epi32((const int *) table, idx, 2), _mm256_set1_epi32(0xffff));
    const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(g, g), 0x08); // lanes 0..7 in the low half
    __m256 r = _mm256_cvtph_ps(_mm256_castsi256_si128(p));
    r = _mm256_andnot_ps(_mm256_cmp_ps(v, vlo, _CMP_LE_OQ), r);
    return _mm256_blendv_ps(r, v, _mm256_cmp_ps(v, vhi, _CMP_GE_OQ));
}

VX2 static void vx2_lookup_f16(int64_t n, float * y, const float * x, const ggml_fp16_t * table, float lo, float hi) {
    const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, vx2_lookup8(_mm256_loadu_ps(x + i), table, vlo, vhi));
    }
    if (i < n) { // the tail through a padded vector
        float tail[8] = { 0 };
        memcpy(tail, x + i, sizeof(float) * (size_t) (n - i));
        _mm256_storeu_ps(tail, vx2_lookup8(_mm256_loadu_ps(tail), table, vlo, vhi));
        memcpy(y + i, tail, sizeof(float) * (size_t) (n - i));
    }
}

// c * tanh(x / c) (vec.h softcap): t = x * (1 / c), tanh |t| = (1 - e) / (1 + e) with
// e = exp(-2|t|) (0 past |t| of 43.5: tanh 1; the division by 1 + e in [1, 2] as an approximate
// reciprocal and one Newton step), the sign of t put back; a NaN t stays NaN
VX2_INLINE __m256 vx2_softcap8(__m256 v, __m256 vc, __m256 vinv) {
    const __m256 one = _mm256_set1_ps(1.0f), sign = _mm256_set1_ps(-0.0f);
    const __m256 t = _mm256_mul_ps(v, vinv);
    const __m256 e = vx2_exp(_mm256_mul_ps(_mm256_andnot_ps(sign, t), _mm256_set1_ps(-2.0f)));
    const __m256 d = _mm256_add_ps(one, e);
    const __m256 r0 = _mm256_rcp_ps(d);
    const __m256 rd = _mm256_mul_ps(r0, _mm256_fnmadd_ps(d, r0, _mm256_set1_ps(2.0f)));
    __m256 r = _mm256_mul_ps(_mm256_sub_ps(one, e), rd);
    r = _mm256_or_ps(r, _mm256_and_ps(t, sign));
    r = _mm256_blendv_ps(r, t, _mm256_cmp_ps(t, t, _CMP_UNORD_Q));
    return _mm256_mul_ps(vc, r);
}

VX2 static void vx2_softcap(int64_t n, float * y, const float * x, float c) {
    const __m256 vc = _mm256_set1_ps(c), vinv = _mm256_set1_ps(1.0f / c);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, vx2_softcap8(_mm256_loadu_ps(x + i), vc, vinv));
    }
    if (i < n) { // the tail through a padded vector
        float tail[8] = { 0 };
        memcpy(tail, x + i, sizeof(float) * (size_t) (n - i));
        _mm256_storeu_ps(tail, vx2_softcap8(_mm256_loadu_ps(tail), vc, vinv));
        memcpy(y + i, tail, sizeof(float) * (size_t) (n - i));
    }
}

void ggml_x_vec_kernels_avx2(struct ggml_x_vec_kernels * k);

void ggml_x_vec_kernels_avx2(struct ggml_x_vec_kernels * k) {
    k->unary          = vx2_unary;
    k->sum_sq         = vx2_sum_sq;
    k->sum            = vx2_sum;
    k->sub_sum_sq     = vx2_sub_sum_sq;
    k->scale          = vx2_scale;
    k->scale_mask_max = vx2_scale_mask_max;
    k->exp_sum        = vx2_exp_sum;
    k->lookup_f16     = vx2_lookup_f16;
    k->softcap        = vx2_softcap;
}

#endif // __x86_64__
