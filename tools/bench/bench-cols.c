// bench-cols.c - few-column mat-mul (batched decode) on TinyLlama-shaped weights in CPU_REPACK
// (issue 25 items 1 and 3).
//
//   make bench-cols              (mk/cols.mk: builds build/bin/bench-cols and runs it)
//   build/bin/bench-cols [threads=1,2] [cols=1,2,4,8,16] [types=q4_0,q8_0,q4_K] [reps=5]
//                        [mib=256] [embd=2048] [ff=5632] [kv=256] [buft=repack|cpu]
//
// One "layer" is the seven weight matrices of a TinyLlama-1.1B decode layer (q, k, v, o: embd x
// embd / kv, gate and up: embd -> ff, down: ff -> embd), each multiplied by an F32 activation of
// N columns (N = each entry of cols). The weights are cold: C copies of the layer (at least S MiB
// in all) are used in turn, and a repetition runs, for every column count in turn, one pass over
// all copies; the time of one layer is the pass time / C and the figure is the median over the
// repetitions (so the column counts are measured interleaved, under the same machine load).
// Before each type the read-bandwidth probe of benchutil.h runs with the same thread count.
// Printed per (type, threads, cols): us per layer, x1 = time / time of one column, GB/s of weight
// bytes, and %read = that rate / the probe (for one column: the share of the read bandwidth;
// for N columns, read it as the cost of N columns in units of one column's memory time);
// cpu_us is the process CPU time per layer (all threads, barrier spinning included) and cpu_x1
// its ratio to one column: on a busy shared machine it shows the compute cost that the wall
// times hide.
// Only the public API (and the CPU_REPACK buffer type) is used.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"

#define MAX_COLS  16
#define MAX_REPS  BENCH_MAX_REPS
#define N_MATS    7

static uint64_t g_rng = 0x2545f4914f6cdd1dull;

static float rng_float(void) {
    return bench_rng_float(&g_rng);
}

// CPU time of the whole process (all threads), seconds
static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

struct layer_shape {
    int64_t k[N_MATS], m[N_MATS];
};

static void usage(void) {
    fprintf(stderr, "usage: bench-cols [threads=1,2] [cols=1,2,4,8,16] [types=q4_0,q8_0,q4_K] [reps=5] [mib=256] "
                    "[embd=2048] [ff=5632] [kv=256] [buft=repack|cpu]\n");
    exit(2);
}

static enum ggml_type type_of(const char * s, size_t len) {
    static const struct { const char * n; enum ggml_type t; } tt[] = {
        { "q4_0", GGML_TYPE_Q4_0 }, { "q8_0", GGML_TYPE_Q8_0 }, { "q4_K", GGML_TYPE_Q4_K },
        { "f16", GGML_TYPE_F16 }, { "q6_K", GGML_TYPE_Q6_K }, { "q5_K", GGML_TYPE_Q5_K },
    };
    for (size_t i = 0; i < sizeof(tt) / sizeof(tt[0]); i++) {
        if (strlen(tt[i].n) == len && strncasecmp(tt[i].n, s, len) == 0) {
            return tt[i].t;
        }
    }
    fprintf(stderr, "bench-cols: unknown type %.*s\n", (int) len, s);
    usage();
    return GGML_TYPE_COUNT;
}

