//go:build darwin && metal && !metalemu

// ggml-metal.m - the Metal backend's host side: the buffer type "Metal" (page-aligned host
// memory wrapped by MTLBuffers, shared with the GPU), buffers over existing memory split into
// overlapping views of at most maxBufferLength, the backend (kernels compiled at init from the
// embedded source, graphs encoded into n_cb command buffers), registration as "Metal", and the
// entry points of ggml-metal.h. Plain Objective-C with manual retain/release and no blocks, so
// the same file builds with Apple's clang and, against the emulator (metal/emu), with GCC on
// Linux. The build constraint above is for cgo on darwin; make builds it for the emulator.

#import "ggml-metal-impl.h"

#include "ggml-impl.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// ---------------------------------------------------------------------------------------------
// log and errors

static ggml_log_callback metal_log_cb = NULL;
static void * metal_log_ud = NULL;

void ggml_backend_metal_log_set_callback(ggml_log_callback log_callback, void * user_data) {
    metal_log_cb = log_callback;
    metal_log_ud = user_data;
}

void ggml_metal_log(enum ggml_log_level level, const char * fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (metal_log_cb != NULL) {
        metal_log_cb(level, buf, metal_log_ud);
    } else if (level <= GGML_LOG_LEVEL_WARN) {
        fprintf(stderr, "%s\n", buf);
    }
}

// a failure the caller can act on: recorded for ggml_x_last_error in recoverable mode, logged
// otherwise
static void metal_error(const char * fmt, ...) __attribute__((format(printf, 1, 2)));
static void metal_error(const char * fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (ggml_x_recoverable(NULL)) {
        ggml_x_error(NULL, "%s", buf);
    } else {
        ggml_metal_log(GGML_LOG_LEVEL_ERROR, "%s", buf);
    }
}

// ---------------------------------------------------------------------------------------------
// kernel source

static pthread_mutex_t metal_source_lock = PTHREAD_MUTEX_INITIALIZER;
static char * metal_source = NULL;

void ggml_x_metal_set_source(const char * source, size_t len) {
    char * s = malloc(len + 1);
    if (s == NULL) {
        return;
    }
    memcpy(s, source, len);
    s[len] = '\0';
    pthread_mutex_lock(&metal_source_lock);
    free(metal_source);
    metal_source = s;
    pthread_mutex_unlock(&metal_source_lock);
}

// ---------------------------------------------------------------------------------------------
// buffers

struct metal_view {
    void *        data;
    size_t        size;
    id<MTLBuffer> mtl;
};

struct metal_buffer_ctx {
    id<MTLDevice>     device;
    void *            data;
    size_t            size;
    bool              owned; // data was allocated here
    int               n_views;
    struct metal_view views[GGML_METAL_MAX_BUFFERS];
};

static const char * GGML_CALL metal_buffer_get_name(ggml_backend_buffer_t buffer) {
    (void) buffer;
    return "Metal";
}

static void metal_buffer_ctx_free(struct metal_buffer_ctx * c) {
    for (int i = 0; i < c->n_views; i++) {
        [c->views[i].mtl release];
    }
    [c->device release];
    if (c->owned) {
        free(c->data);
    }
    free(c);
}

static void GGML_CALL metal_buffer_free(ggml_backend_buffer_t buffer) {
    metal_buffer_ctx_free(buffer->context);
}

static void * GGML_CALL metal_buffer_get_base(ggml_backend_buffer_t buffer) {
    return ((struct metal_buffer_ctx *) buffer->context)->data;
}

static void GGML_CALL metal_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor,
                                              const void * data, size_t offset, size_t size) {
    (void) buffer;
    memcpy((char *) tensor->data + offset, data, size);
}

static void GGML_CALL metal_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor,
                                              void * data, size_t offset, size_t size) {
    (void) buffer;
    memcpy(data, (const char *) tensor->data + offset, size);
}

static bool GGML_CALL metal_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src,
                                              struct ggml_tensor * dst) {
    (void) buffer;
    if (src->buffer == NULL || !ggml_backend_buffer_is_host(src->buffer)) {
        return false;
    }
    memcpy(dst->data, src->data, ggml_nbytes(src));
    return true;
}

