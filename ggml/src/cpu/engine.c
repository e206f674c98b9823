// engine.c - runs a graph's nodes on the CPU kernels with a thread pool.
//
// All threads of a compute walk the node list together. For each node that is not a view, the
// kernel's n_tasks picks how many threads take part (nt); threads with ith >= nt skip the kernel.
// Between two nodes every thread meets at the graph barrier, so the next node sees complete
// inputs, except between two nodes that both run on thread 0 alone (nt = 1): thread 0 sees its
// own writes, and the other threads compute nothing until the next barrier. Small element-wise
// nodes (at most ENGINE_SMALL_NODE elements) run on one thread, so a chain of them costs no
// cross-thread synchronisation; a graph whose nodes all run on one thread does not wake the
// workers at all. Every thread takes the same barriers (the choice depends on the nodes only).
// Kernels that need phases synchronise their nt threads with ggml_cpu_barrier (a second barrier,
// so threads that skipped the node and wait at the graph barrier never mix with them).

#include "engine.h"
#include "repack.h"

#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

// ---------------------------------------------------------------------------------------------
// helpers

// Elements up to which the cheap element-wise ops below run on one thread: splitting so little
// work costs more in synchronisation (and, on a loaded machine, in waiting for a descheduled
// thread) than it saves.
#define ENGINE_SMALL_NODE 1024

static bool ggml_x_engine_is_cheap_op(enum ggml_op op) {
    switch (op) {
        case GGML_OP_DUP:
        case GGML_OP_ADD:
        case GGML_OP_ADD1:
        case GGML_OP_SUB:
        case GGML_OP_MUL:
        case GGML_OP_DIV:
        case GGML_OP_SQR:
        case GGML_OP_SQRT:
        case GGML_OP_LOG:
        case GGML_OP_SCALE:
        case GGML_OP_SET:
        case GGML_OP_CPY:
        case GGML_OP_CONT:
        case GGML_OP_GET_ROWS:
        case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_DIAG_MASK_ZERO:
        case GGML_OP_SOFT_MAX:
        case GGML_OP_ROPE:
        case GGML_OP_NORM:
        case GGML_OP_RMS_NORM:
        case GGML_OP_UNARY:
        case GGML_OP_CLAMP:
            return true;
        default:
            return false;
    }
}

static int ggml_x_engine_n_tasks(const struct ggml_cpu_op * op, const struct ggml_tensor * node, int n_threads) {
    if (n_threads <= 1) {
        return n_threads;
    }
    if (op->n_tasks == NULL) {
        const bool small = ggml_x_engine_is_cheap_op(node->op) && ggml_nelements(node) <= ENGINE_SMALL_NODE;
        return small ? 1 : n_threads;
    }
    const int nt = op->n_tasks(node, n_threads);
    return nt < 1 ? 1 : (nt > n_threads ? n_threads : nt);
}

static size_t ggml_x_engine_node_work(const struct ggml_cpu_op * op, const struct ggml_tensor * node, int n_threads) {
    return op->work_size != NULL ? op->work_size(node, n_threads) : 0;
}

size_t ggml_x_cpu_graph_work_size(const struct ggml_cgraph * g, int n_threads) {
    if (g == NULL) {
        return 0;
    }
    if (n_threads < 1) {
        n_threads = 1;
    }
    size_t max = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ggml_tensor * node = g->nodes[i];
        if (node == NULL || ggml_cpu_node_is_noop(node)) {
            continue;
        }
        const struct ggml_cpu_op * op = ggml_cpu_op_get(node->op);
        if (op->forward == NULL) {
            continue;
        }
        const size_t w = ggml_x_engine_node_work(op, node, n_threads);
        max = w > max ? w : max;
    }
    if (max > 0) {
        // room for kernels that align per-thread slices to cache lines
        max += (size_t) GGML_X_CACHE_LINE * (size_t) (n_threads - 1);
    }
    return max;
}

