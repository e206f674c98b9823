// opt.c - the optimizer front end: default parameters, optimizer state (ggml_opt_init),
// ggml_opt / ggml_opt_resume / ggml_opt_resume_g, and the evaluation of f and its gradient
// shared by the methods (opt-adam.c, opt-lbfgs.c). The optimizers compute their graphs with the
// CPU engine (ggml_graph_plan / ggml_graph_compute), so they live with the CPU backend.
//
// Differences from the reference, on purpose: no .dot files are ever written (the reference
// writes opt-forward.dot and opt-backward.dot into the working directory when
// print_forward_graph / print_backward_graph are set, which they are by default; here those
// flags print the graph listing to stdout only); the compute work buffer is heap memory, not
// an object in ctx; any number of params (no GGML_MAX_PARAMS limit); bad input is reported
// (ggml_x_last_error) and returns GGML_OPT_FAIL / GGML_OPT_NO_CONTEXT instead of aborting.

#include "opt-impl.h"

#include "ggml-backend.h"

#include <math.h>
#include <stdlib.h>

struct ggml_opt_params ggml_opt_default_params(enum ggml_opt_type type) {
    struct ggml_opt_params p;
    memset(&p, 0, sizeof(p));
    p.type = type;
    p.graph_size = GGML_DEFAULT_GRAPH_SIZE;
    p.n_threads = 1;
    p.past = 0;
    p.delta = 1e-5f;
    p.print_forward_graph = true;
    p.print_backward_graph = true;
    p.n_gradient_accumulation = 1;
    if (type == GGML_OPT_LBFGS) {
        p.max_no_improvement = 0;
        p.lbfgs.m = 6;
        p.lbfgs.n_iter = 100;
        p.lbfgs.max_linesearch = 20;
        p.lbfgs.eps = 1e-5f;
        p.lbfgs.ftol = 1e-4f;
        p.lbfgs.wolfe = 0.9f;
        p.lbfgs.min_step = 1e-20f;
        p.lbfgs.max_step = 1e+20f;
        p.lbfgs.linesearch = GGML_LINESEARCH_DEFAULT;
    } else {
        p.max_no_improvement = 100;
        p.adam.n_iter = 10000;
        p.adam.sched = 1.0f;
        p.adam.decay = 0.0f;
        p.adam.decay_min_ndim = 2;
        p.adam.alpha = 0.001f;
        p.adam.beta1 = 0.9f;
        p.adam.beta2 = 0.999f;
        p.adam.eps = 1e-8f;
        p.adam.eps_f = 1e-5f;
        p.adam.eps_g = 1e-3f;
        p.adam.gclip = 0.0f;
    }
    return p;
}

static struct ggml_tensor * x_opt_vec(struct ggml_context * ctx, int64_t n) {
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
    if (t != NULL && t->data != NULL) {
        memset(t->data, 0, ggml_nbytes(t));
    }
    return t;
}

static struct ggml_tensor * x_opt_mat(struct ggml_context * ctx, int64_t n0, int64_t n1) {
    struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n0, n1);
    if (t != NULL && t->data != NULL) {
        memset(t->data, 0, ggml_nbytes(t));
    }
    return t;
}

void ggml_opt_init(struct ggml_context * ctx, struct ggml_opt_context * opt, struct ggml_opt_params params, int64_t nx) {
    if (opt == NULL || nx < 0) {
        ggml_x_error(ctx, "ggml_opt_init: %s", opt == NULL ? "NULL optimizer context" : "negative parameter count");
        return;
    }
    memset(opt, 0, sizeof(*opt));
    opt->ctx = ctx;
    opt->params = params;
    opt->iter = 0;
    opt->nx = nx;
    opt->just_initialized = true;
    const int past = params.past > 0 ? params.past : 0;
    const int m = params.lbfgs.m > 0 ? params.lbfgs.m : 1;
    if (opt->ctx == NULL) {
        // a context of its own, sized for the state (the caller frees opt->ctx)
        size_t n_floats, n_tensors;
        if (params.type == GGML_OPT_ADAM) {
            n_floats = 3 * (size_t) nx + (size_t) past;
            n_tensors = 4;
        } else {
            n_floats = 5 * (size_t) nx + (size_t) past + 2 * (size_t) m + 2 * (size_t) m * (size_t) nx;
            n_tensors = 10;
        }
        struct ggml_init_params ip = {
            .mem_size = n_tensors * (ggml_tensor_overhead() + GGML_MEM_ALIGN) + n_floats * sizeof(float),
            .mem_buffer = NULL,
            .no_alloc = false,
        };
        opt->ctx = ggml_init(ip);
        if (opt->ctx == NULL) {
            ggml_x_error(NULL, "ggml_opt_init: could not create the optimizer context (%zu bytes)", ip.mem_size);
            return;
        }
    }
    struct ggml_context * c = opt->ctx;
    if (params.type == GGML_OPT_ADAM) {
        opt->adam.g = x_opt_vec(c, nx);
        opt->adam.m = x_opt_vec(c, nx);
        opt->adam.v = x_opt_vec(c, nx);
        opt->adam.pf = past > 0 ? x_opt_vec(c, past) : NULL;
    } else if (params.type == GGML_OPT_LBFGS) {
        opt->lbfgs.x = x_opt_vec(c, nx);
        opt->lbfgs.xp = x_opt_vec(c, nx);
        opt->lbfgs.g = x_opt_vec(c, nx);
        opt->lbfgs.gp = x_opt_vec(c, nx);
        opt->lbfgs.d = x_opt_vec(c, nx);
        opt->lbfgs.pf = past > 0 ? x_opt_vec(c, past) : NULL;
        opt->lbfgs.lmal = x_opt_vec(c, m);
        opt->lbfgs.lmys = x_opt_vec(c, m);
        opt->lbfgs.lms = x_opt_mat(c, nx, m);
        opt->lbfgs.lmy = x_opt_mat(c, nx, m);
    } else {
        ggml_x_error(ctx, "ggml_opt_init: unknown optimizer type %d", (int) params.type);
    }
}

