// qgemm-avx512.c - AVX-512 VNNI int8 GEMM micro-kernels (layouts in qgemm.c): 16 W rows (one
// zmm of dwords) x up to 8 X columns. Per block, the 8 dwords vectors of W stay in registers and
// every column adds vpdpbusd(W bytes, 4 activation bytes broadcast) into a block sum that starts
// at the column's offset correction; block sums are scaled into float accumulators.

#if defined(__x86_64__)

#include "cpu/gemm.h"

#include <immintrin.h>

#define GXV __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni,avx2,fma,f16c")))
#define GXV_INLINE GXV __attribute__((always_inline)) static inline

#define R 16
#define C 8

GXV_INLINE __m512i bcast32(const uint8_t * p) {
    int32_t v;
    memcpy(&v, p, sizeof(v));
    return _mm512_set1_epi32(v);
}

GXV_INLINE void store_cols(float * d, int64_t ldd, const __m512 * acc, const int nc, int n_rows) {
    const __mmask16 m = n_rows >= R ? (__mmask16) 0xffff : (__mmask16) ((1u << n_rows) - 1);
    for (int c = 0; c < nc; c++) {
        _mm512_mask_storeu_ps(d + c*ldd, m, acc[c]);
    }
}

// Q4_0 and unsigned Q8_0 share the kernel: only the packing and the X correction differ
GXV_INLINE void q32_body(int nblk, const uint8_t * wp, const uint8_t * xp, float * d, int64_t ldd, const int nc, int n_rows) {
    __m512 acc[C];
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
    }
    for (int b = 0; b < nblk; b++) {
        const uint8_t * wb = wp + (size_t) b * (36*R);
        const uint8_t * xb = xp + (size_t) b * (40*C);
        __m512i wv[8];
        for (int g = 0; g < 8; g++) {
            wv[g] = _mm512_load_si512((const void *) (wb + 64*g));
        }
        const __m512 dw = _mm512_load_ps((const float *) (wb + 32*R));
        for (int c = 0; c < nc; c++) {
            __m512i s = bcast32(xb + 36*C + 4*c);
            for (int g = 0; g < 8; g++) {
                s = _mm512_dpbusd_epi32(s, wv[g], bcast32(xb + 32*c + 4*g));
            }
            float dx;
            memcpy(&dx, xb + 32*C + 4*c, sizeof(dx));
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dw, _mm512_set1_ps(dx)), acc[c]);
        }
    }
    store_cols(d, ldd, acc, nc, n_rows);
}

GXV_INLINE void q4k_body(int nblk, const uint8_t * wp, const uint8_t * xp, float * d, int64_t ldd, const int nc, int n_rows) {
    __m512 acc[C];
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
    }
    const __m512i lo16 = _mm512_set1_epi32(0xffff);
    for (int b = 0; b < nblk; b++) {
        const uint8_t * wb = wp + (size_t) b * (312*R);
        const uint8_t * xb = xp + (size_t) b * (276*C);
        __m512i isum[C];
        for (int c = 0; c < nc; c++) {
            isum[c] = _mm512_setzero_si512();
        }
        for (int j = 0; j < 8; j++) {
            __m512i wv[8];
            for (int g = 0; g < 8; g++) {
                wv[g] = _mm512_load_si512((const void *) (wb + 64*(8*j + g)));
            }
            const __m512i sc = _mm512_and_si512(_mm512_load_si512((const void *) (wb + 256*R + 64*j)), lo16);
            for (int c = 0; c < nc; c++) {
                __m512i t = _mm512_setzero_si512();
                for (int g = 0; g < 8; g++) {
                    t = _mm512_dpbusd_epi32(t, wv[g], bcast32(xb + 256*c + 32*j + 4*g));
                }
                isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(t, sc));
            }
        }
        const __m512 dv = _mm512_load_ps((const float *) (wb + 304*R));
        const __m512 dmv = _mm512_load_ps((const float *) (wb + 308*R));
        for (int c = 0; c < nc; c++) {
            __m512i ms = _mm512_setzero_si512();
            for (int p = 0; p < 4; p++) {
                ms = _mm512_dpwssd_epi32(ms, _mm512_load_si512((const void *) (wb + 288*R + 64*p)),
                                         bcast32(xb + 260*C + 4*(4*c + p)));
            }
            float dx;
            memcpy(&dx, xb + 256*C + 4*c, sizeof(dx));
            const __m512 v = _mm512_fmsub_ps(dv, _mm512_cvtepi32_ps(isum[c]), _mm512_mul_ps(dmv, _mm512_cvtepi32_ps(ms)));
            acc[c] = _mm512_fmadd_ps(v, _mm512_set1_ps(dx), acc[c]);
        }
    }
    store_cols(d, ldd, acc, nc, n_rows);
}

#define QGEMM_DISPATCH(NAME, BODY) \
GXV static void NAME(int nblk, const void * wp, const void * xp, float * d, int64_t ldd, int ncols, int n_rows) { \
    const uint8_t * w = (const uint8_t *) wp; \
    const uint8_t * x = (const uint8_t *) xp; \
    switch (ncols) { \
        case 8:  BODY(nblk, w, x, d, ldd, 8, n_rows); break; \
        case 7:  BODY(nblk, w, x, d, ldd, 7, n_rows); break; \
        case 6:  BODY(nblk, w, x, d, ldd, 6, n_rows); break; \
        case 5:  BODY(nblk, w, x, d, ldd, 5, n_rows); break; \
        case 4:  BODY(nblk, w, x, d, ldd, 4, n_rows); break; \
        case 3:  BODY(nblk, w, x, d, ldd, 3, n_rows); break; \
        case 2:  BODY(nblk, w, x, d, ldd, 2, n_rows); break; \
        default: BODY(nblk, w, x, d, ldd, 1, n_rows); break; \
    } \
}

QGEMM_DISPATCH(qmicro_q32_vnni, q32_body)
QGEMM_DISPATCH(qmicro_q4_K_vnni, q4k_body)

void ggml_x_qgemm_kernels_vnni(struct ggml_x_gemm_kernels * k) {
    k->qr          = R;
    k->qc          = C;
    k->q8_signed   = false;
    k->qmicro_q4_0 = qmicro_q32_vnni;
    k->qmicro_q8_0 = qmicro_q32_vnni;
    k->qmicro_q4_K = qmicro_q4_K_vnni;
}

#endif // __x86_64__
