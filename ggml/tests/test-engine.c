// test-engine.c - the CPU thread pool (cpu/threadpool.c) and graph engine (cpu/engine.c).

#include "ggml.h"
#include "ggml-impl.h"
#include "cpu/engine.h"
#include "cpu/threadpool.h"

#include "testing.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// ---------------------------------------------------------------------------------------------
// thread pool

struct run_record {
    _Atomic int calls[16];
    _Atomic int bad_nth;
    int expect_nth;
    pthread_t caller;
    _Atomic int caller_was_ith0;
};

static void record_fn(void * arg, int ith, int nth) {
    struct run_record * r = arg;
    if (nth != r->expect_nth) {
        atomic_fetch_add(&r->bad_nth, 1);
    }
    if (ith >= 0 && ith < 16) {
        atomic_fetch_add(&r->calls[ith], 1);
    }
    if (ith == 0 && pthread_equal(pthread_self(), r->caller)) {
        atomic_store(&r->caller_was_ith0, 1);
    }
}

static void check_run(struct ggml_x_threadpool * pool, int n) {
    struct run_record r;
    memset(&r, 0, sizeof(r));
    r.expect_nth = n;
    r.caller = pthread_self();
    const int got = ggml_x_threadpool_run(pool, n, record_fn, &r);
    T_CHECK_MSG(got == n, "run(%d) used %d threads", n, got);
    T_CHECK(atomic_load(&r.bad_nth) == 0);
    T_CHECK(atomic_load(&r.caller_was_ith0) == 1);
    for (int i = 0; i < 16; i++) {
        T_CHECK_MSG(atomic_load(&r.calls[i]) == (i < n ? 1 : 0), "n=%d ith=%d calls=%d", n, i,
                    atomic_load(&r.calls[i]));
    }
}

static void test_pool_run(void) {
    struct ggml_x_threadpool * pool = ggml_x_threadpool_new(4);
    T_CHECK(pool != NULL);
    T_CHECK(ggml_x_threadpool_size(pool) == 4);
    for (int rep = 0; rep < 50; rep++) {
        check_run(pool, 4);
    }
    check_run(pool, 1);
    check_run(pool, 2);
    check_run(pool, 3);
    check_run(pool, 4);
    check_run(pool, 6); // grows
    T_CHECK(ggml_x_threadpool_size(pool) == 6);
    check_run(pool, 2);
    check_run(NULL, 1);
    ggml_x_threadpool_free(pool);
    ggml_x_threadpool_free(NULL);
}

static void test_threads_created(void) {
    const int64_t c0 = ggml_x_threads_created();
    struct ggml_x_threadpool * pool = ggml_x_threadpool_new(3);
    T_CHECK(ggml_x_threads_created() - c0 == 2);
    for (int rep = 0; rep < 200; rep++) {
        check_run(pool, 3);
    }
    check_run(pool, 2);
    check_run(pool, 1);
    check_run(pool, 3);
    T_CHECK_MSG(ggml_x_threads_created() - c0 == 2, "created %lld", (long long) (ggml_x_threads_created() - c0));
    check_run(pool, 5); // pool grows by 2
    T_CHECK(ggml_x_threads_created() - c0 == 4);
    check_run(pool, 5);
    check_run(pool, 4);
    T_CHECK(ggml_x_threads_created() - c0 == 4);
    T_CHECK(ggml_x_threadpool_resize(pool, 2) == 2); // shrinking creates nothing
    T_CHECK(ggml_x_threads_created() - c0 == 4);
    check_run(pool, 2);
    T_CHECK(ggml_x_threadpool_resize(pool, 2) == 2);
    T_CHECK(ggml_x_threads_created() - c0 == 4);
    T_CHECK(ggml_x_threadpool_resize(pool, 4) == 4);
    T_CHECK(ggml_x_threads_created() - c0 == 6);
    check_run(pool, 4);
    ggml_x_threadpool_free(pool);
    T_CHECK(ggml_x_threads_created() - c0 == 6);
}

// every round: each thread writes its slot, barrier, everyone checks all slots, barrier
struct barrier_job {
    struct ggml_cpu_barrier barrier;
    struct ggml_cpu_barrier inner; // used by the first `sub` threads only
    int rounds;
    int sub;
    _Atomic int slots[16];
    _Atomic int inner_slots[16];
    _Atomic int errors;
};