static void GGML_CALL metal_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    struct metal_buffer_ctx * c = buffer->context;
    memset(c->data, value, c->size);
}

static const struct ggml_backend_buffer_i metal_buffer_iface = {
    /* .get_name    = */ metal_buffer_get_name,
    /* .free_buffer = */ metal_buffer_free,
    /* .get_base    = */ metal_buffer_get_base,
    /* .init_tensor = */ NULL,
    /* .set_tensor  = */ metal_buffer_set_tensor,
    /* .get_tensor  = */ metal_buffer_get_tensor,
    /* .cpy_tensor  = */ metal_buffer_cpy_tensor,
    /* .clear       = */ metal_buffer_clear,
    /* .reset       = */ NULL,
};

static size_t metal_page_size(void) {
    return (size_t) sysconf(_SC_PAGESIZE);
}

// wrap [data, data + size) (page-aligned start) in views of at most maxBufferLength bytes that
// overlap by max_size, so that every tensor of at most max_size bytes lies in one view
static bool metal_buffer_ctx_map(struct metal_buffer_ctx * c, size_t max_size) {
    const size_t page = metal_page_size();
    const size_t size_aligned = (c->size + page - 1) / page * page;
    const size_t max_len = (size_t) [c->device maxBufferLength];
    if (size_aligned <= max_len) {
        c->views[0].mtl = [c->device newBufferWithBytesNoCopy:c->data length:size_aligned
                                                      options:MTLResourceStorageModeShared deallocator:nil];
        if (c->views[0].mtl == nil) {
            metal_error("ggml_metal: the device cannot map a buffer of %zu bytes at %p", size_aligned, c->data);
            return false;
        }
        c->views[0].data = c->data;
        c->views[0].size = size_aligned;
        c->n_views = 1;
        return true;
    }
    const size_t max_aligned = (max_size + page - 1) / page * page;
    if (max_aligned >= max_len) {
        metal_error("ggml_metal: a tensor of %zu bytes does not fit the device's maxBufferLength (%zu bytes)",
                    max_size, max_len);
        return false;
    }
    const size_t step = (max_len - max_aligned) / page * page;
    for (size_t off = 0; off < size_aligned; off += step) {
        if (c->n_views == GGML_METAL_MAX_BUFFERS) {
            metal_error("ggml_metal: %zu bytes need more than %d views of maxBufferLength %zu bytes",
                        c->size, GGML_METAL_MAX_BUFFERS, max_len);
            return false;
        }
        const size_t len = size_aligned - off < max_len ? size_aligned - off : max_len;
        struct metal_view * v = &c->views[c->n_views];
        v->mtl = [c->device newBufferWithBytesNoCopy:(char *) c->data + off length:len
                                             options:MTLResourceStorageModeShared deallocator:nil];
        if (v->mtl == nil) {
            metal_error("ggml_metal: the device cannot map a view of %zu bytes at offset %zu", len, off);
            return false;
        }
        v->data = (char *) c->data + off;
        v->size = len;
        c->n_views++;
        if (off + len >= size_aligned) {
            break;
        }
    }
    ggml_metal_log(GGML_LOG_LEVEL_INFO, "ggml_metal: mapped %zu bytes as %d overlapping views", c->size, c->n_views);
    return true;
}

id<MTLBuffer> ggml_metal_tensor_buffer(const struct ggml_tensor * t, size_t * offset) {
    if (t == NULL || t->buffer == NULL || t->buffer->iface.get_name != metal_buffer_get_name) {
        return nil;
    }
    const struct metal_buffer_ctx * c = t->buffer->context;
    const char * p = t->data;
    const size_t n = ggml_nbytes(t);
    for (int i = 0; i < c->n_views; i++) {
        const char * b = c->views[i].data;
        if (p >= b && p + n <= b + c->views[i].size) {
            *offset = (size_t) (p - b);
            return c->views[i].mtl;
        }
    }
    return nil;
}

static struct ggml_backend_buffer_type metal_buffer_type;

