// ggml-backend-sched.c - the scheduler: splits a graph between several backends, copies the
// inputs each split needs from other backends, allocates the whole graph in one go and computes
// the splits in order.
//
// The reference algorithm: pass 1 pins nodes whose memory already lives in a backend's buffer
// and nodes that use weights (buffers with usage WEIGHTS) to that backend; pass 2 spreads
// assignments to neighbouring nodes, first those of the preferred (non-last) backends up and
// down, then all of them; pass 3 gives the remaining sources (inputs, views) the backend of
// their consumer or of their view source; pass 4 cuts the node list into splits of one backend
// each and makes a copy, on the split's backend, of every source that lives elsewhere.
// The graph with those copies is allocated in one go by the graph allocator, then every split
// copies its inputs and runs on its backend.
//
// Changes from the reference:
//   * a node is never given to a backend whose supports_op rejects it: pinning and spreading
//     skip such backends and fall back to the next backend, in priority order, that supports
//     the op (and can use the node's memory when the node was placed in advance);
//   * views always follow their view source; an input that nobody placed goes with its first
//     consumer (the reference left such tensors without a backend and asserted);
//   * exceeding the limits (16 backends, 256 splits, 16 inputs per split, the graph size given
//     to ggml_backend_sched_new) is reported through ggml_x_error, not an abort;
//   * the sources that pass 4 redirects to copies are restored after the compute, and memory
//     the scheduler handed out in an earlier compute is placed anew, so the same graph can be
//     computed again (after a reset);
//   * computing before ggml_backend_sched_init_measure measures the graph first;
//   * the cost follows the graph, not the graph_size: the table is cleared over the slots in
//     use only, and the split of the last graph is reused for a graph with the same key (see
//     sched_make_key), so a graph recomputed with new inputs is not split again; the
//     assignments of ggml_backend_sched_set_node_backend are kept in a list until the split.

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-backend-internal.h"
#include "ggml-impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GGML_X_SCHED_MAX_BACKENDS     16
#define GGML_X_SCHED_MAX_SPLITS       256
#define GGML_X_SCHED_MAX_SPLIT_INPUTS 16

// internal, for the tests: how many times the scheduler split a graph, and how many times it
// reused the plan of the previous split instead
int64_t ggml_x_backend_sched_n_splits_made(ggml_backend_sched_t sched);
int64_t ggml_x_backend_sched_n_plans_reused(ggml_backend_sched_t sched);

struct sched_split {
    int backend_id;
    int i_start;
    int i_end;
    struct ggml_tensor * inputs[GGML_X_SCHED_MAX_SPLIT_INPUTS];
    int n_inputs;
    struct ggml_cgraph graph; // view of the nodes [i_start, i_end)
};

// a node source redirected to a copy, to put back after the compute
struct sched_patch {
    struct ggml_tensor * node;
    int j;
    struct ggml_tensor * orig;
    struct ggml_tensor * repl;
};

// a ggml_backend_sched_set_node_backend call since the last reset
struct sched_assign {
    struct ggml_tensor * node;
    int id;
};

struct ggml_backend_sched {
    bool is_reset;
    bool failed; // a hash set overflow happened in this pass

    int n_backends;
    ggml_backend_t             backends[GGML_X_SCHED_MAX_BACKENDS];
    ggml_backend_buffer_type_t bufts[GGML_X_SCHED_MAX_BACKENDS];
    ggml_tallocr_t             tallocs[GGML_X_SCHED_MAX_BACKENDS];

    ggml_gallocr_t galloc;

    size_t graph_size;
    struct ggml_hash_set hash_set;
    ggml_tallocr_t * node_talloc;                                     // [hash_set.size]
    struct ggml_tensor * (*node_copies)[GGML_X_SCHED_MAX_BACKENDS];    // [hash_set.size][backend]
    size_t * used;   // the occupied slots of hash_set, in insertion order [hash_set.size]
    size_t n_used;

    // the caller's assignments since the last reset, in call order (applied at the next split)
    struct sched_assign * assigns;
    int n_assigns;
    int cap_assigns;
    int n_assigns_split; // how many of them the last split saw

    // The plan of the last split (the table above, the splits, the copies and the patches) is
    // reused when the next graph computed has the same key: every field of every node and leaf
    // that the split reads, and the assignments. plan_valid is cleared whenever something the
    // key does not cover changes (the allocators are replaced, a split or an allocation fails).
    bool plan_valid;
    uint64_t * key;      // the plan's key
    size_t key_len;
    uint64_t * key_new;  // the key of the graph being computed
    size_t key_new_len;
    size_t key_cap;      // capacity of both
    int64_t n_splits_made;
    int64_t n_plans_reused;

    struct ggml_cgraph * graph; // the graph with the input copies, allocated in one go (&gcopy)
    struct ggml_cgraph gcopy;
    struct ggml_tensor ** gcopy_nodes;
    size_t gcopy_cap;
    struct sched_split splits[GGML_X_SCHED_MAX_SPLITS];
    int n_splits;

    struct ggml_context * ctx; // copies and the graph copy
    void * ctx_mem;
    size_t ctx_mem_size;

    struct sched_patch * patches; // the plan's patches (kept after they are undone, for reuse)
    int n_patches;
    int cap_patches;
    bool patched; // the patches are applied to the graph now

    bool (*abort_cb)(void * data); // ggml_x_backend_sched_set_abort_callback
    void * abort_data;
};

// ops that compute nothing
static bool sched_is_noop(enum ggml_op op) {
    return op == GGML_OP_NONE || ggml_x_is_view_op(op);
}

static size_t sched_slot(ggml_backend_sched_t sched, struct ggml_tensor * t) {
    bool inserted;
    size_t slot = ggml_x_alloc_hash_insert_new(&sched->hash_set, t, &inserted);
    if (inserted) {
        sched->used[sched->n_used++] = slot;
    }
    if (slot == SIZE_MAX && !sched->failed) {
        sched->failed = true;
        ggml_x_error(NULL, "ggml_backend_sched: the graph has more tensors than the scheduler can track "
                     "(hash size %zu; create the scheduler with a larger graph_size)", sched->hash_set.size);
    }
    return slot;
}

