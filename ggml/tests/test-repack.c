// test-repack.c - the CPU_REPACK buffer type (cpu/repack.c): get_tensor returns exactly the bytes
// set, whole or in odd pieces (Q4_0, Q8_0, Q4_K, Q6_K); the repack kernels of every level this CPU runs against the
// reference dot products (odd block counts, 1..8 columns, extreme nibbles/bytes and scales);
// MUL_MAT with weights in the repack buffer against the same weights in the CPU buffer (row counts
// not a multiple of 8, 1..13 columns, broadcast batches, 1, 2, 3 and 8 threads, every level: 8
// threads on a smaller machine lose their cores mid-walk and the others steal their rows); ops that
// cannot read the layout fail the compute with an error.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"
#include "ggml-impl.h"
#include "ggml-quants.h"
#include "cpu/gemm.h"
#include "cpu/repack.h"

#include "test-util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const enum ggml_x_cpu_level k_levels[] = {
    GGML_X_CPU_SCALAR, GGML_X_CPU_AVX2, GGML_X_CPU_AVX512, GGML_X_CPU_AVX512_VNNI,
    GGML_X_CPU_NEON, GGML_X_CPU_NEON_DOTPROD,
};
#define N_LEVELS ((int) (sizeof(k_levels) / sizeof(k_levels[0])))

static uint8_t rbyte(void) {
    return (uint8_t) ((rnd() + 1.0f) * 127.99f);
}

// ---------------------------------------------------------------------------------------------

static void test_registry(void) {
    ggml_backend_buffer_type_t bt = ggml_x_backend_cpu_repack_buffer_type();
    T_CHECK(bt != NULL);
    T_CHECK(strcmp(ggml_backend_buft_name(bt), "CPU_REPACK") == 0);
    T_CHECK(!ggml_backend_buft_is_host(bt));
    const size_t i = ggml_backend_reg_find_by_name("CPU_REPACK");
    T_CHECK(i != SIZE_MAX);
    if (i == SIZE_MAX) {
        return;
    }
    T_CHECK(ggml_backend_reg_get_default_buffer_type(i) == bt);
    ggml_backend_t be = ggml_backend_reg_init_backend(i, NULL);
    T_CHECK(be != NULL && ggml_backend_is_cpu(be));
    T_CHECK(be != NULL && ggml_backend_buft_supports_backend(bt, be));
    ggml_backend_free(be);
}

