// ggml-backend.c - the generic layer of the backend API: buffer types, buffers, backends and
// tensor placement in buffers. Every backend (cpu/backend.c, cuda/, metal/, the Go buffer types
// of csrc/) plugs into these through the vtables of ggml-backend-impl.h. The registry is in
// ggml-backend-reg.c, the scheduler in ggml-backend-sched.c, graph copy and backend comparison
// in ggml-backend-compare.c.
//
// Every function that takes caller input validates it: a bad call reports through ggml_x_error
// with the calling thread's mode (abort by default, record and return in recoverable mode).

#include "ggml-backend-impl.h"
#include "ggml-backend-internal.h"
#include "ggml-impl.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// error helpers

// Resource failures (out of memory, unknown backend name) are not programming errors: like the
// reference, print a message and let the caller see NULL; in recoverable mode also record it.
void ggml_x_backend_soft_error(const char * fmt, ...) {
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

// ---------------------------------------------------------------------------------------------
// buffer type

const char * ggml_backend_buft_name(ggml_backend_buffer_type_t buft) {
    GGML_X_CHECK_RET(NULL, buft != NULL, NULL, "ggml_backend_buft_name: buft is NULL");
    return buft->iface.get_name(buft);
}

GGML_CALL ggml_backend_buffer_t ggml_backend_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    GGML_X_CHECK_RET(NULL, buft != NULL, NULL, "ggml_backend_buft_alloc_buffer: buft is NULL");
    const uint64_t serial = ggml_x_error_serial();
    ggml_backend_buffer_t buffer = buft->iface.alloc_buffer(buft, size);
    if (buffer == NULL && ggml_x_error_serial() == serial) {
        // the buffer type failed without saying why
        ggml_x_backend_soft_error("ggml_backend_buft_alloc_buffer: buffer type %s failed to allocate %zu bytes",
                      buft->iface.get_name(buft), size);
    }
    return buffer;
}

size_t ggml_backend_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    GGML_X_CHECK_RET(NULL, buft != NULL, 0, "ggml_backend_buft_get_alignment: buft is NULL");
    return buft->iface.get_alignment(buft);
}

GGML_CALL size_t ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t buft, struct ggml_tensor * tensor) {
    GGML_X_CHECK_RET(NULL, buft != NULL, 0, "ggml_backend_buft_get_alloc_size: buft is NULL");
    GGML_X_CHECK_RET(NULL, tensor != NULL, 0, "ggml_backend_buft_get_alloc_size: tensor is NULL");
    if (buft->iface.get_alloc_size != NULL) {
        return buft->iface.get_alloc_size(buft, tensor);
    }
    return ggml_nbytes(tensor);
}

bool ggml_backend_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    GGML_X_CHECK_RET(NULL, buft != NULL, false, "ggml_backend_buft_supports_backend: buft is NULL");
    GGML_X_CHECK_RET(NULL, backend != NULL, false, "ggml_backend_buft_supports_backend: backend is NULL");
    if (buft->iface.supports_backend == NULL) {
        return false;
    }
    return buft->iface.supports_backend(buft, backend);
}

bool ggml_backend_buft_is_host(ggml_backend_buffer_type_t buft) {
    GGML_X_CHECK_RET(NULL, buft != NULL, false, "ggml_backend_buft_is_host: buft is NULL");
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
    GGML_X_CHECK_RET(NULL, iface.get_base != NULL, NULL, "ggml_backend_buffer_init: iface.get_base is NULL");

    ggml_backend_buffer_t buffer = calloc(1, sizeof(*buffer));
    if (buffer == NULL) {
        ggml_x_backend_soft_error("ggml_backend_buffer_init: out of memory");
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
    GGML_X_CHECK_RET(NULL, buffer != NULL, NULL, "ggml_backend_buffer_name: buffer is NULL");
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
    GGML_X_CHECK_RET(NULL, buffer != NULL, NULL, "ggml_backend_buffer_get_base: buffer is NULL");
    if (buffer->size == 0) {
        // an empty buffer has no memory to point at
        return NULL;
    }
    return buffer->iface.get_base(buffer);
}

size_t ggml_backend_buffer_get_size(ggml_backend_buffer_t buffer) {
    GGML_X_CHECK_RET(NULL, buffer != NULL, 0, "ggml_backend_buffer_get_size: buffer is NULL");
    return buffer->size;
}

GGML_CALL void ggml_backend_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    GGML_X_CHECK_VOID(NULL, buffer != NULL, "ggml_backend_buffer_init_tensor: buffer is NULL");
    GGML_X_CHECK_VOID(NULL, tensor != NULL, "ggml_backend_buffer_init_tensor: tensor is NULL");
    if (buffer->iface.init_tensor != NULL) {
        buffer->iface.init_tensor(buffer, tensor);
    }
}

