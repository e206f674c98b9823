// ggml-backend.h - buffer types, buffers, backends, the backend registry, the multi-backend
// scheduler and graph copy/compare. API-compatible with ggml b3bcd556.

#ifndef GGML_BACKEND_H
#define GGML_BACKEND_H

#include "ggml.h"
#include "ggml-alloc.h"

#ifdef  __cplusplus
extern "C" {
#endif

    typedef struct ggml_backend_buffer_type * ggml_backend_buffer_type_t;
    typedef struct ggml_backend_buffer * ggml_backend_buffer_t;
    typedef struct ggml_backend * ggml_backend_t;
    typedef void * ggml_backend_graph_plan_t;

    //
    // backend buffer type
    //

    GGML_API           const char *          ggml_backend_buft_name          (ggml_backend_buffer_type_t buft);
    GGML_API GGML_CALL ggml_backend_buffer_t ggml_backend_buft_alloc_buffer  (ggml_backend_buffer_type_t buft, size_t size);
    GGML_API           size_t                ggml_backend_buft_get_alignment (ggml_backend_buffer_type_t buft);
    GGML_API GGML_CALL size_t                ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t buft, struct ggml_tensor * tensor);
    GGML_API           bool                  ggml_backend_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend);
    GGML_API           bool                  ggml_backend_buft_is_host       (ggml_backend_buffer_type_t buft);

    //
    // backend buffer
    //

    enum ggml_backend_buffer_usage {
        GGML_BACKEND_BUFFER_USAGE_ANY = 0,
        GGML_BACKEND_BUFFER_USAGE_WEIGHTS = 1,
    };

    GGML_API           const char *               ggml_backend_buffer_name          (ggml_backend_buffer_t buffer);
    GGML_API           void                       ggml_backend_buffer_free          (ggml_backend_buffer_t buffer);
    GGML_API           void *                     ggml_backend_buffer_get_base      (ggml_backend_buffer_t buffer);
    GGML_API           size_t                     ggml_backend_buffer_get_size      (ggml_backend_buffer_t buffer);
    GGML_API GGML_CALL void                       ggml_backend_buffer_init_tensor   (ggml_backend_buffer_t buffer, struct ggml_tensor * tensor);
    GGML_API           size_t                     ggml_backend_buffer_get_alignment (ggml_backend_buffer_t buffer);
    GGML_API           size_t                     ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor);
    GGML_API           void                       ggml_backend_buffer_clear         (ggml_backend_buffer_t buffer, uint8_t value);
    GGML_API           bool                       ggml_backend_buffer_is_host       (ggml_backend_buffer_t buffer);
    GGML_API           void                       ggml_backend_buffer_set_usage     (ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage);
    GGML_API           ggml_backend_buffer_type_t ggml_backend_buffer_get_type      (ggml_backend_buffer_t buffer);
    GGML_API           void                       ggml_backend_buffer_reset         (ggml_backend_buffer_t buffer);

    //
    // backend
    //

    GGML_API const char * ggml_backend_name(ggml_backend_t backend);
    GGML_API void         ggml_backend_free(ggml_backend_t backend);

    GGML_API ggml_backend_buffer_type_t ggml_backend_get_default_buffer_type(ggml_backend_t backend);
    GGML_API ggml_backend_buffer_t      ggml_backend_alloc_buffer(ggml_backend_t backend, size_t size);
    GGML_API size_t                     ggml_backend_get_alignment(ggml_backend_t backend);

    GGML_API void ggml_backend_tensor_set_async(ggml_backend_t backend,       struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
    GGML_API void ggml_backend_tensor_get_async(ggml_backend_t backend, const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size);

    GGML_API GGML_CALL void ggml_backend_tensor_set(      struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
    GGML_API GGML_CALL void ggml_backend_tensor_get(const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size);

    GGML_API void ggml_backend_synchronize(ggml_backend_t backend);

    GGML_API ggml_backend_graph_plan_t ggml_backend_graph_plan_create (ggml_backend_t backend, struct ggml_cgraph * cgraph);

    GGML_API void ggml_backend_graph_plan_free   (ggml_backend_t backend, ggml_backend_graph_plan_t plan);
    GGML_API void ggml_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan);
    GGML_API bool ggml_backend_graph_compute     (ggml_backend_t backend, struct ggml_cgraph * cgraph);
    GGML_API bool ggml_backend_supports_op       (ggml_backend_t backend, const struct ggml_tensor * op);

    // tensor copy between different backends
    GGML_API void ggml_backend_tensor_copy(struct ggml_tensor * src, struct ggml_tensor * dst);
    GGML_API void ggml_backend_tensor_copy_async(ggml_backend_t backend, struct ggml_tensor * src, struct ggml_tensor * dst); // automatic fallback to sync copy

    //
    // CPU backend
    //

    GGML_API ggml_backend_t ggml_backend_cpu_init(void);

    GGML_API GGML_CALL bool ggml_backend_is_cpu                (ggml_backend_t backend);
    GGML_API           void ggml_backend_cpu_set_n_threads     (ggml_backend_t backend_cpu, int n_threads);

    // Create a backend buffer from an existing pointer
    GGML_API GGML_CALL ggml_backend_buffer_t ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size);

    GGML_API GGML_CALL ggml_backend_buffer_type_t ggml_backend_cpu_buffer_type(void);

    // (not in the reference) CPU buffers whose Q4_0/Q8_0/Q4_K/Q6_K 2-D weight matrices are stored
    // repacked (interleaved by groups of 8 rows) for the CPU backend's MUL_MAT kernels. Not host
    // memory: get/set_tensor convert, any offset and size. Only MUL_MAT (as src0, F32 src1) may read
    // a repacked tensor; other ops or views reading one fail the graph compute with an error.
    // Registered in the backend registry as "CPU_REPACK".
    GGML_API GGML_CALL ggml_backend_buffer_type_t ggml_x_backend_cpu_repack_buffer_type(void);

    // (not in the reference) whether that buffer type repacks weights of this type and the running
    // CPU has SIMD kernels for them; false where only the portable scalar kernels would multiply
    // them (correct, but slower than the plain layout's dot products)
    GGML_API bool ggml_x_backend_cpu_repack_has_kernel(enum ggml_type type);