// set/get round trips: whole, then in pieces of 1..97 bytes at odd offsets, and partial gets
static void test_set_get(void) {
    struct ggml_init_params ip = { 32 * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    struct ggml_tensor * ts[] = {
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 96, 21),    // 2 groups + 5 plain rows
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 64, 16),    // 2 groups
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 32, 8),
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q8_0, 320, 43),
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_K, 256, 8),
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_K, 768, 19),   // 2 groups + 3 plain rows
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_K, 4352, 17),  // 17 super-blocks
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q6_K, 256, 16),
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q6_K, 1280, 21),  // 5 super-blocks, 2 groups + 5 plain rows
        ggml_new_tensor_3d(ctx, GGML_TYPE_Q8_0, 32, 8, 2),  // 3-D: plain
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 7),     // fewer than 8 rows: plain
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_K, 256, 7),
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q6_K, 256, 7),
        ggml_new_tensor_2d(ctx, GGML_TYPE_Q5_K, 256, 16),   // not a repacked type: plain
        ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 13, 9),      // other type: plain
    };
    const int nt = (int) (sizeof(ts) / sizeof(ts[0]));
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_x_backend_cpu_repack_buffer_type());
    T_CHECK(buf != NULL);
    if (buf == NULL) {
        ggml_free(ctx);
        return;
    }
    T_CHECK(!ggml_backend_buffer_is_host(buf));
    for (int ti = 0; ti < nt; ti++) {
        struct ggml_tensor * t = ts[ti];
        const size_t n = ggml_nbytes(t);
        uint8_t * orig = malloc(n), * got = malloc(n);
        for (size_t i = 0; i < n; i++) {
            orig[i] = rbyte();
        }
        const bool packed = ggml_x_rp_is_packed(t, NULL);
        T_CHECK_MSG(packed == (ti < 9), "tensor %d: packed %d", ti, packed);

        ggml_backend_tensor_set(t, orig, 0, n);
        memset(got, 0, n);
        ggml_backend_tensor_get(t, got, 0, n);
        T_CHECK_MSG(memcmp(orig, got, n) == 0, "tensor %d: whole round trip differs", ti);
        if (packed) {
            T_CHECK_MSG(memcmp(orig, t->data, n) != 0, "tensor %d: memory not rearranged", ti);
        } else {
            T_CHECK_MSG(memcmp(orig, t->data, n) == 0, "tensor %d: plain tensor rearranged", ti);
        }

        // pieces at odd offsets into cleared memory
        memset(t->data, 0, n);
        for (size_t off = 0; off < n; ) {
            size_t sz = 1 + (size_t) (rbyte() % 97);
            if (off + sz > n) {
                sz = n - off;
            }
            ggml_backend_tensor_set(t, orig + off, off, sz);
            off += sz;
        }
        memset(got, 0, n);
        ggml_backend_tensor_get(t, got, 0, n);
        T_CHECK_MSG(memcmp(orig, got, n) == 0, "tensor %d: piecewise round trip differs", ti);
        // partial gets
        for (int rep = 0; rep < 200; rep++) {
            const size_t off = (size_t) (rbyte() * 251u + rbyte()) % n;
            size_t sz = 1 + (size_t) (rbyte() % 131);
            if (off + sz > n) {
                sz = n - off;
            }
            uint8_t tmp[256];
            ggml_backend_tensor_get(t, tmp, off, sz);
            T_CHECK_MSG(memcmp(tmp, orig + off, sz) == 0, "tensor %d: get at %zu size %zu differs", ti, off, sz);
        }
        // clear keeps every byte value
        free(orig);
        free(got);
    }
    ggml_backend_buffer_clear(buf, 0x3c);
    {
        const size_t n = ggml_nbytes(ts[0]);
        uint8_t * got = malloc(n);
        ggml_backend_tensor_get(ts[0], got, 0, n);
        bool all = true;
        for (size_t i = 0; i < n; i++) {
            all = all && got[i] == 0x3c;
        }
        T_CHECK(all);
        free(got);
    }
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// kernels called directly

// 8 rows of nblk blocks: pattern 0 random bytes, 1 all 0xff, 2 all 0x80, 3 all 0x00, 4 all 0x7f;
// scales random small (scale 0) or the largest fp16 (scale 1)
static void rows_fill(enum ggml_type t, uint8_t * w, int nblk, int pattern, int scale) {
    const size_t bs = ggml_type_size(t);
    const uint8_t fillb[] = { 0, 0xff, 0x80, 0x00, 0x7f };
    for (size_t i = 0; i < bs * (size_t) nblk * GGML_X_RP_ROWS; i++) {
        w[i] = pattern == 0 ? rbyte() : fillb[pattern];
    }
    const size_t doff = t == GGML_TYPE_Q6_K ? bs - 2 : 0; // where d is
    for (int b = 0; b < nblk * GGML_X_RP_ROWS; b++) {
        ggml_fp16_t d = ggml_fp32_to_fp16(scale ? 65504.0f : 0.01f + 0.05f * fabsf(rnd()));
        memcpy(w + (size_t) b * bs + doff, &d, sizeof(d));
        if (t == GGML_TYPE_Q4_K) { // dmin
            d = ggml_fp32_to_fp16(scale ? 65504.0f : 0.01f + 0.05f * fabsf(rnd()));
            memcpy(w + (size_t) b * bs + 2, &d, sizeof(d));
        }
    }
}

// Q4_K: sum over the row of (|d * scale * q| + |dmin * min|) * |x|, the size of the terms the
// kernels round (the two parts of a Q4_K weight can cancel)
static double q4k_abs_terms(const uint8_t * row, const float * x, int k) {
    double s = 0.0;
    for (int b = 0; b < k / QK_K; b++) {
        const block_q4_K * blk = (const block_q4_K *) row + b;
        const double d = fabs((double) ggml_fp16_to_fp32(blk->d)), dm = fabs((double) ggml_fp16_to_fp32(blk->dmin));
        for (int i = 0; i < QK_K; i++) {
            const int sb = i / 32, c = i / 64, l = i % 32;
            const int q = sb % 2 == 0 ? (blk->qs[32*c + l] & 15) : (blk->qs[32*c + l] >> 4);
            uint8_t sc, mn;
            ggml_x_get_scale_min_k4(sb, blk->scales, &sc, &mn);
            s += (d * sc * q + dm * mn) * fabs((double) x[b*QK_K + i]);
        }
    }
    return s;
}

