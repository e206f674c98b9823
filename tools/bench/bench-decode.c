// bench-decode.c - decode-step overheads of the library (issue 17, items 2 and 4): what the
// scheduler and the CPU engine cost per graph and per node, with kernels that do almost nothing.
//
//   make bench-decode            (builds build/bin/bench-decode and runs it)
//   build/bin/bench-decode [sched|engine|all] [reps=R] [size=S] [nodes=N]
//
// sched: a chain of N one-element ADD nodes computed through a one-backend (CPU, 1 thread)
//   scheduler created with graph_size S, against a direct ggml_backend_graph_compute of the same
//   allocated graph. overhead = sched - direct, beside the target 5 us + 0.3 us per node: the
//   graph computed again with new inputs (the scheduler reuses its plan). resplit: two such
//   graphs computed in turn, so that every compute splits and plans anew (overhead per compute
//   over the direct compute).
// engine: chains of 1024 ADD nodes of 1 element (run on one thread by the engine: no
//   synchronisation) and of 4096 elements (split between the threads: one barrier per node),
//   computed directly on the CPU backend at 1 and 2 threads: time per node, and for 4096 the
//   synchronisation cost per node at 2 threads, t2 - t1 / 2 (the ideal split of the work);
//   then one compute after the workers went to sleep (wake-up included).
//
// Every figure is the median of R runs (default 9), each the mean of a batch of calls sized to
// take about 20 ms. Timings on a shared machine are noisy: compare figures of one run.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchutil.h"

static double now_us(void) {
    return now_s() * 1e6;
}

struct chain {
    struct ggml_context * ctx;
    struct ggml_cgraph * graph;
};

// x -> x + y -> (x + y) + y -> ...: n_nodes ADD nodes over tensors of ne elements
static struct chain chain_new_ne(int n_nodes, size_t graph_size, int64_t ne) {
    struct chain c;
    struct ggml_init_params params = {
        /* .mem_size   = */ (size_t) (n_nodes + 8) * ggml_tensor_overhead() + ggml_graph_overhead_custom(graph_size, false),
        /* .mem_buffer = */ NULL,
        /* .no_alloc   = */ true,
    };
    c.ctx = ggml_init(params);
    struct ggml_tensor * x = ggml_new_tensor_1d(c.ctx, GGML_TYPE_F32, ne);
    struct ggml_tensor * y = ggml_new_tensor_1d(c.ctx, GGML_TYPE_F32, ne);
    struct ggml_tensor * cur = x;
    for (int i = 0; i < n_nodes; i++) {
        cur = ggml_add(c.ctx, cur, y);
    }
    c.graph = ggml_new_graph_custom(c.ctx, graph_size, false);
    ggml_build_forward_expand(c.graph, cur);
    return c;
}

static struct chain chain_new(int n_nodes, size_t graph_size) {
    return chain_new_ne(n_nodes, graph_size, 1);
}

typedef void (*run_fn)(void * arg);

// median over reps of the mean time of one call (us)
static double time_calls(run_fn fn, void * arg, int reps) {
    // size a batch to about 20 ms
    double t0 = now_us();
    int calls = 0;
    while (now_us() - t0 < 5000.0 || calls < 3) {
        fn(arg);
        calls++;
    }
    double per = (now_us() - t0) / calls;
    int batch = (int) (20000.0 / per);
    batch = batch < 3 ? 3 : batch;
    double * v = malloc(sizeof(double) * (size_t) reps);
    for (int r = 0; r < reps; r++) {
        double s = now_us();
        for (int k = 0; k < batch; k++) {
            fn(arg);
        }
        v[r] = (now_us() - s) / batch;
    }
    double m = median(v, reps);
    free(v);
    return m;
}

struct sched_arg {
    ggml_backend_sched_t sched;
    ggml_backend_t backend;
    struct ggml_cgraph * graph;
};

static void run_sched(void * p) {
    struct sched_arg * a = p;
    ggml_backend_sched_reset(a->sched); // what a caller does between decode steps
    ggml_backend_sched_graph_compute(a->sched, a->graph);
}

// two graphs in turn: no plan to reuse
struct resplit_arg {
    ggml_backend_sched_t sched;
    struct ggml_cgraph * graphs[2];
    int next;
};

static void run_resplit(void * p) {
    struct resplit_arg * a = p;
    ggml_backend_sched_reset(a->sched);
    ggml_backend_sched_graph_compute(a->sched, a->graphs[a->next]);
    a->next ^= 1;
}

static void run_direct(void * p) {
    struct sched_arg * a = p;
    ggml_backend_graph_compute(a->backend, a->graph);
}

static size_t only_size; // size=S / nodes=N arguments: only that case (0: all)
static int only_nodes;

