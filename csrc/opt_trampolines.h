// opt_trampolines.h - the C side of Go optimizer callbacks (ggml_opt_callback): the trampoline
// handed to ggml_opt_resume_g, whose callback_data is a cgo.Handle of the Go optimizer run.

#ifndef GGML_GO_OPT_TRAMPOLINES_H
#define GGML_GO_OPT_TRAMPOLINES_H

#include <stdbool.h>
#include <stdint.h>

#include "ggml.h"

// calls the //export goOptCallback of opt_callbacks.go with the handle in data
void ggml_go_opt_callback(void * data, int accum_step, float * sched, bool * cancel);

// ggml_opt_resume_g with the Go trampoline (data = the handle; handle 0: no callback), clearing and capturing the
// calling thread's error message like the ggo_* helpers (err: malloc'd message or NULL)
enum ggml_opt_result ggml_go_opt_resume_g(struct ggml_context * ctx, struct ggml_opt_context * opt,
                                          struct ggml_tensor * f, struct ggml_cgraph * gf, struct ggml_cgraph * gb,
                                          uintptr_t handle, char ** err);

#endif // GGML_GO_OPT_TRAMPOLINES_H