void x_opt_reinit_if_needed(struct x_opt_run * run) {
    struct ggml_opt_context * opt = run->opt;
    const struct ggml_opt_params * p = &run->params;
    if (opt->params.type != p->type || opt->nx != run->nx || opt->params.past != p->past ||
        (p->type == GGML_OPT_LBFGS && opt->params.lbfgs.m != p->lbfgs.m)) {
        const int iter = opt->iter;
        ggml_opt_init(opt->ctx, opt, *p, run->nx);
        opt->iter = iter;
    }
}

double x_vec_dot(int64_t n, const float * x, const float * y) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += (double) x[i] * (double) y[i];
    }
    return s;
}

void x_opt_get_params(const struct x_opt_run * run, float * x) {
    int64_t o = 0;
    for (int p = 0; p < run->np; p++) {
        const int64_t n = ggml_nelements(run->ps[p]);
        memcpy(x + o, run->ps[p]->data, (size_t) n * sizeof(float));
        o += n;
    }
}

void x_opt_set_params(const struct x_opt_run * run, const float * x) {
    int64_t o = 0;
    for (int p = 0; p < run->np; p++) {
        const int64_t n = ggml_nelements(run->ps[p]);
        memcpy(run->ps[p]->data, x + o, (size_t) n * sizeof(float));
        o += n;
    }
}

enum ggml_opt_result x_opt_eval(struct x_opt_run * run, float * g, float * fx, float * sched) {
    const int n_accum = run->params.n_gradient_accumulation > 1 ? run->params.n_gradient_accumulation : 1;
    const float norm = 1.0f / (float) n_accum;
    bool cancel = false;
    double sum = 0.0;
    memset(g, 0, (size_t) run->nx * sizeof(float));
    for (int step = 0; step < n_accum; step++) {
        if (run->callback) {
            run->callback(run->callback_data, step, sched, &cancel);
            if (cancel) {
                return GGML_OPT_CANCEL;
            }
        }
        *(float *) run->f->grad->data = 1.0f;
        if (ggml_graph_compute(run->gb, &run->cplan) != 0) {
            ggml_x_error(NULL, "ggml_opt: computing the backward graph failed");
            return GGML_OPT_FAIL;
        }
        int64_t o = 0;
        for (int p = 0; p < run->np; p++) {
            const struct ggml_tensor * gr = run->ps[p]->grad;
            const float * gd = (const float *) gr->data;
            const int64_t n = ggml_nelements(gr);
            for (int64_t i = 0; i < n; i++) {
                g[o + i] += gd[i] * norm;
            }
            o += n;
        }
        sum += *(const float *) run->f->data;
    }
    *fx = (float) sum * norm;
    return GGML_OPT_OK;
}