static int sched_talloc_id(ggml_backend_sched_t sched, ggml_tallocr_t talloc) {
    for (int i = 0; i < sched->n_backends; i++) {
        if (sched->tallocs[i] == talloc) {
            return i;
        }
    }
    return -1;
}

static int sched_backend_id(ggml_backend_sched_t sched, ggml_backend_t backend) {
    for (int i = 0; i < sched->n_backends; i++) {
        if (sched->backends[i] == backend) {
            return i;
        }
    }
    return -1;
}

// backend id assigned to t, -1 when none
static int sched_get(ggml_backend_sched_t sched, struct ggml_tensor * t) {
    size_t slot = sched_slot(sched, t);
    if (slot == SIZE_MAX || sched->node_talloc[slot] == NULL) {
        return -1;
    }
    return sched_talloc_id(sched, sched->node_talloc[slot]);
}

static void sched_set(ggml_backend_sched_t sched, struct ggml_tensor * t, int id) {
    size_t slot = sched_slot(sched, t);
    if (slot != SIZE_MAX) {
        sched->node_talloc[slot] = id >= 0 ? sched->tallocs[id] : NULL;
    }
}

static bool sched_supports(ggml_backend_sched_t sched, int id, const struct ggml_tensor * node) {
    if (sched_is_noop(node->op)) {
        return true;
    }
    return ggml_backend_supports_op(sched->backends[id], node);
}

// buffer that holds a node's memory when it was placed before the compute (NULL otherwise)
static ggml_backend_buffer_t sched_prealloc_buffer(const struct ggml_tensor * node) {
    if (node->buffer != NULL) {
        return node->buffer;
    }
    return node->view_src != NULL ? node->view_src->buffer : NULL;
}

// the first backend, starting at `preferred` and then in priority order (lower priorities
// first, then the higher ones), that supports the node and can use its memory; -1 when none
static int sched_pick(ggml_backend_sched_t sched, const struct ggml_tensor * node, int preferred) {
    ggml_backend_buffer_t buf = sched_prealloc_buffer(node);
    for (int k = 0; k < sched->n_backends; k++) {
        int id = (preferred + k) % sched->n_backends;
        if (!sched_supports(sched, id, node)) {
            continue;
        }
        if (buf != NULL && id != preferred && !ggml_backend_buft_supports_backend(buf->buft, sched->backends[id])) {
            continue;
        }
        return id;
    }
    return -1;
}

// backend whose memory a buffer is: one of the scheduler's own buffers, or else the first
// backend that can use the buffer's type; -1 for no buffer, -2 (after reporting) when no
// backend can use it
static int sched_id_from_buffer(ggml_backend_sched_t sched, ggml_backend_buffer_t buffer, const struct ggml_tensor * t) {
    if (buffer == NULL) {
        return -1;
    }
    for (int i = 0; i < sched->n_backends; i++) {
        if (ggml_tallocr_get_buffer(sched->tallocs[i]) == buffer) {
            return i;
        }
    }
    for (int i = 0; i < sched->n_backends; i++) {
        if (ggml_backend_buft_supports_backend(buffer->buft, sched->backends[i])) {
            return i;
        }
    }
    ggml_x_error(NULL, "ggml_backend_sched: tensor '%s' is in a %s buffer that no backend of the scheduler can use",
                 t->name, ggml_backend_buffer_name(buffer));
    return -2;
}

// pass 1 for one tensor: -1 when nothing pins it, -2 after an error
static int sched_id_from_cur(ggml_backend_sched_t sched, struct ggml_tensor * node) {
    // memory placed in advance (e.g. a KV cache update): run where that memory is
    ggml_backend_buffer_t buf = sched_prealloc_buffer(node);
    int id = sched_id_from_buffer(sched, buf, node);
    if (id == -2) {
        return -2;
    }
    if (id >= 0) {
        int pick = sched_pick(sched, node, id);
        if (pick < 0) {
            ggml_x_error(NULL, "ggml_backend_sched: no backend that can use the %s buffer of node '%s' supports its op %s",
                         ggml_backend_buffer_name(buf), node->name, ggml_op_desc(node));
            return -2;
        }
        return pick;
    }
    // ops that use weights run with the weights
    for (int j = 0; j < GGML_MAX_SRC; j++) {
        const struct ggml_tensor * src = node->src[j];
        if (src == NULL) {
            break;
        }
        ggml_backend_buffer_t sbuf = ggml_x_tensor_buffer(src);
        if (sbuf != NULL && sbuf->usage == GGML_BACKEND_BUFFER_USAGE_WEIGHTS) {
            id = sched_id_from_buffer(sched, sbuf, src);
            if (id < 0) {
                return -2;
            }
            int pick = sched_pick(sched, node, id);
            if (pick < 0) {
                ggml_x_error(NULL, "ggml_backend_sched: no backend supports op %s (node '%s')", ggml_op_desc(node), node->name);
                return -2;
            }
            return pick;
        }
    }
    return -1;
}

// node sources redirected to copies go back to the tensors the caller built (the list stays,
// for a reuse of the plan)
static void sched_restore(ggml_backend_sched_t sched) {
    if (!sched->patched) {
        return;
    }
    for (int i = sched->n_patches - 1; i >= 0; i--) {
        sched->patches[i].node->src[sched->patches[i].j] = sched->patches[i].orig;
    }
    sched->patched = false;
}

// the plan's patches again, on a graph whose key matched
static void sched_repatch(ggml_backend_sched_t sched) {
    for (int i = 0; i < sched->n_patches; i++) {
        sched->patches[i].node->src[sched->patches[i].j] = sched->patches[i].repl;
    }
    sched->patched = true;
}

