// vec-avx512.c - AVX-512 (F/BW/VL/DQ) row kernels of vec.h: the AVX2 file's formulas on 16
// lanes, tails under a lane mask. Compiled with target attributes; used only after run-time
// detection.

#if defined(__x86_64__)

#include "cpu/vec.h"

#include <immintrin.h>
#include <math.h>

#define VX5 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#define VX5_INLINE VX5 __attribute__((always_inline)) static inline

VX5_INLINE __mmask16 vx5_tail(int64_t left) {
    return left >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << left) - 1u);
}

// exp(x) in float, as vx2_exp (vec-avx2.c): n*ln2 + r, degree-7 Taylor polynomial, 2^n scaled
// with scalef; above 88: +inf, below -87: 0
VX5_INLINE __m512 vx5_exp(__m512 x) {
    const __m512 hi = _mm512_set1_ps(88.0f), lo = _mm512_set1_ps(-87.0f);
    const __mmask16 over = _mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ);
    const __mmask16 under = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
    const __m512 xc = _mm512_max_ps(_mm512_min_ps(x, hi), lo);
    const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(1.44269504088896341f)),
                                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), xc);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
    const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    __m512 y = _mm512_mul_ps(p, _mm512_castsi512_ps(e));
    y = _mm512_mask_mov_ps(y, over, _mm512_set1_ps(INFINITY));
    return _mm512_maskz_mov_ps((__mmask16) ~under, y);
}

VX5_INLINE __m512 vx5_sigmoid_mul(__m512 x, __m512 ax) {
    const __m512 e = vx5_exp(_mm512_sub_ps(_mm512_setzero_ps(), ax));
    return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
}

VX5 static void vx5_unary(int kind, int64_t n, float * y, const float * x) {
    const __m512 c2 = _mm512_set1_ps(2.0f * 0.79788456080286535588f);
    const __m512 c3 = _mm512_set1_ps(0.044715f);
    const __m512 aq = _mm512_set1_ps(1.702f);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = vx5_tail(n - i);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        __m512 r;
        switch (kind) {
            case GGML_X_VEC_SILU:
                r = vx5_sigmoid_mul(v, v);
                break;
            case GGML_X_VEC_GELU: {
                const __m512 v3 = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
                r = vx5_sigmoid_mul(v, _mm512_mul_ps(c2, _mm512_fmadd_ps(c3, v3, v)));
                break;
            }
            case GGML_X_VEC_GELU_QUICK:
                r = vx5_sigmoid_mul(v, _mm512_mul_ps(aq, v));
                break;
            default:
                return;
        }
        _mm512_mask_storeu_ps(y + i, m, r);
    }
}

VX5_INLINE void vx5_acc_pd(__m512d * a0, __m512d * a1, __m512 v) {
    *a0 = _mm512_add_pd(*a0, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
    *a1 = _mm512_add_pd(*a1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}

VX5 static double vx5_sum_sq(int64_t n, const float * x) {
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; i += 16) {
        const __m512 v = _mm512_maskz_loadu_ps(vx5_tail(n - i), x + i);
        vx5_acc_pd(&a0, &a1, _mm512_mul_ps(v, v));
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
}

VX5 static double vx5_sum(int64_t n, const float * x) {
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; i += 16) {
        vx5_acc_pd(&a0, &a1, _mm512_maskz_loadu_ps(vx5_tail(n - i), x + i));
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
}

VX5 static double vx5_sub_sum_sq(int64_t n, float * y, const float * x, float m) {
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
    const __m512 vm = _mm512_set1_ps(m);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = vx5_tail(n - i);
        const __m512 v = _mm512_maskz_sub_ps(k, _mm512_maskz_loadu_ps(k, x + i), vm);
        _mm512_mask_storeu_ps(y + i, k, v);
        vx5_acc_pd(&a0, &a1, _mm512_mul_ps(v, v));
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
}

VX5 static void vx5_scale(int64_t n, float * y, const float * x, float s) {
    const __m512 vs = _mm512_set1_ps(s);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = vx5_tail(n - i);
        _mm512_mask_storeu_ps(y + i, k, _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), vs));
    }
}

VX5 static float vx5_scale_mask_max(int64_t n, float * w, const float * x, float scale, const float * mask) {
    const __m512 vs = _mm512_set1_ps(scale);
    const __m512 ninf = _mm512_set1_ps(-INFINITY);
    __m512 vmax = ninf;
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = vx5_tail(n - i);
        __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(k, x + i), vs);
        if (mask != NULL) {
            v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(k, mask + i));
        }
        _mm512_mask_storeu_ps(w + i, k, v);
        vmax = _mm512_mask_max_ps(vmax, k, vmax, v);
    }
    return _mm512_reduce_max_ps(vmax);
}

