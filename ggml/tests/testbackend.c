// testbackend.c - the "Test" backend: CPU compute over memory that is not host-addressable.
// See testbackend.h.

#include "testbackend.h"

#include "ggml-backend-impl.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TB_ALIGNMENT 32
#define TB_PADDING   32

// ---------------------------------------------------------------------------------------------
// counters

static struct testbackend_stats tb_stats;

#define TB_COUNT(field, n) __atomic_fetch_add(&tb_stats.field, (int64_t) (n), __ATOMIC_RELAXED)

void testbackend_get_stats(struct testbackend_stats * stats) {
    int64_t * dst = (int64_t *) stats;
    int64_t * src = (int64_t *) &tb_stats;
    for (size_t i = 0; i < sizeof(tb_stats) / sizeof(int64_t); i++) {
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
    }
}

void testbackend_reset_stats(void) {
    int64_t n_buffers = __atomic_load_n(&tb_stats.n_buffers, __ATOMIC_RELAXED);
    int64_t * p = (int64_t *) &tb_stats;
    for (size_t i = 0; i < sizeof(tb_stats) / sizeof(int64_t); i++) {
        __atomic_store_n(&p[i], 0, __ATOMIC_RELAXED);
    }
    __atomic_store_n(&tb_stats.n_buffers, n_buffers, __ATOMIC_RELAXED);
}

static _Noreturn void tb_fatal(const char * msg, const char * name) {
    fprintf(stderr, "testbackend: %s (tensor '%s')\n", msg, name != NULL ? name : "?");
    abort();
}

// ---------------------------------------------------------------------------------------------
// buffers: `base` is a reserved PROT_NONE range that tensor addresses point into; the bytes are
// in `store`

struct tb_buffer {
    char * base;     // fake addresses, never dereferenced
    size_t reserved; // length of the reservation
    char * store;    // the real bytes
    size_t size;
};

static bool tb_is_test_buffer(ggml_backend_buffer_t buffer);

static ggml_backend_buffer_t tb_tensor_buffer(const struct ggml_tensor * t) {
    if (t->buffer != NULL) {
        return t->buffer;
    }
    return t->view_src != NULL ? t->view_src->buffer : NULL;
}

// host address of bytes [off, off + size) of the tensor t in the Test buffer `buffer`
static char * tb_translate(ggml_backend_buffer_t buffer, const struct ggml_tensor * t, size_t off, size_t size) {
    struct tb_buffer * b = buffer->context;
    const char * addr = (const char *) t->data;
    if (addr == NULL || addr < b->base || (size_t) (addr - b->base) > b->size) {
        tb_fatal("tensor address outside its Test buffer", t->name);
    }
    size_t pos = (size_t) (addr - b->base);
    if (off > b->size - pos || size > b->size - pos - off) {
        tb_fatal("access past the end of a Test buffer", t->name);
    }
    return b->store + pos + off;
}

GGML_CALL static const char * tb_buffer_get_name(ggml_backend_buffer_t buffer) {
    (void) buffer;
    return "Test";
}

GGML_CALL static void tb_buffer_free(ggml_backend_buffer_t buffer) {
    struct tb_buffer * b = buffer->context;
    munmap(b->base, b->reserved);
    free(b->store);
    free(b);
    TB_COUNT(n_buffers, -1);
}

GGML_CALL static void * tb_buffer_get_base(ggml_backend_buffer_t buffer) {
    struct tb_buffer * b = buffer->context;
    return b->base;
}

GGML_CALL static void tb_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor,
                                           const void * data, size_t offset, size_t size) {
    memcpy(tb_translate(buffer, tensor, offset, size), data, size);
    TB_COUNT(n_set, 1);
}

GGML_CALL static void tb_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor,
                                           void * data, size_t offset, size_t size) {
    memcpy(data, tb_translate(buffer, tensor, offset, size), size);
    TB_COUNT(n_get, 1);
}

