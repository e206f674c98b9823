// ggml-alloc.c - placing tensors in backend buffers.
//
//   * tallocr: hands out aligned ranges of one buffer from a list of free blocks (best fit, with
//     neighbouring free blocks merged), or in measure mode only records how much memory the
//     allocations would need;
//   * ggml_backend_alloc_ctx_tensors*: one buffer for every tensor of a no_alloc context.
//
//   * gallocr: places the nodes of a graph, reusing memory of tensors nobody needs any more;
//   * allocr: the legacy pair of one tallocr and one gallocr.

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-backend-internal.h"
#include "ggml-impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// helpers

static bool alloc_is_pow2(size_t x) {
    return x != 0 && (x & (x - 1)) == 0;
}

// bytes to add to offset so that (base + offset) is a multiple of alignment
static size_t alloc_align_offset(const void * base, size_t offset, size_t alignment) {
    uintptr_t addr = (uintptr_t) base + offset;
    return (size_t) ((alignment - (addr % alignment)) % alignment) + offset;
}

// ---------------------------------------------------------------------------------------------
// tensor allocator

#define GGML_X_TALLOC_MAX_FREE_BLOCKS 256

// measure allocators pretend to own this much memory (half the address space avoids overflow)
#define GGML_X_TALLOC_MEASURE_SIZE (SIZE_MAX / 2)

struct talloc_block {
    char * addr;
    size_t size;
};

struct ggml_tallocr {
    ggml_backend_buffer_t buffer;
    bool   buffer_owned;
    char * base;       // aligned start of the usable range
    size_t alignment;

    int n_free_blocks;
    struct talloc_block free_blocks[GGML_X_TALLOC_MAX_FREE_BLOCKS]; // sorted by address

    size_t max_size;   // high-water mark, relative to base
    bool   measure;
};

static ggml_tallocr_t talloc_new_impl(ggml_backend_buffer_t buffer, bool owned, bool measure) {
    ggml_tallocr_t talloc = calloc(1, sizeof(*talloc));
    if (talloc == NULL) {
        if (owned) {
            ggml_backend_buffer_free(buffer);
        }
        ggml_x_error(NULL, "ggml_tallocr_new: out of memory");
        return NULL;
    }
    talloc->buffer       = buffer;
    talloc->buffer_owned = owned;
    talloc->alignment    = ggml_backend_buffer_get_alignment(buffer);
    talloc->measure      = measure;
    if (!alloc_is_pow2(talloc->alignment)) {
        ggml_x_error(NULL, "ggml_tallocr_new: buffer alignment %zu is not a power of two", talloc->alignment);
        if (owned) {
            ggml_backend_buffer_free(buffer);
        }
        free(talloc);
        return NULL;
    }
    ggml_tallocr_reset(talloc);
    return talloc;
}

ggml_tallocr_t ggml_tallocr_new_from_buffer(struct ggml_backend_buffer * buffer) {
    GGML_X_CHECK_RET(NULL, buffer != NULL, NULL, "ggml_tallocr_new_from_buffer: buffer is NULL");
    return talloc_new_impl(buffer, false, false);
}

ggml_tallocr_t ggml_tallocr_new_from_buft(struct ggml_backend_buffer_type * buft, size_t size) {
    GGML_X_CHECK_RET(NULL, buft != NULL, NULL, "ggml_tallocr_new_from_buft: buft is NULL");
    ggml_backend_buffer_t buffer = ggml_backend_buft_alloc_buffer(buft, size);
    if (buffer == NULL) {
        return NULL;
    }
    return talloc_new_impl(buffer, true, false);
}

ggml_tallocr_t ggml_tallocr_new_from_backend(struct ggml_backend * backend, size_t size) {
    GGML_X_CHECK_RET(NULL, backend != NULL, NULL, "ggml_tallocr_new_from_backend: backend is NULL");
    return ggml_tallocr_new_from_buft(ggml_backend_get_default_buffer_type(backend), size);
}

ggml_tallocr_t ggml_tallocr_new_measure_from_buft(struct ggml_backend_buffer_type * buft) {
    GGML_X_CHECK_RET(NULL, buft != NULL, NULL, "ggml_tallocr_new_measure_from_buft: buft is NULL");
    // a tiny real buffer gives the measure allocator its buffer type (alignment, alloc sizes)
    ggml_backend_buffer_t buffer = ggml_backend_buft_alloc_buffer(buft, 1);
    if (buffer == NULL) {
        return NULL;
    }
    return talloc_new_impl(buffer, true, true);
}

ggml_tallocr_t ggml_tallocr_new_measure_from_backend(struct ggml_backend * backend) {
    GGML_X_CHECK_RET(NULL, backend != NULL, NULL, "ggml_tallocr_new_measure_from_backend: backend is NULL");
    return ggml_tallocr_new_measure_from_buft(ggml_backend_get_default_buffer_type(backend));
}

// An allocator owning buffer (a real or, with measure, a measure allocator) with the caller's
// alignment instead of the buffer type's; NULL when out of memory (buffer freed). The CPU
// backend builds ggml_tallocr_new / ggml_tallocr_new_measure on it (cpu/buffer.c), and
// ggml_allocr_new / ggml_allocr_new_measure on those and ggml_x_allocr_wrap.
ggml_tallocr_t ggml_x_tallocr_new_aligned(ggml_backend_buffer_t buffer, bool measure, size_t alignment) {
    ggml_tallocr_t talloc = talloc_new_impl(buffer, true, measure);
    if (talloc != NULL) {
        talloc->alignment = alignment;
        ggml_tallocr_reset(talloc);
    }
    return talloc;
}

struct ggml_backend_buffer * ggml_tallocr_get_buffer(ggml_tallocr_t talloc) {
    GGML_X_CHECK_RET(NULL, talloc != NULL, NULL, "ggml_tallocr_get_buffer: talloc is NULL");
    return talloc->buffer;
}