// us per layer for each column count (median of reps); false when unsupported
static bool bench(ggml_backend_t backend, bool repack, enum ggml_type type, const struct layer_shape * sh,
                  const int * cols, int ncols, size_t min_bytes, int reps, double * us, double * cpu_us,
                  size_t * lbytes) {
    size_t layer = 0;
    for (int i = 0; i < N_MATS; i++) {
        layer += ggml_row_size(type, sh->k[i]) * (size_t) sh->m[i];
    }
    *lbytes = layer;
    int copies = (int) ((min_bytes + layer - 1) / layer);
    copies = copies < 2 ? 2 : copies > 64 ? 64 : copies;

    struct ggml_init_params wp = { (size_t) (copies * N_MATS + 4) * ggml_tensor_overhead(), NULL, true };
    struct ggml_context * wctx = ggml_init(wp);
    const size_t gsize = ggml_graph_overhead_custom(16, false);
    struct ggml_init_params gp = {
        (size_t) (ncols * (copies * N_MATS + 2)) * ggml_tensor_overhead() + (size_t) (ncols * copies) * gsize, NULL, true
    };
    struct ggml_context * gctx = ggml_init(gp);
    struct ggml_tensor ** w = malloc(sizeof(*w) * (size_t) (copies * N_MATS));
    for (int c = 0; c < copies; c++) {
        for (int i = 0; i < N_MATS; i++) {
            w[c * N_MATS + i] = ggml_new_tensor_2d(wctx, type, sh->k[i], sh->m[i]);
        }
    }
    struct ggml_tensor * x[MAX_COLS][2]; // activations of the embd and ff widths
    struct ggml_cgraph ** g = malloc(sizeof(*g) * (size_t) (ncols * copies));
    struct ggml_tensor * first = NULL;
    for (int ci = 0; ci < ncols; ci++) {
        x[ci][0] = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, sh->k[0], cols[ci]);
        x[ci][1] = ggml_new_tensor_2d(gctx, GGML_TYPE_F32, sh->k[6], cols[ci]);
        for (int c = 0; c < copies; c++) {
            struct ggml_cgraph * gr = ggml_new_graph_custom(gctx, 16, false);
            for (int i = 0; i < N_MATS; i++) {
                struct ggml_tensor * xi = sh->k[i] == sh->k[0] ? x[ci][0] : x[ci][1];
                struct ggml_tensor * y = ggml_mul_mat(gctx, w[c * N_MATS + i], xi);
                first = first != NULL ? first : y;
                ggml_build_forward_expand(gr, y);
            }
            g[ci * copies + c] = gr;
        }
    }
    bool ok = ggml_backend_supports_op(backend, first);
    ggml_backend_buffer_t wbuf = NULL, gbuf = NULL;
    if (ok) {
        wbuf = ggml_backend_alloc_ctx_tensors_from_buft(wctx, repack ? ggml_x_backend_cpu_repack_buffer_type() :
                                                                      ggml_backend_cpu_buffer_type());
        gbuf = ggml_backend_alloc_ctx_tensors(gctx, backend);
        ok = wbuf != NULL && gbuf != NULL;
    }
    if (ok) {
        // a few quantized rows repeated (speed does not depend on the values)
        for (int i = 0; i < N_MATS && ok; i++) {
            const size_t row = ggml_row_size(type, sh->k[i]);
            const int src_rows = 16;
            float * f = malloc(sizeof(float) * (size_t) (sh->k[i] * src_rows));
            for (int64_t e = 0; e < sh->k[i] * src_rows; e++) {
                f[e] = rng_float();
            }
            uint8_t * q = malloc(row * (size_t) sh->m[i]);
            ok = ggml_quantize_chunk(type, f, q, 0, src_rows, sh->k[i], NULL, NULL) == row * src_rows;
            for (int64_t r = src_rows; r < sh->m[i]; r++) {
                memcpy(q + row * (size_t) r, q + row * (size_t) (r % src_rows), row);
            }
            for (int c = 0; c < copies && ok; c++) {
                ggml_backend_tensor_set(w[c * N_MATS + i], q, 0, row * (size_t) sh->m[i]);
            }
            free(q);
            free(f);
        }
        for (int ci = 0; ci < ncols; ci++) {
            for (int h = 0; h < 2; h++) {
                const int64_t n = ggml_nelements(x[ci][h]);
                float * f = malloc(sizeof(float) * (size_t) n);
                for (int64_t e = 0; e < n; e++) {
                    f[e] = rng_float();
                }
                ggml_backend_tensor_set(x[ci][h], f, 0, sizeof(float) * (size_t) n);
                free(f);
            }
        }
    }
    if (ok) {
        for (int i = 0; i < ncols * copies; i++) { // warm-up
            ggml_backend_graph_compute(backend, g[i]);
        }
        static double t[MAX_COLS][MAX_REPS], tc[MAX_COLS][MAX_REPS];
        for (int r = 0; r < reps; r++) {
            for (int ci = 0; ci < ncols; ci++) {
                const double t0 = now_s(), c0 = cpu_s();
                for (int c = 0; c < copies; c++) {
                    ggml_backend_graph_compute(backend, g[ci * copies + c]);
                }
                t[ci][r] = (now_s() - t0) / copies;
                tc[ci][r] = (cpu_s() - c0) / copies;
            }
        }
        for (int ci = 0; ci < ncols; ci++) {
            us[ci] = median(t[ci], reps) * 1e6;
            cpu_us[ci] = median(tc[ci], reps) * 1e6;
        }
    }
    if (gbuf) {
        ggml_backend_buffer_free(gbuf);
    }
    if (wbuf) {
        ggml_backend_buffer_free(wbuf);
    }
    free(g);
    free(w);
    ggml_free(gctx);
    ggml_free(wctx);
    return ok;
}

