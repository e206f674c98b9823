// trampolines.h - the C side of Go-implemented buffer types, buffers, custom ops and
// callbacks (package ggml, callbacks.go).
//
// A buffer type or buffer made from Go is an ordinary C object whose vtable points to the
// GGML_CALL functions ggml_go_buft_<field> and ggml_go_buffer_<field> of trampolines.c; its
// context pointer holds a cgo.Handle of the Go object. Each trampoline forwards to an exported
// Go function (go_buft_* / go_buffer_* in callbacks.go). With GGML_MULTIPLATFORM the
// trampolines are ms_abi functions called from C and calling the (sysv) Go exports.
//
// Only declarations here: callbacks.go includes this header in the preamble of a file with
// //export functions.

#ifndef GGML_GO_TRAMPOLINES_H
#define GGML_GO_TRAMPOLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml.h"
#include "ggml-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

// A buffer type whose vtable is the Go trampolines and whose context is the handle h (malloc'd;
// free it with ggml_go_buft_delete once no buffer of the type is left). NULL when out of memory.
ggml_backend_buffer_type_t ggml_go_buft_create(uintptr_t h);
void                       ggml_go_buft_delete(ggml_backend_buffer_type_t buft);

// A buffer of the Go buffer type buft whose vtable is the Go trampolines and whose context is
// the handle h (ggml_backend_buffer_init). NULL when out of memory (the handle is not freed).
ggml_backend_buffer_t ggml_go_buffer_create(ggml_backend_buffer_type_t buft, uintptr_t h, size_t size);

// whether buft / buffer was made by ggml_go_buft_create / ggml_go_buffer_create, and its handle
bool      ggml_go_buft_is_go(ggml_backend_buffer_type_t buft);
uintptr_t ggml_go_buffer_handle(ggml_backend_buffer_t buffer);

// Records msg as the calling thread's error (ggml_x_error; recoverable mode reports it to the
// C caller's Go wrapper, which runs on this thread).
void ggml_go_set_error(const char * msg);

// Custom op trampolines (plain C ABI: ggml_custom*_op_t is not GGML_CALL); userdata is a handle.
void ggml_go_custom1(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata);
void ggml_go_custom2(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                     int ith, int nth, void * userdata);
void ggml_go_custom3(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                     const struct ggml_tensor * c, int ith, int nth, void * userdata);

// Writes into out (at most cap entries) the handles of the Go custom op nodes of g (MAP_CUSTOM*
// nodes whose function is a ggml_go_custom* trampoline) and returns how many there are.
int ggml_go_graph_custom_handles(const struct ggml_cgraph * g, uintptr_t * out, int cap);

// The GGML_CALL eval callback for ggml_backend_compare_graph_backend (its user_data is a
// handle), as a function pointer.
ggml_backend_eval_callback ggml_go_eval_callback_ptr(void);

#ifdef __cplusplus
}
#endif

#endif // GGML_GO_TRAMPOLINES_H