void ggml_tallocr_free(ggml_tallocr_t talloc) {
    if (talloc == NULL) {
        return;
    }
    if (talloc->buffer_owned) {
        ggml_backend_buffer_free(talloc->buffer);
    }
    free(talloc);
}

bool ggml_tallocr_is_measure(ggml_tallocr_t talloc) {
    GGML_X_CHECK_RET(NULL, talloc != NULL, false, "ggml_tallocr_is_measure: talloc is NULL");
    return talloc->measure;
}

void ggml_tallocr_reset(ggml_tallocr_t talloc) {
    GGML_X_CHECK_VOID(NULL, talloc != NULL, "ggml_tallocr_reset: talloc is NULL");

    char * raw  = ggml_backend_buffer_get_base(talloc->buffer);
    size_t size = ggml_backend_buffer_get_size(talloc->buffer);
    size_t skip = raw != NULL ? alloc_align_offset(raw, 0, talloc->alignment) : 0;

    talloc->base          = raw + skip;
    talloc->n_free_blocks = 1;
    talloc->free_blocks[0].addr = talloc->base;
    if (talloc->measure) {
        talloc->free_blocks[0].size = GGML_X_TALLOC_MEASURE_SIZE;
    } else {
        talloc->free_blocks[0].size = size > skip ? size - skip : 0;
        ggml_backend_buffer_reset(talloc->buffer);
    }
}

void ggml_tallocr_alloc(ggml_tallocr_t talloc, struct ggml_tensor * tensor) {
    GGML_X_CHECK_VOID(NULL, talloc != NULL, "ggml_tallocr_alloc: talloc is NULL");
    GGML_X_CHECK_VOID(NULL, tensor != NULL, "ggml_tallocr_alloc: tensor is NULL");
    GGML_X_CHECK_VOID(NULL, tensor->view_src == NULL, "ggml_tallocr_alloc: tensor '%s' is a view", tensor->name);
    GGML_X_CHECK_VOID(NULL, tensor->data == NULL, "ggml_tallocr_alloc: tensor '%s' already has data", tensor->name);

    size_t size = ggml_backend_buffer_get_alloc_size(talloc->buffer, tensor);
    GGML_X_CHECK_VOID(NULL, size <= GGML_X_TALLOC_MEASURE_SIZE, "ggml_tallocr_alloc: tensor '%s' too large (%zu bytes)",
                      tensor->name, size);
    size = GGML_PAD(size, talloc->alignment);

    // best fit among all blocks but the last; the last (the tail of the buffer) is the fallback
    int best = -1;
    size_t best_size = SIZE_MAX;
    for (int i = 0; i < talloc->n_free_blocks - 1; i++) {
        const struct talloc_block * b = &talloc->free_blocks[i];
        if (b->size >= size && b->size < best_size) {
            best = i;
            best_size = b->size;
        }
    }
    if (best < 0) {
        int last = talloc->n_free_blocks - 1;
        if (last >= 0 && talloc->free_blocks[last].size >= size) {
            best = last;
        }
    }
    if (best < 0) {
        size_t largest = 0;
        for (int i = 0; i < talloc->n_free_blocks; i++) {
            largest = GGML_X_MAX(largest, talloc->free_blocks[i].size);
        }
        ggml_x_error(NULL, "ggml_tallocr_alloc: not enough space in buffer %s for tensor '%s' (needed %zu bytes, largest free block %zu)",
                     ggml_backend_buffer_name(talloc->buffer), tensor->name, size, largest);
        return;
    }

    struct talloc_block * b = &talloc->free_blocks[best];
    char * addr = b->addr;
    b->addr += size;
    b->size -= size;
    if (b->size == 0) {
        talloc->n_free_blocks--;
        memmove(&talloc->free_blocks[best], &talloc->free_blocks[best + 1],
                sizeof(struct talloc_block) * (size_t) (talloc->n_free_blocks - best));
    }

    tensor->data   = addr;
    tensor->buffer = talloc->buffer;
    if (!talloc->measure) {
        ggml_backend_buffer_init_tensor(talloc->buffer, tensor);
    }
    talloc->max_size = GGML_X_MAX(talloc->max_size, (size_t) (addr - talloc->base) + size);
}

// Return a tensor's range to the free list, merging it with adjacent free blocks. Used by the
// graph allocator to reuse the memory of tensors that are no longer needed. When the free list
// is full the range is dropped: it stays unusable until the next reset, which wastes memory but
// never hands out memory twice.
static void talloc_free_tensor(ggml_tallocr_t talloc, struct ggml_tensor * tensor) {
    char * addr = tensor->data;
    if (addr == NULL || addr < talloc->base ||
        (!talloc->measure && (size_t) (addr - talloc->base) >= ggml_backend_buffer_get_size(talloc->buffer))) {
        // not ours (e.g. allocated elsewhere by the user)
        return;
    }
    size_t size = GGML_PAD(ggml_backend_buffer_get_alloc_size(talloc->buffer, tensor), talloc->alignment);
    if (size == 0) {
        return;
    }

    // find the insertion point (blocks are sorted by address)
    int pos = 0;
    while (pos < talloc->n_free_blocks && talloc->free_blocks[pos].addr < addr) {
        pos++;
    }
    bool merge_prev = pos > 0 && talloc->free_blocks[pos - 1].addr + talloc->free_blocks[pos - 1].size == addr;
    bool merge_next = pos < talloc->n_free_blocks && addr + size == talloc->free_blocks[pos].addr;

    if (merge_prev && merge_next) {
        talloc->free_blocks[pos - 1].size += size + talloc->free_blocks[pos].size;
        talloc->n_free_blocks--;
        memmove(&talloc->free_blocks[pos], &talloc->free_blocks[pos + 1],
                sizeof(struct talloc_block) * (size_t) (talloc->n_free_blocks - pos));
    } else if (merge_prev) {
        talloc->free_blocks[pos - 1].size += size;
    } else if (merge_next) {
        talloc->free_blocks[pos].addr = addr;
        talloc->free_blocks[pos].size += size;
    } else if (talloc->n_free_blocks < GGML_X_TALLOC_MAX_FREE_BLOCKS) {
        memmove(&talloc->free_blocks[pos + 1], &talloc->free_blocks[pos],
                sizeof(struct talloc_block) * (size_t) (talloc->n_free_blocks - pos));
        talloc->free_blocks[pos].addr = addr;
        talloc->free_blocks[pos].size = size;
        talloc->n_free_blocks++;
    }
}