enum ggml_opt_result ggml_opt_resume_g(struct ggml_context * ctx, struct ggml_opt_context * opt, struct ggml_tensor * f,
                                       struct ggml_cgraph * gf, struct ggml_cgraph * gb, ggml_opt_callback callback,
                                       void * callback_data) {
    const char * fn = "ggml_opt_resume_g";
    if (ctx == NULL || opt == NULL) {
        ggml_x_error(ctx, "%s: NULL %s", fn, ctx == NULL ? "context" : "optimizer context");
        return GGML_OPT_NO_CONTEXT;
    }
    if (f == NULL || gf == NULL || gb == NULL) {
        ggml_x_error(ctx, "%s: NULL %s", fn, f == NULL ? "function tensor" : "graph");
        return GGML_OPT_FAIL;
    }
    if (!ggml_is_scalar(f) || f->type != GGML_TYPE_F32 || f->data == NULL) {
        ggml_x_error(ctx, "%s: f must be an F32 scalar with data (f '%s')", fn, f->name);
        return GGML_OPT_FAIL;
    }
    if (f->grad == NULL || f->grad->data == NULL) {
        ggml_x_error(ctx, "%s: f has no gradient: mark the inputs to optimize with ggml_set_param before building f", fn);
        return GGML_OPT_FAIL;
    }
    if (opt->ctx == NULL) {
        ggml_x_error(ctx, "%s: the optimizer context is not initialized: call ggml_opt_init first", fn);
        return GGML_OPT_NO_CONTEXT;
    }

    struct x_opt_run run;
    memset(&run, 0, sizeof(run));
    run.ctx = ctx;
    run.opt = opt;
    run.params = opt->params;
    run.f = f;
    run.gf = gf;
    run.gb = gb;
    run.callback = callback;
    run.callback_data = callback_data;
    run.ps = malloc(sizeof(*run.ps) * (size_t) (gf->n_nodes > 0 ? gf->n_nodes : 1));
    if (run.ps == NULL) {
        ggml_x_error(ctx, "%s: out of memory", fn);
        return GGML_OPT_FAIL;
    }
    for (int i = 0; i < gf->n_nodes; i++) {
        struct ggml_tensor * t = gf->nodes[i];
        if (!t->is_param) {
            continue;
        }
        const bool host = (t->buffer == NULL || ggml_backend_buffer_is_host(t->buffer)) &&
                          (t->grad == NULL || t->grad->buffer == NULL || ggml_backend_buffer_is_host(t->grad->buffer));
        if (t->type != GGML_TYPE_F32 || !ggml_is_contiguous(t) || t->data == NULL || t->grad == NULL ||
            t->grad->type != GGML_TYPE_F32 || !ggml_is_contiguous(t->grad) || t->grad->data == NULL || !host) {
            ggml_x_error(ctx, "%s: param '%s' must be a contiguous F32 tensor in CPU memory with a dense F32 "
                         "gradient (build gb with ggml_build_backward_expand)", fn, t->name);
            free(run.ps);
            return GGML_OPT_FAIL;
        }
        run.ps[run.np++] = t;
        run.nx += ggml_nelements(t);
    }
    if (run.np == 0) {
        ggml_x_error(ctx, "%s: the graph has no params: mark them with ggml_set_param", fn);
        free(run.ps);
        return GGML_OPT_FAIL;
    }
    if (run.params.n_threads < 1) {
        run.params.n_threads = 1;
    }
    run.cplan = ggml_graph_plan(gb, run.params.n_threads);
    void * work = run.cplan.work_size > 0 ? malloc(run.cplan.work_size) : NULL;
    if (run.cplan.work_size > 0 && work == NULL) {
        ggml_x_error(ctx, "%s: out of memory for the %zu-byte work buffer", fn, run.cplan.work_size);
        free(run.ps);
        return GGML_OPT_FAIL;
    }
    run.cplan.work_data = work;

    // the gradients that the backward pass treats as zero must be zero
    ggml_graph_reset(gf);

    enum ggml_opt_result result;
    switch (run.params.type) {
        case GGML_OPT_ADAM:
            result = x_opt_adam(&run);
            break;
        case GGML_OPT_LBFGS:
            result = x_opt_lbfgs(&run);
            break;
        default:
            ggml_x_error(ctx, "%s: unknown optimizer type %d", fn, (int) run.params.type);
            result = GGML_OPT_FAIL;
            break;
    }
    if (run.params.print_forward_graph) {
        ggml_graph_print(gf);
    }
    if (run.params.print_backward_graph) {
        ggml_graph_print(gb);
    }
    free(work);
    free(run.ps);
    return result;
}

enum ggml_opt_result ggml_opt_resume(struct ggml_context * ctx, struct ggml_opt_context * opt, struct ggml_tensor * f) {
    if (ctx == NULL || opt == NULL || f == NULL) {
        ggml_x_error(ctx, "ggml_opt_resume: NULL %s", ctx == NULL ? "context" : opt == NULL ? "optimizer context" : "f");
        return ctx == NULL || opt == NULL ? GGML_OPT_NO_CONTEXT : GGML_OPT_FAIL;
    }
    const uint64_t serial = ggml_x_error_serial();
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, opt->params.graph_size, true);
    if (gf == NULL) {
        return GGML_OPT_FAIL;
    }
    ggml_build_forward_expand(gf, f);
    struct ggml_cgraph * gb = ggml_graph_dup(ctx, gf);
    if (gb == NULL) {
        return GGML_OPT_FAIL;
    }
    ggml_build_backward_expand(ctx, gf, gb, true);
    if (ggml_x_error_serial() != serial) {
        return GGML_OPT_FAIL;
    }
    return ggml_opt_resume_g(ctx, opt, f, gf, gb, NULL, NULL);
}

enum ggml_opt_result ggml_opt(struct ggml_context * ctx, struct ggml_opt_params params, struct ggml_tensor * f) {
    bool own = false;
    if (ctx == NULL) {
        struct ggml_init_params ip = { .mem_size = 16 * 1024 * 1024, .mem_buffer = NULL, .no_alloc = false };
        ctx = ggml_init(ip);
        if (ctx == NULL) {
            return GGML_OPT_NO_CONTEXT;
        }
        own = true;
    }
    struct ggml_opt_context opt;
    const uint64_t serial = ggml_x_error_serial();
    ggml_opt_init(ctx, &opt, params, 0);
    enum ggml_opt_result r = ggml_x_error_serial() == serial ? ggml_opt_resume(ctx, &opt, f) : GGML_OPT_FAIL;
    if (own) {
        ggml_free(ctx);
    }
    return r;
}
