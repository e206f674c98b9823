// gemm.c - float GEMM driver (cache blocking, packing of X), the portable scalar kernels, and the
// run-time selection of the GEMM kernels of every level (see gemm.h).
//
// Blocking (per thread, for its range of W rows):
//   for each block of KC k-values:
//     for each block of MC W rows: pack them (MC x KC floats, panels of MR rows, fits L2)
//       for each X panel of NR columns (its KC x NR block stays in L1 across the next loop):
//         for each W panel of MR rows: micro-kernel, accumulating into D
// X is packed once per node (all columns, all of K) before the product starts. When a thread's
// share of W is far larger than the caches, the next W block is prefetched into L2 while the
// current one is multiplied (the micro-kernel calls are then split along K, which keeps the
// same multiply-add chain per element).

#include "cpu/gemm.h"
#include "cpu/repack.h"

#include <pthread.h>

#define GEMM_KC 512
#define GEMM_MC 256
#define GEMM_KSPLIT 128                  // K slice per micro-kernel call while prefetching
#define GEMM_STREAM_BYTES (8u << 20)     // W bytes per thread above which W is prefetched

// ---------------------------------------------------------------------------------------------
// scalar kernels (MR = 8, NR = 4)

#define SC_MR 8
#define SC_NR 4

static void gemm_micro_scalar(int64_t kc, const float * a, const float * b, float * c, int64_t ldc,
                              int nr, int n_rows, bool acc) {
    float t[SC_NR][SC_MR];
    for (int j = 0; j < SC_NR; j++) {
        for (int i = 0; i < SC_MR; i++) {
            t[j][i] = (acc && j < nr && i < n_rows) ? c[j*ldc + i] : 0.0f;
        }
    }
    for (int64_t k = 0; k < kc; k++) {
        const float * ak = a + k*SC_MR;
        const float * bk = b + k*SC_NR;
        for (int j = 0; j < SC_NR; j++) {
            const float bj = bk[j];
            for (int i = 0; i < SC_MR; i++) {
                t[j][i] += ak[i] * bj;
            }
        }
    }
    for (int j = 0; j < nr; j++) {
        for (int i = 0; i < n_rows; i++) {
            c[j*ldc + i] = t[j][i];
        }
    }
}

static void gemm_pack_a_f32_scalar(const void * w, size_t nb1, int n_rows, int64_t k0, int64_t kc, float * a) {
    for (int i = 0; i < SC_MR; i++) {
        const float * row = (const float *) ((const char *) w + (size_t) i * nb1) + k0;
        for (int64_t k = 0; k < kc; k++) {
            a[k*SC_MR + i] = i < n_rows ? row[k] : 0.0f;
        }
    }
}

static void gemm_pack_a_f16_scalar(const void * w, size_t nb1, int n_rows, int64_t k0, int64_t kc, float * a) {
    for (int i = 0; i < SC_MR; i++) {
        const ggml_fp16_t * row = (const ggml_fp16_t *) ((const char *) w + (size_t) i * nb1) + k0;
        for (int64_t k = 0; k < kc; k++) {
            a[k*SC_MR + i] = i < n_rows ? GGML_FP16_TO_FP32(row[k]) : 0.0f;
        }
    }
}

static void gemm_kernels_scalar(struct ggml_x_gemm_kernels * k) {
    memset(k, 0, sizeof(*k));
    k->level      = GGML_X_CPU_SCALAR;
    k->mr         = SC_MR;
    k->nr         = SC_NR;
    k->micro      = gemm_micro_scalar;
    k->pack_a_f32 = gemm_pack_a_f32_scalar;
    k->pack_a_f16 = gemm_pack_a_f16_scalar;
    k->rp_q4_0    = ggml_x_rp_kernel_q4_0_scalar;
    k->rp_q8_0    = ggml_x_rp_kernel_q8_0_scalar;
    k->rp_q4_K    = ggml_x_rp_kernel_q4_K_scalar;
    k->rp_q6_K    = ggml_x_rp_kernel_q6_K_scalar;
}

// ---------------------------------------------------------------------------------------------
// selection