// true when [addr, addr + size) lies inside one free block: memory that nobody holds since the
// last reset
static bool talloc_range_is_free(ggml_tallocr_t talloc, const char * addr, size_t size) {
    for (int i = 0; i < talloc->n_free_blocks; i++) {
        const struct talloc_block * b = &talloc->free_blocks[i];
        if (addr >= b->addr && (size_t) (addr - b->addr) <= b->size && size <= b->size - (size_t) (addr - b->addr)) {
            return true;
        }
    }
    return false;
}

size_t ggml_tallocr_max_size(ggml_tallocr_t talloc) {
    GGML_X_CHECK_RET(NULL, talloc != NULL, 0, "ggml_tallocr_max_size: talloc is NULL");
    return talloc->max_size;
}

// ---------------------------------------------------------------------------------------------
// hash set of tensors: open addressing with linear probing on the tensor address. The scheduler
// (ggml-backend-sched.c) and graph copy (ggml-backend-compare.c) build their sets with the same
// functions, because the scheduler hands its set to ggml_gallocr_alloc_graph_n; these are
// internal (declared in ggml-backend-internal.h, not for users).

// smallest prime >= min_size
size_t ggml_x_alloc_hash_size(size_t min_size) {
    for (size_t n = min_size < 2 ? 2 : min_size;; n++) {
        bool prime = true;
        for (size_t d = 2; d * d <= n; d++) {
            if (n % d == 0) {
                prime = false;
                break;
            }
        }
        if (prime) {
            return n;
        }
    }
}

static size_t alloc_hash_start(const struct ggml_hash_set * set, const struct ggml_tensor * t) {
    return (size_t) (((uintptr_t) t) >> 4) % set->size;
}

// slot that holds t, else the empty slot where t would go; SIZE_MAX when neither exists (empty
// or full set, t NULL)
static size_t alloc_hash_probe(const struct ggml_hash_set * set, const struct ggml_tensor * t) {
    if (set->size == 0 || t == NULL) {
        return SIZE_MAX;
    }
    const size_t start = alloc_hash_start(set, t);
    size_t i = start;
    do {
        if (set->keys[i] == t || set->keys[i] == NULL) {
            return i;
        }
        i = i + 1 == set->size ? 0 : i + 1; // (no division per probe)
    } while (i != start);
    return SIZE_MAX;
}

// slot that holds t, or SIZE_MAX when t is not in the set
size_t ggml_x_alloc_hash_find(const struct ggml_hash_set * set, const struct ggml_tensor * t) {
    const size_t i = alloc_hash_probe(set, t);
    return i != SIZE_MAX && set->keys[i] == t ? i : SIZE_MAX;
}

// slot of t, inserting it when absent; SIZE_MAX when the set is full
size_t ggml_x_alloc_hash_insert(struct ggml_hash_set * set, struct ggml_tensor * t) {
    const size_t i = alloc_hash_probe(set, t);
    if (i != SIZE_MAX && set->keys[i] == NULL) {
        set->keys[i] = t;
    }
    return i;
}

// the same, telling whether t was inserted now (so a caller can keep a list of the slots in use
// and clear only those)
size_t ggml_x_alloc_hash_insert_new(struct ggml_hash_set * set, struct ggml_tensor * t, bool * inserted) {
    const size_t i = alloc_hash_probe(set, t);
    *inserted = false;
    if (i != SIZE_MAX && set->keys[i] == NULL) {
        set->keys[i] = t;
        *inserted = true;
    }
    return i;
}

// ---------------------------------------------------------------------------------------------
// graph allocator
//
// First the graph's inputs without memory get some: sources that no node computes (leafs, not
// views, that no node writes through a view as CPY does), whose values the caller sets before
// the compute. They get it before any node and keep it for the whole pass (it is never handed
// to another tensor), so that no node computed before or after their last reader overwrites
// what the caller set: placed at their first reader, they could land in memory of a node that
// died earlier (whose compute then overwrote the value set, e.g. the seed gradient of a backward
// graph whose forward values die early, as with gradient checkpointing), and a value set once
// for several computes (gradients zeroed by ggml_graph_reset) would not survive a later node
// reusing it.
// Then it walks the nodes in order (or in the parse sequence). Before a node, its sources get
// memory (views of inputs: usually placed here); then the node itself: a view takes its
// source's memory, an op that can work in place takes over the memory of a source it is the
// last user of (same layout, memory allocated by this pass, and no other view or in-place
// result sharing that memory still to be read), anything else gets a new range.
// When the last consumer of a tensor has been placed, and no view or in-place result still
// shares its memory, the range goes back to its allocator for later nodes.
//
// Differences from the reference allocator, on purpose:
//   * only memory that this pass allocated is freed or reused in place; tensors that already had
//     memory (inputs the caller placed, weights, KV caches) are never overwritten;
//   * an in-place result is not turned into a view (its view_src stays NULL): the graph keeps
//     its shape, so the same graph can be allocated again;
//   * op outputs that still carry memory from an earlier pass over the same allocator's buffer
//     are placed again instead of being trusted (the buffer was reset since), and inputs whose
//     range is free in their allocator (left from an earlier pass) likewise;
//   * a measure pass leaves the graph unallocated afterwards (no pointers into the measure
//     allocator's fake address range remain);
//   * running out of space is reported through ggml_x_error (recoverable mode: the call fails
//     and ggml_gallocr_alloc_graph returns 0), not an abort.

