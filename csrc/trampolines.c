// trampolines.c - GGML_CALL vtable entries of Go-implemented buffer types and buffers, and the
// trampolines of Go custom ops and eval callbacks (see trampolines.h). Compiled by cgo as
// part of package csrc; the go* functions are the //export functions of the root package's
// callbacks.go, declared in goexports.h.

#include "trampolines.h"

#include <stdlib.h>
#include <string.h>

#include "ggml-backend-impl.h"
#include "ggml-impl.h"

#include "goexports.h"

// the handle kept in a buffer type's or a buffer's context pointer
#define GO_HANDLE(ctx) ((uintptr_t) (ctx))

void ggml_go_set_error(const char * msg) {
    ggml_x_error(NULL, "%s", msg != NULL ? msg : "error in a Go callback");
}

// ---------------------------------------------------------------------------------------------
// buffer (ggml_backend_buffer_i)

GGML_CALL static const char * ggml_go_buffer_get_name(ggml_backend_buffer_t buffer) {
    return goBufferGetName(GO_HANDLE(buffer->context));
}

GGML_CALL static void ggml_go_buffer_free_buffer(ggml_backend_buffer_t buffer) {
    goBufferFreeBuffer(GO_HANDLE(buffer->context));
}

GGML_CALL static void * ggml_go_buffer_get_base(ggml_backend_buffer_t buffer) {
    return (void *) goBufferGetBase(GO_HANDLE(buffer->context));
}

GGML_CALL static void ggml_go_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    goBufferInitTensor(GO_HANDLE(buffer->context), tensor);
}

GGML_CALL static void ggml_go_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor,
                                                const void * data, size_t offset, size_t size) {
    goBufferSetTensor(GO_HANDLE(buffer->context), tensor, (void *) data, offset, size);
}

GGML_CALL static void ggml_go_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor,
                                                void * data, size_t offset, size_t size) {
    goBufferGetTensor(GO_HANDLE(buffer->context), (struct ggml_tensor *) tensor, data, offset, size);
}

GGML_CALL static bool ggml_go_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src,
                                                struct ggml_tensor * dst) {
    return goBufferCpyTensor(GO_HANDLE(buffer->context), (struct ggml_tensor *) src, dst);
}

GGML_CALL static void ggml_go_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    goBufferClear(GO_HANDLE(buffer->context), value);
}

GGML_CALL static void ggml_go_buffer_reset(ggml_backend_buffer_t buffer) {
    goBufferReset(GO_HANDLE(buffer->context));
}

static const struct ggml_backend_buffer_i ggml_go_buffer_iface = {
    /* .get_name    = */ ggml_go_buffer_get_name,
    /* .free_buffer = */ ggml_go_buffer_free_buffer,
    /* .get_base    = */ ggml_go_buffer_get_base,
    /* .init_tensor = */ ggml_go_buffer_init_tensor,
    /* .set_tensor  = */ ggml_go_buffer_set_tensor,
    /* .get_tensor  = */ ggml_go_buffer_get_tensor,
    /* .cpy_tensor  = */ ggml_go_buffer_cpy_tensor,
    /* .clear       = */ ggml_go_buffer_clear,
    /* .reset       = */ ggml_go_buffer_reset,
};

ggml_backend_buffer_t ggml_go_buffer_create(ggml_backend_buffer_type_t buft, uintptr_t h, size_t size) {
    return ggml_backend_buffer_init(buft, ggml_go_buffer_iface, (void *) h, size);
}

uintptr_t ggml_go_buffer_handle(ggml_backend_buffer_t buffer) {
    if (buffer == NULL || buffer->iface.get_name != ggml_go_buffer_get_name) {
        return 0;
    }
    return GO_HANDLE(buffer->context);
}

// ---------------------------------------------------------------------------------------------
// buffer type (ggml_backend_buffer_type_i)

GGML_CALL static const char * ggml_go_buft_get_name(ggml_backend_buffer_type_t buft) {
    return goBuftGetName(GO_HANDLE(buft->context));
}