// Checks everything that would make a kernel fail or crash. Returns the index of the last node to
// compute (-1: nothing to compute), or -2 after reporting an error; *max_nt: the most threads a
// node of g uses.
static int ggml_x_engine_check(const struct ggml_context * err_ctx, const struct ggml_cgraph * g,
                               int n_threads, const void * work, size_t work_size, int * max_nt) {
    char shape[96];
    int last = -1;
    *max_nt = 1;
    for (int i = 0; i < g->n_nodes; i++) {
        const struct ggml_tensor * node = g->nodes[i];
        if (node == NULL) {
            ggml_x_error(err_ctx, "ggml_graph_compute: node %d is NULL", i);
            return -2;
        }
        if (ggml_cpu_node_is_noop(node)) {
            continue;
        }
        if ((int) node->op < 0 || node->op >= GGML_OP_COUNT) {
            ggml_x_error(err_ctx, "ggml_graph_compute: node %d ('%s') has an invalid op (%d)", i, node->name,
                         (int) node->op);
            return -2;
        }
        const struct ggml_cpu_op * op = ggml_cpu_op_get(node->op);
        if (op->forward == NULL) {
            ggml_x_error(err_ctx, "ggml_graph_compute: no CPU kernel for op %s (node %d '%s')",
                         ggml_op_desc(node), i, node->name);
            return -2;
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            // interleaved weights (CPU_REPACK buffers): only MUL_MAT's src0 reads their layout
            const struct ggml_tensor * src = node->src[j];
            if (src != NULL && ggml_x_rp_reads_packed(src) &&
                !(node->op == GGML_OP_MUL_MAT && j == 0 && src->view_src == NULL)) {
                ggml_x_error(err_ctx, "ggml_graph_compute: source %d '%s' of node %d '%s' (%s) is stored repacked in a "
                             "CPU_REPACK buffer, which only MUL_MAT can read as its first source (not through a view)",
                             j, src->name, i, node->name, ggml_op_desc(node));
                return -2;
            }
        }
        if (op->supports != NULL && !op->supports(node)) {
            ggml_x_error(err_ctx, "ggml_graph_compute: the CPU kernel of %s does not support node %d '%s' (%s %s)",
                         ggml_op_desc(node), i, node->name, ggml_type_name(node->type),
                         ggml_x_shape_str(node, shape, sizeof(shape)));
            return -2;
        }
        if (node->data == NULL) {
            ggml_x_error(err_ctx, "ggml_graph_compute: node %d '%s' (%s) has no data (not allocated)", i,
                         node->name, ggml_op_desc(node));
            return -2;
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            const struct ggml_tensor * src = node->src[j];
            if (src != NULL && src->data == NULL) {
                ggml_x_error(err_ctx, "ggml_graph_compute: source %d '%s' of node %d '%s' (%s) has no data (not allocated)",
                             j, src->name, i, node->name, ggml_op_desc(node));
                return -2;
            }
        }
        const size_t need = ggml_x_engine_node_work(op, node, n_threads);
        if (need > 0 && (work == NULL || need > work_size)) {
            ggml_x_error(err_ctx, "ggml_graph_compute: node %d '%s' (%s) needs %zu bytes of work memory, the plan has %zu%s",
                         i, node->name, ggml_op_desc(node), need, work_size,
                         work == NULL ? " (work_data is NULL)" : "");
            return -2;
        }
        const int nt = ggml_x_engine_n_tasks(op, node, n_threads);
        *max_nt = nt > *max_nt ? nt : *max_nt;
        last = i;
    }
    return last;
}

// ---------------------------------------------------------------------------------------------
// profile (GGML_X_PROFILE=1)
//
// Thread 0 times each computed node from the start of its kernel to the moment it may start the
// next node (after the graph barrier, when there is one), so the figure includes the wait for
// the slowest thread. Totals are kept per op (MUL_MAT split by the type of src0) and printed to
// stderr at exit. GGML_X_PROFILE=2 also prints the time of each node index (the first
// PROF_NODES nodes; meaningful when the same graph is computed each time). Off, the engine reads
// one flag per compute. A program that does not return through C's exit (a Go program) takes the
// report with ggml_x_profile_report (Go: ggml.ProfileReport) instead; once taken, nothing is
// printed at exit.

enum { PROF_SLOTS = GGML_OP_COUNT + GGML_TYPE_COUNT, PROF_NODES = 256 };