struct galloc_info {
    int  n_children;            // consumers (as a node source) not placed yet
    int  n_views;               // live tensors sharing this tensor's memory
    bool seen;                  // registered in this pass
    bool is_node;               // in graph->nodes
    bool allocated;             // memory handed out by this pass (may be freed / reused)
    bool released;              // memory given back (or given up) already
    bool input;                 // a leaf placed before the nodes: keeps its memory for the pass
    ggml_tallocr_t talloc;      // allocator of this tensor
    struct ggml_tensor * alias; // in-place result: the tensor that owns the memory it uses
};

struct ggml_gallocr {
    ggml_tallocr_t talloc;          // single-allocator mode (ggml_gallocr_alloc_graph)
    ggml_tallocr_t * hash_allocs;   // per-slot allocators (ggml_gallocr_alloc_graph_n)

    struct ggml_hash_set hash_set;  // the set in use (own or the caller's)
    const size_t * slots;           // the occupied slots of the caller's set (NULL: scan it all)
    size_t n_slots;
    struct ggml_tensor ** own_keys; // storage of the own set
    size_t own_size;

    struct galloc_info * info;      // [hash_set.size]
    size_t info_size;

    int * parse_seq;
    int   parse_seq_len;
};

ggml_gallocr_t ggml_gallocr_new(void) {
    ggml_gallocr_t galloc = calloc(1, sizeof(*galloc));
    GGML_X_CHECK_RET(NULL, galloc != NULL, NULL, "ggml_gallocr_new: out of memory");
    return galloc;
}

void ggml_gallocr_free(ggml_gallocr_t galloc) {
    if (galloc == NULL) {
        return;
    }
    free(galloc->own_keys);
    free(galloc->info);
    free(galloc->parse_seq);
    free(galloc);
}

void ggml_gallocr_set_parse_seq(ggml_gallocr_t galloc, const int * list, int n) {
    GGML_X_CHECK_VOID(NULL, galloc != NULL, "ggml_gallocr_set_parse_seq: galloc is NULL");
    GGML_X_CHECK_VOID(NULL, n >= 0 && (n == 0 || list != NULL), "ggml_gallocr_set_parse_seq: invalid list (n = %d)", n);
    int * seq = NULL;
    if (n > 0) {
        seq = malloc(sizeof(int) * (size_t) n);
        GGML_X_CHECK_VOID(NULL, seq != NULL, "ggml_gallocr_set_parse_seq: out of memory");
        memcpy(seq, list, sizeof(int) * (size_t) n);
    }
    free(galloc->parse_seq);
    galloc->parse_seq     = seq;
    galloc->parse_seq_len = n;
}

static bool galloc_can_inplace(enum ggml_op op) {
    switch (op) {
        case GGML_OP_SCALE:
        case GGML_OP_DIAG_MASK_ZERO:
        case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_ADD:
        case GGML_OP_ADD1:
        case GGML_OP_SUB:
        case GGML_OP_MUL:
        case GGML_OP_DIV:
        case GGML_OP_SQR:
        case GGML_OP_SQRT:
        case GGML_OP_LOG:
        case GGML_OP_UNARY:
        case GGML_OP_ROPE:
        case GGML_OP_RMS_NORM:
        case GGML_OP_SOFT_MAX:
            return true;
        default:
            return false;
    }
}

// the slots a pass scans: the listed ones, or all
static size_t galloc_n_scan(ggml_gallocr_t galloc) {
    return galloc->slots != NULL ? galloc->n_slots : galloc->hash_set.size;
}

static size_t galloc_scan_slot(ggml_gallocr_t galloc, size_t q) {
    return galloc->slots != NULL ? galloc->slots[q] : q;
}

// info of a registered tensor (NULL when it is not in the set)
static struct galloc_info * galloc_get(ggml_gallocr_t galloc, const struct ggml_tensor * t) {
    size_t i = ggml_x_alloc_hash_find(&galloc->hash_set, t);
    return i == SIZE_MAX ? NULL : &galloc->info[i];
}

// the tensor that owns the memory t uses (t itself when it owns its memory)
static struct ggml_tensor * galloc_root(ggml_gallocr_t galloc, struct ggml_tensor * t) {
    for (int guard = 0; guard < 8; guard++) {
        struct galloc_info * in = galloc_get(galloc, t);
        if (in != NULL && in->alias != NULL) {
            t = in->alias;
        } else if (t->view_src != NULL) {
            t = t->view_src;
        } else {
            return t;
        }
    }
    return t;
}

// register t (and its view source): allocator, view counts
static bool galloc_register(ggml_gallocr_t galloc, struct ggml_tensor * t) {
    size_t slot;
    if (galloc->hash_allocs == NULL) {
        slot = ggml_x_alloc_hash_insert(&galloc->hash_set, t);
    } else {
        slot = ggml_x_alloc_hash_find(&galloc->hash_set, t);
    }
    if (slot == SIZE_MAX) {
        ggml_x_error(NULL, "ggml_gallocr: tensor '%s' is not in the allocator's hash set (or the set is full)", t->name);
        return false;
    }
    struct galloc_info * in = &galloc->info[slot];
    if (in->seen) {
        return true;
    }
    in->seen   = true;
    in->talloc = galloc->hash_allocs != NULL ? galloc->hash_allocs[slot] : galloc->talloc;
    if (in->talloc == NULL) {
        ggml_x_error(NULL, "ggml_gallocr: no tensor allocator for tensor '%s'", t->name);
        return false;
    }
    if (t->view_src != NULL) {
        if (!galloc_register(galloc, t->view_src)) {
            return false;
        }
        galloc_get(galloc, t->view_src)->n_views++;
    }
    return true;
}

