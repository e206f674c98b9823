// gemm-avx2.c - AVX2 + FMA + F16C float GEMM kernels: a 16 x 6 micro-kernel (12 ymm
// accumulators), W panel packing with 8 x 8 in-register transposes, and the F32 / F16 row dot
// products. Compiled with target attributes; used only after run-time detection.

#if defined(__x86_64__)

#include "cpu/gemm.h"
#include "cpu/prefetch.h"

#include <immintrin.h>

#define GX2 __attribute__((target("avx2,fma,f16c")))
#define GX2_INLINE GX2 __attribute__((always_inline)) static inline

#define MR 16
#define NR 6
#define PACK_PF 128 // elements ahead

// lane mask for rows [base, base + 8) of n_rows
GX2_INLINE __m256i row_mask(int n_rows, int base) {
    const __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n_rows - base), idx);
}

GX2_INLINE void micro_body(int64_t kc, const float * a, const float * b, float * c, int64_t ldc,
                           const int nr, int n_rows, bool acc) {
    __m256 c0[NR], c1[NR];
    const bool full = n_rows == MR;
    const __m256i m0 = row_mask(n_rows, 0), m1 = row_mask(n_rows, 8);
#pragma GCC unroll 6
    for (int j = 0; j < nr; j++) {
        if (acc) {
            c0[j] = full ? _mm256_loadu_ps(c + j*ldc)     : _mm256_maskload_ps(c + j*ldc, m0);
            c1[j] = full ? _mm256_loadu_ps(c + j*ldc + 8) : _mm256_maskload_ps(c + j*ldc + 8, m1);
        } else {
            c0[j] = _mm256_setzero_ps();
            c1[j] = _mm256_setzero_ps();
        }
    }
    for (int64_t k = 0; k < kc; k++) {
        const __m256 a0 = _mm256_load_ps(a);
        const __m256 a1 = _mm256_load_ps(a + 8);
#pragma GCC unroll 6
        for (int j = 0; j < nr; j++) {
            const __m256 bj = _mm256_broadcast_ss(b + j);
            c0[j] = _mm256_fmadd_ps(a0, bj, c0[j]);
            c1[j] = _mm256_fmadd_ps(a1, bj, c1[j]);
        }
        a += MR;
        b += NR;
    }
#pragma GCC unroll 6
    for (int j = 0; j < nr; j++) {
        if (full) {
            _mm256_storeu_ps(c + j*ldc, c0[j]);
            _mm256_storeu_ps(c + j*ldc + 8, c1[j]);
        } else {
            _mm256_maskstore_ps(c + j*ldc, m0, c0[j]);
            _mm256_maskstore_ps(c + j*ldc + 8, m1, c1[j]);
        }
    }
}

GX2 static void micro_16x6(int64_t kc, const float * a, const float * b, float * c, int64_t ldc,
                           int nr, int n_rows, bool acc) {
    switch (nr) {
        case 6:  micro_body(kc, a, b, c, ldc, 6, n_rows, acc); break;
        case 5:  micro_body(kc, a, b, c, ldc, 5, n_rows, acc); break;
        case 4:  micro_body(kc, a, b, c, ldc, 4, n_rows, acc); break;
        case 3:  micro_body(kc, a, b, c, ldc, 3, n_rows, acc); break;
        case 2:  micro_body(kc, a, b, c, ldc, 2, n_rows, acc); break;
        default: micro_body(kc, a, b, c, ldc, 1, n_rows, acc); break;
    }
}

// r[i] (row i, 8 consecutive k) -> r[c] (column c: the 8 rows at k = c)
GX2_INLINE void transpose8(__m256 r[8]) {
    __m256 t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2*i]     = _mm256_unpacklo_ps(r[2*i], r[2*i + 1]);
        t[2*i + 1] = _mm256_unpackhi_ps(r[2*i], r[2*i + 1]);
    }
    for (int g = 0; g < 2; g++) {
        const __m256d t0 = _mm256_castps_pd(t[4*g]),     t1 = _mm256_castps_pd(t[4*g + 1]);
        const __m256d t2 = _mm256_castps_pd(t[4*g + 2]), t3 = _mm256_castps_pd(t[4*g + 3]);
        u[4*g]     = _mm256_castpd_ps(_mm256_unpacklo_pd(t0, t2));
        u[4*g + 1] = _mm256_castpd_ps(_mm256_unpackhi_pd(t0, t2));
        u[4*g + 2] = _mm256_castpd_ps(_mm256_unpacklo_pd(t1, t3));
        u[4*g + 3] = _mm256_castpd_ps(_mm256_unpackhi_pd(t1, t3));
    }
    for (int q = 0; q < 4; q++) {
        r[q]     = _mm256_permute2f128_ps(u[q], u[4 + q], 0x20);
        r[4 + q] = _mm256_permute2f128_ps(u[q], u[4 + q], 0x31);
    }
}

