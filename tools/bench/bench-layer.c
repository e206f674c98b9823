// bench-layer.c - one decode step of a LLaMA-style layer for any weight type, against the
// machine's read bandwidth measured in the same process (issue 17, item 3).
//
//   make bench-layer             (builds build/bin/bench-layer and runs it)
//   build/bin/bench-layer [types=f16,q8_0,q4_0,q4_K,q6_K] [threads=1,2] [runs=5] [reps=10]
//                         [embd=4096] [ff=11008] [head=32] [headkv=H] [past=256] [bw_mb=512]
//                         [weights=runner|plain|REGISTRY_NAME]
//
// weights= places the 7 matrices: "runner" (default) as the LLaMA runner does (Q4_0, Q8_0, Q4_K and
// Q6_K in the CPU_REPACK buffer type when the library registers it, every other type in the CPU
// buffer), "plain" all in the CPU buffer, or a registry entry's default buffer type by name.
//
// The layer (one new token, past P tokens in an F16 KV cache):
//   x  = rms_norm(inp) * attn_norm
//   q, k, v = Wq x, Wk x, Wv x; q and k rotated (rope, normal mode) at position P
//   k, v written into the caches (K rows of embd_kv per token; V transposed, a row per channel)
//   per head: softmax(K^T q / sqrt(head_dim) + mask) over P + 1 positions, times V
//   h  = Wo attn + inp
//   out = W2 (silu(W1 y) * (W3 y)) + h,   y = rms_norm(h) * ffn_norm
// Weight bytes = the 7 matrices (Wq Wk Wv Wo W1 W2 W3). floor = weight bytes / read bandwidth;
// ratio = time per token / floor. The read bandwidth is measured with T threads summing a
// bw_mb MiB buffer (each thread its own part), just before each run of the layer at T threads.
//
// Each run is the median of `reps` computes (after 2 warm-up computes); the figures printed are
// medians over `runs` runs, the bandwidth of each run taken with that run. Weights are filled
// from a pool of 64 random rows per matrix (quantized once), so the setup stays short.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchutil.h"

static uint64_t g_rng = 1;

static float rnd_pm1(void) { // uniform in [-1, 1)
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (float) ((double) (g_rng >> 11) / 4503599627370496.0 - 1.0);
}

// ---------------------------------------------------------------------------------------------
// layer

struct layer {
    struct ggml_context * ctx;
    struct ggml_context * wctx; // the 7 matrices when they live in another buffer type (else NULL)
    ggml_backend_buffer_t buf;
    ggml_backend_buffer_t wbuf;
    struct ggml_cgraph * gf;
    double weight_bytes;
};

// fills a weight matrix with rows of a quantized random pool (scale s)
static void fill_weights(struct ggml_tensor * w, float s) {
    enum { POOL = 64 };
    const int64_t nc = w->ne[0], nr = w->ne[1];
    float * f = malloc(sizeof(float) * (size_t) (nc * POOL));
    for (int64_t i = 0; i < nc * POOL; i++) {
        f[i] = s * rnd_pm1();
    }
    const size_t rs = ggml_row_size(w->type, nc);
    char * q = malloc(rs * POOL);
    if (w->type == GGML_TYPE_F32) {
        memcpy(q, f, rs * POOL);
    } else if (w->type == GGML_TYPE_F16) {
        ggml_fp32_to_fp16_row(f, (ggml_fp16_t *) q, (int) (nc * POOL));
    } else {
        int64_t hist[16] = { 0 };
        ggml_quantize_chunk(w->type, f, q, 0, POOL, (int) nc, hist, NULL);
    }
    for (int64_t r = 0; r < nr; r++) {
        ggml_backend_tensor_set(w, q + (size_t) (r % POOL) * rs, (size_t) r * rs, rs);
    }
    free(q);
    free(f);
}

static void fill_f32(struct ggml_tensor * t, float base, float s) {
    const int64_t n = ggml_nelements(t);
    float * f = malloc(sizeof(float) * (size_t) n);
    for (int64_t i = 0; i < n; i++) {
        f[i] = base + s * rnd_pm1();
    }
    ggml_backend_tensor_set(t, f, 0, sizeof(float) * (size_t) n);
    free(f);
}