static bool galloc_is_measure_buffer(ggml_gallocr_t galloc, const struct ggml_tensor * t) {
    if (t->buffer == NULL) {
        return false;
    }
    const struct galloc_info * in = galloc_get(galloc, t);
    if (in != NULL && in->talloc != NULL && in->talloc->measure && in->talloc->buffer == t->buffer) {
        return true;
    }
    if (t->view_src != NULL) {
        in = galloc_get(galloc, t->view_src);
        if (in != NULL && in->talloc != NULL && in->talloc->measure && in->talloc->buffer == t->buffer) {
            return true;
        }
    }
    return false;
}

// give a view its source's memory
static bool galloc_init_view(ggml_gallocr_t galloc, struct ggml_tensor * view) {
    struct ggml_tensor * src = view->view_src;
    if (src->data == NULL) {
        ggml_x_error(NULL, "ggml_gallocr: source '%s' of view '%s' has no memory", src->name, view->name);
        return false;
    }
    if (src->buffer == NULL) {
        // a view of plain context memory: nothing to initialise in a backend
        view->data = (char *) src->data + view->view_offs;
        return true;
    }
    const struct galloc_info * sin = galloc_get(galloc, src);
    if (sin != NULL && sin->talloc != NULL && sin->talloc->measure && sin->talloc->buffer == src->buffer) {
        // measure: fake addresses, no backend initialisation
        view->buffer = src->buffer;
        view->data   = (char *) src->data + view->view_offs;
        return true;
    }
    view->buffer = NULL;
    ggml_backend_view_init(src->buffer, view);
    return view->buffer != NULL;
}

// p reaches r's memory through a chain of views (view_src) and in-place results (alias): is p
// the only tensor still using it? Every tensor after p on the chain must be shared by exactly
// one tensor (the previous link) and have no consumer left. Checking only r is not enough: an
// in-place result between p and r may have other views or consumers still to run, which would
// read what the new node writes over p. A chain longer than 8 links counts as shared: no reuse,
// which is always safe.
static bool galloc_sole_user(ggml_gallocr_t galloc, struct ggml_tensor * p, struct ggml_tensor * r) {
    struct ggml_tensor * u = p;
    for (int guard = 0; u != r && guard < 8; guard++) {
        const struct galloc_info * uin = galloc_get(galloc, u);
        struct ggml_tensor * next = uin != NULL && uin->alias != NULL ? uin->alias : u->view_src;
        const struct galloc_info * nin = next != NULL ? galloc_get(galloc, next) : NULL;
        if (nin == NULL || nin->n_views != 1 || nin->n_children != 0) {
            return false;
        }
        u = next;
    }
    return u == r;
}

// give t memory (no-op when it has some)
static bool galloc_allocate(ggml_gallocr_t galloc, struct ggml_tensor * t) {
    if (t->data != NULL) {
        if (t->view_src != NULL && t->buffer == NULL && t->view_src->buffer != NULL) {
            // view of memory placed before the view was created: initialise it in the backend
            t->data = NULL;
            return galloc_init_view(galloc, t);
        }
        return true;
    }
    if (t->view_src != NULL) {
        return galloc_init_view(galloc, t);
    }

    struct galloc_info * in = galloc_get(galloc, t);
    ggml_tallocr_t talloc = in->talloc;

    if (galloc_can_inplace(t->op)) {
        for (int i = 0; i < GGML_MAX_SRC; i++) {
            struct ggml_tensor * p = t->src[i];
            if (p == NULL) {
                break;
            }
            struct galloc_info * pin = galloc_get(galloc, p);
            if (p->data == NULL || pin == NULL || pin->n_children != 1 || pin->n_views != 0 ||
                !ggml_x_same_layout(t, p)) {
                continue;
            }
            struct ggml_tensor * r = galloc_root(galloc, p);
            struct galloc_info * rin = galloc_get(galloc, r);
            if (rin == NULL || !rin->allocated || rin->released || rin->talloc != talloc || r->buffer != talloc->buffer) {
                // not memory this pass handed out from this node's allocator
                continue;
            }
            if (r != p && (r->data != p->data || !galloc_sole_user(galloc, p, r))) {
                // p shares r's memory: reuse it only when p is its sole user, at offset 0
                continue;
            }
            in->alias = r;
            rin->n_views++;
            t->data   = p->data;
            t->buffer = r->buffer;
            if (!talloc->measure) {
                ggml_backend_buffer_init_tensor(t->buffer, t);
            }
            return true;
        }
    }

    ggml_tallocr_alloc(talloc, t);
    if (t->data == NULL) {
        return false; // reported by ggml_tallocr_alloc
    }
    in->allocated = true;
    return true;
}

// a consumer of t (or of memory shared with t) is done: free t's memory once nothing needs it
static void galloc_maybe_release(ggml_gallocr_t galloc, struct ggml_tensor * t) {
    struct galloc_info * in = galloc_get(galloc, t);
    if (in == NULL || in->released || in->n_children > 0 || in->n_views > 0) {
        return;
    }
    in->released = true;
    struct ggml_tensor * owner = in->alias != NULL ? in->alias : t->view_src;
    if (owner != NULL) {
        struct galloc_info * oin = galloc_get(galloc, owner);
        if (oin != NULL && oin->n_views > 0) {
            oin->n_views--;
            galloc_maybe_release(galloc, owner);
        }
    } else if (in->allocated && !in->input) {
        talloc_free_tensor(in->talloc, t);
    }
}

