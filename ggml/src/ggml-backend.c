// ggml-backend.c - buffer types, buffers and backends (the generic layer), the CPU buffer type
// and CPU backend, and the backend registry.
//
// Every function that takes caller input validates it: a bad call reports through ggml_x_error
// with the calling thread's mode (abort by default, record and return in recoverable mode).
// The scheduler, graph copy and compare_graph_backend live in a later part of this file.

#include "ggml-backend-impl.h"
#include "ggml-impl.h"
#include "cpu/engine.h"
#include "cpu/threadpool.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// error helpers

// report a caller mistake and return `ret` from the enclosing function
#define BK_CHECK(cond, ret, ...) \
    do { \
        if (!(cond)) { \
            ggml_x_error(NULL, __VA_ARGS__); \
            return ret; \
        } \
    } while (0)

// same for functions returning void
#define BK_CHECK_VOID(cond, ...) \
    do { \
        if (!(cond)) { \
            ggml_x_error(NULL, __VA_ARGS__); \
            return; \
        } \
    } while (0)

// Resource failures (out of memory, unknown backend name) are not programming errors: like the
// reference, print a message and let the caller see NULL; in recoverable mode also record it.
static void bk_soft_error(const char * fmt, ...) GGML_ATTRIBUTE_FORMAT(1, 2);

static void bk_soft_error(const char * fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (ggml_x_recoverable(NULL)) {
        ggml_x_error(NULL, "%s", msg);
    } else {
        fprintf(stderr, "%s\n", msg);
    }
}

// the buffer that holds a tensor's memory (views: their source's buffer)
static ggml_backend_buffer_t bk_tensor_buffer(const struct ggml_tensor * tensor) {
    if (tensor->buffer != NULL) {
        return tensor->buffer;
    }
    return tensor->view_src != NULL ? tensor->view_src->buffer : NULL;
}

// ---------------------------------------------------------------------------------------------
// buffer type

const char * ggml_backend_buft_name(ggml_backend_buffer_type_t buft) {
    BK_CHECK(buft != NULL, NULL, "ggml_backend_buft_name: buft is NULL");
    return buft->iface.get_name(buft);
}

GGML_CALL ggml_backend_buffer_t ggml_backend_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    BK_CHECK(buft != NULL, NULL, "ggml_backend_buft_alloc_buffer: buft is NULL");
    return buft->iface.alloc_buffer(buft, size);
}

size_t ggml_backend_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    BK_CHECK(buft != NULL, 0, "ggml_backend_buft_get_alignment: buft is NULL");
    return buft->iface.get_alignment(buft);
}

GGML_CALL size_t ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t buft, struct ggml_tensor * tensor) {
    BK_CHECK(buft != NULL, 0, "ggml_backend_buft_get_alloc_size: buft is NULL");
    BK_CHECK(tensor != NULL, 0, "ggml_backend_buft_get_alloc_size: tensor is NULL");
    if (buft->iface.get_alloc_size != NULL) {
        return buft->iface.get_alloc_size(buft, tensor);
    }
    return ggml_nbytes(tensor);
}

bool ggml_backend_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    BK_CHECK(buft != NULL, false, "ggml_backend_buft_supports_backend: buft is NULL");
    BK_CHECK(backend != NULL, false, "ggml_backend_buft_supports_backend: backend is NULL");
    if (buft->iface.supports_backend == NULL) {
        return false;
    }
    return buft->iface.supports_backend(buft, backend);
}

bool ggml_backend_buft_is_host(ggml_backend_buffer_type_t buft) {
    BK_CHECK(buft != NULL, false, "ggml_backend_buft_is_host: buft is NULL");
    if (buft->iface.is_host == NULL) {
        return false;
    }
    return buft->iface.is_host(buft);
}

// ---------------------------------------------------------------------------------------------
// buffer

GGML_CALL ggml_backend_buffer_t ggml_backend_buffer_init(
               ggml_backend_buffer_type_t      buft,
        struct ggml_backend_buffer_i           iface,
               ggml_backend_buffer_context_t   context,
               size_t                          size) {
    BK_CHECK(iface.get_base != NULL, NULL, "ggml_backend_buffer_init: iface.get_base is NULL");

    ggml_backend_buffer_t buffer = calloc(1, sizeof(*buffer));
    if (buffer == NULL) {
        bk_soft_error("ggml_backend_buffer_init: out of memory");
        return NULL;
    }
    buffer->iface   = iface;
    buffer->buft    = buft;
    buffer->context = context;
    buffer->size    = size;
    buffer->usage   = GGML_BACKEND_BUFFER_USAGE_ANY;
    return buffer;
}

const char * ggml_backend_buffer_name(ggml_backend_buffer_t buffer) {
    BK_CHECK(buffer != NULL, NULL, "ggml_backend_buffer_name: buffer is NULL");
    if (buffer->iface.get_name != NULL) {
        return buffer->iface.get_name(buffer);
    }
    return buffer->buft != NULL ? ggml_backend_buft_name(buffer->buft) : "unknown";
}