struct ggml_x_prof {
    double   ns[PROF_SLOTS];
    uint64_t count[PROF_SLOTS];
    uint64_t computes;
    double   run_ns;   // thread 0 from the threadpool run's start to its end (nodes, the gaps between them, the wake-up)
    double   node_ns[PROF_NODES];
    char     node_name[PROF_NODES][40];
    int      n_nodes;
};

static struct ggml_x_prof ggml_x_prof_acc;
static pthread_mutex_t ggml_x_prof_lock = PTHREAD_MUTEX_INITIALIZER;
static int ggml_x_prof_state; // 0: off, 1: per-op totals, 2: also per node (set once by ggml_x_prof_init)
static pthread_once_t ggml_x_prof_once = PTHREAD_ONCE_INIT;

// a bounded string builder for the report
struct prof_text {
    char * buf;
    size_t size, len; // len: what the whole report needs, even past size
};

static void prof_printf(struct prof_text * t, const char * fmt, ...) __attribute__((format(printf, 2, 3)));

static void prof_printf(struct prof_text * t, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    const size_t room = t->len < t->size ? t->size - t->len : 0;
    const int n = vsnprintf(room > 0 ? t->buf + t->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0) {
        t->len += (size_t) n;
    }
}

// formats the report of p (nothing when no graph was computed)
static void ggml_x_prof_format(const struct ggml_x_prof * p, struct prof_text * t) {
    if (p->computes == 0) {
        return;
    }
    double total = 0.0;
    for (int i = 0; i < PROF_SLOTS; i++) {
        total += p->ns[i];
    }
    prof_printf(t, "ggml profile: %llu computes, %.3f ms per compute in nodes, %.3f ms in the whole run\n",
                (unsigned long long) p->computes, total / 1e6 / (double) p->computes, p->run_ns / 1e6 / (double) p->computes);
    prof_printf(t, "  %-22s %8s %12s %10s %6s\n", "op", "nodes", "us/compute", "us/node", "%");
    for (int i = 0; i < PROF_SLOTS; i++) {
        if (p->count[i] == 0) {
            continue;
        }
        char name[48];
        if (i < GGML_OP_COUNT) {
            snprintf(name, sizeof(name), "%s", ggml_op_name((enum ggml_op) i));
        } else {
            snprintf(name, sizeof(name), "MUL_MAT %s", ggml_type_name((enum ggml_type) (i - GGML_OP_COUNT)));
        }
        prof_printf(t, "  %-22s %8.1f %12.1f %10.2f %6.1f\n", name,
                    (double) p->count[i] / (double) p->computes, p->ns[i] / 1e3 / (double) p->computes,
                    p->ns[i] / 1e3 / (double) p->count[i], 100.0 * p->ns[i] / total);
    }
    if (ggml_x_prof_state == 2) {
        for (int i = 0; i < p->n_nodes; i++) {
            if (p->node_ns[i] > 0.0) {
                prof_printf(t, "  node %3d %-38s %10.1f us\n", i, p->node_name[i],
                            p->node_ns[i] / 1e3 / (double) p->computes);
            }
        }
    }
}

// whether the report was taken (ggml_x_profile_report): then the exit handler prints nothing
static _Atomic bool ggml_x_prof_taken;

static void ggml_x_prof_print(void) {
    if (atomic_load(&ggml_x_prof_taken)) {
        return;
    }
    pthread_mutex_lock(&ggml_x_prof_lock);
    struct prof_text t = { NULL, 0, 0 };
    ggml_x_prof_format(&ggml_x_prof_acc, &t);
    if (t.len > 0) {
        t.buf = malloc(t.len + 1);
        if (t.buf != NULL) {
            t.size = t.len + 1;
            t.len = 0;
            ggml_x_prof_format(&ggml_x_prof_acc, &t);
            fputs(t.buf, stderr);
            free(t.buf);
        }
    }
    pthread_mutex_unlock(&ggml_x_prof_lock);
}

static void ggml_x_prof_init(void) {
    const char * e = getenv("GGML_X_PROFILE");
    ggml_x_prof_state = (e != NULL && e[0] != '\0' && e[0] != '0') ? (e[0] == '2' ? 2 : 1) : 0;
    if (ggml_x_prof_state) {
        atexit(ggml_x_prof_print);
    }
}