static ggml_backend_buffer_t metal_buffer_new(void * data, size_t size, bool owned, size_t max_size) {
    struct metal_buffer_ctx * c = calloc(1, sizeof(*c));
    if (c == NULL) {
        metal_error("ggml_metal: out of host memory");
        if (owned) {
            free(data);
        }
        return NULL;
    }
    c->data = data;
    c->size = size;
    c->owned = owned;
    c->device = MTLCreateSystemDefaultDevice();
    if (c->device == nil) {
        metal_error("ggml_metal: no Metal device");
        metal_buffer_ctx_free(c);
        return NULL;
    }
    if (!metal_buffer_ctx_map(c, max_size)) {
        metal_buffer_ctx_free(c);
        return NULL;
    }
    ggml_backend_buffer_t b = ggml_backend_buffer_init(&metal_buffer_type, metal_buffer_iface, c, size);
    if (b == NULL) {
        metal_buffer_ctx_free(c);
    }
    return b;
}

static const char * GGML_CALL metal_buft_get_name(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return "Metal";
}

static ggml_backend_buffer_t GGML_CALL metal_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    (void) buft;
    const size_t page = metal_page_size();
    const size_t alloc = size == 0 ? page : (size + page - 1) / page * page;
    void * data = NULL;
    if (posix_memalign(&data, page, alloc) != 0) {
        metal_error("ggml_metal: cannot allocate %zu bytes of host memory", alloc);
        return NULL;
    }
    ggml_backend_buffer_t b = metal_buffer_new(data, alloc, true, alloc);
    if (b == NULL) {
        return NULL; // metal_buffer_new freed data with its context
    }
    return b;
}

static size_t GGML_CALL metal_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return 32;
}

static bool GGML_CALL metal_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    (void) buft;
    return ggml_backend_is_metal(backend) || ggml_backend_is_cpu(backend);
}

static bool GGML_CALL metal_buft_is_host(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return true;
}

static struct ggml_backend_buffer_type metal_buffer_type = {
    /* .iface = */ {
        /* .get_name         = */ metal_buft_get_name,
        /* .alloc_buffer     = */ metal_buft_alloc_buffer,
        /* .get_alignment    = */ metal_buft_get_alignment,
        /* .get_alloc_size   = */ NULL,
        /* .supports_backend = */ metal_buft_supports_backend,
        /* .is_host          = */ metal_buft_is_host,
    },
    /* .context = */ NULL,
};

GGML_CALL ggml_backend_buffer_type_t ggml_backend_metal_buffer_type(void) {
    return &metal_buffer_type;
}

GGML_CALL ggml_backend_buffer_t ggml_backend_metal_buffer_from_ptr(void * data, size_t size, size_t max_size) {
    if (data == NULL || ((uintptr_t) data % metal_page_size()) != 0) {
        metal_error("ggml_backend_metal_buffer_from_ptr: data %p must be page-aligned (%zu bytes)", data, metal_page_size());
        return NULL;
    }
    if (size == 0 || max_size > size) {
        metal_error("ggml_backend_metal_buffer_from_ptr: size %zu must be positive and at least max_size %zu", size, max_size);
        return NULL;
    }
    return metal_buffer_new(data, size, false, max_size);
}

// ---------------------------------------------------------------------------------------------
// backend

static const char * GGML_CALL metal_backend_get_name(ggml_backend_t backend) {
    (void) backend;
    return "Metal";
}

static void metal_ctx_free(struct ggml_metal_context * ctx) {
    for (int i = 0; i < GGML_METAL_K_COUNT; i++) {
        [ctx->pipelines[i] release];
    }
    [ctx->library release];
    [ctx->queue release];
    [ctx->device release];
    free(ctx);
}

static void GGML_CALL metal_backend_free(ggml_backend_t backend) {
    metal_ctx_free(backend->context);
    free(backend);
}

static ggml_backend_buffer_type_t GGML_CALL metal_backend_get_default_buffer_type(ggml_backend_t backend) {
    (void) backend;
    return &metal_buffer_type;
}