GGML_CALL static bool tb_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src,
                                           struct ggml_tensor * dst) {
    ggml_backend_buffer_t src_buf = tb_tensor_buffer(src);
    if (src_buf == NULL || !tb_is_test_buffer(src_buf)) {
        return false;
    }
    size_t n = ggml_nbytes(src);
    memmove(tb_translate(buffer, dst, 0, n), tb_translate(src_buf, src, 0, n), n);
    TB_COUNT(n_cpy, 1);
    return true;
}

GGML_CALL static void tb_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    struct tb_buffer * b = buffer->context;
    memset(b->store, value, b->size);
}

GGML_CALL static void tb_buffer_reset(ggml_backend_buffer_t buffer) {
    (void) buffer;
    TB_COUNT(n_buffer_resets, 1);
}

static const struct ggml_backend_buffer_i tb_buffer_iface = {
    /* .get_name    = */ tb_buffer_get_name,
    /* .free_buffer = */ tb_buffer_free,
    /* .get_base    = */ tb_buffer_get_base,
    /* .init_tensor = */ NULL,
    /* .set_tensor  = */ tb_buffer_set_tensor,
    /* .get_tensor  = */ tb_buffer_get_tensor,
    /* .cpy_tensor  = */ tb_buffer_cpy_tensor,
    /* .clear       = */ tb_buffer_clear,
    /* .reset       = */ tb_buffer_reset,
};

static bool tb_is_test_buffer(ggml_backend_buffer_t buffer) {
    return buffer != NULL && buffer->iface.get_base == tb_buffer_get_base;
}

// ---------------------------------------------------------------------------------------------
// buffer type

GGML_CALL static const char * tb_buft_get_name(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return "Test";
}

GGML_CALL static ggml_backend_buffer_t tb_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    struct tb_buffer * b = calloc(1, sizeof(*b));
    if (b == NULL) {
        return NULL;
    }
    size_t page = (size_t) sysconf(_SC_PAGESIZE);
    b->size     = size;
    b->reserved = ((size + page - 1) / page) * page;
    if (b->reserved == 0) {
        b->reserved = page;
    }
    void * base = mmap(NULL, b->reserved, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    b->store = malloc(size > 0 ? size : 1);
    if (base == MAP_FAILED || b->store == NULL) {
        if (base != MAP_FAILED) {
            munmap(base, b->reserved);
        }
        free(b->store);
        free(b);
        return NULL;
    }
    b->base = base;
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, tb_buffer_iface, b, size);
    if (buffer == NULL) {
        munmap(b->base, b->reserved);
        free(b->store);
        free(b);
        return NULL;
    }
    TB_COUNT(n_buffers, 1);
    return buffer;
}

GGML_CALL static size_t tb_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return TB_ALIGNMENT;
}

GGML_CALL static size_t tb_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor) {
    (void) buft;
    return ggml_nbytes(tensor) + TB_PADDING;
}

GGML_CALL static bool tb_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    (void) buft;
    return testbackend_is(backend);
}

GGML_CALL static bool tb_buft_is_host(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return false;
}

ggml_backend_buffer_type_t testbackend_buffer_type(void) {
    static struct ggml_backend_buffer_type buft = {
        /* .iface = */ {
            /* .get_name         = */ tb_buft_get_name,
            /* .alloc_buffer     = */ tb_buft_alloc_buffer,
            /* .get_alignment    = */ tb_buft_get_alignment,
            /* .get_alloc_size   = */ tb_buft_get_alloc_size,
            /* .supports_backend = */ tb_buft_supports_backend,
            /* .is_host          = */ tb_buft_is_host,
        },
        /* .context = */ NULL,
    };
    return &buft;
}

// ---------------------------------------------------------------------------------------------
// backend

struct tb_backend {
    ggml_backend_t cpu;
    bool rejected[GGML_OP_COUNT];
    char * scratch;
    size_t scratch_size;
};

