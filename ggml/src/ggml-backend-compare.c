// ggml-backend-compare.c - graph copy to another backend (ggml_backend_graph_copy) and the
// node-by-node comparison of two backends (ggml_backend_compare_graph_backend).

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-backend-internal.h"
#include "ggml-impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct graph_copy_state {
    struct ggml_hash_set set;
    struct ggml_tensor ** copies; // [set.size]
    bool * init;                  // [set.size]
    struct ggml_context * ctx_allocated;
    struct ggml_context * ctx_unallocated;
    bool full;
};

static struct ggml_tensor * graph_copy_dup(struct graph_copy_state * st, struct ggml_tensor * src) {
    size_t slot = ggml_x_alloc_hash_find(&st->set, src);
    if (slot != SIZE_MAX) {
        return st->copies[slot];
    }
    if (src->data == NULL && src->view_src == NULL) {
        ggml_x_error(NULL, "ggml_backend_graph_copy: tensor '%s' is not allocated (the graph must be allocated)", src->name);
        return NULL;
    }
    slot = ggml_x_alloc_hash_insert(&st->set, src);
    if (slot == SIZE_MAX) {
        st->full = true;
        return NULL;
    }
    st->copies[slot] = NULL;

    bool is_view = src->view_src != NULL;
    struct ggml_tensor * dst = ggml_dup_tensor(is_view ? st->ctx_unallocated : st->ctx_allocated, src);
    if (dst == NULL) {
        return NULL;
    }
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        dst->nb[d] = src->nb[d];
    }
    if (is_view) {
        dst->view_src = graph_copy_dup(st, src->view_src);
        if (dst->view_src == NULL) {
            return NULL;
        }
        dst->view_offs = src->view_offs;
    }
    dst->op = src->op;
    memcpy(dst->op_params, src->op_params, sizeof(dst->op_params));
    ggml_set_name(dst, src->name);
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        if (src->src[j] == NULL) {
            break;
        }
        dst->src[j] = graph_copy_dup(st, src->src[j]);
        if (dst->src[j] == NULL) {
            return NULL;
        }
    }
    st->copies[slot] = dst;
    return dst;
}

static bool graph_copy_init(struct graph_copy_state * st, struct ggml_tensor * src) {
    size_t slot = ggml_x_alloc_hash_find(&st->set, src);
    if (slot == SIZE_MAX || st->init[slot]) {
        return true;
    }
    st->init[slot] = true;
    struct ggml_tensor * dst = st->copies[slot];
    if (dst->view_src != NULL) {
        if (!graph_copy_init(st, src->view_src)) {
            return false;
        }
        ggml_backend_view_init(dst->view_src->buffer, dst);
        if (dst->buffer == NULL) {
            return false;
        }
    } else if (ggml_x_tensor_buffer(src) == NULL) {
        // plain context memory
        ggml_backend_tensor_set(dst, src->data, 0, ggml_nbytes(src));
    } else {
        ggml_backend_tensor_copy(src, dst);
    }
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        if (src->src[j] == NULL) {
            break;
        }
        if (!graph_copy_init(st, src->src[j])) {
            return false;
        }
    }
    return true;
}

static void graph_copy_state_free(struct graph_copy_state * st) {
    free(st->set.keys);
    free(st->copies);
    free(st->init);
}

struct ggml_backend_graph_copy ggml_backend_graph_copy(ggml_backend_t backend, struct ggml_cgraph * graph) {
    struct ggml_backend_graph_copy none = { NULL, NULL, NULL, NULL };
    GGML_X_CHECK_RET(NULL, backend != NULL, none, "ggml_backend_graph_copy: backend is NULL");
    GGML_X_CHECK_RET(NULL, graph != NULL, none, "ggml_backend_graph_copy: graph is NULL");

