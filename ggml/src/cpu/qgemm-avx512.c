// qgemm-avx512.c - AVX-512 VNNI int8 GEMM micro-kernels (layouts in qgemm.c): 16 W rows (one
// zmm of dwords) x up to 8 X columns. Per block, the 8 dwords vectors of W stay in registers and
// every column adds vpdpbusd(W bytes, 4 activation bytes broadcast) into a block sum that starts
// at the column's offset correction; block sums are scaled into float accumulators.

#if defined(__x86_64__)

#include "cpu/gemm.h"
#include "ggml-quants.h"

#include <immintrin.h>
#include <stddef.h>

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
    #pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        _mm512_mask_storeu_ps(d + c*ldd, m, acc[c]);
    }
}

// Q4_0 and unsigned Q8_0 share the kernel: only the packing and the X correction differ
GXV_INLINE void q32_body(int nblk, const uint8_t * wp, const uint8_t * xp, float * d, int64_t ldd, const int nc, int n_rows) {
    __m512 acc[C];
    #pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
    }
    for (int b = 0; b < nblk; b++) {
        const uint8_t * wb = wp + (size_t) b * (36*R);
        const uint8_t * xb = xp + (size_t) b * (40*C);
        __m512i wv[8];
        #pragma GCC unroll 8
        for (int g = 0; g < 8; g++) {
            wv[g] = _mm512_load_si512((const void *) (wb + 64*g));
        }
        const __m512 dw = _mm512_load_ps((const float *) (wb + 32*R));
        #pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            __m512i s = bcast32(xb + 36*C + 4*c);
            #pragma GCC unroll 8
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
    #pragma GCC unroll 8
    for (int c = 0; c < nc; c++) {
        acc[c] = _mm512_setzero_ps();
    }
    const __m512i lo16 = _mm512_set1_epi32(0xffff);
    for (int b = 0; b < nblk; b++) {
        const uint8_t * wb = wp + (size_t) b * (312*R);
        const uint8_t * xb = xp + (size_t) b * (276*C);
        __m512i isum[C];
        #pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            isum[c] = _mm512_setzero_si512();
        }
                for (int j = 0; j < 8; j++) {
            __m512i wv[8];
            #pragma GCC unroll 8
            for (int g = 0; g < 8; g++) {
                wv[g] = _mm512_load_si512((const void *) (wb + 64*(8*j + g)));
            }
            const __m512i sc = _mm512_and_si512(_mm512_load_si512((const void *) (wb + 256*R + 64*j)), lo16);
            #pragma GCC unroll 8
            for (int c = 0; c < nc; c++) {
                __m512i t = _mm512_setzero_si512();
                #pragma GCC unroll 8
                for (int g = 0; g < 8; g++) {
                    t = _mm512_dpbusd_epi32(t, wv[g], bcast32(xb + 256*c + 32*j + 4*g));
                }
                isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(t, sc));
            }
        }
        const __m512 dv = _mm512_load_ps((const float *) (wb + 304*R));
        const __m512 dmv = _mm512_load_ps((const float *) (wb + 308*R));
        #pragma GCC unroll 8
        for (int c = 0; c < nc; c++) {
            __m512i ms = _mm512_setzero_si512();
            #pragma GCC unroll 8
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

// ---------------------------------------------------------------------------------------------
// W panel packing with gathers: one vpgatherdd fetches the same 4 bytes of all 16 rows, which is
// exactly one dwords vector of the packed layout

GXV_INLINE __m512 gather_f16_lo(const char * base, __m512i vidx, int shift) {
    __m512i v = _mm512_i32gather_epi32(vidx, base, 1);
    if (shift) {
        v = _mm512_srli_epi32(v, 16);
    }
    return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v));
}

// bytes a and a + 1 of every dword of v as two int16 (lo, hi) in one int32
GXV_INLINE __m512i byte_pair(__m512i v, int a) {
    const __m512i ff = _mm512_set1_epi32(0xff);
    const __m512i lo = _mm512_and_si512(_mm512_srli_epi32(v, 8*a), ff);
    const __m512i hi = _mm512_and_si512(_mm512_srli_epi32(v, 8*(a + 1)), ff);
    return _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
}