static bool galloc_impl(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    const int * seq     = galloc->parse_seq;
    const int   seq_len = galloc->parse_seq_len;

    // register every tensor the graph touches and count consumers
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        if (!galloc_register(galloc, node)) {
            return false;
        }
        galloc_get(galloc, node)->is_node = true;
        for (int j = 0; j < GGML_MAX_SRC; j++) {
            struct ggml_tensor * src = node->src[j];
            if (src == NULL) {
                break;
            }
            if (!galloc_register(galloc, src)) {
                return false;
            }
            galloc_get(galloc, src)->n_children++;
        }
    }

    // forget memory left from an earlier pass over the same buffers (see above)
    for (size_t q = 0, nq = galloc_n_scan(galloc); q < nq; q++) {
        const size_t k = galloc_scan_slot(galloc, q);
        struct galloc_info * in = &galloc->info[k];
        struct ggml_tensor * t  = galloc->hash_set.keys[k];
        if (!in->seen || t == NULL || t->data == NULL || t->buffer == NULL || t->buffer != in->talloc->buffer) {
            continue;
        }
        bool stale;
        if (in->is_node && t->op != GGML_OP_NONE) {
            stale = true;
        } else if (t->view_src != NULL) {
            stale = true; // views are re-derived from their source
        } else {
            stale = !in->talloc->measure &&
                    talloc_range_is_free(in->talloc, t->data, ggml_backend_buffer_get_alloc_size(t->buffer, t));
        }
        if (stale) {
            t->data   = NULL;
            t->buffer = NULL;
        }
    }

    // the inputs without memory, before any node (see above)
    for (int i = 0; i < graph->n_nodes; i++) {
        struct ggml_tensor * node = graph->nodes[i];
        for (int j = 0; j < GGML_MAX_SRC && node->src[j] != NULL; j++) {
            struct ggml_tensor * src = node->src[j];
            struct galloc_info * sin = galloc_get(galloc, src);
            if (src->data != NULL || src->view_src != NULL || sin->is_node || sin->n_views > 0) {
                continue; // has memory, shares it, is computed, or is written through a view (CPY)
            }
            if (!galloc_allocate(galloc, src)) {
                return false;
            }
            sin->input = true;
        }
    }

    // place the nodes; with a parse sequence, parents are released only at barriers (-1)
    int n = seq_len > 0 ? seq_len : graph->n_nodes;
    int last_barrier = 0;
    for (int ind = 0; ind < n; ind++) {
        if (seq_len == 0 || seq[ind] != -1) {
            int i = seq_len > 0 ? seq[ind] : ind;
            if (i < 0 || i >= graph->n_nodes) {
                ggml_x_error(NULL, "ggml_gallocr: parse sequence entry %d (%d) is not a node index (%d nodes)", ind, i, graph->n_nodes);
                return false;
            }
            struct ggml_tensor * node = graph->nodes[i];
            for (int j = 0; j < GGML_MAX_SRC; j++) {
                if (node->src[j] == NULL) {
                    break;
                }
                if (!galloc_allocate(galloc, node->src[j])) {
                    return false;
                }
            }
            if (!galloc_allocate(galloc, node)) {
                return false;
            }
        }
        if (seq_len == 0 || seq[ind] == -1) {
            int from = seq_len > 0 ? last_barrier : ind;
            int to   = seq_len > 0 ? ind : ind + 1;
            for (int k = from; k < to; k++) {
                int i = seq_len > 0 ? seq[k] : k;
                if (i < 0) {
                    continue;
                }
                struct ggml_tensor * node = graph->nodes[i];
                for (int j = 0; j < GGML_MAX_SRC; j++) {
                    struct ggml_tensor * src = node->src[j];
                    if (src == NULL) {
                        break;
                    }
                    struct galloc_info * sin = galloc_get(galloc, src);
                    sin->n_children--;
                    galloc_maybe_release(galloc, src);
                }
            }
            if (seq_len > 0) {
                last_barrier = ind + 1;
            }
        }
    }
    return true;
}

// after a measure pass: drop every fake address handed out, so the graph can be allocated for real
static void galloc_clear_measured(ggml_gallocr_t galloc) {
    for (size_t q = 0, nq = galloc_n_scan(galloc); q < nq; q++) {
        const size_t k = galloc_scan_slot(galloc, q);
        struct ggml_tensor * t = galloc->hash_set.keys[k];
        if (t != NULL && galloc->info[k].seen && galloc_is_measure_buffer(galloc, t)) {
            t->data   = NULL;
            t->buffer = NULL;
        }
    }
}

// info for a set of size slots, cleared (only the listed slots when slots != NULL: the others
// are never looked at)
static bool galloc_reserve_info(ggml_gallocr_t galloc, size_t size, const size_t * slots, size_t n_slots) {
    if (galloc->info_size < size) {
        struct galloc_info * info = malloc(sizeof(*info) * size);
        GGML_X_CHECK_RET(NULL, info != NULL, false, "ggml_gallocr: out of memory (%zu entries)", size);
        free(galloc->info);
        galloc->info      = info;
        galloc->info_size = size;
    }
    if (slots == NULL) {
        memset(galloc->info, 0, sizeof(*galloc->info) * size);
    } else {
        for (size_t q = 0; q < n_slots; q++) {
            memset(&galloc->info[slots[q]], 0, sizeof(galloc->info[0]));
        }
    }
    return true;
}

static bool galloc_run(ggml_gallocr_t galloc, struct ggml_cgraph * graph) {
    bool ok = galloc_impl(galloc, graph);
    bool measure = false;
    for (size_t q = 0, nq = galloc_n_scan(galloc); q < nq && !measure; q++) {
        const size_t k = galloc_scan_slot(galloc, q);
        measure = galloc->info[k].seen && galloc->info[k].talloc != NULL && galloc->info[k].talloc->measure;
    }
    if (measure) {
        galloc_clear_measured(galloc);
    }
    return ok;
}