static void test_kernels(void) {
    static const int nblks[] = { 1, 2, 3, 7, 16, 33 };
    static const int nblks_k[] = { 1, 2, 3, 5, 16, 17 };
    int checked = 0;
    for (int li = 0; li < N_LEVELS; li++) {
        struct ggml_x_gemm_kernels kr;
        if (!ggml_x_gemm_kernels_for_level(k_levels[li], &kr)) {
            continue;
        }
        for (int ti = 0; ti < 4; ti++) {
            const enum ggml_type t = ti == 0 ? GGML_TYPE_Q4_0 : ti == 1 ? GGML_TYPE_Q8_0 :
                                     ti == 2 ? GGML_TYPE_Q4_K : GGML_TYPE_Q6_K;
            const enum ggml_type vt = ti >= 2 ? GGML_TYPE_Q8_K : GGML_TYPE_Q8_0;
            const int qk = ti >= 2 ? QK_K : QK8_0;
            const ggml_x_rp_kernel_t kern = ggml_x_rp_kernel_of(&kr, t);
            const ggml_vec_dot_t ref = ti == 0 ? ggml_x_vec_dot_q4_0_q8_0_ref :
                                       ti == 1 ? ggml_x_vec_dot_q8_0_q8_0_ref :
                                       ti == 2 ? ggml_x_vec_dot_q4_K_q8_K_ref : ggml_x_vec_dot_q6_K_q8_K_ref;
            T_CHECK(kern != NULL);
            if (kern == NULL) {
                continue;
            }
            for (size_t si = 0; si < sizeof(nblks) / sizeof(nblks[0]); si++) {
                const int nblk = ti >= 2 ? nblks_k[si] : nblks[si];
                const int k = nblk * qk;
                const size_t rs = ggml_row_size(t, k);
                uint8_t * w = malloc(rs * GGML_X_RP_ROWS);
                uint8_t * grp = aligned_alloc(64, (rs * GGML_X_RP_ROWS + 63) / 64 * 64);
                const size_t psz = (ggml_x_rp_set_size(k) + 63) / 64 * 64;
                uint8_t * set = aligned_alloc(64, psz);
                float * x = malloc(sizeof(float) * (size_t) k);
                float * wf = malloc(sizeof(float) * (size_t) k);
                float * xf = malloc(sizeof(float) * (size_t) k);
                struct ggml_x_rp_layout l = { t, ggml_type_size(t), nblk, rs, 1, rs * GGML_X_RP_ROWS };
                for (int pattern = 0; pattern < 5; pattern++) {
                    for (int scale = 0; scale < 2; scale++) {
                        rows_fill(t, w, nblk, pattern, scale);
                        ggml_x_rp_pack(&l, (char *) grp, (const char *) w, 0, rs * GGML_X_RP_ROWS);
                        for (int nc = 1; nc <= GGML_X_RP_COLS; nc++) {
                            memset(set, 0x5a, psz);
                            for (int j = 0; j < nc; j++) {
                                // random; all +1; +-1; +-1 and tiny; all -1 (activation bytes of -128:
                                // with weight levels of 15, the largest negative integer sums)
                                const int xs = (j + pattern) % 5;
                                for (int i = 0; i < k; i++) {
                                    x[i] = xs == 0 ? rnd() : xs == 1 ? 1.0f : (i % 3 == 0 ? -1.0f : 1.0f);
                                    if (xs == 3 && i % 5 != 0) {
                                        x[i] = 1e-3f * x[i];
                                    }
                                    if (xs == 4) {
                                        x[i] = -1.0f;
                                    }
                                }
                                ggml_x_rp_prep(t, x, k, set, j, nc);
                            }
                            float out[GGML_X_RP_COLS * GGML_X_RP_ROWS];
                            for (int i = 0; i < GGML_X_RP_COLS * GGML_X_RP_ROWS; i++) {
                                out[i] = NAN;
                            }
                            kern(nblk, nc, grp, set, out);
                            for (int j = 0; j < nc; j++) {
                                const void * xq = ggml_x_rp_set_q8(set, k, j);
                                ggml_x_type_traits(vt)->to_float(xq, xf, k);
                                for (int r = 0; r < GGML_X_RP_ROWS; r++) {
                                    const uint8_t * row = w + (size_t) r * rs;
                                    float want;
                                    ref(k, &want, row, xq);
                                    ggml_x_type_traits(t)->to_float(row, wf, k);
                                    double sa = 0.0;
                                    for (int i = 0; i < k; i++) {
                                        sa += fabs((double) wf[i] * xf[i]);
                                    }
                                    if (t == GGML_TYPE_Q4_K) {
                                        sa = q4k_abs_terms(row, xf, k);
                                    }
                                    const double err = fabs((double) out[j*GGML_X_RP_ROWS + r] - (double) want) / (sa + 1e-30);
                                    T_CHECK_MSG(err < 2e-6 * sqrt((double) k) + 1e-6,
                                                "rp %s level %s nblk=%d pattern %d scale %d nc=%d col %d row %d: %.9g, ref %.9g",
                                                ggml_type_name(t), ggml_x_cpu_level_name(k_levels[li]), nblk, pattern,
                                                scale, nc, j, r, out[j*GGML_X_RP_ROWS + r], want);
                                    checked++;
                                }
                            }
                        }
                    }
                }
                free(w);
                free(grp);
                free(set);
                free(x);
                free(wf);
                free(xf);
            }
        }
    }
    printf("     %d kernel results checked\n", checked);
}