static void barrier_fn(void * arg, int ith, int nth) {
    struct barrier_job * job = arg;
    for (int r = 1; r <= job->rounds; r++) {
        atomic_store_explicit(&job->slots[ith], r, memory_order_relaxed);
        ggml_x_barrier_wait(&job->barrier, nth);
        for (int j = 0; j < nth; j++) {
            if (atomic_load_explicit(&job->slots[j], memory_order_relaxed) != r) {
                atomic_fetch_add(&job->errors, 1);
            }
        }
        // a subset of the threads synchronises on its own barrier, like the threads of one node
        if (ith < job->sub) {
            struct ggml_cpu_ctx cc = { .ith = ith, .nth = job->sub, .barrier = &job->inner };
            atomic_store_explicit(&job->inner_slots[ith], r, memory_order_relaxed);
            ggml_cpu_barrier(&cc);
            for (int j = 0; j < job->sub; j++) {
                if (atomic_load_explicit(&job->inner_slots[j], memory_order_relaxed) != r) {
                    atomic_fetch_add(&job->errors, 1);
                }
            }
        }
        ggml_x_barrier_wait(&job->barrier, nth);
    }
}

static void run_barrier_job(struct ggml_x_threadpool * pool, int n, int sub, int rounds) {
    struct barrier_job job;
    memset(&job, 0, sizeof(job));
    ggml_x_barrier_init(&job.barrier);
    ggml_x_barrier_init(&job.inner);
    job.rounds = rounds;
    job.sub = sub;
    const int64_t t0 = ggml_time_us();
    ggml_x_threadpool_run(pool, n, barrier_fn, &job);
    const int64_t t1 = ggml_time_us();
    T_CHECK_MSG(atomic_load(&job.errors) == 0, "n=%d sub=%d errors=%d", n, sub, atomic_load(&job.errors));
    printf("     barrier n=%d sub=%d: %.2f us per round (2 barriers + %s)\n", n, sub,
           (double) (t1 - t0) / rounds, sub > 1 ? "subset barrier" : "no subset barrier");
    ggml_x_barrier_destroy(&job.barrier);
    ggml_x_barrier_destroy(&job.inner);
}

static void test_barrier(void) {
    struct ggml_x_threadpool * pool = ggml_x_threadpool_new(4);
    run_barrier_job(pool, 2, 2, 2000);
    run_barrier_job(pool, 4, 3, 500);
    run_barrier_job(pool, 3, 1, 500);
    ggml_x_threadpool_free(pool);
}

// more threads than cores: must finish promptly thanks to yield/sleep
static void test_oversubscribed(void) {
    struct ggml_x_threadpool * pool = ggml_x_threadpool_new(8);
    const int64_t t0 = ggml_time_us();
    run_barrier_job(pool, 8, 5, 300);
    const int64_t t1 = ggml_time_us();
    T_CHECK_MSG(t1 - t0 < 20 * 1000 * 1000, "8 threads, 300 rounds took %lld us", (long long) (t1 - t0));
    ggml_x_threadpool_free(pool);
}

struct nested_job {
    struct ggml_x_threadpool * pool;
    _Atomic int inner_calls;
    _Atomic int inner_bad;
};

static void nested_inner(void * arg, int ith, int nth) {
    struct nested_job * job = arg;
    if (ith != 0 || nth != 1) {
        atomic_fetch_add(&job->inner_bad, 1);
    }
    atomic_fetch_add(&job->inner_calls, 1);
}

static void nested_outer(void * arg, int ith, int nth) {
    (void) ith;
    (void) nth;
    struct nested_job * job = arg;
    if (!ggml_x_threadpool_in_run()) {
        atomic_fetch_add(&job->inner_bad, 1);
    }
    // a nested run on the same pool runs inline instead of deadlocking
    ggml_x_threadpool_run(job->pool, 4, nested_inner, job);
}

static void test_nested_run(void) {
    struct nested_job job;
    memset(&job, 0, sizeof(job));
    job.pool = ggml_x_threadpool_new(3);
    T_CHECK(!ggml_x_threadpool_in_run());
    ggml_x_threadpool_run(job.pool, 3, nested_outer, &job);
    T_CHECK(!ggml_x_threadpool_in_run());
    T_CHECK(atomic_load(&job.inner_calls) == 3);
    T_CHECK(atomic_load(&job.inner_bad) == 0);
    ggml_x_threadpool_free(job.pool);
}