size_t ggml_gallocr_alloc_graph(ggml_gallocr_t galloc, ggml_tallocr_t talloc, struct ggml_cgraph * graph) {
    GGML_X_CHECK_RET(NULL, galloc != NULL, 0, "ggml_gallocr_alloc_graph: galloc is NULL");
    GGML_X_CHECK_RET(NULL, talloc != NULL, 0, "ggml_gallocr_alloc_graph: talloc is NULL");
    GGML_X_CHECK_RET(NULL, graph != NULL, 0, "ggml_gallocr_alloc_graph: graph is NULL");

    // an upper bound of the distinct tensors: the nodes, their sources and view sources
    size_t bound = 1;
    for (int i = 0; i < graph->n_nodes; i++) {
        const struct ggml_tensor * node = graph->nodes[i];
        bound += 2;
        for (int j = 0; j < GGML_MAX_SRC && node->src[j] != NULL; j++) {
            bound += node->src[j]->view_src != NULL ? 2 : 1;
        }
    }
    size_t size = ggml_x_alloc_hash_size(2 * bound);
    if (galloc->own_size < size) {
        struct ggml_tensor ** keys = malloc(sizeof(*keys) * size);
        GGML_X_CHECK_RET(NULL, keys != NULL, 0, "ggml_gallocr_alloc_graph: out of memory");
        free(galloc->own_keys);
        galloc->own_keys = keys;
        galloc->own_size = size;
    }
    memset(galloc->own_keys, 0, sizeof(*galloc->own_keys) * size);
    galloc->hash_set.size = size;
    galloc->hash_set.keys = galloc->own_keys;
    if (!galloc_reserve_info(galloc, size, NULL, 0)) {
        return 0;
    }

    galloc->talloc      = talloc;
    galloc->hash_allocs = NULL;
    bool ok = galloc_run(galloc, graph);
    galloc->talloc = NULL;
    galloc->hash_set.size = 0;
    galloc->hash_set.keys = NULL;

    return ok ? ggml_tallocr_max_size(talloc) : 0;
}

// slots (may be NULL: every slot) lists the occupied slots of hash_set, so that the cost of a
// pass follows the graph rather than the size of the set
bool ggml_x_gallocr_alloc_graph_n(ggml_gallocr_t galloc, struct ggml_cgraph * graph,
                                  struct ggml_hash_set hash_set, ggml_tallocr_t * hash_node_talloc,
                                  const size_t * slots, size_t n_slots) {
    GGML_X_CHECK_RET(NULL, galloc != NULL, false, "ggml_gallocr_alloc_graph_n: galloc is NULL");
    GGML_X_CHECK_RET(NULL, graph != NULL, false, "ggml_gallocr_alloc_graph_n: graph is NULL");
    GGML_X_CHECK_RET(NULL, hash_set.size > 0 && hash_set.keys != NULL && hash_node_talloc != NULL, false,
                     "ggml_gallocr_alloc_graph_n: empty hash set or allocator table");
    if (!galloc_reserve_info(galloc, hash_set.size, slots, n_slots)) {
        return false;
    }
    galloc->talloc      = NULL;
    galloc->hash_set    = hash_set;
    galloc->hash_allocs = hash_node_talloc;
    galloc->slots       = slots;
    galloc->n_slots     = n_slots;
    bool ok = galloc_run(galloc, graph);
    galloc->hash_set.size = 0;
    galloc->hash_set.keys = NULL;
    galloc->hash_allocs   = NULL;
    galloc->slots         = NULL;
    galloc->n_slots       = 0;
    return ok;
}

void ggml_gallocr_alloc_graph_n(ggml_gallocr_t galloc, struct ggml_cgraph * graph, struct ggml_hash_set hash_set, ggml_tallocr_t * hash_node_talloc) {
    ggml_x_gallocr_alloc_graph_n(galloc, graph, hash_set, hash_node_talloc, NULL, 0);
}

// ---------------------------------------------------------------------------------------------
// legacy allocator: one tensor allocator and one graph allocator

struct ggml_allocr {
    ggml_tallocr_t talloc;
    ggml_gallocr_t galloc;
};

ggml_allocr_t ggml_x_allocr_wrap(ggml_tallocr_t talloc) {
    if (talloc == NULL) {
        return NULL;
    }
    ggml_allocr_t alloc = calloc(1, sizeof(*alloc));
    ggml_gallocr_t galloc = alloc != NULL ? ggml_gallocr_new() : NULL;
    if (alloc == NULL || galloc == NULL) {
        free(alloc);
        ggml_tallocr_free(talloc);
        ggml_x_error(NULL, "ggml_allocr_new: out of memory");
        return NULL;
    }
    alloc->talloc = talloc;
    alloc->galloc = galloc;
    return alloc;
}

ggml_allocr_t ggml_allocr_new_from_buffer(struct ggml_backend_buffer * buffer) {
    return ggml_x_allocr_wrap(ggml_tallocr_new_from_buffer(buffer));
}

ggml_allocr_t ggml_allocr_new_from_backend(struct ggml_backend * backend, size_t size) {
    return ggml_x_allocr_wrap(ggml_tallocr_new_from_backend(backend, size));
}

ggml_allocr_t ggml_allocr_new_measure_from_backend(struct ggml_backend * backend) {
    return ggml_x_allocr_wrap(ggml_tallocr_new_measure_from_backend(backend));
}

struct ggml_backend_buffer * ggml_allocr_get_buffer(ggml_allocr_t alloc) {
    GGML_X_CHECK_RET(NULL, alloc != NULL, NULL, "ggml_allocr_get_buffer: alloc is NULL");
    return ggml_tallocr_get_buffer(alloc->talloc);
}

void ggml_allocr_set_parse_seq(ggml_allocr_t alloc, const int * list, int n) {
    GGML_X_CHECK_VOID(NULL, alloc != NULL, "ggml_allocr_set_parse_seq: alloc is NULL");
    ggml_gallocr_set_parse_seq(alloc->galloc, list, n);
}

