// opt-impl.h - internal contract of the optimizers: opt.c (defaults, state, resume, the shared
// function/gradient evaluation) and the methods opt-adam.c and opt-lbfgs.c.

#ifndef GGML_X_OPT_IMPL_H
#define GGML_X_OPT_IMPL_H

#include "ggml-impl.h"

// one optimization run (ggml_opt_resume_g): the params of gf, the compute plan of gb, the callback
struct x_opt_run {
    struct ggml_context * ctx;
    struct ggml_opt_context * opt;
    struct ggml_opt_params params;
    struct ggml_tensor * f;
    struct ggml_cgraph * gf;
    struct ggml_cgraph * gb;
    ggml_opt_callback callback;
    void * callback_data;

    struct ggml_tensor ** ps; // the params, in graph order
    int np;
    int64_t nx;               // their total element count

    struct ggml_cplan cplan;  // for gb (work buffer malloc'd)
};

// f and its gradient (flattened into g, averaged over the n_gradient_accumulation steps).
// sched: passed to the callback (may be changed by it). Returns GGML_OPT_OK, GGML_OPT_CANCEL
// (the callback cancelled) or GGML_OPT_FAIL (the compute failed).
enum ggml_opt_result x_opt_eval(struct x_opt_run * run, float * g, float * fx, float * sched);

// params <-> flat vector
void x_opt_get_params(const struct x_opt_run * run, float * x);
void x_opt_set_params(const struct x_opt_run * run, const float * x);

// (re)create the method's state when the problem changed shape (keeps opt->iter)
void x_opt_reinit_if_needed(struct x_opt_run * run);

enum ggml_opt_result x_opt_adam(struct x_opt_run * run);
enum ggml_opt_result x_opt_lbfgs(struct x_opt_run * run);

// dense vector helpers (double accumulation)
double x_vec_dot(int64_t n, const float * x, const float * y);

#endif // GGML_X_OPT_IMPL_H