bool ggml_x_gemm_kernels_for_level(enum ggml_x_cpu_level level, struct ggml_x_gemm_kernels * k) {
    gemm_kernels_scalar(k);
    if (!ggml_x_cpu_level_supported(level)) {
        return false;
    }
    switch (level) {
#if defined(__x86_64__)
        case GGML_X_CPU_AVX2:
            ggml_x_gemm_kernels_avx2(k);
            ggml_x_qgemm_kernels_avx2(k);
            ggml_x_qgemv_kernels_avx2(k);
            ggml_x_rp_kernels_avx2(k);
            break;
        case GGML_X_CPU_AVX512:
            ggml_x_gemm_kernels_avx512(k);
            ggml_x_qgemm_kernels_avx2(k);
            ggml_x_qgemv_kernels_avx2(k);
            ggml_x_rp_kernels_avx2(k);
            break;
        case GGML_X_CPU_AVX512_VNNI:
            ggml_x_gemm_kernels_avx512(k);
            ggml_x_qgemm_kernels_vnni(k);
            ggml_x_qgemv_kernels_vnni(k);
            ggml_x_rp_kernels_vnni(k);
            break;
#endif
        default:
            break;
    }
    k->level = level;
    return true;
}

static struct ggml_x_gemm_kernels g_gemm_active;
static pthread_once_t             g_gemm_once = PTHREAD_ONCE_INIT;
static int                        g_gemm_mode;

static void gemm_select(void) {
    ggml_x_gemm_kernels_for_level(ggml_x_cpu_level(), &g_gemm_active);
}

const struct ggml_x_gemm_kernels * ggml_x_gemm_kernels_active(void) {
    pthread_once(&g_gemm_once, gemm_select);
    return &g_gemm_active;
}

bool ggml_x_gemm_testing_set_level(enum ggml_x_cpu_level level) {
    pthread_once(&g_gemm_once, gemm_select);
    struct ggml_x_gemm_kernels k;
    if (!ggml_x_gemm_kernels_for_level(level, &k)) {
        return false;
    }
    g_gemm_active = k;
    return true;
}

void ggml_x_gemm_testing_set_mode(int mode) {
    g_gemm_mode = mode;
}

int ggml_x_gemm_testing_mode(void) {
    return g_gemm_mode;
}

// ---------------------------------------------------------------------------------------------
// float GEMM driver

bool ggml_x_gemm_f_supported(enum ggml_type wtype) {
    const struct ggml_x_gemm_kernels * k = ggml_x_gemm_kernels_active();
    return (wtype == GGML_TYPE_F32 && k->pack_a_f32 != NULL) || (wtype == GGML_TYPE_F16 && k->pack_a_f16 != NULL);
}

size_t ggml_x_gemm_f_xpack_size(int64_t n, int64_t k) {
    const int nr = ggml_x_gemm_kernels_active()->nr;
    const int64_t np = (n + nr - 1) / nr;
    return (size_t) (np * nr * k) * sizeof(float);
}

size_t ggml_x_gemm_f_thread_size(int64_t k) {
    const int64_t kc = GGML_X_MIN(k, (int64_t) GEMM_KC);
    return (size_t) (GEMM_MC * kc) * sizeof(float);
}

void ggml_x_gemm_f_pack_x(const float * row, int64_t j, int64_t k, float * xp) {
    const int nr = ggml_x_gemm_kernels_active()->nr;
    float * p = xp + (j / nr) * nr * k + (j % nr);
    for (int64_t i = 0; i < k; i++) {
        p[i*nr] = row[i];
    }
}

// Prefetches the W block that will be packed next (rows x bytes per row) into L2, a slice at a
// time while the current block is multiplied, so that streaming W from memory overlaps compute.
struct gemm_prefetch {
    const char * w;
    size_t nb1;
    int64_t rows, lines; // lines of 64 bytes per row
    int64_t next, total; // position in rows x lines
};

static void gemm_prefetch_start(struct gemm_prefetch * pf, const char * w, size_t nb1, int64_t rows, size_t bytes) {
    pf->w = w;
    pf->nb1 = nb1;
    pf->rows = rows;
    pf->lines = (int64_t) ((bytes + 63) / 64);
    pf->next = 0;
    pf->total = rows * pf->lines;
}