void ggml_backend_buffer_free(ggml_backend_buffer_t buffer) {
    if (buffer == NULL) {
        return;
    }
    if (buffer->iface.free_buffer != NULL) {
        buffer->iface.free_buffer(buffer);
    }
    free(buffer);
}

void * ggml_backend_buffer_get_base(ggml_backend_buffer_t buffer) {
    BK_CHECK(buffer != NULL, NULL, "ggml_backend_buffer_get_base: buffer is NULL");
    if (buffer->size == 0) {
        // an empty buffer has no memory to point at
        return NULL;
    }
    return buffer->iface.get_base(buffer);
}

size_t ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer) {
    BK_CHECK(buffer != NULL, 0, "ggml_backend_buffer_get_size: buffer is NULL");
    return buffer->size;
}

GGML_CALL void ggml_backend_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    BK_CHECK_VOID(buffer != NULL, "ggml_backend_buffer_init_tensor: buffer is NULL");
    BK_CHECK_VOID(tensor != NULL, "ggml_backend_buffer_init_tensor: tensor is NULL");
    if (buffer->iface.init_tensor != NULL) {
        buffer->iface.init_tensor(buffer, tensor);
    }
}

size_t ggml_backend_buffer_get_alignment(ggml_backend_buffer_t buffer) {
    BK_CHECK(buffer != NULL, 0, "ggml_backend_buffer_get_alignment: buffer is NULL");
    return ggml_backend_buft_get_alignment(buffer->buft);
}

size_t ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    BK_CHECK(buffer != NULL, 0, "ggml_backend_buffer_get_alloc_size: buffer is NULL");
    return ggml_backend_buft_get_alloc_size(buffer->buft, tensor);
}

void ggml_backend_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    BK_CHECK_VOID(buffer != NULL, "ggml_backend_buffer_clear: buffer is NULL");
    if (buffer->size == 0) {
        return;
    }
    buffer->iface.clear(buffer, value);
}

bool ggml_backend_buffer_is_host(ggml_backend_buffer_t buffer) {
    BK_CHECK(buffer != NULL, false, "ggml_backend_buffer_is_host: buffer is NULL");
    if (buffer->buft == NULL) {
        return false;
    }
    return ggml_backend_buft_is_host(buffer->buft);
}

void ggml_backend_buffer_set_usage(ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage) {
    BK_CHECK_VOID(buffer != NULL, "ggml_backend_buffer_set_usage: buffer is NULL");
    BK_CHECK_VOID(usage == GGML_BACKEND_BUFFER_USAGE_ANY || usage == GGML_BACKEND_BUFFER_USAGE_WEIGHTS,
                  "ggml_backend_buffer_set_usage: invalid usage (%d)", (int) usage);
    buffer->usage = usage;
}

ggml_backend_buffer_type_t ggml_backend_buffer_get_type(ggml_backend_buffer_t buffer) {
    BK_CHECK(buffer != NULL, NULL, "ggml_backend_buffer_get_type: buffer is NULL");
    return buffer->buft;
}

void ggml_backend_buffer_reset(ggml_backend_buffer_t buffer) {
    BK_CHECK_VOID(buffer != NULL, "ggml_backend_buffer_reset: buffer is NULL");
    if (buffer->iface.reset != NULL) {
        buffer->iface.reset(buffer);
    }
}

static bool bk_same_layout(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->type != b->type) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) {
            return false;
        }
    }
    return true;
}

bool ggml_backend_buffer_copy_tensor(const struct ggml_tensor * src, struct ggml_tensor * dst) {
    BK_CHECK(src != NULL && dst != NULL, false, "ggml_backend_buffer_copy_tensor: NULL tensor");
    ggml_backend_buffer_t src_buf = bk_tensor_buffer(src);
    ggml_backend_buffer_t dst_buf = bk_tensor_buffer(dst);
    BK_CHECK(src_buf != NULL && src->data != NULL, false,
             "ggml_backend_buffer_copy_tensor: source tensor '%s' is not allocated", src->name);
    BK_CHECK(dst_buf != NULL && dst->data != NULL, false,
             "ggml_backend_buffer_copy_tensor: destination tensor '%s' is not allocated", dst->name);
    BK_CHECK(bk_same_layout(src, dst), false,
             "ggml_backend_buffer_copy_tensor: tensors '%s' and '%s' have different layouts", src->name, dst->name);

    // the destination buffer may know how to pull from the source directly
    if (dst_buf->iface.cpy_tensor != NULL && dst_buf->iface.cpy_tensor(dst_buf, src, dst)) {
        return true;
    }

    // otherwise stage the bytes in host memory
    size_t nbytes = ggml_nbytes(src);
    if (nbytes == 0) {
        return true;
    }
    void * tmp = malloc(nbytes);
    if (tmp == NULL) {
        bk_soft_error("ggml_backend_buffer_copy_tensor: out of memory (%zu bytes)", nbytes);
        return false;
    }
    src_buf->iface.get_tensor(src_buf, src, tmp, 0, nbytes);
    dst_buf->iface.set_tensor(dst_buf, dst, tmp, 0, nbytes);
    free(tmp);
    return true;
}

