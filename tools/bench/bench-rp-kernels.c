// bench-rp-kernels.c - the CPU_REPACK kernels alone, in cycles: how far a kernel is from its
// instruction floor (weights in L1) and what streaming its weights from memory adds (cold).
//
//   make bench-rp-kernels        (mk/bench.mk: builds build/bin/bench-rp-kernels and runs it)
//   build/bin/bench-rp-kernels [types=q4_0,q8_0,q4_K,q6_K] [cols=1,2,4,8] [reps=7] [mib=256] [kib=N] [k=2048]
//                              [pf=NEAR:FAR,NEAR:FAR,...]
//
// Unlike the other benchmarks this one calls the library's internal kernel table
// (cpu/gemm.h, cpu/repack.h) for the level the CPU runs, so it links only against the same
// build. Per type and column count, the 8-row kernel (run on two groups) and the 16-row
// kernel (both groups at once), where the level has one, are timed on the same weights:
//   hot   two groups of K = 1024 (at most 17 KiB for every type) used over and over: the
//         kernel's own speed, with nothing waiting on memory;
//   cold  groups of K = 2048 (k=) filling mib MiB (huge pages), walked once per repetition in pairs,
//         or with kib= filling N KiB (to keep the weights in L2 or L3), walked as often as reads
//         64 MiB per repetition,
//         as MUL_MAT walks a thread's rows: what the weight stream costs on top.
// The two kernels alternate in every repetition (so that drift on a shared machine hits both);
// figures are medians. Printed: cycles per 16 rows x 256 elements (the clock is measured at the
// start with a chain of dependent adds, one cycle each), weight bytes per cycle and GB/s.
// With pf=, the kernels' prefetch distances (bytes ahead into L1 and into L2, per weight stream;
// the GGML_X_RP_PF / _FAR, GGML_X_RP16_PF / _FAR, GGML_X_RPK_PF / _FAR and GGML_X_RPK16_FAR
// settings of repack-avx512.c and repack-q4k.h, the k-quant ones then at every activation size,
// GGML_X_RPK_MAX_ACT=0) take each listed
// pair in turn within every repetition, so that the settings compare on the same drift; rows
// are then printed per setting.
// Weights are quantized random rows (valid scales); activations are prepared as MUL_MAT does.
// Read against the instruction floor: e.g. on Zen 5, vpdpbusd, vmulps, vfmadd and vpmaddwd share
// two 512-bit multiply pipes, while vcvtdq2ps, vpandd and vpsrlw run beside them (measured next
// to 8 independent vpdpbusd chains, 4.25 cycles per 8: 4 more of the former add 1.7 cycles, 4 of
// the latter about 0.1). The Q4_0 16-row kernel with 8 columns does per 16 rows x 32 elements
// 64 vpdpbusd and 8 (vmulps, vfmadd) pairs, so at least 40 cycles (320 per 16 x 256); it measures
// 372-377 per 16 x 256 hot. What streaming the weights adds depends on where they come from
// (kib=; 2026-12-05, K = 2048): about 7 % from L2 (64-512 KiB of
// weights), 17-22 % from L3 (2-8 MiB), 21-58 % from memory, varying with the VM's load.

#include "ggml.h"
#include "ggml-quants.h"
#include "cpu/cpu-features.h"
#include "cpu/gemm.h"
#include "cpu/repack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "benchutil.h"

#define MAX_COLS 8
#define MAX_REPS 51
#define MAX_PF 8

// cycles per second: a chain of dependent adds runs one per cycle on every x86-64 and arm64 core
static double clock_hz(void) {
    const long n = 200000000;
    long x = 0;
    const double t0 = now_s();
    for (long i = 0; i < n; i++) {
        __asm__ volatile("" : "+r"(x));
        x += 1;
    }
    const double t1 = now_s();
    return x == n ? (double) n / (t1 - t0) : 0.0;
}

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static float rng_float(void) {
    return bench_rng_float(&g_rng);
}

// two groups (16 rows) of k elements of type t, quantized from random rows and packed
static uint8_t * make_pair(enum ggml_type t, int64_t k, size_t * gs) {
    const size_t rs = ggml_row_size(t, k);
    float * f = malloc(sizeof(float) * (size_t) k * 2 * GGML_X_RP_ROWS);
    char * plain = malloc(rs * 2 * GGML_X_RP_ROWS);
    uint8_t * pair = aligned_alloc(64, (rs * 2 * GGML_X_RP_ROWS + 63) / 64 * 64);
    for (int64_t i = 0; i < k * 2 * GGML_X_RP_ROWS; i++) {
        f[i] = rng_float();
    }
    int64_t hist[16] = { 0 };
    ggml_quantize_chunk(t, f, plain, 0, 2 * GGML_X_RP_ROWS, (int) k, hist, NULL);
    const struct ggml_x_rp_layout l = { t, ggml_type_size(t), k / ggml_blck_size(t), rs, 2, 2 * GGML_X_RP_ROWS * rs };
    ggml_x_rp_pack(&l, (char *) pair, plain, 0, l.packed);
    free(f);
    free(plain);
    *gs = GGML_X_RP_ROWS * rs;
    return pair;
}

