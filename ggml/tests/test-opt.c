// test-opt.c - the optimizers (cpu/opt.c, cpu/opt-adam.c, cpu/opt-lbfgs.c): Adam and L-BFGS reach the known
// minima of small convex problems (a quadratic, a least-squares fit checked against the normal
// equations solved in double) and of the Rosenbrock function; Adam fits an MLP to XOR; AdamW
// decay with decay_min_ndim, gradient clipping, the callback (schedule, cancel), result codes,
// recoverable errors, and no .dot files.

#include "ggml.h"
#include "testing.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static struct ggml_context * ctx_new(void) {
    struct ggml_init_params ip = { 64 * 1024 * 1024, NULL, false };
    return ggml_init(ip);
}

static struct ggml_tensor * vec(struct ggml_context * ctx, int64_t n, const float * v) {
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
    memcpy(t->data, v, (size_t) n * sizeof(float));
    return t;
}

static struct ggml_opt_params quiet(enum ggml_opt_type type) {
    struct ggml_opt_params p = ggml_opt_default_params(type);
    p.print_forward_graph = false;
    p.print_backward_graph = false;
    p.n_threads = 2;
    return p;
}

// f = sum((x - c)^2): minimum at x = c
static void test_quadratic(enum ggml_opt_type type) {
    struct ggml_context * ctx = ctx_new();
    const float c0[6] = { 1.5f, -2.0f, 0.25f, 3.0f, -0.75f, 0.0f };
    const float x0[6] = { 0 };
    struct ggml_tensor * x = vec(ctx, 6, x0);
    ggml_set_param(ctx, x);
    struct ggml_tensor * c = vec(ctx, 6, c0);
    struct ggml_tensor * f = ggml_sum(ctx, ggml_sqr(ctx, ggml_sub(ctx, x, c)));
    struct ggml_opt_params p = quiet(type);
    if (type == GGML_OPT_ADAM) {
        p.adam.alpha = 0.05f;
        p.adam.n_iter = 2000;
        p.adam.eps_f = 0.0f;
        p.max_no_improvement = 0;
    }
    const enum ggml_opt_result r = ggml_opt(ctx, p, f);
    T_CHECK_MSG(type == GGML_OPT_ADAM ? (r == GGML_OPT_OK || r == GGML_OPT_DID_NOT_CONVERGE) : r == GGML_OPT_OK,
                "result %d", (int) r);
    for (int i = 0; i < 6; i++) {
        T_NEAR(((float *) x->data)[i], c0[i], 1e-2);
    }
    ggml_free(ctx);
}

static void test_adam_quadratic(void) { test_quadratic(GGML_OPT_ADAM); }
static void test_lbfgs_quadratic(void) { test_quadratic(GGML_OPT_LBFGS); }