static bool sched_patch(ggml_backend_sched_t sched, struct ggml_tensor * node, int j, struct ggml_tensor * repl) {
    if (sched->n_patches == sched->cap_patches) {
        int cap = sched->cap_patches > 0 ? 2 * sched->cap_patches : 256;
        struct sched_patch * p = realloc(sched->patches, sizeof(*p) * (size_t) cap);
        if (p == NULL) {
            ggml_x_backend_soft_error("ggml_backend_sched: out of memory");
            return false;
        }
        sched->patches     = p;
        sched->cap_patches = cap;
    }
    sched->patches[sched->n_patches++] = (struct sched_patch) { node, j, node->src[j], repl };
    node->src[j] = repl;
    sched->patched = true;
    return true;
}

// forgets the placements and the assignments; the plan (which the next compute may reuse)
// stays
static void sched_reset(ggml_backend_sched_t sched) {
    for (int i = 0; i < sched->n_backends; i++) {
        ggml_tallocr_reset(sched->tallocs[i]);
    }
    sched->n_assigns = 0;
    sched->is_reset = true;
}

// empties the table: only the slots in use are cleared, so the cost follows the graphs
// computed, not the size the scheduler was created for
static void sched_clear_table(ggml_backend_sched_t sched) {
    for (size_t q = 0; q < sched->n_used; q++) {
        const size_t k = sched->used[q];
        sched->hash_set.keys[k] = NULL;
        sched->node_talloc[k]   = NULL;
        memset(sched->node_copies[k], 0, sizeof(sched->node_copies[k]));
    }
    sched->n_used     = 0;
    sched->plan_valid = false;
    sched->n_patches  = 0;
    sched->patched    = false;
}

// a fresh context for the input copies
static bool sched_new_ctx(ggml_backend_sched_t sched) {
    size_t need = ggml_tensor_overhead() * (GGML_X_SCHED_MAX_SPLITS * GGML_X_SCHED_MAX_SPLIT_INPUTS) + 1024;
    ggml_free(sched->ctx);
    sched->ctx = NULL;
    if (sched->ctx_mem_size < need) {
        void * mem = malloc(need);
        if (mem == NULL) {
            ggml_x_backend_soft_error("ggml_backend_sched: out of memory (%zu bytes)", need);
            return false;
        }
        free(sched->ctx_mem);
        sched->ctx_mem      = mem;
        sched->ctx_mem_size = need;
    }
    struct ggml_init_params params = {
        /* .mem_size   = */ sched->ctx_mem_size,
        /* .mem_buffer = */ sched->ctx_mem,
        /* .no_alloc   = */ true,
    };
    sched->ctx = ggml_init(params);
    if (sched->ctx == NULL) {
        ggml_x_backend_soft_error("ggml_backend_sched: failed to create the context for the input copies");
        return false;
    }
    return true;
}

// memory this scheduler handed out in an earlier compute is not valid any more
static void sched_forget_own_memory(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    ggml_backend_buffer_t own[GGML_X_SCHED_MAX_BACKENDS];
    int n_own = 0;
    for (int b = 0; b < sched->n_backends; b++) {
        if (!ggml_tallocr_is_measure(sched->tallocs[b])) {
            own[n_own++] = ggml_tallocr_get_buffer(sched->tallocs[b]);
        }
    }
    if (n_own == 0) {
        return;
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        if (node->op == GGML_OP_NONE || node->buffer == NULL) {
            continue;
        }
        for (int b = 0; b < n_own; b++) {
            if (node->buffer == own[b]) {
                node->data   = NULL;
                node->buffer = NULL;
                break;
            }
        }
    }
}

// words of the key of a graph, at most (see sched_make_key)
#define SCHED_KEY_HEAD  4
#define SCHED_KEY_LEAF  13
#define SCHED_KEY_NODE  (23 + 4 * GGML_MAX_SRC)

static uint64_t sched_key_ptr(const void * p) {
    return (uint64_t) (uintptr_t) p;
}

static uint64_t sched_key_usage(ggml_backend_buffer_t buf) {
    return buf != NULL ? (uint64_t) buf->usage : UINT64_MAX;
}

