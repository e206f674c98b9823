// train_trampolines.c - the C half of the Go training callbacks (see train_trampolines.h).
// Compiled in package csrc; goOptCallback and goCustomGrad are the //export functions of
// train_callbacks.go, declared in goexports.h.

#include "train_trampolines.h"

#include <stdlib.h>
#include <string.h>

#include "ggml_go.h"
#include "goexports.h"

void ggml_go_opt_callback(void * data, int accum_step, float * sched, bool * cancel) {
    goOptCallback((uintptr_t) data, accum_step, sched, cancel);
}

enum ggml_opt_result ggml_go_opt_resume_g(struct ggml_context * ctx, struct ggml_opt_context * opt,
                                          struct ggml_tensor * f, struct ggml_cgraph * gf, struct ggml_cgraph * gb,
                                          uintptr_t handle, char ** err) {
    ggml_x_clear_error();
    const enum ggml_opt_result r = ggml_opt_resume_g(ctx, opt, f, gf, gb, handle != 0 ? ggml_go_opt_callback : NULL,
                                                     (void *) handle);
    *err = NULL;
    const char * msg = ggml_x_last_error();
    if (msg != NULL) {
        const size_t n = strlen(msg) + 1;
        *err = (char *) malloc(n);
        if (*err != NULL) {
            memcpy(*err, msg, n);
        }
    }
    ggml_x_clear_error();
    return r;
}

void ggml_go_custom_grad(struct ggml_context * ctx, struct ggml_tensor * node, struct ggml_tensor * grad,
                         struct ggml_tensor ** src_grads, void * userdata) {
    goCustomGrad(ctx, node, grad, src_grads, (uintptr_t) userdata);
}

struct ggml_opt_context * ggo_opt_new(void) {
    return (struct ggml_opt_context *) calloc(1, sizeof(struct ggml_opt_context));
}

void ggo_opt_free_state(struct ggml_opt_context * opt) {
    if (opt != NULL && opt->ctx != NULL) {
        ggml_free(opt->ctx);
        opt->ctx = NULL;
    }
}

void ggo_opt_free(struct ggml_opt_context * opt) {
    ggo_opt_free_state(opt);
    free(opt);
}

char * ggo_ggml_opt_init(struct ggml_opt_context * opt, struct ggml_opt_params p, int64_t nx) {
    GGO_VCALL(ggml_opt_init(NULL, opt, p, nx));
}