size_t ggml_backend_buffer_get_alignment(ggml_backend_buffer_t buffer) {
    GGML_X_CHECK_RET(NULL, buffer != NULL, 0, "ggml_backend_buffer_get_alignment: buffer is NULL");
    return ggml_backend_buft_get_alignment(buffer->buft);
}

size_t ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    GGML_X_CHECK_RET(NULL, buffer != NULL, 0, "ggml_backend_buffer_get_alloc_size: buffer is NULL");
    return ggml_backend_buft_get_alloc_size(buffer->buft, tensor);
}

void ggml_backend_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    GGML_X_CHECK_VOID(NULL, buffer != NULL, "ggml_backend_buffer_clear: buffer is NULL");
    if (buffer->size == 0) {
        return;
    }
    buffer->iface.clear(buffer, value);
}

bool ggml_backend_buffer_is_host(ggml_backend_buffer_t buffer) {
    GGML_X_CHECK_RET(NULL, buffer != NULL, false, "ggml_backend_buffer_is_host: buffer is NULL");
    if (buffer->buft == NULL) {
        return false;
    }
    return ggml_backend_buft_is_host(buffer->buft);
}

void ggml_backend_buffer_set_usage(ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage) {
    GGML_X_CHECK_VOID(NULL, buffer != NULL, "ggml_backend_buffer_set_usage: buffer is NULL");
    GGML_X_CHECK_VOID(NULL, usage == GGML_BACKEND_BUFFER_USAGE_ANY || usage == GGML_BACKEND_BUFFER_USAGE_WEIGHTS,
                      "ggml_backend_buffer_set_usage: invalid usage (%d)", (int) usage);
    buffer->usage = usage;
}

ggml_backend_buffer_type_t ggml_backend_buffer_get_type(ggml_backend_buffer_t buffer) {
    GGML_X_CHECK_RET(NULL, buffer != NULL, NULL, "ggml_backend_buffer_get_type: buffer is NULL");
    return buffer->buft;
}

void ggml_backend_buffer_reset(ggml_backend_buffer_t buffer) {
    GGML_X_CHECK_VOID(NULL, buffer != NULL, "ggml_backend_buffer_reset: buffer is NULL");
    if (buffer->iface.reset != NULL) {
        buffer->iface.reset(buffer);
    }
}