// exp of the fp16-rounded argument, rounded to fp16, computed (not looked up): equal to the fp16
// table of vec.c for every one of the 65536 fp16 arguments (test-vec checks them all). In a
// decode step the weights stream through every cache level between two softmaxes, so the 256 KiB
// table is cold each time and its gathers cost more than the polynomial.
VX5_INLINE __m512 vx5_exp_f16(__m256i h) {
    const __m512 a = _mm512_cvtph_ps(h);
    const __m256i eh = _mm512_cvtps_ph(vx5_exp(a), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 e = _mm512_cvtph_ps(eh);
    return _mm512_mask_mov_ps(e, _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a); // NaN stays NaN
}

VX5 static double vx5_exp_sum(int64_t n, float * w, float max) {
    const __m512 vmax = _mm512_set1_ps(max), ninf = _mm512_set1_ps(-INFINITY);
    __m512d a0 = _mm512_setzero_pd(), a1 = _mm512_setzero_pd();
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 k = vx5_tail(n - i);
        const __m512 v = _mm512_maskz_loadu_ps(k, w + i);
        const __m256i h = _mm512_cvtps_ph(_mm512_sub_ps(v, vmax), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __mmask16 live = k & ~_mm512_cmp_ps_mask(v, ninf, _CMP_EQ_OQ);
        const __m512 e = _mm512_maskz_mov_ps(live, vx5_exp_f16(h));
        _mm512_mask_storeu_ps(w + i, k, e);
        vx5_acc_pd(&a0, &a1, e);
    }
    return _mm512_reduce_add_pd(_mm512_add_pd(a0, a1));
}

// the fp16 table lookup of vec.h, 16 at a time as vx2_lookup_f16 (vec-avx2.c); lanes past n
// look up entry 0 and are not stored
VX5 static void vx5_lookup_f16(int64_t n, float * y, const float * x, const ggml_fp16_t * table, float lo, float hi) {
    const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = vx5_tail(n - i);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        const __m512i idx = _mm512_cvtepu16_epi32(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        const __m512i g = _mm512_i32gather_epi32(idx, (const void *) table, 2);
        __m512 r = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(g)); // the low half of each gathered lane
        r = _mm512_maskz_mov_ps((__mmask16) ~_mm512_cmp_ps_mask(v, vlo, _CMP_LE_OQ), r);
        r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(v, vhi, _CMP_GE_OQ), v);
        _mm512_mask_storeu_ps(y + i, m, r);
    }
}

// c * tanh(x / c), 16 at a time as vx2_softcap (vec-avx2.c)
VX5 static void vx5_softcap(int64_t n, float * y, const float * x, float c) {
    const __m512 vc = _mm512_set1_ps(c), vinv = _mm512_set1_ps(1.0f / c);
    const __m512 one = _mm512_set1_ps(1.0f), sign = _mm512_set1_ps(-0.0f);
    for (int64_t i = 0; i < n; i += 16) {
        const __mmask16 m = vx5_tail(n - i);
        const __m512 t = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vinv);
        const __m512 e = vx5_exp(_mm512_mul_ps(_mm512_andnot_ps(sign, t), _mm512_set1_ps(-2.0f)));
        const __m512 d = _mm512_add_ps(one, e);
        const __m512 r0 = _mm512_rcp14_ps(d);
        const __m512 rd = _mm512_mul_ps(r0, _mm512_fnmadd_ps(d, r0, _mm512_set1_ps(2.0f))); // 1 / d
        __m512 r = _mm512_mul_ps(_mm512_sub_ps(one, e), rd);
        r = _mm512_or_ps(r, _mm512_and_ps(t, sign));
        r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(t, t, _CMP_UNORD_Q), t);
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(vc, r));
    }
}

void ggml_x_vec_kernels_avx512(struct ggml_x_vec_kernels * k);

void ggml_x_vec_kernels_avx512(struct ggml_x_vec_kernels * k) {
    k->unary          = vx5_unary;
    k->sum_sq         = vx5_sum_sq;
    k->sum            = vx5_sum;
    k->sub_sum_sq     = vx5_sub_sum_sq;
    k->scale          = vx5_scale;
    k->scale_mask_max = vx5_scale_mask_max;
    k->exp_sum        = vx5_exp_sum;
    k->lookup_f16     = vx5_lookup_f16;
    k->softcap        = vx5_softcap;
}

#endif // __x86_64__