static bool tb_is_noop(enum ggml_op op) {
    return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE ||
           op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

GGML_CALL static const char * tb_get_name(ggml_backend_t backend) {
    (void) backend;
    return "Test";
}

GGML_CALL static void tb_free(ggml_backend_t backend) {
    struct tb_backend * ctx = backend->context;
    ggml_backend_free(ctx->cpu);
    free(ctx->scratch);
    free(ctx);
    free(backend);
}

GGML_CALL static ggml_backend_buffer_type_t tb_get_default_buffer_type(ggml_backend_t backend) {
    (void) backend;
    return testbackend_buffer_type();
}

static void tb_check_own(const struct ggml_tensor * t) {
    if (!tb_is_test_buffer(tb_tensor_buffer(t))) {
        tb_fatal("async access to a tensor outside Test memory", t->name);
    }
}

GGML_CALL static void tb_set_tensor_async(ggml_backend_t backend, struct ggml_tensor * tensor,
                                          const void * data, size_t offset, size_t size) {
    (void) backend;
    tb_check_own(tensor);
    TB_COUNT(n_set_async, 1);
    ggml_backend_tensor_set(tensor, data, offset, size);
}

GGML_CALL static void tb_get_tensor_async(ggml_backend_t backend, const struct ggml_tensor * tensor,
                                          void * data, size_t offset, size_t size) {
    (void) backend;
    tb_check_own(tensor);
    TB_COUNT(n_get_async, 1);
    ggml_backend_tensor_get(tensor, data, offset, size);
}

GGML_CALL static bool tb_cpy_tensor_async(ggml_backend_t backend, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    (void) backend;
    ggml_backend_buffer_t sb = tb_tensor_buffer(src);
    ggml_backend_buffer_t db = tb_tensor_buffer(dst);
    if (!tb_is_test_buffer(sb) || !tb_is_test_buffer(db)) {
        return false;
    }
    size_t n = ggml_nbytes(src);
    memmove(tb_translate(db, dst, 0, n), tb_translate(sb, src, 0, n), n);
    TB_COUNT(n_cpy_async, 1);
    return true;
}

GGML_CALL static void tb_synchronize(ggml_backend_t backend) {
    (void) backend;
}

static bool tb_reserve(struct tb_backend * ctx, size_t need) {
    if (need <= ctx->scratch_size) {
        return true;
    }
    void * p = NULL;
    if (posix_memalign(&p, 64, need) != 0) {
        return false;
    }
    free(ctx->scratch);
    ctx->scratch      = p;
    ctx->scratch_size = need;
    return true;
}

#define TB_PAD64(x) (((x) + 63) & ~(size_t) 63)

GGML_CALL static bool tb_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    struct tb_backend * ctx = backend->context;
    TB_COUNT(n_graph_compute, 1);

    for (int i = 0; i < cgraph->n_nodes; i++) {
        struct ggml_tensor * node = cgraph->nodes[i];
        if (tb_is_noop(node->op)) {
            continue;
        }
        if (ctx->rejected[node->op]) {
            fprintf(stderr, "testbackend: asked to compute rejected op %s (node '%s')\n", ggml_op_desc(node), node->name);
            return false;
        }
        if (node->data == NULL || !tb_is_test_buffer(tb_tensor_buffer(node))) {
            fprintf(stderr, "testbackend: node '%s' is not in Test memory\n", node->name);
            return false;
        }

        // host copies of the sources and of the node, with the same layout
        struct ggml_tensor hsrc[GGML_MAX_SRC];
        struct ggml_tensor hnode = *node;
        size_t need = TB_PAD64(ggml_nbytes(node));
        int n_src = 0;
        for (int j = 0; j < GGML_MAX_SRC && node->src[j] != NULL; j++) {
            const struct ggml_tensor * src = node->src[j];
            if (src->data == NULL || !tb_is_test_buffer(tb_tensor_buffer(src))) {
                fprintf(stderr, "testbackend: source %d ('%s') of node '%s' is not in Test memory\n", j, src->name, node->name);
                return false;
            }
            need += TB_PAD64(ggml_nbytes(src));
            n_src = j + 1;
        }
        if (!tb_reserve(ctx, need)) {
            fprintf(stderr, "testbackend: out of memory\n");
            return false;
        }

        char * p = ctx->scratch;
        for (int j = 0; j < n_src; j++) {
            const struct ggml_tensor * src = node->src[j];
            hsrc[j] = *src;
            hsrc[j].data     = p;
            hsrc[j].buffer   = NULL;
            hsrc[j].view_src = NULL;
            hsrc[j].view_offs = 0;
            hsrc[j].extra    = NULL;
            ggml_backend_tensor_get(src, p, 0, ggml_nbytes(src));
            hnode.src[j] = &hsrc[j];
            p += TB_PAD64(ggml_nbytes(src));
        }
        hnode.data      = p;
        hnode.buffer    = NULL;
        hnode.view_src  = NULL;
        hnode.view_offs = 0;
        hnode.extra     = NULL;
        // the node's current bytes, so that what the op does not write stays as it was
        ggml_backend_tensor_get(node, p, 0, ggml_nbytes(node));

        struct ggml_tensor * hptr = &hnode;
        struct ggml_cgraph g;
        memset(&g, 0, sizeof(g));
        g.size    = 1;
        g.n_nodes = 1;
        g.nodes   = &hptr;
        g.order   = cgraph->order;
        if (!ggml_backend_graph_compute(ctx->cpu, &g)) {
            return false;
        }
        ggml_backend_tensor_set(node, p, 0, ggml_nbytes(node));
        TB_COUNT(n_nodes, 1);
    }
    return true;
}

