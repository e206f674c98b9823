// goexports.h - prototypes of the //export functions of package ggml (callbacks.go,
// train_callbacks.go) that the trampolines call. The trampolines are compiled in package csrc,
// which cannot see the root package's generated _cgo_export.h, so the prototypes are written
// here; the symbols resolve when the program is linked. callbacks.go and train_callbacks.go
// include this header in their preambles too, so cgo's own declarations are checked against
// these by the C compiler: a mismatch fails the build.

#ifndef GGML_GO_EXPORTS_H
#define GGML_GO_EXPORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ggml.h"
#include "ggml-backend.h"

// buffer types (ggml_backend_buffer_type_i); h is a cgo.Handle of the Go buffer type
char *    goBuftGetName(uintptr_t h);
uintptr_t goBuftAllocBuffer(uintptr_t h, size_t size);
size_t    goBuftGetAlignment(uintptr_t h);
size_t    goBuftGetAllocSize(uintptr_t h, struct ggml_tensor * t);
bool      goBuftSupportsBackend(uintptr_t h, ggml_backend_t b);
bool      goBuftIsHost(uintptr_t h);

// buffers (ggml_backend_buffer_i); h is a cgo.Handle of the Go buffer
char *    goBufferGetName(uintptr_t h);
void      goBufferFreeBuffer(uintptr_t h);
uintptr_t goBufferGetBase(uintptr_t h);
void      goBufferInitTensor(uintptr_t h, struct ggml_tensor * t);
void      goBufferSetTensor(uintptr_t h, struct ggml_tensor * t, void * data, size_t off, size_t size);
void      goBufferGetTensor(uintptr_t h, struct ggml_tensor * t, void * data, size_t off, size_t size);
bool      goBufferCpyTensor(uintptr_t h, struct ggml_tensor * src, struct ggml_tensor * dst);
void      goBufferClear(uintptr_t h, uint8_t v);
void      goBufferReset(uintptr_t h);

// custom ops and eval callbacks; h is a cgo.Handle of the Go function's state
void goCustom(uintptr_t h, struct ggml_tensor * dst, struct ggml_tensor * a, struct ggml_tensor * b,
              struct ggml_tensor * c, int ith, int nth);
bool goEvalCallback(uintptr_t h, int i, struct ggml_tensor * t1, struct ggml_tensor * t2);

// training (train_callbacks.go, called by train_trampolines.c): the optimizer's per-iteration
// callback and user gradients of Go custom ops; h is a cgo.Handle of the Go state
void goOptCallback(uintptr_t h, int accum_step, float * sched, bool * cancel);
void goCustomGrad(struct ggml_context * ctx, struct ggml_tensor * node, struct ggml_tensor * grad,
                  struct ggml_tensor ** src_grads, uintptr_t h);

#endif // GGML_GO_EXPORTS_H
