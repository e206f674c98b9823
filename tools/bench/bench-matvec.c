// bench-matvec.c - matrix-vector speed of every weight type against the machine's read
// bandwidth measured in the same run (issue 17, items 1 and 5).
//
//   make bench-matvec            (builds build/bin/bench-matvec and runs it)
//   build/bin/bench-matvec [threads=1,2] [reps=R] [types=all|q4_0,q5_K,...] [cols=N]
//                          [k=K] [m=M] [mib=S] [buft=cpu|repack]
//
// For each thread count and each type: MUL_MAT of a weight
// [K, M] of the type (default 4096 x 4096) by an F32 matrix [K, N] (N = cols, default 1) on the
// CPU backend with THREADS threads. The weights are cold: C copies (at least S MiB in all,
// default 256, several times the last-level cache) are used in turn, one graph per copy, and a
// repetition is one pass over all copies; the time of one product is the pass time / C, and the
// figure the median of R repetitions (default 7) after one warm-up pass. Each repetition is
// preceded by two passes of the read-bandwidth probe (THREADS pthreads each summing its share of
// a buffer of 512 MiB, huge pages), the faster of which counts. Printed: weight GB/s (weight bytes / time of one product), the probe's
// median and the median of the per-repetition shares weight GB/s / probe GB/s: the bandwidth of
// a shared VM drifts within seconds, so a share against a probe taken right beside each
// repetition is steadier than one against a single probe per type (measured: runs of the same
// build spread 68-90 % with the latter).
//
// Weights are random values quantized with ggml_quantize_chunk (a few rows, repeated: speed
// does not depend on the values); buft=repack puts the tensors in the CPU_REPACK buffer type,
// which stores Q4_0, Q8_0, Q4_K and Q6_K weights interleaved for its own kernels (as the LLaMA
// runner does) and every other type plainly. Types the library cannot quantize (IQ2) get random bytes with
// a small valid fp16 scale in every block. Types whose MUL_MAT the backend does not support are
// listed as such. Only the public API is used, so the same file links against any build of the
// library (e.g. a baseline one) for before/after comparisons.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchutil.h"

#define MAX_THREADS BENCH_MAX_THREADS
#define MAX_TYPES   32
#define MAX_REPS    BENCH_MAX_REPS

// ---------------------------------------------------------------------------------------------
// matrix-vector products

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static uint32_t rng_next(void) {
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t) (g_rng >> 32);
}

static float rng_float(void) {
    return (float) rng_next() / 4294967296.0f * 2.0f - 1.0f;
}

// one row-block of weight data (src_rows rows of the type), repeated to fill m rows
static bool fill_weights(enum ggml_type type, int64_t k, int src_rows, uint8_t * dst, int64_t m) {
    const size_t row = ggml_row_size(type, k);
    float * x = malloc(sizeof(float) * (size_t) (k * src_rows));
    for (int64_t i = 0; i < k * src_rows; i++) {
        x[i] = rng_float();
    }
    bool ok = true;
    if (type == GGML_TYPE_IQ2_XXS || type == GGML_TYPE_IQ2_XS) {
        // random codebook bytes; each 256-element block starts with its fp16 scale: set it to 1/64
        const size_t blk = ggml_type_size(type);
        for (size_t i = 0; i < row * (size_t) src_rows; i++) {
            dst[i] = (uint8_t) rng_next();
        }
        for (size_t off = 0; off + blk <= row * (size_t) src_rows; off += blk) {
            const ggml_fp16_t d = ggml_fp32_to_fp16(1.0f / 64.0f);
            memcpy(dst + off, &d, sizeof(d));
        }
    } else {
        ok = ggml_quantize_chunk(type, x, dst, 0, src_rows, (int) k, NULL, NULL) == row * (size_t) src_rows;
    }
    free(x);
    for (int64_t r = src_rows; ok && r < m; r++) {
        memcpy(dst + row * (size_t) r, dst + row * (size_t) (r % src_rows), row);
    }
    return ok;
}

struct mv_result {
    bool   supported;
    double seconds;   // one product, median
    double probe_gbs; // read probe, median
    double share;     // median of the per-repetition (weight GB/s) / (probe GB/s)
    size_t wbytes;    // bytes of one weight matrix
    int    copies;
};

static bool g_repack = false; // buft=repack

