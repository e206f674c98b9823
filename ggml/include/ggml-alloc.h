// ggml-alloc.h - placing tensors in memory: tensor allocators (tallocr), graph allocators
// (gallocr) and the legacy allocr pair. API-compatible with ggml b3bcd556.

#ifndef GGML_ALLOC_H
#define GGML_ALLOC_H

#include "ggml.h"

#ifdef  __cplusplus
extern "C" {
#endif

struct ggml_backend;
struct ggml_backend_buffer;
struct ggml_backend_buffer_type;

//
// legacy API: one tensor allocator plus one graph allocator in a single object
//

typedef struct ggml_allocr * ggml_allocr_t;

// initialize allocator for use with CPU backend only
GGML_API ggml_allocr_t ggml_allocr_new(void * data, size_t size, size_t alignment);
GGML_API ggml_allocr_t ggml_allocr_new_measure(size_t alignment);

// initialize allocator for use with ggml-backend
GGML_API ggml_allocr_t ggml_allocr_new_from_buffer(struct ggml_backend_buffer * buffer);
GGML_API ggml_allocr_t ggml_allocr_new_from_backend(struct ggml_backend * backend, size_t size); // allocates an owned buffer
GGML_API ggml_allocr_t ggml_allocr_new_measure_from_backend(struct ggml_backend * backend);

GGML_API struct ggml_backend_buffer * ggml_allocr_get_buffer(ggml_allocr_t alloc);

// order in which the nodes of a graph are allocated (optional)
GGML_API void   ggml_allocr_set_parse_seq(ggml_allocr_t alloc, const int * list, int n);

GGML_API void   ggml_allocr_free       (ggml_allocr_t alloc);
GGML_API bool   ggml_allocr_is_measure (ggml_allocr_t alloc);
GGML_API void   ggml_allocr_reset      (ggml_allocr_t alloc);
GGML_API void   ggml_allocr_alloc      (ggml_allocr_t alloc, struct ggml_tensor * tensor);
GGML_API size_t ggml_allocr_max_size   (ggml_allocr_t alloc);

GGML_API size_t ggml_allocr_alloc_graph(ggml_allocr_t alloc, struct ggml_cgraph * graph);

//
// tensor allocator: hands out ranges of one buffer (or measures how much one would need)
//

typedef struct ggml_tallocr * ggml_tallocr_t;

GGML_API ggml_tallocr_t ggml_tallocr_new(void * data, size_t size, size_t alignment);
GGML_API ggml_tallocr_t ggml_tallocr_new_measure(size_t alignment);
GGML_API ggml_tallocr_t ggml_tallocr_new_from_buft(struct ggml_backend_buffer_type * buft, size_t size);
GGML_API ggml_tallocr_t ggml_tallocr_new_from_backend(struct ggml_backend * backend, size_t size); // allocates an owned buffer
GGML_API ggml_tallocr_t ggml_tallocr_new_from_buffer(struct ggml_backend_buffer * buffer);
GGML_API ggml_tallocr_t ggml_tallocr_new_measure_from_buft(struct ggml_backend_buffer_type * buft);
GGML_API ggml_tallocr_t ggml_tallocr_new_measure_from_backend(struct ggml_backend * backend);

GGML_API struct ggml_backend_buffer * ggml_tallocr_get_buffer(ggml_tallocr_t talloc);

GGML_API void   ggml_tallocr_free       (ggml_tallocr_t talloc);
GGML_API bool   ggml_tallocr_is_measure (ggml_tallocr_t talloc);
GGML_API void   ggml_tallocr_reset      (ggml_tallocr_t talloc);
GGML_API void   ggml_tallocr_alloc      (ggml_tallocr_t talloc, struct ggml_tensor * tensor);
GGML_API size_t ggml_tallocr_max_size   (ggml_tallocr_t talloc);

//
// graph allocator: assigns memory to the nodes of a graph, reusing memory of tensors that are
// no longer needed
//

typedef struct ggml_gallocr * ggml_gallocr_t;

GGML_API ggml_gallocr_t ggml_gallocr_new(void);
GGML_API void   ggml_gallocr_free(ggml_gallocr_t galloc);

// Only memory that the graph allocator itself hands out is freed or reused in place: tensors
// that have memory before the call (inputs, weights) are never overwritten. In-place reuse does
// not set view_src, so a graph can be allocated again (after a reset of the tallocr); a
// measure pass leaves the graph without memory. Running out of space is reported through
// ggml_x_error (recoverable mode: ggml_gallocr_alloc_graph returns 0). A source without memory
// that no node computes (an input nobody placed) gets memory before any node and keeps it for
// the whole graph, so values set in it before the compute survive.
GGML_API void   ggml_gallocr_set_parse_seq(ggml_gallocr_t galloc, const int * list, int n);
GGML_API size_t ggml_gallocr_alloc_graph(ggml_gallocr_t galloc, ggml_tallocr_t talloc, struct ggml_cgraph * graph);

// allocate the graph with one tensor allocator per node: hash_node_talloc[i] is the allocator of
// the tensor hash_set.keys[i]; every tensor of the graph (nodes and sources) must be in the set,
// which uses linear probing on (address >> 4) % size (the layout the scheduler builds)
GGML_API void   ggml_gallocr_alloc_graph_n(
                    ggml_gallocr_t galloc,
                    struct ggml_cgraph * graph,
                    struct ggml_hash_set hash_set,
                    ggml_tallocr_t * hash_node_talloc);


//
// utils
//

// allocate every tensor of a no_alloc context in one new buffer; returns NULL when the context
// has no tensor without data
GGML_API struct ggml_backend_buffer * ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, struct ggml_backend_buffer_type * buft);
GGML_API struct ggml_backend_buffer * ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, struct ggml_backend * backend);

#ifdef  __cplusplus
}
#endif

#endif // GGML_ALLOC_H