// the 16-row kernels (two groups at once) against the 8-row kernel of the same level on each
// group: bit for bit (they must be interchangeable: which one a group gets depends on the
// thread count), over odd block counts, mixed extreme patterns and every column count
static void test_kernels16(void) {
    static const int nblks[] = { 1, 2, 3, 5, 7, 16, 33 };
    int checked = 0;
    for (int li = 0; li < N_LEVELS; li++) {
        struct ggml_x_gemm_kernels kr;
        if (!ggml_x_gemm_kernels_for_level(k_levels[li], &kr)) {
            continue;
        }
        for (int ti = 0; ti < 4; ti++) {
            const enum ggml_type t = ti == 0 ? GGML_TYPE_Q4_0 : ti == 1 ? GGML_TYPE_Q8_0 :
                                     ti == 2 ? GGML_TYPE_Q4_K : GGML_TYPE_Q6_K;
            const int qk = ti >= 2 ? QK_K : QK8_0;
            const ggml_x_rp16_kernel_t k16 = ggml_x_rp16_kernel_of(&kr, t);
            const ggml_x_rp_kernel_t k8 = ggml_x_rp_kernel_of(&kr, t);
            if (k16 == NULL) {
                continue;
            }
            for (size_t si = 0; si < sizeof(nblks) / sizeof(nblks[0]); si++) {
                const int nblk = nblks[si];
                const int k = nblk * qk;
                const size_t rs = ggml_row_size(t, k);
                const size_t gsz = rs * GGML_X_RP_ROWS;
                uint8_t * w = malloc(2 * gsz);
                uint8_t * grp = aligned_alloc(64, (2 * gsz + 63) / 64 * 64);
                const size_t psz = (ggml_x_rp_set_size(k) + 63) / 64 * 64;
                uint8_t * set = aligned_alloc(64, psz);
                float * x = malloc(sizeof(float) * (size_t) k);
                struct ggml_x_rp_layout l = { t, ggml_type_size(t), nblk, rs, 2, 2 * gsz };
                for (int pattern = 0; pattern < 5; pattern++) {
                    rows_fill(t, w, nblk, pattern, pattern % 2);
                    rows_fill(t, w + gsz, nblk, (pattern + 2) % 5, (pattern + 1) % 2);
                    ggml_x_rp_pack(&l, (char *) grp, (const char *) w, 0, 2 * gsz);
                    for (int nc = 1; nc <= GGML_X_RP_COLS; nc++) {
                        memset(set, 0x5a, psz);
                        for (int j = 0; j < nc; j++) {
                            // random; +1; +-1; +-1 and tiny; +-huge; all -1 (activation bytes of -128)
                            const int xs = (j + pattern) % 6;
                            for (int i = 0; i < k; i++) {
                                x[i] = xs == 0 ? rnd() : xs == 1 ? 1.0f : (i % 3 == 0 ? -1.0f : 1.0f);
                                if (xs == 3 && i % 5 != 0) {
                                    x[i] = 1e-3f * x[i];
                                }
                                if (xs == 4) {
                                    x[i] = (i % 2 ? -3e4f : 3e4f) * (i % 7 == 0 ? 1.0f : 0.5f);
                                }
                                if (xs == 5) {
                                    x[i] = -1.0f;
                                }
                            }
                            ggml_x_rp_prep(t, x, k, set, j, nc);
                        }
                        float o16[GGML_X_RP_COLS * 2 * GGML_X_RP_ROWS], o8[2][GGML_X_RP_COLS * GGML_X_RP_ROWS];
                        for (int i = 0; i < GGML_X_RP_COLS * 2 * GGML_X_RP_ROWS; i++) {
                            o16[i] = NAN;
                        }
                        k16(nblk, nc, grp, gsz, set, o16);
                        k8(nblk, nc, grp, set, o8[0]);
                        k8(nblk, nc, grp + gsz, set, o8[1]);
                        for (int j = 0; j < nc; j++) {
                            for (int r = 0; r < 2 * GGML_X_RP_ROWS; r++) {
                                const float want = o8[r / GGML_X_RP_ROWS][j*GGML_X_RP_ROWS + r % GGML_X_RP_ROWS];
                                const float got = o16[j*2*GGML_X_RP_ROWS + r];
                                T_CHECK_MSG(memcmp(&got, &want, sizeof(float)) == 0,
                                            "rp16 %s level %s nblk=%d pattern %d nc=%d col %d row %d: %.9g, 8-row kernel %.9g",
                                            ggml_type_name(t), ggml_x_cpu_level_name(k_levels[li]), nblk, pattern, nc, j, r,
                                            got, want);
                                checked++;
                            }
                        }
                    }
                }
                free(w);
                free(grp);
                free(set);
                free(x);
            }
        }
    }
    printf("     %d 16-row kernel results checked\n", checked);
}

