// threadpool.c - persistent worker pool, hybrid (spin, yield, sleep) events and barriers.
// See threadpool.h for the contract.

#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif

#include "threadpool.h"

#include "../ggml-impl.h"
#include "ops.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

// How a waiter waits: it polls the word with a pause instruction between polls, and every
// GGML_X_YIELD_NS of spinning it calls sched_yield once (cheap when no other thread wants the core;
// on an oversubscribed machine it hands the core to a runnable thread, possibly the one we wait
// for). After GGML_X_SPIN_NS in total it blocks in the kernel. Time is read every
// GGML_X_SPIN_CHECK polls (the cost of a pause differs a lot between cores).
#ifndef GGML_X_SPIN_NS
#define GGML_X_SPIN_NS    100000
#endif
#ifndef GGML_X_YIELD_NS
#define GGML_X_YIELD_NS   4000
#endif
#define GGML_X_SPIN_CHECK 64

static _Atomic int64_t ggml_x_n_threads_created;

int64_t ggml_x_threads_created(void) {
    return atomic_load_explicit(&ggml_x_n_threads_created, memory_order_relaxed);
}

static _Thread_local bool ggml_x_tls_in_run;

bool ggml_x_threadpool_in_run(void) {
    return ggml_x_tls_in_run;
}

static inline void ggml_x_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    atomic_signal_fence(memory_order_seq_cst);
#endif
}

// ---------------------------------------------------------------------------------------------
// events

#if defined(__linux__)

static void ggml_x_futex_wait(_Atomic uint32_t * addr, uint32_t old) {
    // returns on wake-up, on a signal, or at once when *addr != old; callers re-check
    syscall(SYS_futex, (uint32_t *) addr, FUTEX_WAIT_PRIVATE, old, NULL, NULL, 0);
}

static void ggml_x_futex_wake_all(_Atomic uint32_t * addr) {
    syscall(SYS_futex, (uint32_t *) addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

#endif

void ggml_x_event_init(struct ggml_x_event * ev, uint32_t value) {
    atomic_init(&ev->word, value);
    atomic_init(&ev->sleepers, 0);
#if !defined(__linux__)
    pthread_mutex_init(&ev->mutex, NULL);
    pthread_cond_init(&ev->cond, NULL);
#endif
}

void ggml_x_event_destroy(struct ggml_x_event * ev) {
#if !defined(__linux__)
    pthread_cond_destroy(&ev->cond);
    pthread_mutex_destroy(&ev->mutex);
#else
    (void) ev;
#endif
}

static int64_t ggml_x_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

uint32_t ggml_x_event_wait_while(struct ggml_x_event * ev, uint32_t old) {
    uint32_t v;
    int64_t start = 0;
    int64_t next_yield = 0;
    for (;;) {
        for (int i = 0; i < GGML_X_SPIN_CHECK; i++) {
            v = atomic_load_explicit(&ev->word, memory_order_acquire);
            if (v != old) {
                return v;
            }
            ggml_x_cpu_relax();
        }
        const int64_t now = ggml_x_now_ns();
        if (start == 0) {
            start = now;
            next_yield = now + GGML_X_YIELD_NS;
        } else if (now - start >= GGML_X_SPIN_NS) {
            break;
        } else if (now >= next_yield) {
            sched_yield();
            next_yield = now + GGML_X_YIELD_NS;
        }
    }
    // Sleep. The sleepers increment and the word load are sequentially consistent, as are the
    // waker's word increment and sleepers load: either the waker sees us and wakes, or we see
    // its new word and do not sleep.
    for (;;) {
#if defined(__linux__)
        atomic_fetch_add(&ev->sleepers, 1);
        if (atomic_load(&ev->word) == old) {
            ggml_x_futex_wait(&ev->word, old);
        }
        atomic_fetch_sub(&ev->sleepers, 1);
#else
        pthread_mutex_lock(&ev->mutex);
        atomic_fetch_add(&ev->sleepers, 1);
        while (atomic_load(&ev->word) == old) {
            pthread_cond_wait(&ev->cond, &ev->mutex);
        }
        atomic_fetch_sub(&ev->sleepers, 1);
        pthread_mutex_unlock(&ev->mutex);
#endif
        v = atomic_load_explicit(&ev->word, memory_order_acquire);
        if (v != old) {
            return v;
        }
    }
}

void ggml_x_event_bump(struct ggml_x_event * ev) {
    atomic_fetch_add(&ev->word, 1);
    if (atomic_load(&ev->sleepers) > 0) {
#if defined(__linux__)
        ggml_x_futex_wake_all(&ev->word);
#else
        // taking the mutex orders us after a sleeper's check of the word, or before it
        pthread_mutex_lock(&ev->mutex);
        pthread_mutex_unlock(&ev->mutex);
        pthread_cond_broadcast(&ev->cond);
#endif
    }
}

// ---------------------------------------------------------------------------------------------
// barrier

void ggml_x_barrier_init(struct ggml_cpu_barrier * b) {
    atomic_init(&b->count, 0);
    ggml_x_event_init(&b->phase, 0);
}

void ggml_x_barrier_destroy(struct ggml_cpu_barrier * b) {
    ggml_x_event_destroy(&b->phase);
}

void ggml_x_barrier_wait(struct ggml_cpu_barrier * b, int n) {
    if (n <= 1) {
        return;
    }
    // The phase cannot advance before we arrive, so this read is the phase of our round.
    const uint32_t phase = atomic_load_explicit(&b->phase.word, memory_order_acquire);
    if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) == n - 1) {
        // last to arrive: reset for the next round, then release everyone
        atomic_store_explicit(&b->count, 0, memory_order_relaxed);
        ggml_x_event_bump(&b->phase);
    } else {
        ggml_x_event_wait_while(&b->phase, phase);
    }
}

