// ggml-graph.c - computation graphs: creation in a context's arena, building by depth-first
// traversal, views, copies, lookup and printing.

#include "ggml-impl.h"

#include <stdio.h>
#include <stdlib.h>

// ---------------------------------------------------------------------------------------------
// visited set: open addressing over tensor pointers, table size a prime

static size_t ggml_x_next_prime(size_t n) {
    if (n < 3) {
        return 3;
    }
    for (size_t c = n | 1;; c += 2) {
        bool prime = true;
        for (size_t d = 3; d * d <= c; d += 2) {
            if (c % d == 0) {
                prime = false;
                break;
            }
        }
        if (prime) {
            return c;
        }
    }
}

static size_t ggml_x_hash_size(size_t graph_size) {
    return ggml_x_next_prime(graph_size * 2 + 1);
}

static size_t ggml_x_hash(const struct ggml_tensor * t) {
    return (size_t) (uintptr_t) t >> 4;
}

// slot of t, or of the first free slot where it would go; SIZE_MAX when the table is full
static size_t ggml_x_hash_find(const struct ggml_hash_set * set, const struct ggml_tensor * t) {
    const size_t start = ggml_x_hash(t) % set->size;
    size_t i = start;
    do {
        if (set->keys[i] == NULL || set->keys[i] == t) {
            return i;
        }
        i = (i + 1) % set->size;
    } while (i != start);
    return SIZE_MAX;
}

static bool ggml_x_hash_contains(const struct ggml_hash_set * set, const struct ggml_tensor * t) {
    if (set->size == 0) {
        return false;
    }
    const size_t i = ggml_x_hash_find(set, t);
    return i != SIZE_MAX && set->keys[i] == t;
}

// insert; false when the table is full
static bool ggml_x_hash_insert(struct ggml_hash_set * set, struct ggml_tensor * t) {
    const size_t i = ggml_x_hash_find(set, t);
    if (i == SIZE_MAX) {
        return false;
    }
    set->keys[i] = t;
    return true;
}

// ---------------------------------------------------------------------------------------------
// creation

static size_t ggml_x_graph_nbytes(size_t size, bool grads) {
    size_t n = sizeof(struct ggml_cgraph);
    n += size * sizeof(struct ggml_tensor *) * 2;                // nodes, leafs
    n += ggml_x_hash_size(size) * sizeof(struct ggml_tensor *);  // visited set
    if (grads) {
        n += size * sizeof(struct ggml_tensor *);
    }
    return n;
}

size_t ggml_graph_overhead_custom(size_t size, bool grads) {
    return GGML_OBJECT_SIZE + GGML_PAD(ggml_x_graph_nbytes(size, grads), GGML_MEM_ALIGN);
}

size_t ggml_graph_overhead(void) {
    return ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE, false);
}

struct ggml_cgraph * ggml_new_graph_custom(struct ggml_context * ctx, size_t size, bool grads) {
    GGML_X_CHECK(ctx, ctx != NULL, "ggml_new_graph_custom: NULL context");
    GGML_X_CHECK(ctx, size > 0 && size <= (size_t) INT32_MAX / 2, "ggml_new_graph_custom: invalid size %zu", size);
    const size_t nbytes = ggml_x_graph_nbytes(size, grads);
    char * mem = ggml_x_ctx_alloc(ctx, GGML_OBJECT_GRAPH, nbytes);
    if (mem == NULL) {
        return NULL;
    }
    memset(mem, 0, nbytes);
    struct ggml_cgraph * g = (struct ggml_cgraph *) mem;
    struct ggml_tensor ** ptrs = (struct ggml_tensor **) (g + 1);
    const size_t hash_size = ggml_x_hash_size(size);
    g->size = (int) size;
    g->n_nodes = 0;
    g->n_leafs = 0;
    g->nodes = ptrs;
    g->leafs = ptrs + size;
    g->visited_hash_table.size = hash_size;
    g->visited_hash_table.keys = ptrs + 2 * size;
    g->grads = grads ? ptrs + 2 * size + hash_size : NULL;
    g->order = GGML_CGRAPH_EVAL_ORDER_LEFT_TO_RIGHT;
    return g;
}

struct ggml_cgraph * ggml_new_graph(struct ggml_context * ctx) {
    return ggml_new_graph_custom(ctx, GGML_DEFAULT_GRAPH_SIZE, false);
}

