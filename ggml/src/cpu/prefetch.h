// prefetch.h - the far prefetch of the weight stream in matrix-vector kernels.
//
// A matrix-vector product reads each weight row once, against an activation row that it reads
// again for every weight row. When the activation row is long, the weight stream passing through
// L1 keeps evicting it, and the hardware prefetchers alone then bring the weights at about half
// the read bandwidth. Measured with build/bench-matvec (4096 rows, weights cold, 1 thread, issue
// 17): F16 weights at K = 8192 and 11008 (16 and 22 KiB of activation) went from 48 % of the read
// bandwidth to 91 % with this prefetch, Q4_K at K = 11008 from 39 % to 79 %; at K = 4096 (5-8 KiB
// of activation) it made Q4_K slower (about 75 % -> 60 %), so kernels turn it on only above
// GGML_X_FAR_MIN_ACT bytes of activation per row.
//
// Use: far = ggml_x_far_distance(activation bytes of the row) once per call, then in the loop
// ggml_x_prefetch_far(weights of this step, far, bytes of this step). Prefetches never fault, so
// running past the end of the weights is harmless.

#ifndef GGML_X_PREFETCH_H
#define GGML_X_PREFETCH_H

#include <stddef.h>
#include <stdint.h>

#define GGML_X_FAR_MIN_ACT  8192  // activation bytes per row above which kernels prefetch far
#define GGML_X_FAR_DISTANCE 12288 // how far ahead of the current weight step, in bytes

static inline size_t ggml_x_far_distance(size_t act_bytes) {
    return act_bytes > GGML_X_FAR_MIN_ACT ? GGML_X_FAR_DISTANCE : 0;
}

// prefetch into L2 (not L1: the activation keeps its place there) the cache lines of the `bytes`
// bytes at p + far, when far != 0; bytes is a constant at the call sites, so the loop unrolls
static inline __attribute__((always_inline)) void ggml_x_prefetch_far(const void * p, size_t far, size_t bytes) {
    if (far != 0) {
        for (size_t o = 0; o < bytes; o += 64) {
            __builtin_prefetch((const void *) ((uintptr_t) p + far + o), 0, 2);
        }
    }
}

#endif // GGML_X_PREFETCH_H
