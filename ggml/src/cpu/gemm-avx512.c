// gemm-avx512.c - AVX-512 float GEMM kernels: a 32 x 12 micro-kernel (24 zmm accumulators),
// W panel packing with 16 x 16 in-register transposes (F16 converted on the way), and the F32 /
// F16 row dot products. Compiled with target attributes; used only after run-time detection.

#if defined(__x86_64__)

#include "cpu/gemm.h"
#include "cpu/prefetch.h"

#include <immintrin.h>

#define GX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,f16c")))
#define GX512_INLINE GX512 __attribute__((always_inline)) static inline

#define MR 32
#define NR 12
#define PACK_PF 128 // elements ahead

// ---------------------------------------------------------------------------------------------
// micro-kernel

GX512_INLINE void micro_body(int64_t kc, const float * a, const float * b, float * c, int64_t ldc,
                             const int nr, __mmask16 m0, __mmask16 m1, bool acc) {
    __m512 c0[NR], c1[NR];
#pragma GCC unroll 12
    for (int j = 0; j < nr; j++) {
        if (acc) {
            c0[j] = _mm512_maskz_loadu_ps(m0, c + j*ldc);
            c1[j] = _mm512_maskz_loadu_ps(m1, c + j*ldc + 16);
        } else {
            c0[j] = _mm512_setzero_ps();
            c1[j] = _mm512_setzero_ps();
        }
    }
    for (int64_t k = 0; k < kc; k++) {
        const __m512 a0 = _mm512_load_ps(a);
        const __m512 a1 = _mm512_load_ps(a + 16);
#pragma GCC unroll 12
        for (int j = 0; j < nr; j++) {
            const __m512 bj = _mm512_set1_ps(b[j]);
            c0[j] = _mm512_fmadd_ps(a0, bj, c0[j]);
            c1[j] = _mm512_fmadd_ps(a1, bj, c1[j]);
        }
        a += MR;
        b += NR;
    }
#pragma GCC unroll 12
    for (int j = 0; j < nr; j++) {
        _mm512_mask_storeu_ps(c + j*ldc, m0, c0[j]);
        _mm512_mask_storeu_ps(c + j*ldc + 16, m1, c1[j]);
    }
}

GX512 static void micro_32x12(int64_t kc, const float * a, const float * b, float * c, int64_t ldc,
                              int nr, int n_rows, bool acc) {
    const __mmask16 m0 = n_rows >= 16 ? (__mmask16) 0xffff : (__mmask16) ((1u << n_rows) - 1);
    const __mmask16 m1 = n_rows >= 32 ? (__mmask16) 0xffff : n_rows <= 16 ? 0 : (__mmask16) ((1u << (n_rows - 16)) - 1);
    switch (nr) {
        case 12: micro_body(kc, a, b, c, ldc, 12, m0, m1, acc); break;
        case 11: micro_body(kc, a, b, c, ldc, 11, m0, m1, acc); break;
        case 10: micro_body(kc, a, b, c, ldc, 10, m0, m1, acc); break;
        case 9:  micro_body(kc, a, b, c, ldc, 9,  m0, m1, acc); break;
        case 8:  micro_body(kc, a, b, c, ldc, 8,  m0, m1, acc); break;
        case 7:  micro_body(kc, a, b, c, ldc, 7,  m0, m1, acc); break;
        case 6:  micro_body(kc, a, b, c, ldc, 6,  m0, m1, acc); break;
        case 5:  micro_body(kc, a, b, c, ldc, 5,  m0, m1, acc); break;
        case 4:  micro_body(kc, a, b, c, ldc, 4,  m0, m1, acc); break;
        case 3:  micro_body(kc, a, b, c, ldc, 3,  m0, m1, acc); break;
        case 2:  micro_body(kc, a, b, c, ldc, 2,  m0, m1, acc); break;
        default: micro_body(kc, a, b, c, ldc, 1,  m0, m1, acc); break;
    }
}

// ---------------------------------------------------------------------------------------------
// packing

