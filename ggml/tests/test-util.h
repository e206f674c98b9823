// test-util.h - helpers shared by the kernel tests (test-kernels-*.c, test-gemm.c): a
// deterministic random source, contexts, filling and reading F32/F16 tensors, and running a
// graph with 1, 2 and 4 threads. Define TEST_RNG_SEED before including it for another sequence.

#ifndef GGML_TEST_UTIL_H
#define GGML_TEST_UTIL_H

#include "ggml.h"

#include "testing.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef TEST_RNG_SEED
#define TEST_RNG_SEED 0x9e3779b97f4a7c15ull
#endif

static const int k_threads[] = { 1, 2, 4 };
#define N_THREAD_CONFIGS ((int) (sizeof(k_threads) / sizeof(k_threads[0])))

static uint64_t rng_state = TEST_RNG_SEED;

static inline float rnd(void) { // uniform in [-1, 1)
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float) ((rng_state >> 40) / (double) (1 << 24)) * 2.0f - 1.0f;
}

static inline struct ggml_context * new_ctx(size_t mb) {
    struct ggml_init_params ip = { mb * 1024 * 1024, NULL, false };
    return ggml_init(ip);
}

// every element of a contiguous F32/F16 tensor from rnd()
static inline void fill(struct ggml_tensor * t) {
    const int64_t n = ggml_nelements(t);
    for (int64_t i = 0; i < n; i++) {
        const float v = rnd();
        if (t->type == GGML_TYPE_F16) {
            ((ggml_fp16_t *) t->data)[i] = ggml_fp32_to_fp16(v);
        } else {
            ((float *) t->data)[i] = v;
        }
    }
}

// element (i0, i1, i2, i3) of an F32/F16 tensor (any strides) as float
static inline float at(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const char * p = (const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
    return t->type == GGML_TYPE_F16 ? ggml_fp16_to_fp32(*(const ggml_fp16_t *) p) : *(const float *) p;
}

static inline float round_f16(float x) {
    return ggml_fp16_to_fp32(ggml_fp32_to_fp16(x));
}

// Computes out with 1, 2 and 4 threads; checks that all runs give identical bytes and leaves the
// last result in out. Returns false if out is NULL or a run differs.
static inline bool compute_all(struct ggml_context * ctx, struct ggml_tensor * out) {
    T_CHECK(out != NULL);
    if (out == NULL) {
        return false;
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);
    const size_t nbytes = ggml_nbytes(out);
    void * first = malloc(nbytes);
    bool ok = true;
    for (int k = 0; k < N_THREAD_CONFIGS; k++) {
        memset(out->data, 0x7f, nbytes); // garbage: every element must be written
        ggml_graph_compute_with_ctx(ctx, gf, k_threads[k]);
        if (k == 0) {
            memcpy(first, out->data, nbytes);
        } else if (memcmp(first, out->data, nbytes) != 0) {
            T_CHECK_MSG(false, "%s: result with %d threads differs from 1 thread", ggml_op_desc(out), k_threads[k]);
            ok = false;
        }
    }
    free(first);
    return ok;
}

#endif // GGML_TEST_UTIL_H