// ---------------------------------------------------------------------------------------------
// backend

const char * ggml_backend_name(ggml_backend_t backend) {
    if (backend == NULL) {
        return "NULL";
    }
    return backend->iface.get_name(backend);
}

void ggml_backend_free(ggml_backend_t backend) {
    if (backend == NULL) {
        return;
    }
    backend->iface.free(backend);
}

ggml_backend_buffer_type_t ggml_backend_get_default_buffer_type(ggml_backend_t backend) {
    BK_CHECK(backend != NULL, NULL, "ggml_backend_get_default_buffer_type: backend is NULL");
    return backend->iface.get_default_buffer_type(backend);
}

ggml_backend_buffer_t ggml_backend_alloc_buffer(ggml_backend_t backend, size_t size) {
    BK_CHECK(backend != NULL, NULL, "ggml_backend_alloc_buffer: backend is NULL");
    return ggml_backend_buft_alloc_buffer(ggml_backend_get_default_buffer_type(backend), size);
}

size_t ggml_backend_get_alignment(ggml_backend_t backend) {
    BK_CHECK(backend != NULL, 0, "ggml_backend_get_alignment: backend is NULL");
    return ggml_backend_buft_get_alignment(ggml_backend_get_default_buffer_type(backend));
}

// Validate a tensor data access of [offset, offset + size); returns the buffer or NULL after
// reporting the problem.
static ggml_backend_buffer_t bk_check_access(const char * fn, const struct ggml_tensor * tensor,
                                             const void * data, size_t offset, size_t size) {
    if (tensor == NULL) {
        ggml_x_error(NULL, "%s: tensor is NULL", fn);
        return NULL;
    }
    ggml_backend_buffer_t buf = bk_tensor_buffer(tensor);
    if (tensor->data == NULL) {
        ggml_x_error(NULL, "%s: tensor '%s' is not allocated", fn, tensor->name);
        return NULL;
    }
    if (buf == NULL) {
        ggml_x_error(NULL, "%s: tensor '%s' has no buffer", fn, tensor->name);
        return NULL;
    }
    size_t nbytes = ggml_nbytes(tensor);
    if (offset > nbytes || size > nbytes - offset) {
        ggml_x_error(NULL, "%s: access out of bounds on tensor '%s' (offset %zu + size %zu > nbytes %zu)",
                     fn, tensor->name, offset, size, nbytes);
        return NULL;
    }
    if (data == NULL && size > 0) {
        ggml_x_error(NULL, "%s: data is NULL", fn);
        return NULL;
    }
    return buf;
}

GGML_CALL void ggml_backend_tensor_set(struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    ggml_backend_buffer_t buf = bk_check_access("ggml_backend_tensor_set", tensor, data, offset, size);
    if (buf == NULL || size == 0) {
        return;
    }
    buf->iface.set_tensor(buf, tensor, data, offset, size);
}

GGML_CALL void ggml_backend_tensor_get(const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    ggml_backend_buffer_t buf = bk_check_access("ggml_backend_tensor_get", tensor, data, offset, size);
    if (buf == NULL || size == 0) {
        return;
    }
    buf->iface.get_tensor(buf, tensor, data, offset, size);
}

void ggml_backend_tensor_set_async(ggml_backend_t backend, struct ggml_tensor * tensor, const void * data, size_t offset, size_t size) {
    BK_CHECK_VOID(backend != NULL, "ggml_backend_tensor_set_async: backend is NULL");
    ggml_backend_buffer_t buf = bk_check_access("ggml_backend_tensor_set_async", tensor, data, offset, size);
    if (buf == NULL || size == 0) {
        return;
    }
    if (backend->iface.set_tensor_async != NULL) {
        backend->iface.set_tensor_async(backend, tensor, data, offset, size);
    } else {
        buf->iface.set_tensor(buf, tensor, data, offset, size);
    }
}

void ggml_backend_tensor_get_async(ggml_backend_t backend, const struct ggml_tensor * tensor, void * data, size_t offset, size_t size) {
    BK_CHECK_VOID(backend != NULL, "ggml_backend_tensor_get_async: backend is NULL");
    ggml_backend_buffer_t buf = bk_check_access("ggml_backend_tensor_get_async", tensor, data, offset, size);
    if (buf == NULL || size == 0) {
        return;
    }
    if (backend->iface.get_tensor_async != NULL) {
        backend->iface.get_tensor_async(backend, tensor, data, offset, size);
    } else {
        buf->iface.get_tensor(buf, tensor, data, offset, size);
    }
}

void ggml_backend_synchronize(ggml_backend_t backend) {
    BK_CHECK_VOID(backend != NULL, "ggml_backend_synchronize: backend is NULL");
    if (backend->iface.synchronize != NULL) {
        backend->iface.synchronize(backend);
    }
}

