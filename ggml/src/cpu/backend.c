// cpu/backend.c - the CPU backend: computes graphs with the engine (cpu/engine.c) on its own
// thread pool, with scratch memory kept across computes; plans; the registry's init function
// ("threads=N").

#include "ggml-backend-impl.h"
#include "ggml-backend-internal.h"
#include "ggml-impl.h"
#include "cpu/engine.h"
#include "cpu/ops.h"
#include "cpu/threadpool.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GGML_X_CPU_WORK_ALIGNMENT 64 // as the CPU buffer type: wide enough for AVX-512 loads


struct cpu_backend_ctx {
    int    n_threads;
    struct ggml_x_threadpool * pool; // created on the first compute
    void * work_data;                // scratch reused across computes
    size_t work_size;
    bool (*abort_cb)(void * data);   // ggml_x_backend_cpu_set_abort_callback
    void * abort_data;
};

// a plan keeps its own copy of the graph header and its own scratch
struct cpu_backend_plan {
    struct ggml_cgraph graph;
    int    n_threads;
    void * work_data;
    size_t work_size;
};

GGML_CALL static const char * cpu_backend_get_name(ggml_backend_t backend) {
    GGML_UNUSED(backend);
    return "CPU";
}

GGML_CALL static void cpu_backend_free(ggml_backend_t backend) {
    struct cpu_backend_ctx * ctx = backend->context;
    ggml_x_threadpool_free(ctx->pool);
    free(ctx->work_data);
    free(ctx);
    free(backend);
}

GGML_CALL static ggml_backend_buffer_type_t cpu_backend_get_default_buffer_type(ggml_backend_t backend) {
    GGML_UNUSED(backend);
    return ggml_backend_cpu_buffer_type();
}

static bool cpu_backend_ensure_pool(struct cpu_backend_ctx * ctx) {
    if (ctx->pool == NULL) {
        ctx->pool = ggml_x_threadpool_new(ctx->n_threads);
        if (ctx->pool == NULL) {
            ggml_x_backend_soft_error("ggml_backend_cpu: failed to create a thread pool of %d threads", ctx->n_threads);
            return false;
        }
    }
    return true;
}

// grow (*data, *size) to at least need bytes
// Work memory grows by at least half its size each time (a decode loop's attention needs a
// little more with every few tokens: an allocation of exactly what is needed would be replaced
// that often, and the fresh pages' first touches, 20-35 us each in a VM, land in the next
// node that uses the memory).
static bool cpu_backend_reserve(void ** data, size_t * size, size_t need) {
    if (need <= *size) {
        return true;
    }
    const size_t grown = *size + *size / 2;
    const size_t want = need > grown ? need : grown;
    void * p = NULL;
    if (posix_memalign(&p, GGML_X_CPU_WORK_ALIGNMENT, GGML_PAD(want, GGML_X_CPU_WORK_ALIGNMENT)) != 0 || p == NULL) {
        ggml_x_backend_soft_error("ggml_backend_cpu: failed to allocate %zu bytes of work memory", want);
        return false;
    }
    free(*data);
    *data = p;
    *size = want;
    return true;
}

GGML_CALL static ggml_backend_graph_plan_t cpu_backend_graph_plan_create(ggml_backend_t backend, const struct ggml_cgraph * cgraph) {
    struct cpu_backend_ctx * ctx = backend->context;
    struct cpu_backend_plan * plan = calloc(1, sizeof(*plan));
    if (plan == NULL) {
        ggml_x_backend_soft_error("ggml_backend_cpu_graph_plan_create: out of memory");
        return NULL;
    }
    plan->graph     = *cgraph;
    plan->n_threads = ctx->n_threads;
    size_t need = ggml_x_cpu_graph_work_size(cgraph, plan->n_threads);
    if (need > 0 && !cpu_backend_reserve(&plan->work_data, &plan->work_size, need)) {
        free(plan);
        return NULL;
    }
    return plan;
}

GGML_CALL static void cpu_backend_graph_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    GGML_UNUSED(backend);
    struct cpu_backend_plan * p = plan;
    free(p->work_data);
    free(p);
}

GGML_CALL static void cpu_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    struct cpu_backend_ctx * ctx = backend->context;
    struct cpu_backend_plan * p = plan;
    // the engine validates the graph (kernels, allocation, scratch) before computing
    if (!cpu_backend_ensure_pool(ctx)) {
        return;
    }
    ggml_x_cpu_graph_compute(ctx->pool, &p->graph, p->n_threads, p->work_data, p->work_size, NULL, NULL);
}

GGML_CALL static bool cpu_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    struct cpu_backend_ctx * ctx = backend->context;
    // the engine validates the graph (kernels, allocation, scratch) before computing
    if (!cpu_backend_ensure_pool(ctx)) {
        return false;
    }
    size_t need = ggml_x_cpu_graph_work_size(cgraph, ctx->n_threads);
    if (!cpu_backend_reserve(&ctx->work_data, &ctx->work_size, need)) {
        return false;
    }
    return ggml_x_cpu_graph_compute(ctx->pool, cgraph, ctx->n_threads, ctx->work_data, ctx->work_size,
                                    ctx->abort_cb, ctx->abort_data);
}

