// bench-attn.c - the attention node of a decode step (ggml_x_attn_masked over an F16 KV cache laid
// out as the LLaMA runner lays it out), alone: time per node, and the rate at which it reads the
// cache against the read bandwidth measured in the same run.
//
//   make bench-attn             (builds build/bin/bench-attn and runs it)
//   build/bin/bench-attn [cells=256,1024,4096] [tokens=1,8] [threads=1,2] [reps=15]
//                        [dim=64] [heads=32] [headkv=4] [type=f16|f32] [cold=1] [seqs=1]
//                        [ktype=TYPE] [vtype=TYPE] [vrows=0|1] [softcap=C]
//
// type= sets both halves; ktype= and vtype= one (any type the node takes: f32, f16, q8_0,
// q4_0, ...). A quantized V is stored by cells (ggml_x_attn_masked_vrows, as the runner stores
// it); vrows=1 stores an F16 or F32 V so too. softcap=C soft-caps the scores at C (C tanh(s / C),
// as Gemma 2 does with 50).
//
// With seqs=1 every token sees every cell (a decode step after a shared context); with seqs=S
// the cells belong to S sequences in turn (as S sequences decoded together fill a cache) and
// token t sees those of sequence t % S. With cold=1 (default) a
// 64 MiB buffer is read between computes, so the cache starts out of the CPU caches, as it does
// in a decode step after the weights went through. Figures are medians over reps computes.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"

static uint64_t g_rng = 7;

static void fill(struct ggml_tensor * t, float s) {
    const int64_t n = ggml_nelements(t);
    float * f = malloc(sizeof(float) * (size_t) n);
    for (int64_t i = 0; i < n; i++) {
        f[i] = s * bench_rng_float(&g_rng);
    }
    if (t->type == GGML_TYPE_F32) {
        ggml_backend_tensor_set(t, f, 0, ggml_nbytes(t));
    } else { // F16 or quantized: through the type's conversion
        void * h = malloc(ggml_nbytes(t));
        ggml_internal_get_type_traits(t->type).from_float(f, h, (int) n);
        ggml_backend_tensor_set(t, h, 0, ggml_nbytes(t));
        free(h);
    }
    free(f);
}

// the type named s, or GGML_TYPE_COUNT
static enum ggml_type type_named(const char * s) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        const char * name = ggml_type_name((enum ggml_type) t);
        if (name != NULL && !strcmp(name, s) && ggml_internal_get_type_traits((enum ggml_type) t).from_float != NULL) {
            return (enum ggml_type) t;
        }
    }
    return GGML_TYPE_COUNT;
}

static volatile float g_sink;

static void flush(const float * buf, size_t n) {
    float s = 0;
    for (size_t i = 0; i < n; i += 16) {
        s += buf[i];
    }
    g_sink = s;
}