static void fill_f16(struct ggml_tensor * t) {
    const int64_t n = ggml_nelements(t);
    ggml_fp16_t * h = malloc(sizeof(ggml_fp16_t) * (size_t) n);
    for (int64_t i = 0; i < n; i++) {
        h[i] = ggml_fp32_to_fp16(rnd_pm1());
    }
    ggml_backend_tensor_set(t, h, 0, sizeof(ggml_fp16_t) * (size_t) n);
    free(h);
}

static bool build_layer(struct layer * L, ggml_backend_t be, ggml_backend_buffer_type_t wbuft, enum ggml_type type,
                        int64_t embd, int64_t ff, int64_t n_head, int64_t n_head_kv, int64_t past) {
    const int64_t hd = embd / n_head, embd_kv = hd * n_head_kv, n_kv = past + 1;
    struct ggml_init_params ip = { ggml_tensor_overhead() * 96 + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(ip);
    L->ctx = ctx;
    L->wctx = wbuft != NULL ? ggml_init(ip) : NULL;
    L->wbuf = NULL;
    struct ggml_context * wc = wbuft != NULL ? L->wctx : ctx;

    struct ggml_tensor * attn_norm = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, embd);
    struct ggml_tensor * ffn_norm  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, embd);
    struct ggml_tensor * w[7];
    w[0] = ggml_new_tensor_2d(wc, type, embd, embd);    // q
    w[1] = ggml_new_tensor_2d(wc, type, embd, embd_kv); // k
    w[2] = ggml_new_tensor_2d(wc, type, embd, embd_kv); // v
    w[3] = ggml_new_tensor_2d(wc, type, embd, embd);    // o
    w[4] = ggml_new_tensor_2d(wc, type, embd, ff);      // gate
    w[5] = ggml_new_tensor_2d(wc, type, embd, ff);      // up
    w[6] = ggml_new_tensor_2d(wc, type, ff, embd);      // down
    struct ggml_tensor * kc   = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, embd_kv, n_kv); // a row per position
    struct ggml_tensor * vc   = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, n_kv, embd_kv); // a row per channel
    struct ggml_tensor * inp  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, embd);
    struct ggml_tensor * pos  = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 1);
    struct ggml_tensor * mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_kv, 1);

    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    struct ggml_tensor * x = ggml_mul(ctx, ggml_rms_norm(ctx, inp, 1e-5f), attn_norm);
    struct ggml_tensor * q = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w[0], x), hd, n_head, 1);
    struct ggml_tensor * k = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w[1], x), hd, n_head_kv, 1);
    struct ggml_tensor * v = ggml_mul_mat(ctx, w[2], x); // [embd_kv, 1]
    q = ggml_rope(ctx, q, pos, (int) hd, 0, 0);
    k = ggml_rope(ctx, k, pos, (int) hd, 0, 0);
    // the new position's K row and V column
    struct ggml_tensor * k_dst = ggml_view_1d(ctx, kc, embd_kv, (size_t) past * kc->nb[1]);
    struct ggml_tensor * v_dst = ggml_view_2d(ctx, vc, 1, embd_kv, vc->nb[1], (size_t) past * vc->nb[0]);
    ggml_build_forward_expand(gf, ggml_cpy(ctx, k, k_dst));
    ggml_build_forward_expand(gf, ggml_cpy(ctx, ggml_transpose(ctx, v), v_dst));
    // attention over the n_kv positions, one matrix per head
    struct ggml_tensor * K = ggml_view_3d(ctx, kc, hd, n_kv, n_head_kv, kc->nb[1], (size_t) hd * kc->nb[0], 0);
    struct ggml_tensor * V = ggml_view_3d(ctx, vc, n_kv, hd, n_head_kv, vc->nb[1], (size_t) hd * vc->nb[1], 0);
    struct ggml_tensor * Q = ggml_permute(ctx, q, 0, 2, 1, 3); // [hd, 1, n_head]
    struct ggml_tensor * att = ggml_soft_max_ext(ctx, ggml_mul_mat(ctx, K, Q), mask, 1.0f / sqrtf((float) hd));
    struct ggml_tensor * o = ggml_mul_mat(ctx, V, att); // [hd, 1, n_head]
    o = ggml_cont_2d(ctx, ggml_permute(ctx, o, 0, 2, 1, 3), embd, 1);
    struct ggml_tensor * h = ggml_add(ctx, ggml_mul_mat(ctx, w[3], o), inp);
    struct ggml_tensor * y = ggml_mul(ctx, ggml_rms_norm(ctx, h, 1e-5f), ffn_norm);
    struct ggml_tensor * g = ggml_silu(ctx, ggml_mul_mat(ctx, w[4], y));
    struct ggml_tensor * u = ggml_mul_mat(ctx, w[5], y);
    struct ggml_tensor * out = ggml_add(ctx, ggml_mul_mat(ctx, w[6], ggml_mul(ctx, g, u)), h);
    ggml_build_forward_expand(gf, out);
    L->gf = gf;

    L->buf = ggml_backend_alloc_ctx_tensors(ctx, be);
    if (L->buf == NULL) {
        return false;
    }
    if (wbuft != NULL) {
        L->wbuf = ggml_backend_alloc_ctx_tensors_from_buft(L->wctx, wbuft);
        if (L->wbuf == NULL) {
            return false;
        }
    }
    L->weight_bytes = 0.0;
    for (int i = 0; i < 7; i++) {
        fill_weights(w[i], 1.7f / sqrtf((float) w[i]->ne[0]));
        L->weight_bytes += (double) ggml_nbytes(w[i]);
    }
    fill_f32(attn_norm, 1.0f, 0.1f);
    fill_f32(ffn_norm, 1.0f, 0.1f);
    fill_f32(inp, 0.0f, 1.0f);
    fill_f16(kc);
    fill_f16(vc);
    const int32_t p = (int32_t) past;
    ggml_backend_tensor_set(pos, &p, 0, sizeof(p));
    float * m = calloc((size_t) n_kv, sizeof(float)); // every position visible
    ggml_backend_tensor_set(mask, m, 0, sizeof(float) * (size_t) n_kv);
    free(m);
    return true;
}

