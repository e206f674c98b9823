// cpu/buffer.c - the CPU buffer type: 64-byte aligned host memory (and buffers over caller
// memory), plus the high-bandwidth-memory variant (GGML_USE_CPU_HBM, memkind's hbwmalloc).
// Buffers of these types can be used by the CPU backend only (supports_backend). Also the
// allocators over host memory of ggml-alloc.h (ggml_tallocr_new, ggml_tallocr_new_measure,
// ggml_allocr_new, ggml_allocr_new_measure).

#include "ggml-backend-impl.h"
#include "cpu/host-alloc.h"
#include "ggml-backend-internal.h"
#include "ggml-impl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif


#define GGML_X_CPU_ALIGNMENT 64 // wide enough for AVX-512 loads

// large buffers: 2 MiB aligned and hinted to transparent huge pages
#define GGML_X_HUGE_PAGE ((size_t) 2 << 20)

void * ggml_x_host_alloc(size_t size, size_t align) {
    // Weights, KV caches and compute buffers are streamed: with 4 KiB pages every 4 KiB of a
    // stream is a TLB miss and a stop of the hardware prefetcher (measured in a VM: up to half
    // the read bandwidth of the repacked weights; the Q6_K output matrix of a TinyLlama-shaped
    // model in a CPU buffer, 2 threads, 1432-1463 -> 1007-1063 us per step). Where THP is
    // "madvise" (common), only a hinted range gets huge pages.
    const bool huge = size >= GGML_X_HUGE_PAGE;
    if (huge && align < GGML_X_HUGE_PAGE) {
        align = GGML_X_HUGE_PAGE;
    }
    const size_t padded = GGML_PAD(size == 0 ? 1 : size, align);
    void * data = NULL;
    if (posix_memalign(&data, align, padded) != 0) {
        return NULL;
    }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge && data != NULL) {
        (void) madvise(data, padded, MADV_HUGEPAGE); // a hint: failure is harmless
    }
#endif
    return data;
}

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
    ggml_backend_buffer_t src_buf = ggml_x_tensor_buffer(src);
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
        ggml_x_backend_soft_error("ggml_backend_cpu_buffer_type_alloc_buffer: size %zu too large", size);
        return NULL;
    }
    void * data = ggml_x_host_alloc(size, GGML_X_CPU_ALIGNMENT);
    if (data == NULL) {
        ggml_x_backend_soft_error("ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size %zu", size);
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
    GGML_X_CHECK_RET(NULL, ptr != NULL || size == 0, NULL, "ggml_backend_cpu_buffer_from_ptr: ptr is NULL (size %zu)", size);
    return ggml_backend_buffer_init(ggml_backend_cpu_buffer_type(), cpu_buffer_from_ptr_iface, ptr, size);
}

// ---------------------------------------------------------------------------------------------
// allocators over host memory (ggml-alloc.h)

static bool cpu_is_pow2(size_t x) {
    return x != 0 && (x & (x - 1)) == 0;
}

ggml_tallocr_t ggml_tallocr_new(void * data, size_t size, size_t alignment) {
    GGML_X_CHECK_RET(NULL, data != NULL, NULL, "ggml_tallocr_new: data is NULL");
    GGML_X_CHECK_RET(NULL, cpu_is_pow2(alignment), NULL, "ggml_tallocr_new: alignment %zu is not a power of two", alignment);
    ggml_backend_buffer_t buffer = ggml_backend_cpu_buffer_from_ptr(data, size);
    if (buffer == NULL) {
        return NULL;
    }
    // the caller's alignment wins over the CPU buffer type's
    return ggml_x_tallocr_new_aligned(buffer, false, alignment);
}

ggml_tallocr_t ggml_tallocr_new_measure(size_t alignment) {
    GGML_X_CHECK_RET(NULL, cpu_is_pow2(alignment), NULL, "ggml_tallocr_new_measure: alignment %zu is not a power of two", alignment);
    // a tiny real buffer gives the measure allocator its buffer type (alloc sizes)
    ggml_backend_buffer_t buffer = ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), 1);
    if (buffer == NULL) {
        return NULL;
    }
    return ggml_x_tallocr_new_aligned(buffer, true, alignment);
}

ggml_allocr_t ggml_allocr_new(void * data, size_t size, size_t alignment) {
    return ggml_x_allocr_wrap(ggml_tallocr_new(data, size, alignment));
}

ggml_allocr_t ggml_allocr_new_measure(size_t alignment) {
    return ggml_x_allocr_wrap(ggml_tallocr_new_measure(alignment));
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
        ggml_x_backend_soft_error("ggml_backend_cpu_hbm_buffer_type_alloc_buffer: failed to allocate HBM buffer of size %zu", size);
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