void ggml_cpu_barrier(const struct ggml_cpu_ctx * cc) {
    if (cc == NULL || cc->nth <= 1 || cc->barrier == NULL) {
        return;
    }
    ggml_x_barrier_wait(cc->barrier, cc->nth);
}

// ---------------------------------------------------------------------------------------------
// pool

struct ggml_x_worker {
    struct ggml_x_event go; // bumped by the run that wants this worker (or by its stop)
    _Atomic bool quit;
    int ith;
    pthread_t thread;
    struct ggml_x_threadpool * pool;
};

struct ggml_x_threadpool {
    pthread_mutex_t lock; // serialises run / resize / free

    int n_workers;
    int cap_workers;
    struct ggml_x_worker ** workers; // separately allocated: running threads keep their pointer

    // the current run (written before the workers' go events are bumped)
    void (*fn)(void * arg, int ith, int nth);
    void * arg;
    int nth;

    _Atomic int32_t pending; // workers of the run still inside fn
    struct ggml_x_event done; // bumped by the last worker to finish
};

static void * ggml_x_aligned_alloc(size_t size) {
    void * p = NULL;
    size = GGML_PAD(size, GGML_X_CACHE_LINE);
    if (posix_memalign(&p, GGML_X_CACHE_LINE, size) != 0) {
        return NULL;
    }
    memset(p, 0, size);
    return p;
}

static void * ggml_x_worker_main(void * data) {
    struct ggml_x_worker * w = data;
    struct ggml_x_threadpool * pool = w->pool;
    ggml_x_tls_in_run = true; // kernels on workers run nested computes inline
    uint32_t seen = 0;
    for (;;) {
        seen = ggml_x_event_wait_while(&w->go, seen);
        if (atomic_load_explicit(&w->quit, memory_order_acquire)) {
            break;
        }
        pool->fn(pool->arg, w->ith, pool->nth);
        if (atomic_fetch_sub_explicit(&pool->pending, 1, memory_order_acq_rel) == 1) {
            ggml_x_event_bump(&pool->done);
        }
    }
    return NULL;
}

// pool->lock held
static bool ggml_x_pool_add_worker(struct ggml_x_threadpool * pool) {
    if (pool->n_workers == pool->cap_workers) {
        int cap = pool->cap_workers ? 2 * pool->cap_workers : 8;
        struct ggml_x_worker ** ws = realloc(pool->workers, (size_t) cap * sizeof(*ws));
        if (ws == NULL) {
            return false;
        }
        pool->workers = ws;
        pool->cap_workers = cap;
    }
    struct ggml_x_worker * w = ggml_x_aligned_alloc(sizeof(*w));
    if (w == NULL) {
        return false;
    }
    ggml_x_event_init(&w->go, 0);
    atomic_init(&w->quit, false);
    w->ith = pool->n_workers + 1;
    w->pool = pool;
    if (pthread_create(&w->thread, NULL, ggml_x_worker_main, w) != 0) {
        ggml_x_event_destroy(&w->go);
        free(w);
        return false;
    }
    atomic_fetch_add_explicit(&ggml_x_n_threads_created, 1, memory_order_relaxed);
    pool->workers[pool->n_workers++] = w;
    return true;
}