// the prepared activations of nc random columns
static uint8_t * make_set(enum ggml_type t, int64_t k, int nc) {
    const size_t sz = (ggml_x_rp_set_size(k) + 63) / 64 * 64;
    uint8_t * set = aligned_alloc(64, sz);
    float * x = malloc(sizeof(float) * (size_t) k);
    for (int j = 0; j < nc; j++) {
        for (int64_t i = 0; i < k; i++) {
            x[i] = rng_float();
        }
        ggml_x_rp_prep(t, x, k, set, j, nc);
    }
    free(x);
    return set;
}

// one pass over npair pairs (stride 2 gs) by the 8-row kernel (which == 8) or the 16-row one
static double run_pass(const struct ggml_x_gemm_kernels * kt, enum ggml_type t, int which, int64_t nblk, int nc,
                       const uint8_t * w, size_t gs, size_t npair, int times, const uint8_t * set) {
    const ggml_x_rp_kernel_t k8 = ggml_x_rp_kernel_of(kt, t);
    const ggml_x_rp16_kernel_t k16 = ggml_x_rp16_kernel_of(kt, t);
    float out[MAX_COLS * 2 * GGML_X_RP_ROWS];
    const double t0 = now_s();
    for (int r = 0; r < times; r++) {
        for (size_t p = 0; p < npair; p++) {
            const uint8_t * g = w + p * 2 * gs;
            if (which == 8) {
                k8(nblk, nc, g, set, out);
                k8(nblk, nc, g + gs, set, out);
            } else {
                k16(nblk, nc, g, gs, set, out);
            }
            __asm__ volatile("" : : "r"(out) : "memory");
        }
    }
    return now_s() - t0;
}

// the kernels' prefetch distances: the settings the VNNI kernel table reads when it
// is set up, then the table set up again (it only writes the distances: the active table is
// unchanged)
static void set_prefetch(long near, long far) {
    char v[32];
    snprintf(v, sizeof(v), "%ld", near);
    setenv("GGML_X_RP_PF", v, 1);
    setenv("GGML_X_RP16_PF", v, 1);
    setenv("GGML_X_RPK_PF", v, 1);
    snprintf(v, sizeof(v), "%ld", far);
    setenv("GGML_X_RP_FAR", v, 1);
    setenv("GGML_X_RP16_FAR", v, 1);
    setenv("GGML_X_RPK_FAR", v, 1);
    setenv("GGML_X_RPK16_FAR", v, 1);
    setenv("GGML_X_RPK_MAX_ACT", "0", 1); // the k-quant settings at every activation size
    struct ggml_x_gemm_kernels k;
    ggml_x_gemm_kernels_for_level(ggml_x_cpu_level(), &k);
}