// ---------------------------------------------------------------------------------------------
// MUL_MAT through a CPU backend: weights in CPU_REPACK vs in the CPU buffer

struct mm_case {
    enum ggml_type t;
    int k, m, n, b2;
};

static const struct mm_case k_cases[] = {
    { GGML_TYPE_Q4_0, 32, 8, 1, 1 },
    { GGML_TYPE_Q4_0, 96, 21, 1, 1 },
    { GGML_TYPE_Q4_0, 320, 37, 3, 1 },
    { GGML_TYPE_Q4_0, 64, 67, 8, 1 },
    { GGML_TYPE_Q4_0, 128, 45, 9, 1 },    // > 8 columns: several column sets
    { GGML_TYPE_Q4_0, 64, 19, 64, 1 },    // the last column count of the repack kernels
    { GGML_TYPE_Q4_0, 64, 19, 65, 1 },    // the first of the int8 GEMM on unpacked rows
    { GGML_TYPE_Q4_0, 96, 29, 13, 1 },
    { GGML_TYPE_Q4_0, 64, 19, 2, 3 },     // broadcast batches of src1
    { GGML_TYPE_Q8_0, 32, 8, 1, 1 },
    { GGML_TYPE_Q8_0, 96, 21, 2, 1 },
    { GGML_TYPE_Q8_0, 320, 37, 5, 1 },
    { GGML_TYPE_Q8_0, 64, 67, 8, 1 },
    { GGML_TYPE_Q8_0, 128, 45, 11, 1 },
    { GGML_TYPE_Q8_0, 64, 19, 3, 2 },
    { GGML_TYPE_Q4_0, 4096, 64, 4, 1 },
    { GGML_TYPE_Q4_K, 256, 8, 1, 1 },
    { GGML_TYPE_Q4_K, 512, 21, 1, 1 },
    { GGML_TYPE_Q4_K, 768, 37, 3, 1 },
    { GGML_TYPE_Q4_K, 256, 67, 8, 1 },
    { GGML_TYPE_Q4_K, 512, 45, 9, 1 },    // > 8 columns: several column sets
    { GGML_TYPE_Q4_K, 256, 19, 64, 1 },
    { GGML_TYPE_Q4_K, 256, 19, 65, 1 },   // unpacked rows, int8 GEMM
    { GGML_TYPE_Q8_0, 64, 19, 70, 1 },
    { GGML_TYPE_Q4_K, 4352, 29, 5, 1 },   // 17 super-blocks
    { GGML_TYPE_Q4_K, 256, 19, 2, 3 },
    { GGML_TYPE_Q4_K, 4096, 64, 7, 1 },
    { GGML_TYPE_Q4_0, 288, 203, 16, 1 },  // 25 groups (pairs and an odd one) + 3 plain rows, 2 sets
    { GGML_TYPE_Q8_0, 160, 88, 12, 1 },
    { GGML_TYPE_Q4_K, 512, 136, 16, 1 },
    { GGML_TYPE_Q4_0, 2048, 48, 1, 1 },   // one column, an even number of groups
    { GGML_TYPE_Q8_0, 96, 72, 9, 1 },
    { GGML_TYPE_Q4_0, 64, 35, 256, 1 },   // the last column count of the 16-row kernels (VNNI)
    { GGML_TYPE_Q4_0, 64, 35, 257, 1 },   // the first of the int8 GEMM there     // 16-row kernels, then one column on the pairs
    { GGML_TYPE_Q4_K, 256, 40, 17, 1 },
    { GGML_TYPE_Q4_0, 2080, 67, 8, 1 },   // VNNI: 8 columns of 65 blocks walked in slices (64 + 1)
    { GGML_TYPE_Q8_0, 4224, 40, 5, 1 },   // slices of 100 + 32 blocks
    { GGML_TYPE_Q4_0, 8320, 35, 3, 1 },   // slices of 168 + 92 blocks, 2 pairs + 3 plain rows
    { GGML_TYPE_Q6_K, 256, 8, 1, 1 },
    { GGML_TYPE_Q6_K, 512, 21, 1, 1 },
    { GGML_TYPE_Q6_K, 768, 37, 3, 1 },
    { GGML_TYPE_Q6_K, 256, 67, 8, 1 },
    { GGML_TYPE_Q6_K, 512, 45, 9, 1 },    // > 8 columns: several column sets
    { GGML_TYPE_Q6_K, 256, 19, 64, 1 },
    { GGML_TYPE_Q6_K, 256, 19, 65, 1 },   // past the repack kernels' column count: unpacked rows
    { GGML_TYPE_Q6_K, 4352, 29, 5, 1 },   // 17 super-blocks
    { GGML_TYPE_Q6_K, 256, 19, 2, 3 },
    { GGML_TYPE_Q6_K, 2048, 64, 16, 1 },
    { GGML_TYPE_Q6_K, 512, 203, 12, 1 },  // 25 groups (pairs and an odd one) + 3 plain rows, 2 sets
};