int main(int argc, char ** argv) {
    int threads[BENCH_MAX_THREADS] = { 1, 2 };
    int n_thr = 2;
    int cols[MAX_COLS] = { 1, 2, 4, 8, 16 };
    int ncols = 5;
    enum ggml_type types[8] = { GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K };
    int n_types = 3;
    int reps = 5;
    size_t mib = 256;
    int64_t embd = 2048, ff = 5632, kv = 256;
    bool repack = true;
    for (int a = 1; a < argc; a++) {
        const char * v = strchr(argv[a], '=');
        if (v == NULL) {
            usage();
        }
        v++;
        if (strncmp(argv[a], "threads=", 8) == 0) {
            n_thr = parse_list(v, threads, BENCH_MAX_THREADS);
        } else if (strncmp(argv[a], "cols=", 5) == 0) {
            ncols = parse_list(v, cols, MAX_COLS);
        } else if (strncmp(argv[a], "reps=", 5) == 0) {
            reps = atoi(v);
        } else if (strncmp(argv[a], "mib=", 4) == 0) {
            mib = (size_t) atoll(v);
        } else if (strncmp(argv[a], "embd=", 5) == 0) {
            embd = atoll(v);
        } else if (strncmp(argv[a], "ff=", 3) == 0) {
            ff = atoll(v);
        } else if (strncmp(argv[a], "kv=", 3) == 0) {
            kv = atoll(v);
        } else if (strncmp(argv[a], "buft=", 5) == 0) {
            repack = strcmp(v, "cpu") != 0;
        } else if (strncmp(argv[a], "types=", 6) == 0) {
            n_types = 0;
            while (*v && n_types < 8) {
                const char * c = strchr(v, ',');
                const size_t len = c ? (size_t) (c - v) : strlen(v);
                types[n_types++] = type_of(v, len);
                v += len + (c ? 1 : 0);
            }
        } else {
            usage();
        }
    }
    if (n_thr < 1 || ncols < 1 || reps < 1 || reps > MAX_REPS || embd % 256 || ff % 256 || kv < 1) {
        usage();
    }
    for (int i = 0; i < ncols; i++) {
        if (cols[i] < 1) {
            usage();
        }
    }
    const struct layer_shape sh = {
        { embd, embd, embd, embd, embd, embd, ff },
        { embd, kv, kv, embd, ff, ff, embd },
    };
    const size_t probe_bytes = (size_t) 512 << 20;
    void * probe_buf = probe_buffer(probe_bytes);
    if (probe_buf == NULL) {
        return 1;
    }
    ggml_backend_t backend = ggml_backend_cpu_init();
    printf("# bench-cols: TinyLlama-shaped layer (embd %lld, ff %lld, kv %lld), weights in %s, cold (>= %zu MiB), "
           "median of %d reps, column counts interleaved\n", (long long) embd, (long long) ff, (long long) kv,
           repack ? "CPU_REPACK" : "CPU", mib, reps);
    printf("%-6s %3s %4s %9s %10s %6s %8s %9s %6s %10s %6s\n", "type", "thr", "cols", "layer_MB", "us/layer", "x1", "GB/s",
           "read_GB/s", "%read", "cpu_us", "cpu_x1");
    for (int it = 0; it < n_thr; it++) {
        ggml_backend_cpu_set_n_threads(backend, threads[it]);
        for (int ti = 0; ti < n_types; ti++) {
            const double bw = probe_read_bw(probe_buf, probe_bytes, threads[it], reps);
            double us[MAX_COLS], cpu_us[MAX_COLS];
            size_t lb = 0;
            if (!bench(backend, repack, types[ti], &sh, cols, ncols, mib << 20, reps, us, cpu_us, &lb)) {
                printf("%-6s %3d unsupported\n", ggml_type_name(types[ti]), threads[it]);
                continue;
            }
            for (int ci = 0; ci < ncols; ci++) {
                const double gbs = (double) lb / (us[ci] * 1e-6) * 1e-9;
                printf("%-6s %3d %4d %9.2f %10.1f %6.2f %8.2f %9.1f %5.1f%% %10.1f %6.2f\n", ggml_type_name(types[ti]),
                       threads[it], cols[ci], lb / 1e6, us[ci], us[ci] / us[0], gbs, bw, 100.0 * gbs / bw, cpu_us[ci],
                       cpu_us[ci] / cpu_us[0]);
            }
            fflush(stdout);
        }
    }
    ggml_backend_free(backend);
    free(probe_buf);
    return 0;
}