GGML_CALL static bool tb_supports_op(ggml_backend_t backend, const struct ggml_tensor * op) {
    struct tb_backend * ctx = backend->context;
    if (op->op >= 0 && op->op < GGML_OP_COUNT && ctx->rejected[op->op]) {
        return false;
    }
    return ggml_backend_supports_op(ctx->cpu, op);
}

static const struct ggml_backend_i tb_backend_iface = {
    /* .get_name                = */ tb_get_name,
    /* .free                    = */ tb_free,
    /* .get_default_buffer_type = */ tb_get_default_buffer_type,
    /* .set_tensor_async        = */ tb_set_tensor_async,
    /* .get_tensor_async        = */ tb_get_tensor_async,
    /* .cpy_tensor_async        = */ tb_cpy_tensor_async,
    /* .synchronize             = */ tb_synchronize,
    /* .graph_plan_create       = */ NULL,
    /* .graph_plan_free         = */ NULL,
    /* .graph_plan_compute      = */ NULL,
    /* .graph_compute           = */ tb_graph_compute,
    /* .supports_op             = */ tb_supports_op,
};

ggml_backend_t testbackend_init(int n_threads) {
    struct tb_backend * ctx = calloc(1, sizeof(*ctx));
    ggml_backend_t backend = calloc(1, sizeof(*backend));
    if (ctx != NULL) {
        ctx->cpu = ggml_backend_cpu_init();
    }
    if (ctx == NULL || backend == NULL || ctx->cpu == NULL) {
        if (ctx != NULL) {
            ggml_backend_free(ctx->cpu);
        }
        free(ctx);
        free(backend);
        return NULL;
    }
    ggml_backend_cpu_set_n_threads(ctx->cpu, n_threads < 1 ? 1 : n_threads);
    backend->iface   = tb_backend_iface;
    backend->context = ctx;
    return backend;
}

bool testbackend_is(ggml_backend_t backend) {
    return backend != NULL && backend->iface.get_name == tb_get_name;
}

void testbackend_reject_op(ggml_backend_t backend, enum ggml_op op, bool reject) {
    if (!testbackend_is(backend) || op < 0 || op >= GGML_OP_COUNT) {
        return;
    }
    struct tb_backend * ctx = backend->context;
    ctx->rejected[op] = reject;
}

// ---------------------------------------------------------------------------------------------
// registry

GGML_CALL static ggml_backend_t tb_reg_init(const char * params, void * user_data) {
    (void) user_data;
    int n_threads = 1;
    if (params != NULL && params[0] != '\0') {
        char * end = NULL;
        if (strncmp(params, "threads=", 8) != 0) {
            return NULL;
        }
        long v = strtol(params + 8, &end, 10);
        if (end == params + 8 || *end != '\0' || v < 1 || v > 1024) {
            return NULL;
        }
        n_threads = (int) v;
    }
    return testbackend_init(n_threads);
}

static void tb_register_once(void) {
    ggml_backend_register("Test", tb_reg_init, testbackend_buffer_type(), NULL);
}

void testbackend_register(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, tb_register_once);
}
