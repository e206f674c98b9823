// engine.h - CPU graph execution on a thread pool (internal; used by the CPU backend).
//
// The public ggml_graph_plan / ggml_graph_compute / ggml_graph_compute_with_ctx (ggml.h) are
// implemented on top of these, with a process-wide default pool.

#ifndef GGML_X_ENGINE_H
#define GGML_X_ENGINE_H

#include "../ggml-impl.h"
#include "ops.h"
#include "threadpool.h"

#ifdef __cplusplus
extern "C" {
#endif

// Scratch bytes that computing g with n_threads threads needs (0 when none): the largest
// op->work_size of its nodes plus a cache line per extra thread. n_threads < 1 counts as 1.
size_t ggml_x_cpu_graph_work_size(const struct ggml_cgraph * g, int n_threads);

// Computes the nodes of g in order on n_threads threads of pool (pool may be NULL: single
// thread). work/work_size: scratch of at least ggml_x_cpu_graph_work_size(g, n_threads) bytes
// (work may be NULL when that is 0). abort_cb (may be NULL) is polled by thread 0 before the first
// node and between nodes; when it returns true the compute stops.
//
// Before any node runs, the graph is checked: every non-view node needs a kernel whose
// `supports` accepts it, allocated data (its own and its sources'), and scratch that fits.
// A failing check is reported with ggml_x_error(NULL, ...) (the calling thread's mode: abort, or
// record and return) and nothing is computed.
//
// Returns true when every node was computed; false on a failed check or an abort. Calls on the
// same pool are serialised; called from inside a kernel it computes inline on one thread.
bool ggml_x_cpu_graph_compute(struct ggml_x_threadpool * pool, struct ggml_cgraph * g, int n_threads,
                              void * work, size_t work_size,
                              bool (*abort_cb)(void * data), void * abort_data);

#ifdef __cplusplus
}
#endif

#endif // GGML_X_ENGINE_H