// Writes into key_new everything the split of graph reads: per leaf and per node its address,
// op, type, shape, strides, op parameters, view source and offset, the buffers (and their
// usage) of its memory and of its sources, which backends support it; then the caller's
// assignments. Two graphs with equal keys are split the same way. False when out of memory.
static bool sched_make_key(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    const size_t need = SCHED_KEY_HEAD + 2 * (size_t) sched->n_assigns + SCHED_KEY_LEAF * (size_t) graph->n_leafs +
                        SCHED_KEY_NODE * (size_t) graph->n_nodes;
    if (sched->key_cap < need) {
        size_t cap = need + need / 2;
        uint64_t * a = malloc(sizeof(uint64_t) * cap);
        uint64_t * b = malloc(sizeof(uint64_t) * cap);
        if (a == NULL || b == NULL) {
            free(a);
            free(b);
            return false;
        }
        if (sched->plan_valid) {
            memcpy(a, sched->key, sizeof(uint64_t) * sched->key_len);
        }
        free(sched->key);
        free(sched->key_new);
        sched->key     = a;
        sched->key_new = b;
        sched->key_cap = cap;
    }
    uint64_t * k = sched->key_new;
    *k++ = (uint64_t) graph->n_nodes;
    *k++ = (uint64_t) graph->n_leafs;
    *k++ = (uint64_t) sched->n_assigns;
    *k++ = (uint64_t) sched->n_backends;
    for (int i = 0; i < graph->n_leafs; i++) {
        const struct ggml_tensor * t = graph->leafs[i];
        ggml_backend_buffer_t buf = ggml_x_tensor_buffer(t);
        *k++ = sched_key_ptr(t);
        *k++ = sched_key_ptr(buf);
        *k++ = sched_key_usage(buf);
        *k++ = sched_key_ptr(t->view_src);
        *k++ = (uint64_t) t->type;
        for (int d = 0; d < GGML_MAX_DIMS; d++) {
            *k++ = (uint64_t) t->ne[d];
        }
        for (int d = 0; d < GGML_MAX_DIMS; d++) {
            *k++ = (uint64_t) t->nb[d];
        }
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        const struct ggml_tensor * t = graph->nodes[i];
        *k++ = sched_key_ptr(t);
        *k++ = (uint64_t) t->op | (uint64_t) t->type << 32;
        for (int d = 0; d < GGML_MAX_DIMS; d++) {
            *k++ = (uint64_t) t->ne[d];
        }
        for (int d = 0; d < GGML_MAX_DIMS; d++) {
            *k++ = (uint64_t) t->nb[d];
        }
        *k++ = sched_key_ptr(t->view_src);
        *k++ = (uint64_t) t->view_offs;
        *k++ = sched_key_ptr(sched_prealloc_buffer(t));
        memcpy(k, t->op_params, sizeof(t->op_params));
        k += GGML_MAX_OP_PARAMS / sizeof(uint64_t);
        uint64_t mask = 0;
        if (!sched_is_noop(t->op)) {
            for (int b = 0; b < sched->n_backends; b++) {
                mask |= (uint64_t) ggml_backend_supports_op(sched->backends[b], t) << b;
            }
        }
        *k++ = mask;
        uint64_t * n_src = k++;
        *n_src = 0;
        for (int j = 0; j < GGML_MAX_SRC && t->src[j] != NULL; j++) {
            const struct ggml_tensor * src = t->src[j];
            ggml_backend_buffer_t buf = ggml_x_tensor_buffer(src);
            *k++ = sched_key_ptr(src);
            *k++ = sched_key_ptr(src->view_src);
            *k++ = sched_key_ptr(buf);
            *k++ = sched_key_usage(buf);
            (*n_src)++;
        }
    }
    for (int i = 0; i < sched->n_assigns; i++) {
        *k++ = sched_key_ptr(sched->assigns[i].node);
        *k++ = (uint64_t) sched->assigns[i].id;
    }
    sched->key_new_len = (size_t) (k - sched->key_new);
    return true;
}

// the plan's input copies still have their sources' types, shapes and strides
static bool sched_copies_match(ggml_backend_sched_t sched) {
    for (int s = 0; s < sched->n_splits; s++) {
        const struct sched_split * split = &sched->splits[s];
        for (int j = 0; j < split->n_inputs; j++) {
            const struct ggml_tensor * input = split->inputs[j];
            size_t slot = ggml_x_alloc_hash_find(&sched->hash_set, input);
            if (slot == SIZE_MAX) {
                return false;
            }
            const struct ggml_tensor * copy = sched->node_copies[slot][split->backend_id];
            if (copy == NULL || copy->type != input->type) {
                return false;
            }
            for (int d = 0; d < GGML_MAX_DIMS; d++) {
                if (copy->ne[d] != input->ne[d] || copy->nb[d] != input->nb[d]) {
                    return false;
                }
            }
        }
    }
    return true;
}