static void test_mul_mat(void) {
    ggml_backend_t be = ggml_backend_cpu_init();
    int checked = 0;
    for (size_t ci = 0; ci < sizeof(k_cases) / sizeof(k_cases[0]); ci++) {
        const struct mm_case * c = &k_cases[ci];
        struct ggml_init_params ip = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
        struct ggml_context * cw = ggml_init(ip);
        struct ggml_context * cp = ggml_init(ip);
        struct ggml_context * cg = ggml_init(ip);
        struct ggml_tensor * wr = ggml_new_tensor_2d(cw, c->t, c->k, c->m);
        struct ggml_tensor * wp = ggml_new_tensor_2d(cp, c->t, c->k, c->m);
        struct ggml_tensor * x  = ggml_new_tensor_3d(cg, GGML_TYPE_F32, c->k, c->n, c->b2);
        struct ggml_tensor * yr = ggml_mul_mat(cg, wr, x);
        struct ggml_tensor * yp = ggml_mul_mat(cg, wp, x);
        struct ggml_cgraph * gf = ggml_new_graph(cg);
        ggml_build_forward_expand(gf, yr);
        ggml_build_forward_expand(gf, yp);
        ggml_backend_buffer_t br = ggml_backend_alloc_ctx_tensors_from_buft(cw, ggml_x_backend_cpu_repack_buffer_type());
        ggml_backend_buffer_t bp = ggml_backend_alloc_ctx_tensors(cp, be);
        ggml_backend_buffer_t bg = ggml_backend_alloc_ctx_tensors(cg, be);
        T_CHECK(br != NULL && bp != NULL && bg != NULL);
        T_CHECK(ggml_x_rp_is_packed(wr, NULL));

        const size_t n = ggml_nbytes(wr);
        uint8_t * wb = malloc(n);
        const size_t bs = ggml_type_size(c->t);
        for (size_t i = 0; i < n; i++) {
            wb[i] = rbyte();
        }
        for (size_t b = 0; b < n / bs; b++) { // sane scales (Q4_K: d and dmin; Q6_K: d at the end)
            for (int h = 0; h < (c->t == GGML_TYPE_Q4_K ? 2 : 1); h++) {
                ggml_fp16_t d = ggml_fp32_to_fp16(0.01f + 0.05f * fabsf(rnd()));
                memcpy(wb + b * bs + (c->t == GGML_TYPE_Q6_K ? bs - 2 : 2*(size_t) h), &d, sizeof(d));
            }
        }
        ggml_backend_tensor_set(wr, wb, 0, n);
        ggml_backend_tensor_set(wp, wb, 0, n);
        fill(x);

        const size_t ny = ggml_nbytes(yr);
        float * ref = malloc(ny), * got = malloc(ny), * first = malloc(ny);
        for (int li = 0; li < N_LEVELS; li++) {
            if (!ggml_x_gemm_testing_set_level(k_levels[li])) {
                continue;
            }
            // 8 threads on a smaller machine: threads lose their core mid-walk and the others
            // steal the rest of their ranges (more threads than row groups: empty ranges)
            static const int k_threads[] = { 1, 2, 3, 8 };
            for (size_t ti = 0; ti < sizeof(k_threads) / sizeof(k_threads[0]); ti++) {
                const int th = k_threads[ti];
                ggml_backend_cpu_set_n_threads(be, th);
                memset(yr->data, 0x7f, ny);
                T_CHECK(ggml_backend_graph_compute(be, gf));
                memcpy(got, yr->data, ny);
                memcpy(ref, yp->data, ny);
                if (th == 1) {
                    memcpy(first, got, ny);
                } else {
                    T_CHECK_MSG(memcmp(first, got, ny) == 0, "case %zu level %s: %d threads differ from 1", ci,
                                ggml_x_cpu_level_name(k_levels[li]), th);
                }
                double maxerr = 0.0, maxref = 0.0;
                for (size_t i = 0; i < ny / sizeof(float); i++) {
                    maxerr = fmax(maxerr, fabs((double) got[i] - ref[i]));
                    maxref = fmax(maxref, fabs((double) ref[i]));
                }
                T_CHECK_MSG(maxerr <= 1e-5 * (maxref + 1.0), "case %zu (%s k=%d m=%d n=%d b2=%d) level %s threads %d: max err %g (max %g)",
                            ci, ggml_type_name(c->t), c->k, c->m, c->n, c->b2, ggml_x_cpu_level_name(k_levels[li]), th,
                            maxerr, maxref);
                checked++;
            }
        }
        ggml_x_gemm_testing_set_level(ggml_x_cpu_level());
        free(ref);
        free(got);
        free(first);
        free(wb);
        ggml_backend_buffer_free(br);
        ggml_backend_buffer_free(bp);
        ggml_backend_buffer_free(bg);
        ggml_free(cw);
        ggml_free(cp);
        ggml_free(cg);
    }
    ggml_backend_free(be);
    printf("     %d MUL_MAT results checked\n", checked);
}