// ---------------------------------------------------------------------------------------------
// engine

static struct ggml_context * new_ctx(size_t mb) {
    struct ggml_init_params params = { mb * 1024 * 1024, NULL, false };
    return ggml_init(params);
}

static void fill(struct ggml_tensor * t, unsigned seed) {
    float * d = t->data;
    for (int64_t i = 0; i < ggml_nelements(t); i++) {
        seed = seed * 1664525u + 1013904223u;
        d[i] = (float) ((seed >> 8) & 0xffff) / 65536.0f - 0.5f;
    }
}

// a custom node built through the internal contract (op_params = struct ggml_x_map_custom_params)
static struct ggml_tensor * custom1(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun,
                                    int n_tasks, void * userdata) {
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * t = ggml_x_new_op_tensor(ctx, GGML_OP_MAP_CUSTOM1, a->type, a->ne, 1, srcs);
    struct ggml_x_map_custom_params p = { (void *) fun, n_tasks, userdata };
    ggml_x_set_op_params(t, &p, sizeof(p));
    return t;
}

static struct ggml_cgraph hand_graph(struct ggml_tensor ** nodes, int n) {
    struct ggml_cgraph g;
    memset(&g, 0, sizeof(g));
    g.size = n;
    g.n_nodes = n;
    g.nodes = nodes;
    return g;
}

// out = mul_mat(a, b) * s + bias (broadcast), a small graph with several node types
struct small_graph {
    struct ggml_context * ctx;
    struct ggml_cgraph * g;
    struct ggml_tensor * a, * b, * s, * bias, * out;
};

static struct small_graph small_graph_new(void) {
    struct small_graph sg;
    sg.ctx = new_ctx(16);
    sg.a = ggml_new_tensor_2d(sg.ctx, GGML_TYPE_F32, 37, 29);
    sg.b = ggml_new_tensor_2d(sg.ctx, GGML_TYPE_F32, 37, 11);
    sg.s = ggml_new_tensor_2d(sg.ctx, GGML_TYPE_F32, 29, 11);
    sg.bias = ggml_new_tensor_1d(sg.ctx, GGML_TYPE_F32, 29);
    fill(sg.a, 1);
    fill(sg.b, 2);
    fill(sg.s, 3);
    fill(sg.bias, 4);
    struct ggml_tensor * mm = ggml_mul_mat(sg.ctx, sg.a, sg.b);
    sg.out = ggml_add(sg.ctx, ggml_mul(sg.ctx, mm, sg.s), sg.bias);
    sg.g = ggml_new_graph(sg.ctx);
    ggml_build_forward_expand(sg.g, sg.out);
    return sg;
}

static float small_graph_ref(const struct small_graph * sg, int i0, int i1) {
    const float * a = sg->a->data, * b = sg->b->data, * s = sg->s->data, * bias = sg->bias->data;
    double acc = 0;
    for (int k = 0; k < 37; k++) {
        acc += (double) a[i0 * 37 + k] * b[i1 * 37 + k];
    }
    return (float) (acc * s[i1 * 29 + i0] + bias[i0]);
}

static void test_engine_deterministic(void) {
    struct small_graph sg = small_graph_new();
    float ref[29 * 11];
    float got[29 * 11];

    ggml_graph_compute_with_ctx(sg.ctx, sg.g, 1);
    memcpy(ref, sg.out->data, sizeof(ref));
    for (int i1 = 0; i1 < 11; i1++) {
        for (int i0 = 0; i0 < 29; i0++) {
            T_NEAR(ref[i1 * 29 + i0], small_graph_ref(&sg, i0, i1), 1e-4);
        }
    }

    // the default pool through the public API
    const int counts[] = { 2, 4, 1, 3, 4, 2 };
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        memset(sg.out->data, 0, sizeof(got));
        struct ggml_cplan plan = ggml_graph_plan(sg.g, counts[k]);
        T_CHECK(plan.n_threads == counts[k]);
        uint8_t * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
        plan.work_data = work;
        T_CHECK(ggml_graph_compute(sg.g, &plan) == GGML_EXIT_SUCCESS);
        free(work);
        T_CHECK_MSG(memcmp(sg.out->data, ref, sizeof(ref)) == 0, "n_threads=%d differs from 1 thread", counts[k]);
    }

    // an own pool whose thread count changes between calls
    struct ggml_x_threadpool * pool = ggml_x_threadpool_new(2);
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        memset(sg.out->data, 0, sizeof(got));
        const size_t ws = ggml_x_cpu_graph_work_size(sg.g, counts[k]);
        void * work = ws > 0 ? malloc(ws) : NULL;
        T_CHECK(ggml_x_cpu_graph_compute(pool, sg.g, counts[k], work, ws, NULL, NULL));
        free(work);
        T_CHECK_MSG(memcmp(sg.out->data, ref, sizeof(ref)) == 0, "pool, n_threads=%d differs", counts[k]);
    }
    ggml_x_threadpool_free(pool);

    for (int n = 1; n <= 4; n *= 2) {
        memset(sg.out->data, 0, sizeof(got));
        ggml_graph_compute_with_ctx(sg.ctx, sg.g, n);
        T_CHECK_MSG(memcmp(sg.out->data, ref, sizeof(ref)) == 0, "with_ctx, n_threads=%d differs", n);
    }
    ggml_free(sg.ctx);
}