struct ggml_cgraph ggml_graph_view(struct ggml_cgraph * cgraph, int i0, int i1) {
    struct ggml_cgraph view = { 0 };
    if (cgraph == NULL || i0 < 0 || i1 < i0 || i1 > cgraph->n_nodes) {
        ggml_x_error(NULL, "ggml_graph_view: range [%d, %d) is not inside the graph's %d nodes", i0, i1,
                     cgraph ? cgraph->n_nodes : 0);
        return view;
    }
    view.size = i1 - i0;
    view.n_nodes = i1 - i0;
    view.n_leafs = 0;
    view.nodes = cgraph->nodes + i0;
    view.grads = cgraph->grads ? cgraph->grads + i0 : NULL;
    view.leafs = NULL;
    view.order = cgraph->order;
    return view;
}

void ggml_graph_cpy(struct ggml_cgraph * src, struct ggml_cgraph * dst) {
    if (src == NULL || dst == NULL) {
        ggml_x_error(NULL, "ggml_graph_cpy: NULL graph");
        return;
    }
    if (dst->size < src->n_leafs || dst->size < src->n_nodes ||
        dst->visited_hash_table.size < src->visited_hash_table.size || (src->grads && !dst->grads)) {
        ggml_x_error(NULL, "ggml_graph_cpy: destination graph (size %d) cannot hold the source (%d nodes, %d leafs)",
                     dst->size, src->n_nodes, src->n_leafs);
        return;
    }
    dst->n_leafs = src->n_leafs;
    dst->n_nodes = src->n_nodes;
    dst->order = src->order;
    memcpy(dst->leafs, src->leafs, sizeof(struct ggml_tensor *) * (size_t) src->n_leafs);
    memcpy(dst->nodes, src->nodes, sizeof(struct ggml_tensor *) * (size_t) src->n_nodes);
    if (src->grads) {
        memcpy(dst->grads, src->grads, sizeof(struct ggml_tensor *) * (size_t) src->n_nodes);
    }
    memset(dst->visited_hash_table.keys, 0, sizeof(struct ggml_tensor *) * dst->visited_hash_table.size);
    for (size_t i = 0; i < src->visited_hash_table.size; i++) {
        if (src->visited_hash_table.keys[i] != NULL) {
            ggml_x_hash_insert(&dst->visited_hash_table, src->visited_hash_table.keys[i]);
        }
    }
}

struct ggml_cgraph * ggml_graph_dup(struct ggml_context * ctx, struct ggml_cgraph * cgraph) {
    GGML_X_CHECK(ctx, cgraph != NULL, "ggml_graph_dup: NULL graph");
    struct ggml_cgraph * g = ggml_new_graph_custom(ctx, (size_t) cgraph->size, cgraph->grads != NULL);
    if (g != NULL) {
        ggml_graph_cpy(cgraph, g);
    }
    return g;
}

void ggml_graph_clear(struct ggml_cgraph * cgraph) {
    if (cgraph == NULL) {
        return;
    }
    cgraph->n_leafs = 0;
    cgraph->n_nodes = 0;
    if (cgraph->visited_hash_table.keys) {
        memset(cgraph->visited_hash_table.keys, 0, sizeof(struct ggml_tensor *) * cgraph->visited_hash_table.size);
    }
}

// ---------------------------------------------------------------------------------------------
// building: post-order depth-first traversal from the requested tensor, sources first (in the
// graph's evaluation order). Iterative, so deep graphs cannot overflow the C stack.

struct ggml_x_visit {
    struct ggml_tensor * t;
    int next_src; // how many sources have been pushed
};

static bool ggml_x_graph_add(struct ggml_cgraph * g, struct ggml_tensor * t) {
    if (t->op == GGML_OP_NONE && t->grad == NULL) {
        if (g->n_leafs >= g->size) {
            ggml_x_error(NULL, "ggml_build_forward_expand: graph is full (%d leafs)", g->size);
            return false;
        }
        if (t->name[0] == '\0') {
            ggml_format_name(t, "leaf_%d", g->n_leafs);
        }
        g->leafs[g->n_leafs++] = t;
    } else {
        if (g->n_nodes >= g->size) {
            ggml_x_error(NULL, "ggml_build_forward_expand: graph is full (%d nodes)", g->size);
            return false;
        }
        if (t->name[0] == '\0') {
            ggml_format_name(t, "node_%d", g->n_nodes);
        }
        g->nodes[g->n_nodes] = t;
        if (g->grads) {
            g->grads[g->n_nodes] = t->grad;
        }
        g->n_nodes++;
    }
    return true;
}