// least squares: f = sum((A x - b)^2), A 8x3; the minimum solves A^T A x = A^T b
static void test_least_squares(enum ggml_opt_type type) {
    struct ggml_context * ctx = ctx_new();
    const int R = 8, C = 3;
    float a[24], b[8];
    uint64_t s = 99;
    for (int i = 0; i < R * C; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        a[i] = (float) ((s >> 40) / (double) (1 << 24)) * 2.0f - 1.0f;
    }
    for (int i = 0; i < R; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        b[i] = (float) ((s >> 40) / (double) (1 << 24)) * 2.0f - 1.0f;
    }
    // normal equations in double (Gauss-Jordan on the 3x3 system)
    double m[3][4] = { { 0 } };
    for (int r = 0; r < C; r++) {
        for (int q = 0; q < C; q++) {
            for (int i = 0; i < R; i++) {
                m[r][q] += (double) a[i * C + r] * a[i * C + q];
            }
        }
        for (int i = 0; i < R; i++) {
            m[r][3] += (double) a[i * C + r] * b[i];
        }
    }
    for (int piv = 0; piv < C; piv++) {
        for (int r = 0; r < C; r++) {
            if (r != piv) {
                const double k = m[r][piv] / m[piv][piv];
                for (int q = 0; q < 4; q++) {
                    m[r][q] -= k * m[piv][q];
                }
            }
        }
    }
    // A as a ggml matrix [C, R] (row i of A = row i of the tensor), x [C, 1]
    struct ggml_tensor * A = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, C, R);
    memcpy(A->data, a, sizeof(a));
    const float x0[3] = { 0 };
    struct ggml_tensor * x = vec(ctx, C, x0);
    ggml_set_param(ctx, x);
    struct ggml_tensor * bt = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, R, 1);
    memcpy(bt->data, b, sizeof(b));
    struct ggml_tensor * ax = ggml_mul_mat(ctx, A, ggml_reshape_2d(ctx, x, C, 1)); // [R, 1]
    struct ggml_tensor * f = ggml_sum(ctx, ggml_sqr(ctx, ggml_sub(ctx, ax, bt)));
    struct ggml_opt_params p = quiet(type);
    if (type == GGML_OPT_ADAM) {
        p.adam.alpha = 0.02f;
        p.adam.n_iter = 4000;
        p.adam.eps_f = 0.0f;
        p.max_no_improvement = 0;
    }
    const enum ggml_opt_result r = ggml_opt(ctx, p, f);
    T_CHECK_MSG(r == GGML_OPT_OK || (type == GGML_OPT_ADAM && r == GGML_OPT_DID_NOT_CONVERGE), "result %d", (int) r);
    for (int i = 0; i < C; i++) {
        T_NEAR(((float *) x->data)[i], m[i][3] / m[i][i], 5e-3);
    }
    ggml_free(ctx);
}

static void test_adam_least_squares(void) { test_least_squares(GGML_OPT_ADAM); }
static void test_lbfgs_least_squares(void) { test_least_squares(GGML_OPT_LBFGS); }

// Rosenbrock (1 - u)^2 + 100 (v - u^2)^2, minimum at (1, 1)
static void test_lbfgs_rosenbrock(void) {
    struct ggml_context * ctx = ctx_new();
    const float x0[2] = { -1.2f, 1.0f };
    struct ggml_tensor * x = vec(ctx, 2, x0);
    ggml_set_param(ctx, x);
    struct ggml_tensor * u = ggml_view_1d(ctx, x, 1, 0);
    struct ggml_tensor * v = ggml_view_1d(ctx, x, 1, sizeof(float));
    const float one = 1.0f;
    struct ggml_tensor * t1 = ggml_sqr(ctx, ggml_sub(ctx, vec(ctx, 1, &one), u));
    struct ggml_tensor * t2 = ggml_scale(ctx, ggml_sqr(ctx, ggml_sub(ctx, v, ggml_sqr(ctx, u))), 100.0f);
    struct ggml_tensor * f = ggml_add(ctx, t1, t2);
    struct ggml_opt_params p = quiet(GGML_OPT_LBFGS);
    p.lbfgs.n_iter = 500;
    const enum ggml_opt_result r = ggml_opt(ctx, p, f);
    T_CHECK_MSG(r == GGML_OPT_OK, "result %d", (int) r);
    T_NEAR(((float *) x->data)[0], 1.0f, 1e-2);
    T_NEAR(((float *) x->data)[1], 1.0f, 2e-2);
    ggml_free(ctx);
}