#ifdef GGML_USE_CPU_HBM
    GGML_API ggml_backend_buffer_type_t ggml_backend_cpu_hbm_buffer_type(void);
#endif

    //
    // Backend registry
    //

    // The backend registry is a registry of all the available backends, and allows initializing backends in a generic way
    //
    // "CPU" is registered on first use of the registry. Backend strings are "name" or
    // "name:params"; params is backend-specific. The CPU backend accepts a comma-separated list
    // of key=value pairs with one key, "threads=N" (N >= 1, the thread-pool size; default
    // GGML_DEFAULT_N_THREADS), e.g. "CPU" or "CPU:threads=2"; an unknown key or a bad value makes
    // the init return NULL (with ggml_x_last_error set in recoverable mode). At most 16 backends
    // can be registered (ggml_backend_register, ggml-backend-impl.h).

    GGML_API size_t                     ggml_backend_reg_get_count(void);
    GGML_API size_t                     ggml_backend_reg_find_by_name(const char * name);
    GGML_API ggml_backend_t             ggml_backend_reg_init_backend_from_str(const char * backend_str); // str is name[:params]
    GGML_API const char *               ggml_backend_reg_get_name(size_t i);
    GGML_API ggml_backend_t             ggml_backend_reg_init_backend(size_t i, const char * params); // params is backend-specific
    GGML_API ggml_backend_buffer_type_t ggml_backend_reg_get_default_buffer_type(size_t i);
    GGML_API ggml_backend_buffer_t      ggml_backend_reg_alloc_buffer(size_t i, size_t size);

    //
    // Backend scheduler
    //

    // The scheduler splits a graph between several backends: each node runs on one backend, and
    // inputs that live elsewhere are copied at the start of each split. Weights placed in a
    // buffer with usage GGML_BACKEND_BUFFER_USAGE_WEIGHTS pin the nodes that use them.
    //
    // Limits: 16 backends, 256 splits per graph, 16 inputs from other backends per split, and
    // graphs of up to graph_size nodes (and as many leafs). Exceeding one is reported through
    // ggml_x_error (abort by default, a failed compute in recoverable mode).
    //
    // Behaviour beyond the reference (ggml-go):
    //   * a node is never assigned to a backend whose supports_op rejects it; it goes to the
    //     next backend in priority order that supports it (weights it uses are then copied);
    //   * the graph is left as the caller built it: node sources redirected to input copies are
    //     restored after the compute, and the same graph can be computed again (after a reset
    //     the scheduler places its intermediate tensors anew);
    //   * computing before ggml_backend_sched_init_measure measures the graph first (tensors
    //     placed in the measure allocators and node assignments do not survive measuring).
    //   A scheduler is used by one thread at a time.

    struct ggml_backend_sched;
    typedef struct ggml_backend_sched * ggml_backend_sched_t;

    // Initialize a backend scheduler (backends in order of priority, bufts may be NULL for the
    // backends' default buffer types)
    GGML_API ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts, int n_backends, size_t graph_size);
    GGML_API void                 ggml_backend_sched_free(ggml_backend_sched_t sched);

    // Initialize backend buffers from a measure graph
    GGML_API void                 ggml_backend_sched_init_measure(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph);
    // Get the number of splits of the last graph
    GGML_API int                  ggml_backend_sched_get_n_splits(ggml_backend_sched_t sched);

    GGML_API ggml_tallocr_t       ggml_backend_sched_get_tallocr(ggml_backend_sched_t sched, ggml_backend_t backend);
    GGML_API ggml_backend_buffer_t ggml_backend_sched_get_buffer (ggml_backend_sched_t sched, ggml_backend_t backend);

    GGML_API void                 ggml_backend_sched_set_node_backend(ggml_backend_sched_t sched, struct ggml_tensor * node, ggml_backend_t backend);
    GGML_API ggml_backend_t       ggml_backend_sched_get_node_backend(ggml_backend_sched_t sched, struct ggml_tensor * node);

    // Allocate and compute graph on the backend scheduler
    GGML_API void                 ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * graph);

    // Reset all assignments and allocators - must be called before using the sched allocators to allocate inputs
    GGML_API void                 ggml_backend_sched_reset(ggml_backend_sched_t sched);

    //
    // Utils
    //

    struct ggml_backend_graph_copy {
        ggml_backend_buffer_t buffer;
        struct ggml_context * ctx_allocated;
        struct ggml_context * ctx_unallocated;
        struct ggml_cgraph * graph;
    };

    // Copy a graph to a different backend
    GGML_API struct ggml_backend_graph_copy ggml_backend_graph_copy(ggml_backend_t backend, struct ggml_cgraph * graph);
    GGML_API void                           ggml_backend_graph_copy_free(struct ggml_backend_graph_copy copy);

    typedef bool (*GGML_CALL ggml_backend_eval_callback)(int node_index, struct ggml_tensor * t1, struct ggml_tensor * t2, void * user_data);

    // Compare the output of two backends: the graph (allocated, backend1's) is copied to backend2,
    // then every node is computed on both, one node at a time, and the callback is called for
    // every node that is not a view (VIEW, RESHAPE, PERMUTE, TRANSPOSE); computing stops when it
    // returns false. Returns false when the copy or a compute failed.
    GGML_API bool ggml_backend_compare_graph_backend(ggml_backend_t backend1, ggml_backend_t backend2, struct ggml_cgraph * graph, ggml_backend_eval_callback callback, void * user_data);

    // Tensor initialization
    GGML_API void ggml_backend_tensor_alloc(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, void * addr);
    GGML_API void ggml_backend_view_init(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor);

    //
    // ggml-go extensions
    //

    // Like ggml_backend_sched_graph_compute, but reports failure (a backend's graph_compute
    // returned false, or the graph exceeded the scheduler's limits) instead of ignoring it.
    GGML_API bool ggml_x_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * graph);

    // Returns the scheduler to its state before the first measure: its buffers are freed (tensors
    // placed in them lose their memory) and the next ggml_backend_sched_init_measure, or graph
    // compute, sizes them anew. For when the graph or the node assignments change so that the
    // measured sizes may no longer suffice. Does nothing on a scheduler that was not measured.
    GGML_API void ggml_x_backend_sched_reset_measure(ggml_backend_sched_t sched);

    // abort_cb (NULL: none) is called with data before each split of a graph compute; returning
    // true stops the compute, which then fails (returns false, with an error message).
    GGML_API void ggml_x_backend_sched_set_abort_callback(ggml_backend_sched_t sched, bool (*abort_cb)(void * data), void * data);

    // abort_cb (NULL: none) is called with data between the nodes of the CPU backend's graph
    // computes (as ggml_cplan's abort_callback); returning true stops the compute, which fails.
    GGML_API void ggml_x_backend_cpu_set_abort_callback(ggml_backend_t backend_cpu, bool (*abort_cb)(void * data), void * data);

    // The CPU engine's profile (environment GGML_X_PROFILE=1, or 2 to add the time of each node
    // index): time per op type (MUL_MAT split by weight type) over the graph computes so far.
    // It is printed to stderr at exit, unless the program took it with ggml_x_profile_report
    // (programs that do not exit through C's exit, such as Go programs, must take it).
    // ggml_x_profile_report writes the report into buf (at most size bytes, NUL-terminated) and
    // returns the length of the whole report (excluding the NUL): 0 when profiling is off or
    // nothing was computed. ggml_x_profile_reset starts the totals again.
    GGML_API bool   ggml_x_profile_enabled(void);
    GGML_API size_t ggml_x_profile_report(char * buf, size_t size);
    GGML_API void   ggml_x_profile_reset(void);

    // Whether the scheduler's buffers are allocated (ggml_backend_sched_init_measure, or the
    // first graph compute, succeeded).
    GGML_API bool ggml_x_backend_sched_is_measured(ggml_backend_sched_t sched);

    // The backend the last split of a graph (by a graph compute or by
    // ggml_backend_sched_init_measure) chose for node, or NULL when that split did not see node.
    // Unlike ggml_backend_sched_get_node_backend, the choice survives ggml_backend_sched_reset
    // and the end of the measure; it is forgotten by the next split.
    GGML_API ggml_backend_t ggml_x_backend_sched_get_split_backend(ggml_backend_sched_t sched, struct ggml_tensor * node);

#ifdef  __cplusplus
}
#endif

#endif // GGML_BACKEND_H
