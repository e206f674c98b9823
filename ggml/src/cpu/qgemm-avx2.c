// qgemm-avx2.c - AVX2 int8 GEMM micro-kernels (layouts in qgemm.c): 8 W rows (one ymm of
// dwords) x up to 4 X columns, with vpmaddubsw + vpmaddwd. Products of unsigned W bytes and
// signed activations: Q4_0 nibbles (pair sums stay far below the int16 limit), Q8_0 signed
// weights through the sign trick |w| * (x with the sign of w), and Q4_K nibbles whose pair sums
// are multiplied by the sub-block scale in vpmaddwd.

#if defined(__x86_64__)

#include "cpu/gemm.h"

#include <immintrin.h>

#define GX2 __attribute__((target("avx2,fma,f16c")))
#define GX2_INLINE GX2 __attribute__((always_inline)) static inline

#define R 8
#define C 4

GX2_INLINE __m256i bcast32(const uint8_t * p) {
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return _mm256_set1_epi32(v);
}

GX2_INLINE void store_cols(float * d, int64_t ldd, const __m256 * acc, const int nc, int n_rows) {
    if (n_rows >= R) {
        #pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            _mm256_storeu_ps(d + c*ldd, acc[c]);
        }
        return;
    }
    const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(n_rows), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    #pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        _mm256_maskstore_ps(d + c*ldd, m, acc[c]);
    }
}

// Q4_0 (signed8 = false) and signed Q8_0 (signed8 = true)
GX2_INLINE void q32_body(int nblk, const uint8_t * wp, const uint8_t * xp, float * d, int64_t ldd,
                         const int nc, int n_rows, const bool signed8) {
    __m256 acc[C];
    #pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm256_setzero_ps();
    }
    const __m256i ones = _mm256_set1_epi16(1);
    for (int b = 0; b < nblk; b++) {
        const uint8_t * wb = wp + (size_t) b * (36*R);
        const uint8_t * xb = xp + (size_t) b * (40*C);
        __m256i s[C];
        #pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            s[c] = bcast32(xb + 36*C + 4*c);
        }
        #pragma GCC unroll 8
        for (int g = 0; g < 8; g++) {
            const __m256i w = _mm256_load_si256((const __m256i *) (wb + 32*g));
            const __m256i aw = signed8 ? _mm256_abs_epi8(w) : w;
            #pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                __m256i x = bcast32(xb + 32*c + 4*g);
                if (signed8) {
                    x = _mm256_sign_epi8(x, w);
                }
                s[c] = _mm256_add_epi32(s[c], _mm256_madd_epi16(_mm256_maddubs_epi16(aw, x), ones));
            }
        }
        const __m256 dw = _mm256_load_ps((const float *) (wb + 32*R));
        #pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            float dx;
            memcpy(&dx, xb + 32*C + 4*c, sizeof(dx));
            acc[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s[c]), _mm256_mul_ps(dw, _mm256_set1_ps(dx)), acc[c]);
        }
    }
    store_cols(d, ldd, acc, nc, n_rows);
}

GX2_INLINE void q4_0_body(int nblk, const uint8_t * wp, const uint8_t * xp, float * d, int64_t ldd, const int nc, int n_rows) {
    q32_body(nblk, wp, xp, d, ldd, nc, n_rows, false);
}

GX2_INLINE void q8_0_body(int nblk, const uint8_t * wp, const uint8_t * xp, float * d, int64_t ldd, const int nc, int n_rows) {
    q32_body(nblk, wp, xp, d, ldd, nc, n_rows, true);
}

GX2_INLINE void q4k_body(int nblk, const uint8_t * wp, const uint8_t * xp, float * d, int64_t ldd, const int nc, int n_rows) {
    __m256 acc[C];
    #pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm256_setzero_ps();
    }
    for (int b = 0; b < nblk; b++) {
        const uint8_t * wb = wp + (size_t) b * (312*R);
        const uint8_t * xb = xp + (size_t) b * (276*C);
        __m256i isum[C];
        #pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            isum[c] = _mm256_setzero_si256();
        }
                for (int j = 0; j < 8; j++) {
            const __m256i sc = _mm256_load_si256((const __m256i *) (wb + 256*R + 32*j));
            #pragma GCC unroll 8
            for (int g = 0; g < 8; g++) {
                const __m256i w = _mm256_load_si256((const __m256i *) (wb + 32*(8*j + g)));
                #pragma GCC unroll 8
                for (int c = 0; c < nc; c++) {
                    const __m256i p = _mm256_maddubs_epi16(w, bcast32(xb + 256*c + 32*j + 4*g));
                    isum[c] = _mm256_add_epi32(isum[c], _mm256_madd_epi16(p, sc));
                }
            }
        }
        const __m256 dv = _mm256_load_ps((const float *) (wb + 304*R));
        const __m256 dmv = _mm256_load_ps((const float *) (wb + 308*R));
        #pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            __m256i ms = _mm256_setzero_si256();
            #pragma GCC unroll 8
            for (int p = 0; p < 4; p++) {
                ms = _mm256_add_epi32(ms, _mm256_madd_epi16(_mm256_load_si256((const __m256i *) (wb + 288*R + 32*p)),
                                                            bcast32(xb + 260*C + 4*(4*c + p))));
            }
            float dx;
            memcpy(&dx, xb + 256*C + 4*c, sizeof(dx));
            const __m256 v = _mm256_fmsub_ps(dv, _mm256_cvtepi32_ps(isum[c]), _mm256_mul_ps(dmv, _mm256_cvtepi32_ps(ms)));
            acc[c] = _mm256_fmadd_ps(v, _mm256_set1_ps(dx), acc[c]);
        }
    }
    store_cols(d, ldd, acc, nc, n_rows);
}

#define QGEMM_DISPATCH(NAME, BODY) \
GX2 static void NAME(int nblk, const void * wp, const void * xp, float * d, int64_t ldd, int ncols, int n_rows) { \
    const uint8_t * w = (const uint8_t *) wp; \
    const uint8_t * x = (const uint8_t *) xp; \
    switch (ncols) { \
        case 4:  BODY(nblk, w, x, d, ldd, 4, n_rows); break; \
        case 3:  BODY(nblk, w, x, d, ldd, 3, n_rows); break; \
        case 2:  BODY(nblk, w, x, d, ldd, 2, n_rows); break; \
        default: BODY(nblk, w, x, d, ldd, 1, n_rows); break; \
    } \
}

QGEMM_DISPATCH(qmicro_q4_0_avx2, q4_0_body)
QGEMM_DISPATCH(qmicro_q8_0_avx2, q8_0_body)
QGEMM_DISPATCH(qmicro_q4_K_avx2, q4k_body)

void ggml_x_qgemm_kernels_avx2(struct ggml_x_gemm_kernels * k) {
    k->qr          = R;
    k->qc          = C;
    k->q8_signed   = true;
    k->qmicro_q4_0 = qmicro_q4_0_avx2;
    k->qmicro_q8_0 = qmicro_q8_0_avx2;
    k->qmicro_q4_K = qmicro_q4_K_avx2;
}

#endif // __x86_64__