ggml_backend_graph_plan_t ggml_backend_graph_plan_create(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    BK_CHECK(backend != NULL, NULL, "ggml_backend_graph_plan_create: backend is NULL");
    BK_CHECK(cgraph != NULL, NULL, "ggml_backend_graph_plan_create: cgraph is NULL");
    BK_CHECK(backend->iface.graph_plan_create != NULL, NULL,
             "ggml_backend_graph_plan_create: backend %s does not support graph plans", ggml_backend_name(backend));
    return backend->iface.graph_plan_create(backend, cgraph);
}

void ggml_backend_graph_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    if (plan == NULL) {
        return;
    }
    BK_CHECK_VOID(backend != NULL, "ggml_backend_graph_plan_free: backend is NULL");
    BK_CHECK_VOID(backend->iface.graph_plan_free != NULL,
                  "ggml_backend_graph_plan_free: backend %s does not support graph plans", ggml_backend_name(backend));
    backend->iface.graph_plan_free(backend, plan);
}

void ggml_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    BK_CHECK_VOID(backend != NULL, "ggml_backend_graph_plan_compute: backend is NULL");
    BK_CHECK_VOID(plan != NULL, "ggml_backend_graph_plan_compute: plan is NULL");
    BK_CHECK_VOID(backend->iface.graph_plan_compute != NULL,
                  "ggml_backend_graph_plan_compute: backend %s does not support graph plans", ggml_backend_name(backend));
    backend->iface.graph_plan_compute(backend, plan);
}

bool ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    BK_CHECK(backend != NULL, false, "ggml_backend_graph_compute: backend is NULL");
    BK_CHECK(cgraph != NULL, false, "ggml_backend_graph_compute: cgraph is NULL");
    return backend->iface.graph_compute(backend, cgraph);
}

bool ggml_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor * op) {
    BK_CHECK(backend != NULL, false, "ggml_backend_supports_op: backend is NULL");
    BK_CHECK(op != NULL, false, "ggml_backend_supports_op: op is NULL");
    return backend->iface.supports_op(backend, op);
}

void ggml_backend_tensor_copy(struct ggml_tensor * src, struct ggml_tensor * dst) {
    BK_CHECK_VOID(src != NULL && dst != NULL, "ggml_backend_tensor_copy: NULL tensor");
    BK_CHECK_VOID(bk_same_layout(src, dst),
                  "ggml_backend_tensor_copy: tensors '%s' and '%s' have different layouts", src->name, dst->name);
    if (src == dst) {
        return;
    }
    ggml_backend_buffer_t src_buf = bk_tensor_buffer(src);
    ggml_backend_buffer_t dst_buf = bk_tensor_buffer(dst);
    BK_CHECK_VOID(src_buf != NULL && src->data != NULL,
                  "ggml_backend_tensor_copy: source tensor '%s' is not allocated", src->name);
    BK_CHECK_VOID(dst_buf != NULL && dst->data != NULL,
                  "ggml_backend_tensor_copy: destination tensor '%s' is not allocated", dst->name);

    size_t nbytes = ggml_nbytes(src);
    if (ggml_backend_buffer_is_host(src_buf)) {
        ggml_backend_tensor_set(dst, src->data, 0, nbytes);
    } else if (ggml_backend_buffer_is_host(dst_buf)) {
        ggml_backend_tensor_get(src, dst->data, 0, nbytes);
    } else {
        ggml_backend_buffer_copy_tensor(src, dst);
    }
}

void ggml_backend_tensor_copy_async(ggml_backend_t backend, struct ggml_tensor * src, struct ggml_tensor * dst) {
    BK_CHECK_VOID(backend != NULL, "ggml_backend_tensor_copy_async: backend is NULL");
    BK_CHECK_VOID(src != NULL && dst != NULL, "ggml_backend_tensor_copy_async: NULL tensor");
    BK_CHECK_VOID(bk_same_layout(src, dst),
                  "ggml_backend_tensor_copy_async: tensors '%s' and '%s' have different layouts", src->name, dst->name);
    if (src == dst) {
        return;
    }
    ggml_backend_buffer_t src_buf = bk_tensor_buffer(src);
    ggml_backend_buffer_t dst_buf = bk_tensor_buffer(dst);
    BK_CHECK_VOID(src_buf != NULL && src->data != NULL,
                  "ggml_backend_tensor_copy_async: source tensor '%s' is not allocated", src->name);
    BK_CHECK_VOID(dst_buf != NULL && dst->data != NULL,
                  "ggml_backend_tensor_copy_async: destination tensor '%s' is not allocated", dst->name);

    if (backend->iface.cpy_tensor_async != NULL &&
        ggml_backend_buft_supports_backend(src_buf->buft, backend) &&
        ggml_backend_buft_supports_backend(dst_buf->buft, backend) &&
        backend->iface.cpy_tensor_async(backend, src, dst)) {
        return;
    }

    if (ggml_backend_buffer_is_host(src_buf)) {
        ggml_backend_tensor_set_async(backend, dst, src->data, 0, ggml_nbytes(src));
    } else {
        ggml_backend_tensor_copy(src, dst);
    }
}