static void test_engine_thread_reuse(void) {
    struct small_graph sg = small_graph_new();
    const size_t ws = ggml_x_cpu_graph_work_size(sg.g, 4);
    void * work = ws > 0 ? malloc(ws) : NULL;

    const int64_t c0 = ggml_x_threads_created();
    struct ggml_x_threadpool * pool = ggml_x_threadpool_new(2);
    T_CHECK(ggml_x_threads_created() - c0 == 1);
    for (int rep = 0; rep < 100; rep++) {
        T_CHECK(ggml_x_cpu_graph_compute(pool, sg.g, 2, work, ws, NULL, NULL));
    }
    T_CHECK(ggml_x_cpu_graph_compute(pool, sg.g, 1, work, ws, NULL, NULL));
    T_CHECK_MSG(ggml_x_threads_created() - c0 == 1, "created %lld", (long long) (ggml_x_threads_created() - c0));
    T_CHECK(ggml_x_cpu_graph_compute(pool, sg.g, 4, work, ws, NULL, NULL)); // grows to 4
    T_CHECK(ggml_x_threads_created() - c0 == 3);
    for (int rep = 0; rep < 50; rep++) {
        T_CHECK(ggml_x_cpu_graph_compute(pool, sg.g, 2 + rep % 3, work, ws, NULL, NULL));
    }
    T_CHECK(ggml_x_threads_created() - c0 == 3);
    ggml_x_threadpool_free(pool);

    // the default pool of ggml_graph_compute: no new threads once it is wide enough
    struct ggml_cplan plan = ggml_graph_plan(sg.g, 3);
    plan.work_data = work;
    T_CHECK(ggml_graph_compute(sg.g, &plan) == GGML_EXIT_SUCCESS);
    const int64_t c1 = ggml_x_threads_created();
    for (int rep = 0; rep < 100; rep++) {
        plan = ggml_graph_plan(sg.g, 1 + rep % 3);
        plan.work_data = work;
        T_CHECK(ggml_graph_compute(sg.g, &plan) == GGML_EXIT_SUCCESS);
    }
    T_CHECK_MSG(ggml_x_threads_created() == c1, "default pool created %lld threads",
                (long long) (ggml_x_threads_created() - c1));
    free(work);
    ggml_free(sg.ctx);
}

// idle workers spin briefly after a compute, then sleep: over an idle window the process uses
// far less CPU time than one spinning worker would (the bound is loose: a loaded machine can
// only lower the measured time)
static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double) ts.tv_sec + 1e-9 * (double) ts.tv_nsec;
}

static void test_engine_idle_sleeps(void) {
    struct small_graph sg = small_graph_new();
    const size_t ws = ggml_x_cpu_graph_work_size(sg.g, 4);
    void * work = ws > 0 ? malloc(ws) : NULL;
    struct ggml_x_threadpool * pool = ggml_x_threadpool_new(4);
    T_CHECK(ggml_x_cpu_graph_compute(pool, sg.g, 4, work, ws, NULL, NULL));
    const double c0 = cpu_seconds();
    struct timespec idle = { 0, 300 * 1000 * 1000 }; // 300 ms; three idle workers
    nanosleep(&idle, NULL);
    const double used = cpu_seconds() - c0;
    T_CHECK_MSG(used < 0.1, "idle workers used %.3f s of CPU time in 0.3 s", used);
    // and they wake for the next compute
    T_CHECK(ggml_x_cpu_graph_compute(pool, sg.g, 4, work, ws, NULL, NULL));
    ggml_x_threadpool_free(pool);
    free(work);
    ggml_free(sg.ctx);
}