// other readers of a repacked tensor fail the compute with a message
static void test_other_ops_fail(void) {
    ggml_backend_t be = ggml_backend_cpu_init();
    struct ggml_init_params ip = { 16 * ggml_tensor_overhead() + 3 * ggml_graph_overhead(), NULL, true };
    struct ggml_context * cw = ggml_init(ip);
    struct ggml_context * cg = ggml_init(ip);
    struct ggml_tensor * w = ggml_new_tensor_2d(cw, GGML_TYPE_Q4_0, 64, 16);
    ggml_backend_buffer_t bw = ggml_backend_alloc_ctx_tensors_from_buft(cw, ggml_x_backend_cpu_repack_buffer_type());
    struct ggml_tensor * ids = ggml_new_tensor_1d(cg, GGML_TYPE_I32, 2);
    struct ggml_tensor * x = ggml_new_tensor_2d(cg, GGML_TYPE_F32, 64, 1);
    struct ggml_tensor * outs[] = {
        ggml_get_rows(cg, w, ids),
        ggml_mul_mat(cg, ggml_view_2d(cg, w, 64, 8, w->nb[1], 8 * w->nb[1]), x), // a view into the groups
    };
    ggml_backend_buffer_t bg = ggml_backend_alloc_ctx_tensors(cg, be);
    T_CHECK(bw != NULL && bg != NULL);
    const int32_t idv[2] = { 1, 3 };
    ggml_backend_tensor_set(ids, idv, 0, sizeof(idv));
    bool old = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
        struct ggml_cgraph * gf = ggml_new_graph(cg);
        ggml_build_forward_expand(gf, outs[i]);
        const bool ok = ggml_backend_graph_compute(be, gf);
        T_CHECK_MSG(!ok, "graph %zu computed", i);
        const char * e = ggml_x_last_error();
        T_CHECK_MSG(e != NULL && strstr(e, "CPU_REPACK") != NULL, "graph %zu: error %s", i, e != NULL ? e : "(none)");
    }
    ggml_x_set_thread_recoverable(old);
    ggml_backend_buffer_free(bw);
    ggml_backend_buffer_free(bg);
    ggml_free(cw);
    ggml_free(cg);
    ggml_backend_free(be);
}