static bool ggml_x_prof_on(void) {
    pthread_once(&ggml_x_prof_once, ggml_x_prof_init); // after the first call, one load
    return ggml_x_prof_state > 0;
}

static inline int64_t ggml_x_prof_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int ggml_x_prof_slot(const struct ggml_tensor * node) {
    if (node->op == GGML_OP_MUL_MAT && node->src[0] != NULL) {
        return GGML_OP_COUNT + (int) node->src[0]->type;
    }
    return (int) node->op;
}

static inline void ggml_x_prof_add(struct ggml_x_prof * p, const struct ggml_tensor * node, int i, int64_t ns) {
    const int slot = ggml_x_prof_slot(node);
    p->ns[slot] += (double) ns;
    p->count[slot]++;
    if (i < PROF_NODES) {
        p->node_ns[i] += (double) ns;
    }
}

static void ggml_x_prof_merge(const struct ggml_x_prof * p, const struct ggml_cgraph * g) {
    pthread_mutex_lock(&ggml_x_prof_lock);
    for (int i = 0; i < PROF_SLOTS; i++) {
        ggml_x_prof_acc.ns[i] += p->ns[i];
        ggml_x_prof_acc.count[i] += p->count[i];
    }
    const int n = g->n_nodes < PROF_NODES ? g->n_nodes : PROF_NODES;
    for (int i = 0; i < n; i++) {
        ggml_x_prof_acc.node_ns[i] += p->node_ns[i];
        snprintf(ggml_x_prof_acc.node_name[i], sizeof(ggml_x_prof_acc.node_name[i]), "%.14s %.24s",
                 ggml_op_name(g->nodes[i]->op), g->nodes[i]->name);
    }
    ggml_x_prof_acc.n_nodes = n > ggml_x_prof_acc.n_nodes ? n : ggml_x_prof_acc.n_nodes;
    ggml_x_prof_acc.computes++;
    ggml_x_prof_acc.run_ns += p->run_ns;
    pthread_mutex_unlock(&ggml_x_prof_lock);
}

bool ggml_x_profile_enabled(void) {
    return ggml_x_prof_on();
}

size_t ggml_x_profile_report(char * buf, size_t size) {
    if (!ggml_x_prof_on()) {
        return 0;
    }
    pthread_mutex_lock(&ggml_x_prof_lock);
    struct prof_text t = { buf, buf != NULL ? size : 0, 0 };
    if (t.size > 0) {
        buf[0] = '\0';
    }
    ggml_x_prof_format(&ggml_x_prof_acc, &t);
    pthread_mutex_unlock(&ggml_x_prof_lock);
    atomic_store(&ggml_x_prof_taken, true);
    return t.len;
}

void ggml_x_profile_reset(void) {
    pthread_mutex_lock(&ggml_x_prof_lock);
    memset(&ggml_x_prof_acc, 0, sizeof(ggml_x_prof_acc));
    pthread_mutex_unlock(&ggml_x_prof_lock);
}

// ---------------------------------------------------------------------------------------------
// compute

struct ggml_x_compute {
    struct ggml_cpu_barrier node_barrier;  // the nt threads of one node (ggml_cpu_barrier)
    struct ggml_cpu_barrier graph_barrier; // all threads, between nodes

    struct ggml_cgraph * g;
    int last; // index of the last node to compute
    void * work;
    size_t work_size;
    bool (*abort_cb)(void * data);
    void * abort_data;
    // index of the node after which the compute stops (INT_MAX: none). Thread 0 may set it for
    // node i while a slower thread still leaves the barrier of node i - 1, so threads compare it
    // with their own position instead of reading a plain flag.
    _Atomic int stop_after;
    struct ggml_x_prof * prof; // thread 0's node times (NULL: not profiling)
};

