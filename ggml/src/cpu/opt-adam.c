// opt-adam.c - Adam / AdamW (ggml_opt with GGML_OPT_ADAM), as the reference defines it:
//   g  = gradient (averaged over n_gradient_accumulation steps), scaled to norm gclip when larger
//   m  = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g^2
//   x  = x (1 - decay * alpha * sched) - alpha * sched * m^ / (sqrt(v^) + eps)
// with bias-corrected m^ = m / (1 - beta1^t), v^ = v / (1 - beta2^t); the decay applies only
// to params with at least decay_min_ndim dimensions. The callback may change sched before every
// evaluation. Stops on: relative change of f below eps_f, the delta test over `past` values, or
// max_no_improvement iterations without a new best (GGML_OPT_OK); after n_iter iterations
// (GGML_OPT_DID_NOT_CONVERGE).
//
// The update runs on the compute thread pool: one in-place map_custom1 node per param, every
// thread updating its own range of elements, four at a time (SSE2 / NEON).
//
// Difference from the reference: the eps_f test divides by |f| (the reference divides by f,
// which stops at once whenever f is negative).

#include "opt-impl.h"

#include <math.h>
#include <stdlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

struct x_adam_shared {
    float * g;
    float * m;
    float * v;
    float beta1, beta2, beta1h, beta2h, eps, gscale;
};

struct x_adam_param {
    const struct x_adam_shared * sh;
    int64_t offset; // of the param's elements in g, m, v
    float keep;     // 1 - decay factor for this param
};

// x[i0..i1) updated from g, m, v (restrict: the four arrays never overlap). sqrtf may set errno,
// which keeps compilers from vectorizing the scalar loop, so x86-64 (SSE2, always present) and
// aarch64 (NEON) take four elements at a time explicitly, with the same operations in the same
// order as the scalar tail.
static void x_adam_range(int64_t i0, int64_t i1, float * restrict x, const float * restrict g, float * restrict m,
                         float * restrict v, const struct x_adam_shared * sh, float keep) {
    const float b1 = sh->beta1, b2 = sh->beta2, b1h = sh->beta1h, b2h = sh->beta2h, eps = sh->eps;
    const float gs = sh->gscale;
    int64_t i = i0;
#if defined(__SSE2__)
    {
        const __m128 vb1 = _mm_set1_ps(b1), vb2 = _mm_set1_ps(b2), vc1 = _mm_set1_ps(1.0f - b1);
        const __m128 vc2 = _mm_set1_ps(1.0f - b2), vb1h = _mm_set1_ps(b1h), vb2h = _mm_set1_ps(b2h);
        const __m128 veps = _mm_set1_ps(eps), vgs = _mm_set1_ps(gs), vkeep = _mm_set1_ps(keep);
        for (; i + 4 <= i1; i += 4) {
            const __m128 gi = _mm_mul_ps(_mm_loadu_ps(g + i), vgs);
            const __m128 mi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(m + i), vb1), _mm_mul_ps(gi, vc1));
            const __m128 vi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(v + i), vb2), _mm_mul_ps(_mm_mul_ps(gi, gi), vc2));
            _mm_storeu_ps(m + i, mi);
            _mm_storeu_ps(v + i, vi);
            const __m128 mh = _mm_mul_ps(mi, vb1h);
            const __m128 vh = _mm_add_ps(_mm_sqrt_ps(_mm_mul_ps(vi, vb2h)), veps);
            _mm_storeu_ps(x + i, _mm_sub_ps(_mm_mul_ps(_mm_loadu_ps(x + i), vkeep), _mm_div_ps(mh, vh)));
        }
    }
