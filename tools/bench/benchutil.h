// benchutil.h - what the C benchmarks of build/ share: a monotonic clock, medians, and the read
// bandwidth probe that their figures are expressed against. Header-only (each benchmark is one
// translation unit linked against libggml.a); only the public API and libc are used.

#ifndef GGML_GO_BENCHUTIL_H
#define GGML_GO_BENCHUTIL_H

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define BENCH_MAX_THREADS 64
#define BENCH_MAX_REPS    101

static inline double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static inline int cmp_double(const void * a, const void * b) {
    const double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

static inline double median(double * v, int n) {
    qsort(v, (size_t) n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// a uniform float in [-1, 1) from the xorshift64 state *s (advanced)
static inline float bench_rng_float(uint64_t * s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (float) (uint32_t) (*s >> 32) / 4294967296.0f * 2.0f - 1.0f;
}

// the integers of a comma-separated list ("1,2,8") into out (at most max); returns the count
static inline int parse_list(const char * s, int * out, int max) {
    int n = 0;
    while (*s && n < max) {
        out[n++] = atoi(s);
        const char * c = strchr(s, ',');
        if (!c) {
            break;
        }
        s = c + 1;
    }
    return n;
}

// ---------------------------------------------------------------------------------------------
// read bandwidth: THREADS threads, each summing a contiguous share of one buffer

typedef long long v4i64 __attribute__((vector_size(32)));

struct probe {
    const v4i64 *     buf;
    size_t            n_vec;    // vectors in the whole buffer
    int               n_threads;
    int               reps;
    pthread_barrier_t start, done;
    volatile long long sink;
};

struct probe_arg {
    struct probe * p;
    int            ith;
};

#if defined(__x86_64__)
__attribute__((target("avx2")))
#endif
static inline long long probe_sum(const v4i64 * v, size_t n) {
    v4i64 a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a += v[i];
        b += v[i + 1];
        c += v[i + 2];
        d += v[i + 3];
    }
    for (; i < n; i++) {
        a += v[i];
    }
    const v4i64 s = a + b + c + d;
    return s[0] + s[1] + s[2] + s[3];
}

static inline void probe_share(struct probe * p, int ith) {
    const size_t per = p->n_vec / (size_t) p->n_threads;
    p->sink += probe_sum(p->buf + per * (size_t) ith, per);
}

static inline void * probe_worker(void * varg) {
    struct probe_arg * a = (struct probe_arg *) varg;
    for (int r = 0; r < a->p->reps; r++) {
        pthread_barrier_wait(&a->p->start);
        probe_share(a->p, a->ith);
        pthread_barrier_wait(&a->p->done);
    }
    return NULL;
}

// GB/s read by n_threads threads (the calling thread is one of them), median of reps passes
// (reps <= BENCH_MAX_REPS, n_threads <= BENCH_MAX_THREADS)
static inline double probe_read_bw(const void * buf, size_t bytes, int n_threads, int reps) {
    struct probe p;
    memset(&p, 0, sizeof(p));
    p.buf = (const v4i64 *) buf;
    p.n_vec = bytes / sizeof(v4i64);
    p.n_threads = n_threads;
    p.reps = reps;
    pthread_barrier_init(&p.start, NULL, (unsigned) n_threads);
    pthread_barrier_init(&p.done, NULL, (unsigned) n_threads);
    pthread_t th[BENCH_MAX_THREADS];
    struct probe_arg args[BENCH_MAX_THREADS];
    for (int i = 1; i < n_threads; i++) {
        args[i].p = &p;
        args[i].ith = i;
        pthread_create(&th[i], NULL, probe_worker, &args[i]);
    }
    double t[BENCH_MAX_REPS];
    for (int r = 0; r < reps; r++) {
        pthread_barrier_wait(&p.start);
        const double t0 = now_s();
        probe_share(&p, 0);
        pthread_barrier_wait(&p.done);
        t[r] = now_s() - t0;
    }
    for (int i = 1; i < n_threads; i++) {
        pthread_join(th[i], NULL);
    }
    pthread_barrier_destroy(&p.start);
    pthread_barrier_destroy(&p.done);
    const size_t used = (p.n_vec / (size_t) n_threads) * (size_t) n_threads * sizeof(v4i64);
    return (double) used / median(t, reps) * 1e-9;
}

// The probe's buffer: bytes (rounded up to 2 MiB), 2 MiB aligned and on Linux advised into huge
// pages, as the library's CPU buffers are (host-alloc.h), every byte written. The probe must read
// memory the way the kernels it is compared with read theirs: with 4 KiB pages this VM read
// 10-40 % less at 1 thread (TLB misses under nested paging), which made every share look
// better than it was. NULL when out of memory; free() it.
static inline void * probe_buffer(size_t bytes) {
    const size_t huge = (size_t) 2 << 20;
    bytes = (bytes + huge - 1) / huge * huge;
    void * buf = aligned_alloc(huge, bytes);
    if (buf == NULL) {
        return NULL;
    }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(buf, bytes, MADV_HUGEPAGE);
#endif
    memset(buf, 1, bytes);
    return buf;
}

#endif // GGML_GO_BENCHUTIL_H