// assign a backend to every node and cut the graph into splits
static bool sched_split_graph(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    sched->n_splits = 0;
    sched->graph    = NULL;

    if ((size_t) graph->n_nodes + (size_t) graph->n_leafs + GGML_X_SCHED_MAX_SPLITS * GGML_X_SCHED_MAX_SPLIT_INPUTS > sched->hash_set.size) {
        ggml_x_error(NULL, "ggml_backend_sched: graph of %d nodes and %d leafs is too large for a scheduler created with graph_size %zu",
                     graph->n_nodes, graph->n_leafs, sched->graph_size);
        return false;
    }
    if (!sched_new_ctx(sched)) {
        return false;
    }

    // the caller's assignments
    for (int i = 0; i < sched->n_assigns; i++) {
        sched_set(sched, sched->assigns[i].node, sched->assigns[i].id);
    }
    if (sched->failed) {
        return false;
    }

    // pass 1: tensors placed in advance, and ops with weights
    for (int i = 0; i < graph->n_leafs; i++) {
        struct ggml_tensor * leaf = graph->leafs[i];
        if (sched_get(sched, leaf) >= 0) {
            continue; // the caller's assignment
        }
        int id = sched_id_from_cur(sched, leaf);
        if (id == -2) {
            return false;
        }
        sched_set(sched, leaf, id);
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        if (sched_get(sched, node) < 0) {
            int id = sched_id_from_cur(sched, node);
            if (id == -2) {
                return false;
            }
            sched_set(sched, node, id);
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src == NULL) {
                break;
            }
            if (sched_get(sched, src) < 0) {
                int id = sched_id_from_cur(sched, src);
                if (id == -2) {
                    return false;
                }
                sched_set(sched, src, id);
            }
        }
    }
    if (sched->failed) {
        return false;
    }

    // pass 2: spread the assignments to neighbouring nodes; first the backends other than the
    // last one (the CPU, usually), upwards then downwards, then every backend the same way
    const int last = sched->n_backends - 1;
    for (int round = 0; round < 4; round++) {
        bool skip_last = round < 2;
        bool upwards   = round % 2 == 0;
        int cur = -1;
        for (int k = 0; k < graph->n_nodes; k++) {
            int i = upwards ? graph->n_nodes - 1 - k : k;
            struct ggml_tensor * node = graph->nodes[i];
            if (ggml_x_is_view_op(node->op)) {
                continue;
            }
            int id = sched_get(sched, node);
            if (id >= 0) {
                cur = skip_last && id == last ? -1 : id;
            } else if (cur >= 0 && sched_supports(sched, cur, node)) {
                sched_set(sched, node, cur);
            }
        }
    }
    // what is left (ops no neighbour's backend supports, or nothing pinned at all): the first
    // backend in priority order that supports it; a caller's assignment that the backend
    // rejects moves the same way
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        if (ggml_x_is_view_op(node->op)) {
            continue;
        }
        int id = sched_get(sched, node);
        if (id >= 0 && sched_supports(sched, id, node)) {
            continue;
        }
        int pick = sched_pick(sched, node, id >= 0 ? id : 0);
        if (pick < 0) {
            ggml_x_error(NULL, "ggml_backend_sched: no backend of the scheduler supports op %s (node '%s')",
                         ggml_op_desc(node), node->name);
            return false;
        }
        sched_set(sched, node, pick);
    }

    // pass 3: views go with their view source, other sources with their consumer
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        int cur = sched_get(sched, node);
        if (node->view_src != NULL && cur < 0) {
            cur = sched_get(sched, node->view_src);
            sched_set(sched, node, cur);
        }
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src == NULL) {
                break;
            }
            if (sched_get(sched, src) >= 0) {
                continue;
            }
            struct ggml_tensor * root = src->view_src != NULL ? src->view_src : src;
            int rid = sched_get(sched, root);
            if (rid < 0) {
                // nobody placed it: it goes with its first consumer
                rid = cur >= 0 ? cur : last;
                sched_set(sched, root, rid);
            }
            sched_set(sched, src, rid);
        }
    }
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        if (node->view_src != NULL) {
            int rid = sched_get(sched, node->view_src);
            if (rid < 0) {
                rid = sched_get(sched, node) >= 0 ? sched_get(sched, node) : last;
                sched_set(sched, node->view_src, rid);
            }
            sched_set(sched, node, rid); // memory and view stay together
        } else if (sched_get(sched, node) < 0) {
            sched_set(sched, node, last);
        }
        for (int j = 0; j < GGML_MAX_SRC && node->src[j] != NULL; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src->view_src != NULL) {
                sched_set(sched, src, sched_get(sched, src->view_src));
            }
        }
    }
    if (sched->failed) {
        return false;
    }

    // pass 4: splits and input copies
    int cur_split = 0;
    int cur_id = -1;
    for (int i = 0; i < graph->n_nodes; i++) {
        if (!ggml_x_is_view_op(graph->nodes[i]->op)) {
            cur_id = sched_get(sched, graph->nodes[i]);
            break;
        }
    }
    if (graph->n_nodes > 0 && cur_id < 0) {
        cur_id = sched_get(sched, graph->nodes[0]); // views only
    }
    if (graph->n_nodes > 0) {
        sched->splits[0].backend_id = cur_id;
        sched->splits[0].i_start    = 0;
        sched->splits[0].n_inputs   = 0;
        for (int i = 0; i < graph->n_nodes; i++) {
            struct ggml_tensor * node = graph->nodes[i];
            if (ggml_x_is_view_op(node->op)) {
                continue;
            }
            int id = sched_get(sched, node);
            if (id != cur_id) {
                sched->splits[cur_split].i_end = i;
                cur_split++;
                if (cur_split >= GGML_X_SCHED_MAX_SPLITS) {
                    ggml_x_error(NULL, "ggml_backend_sched: the graph needs more than %d splits", GGML_X_SCHED_MAX_SPLITS);
                    return false;
                }
                sched->splits[cur_split].backend_id = id;
                sched->splits[cur_split].i_start    = i;
                sched->splits[cur_split].n_inputs   = 0;
                cur_id = id;
            }
            struct sched_split * split = &sched->splits[cur_split];
            for (int j = 0; j < GGML_MAX_SRC; j++) {
                struct ggml_tensor * src = node->src[j];
                if (src == NULL) {
                    break;
                }
                int src_id = sched_get(sched, src);
                if (src_id == id) {
                    continue;
                }
                bool found = false;
                for (int k = 0; k < split->n_inputs; k++) {
                    if (split->inputs[k] == src) {
                        found = true;
                        break;
                    }
                }
                if (!found) {
                    if (split->n_inputs >= GGML_X_SCHED_MAX_SPLIT_INPUTS) {
                        ggml_x_error(NULL, "ggml_backend_sched: split %d (%s) needs more than %d inputs from other backends",
                                     cur_split, ggml_backend_name(sched->backends[id]), GGML_X_SCHED_MAX_SPLIT_INPUTS);
                        return false;
                    }
                    split->inputs[split->n_inputs++] = src;
                }
                size_t slot = sched_slot(sched, src);
                if (slot == SIZE_MAX) {
                    return false;
                }
                struct ggml_tensor * copy = sched->node_copies[slot][id];
                if (copy == NULL) {
                    copy = ggml_dup_tensor(sched->ctx, src);
                    if (copy == NULL) {
                        return false;
                    }
                    for (int d = 0; d < GGML_MAX_DIMS; d++) {
                        copy->nb[d] = src->nb[d];
                    }
                    ggml_format_name(copy, "%s#%s", ggml_backend_name(sched->backends[id]), src->name);
                    sched->node_copies[slot][id] = copy;
                    sched_set(sched, copy, id);
                }
                if (!sched_patch(sched, node, j, copy)) {
                    return false;
                }
            }
        }
        sched->splits[cur_split].i_end = graph->n_nodes;
        sched->n_splits = cur_split + 1;
    }
    if (sched->failed) {
        return false;
    }

    // the graph to allocate: every split's input copies (depending on their source, so the
    // source stays alive until the copy), then the split's nodes
    // (a node list of the scheduler's: the graph allocator reads nothing else)
    const size_t gcopy_need = (size_t) graph->n_nodes + (size_t) sched->n_splits * GGML_X_SCHED_MAX_SPLIT_INPUTS;
    if (sched->gcopy_cap < gcopy_need) {
        struct ggml_tensor ** nodes = malloc(sizeof(nodes[0]) * gcopy_need);
        if (nodes == NULL) {
            ggml_x_backend_soft_error("ggml_backend_sched: out of memory");
            return false;
        }
        free(sched->gcopy_nodes);
        sched->gcopy_nodes = nodes;
        sched->gcopy_cap   = gcopy_need;
    }
    struct ggml_cgraph * gcopy = &sched->gcopy;
    memset(gcopy, 0, sizeof(*gcopy));
    gcopy->size  = (int) gcopy_need;
    gcopy->nodes = sched->gcopy_nodes;
    for (int s = 0; s < sched->n_splits; s++) {
        struct sched_split * split = &sched->splits[s];
        split->graph = ggml_graph_view(graph, split->i_start, split->i_end);
        for (int j = 0; j < split->n_inputs; j++) {
            struct ggml_tensor * input = split->inputs[j];
            struct ggml_tensor * copy  = sched->node_copies[sched_slot(sched, input)][split->backend_id];
            copy->src[0] = input;
            gcopy->nodes[gcopy->n_nodes++] = copy;
        }
        for (int i = split->i_start; i < split->i_end; i++) {
            gcopy->nodes[gcopy->n_nodes++] = graph->nodes[i];
        }
    }
    sched->graph = gcopy;
    return !sched->failed;
}