#elif defined(__aarch64__)
    {
        const float32x4_t vb1 = vdupq_n_f32(b1), vb2 = vdupq_n_f32(b2), vc1 = vdupq_n_f32(1.0f - b1);
        const float32x4_t vc2 = vdupq_n_f32(1.0f - b2), vb1h = vdupq_n_f32(b1h), vb2h = vdupq_n_f32(b2h);
        const float32x4_t veps = vdupq_n_f32(eps), vgs = vdupq_n_f32(gs), vkeep = vdupq_n_f32(keep);
        for (; i + 4 <= i1; i += 4) {
            const float32x4_t gi = vmulq_f32(vld1q_f32(g + i), vgs);
            const float32x4_t mi = vaddq_f32(vmulq_f32(vld1q_f32(m + i), vb1), vmulq_f32(gi, vc1));
            const float32x4_t vi = vaddq_f32(vmulq_f32(vld1q_f32(v + i), vb2), vmulq_f32(vmulq_f32(gi, gi), vc2));
            vst1q_f32(m + i, mi);
            vst1q_f32(v + i, vi);
            const float32x4_t mh = vmulq_f32(mi, vb1h);
            const float32x4_t vh = vaddq_f32(vsqrtq_f32(vmulq_f32(vi, vb2h)), veps);
            vst1q_f32(x + i, vsubq_f32(vmulq_f32(vld1q_f32(x + i), vkeep), vdivq_f32(mh, vh)));
        }
    }
#endif
    for (; i < i1; i++) {
        const float gi = g[i] * gs;
        m[i] = m[i] * b1 + gi * (1.0f - b1);
        v[i] = v[i] * b2 + gi * gi * (1.0f - b2);
        const float mh = m[i] * b1h;
        const float vh = sqrtf(v[i] * b2h) + eps;
        x[i] = x[i] * keep - mh / vh;
    }
}

static void x_adam_update(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * userdata) {
    (void) a;
    const struct x_adam_param * up = (const struct x_adam_param *) userdata;
    const struct x_adam_shared * sh = up->sh;
    const int64_t n = ggml_nelements(dst);
    const int64_t per = (n + nth - 1) / nth;
    const int64_t i0 = GGML_X_MIN(per * ith, n), i1 = GGML_X_MIN(i0 + per, n);
    x_adam_range(i0, i1, (float *) dst->data, sh->g + up->offset, sh->m + up->offset, sh->v + up->offset, sh, up->keep);
}

enum ggml_opt_result x_opt_adam(struct x_opt_run * run) {
    x_opt_reinit_if_needed(run);
    struct ggml_opt_context * opt = run->opt;
    const struct ggml_opt_params * p = &run->params;
    if (opt->adam.g == NULL || opt->adam.m == NULL || opt->adam.v == NULL) {
        ggml_x_error(NULL, "ggml_opt: the Adam state could not be allocated");
        return GGML_OPT_NO_CONTEXT;
    }
    float sched = p->adam.sched;
    const float alpha = p->adam.alpha;
    const float decay = p->adam.decay * alpha;
    const float gclip = p->adam.gclip;
    const int64_t nx = run->nx;
    float * g = (float *) opt->adam.g->data;
    float * pf = p->past > 0 && opt->adam.pf ? (float *) opt->adam.pf->data : NULL;