static void gemm_prefetch_step(struct gemm_prefetch * pf, int64_t count) {
    const int64_t end = GGML_X_MIN(pf->total, pf->next + count);
    for (; pf->next < end; pf->next++) {
        const int64_t r = pf->next / pf->lines, l = pf->next % pf->lines;
        __builtin_prefetch(pf->w + (size_t) r * pf->nb1 + (size_t) l * 64, 0, 2);
    }
}

// W as the float GEMM reads it: row i, element k at base + i*row_stride + k*esize when
// k_stride is 0 (the weights of MUL_MAT), else at base + i*esize + k*k_stride (W given
// transposed: the first operand of OUT_PROD).
struct gemm_w {
    enum ggml_type type; // F32 or F16
    const char * base;
    size_t row_stride, k_stride, esize;
};

// Packs rows [0, n_rows) of a transposed W (elements (i, k) at w + i*esize + k*ldk), elements
// [k0, k0 + kc), into a[k*mr + i]: the rows of one k are contiguous, so a k step copies (or
// converts) n_rows adjacent values; rows n_rows..mr-1 are zero.
static void gemm_pack_at(enum ggml_type type, const char * w, size_t ldk, int mr, int n_rows, int64_t k0, int64_t kc,
                         float * a) {
    for (int64_t k = 0; k < kc; k++) {
        const char * src = w + (size_t) (k0 + k) * ldk;
        float * dst = a + k*mr;
        if (type == GGML_TYPE_F16) {
            ggml_fp16_to_fp32_row((const ggml_fp16_t *) src, dst, n_rows);
        } else {
            memcpy(dst, src, (size_t) n_rows * sizeof(float));
        }
        for (int i = n_rows; i < mr; i++) {
            dst[i] = 0.0f;
        }
    }
}

static void gemm_pack_w(const struct ggml_x_gemm_kernels * kr, const struct gemm_w * w, int64_t row, int rows,
                        int64_t k0, int64_t kc, float * a) {
    if (w->k_stride != 0) {
        gemm_pack_at(w->type, w->base + (size_t) row * w->esize, w->k_stride, kr->mr, rows, k0, kc, a);
        return;
    }
    const ggml_x_gemm_pack_a_t pack = w->type == GGML_TYPE_F16 ? kr->pack_a_f16 : kr->pack_a_f32;
    pack(w->base + (size_t) row * w->row_stride, w->row_stride, rows, k0, kc, a);
}

static void gemm_f_blocked(const struct gemm_w * w, int64_t i0, int64_t i1, int64_t n, int64_t k, const float * xp,
                           float * d, int64_t ldd, void * scratch);

void ggml_x_gemm_f_compute(enum ggml_type wtype, const void * w, size_t w_nb1, int64_t i0, int64_t i1,
                           int64_t n, int64_t k, const float * xp, float * d, int64_t ldd, void * scratch) {
    const struct gemm_w gw = {
        .type = wtype, .base = (const char *) w, .row_stride = w_nb1, .k_stride = 0,
        .esize = wtype == GGML_TYPE_F16 ? sizeof(ggml_fp16_t) : sizeof(float),
    };
    gemm_f_blocked(&gw, i0, i1, n, k, xp, d, ldd, scratch);
}

void ggml_x_gemm_f_compute_at(enum ggml_type wtype, const void * w, size_t w_ldk, int64_t i0, int64_t i1,
                              int64_t n, int64_t k, const float * xp, float * d, int64_t ldd, void * scratch) {
    const size_t esize = wtype == GGML_TYPE_F16 ? sizeof(ggml_fp16_t) : sizeof(float);
    const struct gemm_w gw = {
        .type = wtype, .base = (const char *) w, .row_stride = esize, .k_stride = w_ldk, .esize = esize,
    };
    gemm_f_blocked(&gw, i0, i1, n, k, xp, d, ldd, scratch);
}