void ggml_allocr_free(ggml_allocr_t alloc) {
    if (alloc == NULL) {
        return;
    }
    ggml_gallocr_free(alloc->galloc);
    ggml_tallocr_free(alloc->talloc);
    free(alloc);
}

bool ggml_allocr_is_measure(ggml_allocr_t alloc) {
    GGML_X_CHECK_RET(NULL, alloc != NULL, false, "ggml_allocr_is_measure: alloc is NULL");
    return ggml_tallocr_is_measure(alloc->talloc);
}

void ggml_allocr_reset(ggml_allocr_t alloc) {
    GGML_X_CHECK_VOID(NULL, alloc != NULL, "ggml_allocr_reset: alloc is NULL");
    ggml_tallocr_reset(alloc->talloc);
}

void ggml_allocr_alloc(ggml_allocr_t alloc, struct ggml_tensor * tensor) {
    GGML_X_CHECK_VOID(NULL, alloc != NULL, "ggml_allocr_alloc: alloc is NULL");
    ggml_tallocr_alloc(alloc->talloc, tensor);
}

size_t ggml_allocr_max_size(ggml_allocr_t alloc) {
    GGML_X_CHECK_RET(NULL, alloc != NULL, 0, "ggml_allocr_max_size: alloc is NULL");
    return ggml_tallocr_max_size(alloc->talloc);
}

size_t ggml_allocr_alloc_graph(ggml_allocr_t alloc, struct ggml_cgraph * graph) {
    GGML_X_CHECK_RET(NULL, alloc != NULL, 0, "ggml_allocr_alloc_graph: alloc is NULL");
    return ggml_gallocr_alloc_graph(alloc->galloc, alloc->talloc, graph);
}

// ---------------------------------------------------------------------------------------------
// utils

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors_from_buft(struct ggml_context * ctx, ggml_backend_buffer_type_t buft) {
    GGML_X_CHECK(ctx, ctx != NULL, "ggml_backend_alloc_ctx_tensors_from_buft: ctx is NULL");
    GGML_X_CHECK(ctx, buft != NULL, "ggml_backend_alloc_ctx_tensors_from_buft: buft is NULL");
    GGML_X_CHECK(ctx, ggml_get_no_alloc(ctx), "ggml_backend_alloc_ctx_tensors_from_buft: the context is not no_alloc");

    size_t alignment = ggml_backend_buft_get_alignment(buft);
    GGML_X_CHECK(ctx, alloc_is_pow2(alignment), "ggml_backend_alloc_ctx_tensors_from_buft: buffer type %s has alignment %zu (not a power of two)",
                 ggml_backend_buft_name(buft), alignment);

    // first pass: total size of the tensors that need memory
    size_t total = 0;
    int n_alloc = 0;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data != NULL || t->view_src != NULL) {
            continue;
        }
        size_t size = ggml_backend_buft_get_alloc_size(buft, t);
        GGML_X_CHECK(ctx, size <= SIZE_MAX / 2 - alignment && total <= SIZE_MAX / 2 - GGML_PAD(size, alignment),
                     "ggml_backend_alloc_ctx_tensors_from_buft: total size overflows (tensor '%s', %zu bytes)", t->name, size);
        total += GGML_PAD(size, alignment);
        n_alloc++;
    }
    if (n_alloc == 0) {
        // every tensor already has memory
        return NULL;
    }

    ggml_backend_buffer_t buffer = ggml_backend_buft_alloc_buffer(buft, total);
    GGML_X_CHECK(ctx, buffer != NULL, "ggml_backend_alloc_ctx_tensors_from_buft: failed to allocate %s buffer of %zu bytes",
                 ggml_backend_buft_name(buft), total);

    char * base = ggml_backend_buffer_get_base(buffer);
    if (base == NULL) {
        // empty tensors only (total == 0): give them a valid address anyway
        ggml_backend_buffer_free(buffer);
        buffer = ggml_backend_buft_alloc_buffer(buft, alignment);
        GGML_X_CHECK(ctx, buffer != NULL, "ggml_backend_alloc_ctx_tensors_from_buft: failed to allocate %s buffer",
                     ggml_backend_buft_name(buft));
        base = ggml_backend_buffer_get_base(buffer);
    }
    size_t skip = alloc_align_offset(base, 0, alignment);
    if (skip != 0) {
        // the buffer type handed out misaligned memory: start over with room to align
        ggml_backend_buffer_free(buffer);
        buffer = ggml_backend_buft_alloc_buffer(buft, total + alignment);
        GGML_X_CHECK(ctx, buffer != NULL, "ggml_backend_alloc_ctx_tensors_from_buft: failed to allocate %s buffer of %zu bytes",
                     ggml_backend_buft_name(buft), total + alignment);
        base = ggml_backend_buffer_get_base(buffer);
        skip = alloc_align_offset(base, 0, alignment);
    }

    // second pass: place the tensors in creation order, then initialise the views
    size_t offset = skip;
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data == NULL && t->view_src == NULL) {
            size_t size = ggml_backend_buft_get_alloc_size(buft, t);
            ggml_backend_tensor_alloc(buffer, t, base + offset);
            offset += GGML_PAD(size, alignment);
        } else if (t->view_src != NULL && t->buffer == NULL && t->view_src->buffer != NULL) {
            // a view: of a tensor placed above, or of one allocated earlier elsewhere
            ggml_backend_view_init(t->view_src->buffer, t);
        }
    }
    return buffer;
}

ggml_backend_buffer_t ggml_backend_alloc_ctx_tensors(struct ggml_context * ctx, ggml_backend_t backend) {
    GGML_X_CHECK(ctx, backend != NULL, "ggml_backend_alloc_ctx_tensors: backend is NULL");
    return ggml_backend_alloc_ctx_tensors_from_buft(ctx, ggml_backend_get_default_buffer_type(backend));
}