static struct mv_result bench_type(ggml_backend_t backend, enum ggml_type type, int64_t k, int64_t m,
                                   int64_t n_cols, size_t min_bytes, int reps, const void * probe_buf,
                                   size_t probe_bytes, int nth) {
    struct mv_result res = { false, 0.0, 0.0, 0.0, ggml_row_size(type, k) * (size_t) m, 0 };
    int copies = (int) ((min_bytes + res.wbytes - 1) / res.wbytes);
    copies = copies < 2 ? 2 : copies > 256 ? 256 : copies;
    res.copies = copies;

    struct ggml_init_params params = {
        /* .mem_size   = */ (size_t) (2 * copies + 4) * ggml_tensor_overhead() +
                            (size_t) copies * ggml_graph_overhead_custom(8, false),
        /* .mem_buffer = */ NULL,
        /* .no_alloc   = */ true,
    };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, n_cols);
    struct ggml_tensor ** w = malloc(sizeof(*w) * (size_t) copies);
    struct ggml_tensor ** y = malloc(sizeof(*y) * (size_t) copies);
    for (int c = 0; c < copies; c++) {
        w[c] = ggml_new_tensor_2d(ctx, type, k, m);
        y[c] = ggml_mul_mat(ctx, w[c], x);
    }
    if (!ggml_backend_supports_op(backend, y[0])) {
        free(w);
        free(y);
        ggml_free(ctx);
        return res;
    }
    ggml_backend_buffer_t buf = g_repack ? ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_x_backend_cpu_repack_buffer_type())
                                         : ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (buf == NULL) {
        fprintf(stderr, "bench-matvec: cannot allocate %d x %zu bytes for %s\n", copies, res.wbytes, ggml_type_name(type));
        free(w);
        free(y);
        ggml_free(ctx);
        return res;
    }
    res.supported = true;

    uint8_t * wdata = malloc(res.wbytes);
    if (!fill_weights(type, k, 16, wdata, m)) {
        fprintf(stderr, "bench-matvec: cannot quantize to %s\n", ggml_type_name(type));
        res.supported = false;
    }
    for (int c = 0; res.supported && c < copies; c++) {
        ggml_backend_tensor_set(w[c], wdata, 0, res.wbytes);
    }
    free(wdata);
    float * xv = malloc(sizeof(float) * (size_t) (k * n_cols));
    for (int64_t i = 0; i < k * n_cols; i++) {
        xv[i] = rng_float();
    }
    ggml_backend_tensor_set(x, xv, 0, sizeof(float) * (size_t) (k * n_cols));
    free(xv);

    struct ggml_cgraph ** g = malloc(sizeof(*g) * (size_t) copies);
    for (int c = 0; c < copies; c++) {
        g[c] = ggml_new_graph_custom(ctx, 8, false);
        ggml_build_forward_expand(g[c], y[c]);
    }
    if (res.supported) {
        for (int c = 0; c < copies; c++) { // warm-up pass
            ggml_backend_graph_compute(backend, g[c]);
        }
        double t[MAX_REPS], bw[MAX_REPS], share[MAX_REPS];
        for (int r = 0; r < reps; r++) {
            // the faster of two passes: the first can share the cores with the CPU backend's
            // workers still waiting for work after the previous repetition
            const double bw0 = probe_read_bw(probe_buf, probe_bytes, nth, 1);
            const double bw1 = probe_read_bw(probe_buf, probe_bytes, nth, 1);
            bw[r] = bw0 > bw1 ? bw0 : bw1;
            const double t0 = now_s();
            for (int c = 0; c < copies; c++) {
                ggml_backend_graph_compute(backend, g[c]);
            }
            t[r] = (now_s() - t0) / copies;
            share[r] = (double) res.wbytes / t[r] * 1e-9 / bw[r];
        }
        res.seconds = median(t, reps);
        res.probe_gbs = median(bw, reps);
        res.share = median(share, reps);
    }
    free(g);
    free(w);
    free(y);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    return res;
}

// ---------------------------------------------------------------------------------------------

static const struct { const char * name; enum ggml_type type; } k_types[] = {
    { "f32", GGML_TYPE_F32 },   { "f16", GGML_TYPE_F16 },
    { "q4_0", GGML_TYPE_Q4_0 }, { "q4_1", GGML_TYPE_Q4_1 }, { "q5_0", GGML_TYPE_Q5_0 },
    { "q5_1", GGML_TYPE_Q5_1 }, { "q8_0", GGML_TYPE_Q8_0 },
    { "q2_K", GGML_TYPE_Q2_K }, { "q3_K", GGML_TYPE_Q3_K }, { "q4_K", GGML_TYPE_Q4_K },
    { "q5_K", GGML_TYPE_Q5_K }, { "q6_K", GGML_TYPE_Q6_K },
    { "iq2_xxs", GGML_TYPE_IQ2_XXS }, { "iq2_xs", GGML_TYPE_IQ2_XS },
};
#define N_KNOWN_TYPES ((int) (sizeof(k_types) / sizeof(k_types[0])))

static int find_type(const char * name, size_t len) {
    for (int i = 0; i < N_KNOWN_TYPES; i++) {
        if (strlen(k_types[i].name) == len && strncasecmp(k_types[i].name, name, len) == 0) {
            return i;
        }
    }
    return -1;
}