void ggml_build_forward_expand(struct ggml_cgraph * cgraph, struct ggml_tensor * tensor) {
    if (cgraph == NULL || tensor == NULL) {
        ggml_x_error(NULL, "ggml_build_forward_expand: NULL %s", cgraph == NULL ? "graph" : "tensor");
        return;
    }
    if (cgraph->visited_hash_table.size == 0) {
        ggml_x_error(NULL, "ggml_build_forward_expand: graph views cannot be extended");
        return;
    }
    if (ggml_x_hash_contains(&cgraph->visited_hash_table, tensor)) {
        return;
    }
    // the stack never holds more than one entry per distinct tensor reachable from `tensor`;
    // grow it on the heap as needed
    size_t cap = 64, depth = 0;
    struct ggml_x_visit * stack = malloc(cap * sizeof(*stack));
    if (stack == NULL) {
        ggml_x_error(NULL, "ggml_build_forward_expand: out of memory");
        return;
    }
    if (!ggml_x_hash_insert(&cgraph->visited_hash_table, tensor)) {
        free(stack);
        ggml_x_error(NULL, "ggml_build_forward_expand: graph is full (visited set)");
        return;
    }
    stack[depth++] = (struct ggml_x_visit) { tensor, 0 };
    const bool right_to_left = cgraph->order == GGML_CGRAPH_EVAL_ORDER_RIGHT_TO_LEFT;
    while (depth > 0) {
        struct ggml_x_visit * top = &stack[depth - 1];
        struct ggml_tensor * child = NULL;
        while (top->next_src < GGML_MAX_SRC && child == NULL) {
            const int k = right_to_left ? GGML_MAX_SRC - 1 - top->next_src : top->next_src;
            top->next_src++;
            struct ggml_tensor * s = top->t->src[k];
            if (s != NULL && !ggml_x_hash_contains(&cgraph->visited_hash_table, s)) {
                child = s;
            }
        }
        if (child == NULL) {
            struct ggml_tensor * done = top->t;
            depth--;
            if (!ggml_x_graph_add(cgraph, done)) {
                break;
            }
            continue;
        }
        if (!ggml_x_hash_insert(&cgraph->visited_hash_table, child)) {
            ggml_x_error(NULL, "ggml_build_forward_expand: graph is full (visited set)");
            break;
        }
        if (depth == cap) {
            cap *= 2;
            struct ggml_x_visit * grown = realloc(stack, cap * sizeof(*stack));
            if (grown == NULL) {
                ggml_x_error(NULL, "ggml_build_forward_expand: out of memory");
                break;
            }
            stack = grown;
        }
        stack[depth++] = (struct ggml_x_visit) { child, 0 };
    }
    free(stack);
}

// ---------------------------------------------------------------------------------------------
// lookup and printing

struct ggml_tensor * ggml_graph_get_tensor(struct ggml_cgraph * cgraph, const char * name) {
    if (cgraph == NULL || name == NULL) {
        return NULL;
    }
    for (int i = 0; i < cgraph->n_leafs; i++) {
        if (strcmp(cgraph->leafs[i]->name, name) == 0) {
            return cgraph->leafs[i];
        }
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        if (strcmp(cgraph->nodes[i]->name, name) == 0) {
            return cgraph->nodes[i];
        }
    }
    return NULL;
}

void ggml_graph_print(const struct ggml_cgraph * cgraph) {
    if (cgraph == NULL) {
        return;
    }
    printf("=== GRAPH ===\n");
    printf("n_nodes = %d\n", cgraph->n_nodes);
    for (int i = 0; i < cgraph->n_nodes; i++) {
        const struct ggml_tensor * t = cgraph->nodes[i];
        printf(" - %3d: [ %5lld, %5lld, %5lld, %5lld] %16s %-6s %s\n", i, (long long) t->ne[0], (long long) t->ne[1],
               (long long) t->ne[2], (long long) t->ne[3], ggml_op_desc(t), ggml_type_name(t->type), t->name);
    }
    printf("n_leafs = %d\n", cgraph->n_leafs);
    for (int i = 0; i < cgraph->n_leafs; i++) {
        const struct ggml_tensor * t = cgraph->leafs[i];
        printf(" - %3d: [ %5lld, %5lld, %5lld, %5lld] %16s %-6s %s\n", i, (long long) t->ne[0], (long long) t->ne[1],
               (long long) t->ne[2], (long long) t->ne[3], ggml_op_name(t->op), ggml_type_name(t->type), t->name);
    }
    printf("========================================\n");
}
