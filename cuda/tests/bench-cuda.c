// bench-cuda.c - mul_mat throughput on CUDA0: weights 4096 x 4096 of F16, Q4_0, Q4_K, Q8_0 (and
// F32), src1 batch 1 (mat-vec: weight bandwidth) and 512 (GEMM: FLOP/s). Median of BENCH_REPS
// timed graph computations after a warm-up (graph_compute synchronises before returning).
// Skips when no device is present.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static int cmp_d(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : (x > y);
}

int main(int argc, char ** argv) {
    const int64_t K = argc > 1 ? atoll(argv[1]) : 4096, M = argc > 2 ? atoll(argv[2]) : 4096;
    const char * reps_env = getenv("BENCH_REPS");
    const int reps = reps_env != NULL && atoi(reps_env) > 0 ? atoi(reps_env) : 20;
    if (ggml_backend_cuda_get_device_count() == 0) {
        printf("bench-cuda: SKIP: no CUDA device present\n");
        return 0;
    }
    ggml_backend_t cuda = ggml_backend_cuda_init(0);
    if (cuda == NULL) {
        return 1;
    }
    char desc[256];
    ggml_backend_cuda_get_device_description(0, desc, sizeof(desc));
    printf("device: %s; weights %lld x %lld; median of %d runs\n", desc, (long long) M, (long long) K, reps);
    printf("%-6s %6s %12s %10s %10s\n", "type", "batch", "time(us)", "GFLOP/s", "GB/s(w)");

    const enum ggml_type types[] = { GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_K, GGML_TYPE_Q8_0 };
    const int64_t batches[] = { 1, 512 };
    for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++) {
        for (size_t bi = 0; bi < 2; bi++) {
            const int64_t N = batches[bi];
            struct ggml_init_params ip = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
            struct ggml_context * ctx = ggml_init(ip);
            struct ggml_tensor * w = ggml_new_tensor_2d(ctx, types[ti], K, M);
            struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, K, N);
            struct ggml_tensor * y = ggml_mul_mat(ctx, w, x);
            struct ggml_cgraph * gf = ggml_new_graph(ctx);
            ggml_build_forward_expand(gf, y);
            ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cuda);
            if (buf == NULL) {
                printf("%-6s %6lld allocation failed\n", ggml_type_name(types[ti]), (long long) N);
                ggml_free(ctx);
                continue;
            }
            // weights: quantized from a smooth pattern (the values do not matter for speed)
            float * row = malloc((size_t) K * sizeof(float));
            char * q = malloc(ggml_row_size(types[ti], K));
            ggml_type_traits_t tt = ggml_internal_get_type_traits(types[ti]);
            for (int64_t r = 0; r < M; r++) {
                for (int64_t i = 0; i < K; i++) row[i] = (float) ((r * 31 + i * 17) % 97) / 97.0f - 0.5f;
                if (types[ti] == GGML_TYPE_F32) {
                    memcpy(q, row, (size_t) K * sizeof(float));
                } else {
                    tt.from_float(row, q, (int) K);
                }
                ggml_backend_tensor_set(w, q, (size_t) r * ggml_row_size(types[ti], K), ggml_row_size(types[ti], K));
            }
            float * xv = malloc((size_t) (K * N) * sizeof(float));
            for (int64_t i = 0; i < K * N; i++) xv[i] = (float) (i % 13) / 13.0f;
            ggml_backend_tensor_set(x, xv, 0, (size_t) (K * N) * sizeof(float));

            ggml_backend_graph_compute(cuda, gf); // warm-up (cuBLAS initialisation, scratch)
            double * t = malloc((size_t) reps * sizeof(double));
            for (int r = 0; r < reps; r++) {
                const double t0 = now_s();
                if (!ggml_backend_graph_compute(cuda, gf)) {
                    printf("compute failed\n");
                    return 1;
                }
                t[r] = now_s() - t0;
            }
            qsort(t, (size_t) reps, sizeof(double), cmp_d);
            const double med = t[reps / 2];
            const double flops = 2.0 * (double) M * (double) N * (double) K;
            printf("%-6s %6lld %12.1f %10.1f %10.1f\n", ggml_type_name(types[ti]), (long long) N, med * 1e6,
                   flops / med * 1e-9, (double) ggml_nbytes(w) / med * 1e-9);
            // benchstat-compatible line
            printf("BenchmarkCUDAMulMat/%s/k=%lld/m=%lld/n=%lld 1 %.0f ns/op\n", ggml_type_name(types[ti]),
                   (long long) K, (long long) M, (long long) N, med * 1e9);
            free(t);
            free(xv);
            free(q);
            free(row);
            ggml_backend_buffer_free(buf);
            ggml_free(ctx);
        }
    }
    ggml_backend_free(cuda);
    return 0;
}