// Prepares the compute of graph: reuses the plan of the last split when graph has the same key
// (the common case of a graph computed again with new inputs), else splits it anew.
static bool sched_plan(ggml_backend_sched_t sched, struct ggml_cgraph * graph, bool allow_reuse) {
    sched->is_reset = false;
    sched->failed   = false;
    sched->n_assigns_split = sched->n_assigns;
    sched_forget_own_memory(sched, graph);
    const bool keyed = sched_make_key(sched, graph);
    if (allow_reuse && keyed && sched->plan_valid && sched->key_new_len == sched->key_len &&
        memcmp(sched->key_new, sched->key, sizeof(uint64_t) * sched->key_len) == 0 && sched_copies_match(sched)) {
        for (int s = 0; s < sched->n_splits; s++) {
            struct sched_split * split = &sched->splits[s];
            split->graph = ggml_graph_view(graph, split->i_start, split->i_end);
        }
        sched_repatch(sched);
        sched->n_plans_reused++;
        return true;
    }
    sched_clear_table(sched);
    sched->n_splits_made++;
    if (!sched_split_graph(sched, graph)) {
        return false;
    }
    if (keyed) {
        uint64_t * t   = sched->key;
        sched->key     = sched->key_new;
        sched->key_new = t;
        sched->key_len = sched->key_new_len;
        sched->plan_valid = true;
    }
    return true;
}

static bool sched_alloc_splits(ggml_backend_sched_t sched) {
    if (sched->graph == NULL) {
        return true;
    }
    return ggml_x_gallocr_alloc_graph_n(sched->galloc, sched->graph, sched->hash_set, sched->node_talloc,
                                        sched->used, sched->n_used);
}

static bool sched_compute_splits(ggml_backend_sched_t sched) {
    for (int s = 0; s < sched->n_splits; s++) {
        struct sched_split * split = &sched->splits[s];
        ggml_backend_t backend = sched->backends[split->backend_id];

        if (sched->abort_cb != NULL && sched->abort_cb(sched->abort_data)) {
            ggml_x_error(NULL, "ggml_backend_sched: aborted before split %d of %d", s, sched->n_splits);
            return false;
        }

        for (int j = 0; j < split->n_inputs; j++) {
            struct ggml_tensor * input = split->inputs[j];
            struct ggml_tensor * copy  = sched->node_copies[sched_slot(sched, input)][split->backend_id];
            if (input->data == NULL || ggml_x_tensor_buffer(input) == NULL || copy->data == NULL || copy->buffer == NULL) {
                ggml_x_error(NULL, "ggml_backend_sched: input '%s' of split %d (%s) is not allocated", input->name, s,
                             ggml_backend_name(backend));
                return false;
            }
            ggml_backend_tensor_copy_async(backend, input, copy);
        }

        if (!ggml_backend_graph_compute(backend, &split->graph)) {
            ggml_x_backend_soft_error("ggml_backend_sched: backend %s failed to compute split %d", ggml_backend_name(backend), s);
            return false;
        }
    }
    for (int b = 0; b < sched->n_backends; b++) {
        ggml_backend_synchronize(sched->backends[b]);
    }
    return true;
}

ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts, int n_backends, size_t graph_size) {
    GGML_X_CHECK_RET(NULL, backends != NULL, NULL, "ggml_backend_sched_new: backends is NULL");
    GGML_X_CHECK_RET(NULL, n_backends > 0 && n_backends <= GGML_X_SCHED_MAX_BACKENDS, NULL,
                     "ggml_backend_sched_new: n_backends (%d) must be in [1, %d]", n_backends, GGML_X_SCHED_MAX_BACKENDS);
    for (int i = 0; i < n_backends; i++) {
        GGML_X_CHECK_RET(NULL, backends[i] != NULL, NULL, "ggml_backend_sched_new: backends[%d] is NULL", i);
        GGML_X_CHECK_RET(NULL, bufts == NULL || bufts[i] != NULL, NULL, "ggml_backend_sched_new: bufts[%d] is NULL", i);
    }
    GGML_X_CHECK_RET(NULL, graph_size <= (SIZE_MAX / 4) / sizeof(struct ggml_tensor * [GGML_X_SCHED_MAX_BACKENDS]), NULL,
                     "ggml_backend_sched_new: graph_size %zu too large", graph_size);

    ggml_backend_sched_t sched = calloc(1, sizeof(*sched));
    if (sched == NULL) {
        ggml_x_backend_soft_error("ggml_backend_sched_new: out of memory");
        return NULL;
    }
    sched->graph_size    = graph_size;
    sched->hash_set.size = ggml_x_alloc_hash_size(2 * graph_size + GGML_X_SCHED_MAX_SPLITS * GGML_X_SCHED_MAX_SPLIT_INPUTS);
    sched->hash_set.keys = calloc(sched->hash_set.size, sizeof(sched->hash_set.keys[0]));
    sched->node_talloc   = calloc(sched->hash_set.size, sizeof(sched->node_talloc[0]));
    sched->node_copies   = calloc(sched->hash_set.size, sizeof(sched->node_copies[0]));
    sched->used          = malloc(sizeof(sched->used[0]) * sched->hash_set.size);
    sched->galloc        = ggml_gallocr_new();
    sched->n_backends    = n_backends;
    bool ok = sched->hash_set.keys != NULL && sched->node_talloc != NULL && sched->node_copies != NULL &&
              sched->used != NULL && sched->galloc != NULL;
    ggml_x_clear_error(); // a failing buffer type leaves its reason here
    for (int i = 0; ok && i < n_backends; i++) {
        sched->backends[i] = backends[i];
        sched->bufts[i]    = bufts != NULL ? bufts[i] : ggml_backend_get_default_buffer_type(backends[i]);
        sched->tallocs[i]  = sched->bufts[i] != NULL ? ggml_tallocr_new_measure_from_buft(sched->bufts[i]) : NULL;
        ok = sched->tallocs[i] != NULL;
    }
    if (!ok) {
        const char * cause = ggml_x_last_error();
        const bool has_cause = cause != NULL && cause[0] != '\0';
        ggml_x_backend_soft_error("ggml_backend_sched_new: failed to create the scheduler%s%s", has_cause ? ": " : "",
                      has_cause ? cause : "");
        ggml_backend_sched_free(sched);
        return NULL;
    }
    sched_reset(sched);
    return sched;
}

