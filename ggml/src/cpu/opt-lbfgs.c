// opt-lbfgs.c - L-BFGS with a backtracking line search (ggml_opt with GGML_OPT_LBFGS), as the
// reference defines it: m correction pairs, the two-loop recursion for the search direction,
// initial step 1/||d||, then 1; the line search halves the step (0.5) when the Armijo condition
// (sufficient decrease, ftol) fails and grows it (2.1) when the Wolfe curvature condition
// fails, until the condition chosen by `linesearch` holds (Armijo, Wolfe, strong Wolfe), or
// stops with GGML_LINESEARCH_MINIMUM_STEP / _MAXIMUM_STEP / _MAXIMUM_ITERATIONS.
// Converged when ||g|| / max(1, ||x||) <= eps, or by the delta / no-improvement tests.
// The learning-rate schedule does not apply: the callback is given sched = 0.
//
// Difference from the reference: when the line search fails, the params are set back to the
// last accepted point (the reference restores its copy of x but leaves the tensors at the last
// trial point).

#include "opt-impl.h"

#include <math.h>

static void x_axpy(int64_t n, float * y, const float * x, float a) {
    for (int64_t i = 0; i < n; i++) {
        y[i] += a * x[i];
    }
}

static float x_norm(int64_t n, const float * x) {
    return (float) sqrt(x_vec_dot(n, x, x));
}

// returns the number of evaluations (> 0) or a negative GGML_LINESEARCH_* / GGML_OPT_CANCEL
static int x_linesearch(struct x_opt_run * run, float * x, float * fx, float * g, const float * d, float * step,
                        const float * xp) {
    const struct ggml_opt_params * p = &run->params;
    const int64_t nx = run->nx;
    const float dec = 0.5f, inc = 2.1f;
    if (*step <= 0.0f) {
        return GGML_LINESEARCH_INVALID_PARAMETERS;
    }
    const float dginit = (float) x_vec_dot(nx, g, d);
    if (dginit > 0.0f) {
        return GGML_LINESEARCH_FAIL; // d is not a descent direction
    }
    const float finit = *fx;
    const float dgtest = p->lbfgs.ftol * dginit;
    int count = 0;
    for (;;) {
        memcpy(x, xp, (size_t) nx * sizeof(float));
        x_axpy(nx, x, d, *step);
        x_opt_set_params(run, x);
        float sched = 0.0f;
        const enum ggml_opt_result r = x_opt_eval(run, g, fx, &sched);
        if (r == GGML_OPT_CANCEL) {
            return -1000; // cancelled (reported by the caller)
        }
        if (r != GGML_OPT_OK) {
            return GGML_LINESEARCH_FAIL;
        }
        count++;
        float width;
        if (*fx > finit + *step * dgtest) {
            width = dec;
        } else {
            if (p->lbfgs.linesearch == GGML_LINESEARCH_BACKTRACKING_ARMIJO) {
                return count;
            }
            const float dg = (float) x_vec_dot(nx, g, d);
            if (dg < p->lbfgs.wolfe * dginit) {
                width = inc;
            } else if (p->lbfgs.linesearch == GGML_LINESEARCH_BACKTRACKING_WOLFE) {
                return count;
            } else if (dg > -p->lbfgs.wolfe * dginit) {
                width = dec;
            } else {
                return count; // strong Wolfe
            }
        }
        if (*step < p->lbfgs.min_step) {
            return GGML_LINESEARCH_MINIMUM_STEP;
        }
        if (*step > p->lbfgs.max_step) {
            return GGML_LINESEARCH_MAXIMUM_STEP;
        }
        if (p->lbfgs.max_linesearch <= count) {
            return GGML_LINESEARCH_MAXIMUM_ITERATIONS;
        }
        *step *= width;
    }
}

enum ggml_opt_result x_opt_lbfgs(struct x_opt_run * run) {
    const struct ggml_opt_params * p = &run->params;
    if ((p->lbfgs.linesearch == GGML_LINESEARCH_BACKTRACKING_WOLFE ||
         p->lbfgs.linesearch == GGML_LINESEARCH_BACKTRACKING_STRONG_WOLFE) &&
        (p->lbfgs.wolfe <= p->lbfgs.ftol || 1.0f <= p->lbfgs.wolfe)) {
        return GGML_OPT_INVALID_WOLFE;
    }
    if (p->lbfgs.m < 1) {
        ggml_x_error(NULL, "ggml_opt: lbfgs.m must be >= 1 (got %d)", p->lbfgs.m);
        return GGML_OPT_FAIL;
    }
    x_opt_reinit_if_needed(run);
    struct ggml_opt_context * opt = run->opt;
    if (opt->lbfgs.x == NULL || opt->lbfgs.lmy == NULL) {
        ggml_x_error(NULL, "ggml_opt: the L-BFGS state could not be allocated");
        return GGML_OPT_NO_CONTEXT;
    }
    const int m = p->lbfgs.m;
    const int64_t nx = run->nx;
    float * x = (float *) opt->lbfgs.x->data;
    float * xp = (float *) opt->lbfgs.xp->data;
    float * g = (float *) opt->lbfgs.g->data;
    float * gp = (float *) opt->lbfgs.gp->data;
    float * d = (float *) opt->lbfgs.d->data;
    float * pf = p->past > 0 && opt->lbfgs.pf ? (float *) opt->lbfgs.pf->data : NULL;
    float * lm_alpha = (float *) opt->lbfgs.lmal->data;
    float * lm_ys = (float *) opt->lbfgs.lmys->data;
    float * lm_s = (float *) opt->lbfgs.lms->data;
    float * lm_y = (float *) opt->lbfgs.lmy->data;