int main(int argc, char ** argv) {
    const char * types = "q4_0,q8_0,q4_K,q6_K";
    int cols[MAX_COLS] = { 1, 2, 4, 8 }, ncols = 4, reps = 7, mib = 256, kib = 0;
    long pf_near[MAX_PF], pf_far[MAX_PF];
    int npf = 0; // 0: the library's settings
    int kcold = 2048;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "types=", 6) == 0) {
            types = argv[i] + 6;
        } else if (strncmp(argv[i], "cols=", 5) == 0) {
            ncols = parse_list(argv[i] + 5, cols, MAX_COLS);
        } else if (strncmp(argv[i], "reps=", 5) == 0) {
            reps = atoi(argv[i] + 5);
        } else if (strncmp(argv[i], "pf=", 3) == 0) {
            for (const char * q = argv[i] + 3; *q != '\0' && npf < MAX_PF;) {
                char * e = NULL;
                pf_near[npf] = strtol(q, &e, 10);
                if (e == NULL || *e != ':') {
                    fprintf(stderr, "pf: NEAR:FAR pairs, e.g. pf=1024:12288,4096:0\n");
                    return 2;
                }
                pf_far[npf++] = strtol(e + 1, &e, 10);
                q = *e == ',' ? e + 1 : e;
            }
        } else if (strncmp(argv[i], "k=", 2) == 0) {
            kcold = atoi(argv[i] + 2);
        } else if (strncmp(argv[i], "mib=", 4) == 0) {
            mib = atoi(argv[i] + 4);
        } else if (strncmp(argv[i], "kib=", 4) == 0) {
            kib = atoi(argv[i] + 4);
        } else {
            fprintf(stderr, "usage: %s [types=q4_0,q8_0,q4_K,q6_K] [cols=1,2,4,8] [reps=7] [mib=256] [kib=N] [k=2048] [pf=NEAR:FAR,...]\n", argv[0]);
            return 2;
        }
    }
    reps = reps < 1 ? 1 : reps > MAX_REPS ? MAX_REPS : reps;
    if (kcold < 256 || kcold % 256 != 0) {
        fprintf(stderr, "k: a multiple of 256\n");
        return 2;
    }
    mib = mib < 16 ? 16 : mib;
    const size_t cold_bytes = kib > 0 ? (size_t) kib << 10 : (size_t) mib << 20;
    for (int i = 0; i < ncols; i++) {
        if (cols[i] < 1 || cols[i] > MAX_COLS) {
            fprintf(stderr, "cols: 1..%d\n", MAX_COLS);
            return 2;
        }
    }
    ggml_free(ggml_init((struct ggml_init_params) { 1024, NULL, false })); // the fp16 tables
    const struct ggml_x_gemm_kernels * kt = ggml_x_gemm_kernels_active();
    const double hz = clock_hz();
    printf("# bench-rp-kernels: level %s, clock %.2f GHz (dependent adds); medians of %d reps, the kernels alternating;\n"
           "# hot: two groups of K = 1024 in L1; cold: %zu KiB of groups of K = %d walked in pairs\n",
           ggml_x_cpu_level_name(ggml_x_cpu_level()), hz * 1e-9, reps, cold_bytes >> 10, kcold);
    printf("%-6s %4s %6s %5s %12s %8s %8s\n", "type", "cols", "kernel", "data", "cyc/16x256", "B/cyc", "GB/s");
    const enum ggml_type all[] = { GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K, GGML_TYPE_Q6_K };
    for (size_t ti = 0; ti < sizeof(all) / sizeof(all[0]); ti++) {
        const enum ggml_type t = all[ti];
        if (strstr(types, ggml_type_name(t)) == NULL || ggml_x_rp_kernel_of(kt, t) == NULL) {
            continue;
        }
        const bool has16 = ggml_x_rp16_kernel_of(kt, t) != NULL;
        for (int pass = 0; pass < 2; pass++) {
            const bool cold = pass == 1;
            const int64_t k = cold ? kcold : 1024;
            const int64_t nblk = k / ggml_blck_size(t);
            size_t gs;
            uint8_t * pair = make_pair(t, k, &gs);
            size_t npair = 1, bytes = 2 * gs;
            uint8_t * w = pair;
            if (cold) {
                npair = cold_bytes / (2 * gs);
                npair = npair < 1 ? 1 : npair;
                bytes = npair * 2 * gs;
                const size_t huge = (size_t) 2 << 20;
                w = aligned_alloc(huge, (bytes + huge - 1) / huge * huge);
                madvise(w, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);
                for (size_t p = 0; p < npair; p++) {
                    memcpy(w + p * 2 * gs, pair, 2 * gs);
                }
            }
            // hot: enough repetitions of the pair for about 1 ms; cold with kib=: about 64 MiB read
            const int times = !cold ? (int) (1e6 / (double) (2 * gs)) * 4 + 1 :
                              kib > 0 ? (int) (1 + ((size_t) 64 << 20) / bytes) : 1;
            for (int ci = 0; ci < ncols; ci++) {
                const int nc = cols[ci];
                uint8_t * set = make_set(t, k, nc);
                const int npass = npf > 0 ? npf : 1;
                double s[2 * MAX_PF][MAX_REPS];
                run_pass(kt, t, 8, nblk, nc, w, gs, npair, cold ? times : 16, set); // warm-up
                for (int r = 0; r < reps; r++) {
                    for (int pi = 0; pi < npass; pi++) {
                        if (npf > 0) {
                            set_prefetch(pf_near[pi], pf_far[pi]);
                        }
                        for (int wi = 0; wi < (has16 ? 2 : 1); wi++) {
                            s[2*pi + wi][r] = run_pass(kt, t, wi == 0 ? 8 : 16, nblk, nc, w, gs, npair, times, set);
                        }
                    }
                }
                for (int pi = 0; pi < npass; pi++) {
                    for (int wi = 0; wi < (has16 ? 2 : 1); wi++) {
                        const double sec = median(s[2*pi + wi], reps) / times;
                        const double units = (double) npair * (double) k / 256.0; // 16 rows x 256 elements
                        const double cyc = sec * hz / units;
                        char pfs[40] = "";
                        if (npf > 0) {
                            snprintf(pfs, sizeof(pfs), " %ld:%ld", pf_near[pi], pf_far[pi]);
                        }
                        printf("%-6s %4d %6s %5s %12.1f %8.2f %8.1f%s\n", ggml_type_name(t), nc, wi == 0 ? "8-row" : "16-row",
                               cold ? "cold" : "hot", cyc, (double) bytes / (sec * hz), (double) bytes / sec * 1e-9, pfs);
                        fflush(stdout);
                    }
                }
                free(set);
            }
            if (w != pair) {
                free(w);
            }
            free(pair);
        }
    }
    return 0;
}