static bool GGML_CALL metal_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * gf) {
    struct ggml_metal_context * ctx = backend->context;
    NSAutoreleasePool * pool = [[NSAutoreleasePool alloc] init];
    const int n_nodes = gf->n_nodes;
    const int n_cb = ctx->n_cb < n_nodes ? ctx->n_cb : (n_nodes > 0 ? n_nodes : 1);
    const int per_cb = (n_nodes + n_cb - 1) / n_cb;
    id<MTLCommandBuffer> cbs[GGML_METAL_MAX_COMMAND_BUFFERS];
    int n_committed = 0;
    bool ok = true;
    char err[256] = "";
    // command buffers are encoded one after another on this thread (the reference encodes them
    // concurrently with GCD blocks); the queue runs them in commit order
    for (int cb = 0; cb < n_cb && ok; cb++) {
        id<MTLCommandBuffer> cmd = [ctx->queue commandBufferWithUnretainedReferences];
        id<MTLComputeCommandEncoder> enc = [cmd computeCommandEncoder];
        if (cmd == nil || enc == nil) {
            snprintf(err, sizeof(err), "cannot create command buffer %d", cb);
            ok = false;
            break;
        }
        const int end = (cb + 1) * per_cb < n_nodes ? (cb + 1) * per_cb : n_nodes;
        for (int i = cb * per_cb; i < end && ok; i++) {
            ok = ggml_metal_encode_node(ctx, enc, gf->nodes[i], err, sizeof(err));
        }
        [enc endEncoding];
        if (!ok) {
            break;
        }
        [cmd commit];
        cbs[n_committed++] = cmd;
    }
    for (int i = 0; i < n_committed; i++) {
        [cbs[i] waitUntilCompleted];
        if ([cbs[i] status] != MTLCommandBufferStatusCompleted && ok) {
            NSError * e = [cbs[i] error];
            snprintf(err, sizeof(err), "command buffer %d failed (status %lu): %s", i,
                     (unsigned long) [cbs[i] status], e != nil ? [[e localizedDescription] UTF8String] : "no error");
            ok = false;
        }
    }
    [pool release];
    if (!ok) {
        metal_error("ggml_metal: graph_compute: %s", err);
    }
    return ok;
}

static bool GGML_CALL metal_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor * op) {
    return ggml_metal_supports_op(backend->context, op);
}

static const struct ggml_backend_i metal_backend_iface = {
    /* .get_name                = */ metal_backend_get_name,
    /* .free                    = */ metal_backend_free,
    /* .get_default_buffer_type = */ metal_backend_get_default_buffer_type,
    /* .set_tensor_async        = */ NULL,
    /* .get_tensor_async        = */ NULL,
    /* .cpy_tensor_async        = */ NULL,
    /* .synchronize             = */ NULL,
    /* .graph_plan_create       = */ NULL,
    /* .graph_plan_free         = */ NULL,
    /* .graph_plan_compute      = */ NULL,
    /* .graph_compute           = */ metal_backend_graph_compute,
    /* .supports_op             = */ metal_backend_supports_op,
};

static const char * const metal_kernel_names[GGML_METAL_K_COUNT] = {
#define GGML_METAL_NAME(e, name) name,
    GGML_METAL_KERNEL_LIST(GGML_METAL_NAME)
#undef GGML_METAL_NAME
};

// compile the embedded source and create one pipeline state per kernel
static bool metal_ctx_load_kernels(struct ggml_metal_context * ctx) {
    pthread_mutex_lock(&metal_source_lock);
    NSString * src = metal_source != NULL ? [[NSString alloc] initWithUTF8String:metal_source] : nil;
    pthread_mutex_unlock(&metal_source_lock);
    if (src == nil) {
        metal_error("ggml_metal: no kernel source (the Go package sets it at init; C programs link metal-source.o)");
        return false;
    }
    MTLCompileOptions * opts = [[MTLCompileOptions alloc] init];
    [opts setFastMathEnabled:NO]; // IEEE exp/tanh: results comparable with the CPU backend
    NSError * error = nil;
    ctx->library = [ctx->device newLibraryWithSource:src options:opts error:&error];
    [opts release];
    [src release];
    if (ctx->library == nil) {
        metal_error("ggml_metal: the kernels do not compile: %s",
                    error != nil ? [[error localizedDescription] UTF8String] : "unknown error");
        return false;
    }
    for (int i = 0; i < GGML_METAL_K_COUNT; i++) {
        NSString * name = [[NSString alloc] initWithUTF8String:metal_kernel_names[i]];
        id<MTLFunction> fn = [ctx->library newFunctionWithName:name];
        [name release];
        if (fn == nil) {
            metal_error("ggml_metal: kernel %s not found in the compiled library", metal_kernel_names[i]);
            return false;
        }
        error = nil;
        ctx->pipelines[i] = [ctx->device newComputePipelineStateWithFunction:fn error:&error];
        [fn release];
        if (ctx->pipelines[i] == nil) {
            metal_error("ggml_metal: no pipeline state for %s: %s", metal_kernel_names[i],
                        error != nil ? [[error localizedDescription] UTF8String] : "unknown error");
            return false;
        }
    }
    return true;
}

