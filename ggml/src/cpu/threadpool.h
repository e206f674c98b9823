// threadpool.h - persistent CPU worker pool and the spin-then-sleep barrier (internal).
//
// A pool owns worker threads that are created once and reused for every parallel run. A run
// executes fn(arg, ith, nth) on nth threads: the calling thread is ith = 0 and pool workers are
// ith = 1 .. nth-1; the call returns when all of them have returned from fn.
//
// Waiting (idle workers waiting for the next run, the caller waiting for workers to finish,
// threads meeting at a barrier) is hybrid: a thread first spins on an atomic for a short while
// (cheap hand-over when every thread has a core), then yields, then blocks in the kernel (futex on
// Linux, a condition variable elsewhere), so an oversubscribed machine does not burn its cores in
// spin loops. Wakers only make a system call when someone is actually asleep.
//
// Typical use by a backend:
//
//     struct ggml_x_threadpool * pool = ggml_x_threadpool_new(n_threads);   // at backend init
//     ...
//     ggml_x_threadpool_resize(pool, n);              // set_n_threads (optional, see below)
//     ggml_x_threadpool_run(pool, n, fn, arg);        // or ggml_x_cpu_graph_compute(pool, ...)
//     ...
//     ggml_x_threadpool_free(pool);                   // at backend free
//
// Thread safety: runs, resizes and free on one pool are serialised by a mutex inside the pool, so
// two threads sharing a pool wait for each other instead of corrupting it (the pool is meant to be
// used by one owner at a time, though). A run started from inside fn of another run (a kernel
// that computes a nested graph, on the caller or on a worker) executes inline on the calling
// thread with nth = 1, so nesting never deadlocks.

#ifndef GGML_X_THREADPOOL_H
#define GGML_X_THREADPOOL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#if !defined(__linux__)
#include <pthread.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_X_CACHE_LINE 64

// ---------------------------------------------------------------------------------------------
// Event: a 32-bit word that threads wait on until it changes (spin, yield, then sleep).

struct ggml_x_event {
    _Atomic uint32_t word;
    _Atomic int32_t  sleepers; // threads blocked (or about to block) in the kernel on word
#if !defined(__linux__)
    pthread_mutex_t  mutex;
    pthread_cond_t   cond;
#endif
};

void ggml_x_event_init   (struct ggml_x_event * ev, uint32_t value);
void ggml_x_event_destroy(struct ggml_x_event * ev);
// wait until ev->word != old; returns the new value (acquire ordering)
uint32_t ggml_x_event_wait_while(struct ggml_x_event * ev, uint32_t old);
// add 1 to ev->word (release ordering) and wake the threads that sleep on it
void ggml_x_event_bump(struct ggml_x_event * ev);

// ---------------------------------------------------------------------------------------------
// Barrier for a variable number of threads: every round, exactly n threads call
// ggml_x_barrier_wait(b, n) with the same n; all return once the n-th has arrived. The n may differ
// from round to round (the engine uses one barrier for nodes of different thread counts) as long
// as one round is complete before the next one starts.
//
// This is the engine-owned struct behind `struct ggml_cpu_barrier` of cpu/ops.h.

struct ggml_cpu_barrier {
    _Alignas(GGML_X_CACHE_LINE) _Atomic int32_t count; // arrivals in the current round
    _Alignas(GGML_X_CACHE_LINE) struct ggml_x_event phase; // bumped when a round completes
};

void ggml_x_barrier_init   (struct ggml_cpu_barrier * b);
void ggml_x_barrier_destroy(struct ggml_cpu_barrier * b);
void ggml_x_barrier_wait   (struct ggml_cpu_barrier * b, int n);

// ---------------------------------------------------------------------------------------------
// Pool

struct ggml_x_threadpool;

// A pool that can run n_threads threads at once (it creates n_threads - 1 workers; n_threads < 1
// counts as 1). Returns NULL when memory or threads cannot be had.
struct ggml_x_threadpool * ggml_x_threadpool_new(int n_threads);

// Stops and joins the workers, then frees the pool. NULL is ignored.
void ggml_x_threadpool_free(struct ggml_x_threadpool * pool);

// Makes the pool exactly n_threads wide: creates the missing workers or joins the surplus ones.
// Returns the width reached (less than asked only when thread creation failed).
int ggml_x_threadpool_resize(struct ggml_x_threadpool * pool, int n_threads);

// Current width (workers + the caller).
int ggml_x_threadpool_size(struct ggml_x_threadpool * pool);

// Runs fn(arg, ith, nth) for ith = 0 .. nth-1 in parallel, ith = 0 on the calling thread, and
// returns nth once every call has returned. nth = n_threads, except that the pool grows when it
// is narrower than n_threads (it never shrinks here; idle surplus workers just sleep) and nth is
// smaller than asked only if a thread could not be created. fn must use its nth argument.
// pool == NULL, n_threads <= 1, or a call from inside a run (ggml_x_threadpool_in_run) runs
// fn(arg, 0, 1) inline.
int ggml_x_threadpool_run(struct ggml_x_threadpool * pool, int n_threads,
                          void (*fn)(void * arg, int ith, int nth), void * arg);

// True while the calling thread is executing fn of some pool run (as caller or as worker).
bool ggml_x_threadpool_in_run(void);

// (public, ggml.h) ggml_x_threads_created(): workers created by all pools since the process began.

#ifdef __cplusplus
}
#endif

#endif // GGML_X_THREADPOOL_H