bool ggml_backend_buffer_copy_tensor(const struct ggml_tensor * src, struct ggml_tensor * dst) {
    GGML_X_CHECK_RET(NULL, src != NULL && dst != NULL, false, "ggml_backend_buffer_copy_tensor: NULL tensor");
    ggml_backend_buffer_t src_buf = ggml_x_tensor_buffer(src);
    ggml_backend_buffer_t dst_buf = ggml_x_tensor_buffer(dst);
    GGML_X_CHECK_RET(NULL, src_buf != NULL && src->data != NULL, false,
                     "ggml_backend_buffer_copy_tensor: source tensor '%s' is not allocated", src->name);
    GGML_X_CHECK_RET(NULL, dst_buf != NULL && dst->data != NULL, false,
                     "ggml_backend_buffer_copy_tensor: destination tensor '%s' is not allocated", dst->name);
    GGML_X_CHECK_RET(NULL, ggml_x_same_layout(src, dst), false,
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
        ggml_x_backend_soft_error("ggml_backend_buffer_copy_tensor: out of memory (%zu bytes)", nbytes);
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
    GGML_X_CHECK_RET(NULL, backend != NULL, NULL, "ggml_backend_get_default_buffer_type: backend is NULL");
    return backend->iface.get_default_buffer_type(backend);
}

ggml_backend_buffer_t ggml_backend_alloc_buffer(ggml_backend_t backend, size_t size) {
    GGML_X_CHECK_RET(NULL, backend != NULL, NULL, "ggml_backend_alloc_buffer: backend is NULL");
    return ggml_backend_buft_alloc_buffer(ggml_backend_get_default_buffer_type(backend), size);
}

size_t ggml_backend_get_alignment(ggml_backend_t backend) {
    GGML_X_CHECK_RET(NULL, backend != NULL, 0, "ggml_backend_get_alignment: backend is NULL");
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
    ggml_backend_buffer_t buf = ggml_x_tensor_buffer(tensor);
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
    GGML_X_CHECK_VOID(NULL, backend != NULL, "ggml_backend_tensor_set_async: backend is NULL");
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
    GGML_X_CHECK_VOID(NULL, backend != NULL, "ggml_backend_tensor_get_async: backend is NULL");
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
    GGML_X_CHECK_VOID(NULL, backend != NULL, "ggml_backend_synchronize: backend is NULL");
    if (backend->iface.synchronize != NULL) {
        backend->iface.synchronize(backend);
    }
}

ggml_backend_graph_plan_t ggml_backend_graph_plan_create(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    GGML_X_CHECK_RET(NULL, backend != NULL, NULL, "ggml_backend_graph_plan_create: backend is NULL");
    GGML_X_CHECK_RET(NULL, cgraph != NULL, NULL, "ggml_backend_graph_plan_create: cgraph is NULL");
    GGML_X_CHECK_RET(NULL, backend->iface.graph_plan_create != NULL, NULL,
                     "ggml_backend_graph_plan_create: backend %s does not support graph plans", ggml_backend_name(backend));
    return backend->iface.graph_plan_create(backend, cgraph);
}

void ggml_backend_graph_plan_free(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    if (plan == NULL) {
        return;
    }
    GGML_X_CHECK_VOID(NULL, backend != NULL, "ggml_backend_graph_plan_free: backend is NULL");
    GGML_X_CHECK_VOID(NULL, backend->iface.graph_plan_free != NULL,
                      "ggml_backend_graph_plan_free: backend %s does not support graph plans", ggml_backend_name(backend));
    backend->iface.graph_plan_free(backend, plan);
}

void ggml_backend_graph_plan_compute(ggml_backend_t backend, ggml_backend_graph_plan_t plan) {
    GGML_X_CHECK_VOID(NULL, backend != NULL, "ggml_backend_graph_plan_compute: backend is NULL");
    GGML_X_CHECK_VOID(NULL, plan != NULL, "ggml_backend_graph_plan_compute: plan is NULL");
    GGML_X_CHECK_VOID(NULL, backend->iface.graph_plan_compute != NULL,
                      "ggml_backend_graph_plan_compute: backend %s does not support graph plans", ggml_backend_name(backend));
    backend->iface.graph_plan_compute(backend, plan);
}

bool ggml_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    GGML_X_CHECK_RET(NULL, backend != NULL, false, "ggml_backend_graph_compute: backend is NULL");
    GGML_X_CHECK_RET(NULL, cgraph != NULL, false, "ggml_backend_graph_compute: cgraph is NULL");
    const uint64_t serial = ggml_x_error_serial();
    const bool ok = backend->iface.graph_compute(backend, cgraph);
    if (!ok && ggml_x_error_serial() == serial) {
        // the backend failed without saying why
        ggml_x_backend_soft_error("ggml_backend_graph_compute: backend %s failed to compute the graph (%d nodes)",
                      ggml_backend_name(backend), cgraph->n_nodes);
    }
    return ok;
}

bool ggml_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor * op) {
    GGML_X_CHECK_RET(NULL, backend != NULL, false, "ggml_backend_supports_op: backend is NULL");
    GGML_X_CHECK_RET(NULL, op != NULL, false, "ggml_backend_supports_op: op is NULL");
    return backend->iface.supports_op(backend, op);
}

