// train_trampolines.h - the C side of the Go callbacks of training: the optimizer callback
// (ggml_opt_callback, callback_data = a cgo.Handle of the Go optimizer run) and user gradients of
// custom ops (ggml_x_custom_grad_t, userdata = a cgo.Handle of the Go gradient function).

#ifndef GGML_GO_TRAIN_TRAMPOLINES_H
#define GGML_GO_TRAIN_TRAMPOLINES_H

#include <stdbool.h>
#include <stdint.h>

#include "ggml.h"

// calls the //export goOptCallback of train_callbacks.go with the handle in data
void ggml_go_opt_callback(void * data, int accum_step, float * sched, bool * cancel);

// ggml_opt_resume_g with the Go trampoline (data = the handle; handle 0: no callback), clearing and capturing the
// calling thread's error message like the ggo_* helpers (err: malloc'd message or NULL)
enum ggml_opt_result ggml_go_opt_resume_g(struct ggml_context * ctx, struct ggml_opt_context * opt,
                                          struct ggml_tensor * f, struct ggml_cgraph * gf, struct ggml_cgraph * gb,
                                          uintptr_t handle, char ** err);

// calls the //export goCustomGrad of train_callbacks.go with the handle in userdata
void ggml_go_custom_grad(struct ggml_context * ctx, struct ggml_tensor * node, struct ggml_tensor * grad,
                         struct ggml_tensor ** src_grads, void * userdata);

// optimizer state helpers of optimizer.go / optimizer_state.go
struct ggml_opt_context * ggo_opt_new(void);                    // zeroed, malloc'd
void ggo_opt_free(struct ggml_opt_context * opt);                // its context, then itself
void ggo_opt_free_state(struct ggml_opt_context * opt);          // its context only
// ggml_opt_init with a context of its own; returns the malloc'd error message or NULL
char * ggo_ggml_opt_init(struct ggml_opt_context * opt, struct ggml_opt_params p, int64_t nx);

#endif // GGML_GO_TRAIN_TRAMPOLINES_H
