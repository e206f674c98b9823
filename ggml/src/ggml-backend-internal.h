// ggml-backend-internal.h - helpers shared by the files of the backend layer
// (ggml-backend*.c, the CPU backend in cpu/) and the declarations the registry needs to list the
// built-in backends. Nothing here is public API.

#ifndef GGML_BACKEND_INTERNAL_H
#define GGML_BACKEND_INTERNAL_H

#include "ggml-backend-impl.h"
#include "ggml-alloc.h"

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Resource failures (out of memory, unknown backend name) are not programming errors: like the
// reference, print a message and let the caller see NULL; in recoverable mode also record it
// (ggml_x_error). Defined in ggml-backend.c.
void ggml_x_backend_soft_error(const char * fmt, ...) GGML_ATTRIBUTE_FORMAT(1, 2);

// the buffer that holds a tensor's memory (views: their source's buffer)
static inline ggml_backend_buffer_t ggml_x_tensor_buffer(const struct ggml_tensor * tensor) {
    if (tensor->buffer != NULL) {
        return tensor->buffer;
    }
    return tensor->view_src != NULL ? tensor->view_src->buffer : NULL;
}

// ops whose result is a view of their source: they compute nothing
static inline bool ggml_x_is_view_op(enum ggml_op op) {
    return op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

// the hash set and graph allocation of ggml-alloc.c, shared with the scheduler and graph copy
size_t ggml_x_alloc_hash_size(size_t min_size);
size_t ggml_x_alloc_hash_find(const struct ggml_hash_set * set, const struct ggml_tensor * t);
size_t ggml_x_alloc_hash_insert(struct ggml_hash_set * set, struct ggml_tensor * t);
size_t ggml_x_alloc_hash_insert_new(struct ggml_hash_set * set, struct ggml_tensor * t, bool * inserted);
bool   ggml_x_gallocr_alloc_graph_n(ggml_gallocr_t galloc, struct ggml_cgraph * graph,
                                    struct ggml_hash_set hash_set, ggml_tallocr_t * hash_node_talloc,
                                    const size_t * slots, size_t n_slots);

// An allocator owning buffer (measure: a measure allocator) with the caller's alignment instead
// of the buffer type's; NULL when out of memory (buffer freed). ggml-alloc.c.
ggml_tallocr_t ggml_x_tallocr_new_aligned(ggml_backend_buffer_t buffer, bool measure, size_t alignment);

// The legacy allocator over talloc (and a new graph allocator); NULL when out of memory
// (talloc freed). ggml-alloc.c.
ggml_allocr_t ggml_x_allocr_wrap(ggml_tallocr_t talloc);

// Built-in backends, registered by ggml-backend-reg.c on first use. Each backend compiled into
// the library defines its registry init function (params: "key=value,..."); its buffer types
// are public (ggml-backend.h).
GGML_CALL ggml_backend_t ggml_x_backend_reg_cpu_init(const char * params, void * user_data); // cpu/backend.c

#ifdef __cplusplus
}
#endif

#endif // GGML_BACKEND_INTERNAL_H