// ---------------------------------------------------------------------------------------------
// backend registry

#define GGML_X_MAX_BACKENDS_REG 16
#define GGML_X_REG_NAME_MAX     128

struct bk_reg_entry {
    char name[GGML_X_REG_NAME_MAX];
    ggml_backend_init_fn init_fn;
    ggml_backend_buffer_type_t default_buffer_type;
    void * user_data;
};

static struct bk_reg_entry bk_registry[GGML_X_MAX_BACKENDS_REG];
static size_t              bk_registry_count = 0;
static pthread_mutex_t     bk_registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t      bk_registry_once  = PTHREAD_ONCE_INIT;

static bool bk_register_locked(const char * name, ggml_backend_init_fn init_fn,
                               ggml_backend_buffer_type_t default_buffer_type, void * user_data);

GGML_CALL static ggml_backend_t bk_reg_cpu_init(const char * params, void * user_data);

static void bk_registry_init(void) {
    pthread_mutex_lock(&bk_registry_mutex);
    bk_register_locked("CPU", bk_reg_cpu_init, ggml_backend_cpu_buffer_type(), NULL);
    pthread_mutex_unlock(&bk_registry_mutex);
}

static void bk_registry_ensure(void) {
    pthread_once(&bk_registry_once, bk_registry_init);
}

static bool bk_register_locked(const char * name, ggml_backend_init_fn init_fn,
                               ggml_backend_buffer_type_t default_buffer_type, void * user_data) {
    if (bk_registry_count >= GGML_X_MAX_BACKENDS_REG) {
        return false;
    }
    struct bk_reg_entry * e = &bk_registry[bk_registry_count];
    snprintf(e->name, sizeof(e->name), "%s", name);
    e->init_fn             = init_fn;
    e->default_buffer_type = default_buffer_type;
    e->user_data           = user_data;
    bk_registry_count++;
    return true;
}

GGML_CALL void ggml_backend_register(const char * name, ggml_backend_init_fn init_fn, ggml_backend_buffer_type_t default_buffer_type, void * user_data) {
    BK_CHECK_VOID(name != NULL && name[0] != '\0', "ggml_backend_register: name is empty");
    BK_CHECK_VOID(strlen(name) < GGML_X_REG_NAME_MAX, "ggml_backend_register: name too long (%zu bytes)", strlen(name));
    BK_CHECK_VOID(init_fn != NULL, "ggml_backend_register: init_fn is NULL");
    bk_registry_ensure();

    pthread_mutex_lock(&bk_registry_mutex);
    bool ok = bk_register_locked(name, init_fn, default_buffer_type, user_data);
    pthread_mutex_unlock(&bk_registry_mutex);
    BK_CHECK_VOID(ok, "ggml_backend_register: registry full (%d backends), cannot add %s", GGML_X_MAX_BACKENDS_REG, name);
}

size_t ggml_backend_reg_get_count(void) {
    bk_registry_ensure();
    pthread_mutex_lock(&bk_registry_mutex);
    size_t n = bk_registry_count;
    pthread_mutex_unlock(&bk_registry_mutex);
    return n;
}

size_t ggml_backend_reg_find_by_name(const char * name) {
    bk_registry_ensure();
    if (name == NULL) {
        return SIZE_MAX;
    }
    size_t found = SIZE_MAX;
    pthread_mutex_lock(&bk_registry_mutex);
    for (size_t i = 0; i < bk_registry_count; i++) {
        if (strcmp(bk_registry[i].name, name) == 0) {
            found = i;
            break;
        }
    }
    pthread_mutex_unlock(&bk_registry_mutex);
    return found;
}

// copy out entry i; false after reporting when i is out of range
static bool bk_reg_entry_get(const char * fn, size_t i, struct bk_reg_entry * out) {
    bk_registry_ensure();
    pthread_mutex_lock(&bk_registry_mutex);
    size_t n = bk_registry_count;
    if (i < n) {
        *out = bk_registry[i];
    }
    pthread_mutex_unlock(&bk_registry_mutex);
    if (i >= n) {
        ggml_x_error(NULL, "%s: index %zu out of range (%zu backends registered)", fn, i, n);
        return false;
    }
    return true;
}

ggml_backend_t ggml_backend_reg_init_backend_from_str(const char * backend_str) {
    BK_CHECK(backend_str != NULL, NULL, "ggml_backend_reg_init_backend_from_str: backend_str is NULL");

    char name[GGML_X_REG_NAME_MAX];
    const char * params = strchr(backend_str, ':');
    size_t name_len = params != NULL ? (size_t) (params - backend_str) : strlen(backend_str);
    if (params != NULL) {
        params++;
    } else {
        params = "";
    }
    if (name_len >= sizeof(name)) {
        bk_soft_error("ggml_backend_reg_init_backend_from_str: backend name too long in '%s'", backend_str);
        return NULL;
    }
    memcpy(name, backend_str, name_len);
    name[name_len] = '\0';

    size_t i = ggml_backend_reg_find_by_name(name);
    if (i == SIZE_MAX) {
        bk_soft_error("ggml_backend_reg_init_backend_from_str: backend %s not found", name);
        return NULL;
    }
    return ggml_backend_reg_init_backend(i, params);
}