void ggml_backend_tensor_copy(struct ggml_tensor * src, struct ggml_tensor * dst) {
    GGML_X_CHECK_VOID(NULL, src != NULL && dst != NULL, "ggml_backend_tensor_copy: NULL tensor");
    GGML_X_CHECK_VOID(NULL, ggml_x_same_layout(src, dst),
                      "ggml_backend_tensor_copy: tensors '%s' and '%s' have different layouts", src->name, dst->name);
    if (src == dst) {
        return;
    }
    ggml_backend_buffer_t src_buf = ggml_x_tensor_buffer(src);
    ggml_backend_buffer_t dst_buf = ggml_x_tensor_buffer(dst);
    GGML_X_CHECK_VOID(NULL, src_buf != NULL && src->data != NULL,
                      "ggml_backend_tensor_copy: source tensor '%s' is not allocated", src->name);
    GGML_X_CHECK_VOID(NULL, dst_buf != NULL && dst->data != NULL,
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
    GGML_X_CHECK_VOID(NULL, backend != NULL, "ggml_backend_tensor_copy_async: backend is NULL");
    GGML_X_CHECK_VOID(NULL, src != NULL && dst != NULL, "ggml_backend_tensor_copy_async: NULL tensor");
    GGML_X_CHECK_VOID(NULL, ggml_x_same_layout(src, dst),
                      "ggml_backend_tensor_copy_async: tensors '%s' and '%s' have different layouts", src->name, dst->name);
    if (src == dst) {
        return;
    }
    ggml_backend_buffer_t src_buf = ggml_x_tensor_buffer(src);
    ggml_backend_buffer_t dst_buf = ggml_x_tensor_buffer(dst);
    GGML_X_CHECK_VOID(NULL, src_buf != NULL && src->data != NULL,
                      "ggml_backend_tensor_copy_async: source tensor '%s' is not allocated", src->name);
    GGML_X_CHECK_VOID(NULL, dst_buf != NULL && dst->data != NULL,
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
// tensor placement utilities

void ggml_backend_tensor_alloc(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, void * addr) {
    GGML_X_CHECK_VOID(NULL, buffer != NULL, "ggml_backend_tensor_alloc: buffer is NULL");
    GGML_X_CHECK_VOID(NULL, tensor != NULL, "ggml_backend_tensor_alloc: tensor is NULL");
    GGML_X_CHECK_VOID(NULL, tensor->buffer == NULL, "ggml_backend_tensor_alloc: tensor '%s' already has a buffer", tensor->name);
    GGML_X_CHECK_VOID(NULL, tensor->data == NULL, "ggml_backend_tensor_alloc: tensor '%s' already has data", tensor->name);
    GGML_X_CHECK_VOID(NULL, tensor->view_src == NULL, "ggml_backend_tensor_alloc: tensor '%s' is a view", tensor->name);

    char * base = ggml_backend_buffer_get_base(buffer);
    size_t size = ggml_backend_buffer_get_size(buffer);
    size_t need = ggml_backend_buffer_get_alloc_size(buffer, tensor);
    GGML_X_CHECK_VOID(NULL, base != NULL && addr != NULL && (char *) addr >= base && (size_t) ((char *) addr - base) <= size &&
                      need <= size - (size_t) ((char *) addr - base),
                      "ggml_backend_tensor_alloc: tensor '%s' (%zu bytes at %p) does not fit in buffer %s [%p, +%zu)",
                  tensor->name, need, addr, ggml_backend_buffer_name(buffer), (void *) base, size);

    tensor->buffer = buffer;
    tensor->data   = addr;
    ggml_backend_buffer_init_tensor(buffer, tensor);
}

void ggml_backend_view_init(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    GGML_X_CHECK_VOID(NULL, buffer != NULL, "ggml_backend_view_init: buffer is NULL");
    GGML_X_CHECK_VOID(NULL, tensor != NULL, "ggml_backend_view_init: tensor is NULL");
    GGML_X_CHECK_VOID(NULL, tensor->buffer == NULL, "ggml_backend_view_init: tensor '%s' already has a buffer", tensor->name);
    GGML_X_CHECK_VOID(NULL, tensor->view_src != NULL, "ggml_backend_view_init: tensor '%s' is not a view", tensor->name);
    GGML_X_CHECK_VOID(NULL, tensor->view_src->buffer != NULL && tensor->view_src->data != NULL,
                      "ggml_backend_view_init: source '%s' of view '%s' is not allocated", tensor->view_src->name, tensor->name);
    // data may already be set when the view was created from an allocated tensor; recompute it
    tensor->buffer = buffer;
    tensor->data   = (char *) tensor->view_src->data + tensor->view_offs;
    ggml_backend_buffer_init_tensor(buffer, tensor);
}