// a 2-8-2 MLP learns XOR (cross entropy below 0.05), with Adam and with L-BFGS
static void mlp_xor(enum ggml_opt_type type) {
    struct ggml_context * ctx = ctx_new();
    uint64_t s = 7;
    struct ggml_tensor * w[4];
    const int64_t shapes[4][2] = { { 2, 8 }, { 8, 1 }, { 8, 2 }, { 2, 1 } };
    for (int k = 0; k < 4; k++) {
        w[k] = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, shapes[k][0], shapes[k][1]);
        for (int64_t i = 0; i < ggml_nelements(w[k]); i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            ((float *) w[k]->data)[i] = (float) ((s >> 40) / (double) (1 << 24)) - 0.5f;
        }
        ggml_set_param(ctx, w[k]);
    }
    const float xin[8] = { 0, 0, 0, 1, 1, 0, 1, 1 };
    const float tgt[8] = { 1, 0, 0, 1, 0, 1, 1, 0 };
    struct ggml_tensor * X = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 4);
    memcpy(X->data, xin, sizeof(xin));
    struct ggml_tensor * T = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 2, 4);
    memcpy(T->data, tgt, sizeof(tgt));
    struct ggml_tensor * h = ggml_tanh(ctx, ggml_add(ctx, ggml_mul_mat(ctx, w[0], X), w[1]));
    struct ggml_tensor * o = ggml_add(ctx, ggml_mul_mat(ctx, w[2], h), w[3]);
    struct ggml_tensor * f = ggml_cross_entropy_loss(ctx, o, T);
    struct ggml_opt_params p = quiet(type);
    if (type == GGML_OPT_ADAM) {
        p.adam.alpha = 0.05f;
        p.adam.n_iter = 600;
        p.adam.eps_f = 0.0f;
        p.max_no_improvement = 0;
    } else {
        p.lbfgs.n_iter = 200;
    }
    struct ggml_opt_context opt;
    ggml_opt_init(ctx, &opt, p, 0);
    const enum ggml_opt_result r = ggml_opt_resume(ctx, &opt, f);
    T_CHECK_MSG(r == GGML_OPT_OK || r == GGML_OPT_DID_NOT_CONVERGE, "result %d", (int) r);
    T_CHECK_MSG(opt.loss_after < 0.05f && opt.loss_before > 0.5f, "loss %g -> %g", (double) opt.loss_before,
                (double) opt.loss_after);
    if (type == GGML_OPT_ADAM) {
        T_CHECK(opt.iter == 600);
    }
    ggml_free(ctx);
}

static void test_adam_mlp_xor(void) { mlp_xor(GGML_OPT_ADAM); }
static void test_lbfgs_mlp_xor(void) { mlp_xor(GGML_OPT_LBFGS); }

// zero gradient: only AdamW decay moves the params, and only those with >= decay_min_ndim dims
static void test_adamw_decay_min_ndim(void) {
    struct ggml_context * ctx = ctx_new();
    struct ggml_tensor * w2 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 3, 2);
    struct ggml_tensor * w1 = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    ggml_set_f32(w2, 2.0f);
    ggml_set_f32(w1, 3.0f);
    ggml_set_param(ctx, w2);
    ggml_set_param(ctx, w1);
    struct ggml_tensor * zero = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1);
    ggml_set_f32(zero, 0.0f);
    struct ggml_tensor * f = ggml_add(ctx, ggml_scale(ctx, ggml_sum(ctx, w2), 0.0f), ggml_scale(ctx, ggml_sum(ctx, w1), 0.0f));
    (void) zero;
    struct ggml_opt_params p = quiet(GGML_OPT_ADAM);
    p.adam.n_iter = 10;
    p.adam.decay = 0.5f;
    p.adam.alpha = 0.01f;
    p.max_no_improvement = 0;
    ggml_opt(ctx, p, f);
    const float expect = 2.0f * powf(1.0f - 0.5f * 0.01f, 10.0f);
    T_NEAR(((float *) w2->data)[0], expect, 1e-5);
    T_NEAR(((float *) w1->data)[0], 3.0f, 1e-6);
    ggml_free(ctx);
}

struct cb_state {
    int calls;
    int cancel_at;
    float sched;
};

static void cb(void * data, int accum_step, float * sched, bool * cancel) {
    struct cb_state * st = (struct cb_state *) data;
    (void) accum_step;
    st->calls++;
    *sched = st->sched;
    if (st->cancel_at > 0 && st->calls >= st->cancel_at) {
        *cancel = true;
    }
}