const char * ggml_backend_reg_get_name(size_t i) {
    bk_registry_ensure();
    pthread_mutex_lock(&bk_registry_mutex);
    size_t n = bk_registry_count;
    // entries are never removed, so the name stays valid after unlocking
    const char * name = i < n ? bk_registry[i].name : NULL;
    pthread_mutex_unlock(&bk_registry_mutex);
    BK_CHECK(name != NULL, NULL, "ggml_backend_reg_get_name: index %zu out of range (%zu backends registered)", i, n);
    return name;
}

ggml_backend_t ggml_backend_reg_init_backend(size_t i, const char * params) {
    struct bk_reg_entry e;
    if (!bk_reg_entry_get("ggml_backend_reg_init_backend", i, &e)) {
        return NULL;
    }
    return e.init_fn(params != NULL ? params : "", e.user_data);
}

ggml_backend_buffer_type_t ggml_backend_reg_get_default_buffer_type(size_t i) {
    struct bk_reg_entry e;
    if (!bk_reg_entry_get("ggml_backend_reg_get_default_buffer_type", i, &e)) {
        return NULL;
    }
    return e.default_buffer_type;
}

ggml_backend_buffer_t ggml_backend_reg_alloc_buffer(size_t i, size_t size) {
    struct bk_reg_entry e;
    if (!bk_reg_entry_get("ggml_backend_reg_alloc_buffer", i, &e)) {
        return NULL;
    }
    BK_CHECK(e.default_buffer_type != NULL, NULL,
             "ggml_backend_reg_alloc_buffer: backend %s has no default buffer type", e.name);
    return ggml_backend_buft_alloc_buffer(e.default_buffer_type, size);
}

// ---------------------------------------------------------------------------------------------
// CPU buffer type: 64-byte aligned host memory

#define GGML_X_CPU_ALIGNMENT 64 // wide enough for AVX-512 loads

GGML_CALL static const char * cpu_buffer_get_name(ggml_backend_buffer_t buffer) {
    GGML_UNUSED(buffer);
    return "CPU";
}

GGML_CALL static void * cpu_buffer_get_base(ggml_backend_buffer_t buffer) {
    return buffer->context;
}

GGML_CALL static void cpu_buffer_free_buffer(ggml_backend_buffer_t buffer) {
    free(buffer->context);
}

GGML_CALL static void cpu_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor,
                                            const void * data, size_t offset, size_t size) {
    GGML_UNUSED(buffer);
    memcpy((char *) tensor->data + offset, data, size);
}

GGML_CALL static void cpu_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor,
                                            void * data, size_t offset, size_t size) {
    GGML_UNUSED(buffer);
    memcpy(data, (const char *) tensor->data + offset, size);
}

GGML_CALL static bool cpu_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src,
                                            struct ggml_tensor * dst) {
    GGML_UNUSED(buffer);
    ggml_backend_buffer_t src_buf = bk_tensor_buffer(src);
    if (src_buf == NULL || !ggml_backend_buffer_is_host(src_buf)) {
        return false;
    }
    memcpy(dst->data, src->data, ggml_nbytes(src));
    return true;
}

GGML_CALL static void cpu_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    memset(buffer->context, value, buffer->size);
}

static const struct ggml_backend_buffer_i cpu_buffer_iface = {
    /* .get_name    = */ cpu_buffer_get_name,
    /* .free_buffer = */ cpu_buffer_free_buffer,
    /* .get_base    = */ cpu_buffer_get_base,
    /* .init_tensor = */ NULL,
    /* .set_tensor  = */ cpu_buffer_set_tensor,
    /* .get_tensor  = */ cpu_buffer_get_tensor,
    /* .cpy_tensor  = */ cpu_buffer_cpy_tensor,
    /* .clear       = */ cpu_buffer_clear,
    /* .reset       = */ NULL,
};

// buffers wrapping caller memory: the memory is not ours to free
static const struct ggml_backend_buffer_i cpu_buffer_from_ptr_iface = {
    /* .get_name    = */ cpu_buffer_get_name,
    /* .free_buffer = */ NULL,
    /* .get_base    = */ cpu_buffer_get_base,
    /* .init_tensor = */ NULL,
    /* .set_tensor  = */ cpu_buffer_set_tensor,
    /* .get_tensor  = */ cpu_buffer_get_tensor,
    /* .cpy_tensor  = */ cpu_buffer_cpy_tensor,
    /* .clear       = */ cpu_buffer_clear,
    /* .reset       = */ NULL,
};