    size_t want = 4 * ((size_t) graph->n_nodes + (size_t) graph->n_leafs) + 64;
    if (graph->visited_hash_table.size > want) {
        want = graph->visited_hash_table.size;
    }
    for (int attempt = 0; attempt < 8; attempt++, want *= 2) {
        struct graph_copy_state st = { 0 };
        st.set.size = ggml_x_alloc_hash_size(want);
        st.set.keys = calloc(st.set.size, sizeof(st.set.keys[0]));
        st.copies   = calloc(st.set.size, sizeof(st.copies[0]));
        st.init     = calloc(st.set.size, sizeof(st.init[0]));
        size_t graph_size = (size_t) (graph->size > graph->n_nodes ? graph->size : graph->n_nodes);
        struct ggml_init_params params = {
            /* .mem_size   = */ ggml_tensor_overhead() * st.set.size + ggml_graph_overhead_custom(graph_size, false),
            /* .mem_buffer = */ NULL,
            /* .no_alloc   = */ true,
        };
        if (st.set.keys == NULL || st.copies == NULL || st.init == NULL ||
            (st.ctx_allocated = ggml_init(params)) == NULL || (st.ctx_unallocated = ggml_init(params)) == NULL) {
            ggml_x_backend_soft_error("ggml_backend_graph_copy: out of memory");
            ggml_free(st.ctx_allocated);
            graph_copy_state_free(&st);
            return none;
        }

        bool ok = true;
        for (int i = 0; ok && i < graph->n_nodes; i++) {
            ok = graph_copy_dup(&st, graph->nodes[i]) != NULL;
        }
        if (!ok) {
            ggml_free(st.ctx_allocated);
            ggml_free(st.ctx_unallocated);
            graph_copy_state_free(&st);
            if (st.full) {
                continue; // retry with a larger set
            }
            return none;
        }

        ggml_backend_buffer_t buffer = NULL;
        if (ggml_get_first_tensor(st.ctx_allocated) != NULL) {
            buffer = ggml_backend_alloc_ctx_tensors(st.ctx_allocated, backend);
        }
        struct ggml_cgraph * gcopy = NULL;
        if (buffer != NULL) {
            for (int i = 0; ok && i < graph->n_nodes; i++) {
                ok = graph_copy_init(&st, graph->nodes[i]);
            }
            gcopy = ok ? ggml_new_graph_custom(st.ctx_allocated, graph_size, false) : NULL;
        }
        if (gcopy == NULL) {
            ggml_x_backend_soft_error("ggml_backend_graph_copy: failed to copy the graph to backend %s", ggml_backend_name(backend));
            ggml_backend_buffer_free(buffer);
            ggml_free(st.ctx_allocated);
            ggml_free(st.ctx_unallocated);
            graph_copy_state_free(&st);
            return none;
        }
        for (int i = 0; i < graph->n_nodes; i++) {
            gcopy->nodes[i] = st.copies[ggml_x_alloc_hash_find(&st.set, graph->nodes[i])];
        }
        gcopy->n_nodes = graph->n_nodes;
        graph_copy_state_free(&st);
        return (struct ggml_backend_graph_copy) { buffer, st.ctx_allocated, st.ctx_unallocated, gcopy };
    }
    ggml_x_backend_soft_error("ggml_backend_graph_copy: graph too large");
    return none;
}

void ggml_backend_graph_copy_free(struct ggml_backend_graph_copy copy) {
    ggml_backend_buffer_free(copy.buffer);
    ggml_free(copy.ctx_allocated);
    ggml_free(copy.ctx_unallocated);
}

bool ggml_backend_compare_graph_backend(ggml_backend_t backend1, ggml_backend_t backend2, struct ggml_cgraph * graph, ggml_backend_eval_callback callback, void * user_data) {
    GGML_X_CHECK_RET(NULL, backend1 != NULL && backend2 != NULL, false, "ggml_backend_compare_graph_backend: backend is NULL");
    GGML_X_CHECK_RET(NULL, graph != NULL, false, "ggml_backend_compare_graph_backend: graph is NULL");
    GGML_X_CHECK_RET(NULL, callback != NULL, false, "ggml_backend_compare_graph_backend: callback is NULL");

    struct ggml_backend_graph_copy copy = ggml_backend_graph_copy(backend2, graph);
    if (copy.buffer == NULL) {
        return false;
    }
    struct ggml_cgraph * g1 = graph;
    struct ggml_cgraph * g2 = copy.graph;
    bool ok = true;
    for (int i = 0; i < g1->n_nodes; i++) {
        struct ggml_tensor * t1 = g1->nodes[i];
        struct ggml_tensor * t2 = g2->nodes[i];

        struct ggml_cgraph g1v = ggml_graph_view(g1, i, i + 1);
        struct ggml_cgraph g2v = ggml_graph_view(g2, i, i + 1);
        if (!ggml_backend_graph_compute(backend1, &g1v) || !ggml_backend_graph_compute(backend2, &g2v)) {
            ggml_x_backend_soft_error("ggml_backend_compare_graph_backend: node %d (%s) failed to compute", i, t1->name);
            ok = false;
            break;
        }
        if (ggml_x_is_view_op(t1->op)) {
            continue;
        }
        if (!callback(i, t1, t2, user_data)) {
            break;
        }
    }
    ggml_backend_graph_copy_free(copy);
    return ok;
}