static void bench_sched(int reps) {
    static const size_t sizes[] = { 16, 2048, 8192 };
    static const int nodes[] = { 1, 64, 1024 };
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 1);
    printf("# scheduler overhead, one CPU backend, 1 thread, ADD chain of one-element tensors, median of %d\n", reps);
    printf("%-10s %6s %12s %12s %14s %12s %18s\n", "graph_size", "nodes", "sched_us", "direct_us", "overhead_us", "target_us",
           "resplit_ovh_us");
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        for (size_t ni = 0; ni < sizeof(nodes) / sizeof(nodes[0]); ni++) {
            const size_t gs = sizes[si];
            const int n = nodes[ni];
            if ((only_size != 0 && gs != only_size) || (only_nodes != 0 && n != only_nodes)) {
                continue;
            }
            if ((size_t) n + 1 > gs) {
                printf("%-10zu %6d %12s %12s %14s %12s %18s\n", gs, n, "-", "-", "-", "(too big)", "-");
                continue;
            }
            struct chain c = chain_new(n, gs);
            ggml_backend_sched_t sched = ggml_backend_sched_new(&cpu, NULL, 1, gs);
            struct sched_arg a = { sched, cpu, c.graph };
            run_sched(&a);
            double ts = time_calls(run_sched, &a, reps);
            double td = time_calls(run_direct, &a, reps);
            double ts2 = time_calls(run_sched, &a, reps);
            ts = ts < ts2 ? ts : ts2; // the better of two, around the direct run
            struct chain c2 = chain_new(n, gs);
            struct resplit_arg ra = { sched, { c.graph, c2.graph }, 0 };
            run_resplit(&ra);
            run_resplit(&ra);
            double tr = time_calls(run_resplit, &ra, reps);
            printf("%-10zu %6d %12.2f %12.2f %14.2f %12.2f %18.2f\n", gs, n, ts, td, ts - td, 5.0 + 0.3 * n, tr - td);
            printf("RESULT bench=sched graph_size=%zu nodes=%d sched_us=%.3f direct_us=%.3f overhead_us=%.3f resplit_overhead_us=%.3f\n",
                   gs, n, ts, td, ts - td, tr - td);
            ggml_backend_sched_free(sched);
            ggml_free(c2.ctx);
            ggml_free(c.ctx);
        }
    }
    ggml_backend_free(cpu);
}

static void sleep_ms(int ms) {
    struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static void bench_engine(int reps) {
    const int n = 1024;
    static const int64_t sizes[] = { 1, 4096 };
    printf("# CPU engine per-node cost, ADD chains of %d nodes, median of %d\n", n, reps);
    printf("%-9s %-8s %12s %12s %16s %18s\n", "elements", "threads", "graph_us", "per_node_us", "after_sleep_us",
           "sync_us_per_node");
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        double per1 = 0.0;
        for (int nt = 1; nt <= 2; nt++) {
            ggml_backend_t cpu = ggml_backend_cpu_init();
            ggml_backend_cpu_set_n_threads(cpu, nt);
            struct chain c = chain_new_ne(n, 2048, sizes[si]);
            ggml_gallocr_t galloc = ggml_gallocr_new();
            ggml_tallocr_t measure = ggml_tallocr_new_measure_from_backend(cpu);
            ggml_gallocr_alloc_graph(galloc, measure, c.graph);
            size_t size = ggml_tallocr_max_size(measure);
            ggml_tallocr_free(measure);
            ggml_tallocr_t talloc = ggml_tallocr_new_from_backend(cpu, size + 4096);
            ggml_gallocr_alloc_graph(galloc, talloc, c.graph);
            float * zero = calloc((size_t) sizes[si], sizeof(float));
            ggml_backend_tensor_set(c.graph->nodes[0]->src[0], zero, 0, ggml_nbytes(c.graph->nodes[0]->src[0]));
            ggml_backend_tensor_set(c.graph->nodes[0]->src[1], zero, 0, ggml_nbytes(c.graph->nodes[0]->src[1]));
            free(zero);
            struct sched_arg a = { NULL, cpu, c.graph };
            run_direct(&a);
            double tg = time_calls(run_direct, &a, reps);
            // a compute after the workers had time to fall asleep: wake-up included
            double * v = malloc(sizeof(double) * (size_t) reps);
            for (int r = 0; r < reps; r++) {
                sleep_ms(20);
                double s = now_us();
                run_direct(&a);
                v[r] = now_us() - s;
            }
            double tw = median(v, reps);
            free(v);
            const double per = tg / n;
            char sync[32] = "-";
            if (nt == 1) {
                per1 = per;
            } else if (sizes[si] > 1) {
                snprintf(sync, sizeof(sync), "%.3f", per - per1 / 2);
            }
            printf("%-9lld %-8d %12.2f %12.3f %16.2f %18s\n", (long long) sizes[si], nt, tg, per, tw, sync);
            printf("RESULT bench=engine elements=%lld threads=%d nodes=%d graph_us=%.3f per_node_us=%.4f after_sleep_us=%.3f\n",
                   (long long) sizes[si], nt, n, tg, per, tw);
            ggml_tallocr_free(talloc);
            ggml_gallocr_free(galloc);
            ggml_free(c.ctx);
            ggml_backend_free(cpu);
        }
    }
}

int main(int argc, char ** argv) {
    const char * what = "all";
    int reps = 9;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "size=", 5) == 0) {
            only_size = (size_t) atol(argv[i] + 5);
        } else if (strncmp(argv[i], "nodes=", 6) == 0) {
            only_nodes = atoi(argv[i] + 6);
        } else if (strncmp(argv[i], "reps=", 5) == 0) {
            reps = atoi(argv[i] + 5);
            reps = reps < 1 ? 1 : reps;
        } else {
            what = argv[i];
        }
    }
    if (strcmp(what, "sched") == 0 || strcmp(what, "all") == 0) {
        bench_sched(reps);
    }
    if (strcmp(what, "engine") == 0 || strcmp(what, "all") == 0) {
        bench_engine(reps);
    }
    return 0;
}