// custom op that records which (ith, nth) ran it
struct task_log {
    _Atomic int calls[8];
    _Atomic int nth_seen;
};

static void log_fun(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    (void) dst;
    (void) a;
    struct task_log * log = userdata;
    atomic_fetch_add(&log->calls[ith & 7], 1);
    atomic_store(&log->nth_seen, nth);
}

static void test_engine_n_tasks(void) {
    struct ggml_context * ctx = new_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    struct task_log logs[3];
    memset(logs, 0, sizeof(logs));
    const int tasks[3] = { GGML_N_TASKS_MAX, 2, 1 };
    struct ggml_tensor * nodes[3];
    struct ggml_tensor * cur = x;
    for (int i = 0; i < 3; i++) {
        cur = nodes[i] = custom1(ctx, cur, log_fun, tasks[i], &logs[i]);
    }
    struct ggml_cgraph g = hand_graph(nodes, 3);
    struct ggml_x_threadpool * pool = ggml_x_threadpool_new(4);
    T_CHECK(ggml_x_cpu_graph_compute(pool, &g, 4, NULL, 0, NULL, NULL));
    const int expect_nth[3] = { 4, 2, 1 };
    for (int i = 0; i < 3; i++) {
        T_CHECK_MSG(atomic_load(&logs[i].nth_seen) == expect_nth[i], "node %d nth=%d", i, atomic_load(&logs[i].nth_seen));
        for (int t = 0; t < 8; t++) {
            T_CHECK_MSG(atomic_load(&logs[i].calls[t]) == (t < expect_nth[i] ? 1 : 0), "node %d ith %d calls %d", i, t,
                        atomic_load(&logs[i].calls[t]));
        }
    }
    ggml_x_threadpool_free(pool);
    ggml_free(ctx);
}

// abort: a chain of counting nodes; the callback says stop on its k-th call
struct abort_state {
    _Atomic int executed;
    int polls;
    int stop_at;
};

static void count_fun(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    (void) dst;
    (void) a;
    (void) nth;
    struct abort_state * st = userdata;
    if (ith == 0) {
        atomic_fetch_add(&st->executed, 1);
    }
}

static bool abort_cb(void * data) {
    struct abort_state * st = data;
    return ++st->polls >= st->stop_at;
}

static void test_engine_abort(void) {
    struct ggml_context * ctx = new_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    struct abort_state st;
    enum { N = 20 };
    struct ggml_tensor * nodes[N];
    struct ggml_tensor * cur = x;
    for (int i = 0; i < N; i++) {
        cur = nodes[i] = custom1(ctx, cur, count_fun, GGML_N_TASKS_MAX, &st);
    }
    struct ggml_cgraph g = hand_graph(nodes, N);

    for (int n = 1; n <= 3; n++) {
        // polled before the first node and between nodes: stopping at poll 5 leaves 4 nodes done
        memset(&st, 0, sizeof(st));
        st.stop_at = 5;
        struct ggml_cplan plan = ggml_graph_plan(&g, n);
        plan.abort_callback = abort_cb;
        plan.abort_callback_data = &st;
        T_CHECK(ggml_graph_compute(&g, &plan) == GGML_EXIT_ABORTED);
        T_CHECK_MSG(atomic_load(&st.executed) == 4, "n=%d executed %d", n, atomic_load(&st.executed));
        T_CHECK(st.polls == 5);

        // stop before anything runs
        memset(&st, 0, sizeof(st));
        st.stop_at = 1;
        T_CHECK(ggml_graph_compute(&g, &plan) == GGML_EXIT_ABORTED);
        T_CHECK(atomic_load(&st.executed) == 0);

        // never stops: every node runs, one poll before each node
        memset(&st, 0, sizeof(st));
        st.stop_at = 1000;
        T_CHECK(ggml_graph_compute(&g, &plan) == GGML_EXIT_SUCCESS);
        T_CHECK(atomic_load(&st.executed) == N);
        T_CHECK_MSG(st.polls == N, "polls %d", st.polls);
    }
    ggml_free(ctx);
}

static bool contains(const char * s, const char * part) {
    return s != NULL && strstr(s, part) != NULL;
}