GXV static bool qpack_w_vnni(enum ggml_type wtype, const char * w, size_t nb1, int64_t nblk, void * out) {
    if (nb1 > (size_t) INT32_MAX / R) {
        return false;
    }
    const __m512i vidx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32((int) nb1));
    const __m512i m4 = _mm512_set1_epi8(15);
    uint8_t * o = (uint8_t *) out;
    if (wtype == GGML_TYPE_Q4_0) {
        for (int64_t b = 0; b < nblk; b++, o += 36*R) {
            const char * base = w + b * (int64_t) sizeof(block_q4_0);
            for (int h = 0; h < 4; h++) {
                const __m512i v = _mm512_i32gather_epi32(vidx, base + 2 + 4*h, 1);
                _mm512_store_si512((void *) (o + 64*h), _mm512_and_si512(v, m4));
                _mm512_store_si512((void *) (o + 64*(4 + h)), _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
            }
            _mm512_store_ps((float *) (o + 32*R), gather_f16_lo(base, vidx, 0));
        }
        return true;
    }
    if (wtype == GGML_TYPE_Q8_0) {
        const __m512i flip = _mm512_set1_epi8((char) 0x80);
        for (int64_t b = 0; b < nblk; b++, o += 36*R) {
            const char * base = w + b * (int64_t) sizeof(block_q8_0);
            for (int g = 0; g < 8; g++) {
                const __m512i v = _mm512_i32gather_epi32(vidx, base + 2 + 4*g, 1);
                _mm512_store_si512((void *) (o + 64*g), _mm512_xor_si512(v, flip));
            }
            _mm512_store_ps((float *) (o + 32*R), gather_f16_lo(base, vidx, 0));
        }
        return true;
    }
    if (wtype == GGML_TYPE_Q4_K) {
        const __m512i m6 = _mm512_set1_epi8(0x3f), m2 = _mm512_set1_epi8(3);
        for (int64_t b = 0; b < nblk; b++, o += 312*R) {
            const char * base = w + b * (int64_t) sizeof(block_q4_K);
            const char * qs = base + offsetof(block_q4_K, qs);
            for (int ch = 0; ch < 4; ch++) {
                for (int g = 0; g < 8; g++) {
                    const __m512i v = _mm512_i32gather_epi32(vidx, qs + 32*ch + 4*g, 1);
                    _mm512_store_si512((void *) (o + 64*(8*(2*ch) + g)), _mm512_and_si512(v, m4));
                    _mm512_store_si512((void *) (o + 64*(8*(2*ch + 1) + g)), _mm512_and_si512(_mm512_srli_epi16(v, 4), m4));
                }
            }
            // 12 scale bytes as three dwords u0, u1, u2: scales/mins 0..3 are the low 6 bits of
            // u0 / u1; 4..7 take their low 4 bits from u2 and their top 2 bits from u0 / u1
            const char * scp = base + offsetof(block_q4_K, scales);
            const __m512i u0 = _mm512_i32gather_epi32(vidx, scp, 1);
            const __m512i u1 = _mm512_i32gather_epi32(vidx, scp + 4, 1);
            const __m512i u2 = _mm512_i32gather_epi32(vidx, scp + 8, 1);
            const __m512i sc03 = _mm512_and_si512(u0, m6);
            const __m512i mn03 = _mm512_and_si512(u1, m6);
            const __m512i sc47 = _mm512_or_si512(_mm512_and_si512(u2, m4),
                                                 _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(u0, 6), m2), 4));
            const __m512i mn47 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(u2, 4), m4),
                                                 _mm512_slli_epi16(_mm512_and_si512(_mm512_srli_epi16(u1, 6), m2), 4));
            const __m512i ff = _mm512_set1_epi32(0xff);
            for (int j = 0; j < 4; j++) {
                const __m512i s0 = _mm512_and_si512(_mm512_srli_epi32(sc03, 8*j), ff);
                const __m512i s1 = _mm512_and_si512(_mm512_srli_epi32(sc47, 8*j), ff);
                _mm512_store_si512((void *) (o + 256*R + 64*j),       _mm512_or_si512(s0, _mm512_slli_epi32(s0, 16)));
                _mm512_store_si512((void *) (o + 256*R + 64*(4 + j)), _mm512_or_si512(s1, _mm512_slli_epi32(s1, 16)));
            }
            _mm512_store_si512((void *) (o + 288*R),       byte_pair(mn03, 0));
            _mm512_store_si512((void *) (o + 288*R + 64),  byte_pair(mn03, 2));
            _mm512_store_si512((void *) (o + 288*R + 128), byte_pair(mn47, 0));
            _mm512_store_si512((void *) (o + 288*R + 192), byte_pair(mn47, 2));
            _mm512_store_ps((float *) (o + 304*R), gather_f16_lo(base, vidx, 0));
            _mm512_store_ps((float *) (o + 308*R), gather_f16_lo(base, vidx, 1));
        }
        return true;
    }
    return false;
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
    k->qpack_w     = qpack_w_vnni;
}

#endif // __x86_64__