void ggml_x_gemm_f_pack_x_strided(const char * x, size_t nb_col, size_t nb_k, int64_t j0, int64_t ncols, int64_t k,
                                  float * xp) {
    const int nr = ggml_x_gemm_kernels_active()->nr;
    for (int64_t j = j0; j < j0 + ncols; ) {
        // one panel at a time: per k, the panel's columns are adjacent in xp
        const int64_t p = j / nr, c0 = j % nr;
        const int64_t cn = GGML_X_MIN((int64_t) nr - c0, j0 + ncols - j);
        float * dst = xp + p * nr * k + c0;
        const char * src = x + (size_t) j * nb_col;
        if (nb_col == sizeof(float)) {
            for (int64_t i = 0; i < k; i++) {
                memcpy(dst + i*nr, src + (size_t) i * nb_k, (size_t) cn * sizeof(float));
            }
        } else {
            for (int64_t i = 0; i < k; i++) {
                for (int64_t c = 0; c < cn; c++) {
                    dst[i*nr + c] = *(const float *) (src + (size_t) c * nb_col + (size_t) i * nb_k);
                }
            }
        }
        j += cn;
    }
}

static void gemm_f_blocked(const struct gemm_w * w, int64_t i0, int64_t i1, int64_t n, int64_t k, const float * xp,
                           float * d, int64_t ldd, void * scratch) {
    const struct ggml_x_gemm_kernels * kr = ggml_x_gemm_kernels_active();
    const int mr = kr->mr, nr = kr->nr;
    const size_t esize = w->esize;
    const size_t w_nb1 = w->row_stride;
    float * ap = (float *) scratch;
    struct gemm_prefetch pf = { 0 };
    // W (row-major) much larger than the caches: prefetch the next block while multiplying the
    // current one
    const bool stream = w->k_stride == 0 && (size_t) (i1 - i0) * (size_t) k * esize > GEMM_STREAM_BYTES;

    for (int64_t pc = 0; pc < k; pc += GEMM_KC) {
        const int64_t kc = GGML_X_MIN((int64_t) GEMM_KC, k - pc);
        for (int64_t ic = i0; ic < i1; ic += GEMM_MC) {
            const int64_t mc = GGML_X_MIN((int64_t) GEMM_MC, i1 - ic);
            for (int64_t ir = 0; ir < mc; ir += mr) {
                const int rows = (int) GGML_X_MIN((int64_t) mr, mc - ir);
                gemm_pack_w(kr, w, ic + ir, rows, pc, kc, ap + ir*kc);
            }
            // the block packed next: the next rows of this K block, else the first rows of the next
            int64_t nic = ic + GEMM_MC, npc = pc;
            if (nic >= i1) {
                nic = i0;
                npc = pc + GEMM_KC;
            }
            const int64_t calls = ((n + nr - 1) / nr) * ((mc + mr - 1) / mr);
            int64_t per_call = 0;
            if (stream && npc < k) {
                const int64_t nkc = GGML_X_MIN((int64_t) GEMM_KC, k - npc);
                const int64_t nmc = GGML_X_MIN((int64_t) GEMM_MC, i1 - nic);
                gemm_prefetch_start(&pf, w->base + (size_t) nic * w_nb1 + (size_t) npc * esize, w_nb1, nmc,
                                    (size_t) nkc * esize);
                per_call = (pf.total + calls - 1) / calls;
            }
            for (int64_t jr = 0; jr < n; jr += nr) {
                const int ncols = (int) GGML_X_MIN((int64_t) nr, n - jr);
                const float * bp = xp + jr*k + pc*nr; // panel jr/nr starts at (jr/nr)*nr*k
                float * dc = d + jr*ldd + ic;
                for (int64_t ir = 0; ir < mc; ir += mr) {
                    const int rows = (int) GGML_X_MIN((int64_t) mr, mc - ir);
                    if (per_call > 0) {
                        // a slice of the prefetches before each part of the K block, so they
                        // trickle out during the multiply instead of stalling it in one burst
                        for (int64_t k0 = 0; k0 < kc; k0 += GEMM_KSPLIT) {
                            gemm_prefetch_step(&pf, (per_call * GEMM_KSPLIT + kc - 1) / kc);
                            kr->micro(GGML_X_MIN((int64_t) GEMM_KSPLIT, kc - k0), ap + ir*kc + k0*mr, bp + k0*nr,
                                      dc + ir, ldd, ncols, rows, pc > 0 || k0 > 0);
                        }
                    } else {
                        kr->micro(kc, ap + ir*kc, bp, dc + ir, ldd, ncols, rows, pc > 0);
                    }
                }
            }
        }
    }
}