// the callback runs before every evaluation (n_gradient_accumulation per iteration), sets the
// schedule (0 freezes Adam) and can cancel
static void test_callback_sched_cancel(void) {
    struct ggml_context * ctx = ctx_new();
    const float x0[3] = { 1, 2, 3 };
    struct ggml_tensor * x = vec(ctx, 3, x0);
    ggml_set_param(ctx, x);
    struct ggml_tensor * f = ggml_sum(ctx, ggml_sqr(ctx, x));
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 64, true);
    ggml_build_forward_expand(gf, f);
    struct ggml_cgraph * gb = ggml_graph_dup(ctx, gf);
    ggml_build_backward_expand(ctx, gf, gb, true);

    struct ggml_opt_params p = quiet(GGML_OPT_ADAM);
    p.adam.n_iter = 5;
    p.n_gradient_accumulation = 2;
    p.max_no_improvement = 0;
    p.adam.eps_f = 0.0f;
    struct ggml_opt_context opt;
    ggml_opt_init(NULL, &opt, p, 3);
    struct cb_state st = { 0, 0, 0.0f };
    enum ggml_opt_result r = ggml_opt_resume_g(ctx, &opt, f, gf, gb, cb, &st);
    T_CHECK(r == GGML_OPT_DID_NOT_CONVERGE);
    T_CHECK_MSG(st.calls == 12, "calls %d", st.calls); // (1 + 5 iterations) x 2 accumulation steps
    T_NEAR(((float *) x->data)[2], 3.0f, 0.0); // sched 0: nothing moves
    T_NEAR(opt.loss_after, 14.0f, 1e-6);

    st = (struct cb_state) { 0, 5, 1.0f };
    r = ggml_opt_resume_g(ctx, &opt, f, gf, gb, cb, &st);
    T_CHECK(r == GGML_OPT_CANCEL);
    T_CHECK(st.calls == 5);
    ggml_free(opt.ctx);
    ggml_free(ctx);
}

// gclip bounds the gradient norm: with a huge gradient the first Adam step is still alpha-sized
static void test_adam_gclip(void) {
    struct ggml_context * ctx = ctx_new();
    const float x0[2] = { 1000.0f, -1000.0f };
    struct ggml_tensor * x = vec(ctx, 2, x0);
    ggml_set_param(ctx, x);
    struct ggml_tensor * f = ggml_sum(ctx, ggml_sqr(ctx, x));
    struct ggml_opt_params p = quiet(GGML_OPT_ADAM);
    p.adam.n_iter = 1;
    p.adam.gclip = 1.0f;
    ggml_opt(ctx, p, f);
    // Adam's first step is alpha * sign(g) whatever the scale: clipping keeps it so
    T_NEAR(((float *) x->data)[0], 1000.0f - 0.001f, 1e-6);
    T_NEAR(((float *) x->data)[1], -1000.0f + 0.001f, 1e-6);
    ggml_free(ctx);
}