    // the update graph: one in-place node per param, in a private context
    struct x_adam_shared sh = { g, (float *) opt->adam.m->data, (float *) opt->adam.v->data, p->adam.beta1,
                                p->adam.beta2, 0.0f, 0.0f, p->adam.eps, 1.0f };
    struct x_adam_param * ups = calloc((size_t) run->np, sizeof(*ups));
    struct ggml_init_params ip = {
        .mem_size = (size_t) run->np * ggml_tensor_overhead() + ggml_graph_overhead_custom(2 * (size_t) run->np + 2, false) + 1024,
        .mem_buffer = NULL,
        .no_alloc = true,
    };
    struct ggml_context * uctx = ups ? ggml_init(ip) : NULL;
    struct ggml_cgraph * ug = uctx ? ggml_new_graph_custom(uctx, 2 * (size_t) run->np + 2, false) : NULL;
    if (ug == NULL) {
        free(ups);
        if (uctx) {
            ggml_free(uctx);
        }
        ggml_x_error(NULL, "ggml_opt: out of memory for the Adam update graph");
        return GGML_OPT_FAIL;
    }
    int64_t off = 0;
    for (int i = 0; i < run->np; i++) {
        ups[i].sh = &sh;
        ups[i].offset = off;
        off += ggml_nelements(run->ps[i]);
        ggml_x_grad_suspend(true);
        struct ggml_tensor * node = ggml_map_custom1_inplace(uctx, run->ps[i], x_adam_update, GGML_N_TASKS_MAX, &ups[i]);
        ggml_x_grad_suspend(false);
        ggml_build_forward_expand(ug, node);
    }
    struct ggml_cplan uplan = ggml_graph_plan(ug, p->n_threads);
    void * uwork = uplan.work_size > 0 ? malloc(uplan.work_size) : NULL;
    uplan.work_data = uwork;

    enum ggml_opt_result result = GGML_OPT_DID_NOT_CONVERGE;
    float fx = 0.0f;
    enum ggml_opt_result r = x_opt_eval(run, g, &fx, &sched);
    if (r != GGML_OPT_OK) {
        result = r;
        goto done;
    }
    opt->adam.fx_prev = fx;
    opt->adam.fx_best = fx;
    if (pf) {
        pf[opt->iter % p->past] = fx;
    }
    opt->loss_before = fx;
    opt->loss_after = fx;
    if (opt->just_initialized) {
        opt->adam.n_no_improvement = 0;
        opt->just_initialized = false;
    }
    const int iter0 = opt->iter;
    for (int t = 0; t < p->adam.n_iter; t++) {
        opt->iter = iter0 + t + 1;
        sh.gscale = 1.0f;
        if (gclip > 0.0f) {
            const double norm = sqrt(x_vec_dot(nx, g, g));
            if (norm > (double) gclip) {
                sh.gscale = (float) ((double) gclip / norm);
            }
        }
        sh.beta1h = alpha * sched / (1.0f - powf(p->adam.beta1, (float) opt->iter));
        sh.beta2h = 1.0f / (1.0f - powf(p->adam.beta2, (float) opt->iter));
        for (int i = 0; i < run->np; i++) {
            const bool decays = ggml_n_dims(run->ps[i]) >= p->adam.decay_min_ndim;
            ups[i].keep = 1.0f - (decays ? decay : 0.0f) * sched;
        }
        if (ggml_graph_compute(ug, &uplan) != 0) {
            ggml_x_error(NULL, "ggml_opt: the Adam update failed");
            result = GGML_OPT_FAIL;
            goto done;
        }

        r = x_opt_eval(run, g, &fx, &sched);
        if (r != GGML_OPT_OK) {
            result = r;
            goto done;
        }
        opt->loss_after = fx;

        if (fabsf(fx - opt->adam.fx_prev) / fabsf(fx) < p->adam.eps_f) {
            result = GGML_OPT_OK;
            goto done;
        }
        if (pf != NULL) {
            if (p->past <= iter0 + t) {
                const float rate = (pf[(iter0 + t) % p->past] - fx) / fx;
                if (fabsf(rate) < p->delta) {
                    result = GGML_OPT_OK;
                    goto done;
                }
            }
            pf[(iter0 + t) % p->past] = fx;
        }
        if (p->max_no_improvement > 0) {
            if (opt->adam.fx_best > fx) {
                opt->adam.fx_best = fx;
                opt->adam.n_no_improvement = 0;
            } else if (++opt->adam.n_no_improvement >= p->max_no_improvement) {
                result = GGML_OPT_OK;
                goto done;
            }
        }
        opt->adam.fx_prev = fx;
    }
done:
    free(uwork);
    ggml_free(uctx);
    free(ups);
    return result;
}