ggml_backend_t ggml_backend_metal_init(void) {
    NSAutoreleasePool * pool = [[NSAutoreleasePool alloc] init];
    struct ggml_metal_context * ctx = calloc(1, sizeof(*ctx));
    ggml_backend_t backend = NULL;
    if (ctx == NULL) {
        metal_error("ggml_metal: out of host memory");
        goto done;
    }
    ctx->n_cb = 1;
    ctx->device = MTLCreateSystemDefaultDevice();
    if (ctx->device == nil) {
        metal_error("ggml_metal: no Metal device");
        goto fail;
    }
    ctx->has_simdgroup_reduction = [ctx->device supportsFamily:MTLGPUFamilyApple7] ||
                                   [ctx->device supportsFamily:MTLGPUFamilyMetal3];
    ggml_metal_log(GGML_LOG_LEVEL_INFO, "ggml_metal: device %s, SIMD-group reductions %s, maxBufferLength %lu",
                   [[ctx->device name] UTF8String], ctx->has_simdgroup_reduction ? "yes" : "no",
                   (unsigned long) [ctx->device maxBufferLength]);
    ctx->queue = [ctx->device newCommandQueue];
    if (ctx->queue == nil) {
        metal_error("ggml_metal: cannot create a command queue");
        goto fail;
    }
    if (!metal_ctx_load_kernels(ctx)) {
        goto fail;
    }
    backend = malloc(sizeof(*backend));
    if (backend == NULL) {
        metal_error("ggml_metal: out of host memory");
        goto fail;
    }
    backend->iface = metal_backend_iface;
    backend->context = ctx;
    goto done;
fail:
    metal_ctx_free(ctx);
done:
    [pool release];
    return backend;
}

bool ggml_backend_is_metal(ggml_backend_t backend) {
    return backend != NULL && backend->iface.get_name == metal_backend_get_name;
}

void ggml_backend_metal_set_n_cb(ggml_backend_t backend, int n_cb) {
    if (!ggml_backend_is_metal(backend)) {
        metal_error("ggml_backend_metal_set_n_cb: not a Metal backend");
        return;
    }
    struct ggml_metal_context * ctx = backend->context;
    ctx->n_cb = n_cb < 1 ? 1 : (n_cb > GGML_METAL_MAX_COMMAND_BUFFERS ? GGML_METAL_MAX_COMMAND_BUFFERS : n_cb);
}

bool ggml_backend_metal_supports_family(ggml_backend_t backend, int family) {
    if (!ggml_backend_is_metal(backend)) {
        metal_error("ggml_backend_metal_supports_family: not a Metal backend");
        return false;
    }
    struct ggml_metal_context * ctx = backend->context;
    return [ctx->device supportsFamily:(MTLGPUFamily) (MTLGPUFamilyApple1 + family - 1)];
}

// ---------------------------------------------------------------------------------------------
// registry

static ggml_backend_t GGML_CALL metal_reg_init(const char * params, void * user_data) {
    (void) params;
    (void) user_data;
    return ggml_backend_metal_init();
}

static pthread_once_t metal_reg_once = PTHREAD_ONCE_INIT;

static void metal_register_once(void) {
    id<MTLDevice> d = MTLCreateSystemDefaultDevice();
    if (d == nil) {
        return;
    }
    [d release];
    ggml_backend_register("Metal", metal_reg_init, &metal_buffer_type, NULL);
}

GGML_CALL void ggml_x_backend_metal_register(void) {
    pthread_once(&metal_reg_once, metal_register_once);
}