static void test_result_codes_and_errors(void) {
    ggml_x_set_thread_recoverable(true);
    struct ggml_context * ctx = ctx_new();
    ggml_x_set_recoverable(ctx, true);
    const float x0[2] = { 1, 2 };
    struct ggml_tensor * x = vec(ctx, 2, x0);
    struct ggml_tensor * f_noparam = ggml_sum(ctx, ggml_sqr(ctx, x));
    ggml_x_clear_error();
    T_CHECK(ggml_opt(ctx, quiet(GGML_OPT_ADAM), f_noparam) == GGML_OPT_FAIL);
    T_CHECK(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "ggml_set_param") != NULL);

    struct ggml_tensor * y = vec(ctx, 2, x0);
    ggml_set_param(ctx, y);
    struct ggml_tensor * f = ggml_sum(ctx, ggml_sqr(ctx, y));
    struct ggml_opt_params p = quiet(GGML_OPT_LBFGS);
    p.lbfgs.wolfe = 1e-5f; // <= ftol
    T_CHECK(ggml_opt(ctx, p, f) == GGML_OPT_INVALID_WOLFE);
    T_CHECK(ggml_opt(ctx, quiet(GGML_OPT_ADAM), ggml_sqr(ctx, y)) == GGML_OPT_FAIL); // f not a scalar
    T_CHECK(ggml_opt_resume_g(NULL, NULL, f, NULL, NULL, NULL, NULL) == GGML_OPT_NO_CONTEXT);

    p = quiet(GGML_OPT_LBFGS);
    p.lbfgs.max_linesearch = 1;
    p.lbfgs.linesearch = GGML_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
    const float far[2] = { 100, -100 };
    memcpy(y->data, far, sizeof(far));
    struct ggml_tensor * f4 = ggml_sum(ctx, ggml_sqr(ctx, ggml_sqr(ctx, y)));
    const enum ggml_opt_result r = ggml_opt(ctx, p, f4);
    T_CHECK_MSG(r == GGML_OPT_OK || r == GGML_LINESEARCH_MAXIMUM_ITERATIONS, "result %d", (int) r);
    ggml_x_clear_error();
    ggml_free(ctx);
    ggml_x_set_thread_recoverable(false);
}

// the defaults are the reference's, and running with them writes no .dot file
static void test_defaults_and_no_dot_files(void) {
    const struct ggml_opt_params a = ggml_opt_default_params(GGML_OPT_ADAM);
    T_CHECK(a.adam.n_iter == 10000 && a.adam.alpha == 0.001f && a.adam.beta1 == 0.9f && a.adam.beta2 == 0.999f &&
            a.adam.eps == 1e-8f && a.adam.decay_min_ndim == 2 && a.adam.sched == 1.0f && a.max_no_improvement == 100 &&
            a.n_gradient_accumulation == 1 && a.print_forward_graph && a.print_backward_graph);
    const struct ggml_opt_params l = ggml_opt_default_params(GGML_OPT_LBFGS);
    T_CHECK(l.lbfgs.m == 6 && l.lbfgs.n_iter == 100 && l.lbfgs.max_linesearch == 20 && l.lbfgs.ftol == 1e-4f &&
            l.lbfgs.wolfe == 0.9f && l.lbfgs.linesearch == GGML_LINESEARCH_DEFAULT);
    unlink("opt-forward.dot");
    unlink("opt-backward.dot");
    struct ggml_context * ctx = ctx_new();
    const float x0[2] = { 1, 2 };
    struct ggml_tensor * x = vec(ctx, 2, x0);
    ggml_set_param(ctx, x);
    struct ggml_opt_params p = ggml_opt_default_params(GGML_OPT_LBFGS);
    p.print_forward_graph = true;
    p.print_backward_graph = true;
    T_CHECK(ggml_opt(ctx, p, ggml_sum(ctx, ggml_sqr(ctx, x))) == GGML_OPT_OK);
    T_CHECK(access("opt-forward.dot", F_OK) != 0 && access("opt-backward.dot", F_OK) != 0);
    ggml_free(ctx);
}

int main(void) {
    T_RUN(test_adam_quadratic);
    T_RUN(test_lbfgs_quadratic);
    T_RUN(test_adam_least_squares);
    T_RUN(test_lbfgs_least_squares);
    T_RUN(test_lbfgs_rosenbrock);
    T_RUN(test_adam_mlp_xor);
    T_RUN(test_lbfgs_mlp_xor);
    T_RUN(test_adamw_decay_min_ndim);
    T_RUN(test_callback_sched_cancel);
    T_RUN(test_adam_gclip);
    T_RUN(test_result_codes_and_errors);
    T_RUN(test_defaults_and_no_dot_files);
    return T_SUMMARY();
}