    x_opt_get_params(run, x);
    float fx = 0.0f;
    float sched = 0.0f;
    enum ggml_opt_result r = x_opt_eval(run, g, &fx, &sched);
    if (r != GGML_OPT_OK) {
        return r;
    }
    opt->loss_before = fx;
    opt->loss_after = fx;
    for (int64_t i = 0; i < nx; i++) {
        d[i] = -g[i];
    }
    float xnorm = x_norm(nx, x), gnorm = x_norm(nx, g);
    if (xnorm < 1.0f) {
        xnorm = 1.0f;
    }
    if (gnorm / xnorm <= p->lbfgs.eps) {
        return GGML_OPT_OK;
    }
    if (opt->just_initialized) {
        if (pf) {
            pf[0] = fx;
        }
        opt->lbfgs.fx_best = fx;
        const float dn = x_norm(nx, d);
        opt->lbfgs.step = dn > 0.0f ? 1.0f / dn : 1.0f;
        opt->lbfgs.j = 0;
        opt->lbfgs.k = 1;
        opt->lbfgs.end = 0;
        opt->lbfgs.n_no_improvement = 0;
        opt->just_initialized = false;
    }
    int it = 0;
    for (;;) {
        memcpy(xp, x, (size_t) nx * sizeof(float));
        memcpy(gp, g, (size_t) nx * sizeof(float));
        const int ls = x_linesearch(run, x, &fx, g, d, &opt->lbfgs.step, xp);
        if (ls == -1000) {
            return GGML_OPT_CANCEL;
        }
        if (ls < 0) {
            memcpy(x, xp, (size_t) nx * sizeof(float));
            memcpy(g, gp, (size_t) nx * sizeof(float));
            x_opt_set_params(run, x);
            return (enum ggml_opt_result) ls;
        }
        opt->loss_after = fx;
        xnorm = x_norm(nx, x);
        gnorm = x_norm(nx, g);
        if (xnorm < 1.0f) {
            xnorm = 1.0f;
        }
        if (gnorm / xnorm <= p->lbfgs.eps) {
            return GGML_OPT_OK;
        }
        const int k = opt->lbfgs.k;
        if (pf != NULL) {
            if (p->past <= k) {
                const float rate = (pf[k % p->past] - fx) / fx;
                if (fabsf(rate) < p->delta) {
                    return GGML_OPT_OK;
                }
            }
            pf[k % p->past] = fx;
        }
        if (p->max_no_improvement > 0) {
            if (fx < opt->lbfgs.fx_best) {
                opt->lbfgs.fx_best = fx;
                opt->lbfgs.n_no_improvement = 0;
            } else if (++opt->lbfgs.n_no_improvement >= p->max_no_improvement) {
                return GGML_OPT_OK;
            }
        }
        if (p->lbfgs.n_iter != 0 && p->lbfgs.n_iter < it + 1) {
            return GGML_OPT_DID_NOT_CONVERGE;
        }
        // s = x - xp, y = g - gp into the ring slot `end`
        const int end = opt->lbfgs.end;
        float * s_e = lm_s + (int64_t) end * nx;
        float * y_e = lm_y + (int64_t) end * nx;
        for (int64_t i = 0; i < nx; i++) {
            s_e[i] = x[i] - xp[i];
            y_e[i] = g[i] - gp[i];
        }
        const float ys = (float) x_vec_dot(nx, y_e, s_e);
        const float yy = (float) x_vec_dot(nx, y_e, y_e);
        lm_ys[end] = ys;
        const int bound = m <= k ? m : k;
        opt->lbfgs.k = k + 1;
        it++;
        opt->lbfgs.end = (end + 1) % m;
        // two-loop recursion: d = -H g
        for (int64_t i = 0; i < nx; i++) {
            d[i] = -g[i];
        }
        int j = opt->lbfgs.end;
        for (int i = 0; i < bound; i++) {
            j = (j + m - 1) % m;
            lm_alpha[j] = (float) x_vec_dot(nx, lm_s + (int64_t) j * nx, d) / lm_ys[j];
            x_axpy(nx, d, lm_y + (int64_t) j * nx, -lm_alpha[j]);
        }
        const float scale = ys / yy;
        for (int64_t i = 0; i < nx; i++) {
            d[i] *= scale;
        }
        for (int i = 0; i < bound; i++) {
            const float beta = (float) x_vec_dot(nx, lm_y + (int64_t) j * nx, d) / lm_ys[j];
            x_axpy(nx, d, lm_s + (int64_t) j * nx, lm_alpha[j] - beta);
            j = (j + 1) % m;
        }
        opt->lbfgs.j = j;
        opt->lbfgs.step = 1.0f;
    }
}