// nodes that run on thread 0 alone (single-task custom nodes, small element-wise ops) mixed
// with nodes that use every thread: the engine skips the barrier between two single-thread
// nodes. Results match the one-thread run bit for bit; an abort at any poll stops the compute
// after exactly the nodes before it, at every thread count, without a deadlock.
static void test_engine_mixed_tasks(void) {
    struct ggml_context * ctx = new_ctx(4);
    struct ggml_tensor * xs = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 300);   // small: one thread
    struct ggml_tensor * xb = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 9000);  // large: every thread
    fill(xs, 5);
    fill(xb, 6);
    struct ggml_tensor * s = xs, * b = xb;
    for (int i = 0; i < 12; i++) {
        // patterns of small runs of 1-3 nodes between large nodes
        for (int k = 0; k <= i % 3; k++) {
            s = (i + k) % 2 ? ggml_mul(ctx, s, xs) : ggml_add(ctx, s, xs);
        }
        b = i % 2 ? ggml_add(ctx, b, xb) : ggml_mul(ctx, b, xb);
    }
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, s);
    ggml_build_forward_expand(g, b);
    const size_t ws = ggml_x_cpu_graph_work_size(g, 4);
    void * work = ws > 0 ? malloc(ws) : NULL;
    struct ggml_x_threadpool * pool = ggml_x_threadpool_new(4);
    T_CHECK(ggml_x_cpu_graph_compute(pool, g, 1, work, ws, NULL, NULL));
    float * ref_s = malloc(ggml_nbytes(s));
    float * ref_b = malloc(ggml_nbytes(b));
    memcpy(ref_s, s->data, ggml_nbytes(s));
    memcpy(ref_b, b->data, ggml_nbytes(b));
    for (int rep = 0; rep < 30; rep++) {
        const int n = 2 + rep % 3;
        memset(s->data, 0, ggml_nbytes(s));
        memset(b->data, 0, ggml_nbytes(b));
        T_CHECK(ggml_x_cpu_graph_compute(pool, g, n, work, ws, NULL, NULL));
        T_CHECK_MSG(memcmp(s->data, ref_s, ggml_nbytes(s)) == 0 && memcmp(b->data, ref_b, ggml_nbytes(b)) == 0,
                    "%d threads differ from one", n);
    }
    free(ref_s);
    free(ref_b);

    // single-task and all-thread custom nodes in an irregular pattern; abort at every poll
    struct abort_state st;
    enum { N = 16 };
    static const bool all[N] = { 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0 };
    struct ggml_tensor * nodes[N];
    struct ggml_tensor * cur = xs;
    for (int i = 0; i < N; i++) {
        cur = nodes[i] = custom1(ctx, cur, count_fun, all[i] ? GGML_N_TASKS_MAX : 1, &st);
    }
    struct ggml_cgraph hg = hand_graph(nodes, N);
    for (int n = 1; n <= 4; n++) {
        for (int stop = 1; stop <= N + 1; stop++) {
            memset(&st, 0, sizeof(st));
            st.stop_at = stop;
            const bool ok = ggml_x_cpu_graph_compute(pool, &hg, n, work, ws, abort_cb, &st);
            // polled before the first node and after every node but the last
            const int want = stop <= N ? stop - 1 : N;
            T_CHECK_MSG(ok == (stop > N), "n=%d stop=%d: ok %d", n, stop, ok);
            T_CHECK_MSG(atomic_load(&st.executed) == want, "n=%d stop=%d: %d nodes ran, want %d", n, stop,
                        atomic_load(&st.executed), want);
        }
    }
    ggml_x_threadpool_free(pool);
    free(work);
    ggml_free(ctx);
}

