// ggml-alloc.c - placing tensors in backend buffers.
//
//   * tallocr: hands out aligned ranges of one buffer from a list of free blocks (best fit, with
//     neighbouring free blocks merged), or in measure mode only records how much memory the
//     allocations would need;
//   * ggml_backend_alloc_ctx_tensors*: one buffer for every tensor of a no_alloc context.
//
// The graph allocators (gallocr, allocr) are a later part of this file.

#include "ggml-alloc.h"
#include "ggml-backend-impl.h"
#include "ggml-impl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------------------------
// helpers

#define ALLOC_CHECK(cond, ret, ...) \
    do { \
        if (!(cond)) { \
            ggml_x_error(NULL, __VA_ARGS__); \
            return ret; \
        } \
    } while (0)

#define ALLOC_CHECK_VOID(cond, ...) \
    do { \
        if (!(cond)) { \
            ggml_x_error(NULL, __VA_ARGS__); \
            return; \
        } \
    } while (0)

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
    ALLOC_CHECK(buffer != NULL, NULL, "ggml_tallocr_new_from_buffer: buffer is NULL");
    return talloc_new_impl(buffer, false, false);
}

ggml_tallocr_t ggml_tallocr_new_from_buft(struct ggml_backend_buffer_type * buft, size_t size) {
    ALLOC_CHECK(buft != NULL, NULL, "ggml_tallocr_new_from_buft: buft is NULL");
    ggml_backend_buffer_t buffer = ggml_backend_buft_alloc_buffer(buft, size);
    if (buffer == NULL) {
        return NULL;
    }
    return talloc_new_impl(buffer, true, false);
}

ggml_tallocr_t ggml_tallocr_new_from_backend(struct ggml_backend * backend, size_t size) {
    ALLOC_CHECK(backend != NULL, NULL, "ggml_tallocr_new_from_backend: backend is NULL");
    return ggml_tallocr_new_from_buft(ggml_backend_get_default_buffer_type(backend), size);
}

ggml_tallocr_t ggml_tallocr_new_measure_from_buft(struct ggml_backend_buffer_type * buft) {
    ALLOC_CHECK(buft != NULL, NULL, "ggml_tallocr_new_measure_from_buft: buft is NULL");
    // a tiny real buffer gives the measure allocator its buffer type (alignment, alloc sizes)
    ggml_backend_buffer_t buffer = ggml_backend_buft_alloc_buffer(buft, 1);
    if (buffer == NULL) {
        return NULL;
    }
    return talloc_new_impl(buffer, true, true);
}

ggml_tallocr_t ggml_tallocr_new_measure_from_backend(struct ggml_backend * backend) {
    ALLOC_CHECK(backend != NULL, NULL, "ggml_tallocr_new_measure_from_backend: backend is NULL");
    return ggml_tallocr_new_measure_from_buft(ggml_backend_get_default_buffer_type(backend));
}

ggml_tallocr_t ggml_tallocr_new(void * data, size_t size, size_t alignment) {
    ALLOC_CHECK(data != NULL, NULL, "ggml_tallocr_new: data is NULL");
    ALLOC_CHECK(alloc_is_pow2(alignment), NULL, "ggml_tallocr_new: alignment %zu is not a power of two", alignment);
    ggml_backend_buffer_t buffer = ggml_backend_cpu_buffer_from_ptr(data, size);
    if (buffer == NULL) {
        return NULL;
    }
    ggml_tallocr_t talloc = talloc_new_impl(buffer, true, false);
    if (talloc != NULL) {
        // the caller's alignment wins over the CPU buffer type's
        talloc->alignment = alignment;
        ggml_tallocr_reset(talloc);
    }
    return talloc;
}

ggml_tallocr_t ggml_tallocr_new_measure(size_t alignment) {
    ALLOC_CHECK(alloc_is_pow2(alignment), NULL, "ggml_tallocr_new_measure: alignment %zu is not a power of two", alignment);
    ggml_tallocr_t talloc = ggml_tallocr_new_measure_from_buft(ggml_backend_cpu_buffer_type());
    if (talloc != NULL) {
        talloc->alignment = alignment;
        ggml_tallocr_reset(talloc);
    }
    return talloc;
}

struct ggml_backend_buffer * ggml_tallocr_get_buffer(ggml_tallocr_t talloc) {
    ALLOC_CHECK(talloc != NULL, NULL, "ggml_tallocr_get_buffer: talloc is NULL");
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
    ALLOC_CHECK(talloc != NULL, false, "ggml_tallocr_is_measure: talloc is NULL");
    return talloc->measure;
}

void ggml_tallocr_reset(ggml_tallocr_t talloc) {
    ALLOC_CHECK_VOID(talloc != NULL, "ggml_tallocr_reset: talloc is NULL");

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
    ALLOC_CHECK_VOID(talloc != NULL, "ggml_tallocr_alloc: talloc is NULL");
    ALLOC_CHECK_VOID(tensor != NULL, "ggml_tallocr_alloc: tensor is NULL");
    ALLOC_CHECK_VOID(tensor->view_src == NULL, "ggml_tallocr_alloc: tensor '%s' is a view", tensor->name);
    ALLOC_CHECK_VOID(tensor->data == NULL, "ggml_tallocr_alloc: tensor '%s' already has data", tensor->name);

    size_t size = ggml_backend_buffer_get_alloc_size(talloc->buffer, tensor);
    ALLOC_CHECK_VOID(size <= GGML_X_TALLOC_MEASURE_SIZE, "ggml_tallocr_alloc: tensor '%s' too large (%zu bytes)",
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
// graph allocator to reuse the memory of tensors that are no longer needed.
__attribute__((unused))
static void talloc_free_tensor(ggml_tallocr_t talloc, struct ggml_tensor * tensor) {
    char * addr = tensor->data;
    if (addr < talloc->base || (talloc->measure ? false : (size_t) (addr - talloc->base) >= ggml_backend_buffer_get_size(talloc->buffer))) {
        // not ours (e.g. allocated elsewhere by the user)
        return;
    }
    size_t size = GGML_PAD(ggml_backend_buffer_get_alloc_size(talloc->buffer, tensor), talloc->alignment);

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
    } else {
        GGML_ASSERT(talloc->n_free_blocks < GGML_X_TALLOC_MAX_FREE_BLOCKS);
        memmove(&talloc->free_blocks[pos + 1], &talloc->free_blocks[pos],
                sizeof(struct talloc_block) * (size_t) (talloc->n_free_blocks - pos));
        talloc->free_blocks[pos].addr = addr;
        talloc->free_blocks[pos].size = size;
        talloc->n_free_blocks++;
    }
}

size_t ggml_tallocr_max_size(ggml_tallocr_t talloc) {
    ALLOC_CHECK(talloc != NULL, 0, "ggml_tallocr_max_size: talloc is NULL");
    return talloc->max_size;
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