static void ggml_x_compute_thread(void * arg, int ith, int nth) {
    struct ggml_x_compute * st = arg;
    struct ggml_tensor ** nodes = st->g->nodes;
    const int last = st->last;

    struct ggml_cpu_ctx cc = {
        .ith     = ith,
        .nth     = nth,
        .wsize   = st->work_size,
        .wdata   = st->work,
        .barrier = &st->node_barrier,
    };

    // last is a node to compute (not a no-op), so every node before it has a next one
    int i = 0;
    while (ggml_cpu_node_is_noop(nodes[i])) {
        i++;
    }
    const struct ggml_cpu_op * op = ggml_cpu_op_get(nodes[i]->op);
    int nt = ggml_x_engine_n_tasks(op, nodes[i], nth);
    bool stopped = false; // thread 0 only: the abort callback asked to stop
    struct ggml_x_prof * prof = ith == 0 ? st->prof : NULL;
    int64_t t_node = prof != NULL ? ggml_x_prof_now() : 0;
    for (;;) {
        if (ith < nt && !stopped) {
            cc.nth = nt;
            op->forward(&cc, nodes[i]);
        }
        if (i == last) {
            if (prof != NULL) {
                ggml_x_prof_add(prof, nodes[i], i, ggml_x_prof_now() - t_node);
            }
            break; // the pool waits for every thread anyway
        }
        int j = i + 1;
        while (ggml_cpu_node_is_noop(nodes[j])) {
            j++;
        }
        const struct ggml_cpu_op * op_j = ggml_cpu_op_get(nodes[j]->op);
        const int nt_j = ggml_x_engine_n_tasks(op_j, nodes[j], nth);
        if (ith == 0 && !stopped && st->abort_cb != NULL && st->abort_cb(st->abort_data)) {
            // thread 0 computes nothing more; everyone leaves after the next barrier (or at
            // the end, when there is none: the other threads compute nothing without one)
            atomic_store_explicit(&st->stop_after, i, memory_order_relaxed);
            stopped = true;
        }
        if (nth > 1 && (nt > 1 || nt_j > 1)) {
            ggml_x_barrier_wait(&st->graph_barrier, nth);
            if (atomic_load_explicit(&st->stop_after, memory_order_relaxed) <= i) {
                break;
            }
        } else if (stopped && nth == 1) {
            break;
        }
        if (prof != NULL) {
            const int64_t t = ggml_x_prof_now();
            ggml_x_prof_add(prof, nodes[i], i, t - t_node);
            t_node = t;
        }
        i = j;
        op = op_j;
        nt = nt_j;
    }
}

// err_ctx: whose recoverable mode applies to errors (NULL: the calling thread's)
static bool ggml_x_engine_compute(const struct ggml_context * err_ctx, struct ggml_x_threadpool * pool,
                                  struct ggml_cgraph * g, int n_threads, void * work, size_t work_size,
                                  bool (*abort_cb)(void *), void * abort_data) {
    if (g == NULL) {
        ggml_x_error(err_ctx, "ggml_graph_compute: cgraph is NULL");
        return false;
    }
    if (n_threads < 1) {
        ggml_x_error(err_ctx, "ggml_graph_compute: n_threads (%d) must be at least 1", n_threads);
        return false;
    }
    if (g->n_nodes > 0 && g->nodes == NULL) {
        ggml_x_error(err_ctx, "ggml_graph_compute: cgraph has %d nodes but no node array", g->n_nodes);
        return false;
    }
    int max_nt = 1;
    const int last = ggml_x_engine_check(err_ctx, g, n_threads, work, work_size, &max_nt);
    if (last == -2) {
        return false;
    }
    if (abort_cb != NULL && abort_cb(abort_data)) {
        return false;
    }
    if (last < 0) {
        return true;
    }

    struct ggml_x_compute st = {
        .g          = g,
        .last       = last,
        .work       = work,
        .work_size  = work_size,
        .abort_cb   = abort_cb,
        .abort_data = abort_data,
    };
    ggml_x_barrier_init(&st.node_barrier);
    ggml_x_barrier_init(&st.graph_barrier);
    atomic_init(&st.stop_after, INT_MAX);
    struct ggml_x_prof prof;
    if (ggml_x_prof_on()) {
        memset(&prof, 0, sizeof(prof));
        st.prof = &prof;
    }

    // a graph whose nodes all run on one thread runs on the caller alone (the kernels see
    // nth = 1 either way)
    const int64_t t_run = st.prof != NULL ? ggml_x_prof_now() : 0;
    ggml_x_threadpool_run(pool, max_nt > 1 ? n_threads : 1, ggml_x_compute_thread, &st);
    if (st.prof != NULL) {
        st.prof->run_ns = (double) (ggml_x_prof_now() - t_run);
    }

    ggml_x_barrier_destroy(&st.node_barrier);
    ggml_x_barrier_destroy(&st.graph_barrier);
    if (st.prof != NULL) {
        ggml_x_prof_merge(st.prof, g);
    }
    return atomic_load(&st.stop_after) == INT_MAX;
}