void ggml_backend_sched_free(ggml_backend_sched_t sched) {
    if (sched == NULL) {
        return;
    }
    for (int i = 0; i < sched->n_backends; i++) {
        ggml_tallocr_free(sched->tallocs[i]);
    }
    ggml_gallocr_free(sched->galloc);
    ggml_free(sched->ctx);
    free(sched->ctx_mem);
    free(sched->hash_set.keys);
    free(sched->node_talloc);
    free(sched->node_copies);
    free(sched->used);
    free(sched->gcopy_nodes);
    free(sched->assigns);
    free(sched->key);
    free(sched->key_new);
    free(sched->patches);
    free(sched);
}

// the table of the last split names the allocator that replaces old (so that the choices of
// the last split survive the replacement of the allocators; see ggml_x_backend_sched_get_split_backend)
static void sched_retarget_table(ggml_backend_sched_t sched, ggml_tallocr_t old, ggml_tallocr_t repl) {
    for (size_t q = 0; q < sched->n_used; q++) {
        const size_t k = sched->used[q];
        if (sched->node_talloc[k] == old) {
            sched->node_talloc[k] = repl;
        }
    }
}

// replaces every real allocator (and its buffer) with a measure allocator; an allocator that
// cannot be replaced (out of memory) is kept
static void sched_back_to_measure(ggml_backend_sched_t sched) {
    sched->plan_valid = false; // the table points at the allocators
    for (int i = 0; i < sched->n_backends; i++) {
        if (!ggml_tallocr_is_measure(sched->tallocs[i])) {
            ggml_tallocr_t m = ggml_tallocr_new_measure_from_buft(sched->bufts[i]);
            if (m != NULL) {
                sched_retarget_table(sched, sched->tallocs[i], m);
                ggml_tallocr_free(sched->tallocs[i]);
                sched->tallocs[i] = m;
            }
        }
    }
}

void ggml_backend_sched_init_measure(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph) {
    GGML_X_CHECK_VOID(NULL, sched != NULL, "ggml_backend_sched_init_measure: sched is NULL");
    GGML_X_CHECK_VOID(NULL, measure_graph != NULL, "ggml_backend_sched_init_measure: measure_graph is NULL");
    GGML_X_CHECK_VOID(NULL, ggml_tallocr_is_measure(sched->tallocs[0]),
                      "ggml_backend_sched_init_measure: the scheduler's buffers are allocated already (measure once)");

    if (!sched->is_reset) {
        sched_reset(sched);
    }
    bool ok = sched_plan(sched, measure_graph, false) && sched_alloc_splits(sched);
    sched_restore(sched);
    sched->plan_valid = false; // made with the measure allocators, which go now
    if (ok) {
        for (int i = 0; i < sched->n_backends; i++) {
            size_t size = ggml_tallocr_max_size(sched->tallocs[i]);
            ggml_tallocr_t real = ggml_tallocr_new_from_buft(sched->bufts[i], size);
            if (real == NULL) {
                ggml_x_backend_soft_error("ggml_backend_sched_init_measure: failed to allocate a %s buffer of %zu bytes",
                              ggml_backend_buft_name(sched->bufts[i]), size);
                ok = false;
                break;
            }
            sched_retarget_table(sched, sched->tallocs[i], real);
            ggml_tallocr_free(sched->tallocs[i]);
            sched->tallocs[i] = real;
        }
    }
    if (!ok) {
        // back to measure allocators everywhere, so the scheduler stays consistent
        sched_back_to_measure(sched);
    }
    sched_reset(sched);
}

void ggml_x_backend_sched_set_abort_callback(ggml_backend_sched_t sched, bool (*abort_cb)(void * data), void * data) {
    GGML_X_CHECK_VOID(NULL, sched != NULL, "ggml_x_backend_sched_set_abort_callback: sched is NULL");
    sched->abort_cb   = abort_cb;
    sched->abort_data = data;
}

void ggml_x_backend_sched_reset_measure(ggml_backend_sched_t sched) {
    GGML_X_CHECK_VOID(NULL, sched != NULL, "ggml_x_backend_sched_reset_measure: sched is NULL");
    sched_back_to_measure(sched);
    sched_reset(sched);
}

bool ggml_x_backend_sched_is_measured(ggml_backend_sched_t sched) {
    GGML_X_CHECK_RET(NULL, sched != NULL, false, "ggml_x_backend_sched_is_measured: sched is NULL");
    return !ggml_tallocr_is_measure(sched->tallocs[0]);
}