// pool->lock held
static void ggml_x_pool_remove_worker(struct ggml_x_threadpool * pool) {
    struct ggml_x_worker * w = pool->workers[--pool->n_workers];
    atomic_store_explicit(&w->quit, true, memory_order_release);
    ggml_x_event_bump(&w->go);
    pthread_join(w->thread, NULL);
    ggml_x_event_destroy(&w->go);
    free(w);
}

// pool->lock held
static int ggml_x_pool_set_size(struct ggml_x_threadpool * pool, int n_threads) {
    const int want = (n_threads < 1 ? 1 : n_threads) - 1;
    while (pool->n_workers > want) {
        ggml_x_pool_remove_worker(pool);
    }
    while (pool->n_workers < want) {
        if (!ggml_x_pool_add_worker(pool)) {
            break;
        }
    }
    return pool->n_workers + 1;
}

struct ggml_x_threadpool * ggml_x_threadpool_new(int n_threads) {
    struct ggml_x_threadpool * pool = ggml_x_aligned_alloc(sizeof(*pool));
    if (pool == NULL) {
        return NULL;
    }
    if (pthread_mutex_init(&pool->lock, NULL) != 0) {
        free(pool);
        return NULL;
    }
    atomic_init(&pool->pending, 0);
    ggml_x_event_init(&pool->done, 0);
    pthread_mutex_lock(&pool->lock);
    const int got = ggml_x_pool_set_size(pool, n_threads);
    pthread_mutex_unlock(&pool->lock);
    if (got < (n_threads < 1 ? 1 : n_threads)) {
        ggml_x_threadpool_free(pool);
        return NULL;
    }
    return pool;
}

void ggml_x_threadpool_free(struct ggml_x_threadpool * pool) {
    if (pool == NULL) {
        return;
    }
    pthread_mutex_lock(&pool->lock);
    ggml_x_pool_set_size(pool, 1);
    pthread_mutex_unlock(&pool->lock);
    free(pool->workers);
    ggml_x_event_destroy(&pool->done);
    pthread_mutex_destroy(&pool->lock);
    free(pool);
}

int ggml_x_threadpool_resize(struct ggml_x_threadpool * pool, int n_threads) {
    if (pool == NULL) {
        return 1;
    }
    pthread_mutex_lock(&pool->lock);
    const int got = ggml_x_pool_set_size(pool, n_threads);
    pthread_mutex_unlock(&pool->lock);
    return got;
}

int ggml_x_threadpool_size(struct ggml_x_threadpool * pool) {
    if (pool == NULL) {
        return 1;
    }
    pthread_mutex_lock(&pool->lock);
    const int n = pool->n_workers + 1;
    pthread_mutex_unlock(&pool->lock);
    return n;
}

static void ggml_x_run_inline(void (*fn)(void *, int, int), void * arg) {
    const bool prev = ggml_x_tls_in_run;
    ggml_x_tls_in_run = true;
    fn(arg, 0, 1);
    ggml_x_tls_in_run = prev;
}

int ggml_x_threadpool_run(struct ggml_x_threadpool * pool, int n_threads,
                          void (*fn)(void * arg, int ith, int nth), void * arg) {
    if (pool == NULL || n_threads <= 1 || ggml_x_tls_in_run) {
        ggml_x_run_inline(fn, arg);
        return 1;
    }
    pthread_mutex_lock(&pool->lock);
    if (pool->n_workers + 1 < n_threads) {
        ggml_x_pool_set_size(pool, n_threads);
    }
    const int nth = GGML_X_MIN(n_threads, pool->n_workers + 1);
    if (nth <= 1) {
        pthread_mutex_unlock(&pool->lock);
        ggml_x_run_inline(fn, arg);
        return 1;
    }

    pool->fn = fn;
    pool->arg = arg;
    pool->nth = nth;
    atomic_store_explicit(&pool->pending, nth - 1, memory_order_relaxed);
    const uint32_t done = atomic_load_explicit(&pool->done.word, memory_order_relaxed);
    for (int i = 0; i < nth - 1; i++) {
        ggml_x_event_bump(&pool->workers[i]->go); // publishes the run (release)
    }

    const bool prev = ggml_x_tls_in_run;
    ggml_x_tls_in_run = true;
    fn(arg, 0, nth);
    ggml_x_tls_in_run = prev;

    ggml_x_event_wait_while(&pool->done, done);
    pthread_mutex_unlock(&pool->lock);
    return nth;
}