static void test_engine_errors(void) {
    const bool was = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    struct ggml_context * ctx = new_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    fill(x, 5);

    // an op without a CPU kernel (if every op has one by now, use an out-of-range op)
    enum ggml_op missing = GGML_OP_COUNT;
    for (int op = 1; op < GGML_OP_COUNT; op++) {
        if (op == GGML_OP_RESHAPE || op == GGML_OP_VIEW || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE) {
            continue;
        }
        if (ggml_cpu_op_get((enum ggml_op) op)->forward == NULL) {
            missing = (enum ggml_op) op;
            break;
        }
    }
    struct ggml_tensor * ok_node = ggml_add(ctx, x, x);
    struct ggml_tensor * bad = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    bad->op = missing;
    bad->src[0] = ok_node;
    struct ggml_tensor * nodes[2] = { ok_node, bad };
    struct ggml_cgraph g = hand_graph(nodes, 2);
    for (int n = 1; n <= 2; n++) {
        ggml_x_clear_error();
        memset(ok_node->data, 0, ggml_nbytes(ok_node));
        struct ggml_cplan plan = ggml_graph_plan(&g, n);
        T_CHECK(plan.work_size == 0);
        T_CHECK(ggml_graph_compute(&g, &plan) == GGML_EXIT_ABORTED);
        T_CHECK_MSG(contains(ggml_x_last_error(), missing == GGML_OP_COUNT ? "invalid op" : "no CPU kernel"), "%s",
                    ggml_x_last_error() ? ggml_x_last_error() : "(none)");
        T_CHECK(((float *) ok_node->data)[0] == 0.0f); // checked before anything ran
    }
    bad->op = (enum ggml_op) (GGML_OP_COUNT + 7);
    ggml_x_clear_error();
    T_CHECK(!ggml_x_cpu_graph_compute(NULL, &g, 1, NULL, 0, NULL, NULL));
    T_CHECK(contains(ggml_x_last_error(), "invalid op"));

    // a node without data
    struct ggml_init_params meta = { 1024 * 1024, NULL, true };
    struct ggml_context * mctx = ggml_init(meta);
    struct ggml_tensor * y = ggml_new_tensor_1d(mctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * z = ggml_add(mctx, y, y);
    struct ggml_tensor * mnodes[1] = { z };
    struct ggml_cgraph mg = hand_graph(mnodes, 1);
    ggml_x_clear_error();
    T_CHECK(!ggml_x_cpu_graph_compute(NULL, &mg, 2, NULL, 0, NULL, NULL));
    T_CHECK(contains(ggml_x_last_error(), "no data"));
    ggml_free(mctx);

    // bad arguments
    ggml_x_clear_error();
    T_CHECK(ggml_graph_compute(&g, NULL) == GGML_EXIT_ABORTED);
    T_CHECK(ggml_x_last_error() != NULL);
    struct ggml_cplan plan = { 64, NULL, 2, NULL, NULL };
    ggml_x_clear_error();
    T_CHECK(ggml_graph_compute(&g, &plan) == GGML_EXIT_ABORTED);
    T_CHECK(contains(ggml_x_last_error(), "work_data"));
    ggml_x_clear_error();
    T_CHECK(!ggml_x_cpu_graph_compute(NULL, NULL, 1, NULL, 0, NULL, NULL));
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    T_CHECK(!ggml_x_cpu_graph_compute(NULL, &g, 0, NULL, 0, NULL, NULL));
    T_CHECK(ggml_x_last_error() != NULL);

    // a graph of views only: nothing to do
    struct ggml_tensor * v = ggml_reshape_2d(ctx, x, 2, 2);
    struct ggml_tensor * vnodes[1] = { v };
    struct ggml_cgraph vg = hand_graph(vnodes, 1);
    T_CHECK(ggml_x_cpu_graph_compute(NULL, &vg, 2, NULL, 0, NULL, NULL));

    ggml_free(ctx);
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(was);
}

// two threads use ggml_graph_compute (the shared default pool) at the same time
static void * concurrent_main(void * arg) {
    struct small_graph * sg = arg;
    float ref[29 * 11];
    memcpy(ref, sg->out->data, sizeof(ref));
    intptr_t bad = 0;
    for (int rep = 0; rep < 30; rep++) {
        memset(sg->out->data, 0, sizeof(ref));
        struct ggml_cplan plan = ggml_graph_plan(sg->g, 2);
        uint8_t * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
        plan.work_data = work;
        bad += ggml_graph_compute(sg->g, &plan) != GGML_EXIT_SUCCESS;
        free(work);
        bad += memcmp(sg->out->data, ref, sizeof(ref)) != 0;
    }
    return (void *) bad;
}

static void test_engine_concurrent(void) {
    struct small_graph sg[2] = { small_graph_new(), small_graph_new() };
    for (int i = 0; i < 2; i++) {
        ggml_graph_compute_with_ctx(sg[i].ctx, sg[i].g, 1);
    }
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        pthread_create(&th[i], NULL, concurrent_main, &sg[i]);
    }
    for (int i = 0; i < 2; i++) {
        void * bad = NULL;
        pthread_join(th[i], &bad);
        T_CHECK_MSG(bad == NULL, "thread %d: %ld failures", i, (long) (intptr_t) bad);
        ggml_free(sg[i].ctx);
    }
}