GX2_INLINE void pack_a_body(const void * w, size_t nb1, int n_rows, int64_t k0, int64_t kc, float * a, const bool f16) {
    int64_t k = 0;
    if (n_rows == MR) {
        const size_t es = f16 ? sizeof(ggml_fp16_t) : sizeof(float);
        for (; k + 8 <= kc; k += 8) {
            for (int h = 0; h < 2; h++) {
                __m256 r[8];
                for (int i = 0; i < 8; i++) {
                    const char * row = (const char *) w + (size_t) (8*h + i) * nb1;
                    if (((k0 + k) * es) % 64 == 0) {
                        // stream the rows ahead of the transposes (a few cache lines per row)
                        __builtin_prefetch(row + (size_t) (k0 + k + PACK_PF) * es, 0, 3);
                    }
                    if (f16) {
                        r[i] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) ((const ggml_fp16_t *) row + k0 + k)));
                    } else {
                        r[i] = _mm256_loadu_ps((const float *) row + k0 + k);
                    }
                }
                transpose8(r);
                for (int c = 0; c < 8; c++) {
                    _mm256_store_ps(a + (k + c)*MR + 8*h, r[c]);
                }
            }
        }
    }
    if (k < kc) {
        for (int i = 0; i < MR; i++) {
            const char * row = (const char *) w + (size_t) i * nb1;
            for (int64_t kk = k; kk < kc; kk++) {
                float v = 0.0f;
                if (i < n_rows) {
                    v = f16 ? GGML_FP16_TO_FP32(((const ggml_fp16_t *) row)[k0 + kk]) : ((const float *) row)[k0 + kk];
                }
                a[kk*MR + i] = v;
            }
        }
    }
}

GX2 static void pack_a_f32(const void * w, size_t nb1, int n_rows, int64_t k0, int64_t kc, float * a) {
    pack_a_body(w, nb1, n_rows, k0, kc, a, false);
}

GX2 static void pack_a_f16(const void * w, size_t nb1, int n_rows, int64_t k0, int64_t kc, float * a) {
    pack_a_body(w, nb1, n_rows, k0, kc, a, true);
}

GX2_INLINE float hsum8(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

GX2_INLINE __m256 ld8(const void * p, int i, const bool f16) {
    return f16 ? _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *) ((const ggml_fp16_t *) p + i)))
               : _mm256_loadu_ps((const float *) p + i);
}

// both rows F32 or both F16 (products and sums in F32)
GX2_INLINE float dot_body(int n, const void * x, const void * y, const bool f16) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const size_t es = f16 ? sizeof(ggml_fp16_t) : sizeof(float);
    const size_t far = ggml_x_far_distance((size_t) n * es);
    int i = 0;
    for (; i + 32 <= n; i += 32) {
        ggml_x_prefetch_far((const char *) x + (size_t) i * es, far, 32 * es);
        s0 = _mm256_fmadd_ps(ld8(x, i,      f16), ld8(y, i,      f16), s0);
        s1 = _mm256_fmadd_ps(ld8(x, i + 8,  f16), ld8(y, i + 8,  f16), s1);
        s2 = _mm256_fmadd_ps(ld8(x, i + 16, f16), ld8(y, i + 16, f16), s2);
        s3 = _mm256_fmadd_ps(ld8(x, i + 24, f16), ld8(y, i + 24, f16), s3);
    }
    for (; i + 8 <= n; i += 8) {
        s0 = _mm256_fmadd_ps(ld8(x, i, f16), ld8(y, i, f16), s0);
    }
    float sum = hsum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < n; i++) {
        if (f16) {
            sum += GGML_FP16_TO_FP32(((const ggml_fp16_t *) x)[i]) * GGML_FP16_TO_FP32(((const ggml_fp16_t *) y)[i]);
        } else {
            sum += ((const float *) x)[i] * ((const float *) y)[i];
        }
    }
    return sum;
}

GX2 static void dot_f32(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y) {
    *s = dot_body(n, x, y, false);
}

GX2 static void dot_f16(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y) {
    *s = dot_body(n, x, y, true);
}

void ggml_x_gemm_kernels_avx2(struct ggml_x_gemm_kernels * k) {
    k->mr         = MR;
    k->nr         = NR;
    k->micro      = micro_16x6;
    k->pack_a_f32 = pack_a_f32;
    k->pack_a_f16 = pack_a_f16;
    k->dot_f32    = dot_f32;
    k->dot_f16    = dot_f16;
}

#endif // __x86_64__