GGML_CALL static const char * cpu_buft_get_name(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return "CPU";
}

GGML_CALL static ggml_backend_buffer_t cpu_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    // round up to the alignment (and allocate something even for size 0, so the base is valid)
    if (size > SIZE_MAX - GGML_X_CPU_ALIGNMENT) {
        bk_soft_error("ggml_backend_cpu_buffer_type_alloc_buffer: size %zu too large", size);
        return NULL;
    }
    size_t alloc_size = GGML_PAD(size == 0 ? 1 : size, GGML_X_CPU_ALIGNMENT);
    void * data = NULL;
    int rc = posix_memalign(&data, GGML_X_CPU_ALIGNMENT, alloc_size);
    if (rc != 0 || data == NULL) {
        bk_soft_error("ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size %zu", size);
        return NULL;
    }
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, cpu_buffer_iface, data, size);
    if (buffer == NULL) {
        free(data);
    }
    return buffer;
}

GGML_CALL static size_t cpu_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return GGML_X_CPU_ALIGNMENT;
}

GGML_CALL static bool cpu_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    GGML_UNUSED(buft);
    return ggml_backend_is_cpu(backend);
}

GGML_CALL static bool cpu_buft_is_host(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return true;
}

GGML_CALL ggml_backend_buffer_type_t ggml_backend_cpu_buffer_type(void) {
    static struct ggml_backend_buffer_type cpu_buft = {
        /* .iface = */ {
            /* .get_name         = */ cpu_buft_get_name,
            /* .alloc_buffer     = */ cpu_buft_alloc_buffer,
            /* .get_alignment    = */ cpu_buft_get_alignment,
            /* .get_alloc_size   = */ NULL, // ggml_nbytes
            /* .supports_backend = */ cpu_buft_supports_backend,
            /* .is_host          = */ cpu_buft_is_host,
        },
        /* .context = */ NULL,
    };
    return &cpu_buft;
}

GGML_CALL ggml_backend_buffer_t ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size) {
    BK_CHECK(ptr != NULL || size == 0, NULL, "ggml_backend_cpu_buffer_from_ptr: ptr is NULL (size %zu)", size);
    return ggml_backend_buffer_init(ggml_backend_cpu_buffer_type(), cpu_buffer_from_ptr_iface, ptr, size);
}

#ifdef GGML_USE_CPU_HBM

// high-bandwidth memory through memkind's hbwmalloc

#include <hbwmalloc.h>

GGML_CALL static const char * cpu_hbm_buffer_get_name(ggml_backend_buffer_t buffer) {
    GGML_UNUSED(buffer);
    return "CPU_HBM";
}

GGML_CALL static void cpu_hbm_buffer_free_buffer(ggml_backend_buffer_t buffer) {
    hbw_free(buffer->context);
}

GGML_CALL static const char * cpu_hbm_buft_get_name(ggml_backend_buffer_type_t buft) {
    GGML_UNUSED(buft);
    return "CPU_HBM";
}

GGML_CALL static ggml_backend_buffer_t cpu_hbm_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    void * data = NULL;
    if (hbw_posix_memalign(&data, GGML_X_CPU_ALIGNMENT, size == 0 ? GGML_X_CPU_ALIGNMENT : size) != 0) {
        bk_soft_error("ggml_backend_cpu_hbm_buffer_type_alloc_buffer: failed to allocate HBM buffer of size %zu", size);
        return NULL;
    }
    struct ggml_backend_buffer_i iface = cpu_buffer_iface;
    iface.get_name    = cpu_hbm_buffer_get_name;
    iface.free_buffer = cpu_hbm_buffer_free_buffer;
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, iface, data, size);
    if (buffer == NULL) {
        hbw_free(data);
    }
    return buffer;
}

ggml_backend_buffer_type_t ggml_backend_cpu_hbm_buffer_type(void) {
    static struct ggml_backend_buffer_type cpu_hbm_buft = {
        /* .iface = */ {
            /* .get_name         = */ cpu_hbm_buft_get_name,
            /* .alloc_buffer     = */ cpu_hbm_buft_alloc_buffer,
            /* .get_alignment    = */ cpu_buft_get_alignment,
            /* .get_alloc_size   = */ NULL,
            /* .supports_backend = */ cpu_buft_supports_backend,
            /* .is_host          = */ cpu_buft_is_host,
        },
        /* .context = */ NULL,
    };
    return &cpu_hbm_buft;
}

#endif // GGML_USE_CPU_HBM

// ---------------------------------------------------------------------------------------------
// CPU backend

struct cpu_backend_ctx {
    int    n_threads;
    struct ggml_x_threadpool * pool; // created on the first compute
    void * work_data;                // scratch reused across computes
    size_t work_size;
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
            bk_soft_error("ggml_backend_cpu: failed to create a thread pool of %d threads", ctx->n_threads);
            return false;
        }
    }
    return true;
}