GGML_CALL static bool cpu_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor * op) {
    GGML_UNUSED(backend);
    return ggml_cpu_supports_node(op);
}

static const struct ggml_backend_i cpu_backend_iface = {
    /* .get_name                = */ cpu_backend_get_name,
    /* .free                    = */ cpu_backend_free,
    /* .get_default_buffer_type = */ cpu_backend_get_default_buffer_type,
    /* .set_tensor_async        = */ NULL,
    /* .get_tensor_async        = */ NULL,
    /* .cpy_tensor_async        = */ NULL,
    /* .synchronize             = */ NULL,
    /* .graph_plan_create       = */ cpu_backend_graph_plan_create,
    /* .graph_plan_free         = */ cpu_backend_graph_plan_free,
    /* .graph_plan_compute      = */ cpu_backend_graph_plan_compute,
    /* .graph_compute           = */ cpu_backend_graph_compute,
    /* .supports_op             = */ cpu_backend_supports_op,
};

ggml_backend_t ggml_backend_cpu_init(void) {
    struct cpu_backend_ctx * ctx = calloc(1, sizeof(*ctx));
    ggml_backend_t backend = calloc(1, sizeof(*backend));
    if (ctx == NULL || backend == NULL) {
        free(ctx);
        free(backend);
        ggml_x_backend_soft_error("ggml_backend_cpu_init: out of memory");
        return NULL;
    }
    ctx->n_threads = GGML_DEFAULT_N_THREADS;
    backend->iface   = cpu_backend_iface;
    backend->context = ctx;
    return backend;
}

GGML_CALL bool ggml_backend_is_cpu(ggml_backend_t backend) {
    return backend != NULL && backend->iface.get_name == cpu_backend_get_name;
}

void ggml_x_backend_cpu_set_abort_callback(ggml_backend_t backend_cpu, bool (*abort_cb)(void * data), void * data) {
    GGML_X_CHECK_VOID(NULL, ggml_backend_is_cpu(backend_cpu), "ggml_x_backend_cpu_set_abort_callback: not a CPU backend (%s)",
                      backend_cpu != NULL ? ggml_backend_name(backend_cpu) : "NULL");
    struct cpu_backend_ctx * ctx = backend_cpu->context;
    ctx->abort_cb   = abort_cb;
    ctx->abort_data = data;
}

void ggml_backend_cpu_set_n_threads(ggml_backend_t backend_cpu, int n_threads) {
    GGML_X_CHECK_VOID(NULL, ggml_backend_is_cpu(backend_cpu), "ggml_backend_cpu_set_n_threads: not a CPU backend (%s)",
                      ggml_backend_name(backend_cpu));
    GGML_X_CHECK_VOID(NULL, n_threads >= 1, "ggml_backend_cpu_set_n_threads: n_threads must be >= 1 (got %d)", n_threads);
    struct cpu_backend_ctx * ctx = backend_cpu->context;
    ctx->n_threads = n_threads;
    if (ctx->pool != NULL) {
        ggml_x_threadpool_resize(ctx->pool, n_threads);
    }
}

// registry entry: params is a comma-separated list of key=value; "threads=N" is understood
GGML_CALL ggml_backend_t ggml_x_backend_reg_cpu_init(const char * params, void * user_data) {
    GGML_UNUSED(user_data);
    int n_threads = 0;
    const char * p = params != NULL ? params : "";
    while (*p != '\0') {
        size_t len = strcspn(p, ",");
        if (len > 0) {
            if (len > 8 && strncmp(p, "threads=", 8) == 0) {
                char num[32];
                size_t nlen = len - 8;
                if (nlen >= sizeof(num)) {
                    nlen = sizeof(num) - 1;
                }
                memcpy(num, p + 8, nlen);
                num[nlen] = '\0';
                char * end = NULL;
                errno = 0;
                long v = strtol(num, &end, 10);
                if (errno != 0 || end == num || *end != '\0' || v < 1 || v > INT_MAX) {
                    ggml_x_backend_soft_error("ggml_backend_reg_cpu_init: invalid thread count '%s'", num);
                    return NULL;
                }
                n_threads = (int) v;
            } else {
                ggml_x_backend_soft_error("ggml_backend_reg_cpu_init: unknown parameter '%.*s'", (int) len, p);
                return NULL;
            }
        }
        p += len;
        if (*p == ',') {
            p++;
        }
    }

    ggml_backend_t backend = ggml_backend_cpu_init();
    if (backend != NULL && n_threads > 0) {
        ggml_backend_cpu_set_n_threads(backend, n_threads);
    }
    return backend;
}