GGML_CALL static ggml_backend_buffer_t ggml_go_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    uintptr_t h = goBuftAllocBuffer(GO_HANDLE(buft->context), size);
    if (h == 0) {
        return NULL; // the Go side recorded why
    }
    ggml_backend_buffer_t buffer = ggml_go_buffer_create(buft, h, size);
    if (buffer == NULL) {
        goBufferFreeBuffer(h);
    }
    return buffer;
}

GGML_CALL static size_t ggml_go_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    return goBuftGetAlignment(GO_HANDLE(buft->context));
}

GGML_CALL static size_t ggml_go_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor) {
    return goBuftGetAllocSize(GO_HANDLE(buft->context), (struct ggml_tensor *) tensor);
}

GGML_CALL static bool ggml_go_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    return goBuftSupportsBackend(GO_HANDLE(buft->context), backend);
}

GGML_CALL static bool ggml_go_buft_is_host(ggml_backend_buffer_type_t buft) {
    return goBuftIsHost(GO_HANDLE(buft->context));
}

static const struct ggml_backend_buffer_type_i ggml_go_buft_iface = {
    /* .get_name         = */ ggml_go_buft_get_name,
    /* .alloc_buffer     = */ ggml_go_buft_alloc_buffer,
    /* .get_alignment    = */ ggml_go_buft_get_alignment,
    /* .get_alloc_size   = */ ggml_go_buft_get_alloc_size,
    /* .supports_backend = */ ggml_go_buft_supports_backend,
    /* .is_host          = */ ggml_go_buft_is_host,
};

ggml_backend_buffer_type_t ggml_go_buft_create(uintptr_t h) {
    ggml_backend_buffer_type_t buft = malloc(sizeof(*buft));
    if (buft == NULL) {
        return NULL;
    }
    buft->iface   = ggml_go_buft_iface;
    buft->context = (void *) h;
    return buft;
}

void ggml_go_buft_delete(ggml_backend_buffer_type_t buft) {
    free(buft);
}

bool ggml_go_buft_is_go(ggml_backend_buffer_type_t buft) {
    return buft != NULL && buft->iface.get_name == ggml_go_buft_get_name;
}

// ---------------------------------------------------------------------------------------------
// custom ops

void ggml_go_custom1(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    goCustom(GO_HANDLE(userdata), dst, (struct ggml_tensor *) a, NULL, NULL, ith, nth);
}

void ggml_go_custom2(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                     int ith, int nth, void * userdata) {
    goCustom(GO_HANDLE(userdata), dst, (struct ggml_tensor *) a, (struct ggml_tensor *) b, NULL, ith, nth);
}

void ggml_go_custom3(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                     const struct ggml_tensor * c, int ith, int nth, void * userdata) {
    goCustom(GO_HANDLE(userdata), dst, (struct ggml_tensor *) a, (struct ggml_tensor *) b,
             (struct ggml_tensor *) c, ith, nth);
}

int ggml_go_graph_custom_handles(const struct ggml_cgraph * g, uintptr_t * out, int cap) {
    int n = 0;
    for (int i = 0; g != NULL && i < g->n_nodes; i++) {
        const struct ggml_tensor * node = g->nodes[i];
        if (node->op != GGML_OP_MAP_CUSTOM1 && node->op != GGML_OP_MAP_CUSTOM2 && node->op != GGML_OP_MAP_CUSTOM3) {
            continue;
        }
        struct ggml_x_map_custom_params p;
        memcpy(&p, node->op_params, sizeof(p));
        if (p.fun != (void *) ggml_go_custom1 && p.fun != (void *) ggml_go_custom2 && p.fun != (void *) ggml_go_custom3) {
            continue;
        }
        if (n < cap) {
            out[n] = GO_HANDLE(p.userdata);
        }
        n++;
    }
    return n;
}

// ---------------------------------------------------------------------------------------------
// eval callback of ggml_backend_compare_graph_backend

GGML_CALL static bool ggml_go_eval_callback(int node_index, struct ggml_tensor * t1, struct ggml_tensor * t2, void * user_data) {
    return goEvalCallback(GO_HANDLE(user_data), node_index, t1, t2);
}

ggml_backend_eval_callback ggml_go_eval_callback_ptr(void) {
    return ggml_go_eval_callback;
}