bool ggml_x_cpu_graph_compute(struct ggml_x_threadpool * pool, struct ggml_cgraph * g, int n_threads,
                              void * work, size_t work_size,
                              bool (*abort_cb)(void * data), void * abort_data) {
    return ggml_x_engine_compute(NULL, pool, g, n_threads, work, work_size, abort_cb, abort_data);
}

// ---------------------------------------------------------------------------------------------
// public API with the process-wide default pool

static pthread_mutex_t ggml_x_default_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ggml_x_threadpool * ggml_x_default_pool; // created on first use, lives until exit

static bool ggml_x_default_compute(const struct ggml_context * err_ctx, struct ggml_cgraph * g, int n_threads,
                                   void * work, size_t work_size, bool (*abort_cb)(void *), void * abort_data) {
    if (ggml_x_threadpool_in_run()) {
        // a kernel computing a nested graph: the default pool may be the one running it
        return ggml_x_engine_compute(err_ctx, NULL, g, n_threads, work, work_size, abort_cb, abort_data);
    }
    pthread_mutex_lock(&ggml_x_default_pool_lock);
    if (ggml_x_default_pool == NULL && n_threads > 1) {
        ggml_x_default_pool = ggml_x_threadpool_new(1); // grows on demand in run
    }
    const bool ok = ggml_x_engine_compute(err_ctx, ggml_x_default_pool, g, n_threads, work, work_size,
                                          abort_cb, abort_data);
    pthread_mutex_unlock(&ggml_x_default_pool_lock);
    return ok;
}

struct ggml_cplan ggml_graph_plan(const struct ggml_cgraph * cgraph, int n_threads) {
    struct ggml_cplan plan;
    memset(&plan, 0, sizeof(plan));
    if (n_threads <= 0) {
        n_threads = GGML_DEFAULT_N_THREADS;
    }
    plan.n_threads = n_threads;
    if (cgraph == NULL) {
        ggml_x_error(NULL, "ggml_graph_plan: cgraph is NULL");
        return plan;
    }
    plan.work_size = ggml_x_cpu_graph_work_size(cgraph, n_threads);
    return plan;
}

int ggml_graph_compute(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan) {
    if (cplan == NULL) {
        ggml_x_error(NULL, "ggml_graph_compute: cplan is NULL");
        return GGML_EXIT_ABORTED;
    }
    if (cplan->work_size > 0 && cplan->work_data == NULL) {
        ggml_x_error(NULL, "ggml_graph_compute: cplan->work_size is %zu but cplan->work_data is NULL",
                     cplan->work_size);
        return GGML_EXIT_ABORTED;
    }
    const bool ok = ggml_x_default_compute(NULL, cgraph, cplan->n_threads, cplan->work_data, cplan->work_size,
                                           cplan->abort_callback, cplan->abort_callback_data);
    return ok ? GGML_EXIT_SUCCESS : GGML_EXIT_ABORTED;
}

void ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * cgraph, int n_threads) {
    if (ctx == NULL) {
        ggml_x_error(NULL, "ggml_graph_compute_with_ctx: ctx is NULL");
        return;
    }
    if (cgraph == NULL) {
        ggml_x_error(ctx, "ggml_graph_compute_with_ctx: cgraph is NULL");
        return;
    }
    if (n_threads <= 0) {
        n_threads = GGML_DEFAULT_N_THREADS;
    }
    const size_t work_size = ggml_x_cpu_graph_work_size(cgraph, n_threads);
    void * work = NULL;
    if (work_size > 0) {
        // the work memory is an object of ctx's arena, also when ctx holds metadata only
        work = ggml_x_ctx_alloc(ctx, GGML_OBJECT_WORK_BUFFER, work_size);
        if (work == NULL) {
            return; // reported by ggml_x_ctx_alloc
        }
    }
    ggml_x_default_compute(ctx, cgraph, n_threads, work, work_size, NULL, NULL);
}