// grow (*data, *size) to at least need bytes
static bool cpu_backend_reserve(void ** data, size_t * size, size_t need) {
    if (need <= *size) {
        return true;
    }
    void * p = NULL;
    if (posix_memalign(&p, GGML_X_CPU_ALIGNMENT, GGML_PAD(need, GGML_X_CPU_ALIGNMENT)) != 0 || p == NULL) {
        bk_soft_error("ggml_backend_cpu: failed to allocate %zu bytes of work memory", need);
        return false;
    }
    free(*data);
    *data = p;
    *size = need;
    return true;
}

GGML_CALL static ggml_backend_graph_plan_t cpu_backend_graph_plan_create(ggml_backend_t backend, const struct ggml_cgraph * cgraph) {
    struct cpu_backend_ctx * ctx = backend->context;
    struct cpu_backend_plan * plan = calloc(1, sizeof(*plan));
    if (plan == NULL) {
        bk_soft_error("ggml_backend_cpu_graph_plan_create: out of memory");
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
    return ggml_x_cpu_graph_compute(ctx->pool, cgraph, ctx->n_threads, ctx->work_data, ctx->work_size, NULL, NULL);
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
        bk_soft_error("ggml_backend_cpu_init: out of memory");
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

void ggml_backend_cpu_set_n_threads(ggml_backend_t backend_cpu, int n_threads) {
    BK_CHECK_VOID(ggml_backend_is_cpu(backend_cpu), "ggml_backend_cpu_set_n_threads: not a CPU backend (%s)",
                  ggml_backend_name(backend_cpu));
    BK_CHECK_VOID(n_threads >= 1, "ggml_backend_cpu_set_n_threads: n_threads must be >= 1 (got %d)", n_threads);
    struct cpu_backend_ctx * ctx = backend_cpu->context;
    ctx->n_threads = n_threads;
    if (ctx->pool != NULL) {
        ggml_x_threadpool_resize(ctx->pool, n_threads);
    }
}

// registry entry: params is a comma-separated list of key=value; "threads=N" is understood
GGML_CALL static ggml_backend_t bk_reg_cpu_init(const char * params, void * user_data) {
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
                    bk_soft_error("ggml_backend_reg_cpu_init: invalid thread count '%s'", num);
                    return NULL;
                }
                n_threads = (int) v;
            } else {
                bk_soft_error("ggml_backend_reg_cpu_init: unknown parameter '%.*s'", (int) len, p);
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

// ---------------------------------------------------------------------------------------------
// tensor placement utilities

void ggml_backend_tensor_alloc(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, void * addr) {
    BK_CHECK_VOID(buffer != NULL, "ggml_backend_tensor_alloc: buffer is NULL");
    BK_CHECK_VOID(tensor != NULL, "ggml_backend_tensor_alloc: tensor is NULL");
    BK_CHECK_VOID(tensor->buffer == NULL, "ggml_backend_tensor_alloc: tensor '%s' already has a buffer", tensor->name);
    BK_CHECK_VOID(tensor->data == NULL, "ggml_backend_tensor_alloc: tensor '%s' already has data", tensor->name);
    BK_CHECK_VOID(tensor->view_src == NULL, "ggml_backend_tensor_alloc: tensor '%s' is a view", tensor->name);

    char * base = ggml_backend_buffer_get_base(buffer);
    size_t size = ggml_backend_buffer_get_size(buffer);
    size_t need = ggml_backend_buffer_get_alloc_size(buffer, tensor);
    BK_CHECK_VOID(base != NULL && addr != NULL && (char *) addr >= base && (size_t) ((char *) addr - base) <= size &&
                  need <= size - (size_t) ((char *) addr - base),
                  "ggml_backend_tensor_alloc: tensor '%s' (%zu bytes at %p) does not fit in buffer %s [%p, +%zu)",
                  tensor->name, need, addr, ggml_backend_buffer_name(buffer), (void *) base, size);

    tensor->buffer = buffer;
    tensor->data   = addr;
    ggml_backend_buffer_init_tensor(buffer, tensor);
}

void ggml_backend_view_init(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    BK_CHECK_VOID(buffer != NULL, "ggml_backend_view_init: buffer is NULL");
    BK_CHECK_VOID(tensor != NULL, "ggml_backend_view_init: tensor is NULL");
    BK_CHECK_VOID(tensor->buffer == NULL, "ggml_backend_view_init: tensor '%s' already has a buffer", tensor->name);
    BK_CHECK_VOID(tensor->view_src != NULL, "ggml_backend_view_init: tensor '%s' is not a view", tensor->name);
    BK_CHECK_VOID(tensor->view_src->buffer != NULL && tensor->view_src->data != NULL,
                  "ggml_backend_view_init: source '%s' of view '%s' is not allocated", tensor->view_src->name, tensor->name);
    // data may already be set when the view was created from an allocated tensor; recompute it
    tensor->buffer = buffer;
    tensor->data   = (char *) tensor->view_src->data + tensor->view_offs;
    ggml_backend_buffer_init_tensor(buffer, tensor);
}