static void free_layer(struct layer * L) {
    ggml_backend_buffer_free(L->buf);
    ggml_free(L->ctx);
    if (L->wctx != NULL) {
        if (L->wbuf != NULL) {
            ggml_backend_buffer_free(L->wbuf);
        }
        ggml_free(L->wctx);
    }
}

// ---------------------------------------------------------------------------------------------
// main

static int64_t arg_i(int argc, char ** argv, const char * key, int64_t def) {
    const size_t kl = strlen(key);
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], key, kl) == 0 && argv[i][kl] == '=') {
            return atoll(argv[i] + kl + 1);
        }
    }
    return def;
}

static const char * arg_s(int argc, char ** argv, const char * key, const char * def) {
    const size_t kl = strlen(key);
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], key, kl) == 0 && argv[i][kl] == '=') {
            return argv[i] + kl + 1;
        }
    }
    return def;
}

static bool parse_type(const char * s, size_t n, enum ggml_type * t) {
    for (int i = 0; i < GGML_TYPE_COUNT; i++) {
        const char * name = ggml_type_name((enum ggml_type) i);
        if (name != NULL && strlen(name) == n && strncasecmp(name, s, n) == 0) {
            *t = (enum ggml_type) i;
            return true;
        }
    }
    return false;
}

// the buffer type of the 7 matrices: "plain" -> NULL (the CPU buffer with everything else);
// "runner" -> as the LLaMA runner places them (Q4_0/Q8_0/Q4_K/Q6_K in CPU_REPACK when the library
// registers it, else plain); any other value names a registry entry whose default buffer type
// takes them
static ggml_backend_buffer_type_t weights_buft(const char * weights, enum ggml_type type) {
    const char * name = weights;
    if (strcmp(weights, "plain") == 0) {
        return NULL;
    }
    if (strcmp(weights, "runner") == 0) {
        if (type != GGML_TYPE_Q4_0 && type != GGML_TYPE_Q8_0 && type != GGML_TYPE_Q4_K && type != GGML_TYPE_Q6_K) {
            return NULL;
        }
        name = "CPU_REPACK";
    }
    const size_t i = ggml_backend_reg_find_by_name(name);
    if (i == SIZE_MAX) {
        if (strcmp(weights, "runner") == 0) {
            return NULL; // a library without it: plain, as its runner would do
        }
        fprintf(stderr, "bench-layer: no registry entry %s\n", name);
        exit(1);
    }
    return ggml_backend_reg_get_default_buffer_type(i);
}