int main(int argc, char ** argv) {
    int cells[8] = {256, 1024, 4096}, ncells = 3;
    int tokens[8] = {1, 8}, ntokens = 2;
    int threads[8] = {1, 2}, nthreads = 2;
    int reps = 15, dim = 64, heads = 32, headkv = 4, cold = 1, seqs = 1, vrows = 0;
    float softcap = 0.0f; // the scores' soft-capping (Gemma 2: 50), 0: none
    enum ggml_type ktype = GGML_TYPE_F16, vtype = GGML_TYPE_F16;
    for (int i = 1; i < argc; i++) {
        const char * a = argv[i];
        if (!strncmp(a, "cells=", 6)) {
            ncells = parse_list(a + 6, cells, 8);
        } else if (!strncmp(a, "tokens=", 7)) {
            ntokens = parse_list(a + 7, tokens, 8);
        } else if (!strncmp(a, "threads=", 8)) {
            nthreads = parse_list(a + 8, threads, 8);
        } else if (!strncmp(a, "reps=", 5)) {
            reps = atoi(a + 5);
        } else if (!strncmp(a, "dim=", 4)) {
            dim = atoi(a + 4);
        } else if (!strncmp(a, "heads=", 6)) {
            heads = atoi(a + 6);
        } else if (!strncmp(a, "headkv=", 7)) {
            headkv = atoi(a + 7);
        } else if (!strncmp(a, "seqs=", 5)) {
            seqs = atoi(a + 5);
        } else if (!strncmp(a, "cold=", 5)) {
            cold = atoi(a + 5);
        } else if (!strncmp(a, "type=", 5)) {
            ktype = vtype = type_named(a + 5);
        } else if (!strncmp(a, "ktype=", 6)) {
            ktype = type_named(a + 6);
        } else if (!strncmp(a, "vtype=", 6)) {
            vtype = type_named(a + 6);
        } else if (!strncmp(a, "vrows=", 6)) {
            vrows = atoi(a + 6);
        } else if (!strncmp(a, "softcap=", 8)) {
            softcap = (float) atof(a + 8);
        } else {
            fprintf(stderr, "unknown argument %s\n", a);
            return 2;
        }
    }
    vrows = vrows || ggml_is_quantized(vtype);
    if (reps < 1 || reps > BENCH_MAX_REPS || dim < 1 || headkv < 1 || heads % headkv != 0 || seqs < 1 ||
        ktype == GGML_TYPE_COUNT || vtype == GGML_TYPE_COUNT) {
        fprintf(stderr, "bad arguments\n");
        return 2;
    }
    const size_t flush_n = (size_t) 16 << 20;
    float * fbuf = calloc(flush_n, sizeof(float));
    const size_t pbytes = (size_t) 256 << 20;
    void * pbuf = probe_buffer(pbytes);
    if (pbuf == NULL) {
        fprintf(stderr, "bench-attn: cannot allocate the probe buffer\n");
        return 1;
    }
    ggml_backend_t be = ggml_backend_cpu_init();

    printf("attention node, K %s, V %s%s, head dim %d, %d heads over %d KV heads, cells of %d sequence(s)%s",
           ggml_type_name(ktype), ggml_type_name(vtype), vrows ? " by cells" : " transposed", dim, heads, headkv, seqs,
           cold ? ", cache cold" : "");
    if (softcap > 0.0f) {
        printf(", scores soft-capped at %g", (double) softcap);
    }
    printf("\n");
    printf("%7s %6s %7s %10s %10s %9s %9s\n", "cells", "tokens", "threads", "us/node", "probe GB/s", "KV GB/s",
           "cyc/cell");
    for (int ic = 0; ic < ncells; ic++) {
        for (int it = 0; it < ntokens; it++) {
            const int64_t M = cells[ic], N = tokens[it], D = dim, H = heads, Hk = headkv;
            struct ggml_init_params ip = {ggml_tensor_overhead() * 16 + ggml_graph_overhead() + 1024, NULL, true};
            struct ggml_context * ctx = ggml_init(ip);
            // the caches as the runner keeps them: K a row of D*Hk per cell, V a row of M cells per
            // channel (or, vrows, a row of D*Hk per cell)
            struct ggml_tensor * kc = ggml_new_tensor_1d(ctx, ktype, D * Hk * M);
            struct ggml_tensor * vc = ggml_new_tensor_1d(ctx, vtype, D * Hk * M);
            struct ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, D, H, N);
            struct ggml_tensor * mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, M, N);
            struct ggml_tensor * k = ggml_view_3d(ctx, kc, D, M, Hk, ggml_row_size(ktype, D * Hk), ggml_row_size(ktype, D), 0);
            const float scale = 1.0f / sqrtf((float) D);
            struct ggml_tensor * out;
            if (vrows) {
                struct ggml_tensor * v = ggml_view_3d(ctx, vc, D, M, Hk, ggml_row_size(vtype, D * Hk), ggml_row_size(vtype, D), 0);
                out = ggml_x_attn_masked_vrows(ctx, q, k, v, mask, scale, softcap);
            } else {
                const size_t es = ggml_type_size(vtype);
                struct ggml_tensor * v = ggml_view_3d(ctx, vc, M, D, Hk, es * M, es * M * D, 0);
                out = ggml_x_attn_masked(ctx, q, k, v, mask, scale, softcap);
            }
            struct ggml_cgraph * gf = ggml_new_graph(ctx);
            ggml_build_forward_expand(gf, out);
            ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, be);
            fill(kc, 1.0f);
            fill(vc, 1.0f);
            fill(q, 0.5f);
            float * m = calloc((size_t) (M * N), sizeof(float));
            for (int64_t t = 0; t < N; t++) {
                for (int64_t c = 0; c < M; c++) {
                    if (c % seqs != t % seqs) {
                        m[t * M + c] = -INFINITY;
                    }
                }
            }
            ggml_backend_tensor_set(mask, m, 0, ggml_nbytes(mask));
            free(m);
            const double kv_bytes = (double) (ggml_nbytes(kc) + ggml_nbytes(vc));
            for (int ith = 0; ith < nthreads; ith++) {
                ggml_backend_cpu_set_n_threads(be, threads[ith]);
                const double bw = probe_read_bw(pbuf, pbytes, threads[ith], 5);
                double t[BENCH_MAX_REPS];
                for (int r = -2; r < reps; r++) {
                    if (cold) {
                        flush(fbuf, flush_n);
                    }
                    const double t0 = now_s();
                    ggml_backend_graph_compute(be, gf);
                    if (r >= 0) {
                        t[r] = now_s() - t0;
                    }
                }
                const double s = median(t, reps);
                // cycles (at an assumed 3.5 GHz, for comparison between runs only) per cell seen per
                // (token, KV head) task on one thread
                const double cyc = s * 3.5e9 * threads[ith] / ((double) (M / seqs) * (double) (N * Hk));
                printf("%7lld %6lld %7d %10.1f %10.1f %9.1f %9.1f\n", (long long) M, (long long) N, threads[ith],
                       s * 1e6, bw, kv_bytes / s / 1e9, cyc);
                fflush(stdout);
            }
            ggml_backend_buffer_free(buf);
            ggml_free(ctx);
        }
    }
    ggml_backend_free(be);
    free(fbuf);
    free(pbuf);
    return 0;
}