// activations prepared in pieces of blocks (as MUL_MAT's threads do) give the bytes of the whole
// row's preparation, for every column of sets of 1..8 columns and odd block counts
static void test_prep_pieces(void) {
    static const int nblks[] = { 1, 3, 16, 17, 33, 70 };
    for (int ti = 0; ti < 2; ti++) {
        const enum ggml_type t = ti == 0 ? GGML_TYPE_Q4_0 : GGML_TYPE_Q8_0;
        for (size_t si = 0; si < sizeof(nblks) / sizeof(nblks[0]); si++) {
            const int nblk = nblks[si], k = nblk * QK8_0;
            const size_t sz = ggml_x_rp_set_size(k);
            uint8_t * whole = malloc(sz), * pieces = malloc(sz);
            float * x = malloc(sizeof(float) * (size_t) k);
            for (int nc = 1; nc <= GGML_X_RP_COLS; nc += 3) {
                memset(whole, 0x33, sz);
                memset(pieces, 0x33, sz);
                for (int j = 0; j < nc; j++) {
                    for (int i = 0; i < k; i++) {
                        x[i] = (j + 1) * rnd() * (i % 11 == 0 ? 1e4f : 1.0f);
                    }
                    ggml_x_rp_prep(t, x, k, whole, j, nc);
                    for (int b0 = 0; b0 < nblk; b0 += 5) { // pieces of 5 (any size works)
                        ggml_x_rp_prep_blocks(t, x, k, b0, b0 + 5 < nblk ? b0 + 5 : nblk, pieces, j, nc);
                    }
                }
                T_CHECK_MSG(memcmp(whole, pieces, sz) == 0, "%s nblk=%d nc=%d: pieces differ from the whole row",
                            ggml_type_name(t), nblk, nc);
            }
            free(whole);
            free(pieces);
            free(x);
        }
    }
}

int main(void) {
    T_RUN(test_registry);
    T_RUN(test_prep_pieces);
    T_RUN(test_set_get);
    T_RUN(test_kernels);
    T_RUN(test_kernels16);
    T_RUN(test_mul_mat);
    T_RUN(test_other_ops_fail);
    return T_SUMMARY();
}