// a kernel that computes another graph with ggml_graph_compute (runs inline, no deadlock)
static void nested_fun(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    (void) a;
    (void) nth;
    struct small_graph * sg = userdata;
    if (ith == 0) {
        struct ggml_cplan plan = ggml_graph_plan(sg->g, 2);
        uint8_t * work = plan.work_size > 0 ? malloc(plan.work_size) : NULL;
        plan.work_data = work;
        ((float *) dst->data)[0] = ggml_graph_compute(sg->g, &plan) == GGML_EXIT_SUCCESS ? 1.0f : -1.0f;
        free(work);
    }
}

static void test_engine_nested(void) {
    struct small_graph sg = small_graph_new();
    ggml_graph_compute_with_ctx(sg.ctx, sg.g, 1);
    float ref[29 * 11];
    memcpy(ref, sg.out->data, sizeof(ref));
    memset(sg.out->data, 0, sizeof(ref));

    struct ggml_context * ctx = new_ctx(1);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * node = custom1(ctx, x, nested_fun, GGML_N_TASKS_MAX, &sg);
    struct ggml_tensor * nodes[1] = { node };
    struct ggml_cgraph g = hand_graph(nodes, 1);
    struct ggml_cplan plan = ggml_graph_plan(&g, 2);
    T_CHECK(ggml_graph_compute(&g, &plan) == GGML_EXIT_SUCCESS);
    T_CHECK(((float *) node->data)[0] == 1.0f);
    T_CHECK(memcmp(sg.out->data, ref, sizeof(ref)) == 0);
    ggml_free(ctx);
    ggml_free(sg.ctx);
}

// dispatch cost: a chain of 1000 tiny nodes
static void test_engine_dispatch(void) {
    enum { N = 1000 };
    struct ggml_context * ctx = new_ctx(4);
    struct ggml_tensor * one = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    for (int i = 0; i < 4; i++) {
        ((float *) one->data)[i] = 1.0f;
        ((float *) x->data)[i] = (float) i;
    }
    struct ggml_tensor * cur = x;
    for (int i = 0; i < N; i++) {
        cur = ggml_add(ctx, cur, one);
    }
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, 2 * N, false);
    ggml_build_forward_expand(g, cur);
    T_CHECK(g->n_nodes == N);

    struct ggml_x_threadpool * pool = ggml_x_threadpool_new(2);
    for (int n = 1; n <= 2; n++) {
        T_CHECK(ggml_x_cpu_graph_compute(pool, g, n, NULL, 0, NULL, NULL)); // warm up
        int64_t best = INT64_MAX;
        for (int rep = 0; rep < 5; rep++) {
            const int64_t t0 = ggml_time_us();
            T_CHECK(ggml_x_cpu_graph_compute(pool, g, n, NULL, 0, NULL, NULL));
            const int64_t t = ggml_time_us() - t0;
            best = t < best ? t : best;
        }
        for (int i = 0; i < 4; i++) {
            T_CHECK(((float *) cur->data)[i] == (float) (i + N));
        }
        printf("     %d tiny nodes, %d thread(s): %.2f us per node (best of 5)\n", N, n, (double) best / N);
        // generous bound: only a collapse (a system call per node and thread) fails it
        T_CHECK_MSG(best < 200 * N, "%.2f us per node", (double) best / N);
    }
    ggml_x_threadpool_free(pool);
    ggml_free(ctx);
}

int main(void) {
    T_RUN(test_pool_run);
    T_RUN(test_threads_created);
    T_RUN(test_barrier);
    T_RUN(test_oversubscribed);
    T_RUN(test_nested_run);
    T_RUN(test_engine_deterministic);
    T_RUN(test_engine_thread_reuse);
    T_RUN(test_engine_idle_sleeps);
    T_RUN(test_engine_n_tasks);
    T_RUN(test_engine_abort);
    T_RUN(test_engine_mixed_tasks);
    T_RUN(test_engine_errors);
    T_RUN(test_engine_concurrent);
    T_RUN(test_engine_nested);
    T_RUN(test_engine_dispatch);
    return T_SUMMARY();
}