// r[i] (row i, 16 consecutive k) -> r[c] (column c: the 16 rows at k = c)
GX512_INLINE void transpose16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 8; i++) {
        t[2*i]     = _mm512_unpacklo_ps(r[2*i], r[2*i + 1]);
        t[2*i + 1] = _mm512_unpackhi_ps(r[2*i], r[2*i + 1]);
    }
    // u[4g + q], 128-bit lane L: rows 4g..4g+3 at column 4L + q
    __m512 u[16];
    for (int g = 0; g < 4; g++) {
        const __m512d t0 = _mm512_castps_pd(t[4*g]),     t1 = _mm512_castps_pd(t[4*g + 1]);
        const __m512d t2 = _mm512_castps_pd(t[4*g + 2]), t3 = _mm512_castps_pd(t[4*g + 3]);
        u[4*g]     = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
        u[4*g + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
        u[4*g + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
        u[4*g + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
    }
    // column 4L + q = lane L of u[q], u[4 + q], u[8 + q], u[12 + q]
    for (int q = 0; q < 4; q++) {
        const __m512 s0 = _mm512_shuffle_f32x4(u[q],     u[4 + q],  0x44);
        const __m512 s1 = _mm512_shuffle_f32x4(u[q],     u[4 + q],  0xee);
        const __m512 s2 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0x44);
        const __m512 s3 = _mm512_shuffle_f32x4(u[8 + q], u[12 + q], 0xee);
        r[q]      = _mm512_shuffle_f32x4(s0, s2, 0x88);
        r[4 + q]  = _mm512_shuffle_f32x4(s0, s2, 0xdd);
        r[8 + q]  = _mm512_shuffle_f32x4(s1, s3, 0x88);
        r[12 + q] = _mm512_shuffle_f32x4(s1, s3, 0xdd);
    }
}

GX512_INLINE void pack_a_body(const void * w, size_t nb1, int n_rows, int64_t k0, int64_t kc, float * a, const bool f16) {
    int64_t k = 0;
    if (n_rows == MR) {
        const size_t es = f16 ? sizeof(ggml_fp16_t) : sizeof(float);
        for (; k + 16 <= kc; k += 16) {
            for (int h = 0; h < 2; h++) {
                __m512 r[16];
                for (int i = 0; i < 16; i++) {
                    const char * row = (const char *) w + (size_t) (16*h + i) * nb1;
                    // stream the rows ahead of the transposes (a few cache lines per row)
                    __builtin_prefetch(row + (size_t) (k0 + k + PACK_PF) * es, 0, 3);
                    if (f16) {
                        r[i] = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) ((const ggml_fp16_t *) row + k0 + k)));
                    } else {
                        r[i] = _mm512_loadu_ps((const float *) row + k0 + k);
                    }
                }
                transpose16(r);
                for (int c = 0; c < 16; c++) {
                    _mm512_store_ps(a + (k + c)*MR + 16*h, r[c]);
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

GX512 static void pack_a_f32(const void * w, size_t nb1, int n_rows, int64_t k0, int64_t kc, float * a) {
    pack_a_body(w, nb1, n_rows, k0, kc, a, false);
}

GX512 static void pack_a_f16(const void * w, size_t nb1, int n_rows, int64_t k0, int64_t kc, float * a) {
    pack_a_body(w, nb1, n_rows, k0, kc, a, true);
}

// ---------------------------------------------------------------------------------------------
// dot products (4 accumulators of 16 lanes, a fixed reduction order)

GX512_INLINE __m512 ld16(const void * p, int i, const bool f16) {
    return f16 ? _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *) ((const ggml_fp16_t *) p + i)))
               : _mm512_loadu_ps((const float *) p + i);
}

GX512_INLINE __m512 ld16_tail(const void * p, int i, __mmask16 m, const bool f16) {
    return f16 ? _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const ggml_fp16_t *) p + i))
               : _mm512_maskz_loadu_ps(m, (const float *) p + i);
}

// both rows F32 or both F16 (products and sums in F32)
GX512_INLINE float dot_body(int n, const void * x, const void * y, const bool f16) {
    __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    const size_t es = f16 ? sizeof(ggml_fp16_t) : sizeof(float);
    const size_t far = ggml_x_far_distance((size_t) n * es);
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        ggml_x_prefetch_far((const char *) x + (size_t) i * es, far, 64 * es);
        s0 = _mm512_fmadd_ps(ld16(x, i,      f16), ld16(y, i,      f16), s0);
        s1 = _mm512_fmadd_ps(ld16(x, i + 16, f16), ld16(y, i + 16, f16), s1);
        s2 = _mm512_fmadd_ps(ld16(x, i + 32, f16), ld16(y, i + 32, f16), s2);
        s3 = _mm512_fmadd_ps(ld16(x, i + 48, f16), ld16(y, i + 48, f16), s3);
    }
    for (; i + 16 <= n; i += 16) {
        s0 = _mm512_fmadd_ps(ld16(x, i, f16), ld16(y, i, f16), s0);
    }
    if (i < n) {
        const __mmask16 m = (__mmask16) ((1u << (n - i)) - 1);
        s1 = _mm512_fmadd_ps(ld16_tail(x, i, m, f16), ld16_tail(y, i, m, f16), s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

GX512 static void dot_f32(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y) {
    *s = dot_body(n, x, y, false);
}

GX512 static void dot_f16(int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y) {
    *s = dot_body(n, x, y, true);
}

void ggml_x_gemm_kernels_avx512(struct ggml_x_gemm_kernels * k) {
    k->mr         = MR;
    k->nr         = NR;
    k->micro      = micro_32x12;
    k->pack_a_f32 = pack_a_f32;
    k->pack_a_f16 = pack_a_f16;
    k->dot_f32    = dot_f32;
    k->dot_f16    = dot_f16;
}

#endif // __x86_64__
