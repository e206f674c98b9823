// ggml_go.h - C helpers shared by the cgo preambles of package ggml (not part of the C library).
//
// The C library records error messages per OS thread (ggml_x_last_error). A goroutine may move
// to another OS thread between two cgo calls, so a message is read in the same C call that
// produced it: a helper clears the message, calls the library and hands back a malloc'd copy of
// the message (or NULL), which the Go side turns into a string and frees (takeCError).

#ifndef GGML_GO_H
#define GGML_GO_H

#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

// A malloc'd copy of the calling thread's last error message, or NULL when there is none (or
// no memory); the message is cleared.
static inline char * ggo_take_error(void) {
    const char * msg = ggml_x_last_error();
    char * out = NULL;
    if (msg != NULL) {
        size_t n = strlen(msg) + 1;
        out = (char *) malloc(n);
        if (out != NULL) {
            memcpy(out, msg, n);
        }
    }
    ggml_x_clear_error();
    return out;
}

// A pointer result and the error message of the call that produced it.
typedef struct {
    void * p;
    char * err;
} ggo_pres;

// A boolean/integer result and the error message of the call that produced it.
typedef struct {
    long long v;
    char * err;
} ggo_ires;

#define GGO_PCALL(expr) \
    do { \
        ggml_x_clear_error(); \
        void * p_ = (void *) (expr); \
        ggo_pres r_ = { p_, ggo_take_error() }; \
        return r_; \
    } while (0)

#define GGO_ICALL(expr) \
    do { \
        ggml_x_clear_error(); \
        long long v_ = (long long) (expr); \
        ggo_ires r_ = { v_, ggo_take_error() }; \
        return r_; \
    } while (0)

#define GGO_VCALL(stmt) \
    do { \
        ggml_x_clear_error(); \
        stmt; \
        return ggo_take_error(); \
    } while (0)

// Marker in padding[0] of a tensor whose buffer was freed (see ggo_detach_buffer); only read
// while the tensor has no data.
#define GGO_DETACHED 'F'

// Forget every tensor of ctx that lives in buf (data and buffer cleared, GGO_DETACHED set), so
// that once buf is freed those tensors report that their buffer was closed instead of
// touching freed memory.
static inline void ggo_detach_buffer(struct ggml_context * ctx, struct ggml_backend_buffer * buf) {
    for (struct ggml_tensor * t = ggml_get_first_tensor(ctx); t != NULL; t = ggml_get_next_tensor(ctx, t)) {
        if (t->buffer == buf) {
            t->data = NULL;
            t->buffer = NULL;
            t->padding[0] = GGO_DETACHED;
        }
    }
}

#endif // GGML_GO_H