static void usage(void) {
    fprintf(stderr, "usage: bench-matvec [threads=1,2] [reps=7] [types=all|q4_0,q5_K,...] [cols=1] "
                    "[k=4096] [m=4096] [mib=256] [buft=cpu|repack]\n");
    exit(2);
}

int main(int argc, char ** argv) {
    int threads[MAX_THREADS] = { 1, 2 };
    int n_thr = 2;
    int reps = 7;
    int64_t n_cols = 1, k = 4096, m = 4096;
    size_t min_mib = 256;
    int types[MAX_TYPES];
    int n_types = 0;
    for (int i = 0; i < N_KNOWN_TYPES; i++) {
        types[n_types++] = i;
    }
    for (int a = 1; a < argc; a++) {
        const char * v = strchr(argv[a], '=');
        if (v == NULL) {
            usage();
        }
        v++;
        if (strncmp(argv[a], "threads=", 8) == 0) {
            n_thr = parse_list(v, threads, MAX_THREADS);
        } else if (strncmp(argv[a], "reps=", 5) == 0) {
            reps = atoi(v);
        } else if (strncmp(argv[a], "cols=", 5) == 0) {
            n_cols = atoll(v);
        } else if (strncmp(argv[a], "k=", 2) == 0) {
            k = atoll(v);
        } else if (strncmp(argv[a], "m=", 2) == 0) {
            m = atoll(v);
        } else if (strncmp(argv[a], "buft=", 5) == 0) {
            if (strcmp(v, "repack") != 0 && strcmp(v, "cpu") != 0) {
                usage();
            }
            g_repack = strcmp(v, "repack") == 0;
        } else if (strncmp(argv[a], "mib=", 4) == 0) {
            min_mib = (size_t) atoll(v);
        } else if (strncmp(argv[a], "types=", 6) == 0) {
            if (strcmp(v, "all") != 0) {
                n_types = 0;
                while (*v && n_types < MAX_TYPES) {
                    const char * c = strchr(v, ',');
                    const size_t len = c ? (size_t) (c - v) : strlen(v);
                    const int t = find_type(v, len);
                    if (t < 0) {
                        fprintf(stderr, "bench-matvec: unknown type %.*s\n", (int) len, v);
                        usage();
                    }
                    types[n_types++] = t;
                    v += len + (c ? 1 : 0);
                }
            }
        } else {
            usage();
        }
    }
    if (n_thr < 1 || reps < 1 || reps > MAX_REPS || n_cols < 1 || k < 256 || k % 256 != 0 || m < 1) {
        usage();
    }
    for (int i = 0; i < n_thr; i++) {
        if (threads[i] < 1 || threads[i] > MAX_THREADS) {
            usage();
        }
    }

    const size_t probe_bytes = (size_t) 512 << 20;
    void * probe_buf = probe_buffer(probe_bytes);
    if (probe_buf == NULL) {
        fprintf(stderr, "bench-matvec: cannot allocate the probe buffer\n");
        return 1;
    }

    ggml_backend_t backend = ggml_backend_cpu_init();
    printf("# bench-matvec: MUL_MAT weight [%lld, %lld] x F32 [%lld, %lld], cold weights (>= %zu MiB of copies), "
           "median of %d reps; read probe %zu MiB before each rep; buffer %s\n",
           (long long) k, (long long) m, (long long) k, (long long) n_cols, min_mib, reps, probe_bytes >> 20,
           g_repack ? "CPU_REPACK" : "CPU");
    printf("%-8s %3s %4s %9s %6s %9s %8s %9s %6s\n", "type", "thr", "cols", "weight_MB", "copies", "us", "GB/s",
           "read_GB/s", "%read");
    for (int it = 0; it < n_thr; it++) {
        const int nth = threads[it];
        ggml_backend_cpu_set_n_threads(backend, nth);
        for (int ti = 0; ti < n_types; ti++) {
            const struct mv_result r = bench_type(backend, k_types[types[ti]].type, k, m, n_cols,
                                                  min_mib << 20, reps, probe_buf, probe_bytes, nth);
            if (!r.supported) {
                printf("%-8s %3d %4lld %9.2f %6s %9s %8s %9s %6s\n", k_types[types[ti]].name, nth, (long long) n_cols,
                       r.wbytes / 1e6, "-", "unsupp", "-", "-", "-");
                continue;
            }
            const double gbs = (double) r.wbytes / r.seconds * 1e-9;
            printf("%-8s %3d %4lld %9.2f %6d %9.1f %8.2f %9.1f %5.1f%%\n", k_types[types[ti]].name, nth, (long long) n_cols,
                   r.wbytes / 1e6, r.copies, r.seconds * 1e6, gbs, r.probe_gbs, 100.0 * r.share);
            fflush(stdout);
        }
    }
    ggml_backend_free(backend);
    free(probe_buf);
    return 0;
}