bool ggml_x_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    GGML_X_CHECK_RET(NULL, sched != NULL, false, "ggml_backend_sched_graph_compute: sched is NULL");
    GGML_X_CHECK_RET(NULL, graph != NULL, false, "ggml_backend_sched_graph_compute: graph is NULL");

    if (ggml_tallocr_is_measure(sched->tallocs[0])) {
        ggml_backend_sched_init_measure(sched, graph);
        if (ggml_tallocr_is_measure(sched->tallocs[0])) {
            return false; // reported
        }
    }
    if (!sched->is_reset) {
        sched_reset(sched);
    }
    bool ok = sched_plan(sched, graph, true) && sched_alloc_splits(sched) && sched_compute_splits(sched);
    sched_restore(sched);
    if (!ok) {
        sched->plan_valid = false;
    }
    return ok;
}

void ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * graph) {
    ggml_x_backend_sched_graph_compute(sched, graph);
}

void ggml_backend_sched_reset(ggml_backend_sched_t sched) {
    GGML_X_CHECK_VOID(NULL, sched != NULL, "ggml_backend_sched_reset: sched is NULL");
    sched_reset(sched);
}

int64_t ggml_x_backend_sched_n_splits_made(ggml_backend_sched_t sched) {
    return sched != NULL ? sched->n_splits_made : 0;
}

int64_t ggml_x_backend_sched_n_plans_reused(ggml_backend_sched_t sched) {
    return sched != NULL ? sched->n_plans_reused : 0;
}

int ggml_backend_sched_get_n_splits(ggml_backend_sched_t sched) {
    GGML_X_CHECK_RET(NULL, sched != NULL, 0, "ggml_backend_sched_get_n_splits: sched is NULL");
    return sched->n_splits;
}

ggml_tallocr_t ggml_backend_sched_get_tallocr(ggml_backend_sched_t sched, ggml_backend_t backend) {
    GGML_X_CHECK_RET(NULL, sched != NULL, NULL, "ggml_backend_sched_get_tallocr: sched is NULL");
    int id = sched_backend_id(sched, backend);
    GGML_X_CHECK_RET(NULL, id >= 0, NULL, "ggml_backend_sched_get_tallocr: backend %s is not one of the scheduler's", ggml_backend_name(backend));
    return sched->tallocs[id];
}

ggml_backend_buffer_t ggml_backend_sched_get_buffer(ggml_backend_sched_t sched, ggml_backend_t backend) {
    ggml_tallocr_t talloc = ggml_backend_sched_get_tallocr(sched, backend);
    return talloc != NULL ? ggml_tallocr_get_buffer(talloc) : NULL;
}

void ggml_backend_sched_set_node_backend(ggml_backend_sched_t sched, struct ggml_tensor * node, ggml_backend_t backend) {
    GGML_X_CHECK_VOID(NULL, sched != NULL, "ggml_backend_sched_set_node_backend: sched is NULL");
    GGML_X_CHECK_VOID(NULL, node != NULL, "ggml_backend_sched_set_node_backend: node is NULL");
    int id = sched_backend_id(sched, backend);
    GGML_X_CHECK_VOID(NULL, id >= 0, "ggml_backend_sched_set_node_backend: backend %s is not one of the scheduler's", ggml_backend_name(backend));
    if (sched->n_assigns == sched->cap_assigns) {
        int cap = sched->cap_assigns > 0 ? 2 * sched->cap_assigns : 64;
        struct sched_assign * a = realloc(sched->assigns, sizeof(*a) * (size_t) cap);
        if (a == NULL) {
            ggml_x_backend_soft_error("ggml_backend_sched_set_node_backend: out of memory");
            return;
        }
        sched->assigns     = a;
        sched->cap_assigns = cap;
    }
    sched->assigns[sched->n_assigns++] = (struct sched_assign) { node, id };
}

ggml_backend_t ggml_backend_sched_get_node_backend(ggml_backend_sched_t sched, struct ggml_tensor * node) {
    GGML_X_CHECK_RET(NULL, sched != NULL, NULL, "ggml_backend_sched_get_node_backend: sched is NULL");
    GGML_X_CHECK_RET(NULL, node != NULL, NULL, "ggml_backend_sched_get_node_backend: node is NULL");
    // an assignment made since the last reset (before a split) or since the last split (after
    // one), the latest winning; else the last split's choice (which honours the assignments it
    // saw, unless their backend rejected the node)
    const int first = sched->is_reset ? 0 : sched->n_assigns_split;
    for (int i = sched->n_assigns - 1; i >= first; i--) {
        if (sched->assigns[i].node == node) {
            return sched->backends[sched->assigns[i].id];
        }
    }
    if (sched->is_reset) {
        return NULL;
    }
    size_t slot = ggml_x_alloc_hash_find(&sched->hash_set, node);
    if (slot == SIZE_MAX || sched->node_talloc[slot] == NULL) {
        return NULL;
    }
    int id = sched_talloc_id(sched, sched->node_talloc[slot]);
    return id >= 0 ? sched->backends[id] : NULL;
}

ggml_backend_t ggml_x_backend_sched_get_split_backend(ggml_backend_sched_t sched, struct ggml_tensor * node) {
    GGML_X_CHECK_RET(NULL, sched != NULL, NULL, "ggml_x_backend_sched_get_split_backend: sched is NULL");
    GGML_X_CHECK_RET(NULL, node != NULL, NULL, "ggml_x_backend_sched_get_split_backend: node is NULL");
    // the table of the last split (or measure) is kept until the next one, across resets
    size_t slot = ggml_x_alloc_hash_find(&sched->hash_set, node);
    if (slot == SIZE_MAX || sched->node_talloc[slot] == NULL) {
        return NULL;
    }
    int id = sched_talloc_id(sched, sched->node_talloc[slot]);
    return id >= 0 ? sched->backends[id] : NULL;
}