int main(int argc, char ** argv) {
    const char * types = arg_s(argc, argv, "types", "f16,q8_0,q4_0,q4_K,q6_K");
    const char * threads = arg_s(argc, argv, "threads", "1,2");
    const int runs = (int) arg_i(argc, argv, "runs", 5);
    const int reps = (int) arg_i(argc, argv, "reps", 10);
    const int64_t embd = arg_i(argc, argv, "embd", 4096);
    const int64_t ff = arg_i(argc, argv, "ff", 11008);
    const int64_t n_head = arg_i(argc, argv, "head", 32);
    const int64_t n_head_kv = arg_i(argc, argv, "headkv", n_head);
    const int64_t past = arg_i(argc, argv, "past", 256);
    const size_t bw_bytes = (size_t) arg_i(argc, argv, "bw_mb", 512) << 20;
    const char * weights = arg_s(argc, argv, "weights", "runner");
    if (runs < 1 || reps < 1 || runs > 64 || reps > 1000 || embd % n_head != 0 || n_head % n_head_kv != 0) {
        fprintf(stderr, "bench-layer: bad arguments\n");
        return 1;
    }

    char * bwbuf = probe_buffer(bw_bytes);
    if (bwbuf == NULL) {
        fprintf(stderr, "bench-layer: cannot allocate %zu bytes\n", bw_bytes);
        return 1;
    }

    printf("# bench-layer: embd %lld ff %lld heads %lld/%lld past %lld, %d runs of %d computes; bandwidth over %zu MiB\n",
           (long long) embd, (long long) ff, (long long) n_head, (long long) n_head_kv, (long long) past, runs, reps,
           bw_bytes >> 20);
    printf("%-6s %7s %10s %10s %7s %9s %10s\n", "type", "threads", "ms/token", "floor_ms", "ratio", "GB/s", "weights_MB");

    ggml_backend_t be = ggml_backend_cpu_init();
    for (const char * tp = types; *tp != '\0';) {
        const size_t tl = strcspn(tp, ",");
        enum ggml_type type;
        if (!parse_type(tp, tl, &type)) {
            fprintf(stderr, "bench-layer: unknown type %.*s\n", (int) tl, tp);
            return 1;
        }
        tp += tl + (tp[tl] == ',');

        ggml_backend_buffer_type_t wbuft = weights_buft(weights, type);
        printf("# %s weights in %s\n", ggml_type_name(type), wbuft != NULL ? ggml_backend_buft_name(wbuft) : "the CPU buffer");
        struct layer L;
        if (!build_layer(&L, be, wbuft, type, embd, ff, n_head, n_head_kv, past)) {
            fprintf(stderr, "bench-layer: allocation failed for %s\n", ggml_type_name(type));
            return 1;
        }
        for (const char * th = threads; *th != '\0';) {
            const int nth = atoi(th);
            th += strcspn(th, ",");
            th += *th == ',';
            if (nth < 1 || nth > 64) {
                continue;
            }
            ggml_backend_cpu_set_n_threads(be, nth);
            double t_run[64], bw_run[64], ratio_run[64];
            for (int r = 0; r < runs; r++) {
                bw_run[r] = probe_read_bw(bwbuf, bw_bytes, nth, 3);
                for (int i = 0; i < 2; i++) {
                    ggml_backend_graph_compute(be, L.gf);
                }
                double ts[1000];
                for (int i = 0; i < reps; i++) {
                    const double t0 = now_s();
                    ggml_backend_graph_compute(be, L.gf);
                    ts[i] = now_s() - t0;
                }
                t_run[r] = median(ts, reps) * 1e3;
                ratio_run[r] = t_run[r] / (L.weight_bytes / (bw_run[r] * 1e9) * 1e3);
            }
            const double t = median(t_run, runs), bw = median(bw_run, runs), ratio = median(ratio_run, runs);
            const double floor_ms = L.weight_bytes / (bw * 1e9) * 1e3;
            printf("%-6s %7d %10.3f %10.3f %7.3f %9.2f %10.1f\n", ggml_type_name(type), nth, t, floor_ms, ratio, bw,
                   L.weight_bytes / 1e6);
            printf("RESULT bench=layer type=%s threads=%d ms_per_tok=%.4f floor_ms=%.4f ratio=%.4f read_GBps=%.3f weights_MB=%.2f past=%lld runs=%d reps=%d\n",
                   ggml_type_name(type), nth, t, floor_ms, ratio, bw, L.weight_bytes / 1e6, (long long) past, runs, reps);
            fflush(stdout);
        }
        free_layer(&L);
    }
    ggml_backend_free(be);
    free(bwbuf);
    return 0;
}
