// test-sched.c - the backend scheduler with [Test, CPU]: weight pinning, split counts of a
// small MLP and a small attention block, results identical to a CPU-only run, fallback of ops
// the Test backend rejects, reset + recompute, limits; graph copy and compare_graph_backend.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"

#include "testbackend.h"
#include "testing.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define N_IN   32
#define N_HID  64
#define N_OUT  16
#define BATCH  4

#define D_MODEL 16
#define N_HEAD  2
#define HEAD    (D_MODEL / N_HEAD)
#define T_LEN   8

static ggml_backend_t cpu;
static ggml_backend_t test;

static struct ggml_context * new_ctx(size_t n_tensors) {
    struct ggml_init_params params = {
        /* .mem_size   = */ n_tensors * ggml_tensor_overhead() + ggml_graph_overhead_custom(4096, false),
        /* .mem_buffer = */ NULL,
        /* .no_alloc   = */ true,
    };
    return ggml_init(params);
}

static void fill_tensor(struct ggml_tensor * t, float seed) {
    int64_t n = ggml_nelements(t);
    float * v = malloc(sizeof(float) * (size_t) n);
    for (int64_t i = 0; i < n; i++) {
        v[i] = sinf(seed + 0.37f * (float) i) * 0.5f;
    }
    ggml_backend_tensor_set(t, v, 0, ggml_nbytes(t));
    free(v);
}

// weights in their own buffer of type buft, marked WEIGHTS
struct weights {
    struct ggml_context * ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor * w[4];
    struct ggml_tensor * b[2];
};

static void weights_init(struct weights * w, ggml_backend_buffer_type_t buft, int64_t ne[4][2], bool with_bias, float seed) {
    memset(w, 0, sizeof(*w));
    w->ctx = new_ctx(8);
    for (int i = 0; i < 4; i++) {
        if (ne[i][0] > 0) {
            w->w[i] = ggml_new_tensor_2d(w->ctx, GGML_TYPE_F32, ne[i][0], ne[i][1]);
            ggml_format_name(w->w[i], "w%d", i);
        }
    }
    if (with_bias) {
        w->b[0] = ggml_new_tensor_1d(w->ctx, GGML_TYPE_F32, ne[0][1]);
        w->b[1] = ggml_new_tensor_1d(w->ctx, GGML_TYPE_F32, ne[1][1]);
    }
    w->buf = ggml_backend_alloc_ctx_tensors_from_buft(w->ctx, buft);
    ggml_backend_buffer_set_usage(w->buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    for (int i = 0; i < 4; i++) {
        if (w->w[i] != NULL) {
            fill_tensor(w->w[i], seed + (float) i);
        }
    }
    for (int i = 0; i < 2; i++) {
        if (w->b[i] != NULL) {
            fill_tensor(w->b[i], seed + 10.0f + (float) i);
        }
    }
}

static void weights_free(struct weights * w) {
    ggml_backend_buffer_free(w->buf);
    ggml_free(w->ctx);
}

static int64_t mlp_ne[4][2] = { { N_IN, N_HID }, { N_HID, N_OUT }, { 0, 0 }, { 0, 0 } };
static int64_t att_ne[4][2] = { { D_MODEL, D_MODEL }, { D_MODEL, D_MODEL }, { D_MODEL, D_MODEL }, { D_MODEL, D_MODEL } };

struct net {
    struct ggml_context * ctx;
    struct ggml_cgraph * gf;
    struct ggml_tensor * x;
    struct ggml_tensor * out;
    struct ggml_tensor * act; // the relu / soft_max node
};

// y = W2 relu(W1 x + b1) + b2 ; w1/b1 from wa, w2/b2 from wb (may be the same set)
static void build_mlp(struct net * n, const struct weights * wa, const struct weights * wb) {
    n->ctx = new_ctx(64);
    n->x = ggml_new_tensor_2d(n->ctx, GGML_TYPE_F32, N_IN, BATCH);
    ggml_set_name(n->x, "x");
    struct ggml_tensor * h = ggml_add(n->ctx, ggml_mul_mat(n->ctx, wa->w[0], n->x), wa->b[0]);
    n->act = ggml_relu(n->ctx, h);
    ggml_set_name(n->act, "relu");
    n->out = ggml_add(n->ctx, ggml_mul_mat(n->ctx, wb->w[1], n->act), wb->b[1]);
    ggml_set_name(n->out, "y");
    n->gf = ggml_new_graph(n->ctx);
    ggml_build_forward_expand(n->gf, n->out);
}

// one multi-head self-attention block (no mask)
static void build_attention(struct net * n, const struct weights * w) {
    struct ggml_context * ctx = n->ctx = new_ctx(128);
    n->x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, D_MODEL, T_LEN);
    ggml_set_name(n->x, "x");
    struct ggml_tensor * q = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w->w[0], n->x), HEAD, N_HEAD, T_LEN);
    struct ggml_tensor * k = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w->w[1], n->x), HEAD, N_HEAD, T_LEN);
    struct ggml_tensor * v = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w->w[2], n->x), HEAD, N_HEAD, T_LEN);
    q = ggml_permute(ctx, q, 0, 2, 1, 3);                              // [HEAD, T, N_HEAD]
    k = ggml_permute(ctx, k, 0, 2, 1, 3);
    struct ggml_tensor * kq = ggml_mul_mat(ctx, k, q);                 // [T, T, N_HEAD]
    kq = ggml_scale(ctx, kq, 1.0f / sqrtf((float) HEAD));
    n->act = kq = ggml_soft_max(ctx, kq);
    ggml_set_name(n->act, "soft_max");
    struct ggml_tensor * vt = ggml_cont(ctx, ggml_permute(ctx, v, 1, 2, 0, 3)); // [T, HEAD, N_HEAD]
    struct ggml_tensor * kqv = ggml_mul_mat(ctx, vt, kq);              // [HEAD, T, N_HEAD]
    struct ggml_tensor * merged = ggml_cont(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3)); // [HEAD, N_HEAD, T]
    struct ggml_tensor * cur = ggml_reshape_2d(ctx, merged, D_MODEL, T_LEN);
    n->out = ggml_mul_mat(ctx, w->w[3], cur);
    ggml_set_name(n->out, "out");
    n->gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(n->gf, n->out);
}

// the output of the net computed on the CPU alone, with CPU copies of the weights
static float * reference_output(struct net * n, const float * x) {
    ggml_tallocr_t talloc = ggml_tallocr_new_from_backend(cpu, 1 << 20);
    ggml_tallocr_alloc(talloc, n->x);
    ggml_backend_tensor_set(n->x, x, 0, ggml_nbytes(n->x));
    ggml_gallocr_t galloc = ggml_gallocr_new();
    ggml_gallocr_alloc_graph(galloc, talloc, n->gf);
    T_CHECK(ggml_backend_graph_compute(cpu, n->gf));
    float * out = malloc(ggml_nbytes(n->out));
    ggml_backend_tensor_get(n->out, out, 0, ggml_nbytes(n->out));
    ggml_gallocr_free(galloc);
    ggml_tallocr_free(talloc);
    return out;
}

static void net_free(struct net * n) {
    ggml_free(n->ctx);
}

static float * make_input(int64_t n, float seed) {
    float * x = malloc(sizeof(float) * (size_t) n);
    for (int64_t i = 0; i < n; i++) {
        x[i] = cosf(seed * 1.7f + 0.11f * (float) i);
    }
    return x;
}

// run the net through a scheduler [Test, CPU]; the input in its own CPU buffer
static float * sched_output(ggml_backend_sched_t sched, struct net * n, const float * x, ggml_backend_buffer_t * xbuf) {
    struct ggml_context * xctx = NULL;
    if (n->x->data == NULL) {
        *xbuf = ggml_backend_alloc_buffer(cpu, ggml_nbytes(n->x) + 64);
        ggml_tallocr_t t = ggml_tallocr_new_from_buffer(*xbuf);
        ggml_tallocr_alloc(t, n->x);
        ggml_tallocr_free(t);
    }
    (void) xctx;
    ggml_backend_tensor_set(n->x, x, 0, ggml_nbytes(n->x));
    T_CHECK(ggml_x_backend_sched_graph_compute(sched, n->gf));
    float * out = malloc(ggml_nbytes(n->out));
    ggml_backend_tensor_get(n->out, out, 0, ggml_nbytes(n->out));
    return out;
}

static ggml_backend_sched_t new_sched(void) {
    ggml_backend_t backends[2] = { test, cpu };
    return ggml_backend_sched_new(backends, NULL, 2, 1024);
}

// one scenario: build, measure, compute, compare with the CPU-only result, check the splits
static void run_mlp(const char * what, bool w2_on_cpu, enum ggml_op reject, int want_splits,
                    ggml_backend_t want_act_backend, ggml_backend_t want_mm_backend) {
    struct weights wt, wc, wt2;
    weights_init(&wt, testbackend_buffer_type(), mlp_ne, true, 1.0f);
    weights_init(&wc, ggml_backend_cpu_buffer_type(), mlp_ne, true, 1.0f);
    weights_init(&wt2, ggml_backend_cpu_buffer_type(), mlp_ne, true, 1.0f);
    if (reject != GGML_OP_NONE) {
        testbackend_reject_op(test, reject, true);
    }
    float * x = make_input(N_IN * BATCH, 0.5f);

    struct net ref;
    build_mlp(&ref, &wc, &wc);
    float * want = reference_output(&ref, x);

    struct net n;
    build_mlp(&n, &wt, w2_on_cpu ? &wt2 : &wt);
    ggml_backend_sched_t sched = new_sched();
    ggml_backend_sched_init_measure(sched, n.gf);
    T_CHECK(n.out->data == NULL); // measuring leaves the graph unallocated
    ggml_backend_buffer_t xbuf = NULL;
    float * got = sched_output(sched, &n, x, &xbuf);

    T_CHECK_MSG(ggml_backend_sched_get_n_splits(sched) == want_splits, "%s: %d splits, want %d", what,
                ggml_backend_sched_get_n_splits(sched), want_splits);
    T_CHECK_MSG(memcmp(got, want, ggml_nbytes(n.out)) == 0, "%s: results differ from the CPU-only run (%g vs %g)", what,
                (double) got[0], (double) want[0]);
    // ops with weights run where the weights are
    T_CHECK_MSG(ggml_backend_sched_get_node_backend(sched, n.gf->nodes[0]) == want_mm_backend, "%s: first mul_mat", what);
    T_CHECK_MSG(ggml_backend_sched_get_node_backend(sched, n.out) == (w2_on_cpu ? cpu : test), "%s: output backend", what);
    T_CHECK_MSG(ggml_backend_sched_get_node_backend(sched, n.act) == want_act_backend, "%s: relu on %s", what,
                ggml_backend_name(ggml_backend_sched_get_node_backend(sched, n.act)));
    // the graph is as the caller built it
    T_CHECK(n.gf->nodes[0]->src[1] == n.x);

    free(got);
    free(want);
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(xbuf);
    net_free(&n);
    net_free(&ref);
    free(x);
    if (reject != GGML_OP_NONE) {
        testbackend_reject_op(test, reject, false);
    }
    weights_free(&wt);
    weights_free(&wc);
    weights_free(&wt2);
}

static void test_sched_mlp(void) {
    struct testbackend_stats s0, s1;
    testbackend_get_stats(&s0);
    run_mlp("mlp, weights on Test", false, GGML_OP_NONE, 1, test, test);
    testbackend_get_stats(&s1);
    T_CHECK(s1.n_nodes - s0.n_nodes == 5);   // every op ran on Test
    T_CHECK(s1.n_set_async > s0.n_set_async); // the input was copied in
    run_mlp("mlp, relu rejected by Test", false, GGML_OP_UNARY, 3, cpu, test);
    run_mlp("mlp, second layer weights on CPU", true, GGML_OP_NONE, 2, test, test);
    // matrix multiplications rejected: the weights stay on Test and are copied to the CPU for
    // the mul_mats; the bias adds stay pinned to Test: [mm CPU][add relu Test][mm CPU][add Test]
    run_mlp("mlp, mul_mat rejected", false, GGML_OP_MUL_MAT, 4, test, cpu);
}

static void test_sched_attention(void) {
    for (int variant = 0; variant < 2; variant++) {
        struct weights wt, wc;
        weights_init(&wt, testbackend_buffer_type(), att_ne, false, 2.0f);
        weights_init(&wc, ggml_backend_cpu_buffer_type(), att_ne, false, 2.0f);
        if (variant == 1) {
            testbackend_reject_op(test, GGML_OP_SOFT_MAX, true);
        }
        float * x = make_input(D_MODEL * T_LEN, 1.5f);
        struct net ref, n;
        build_attention(&ref, &wc);
        float * want = reference_output(&ref, x);
        build_attention(&n, &wt);

        ggml_backend_sched_t sched = new_sched();
        // llama.cpp style: the input lives in the scheduler's CPU buffer: placed in the measure
        // allocator while measuring, and again after every reset
        ggml_tallocr_alloc(ggml_backend_sched_get_tallocr(sched, cpu), n.x);
        ggml_backend_sched_init_measure(sched, n.gf);
        T_CHECK(n.x->data == NULL);
        ggml_backend_sched_reset(sched);
        ggml_tallocr_alloc(ggml_backend_sched_get_tallocr(sched, cpu), n.x);
        T_CHECK(n.x->buffer == ggml_backend_sched_get_buffer(sched, cpu));
        ggml_backend_tensor_set(n.x, x, 0, ggml_nbytes(n.x));
        T_CHECK(ggml_x_backend_sched_graph_compute(sched, n.gf));
        float * got = malloc(ggml_nbytes(n.out));
        ggml_backend_tensor_get(n.out, got, 0, ggml_nbytes(n.out));

        int want_splits = variant == 0 ? 1 : 3;
        T_CHECK_MSG(ggml_backend_sched_get_n_splits(sched) == want_splits, "attention variant %d: %d splits", variant,
                    ggml_backend_sched_get_n_splits(sched));
        T_CHECK(ggml_backend_sched_get_node_backend(sched, n.act) == (variant == 0 ? test : cpu));
        T_CHECK_MSG(memcmp(got, want, ggml_nbytes(n.out)) == 0, "attention variant %d differs from the CPU-only run", variant);

        free(got);
        free(want);
        free(x);
        ggml_backend_sched_free(sched);
        net_free(&n);
        net_free(&ref);
        testbackend_reject_op(test, GGML_OP_SOFT_MAX, false);
        weights_free(&wt);
        weights_free(&wc);
    }
}

// reset + recompute with new inputs: a rebuilt graph each time (in the same context memory, as
// llama.cpp does) and the same graph object again and again
static void test_sched_recompute(void) {
    struct weights wt, wc;
    weights_init(&wt, testbackend_buffer_type(), mlp_ne, true, 3.0f);
    weights_init(&wc, ggml_backend_cpu_buffer_type(), mlp_ne, true, 3.0f);
    testbackend_reject_op(test, GGML_OP_UNARY, true); // 3 splits: copies both ways

    size_t mem_size = 64 * ggml_tensor_overhead() + ggml_graph_overhead();
    void * mem = malloc(mem_size);
    ggml_backend_sched_t sched = new_sched();
    for (int iter = 0; iter < 6; iter++) {
        struct ggml_init_params params = { mem_size, mem, true };
        struct ggml_context * ctx = ggml_init(params);
        struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, N_IN, BATCH);
        struct ggml_tensor * y = ggml_add(ctx, ggml_mul_mat(ctx, wt.w[1],
                                   ggml_relu(ctx, ggml_add(ctx, ggml_mul_mat(ctx, wt.w[0], x), wt.b[0]))), wt.b[1]);
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, y);
        if (iter == 0) {
            ggml_tallocr_alloc(ggml_backend_sched_get_tallocr(sched, cpu), x);
            ggml_backend_sched_init_measure(sched, gf);
        }
        ggml_backend_sched_reset(sched);
        ggml_tallocr_alloc(ggml_backend_sched_get_tallocr(sched, cpu), x);
        float * xv = make_input(N_IN * BATCH, (float) iter);
        ggml_backend_tensor_set(x, xv, 0, ggml_nbytes(x));
        T_CHECK(ggml_x_backend_sched_graph_compute(sched, gf));
        T_CHECK(ggml_backend_sched_get_n_splits(sched) == 3);
        float * got = malloc(ggml_nbytes(y));
        ggml_backend_tensor_get(y, got, 0, ggml_nbytes(y));

        struct net ref;
        build_mlp(&ref, &wc, &wc);
        float * want = reference_output(&ref, xv);
        T_CHECK_MSG(memcmp(got, want, ggml_nbytes(y)) == 0, "rebuilt graph, iteration %d", iter);
        net_free(&ref);
        free(want);
        free(got);
        free(xv);
        ggml_free(ctx);
    }
    ggml_backend_sched_free(sched);
    free(mem);

    // the same graph object, the input in the caller's buffer; no init_measure (measured on the
    // first compute)
    struct net n;
    build_mlp(&n, &wt, &wt);
    sched = new_sched();
    ggml_backend_buffer_t xbuf = NULL;
    for (int iter = 0; iter < 6; iter++) {
        if (iter > 0 && iter % 2 == 0) {
            ggml_backend_sched_reset(sched);
        }
        float * xv = make_input(N_IN * BATCH, 10.0f + (float) iter);
        float * got = sched_output(sched, &n, xv, &xbuf);
        struct net ref;
        build_mlp(&ref, &wc, &wc);
        float * want = reference_output(&ref, xv);
        T_CHECK_MSG(memcmp(got, want, ggml_nbytes(n.out)) == 0, "same graph, iteration %d", iter);
        T_CHECK(ggml_backend_sched_get_n_splits(sched) == 3);
        net_free(&ref);
        free(want);
        free(got);
        free(xv);
    }
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(xbuf);
    net_free(&n);

    testbackend_reject_op(test, GGML_OP_UNARY, false);
    weights_free(&wt);
    weights_free(&wc);
}

static void test_sched_set_node_backend(void) {
    struct weights wt;
    weights_init(&wt, testbackend_buffer_type(), mlp_ne, true, 4.0f);
    struct net n;
    build_mlp(&n, &wt, &wt);
    ggml_backend_sched_t sched = new_sched();
    // the assignment holds for the measure pass; the reset at its end forgets it
    ggml_backend_sched_set_node_backend(sched, n.act, cpu);
    ggml_backend_sched_init_measure(sched, n.gf);
    T_CHECK(ggml_backend_sched_get_node_backend(sched, n.act) == NULL);
    // the measure's split choice is kept (ggml-go extension)
    T_CHECK(ggml_x_backend_sched_get_split_backend(sched, n.act) == cpu);
    ggml_backend_sched_set_node_backend(sched, n.act, cpu);
    T_CHECK(ggml_backend_sched_get_node_backend(sched, n.act) == cpu);
    ggml_backend_buffer_t xbuf = NULL;
    float * x = make_input(N_IN * BATCH, 0.0f);
    float * got = sched_output(sched, &n, x, &xbuf);
    T_CHECK(ggml_backend_sched_get_n_splits(sched) == 3);
    T_CHECK(ggml_backend_sched_get_node_backend(sched, n.act) == cpu);
    T_CHECK(ggml_backend_sched_get_tallocr(sched, test) != NULL);
    T_CHECK(ggml_backend_sched_get_buffer(sched, test) != NULL);
    T_CHECK(!ggml_backend_buffer_is_host(ggml_backend_sched_get_buffer(sched, test)));
    free(got);
    free(x);
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(xbuf);
    net_free(&n);
    weights_free(&wt);
}

static bool abort_always(void * data) {
    (*(int *) data)++;
    return true;
}

// the extensions: is_measured, reset_measure (measure again), the abort callback of the
// scheduler and of the CPU backend
static void test_sched_measure_and_abort(void) {
    struct weights wt;
    weights_init(&wt, testbackend_buffer_type(), mlp_ne, true, 5.0f);
    struct net n;
    build_mlp(&n, &wt, &wt);
    ggml_backend_sched_t sched = new_sched();
    T_CHECK(!ggml_x_backend_sched_is_measured(sched));
    ggml_backend_sched_init_measure(sched, n.gf);
    T_CHECK(ggml_x_backend_sched_is_measured(sched));
    T_CHECK(ggml_backend_sched_get_buffer(sched, test) != NULL);
    ggml_x_backend_sched_reset_measure(sched);
    T_CHECK(!ggml_x_backend_sched_is_measured(sched));
    // measuring again is allowed after a reset_measure
    bool old = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();
    ggml_backend_sched_init_measure(sched, n.gf);
    T_CHECK_MSG(ggml_x_last_error() == NULL, "%s", ggml_x_last_error());
    T_CHECK(ggml_x_backend_sched_is_measured(sched));

    ggml_backend_buffer_t xbuf = NULL;
    float * x = make_input(N_IN * BATCH, 1.0f);
    float * want = sched_output(sched, &n, x, &xbuf);

    // an abort before the first split fails the compute with a message
    int calls = 0;
    ggml_x_backend_sched_set_abort_callback(sched, abort_always, &calls);
    ggml_x_clear_error();
    T_CHECK(!ggml_x_backend_sched_graph_compute(sched, n.gf));
    T_CHECK(calls == 1);
    T_CHECK(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "aborted") != NULL);
    ggml_x_backend_sched_set_abort_callback(sched, NULL, NULL);
    float * again = sched_output(sched, &n, x, &xbuf);
    T_CHECK(memcmp(want, again, ggml_nbytes(n.out)) == 0);

    // the CPU backend checks its callback between nodes
    calls = 0;
    ggml_x_backend_cpu_set_abort_callback(cpu, abort_always, &calls);
    struct ggml_context * ctx = new_ctx(8);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, ggml_neg(ctx, ggml_neg(ctx, a)));
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    T_CHECK(buf != NULL);
    ggml_x_clear_error();
    T_CHECK(!ggml_backend_graph_compute(cpu, g));
    T_CHECK(calls >= 1);
    ggml_x_backend_cpu_set_abort_callback(cpu, NULL, NULL);
    T_CHECK(ggml_backend_graph_compute(cpu, g));
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(old);

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    free(want);
    free(again);
    free(x);
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(xbuf);
    net_free(&n);
    weights_free(&wt);
}

static void test_sched_limits(void) {
    bool old = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();

    ggml_backend_t many[17];
    for (int i = 0; i < 17; i++) {
        many[i] = cpu;
    }
    T_CHECK(ggml_backend_sched_new(many, NULL, 17, 64) == NULL && ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    T_CHECK(ggml_backend_sched_new(many, NULL, 0, 64) == NULL);
    ggml_x_clear_error();

    int64_t ne[4][2] = { { 8, 1 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
    struct weights wt;
    weights_init(&wt, testbackend_buffer_type(), ne, false, 5.0f);

    // more than 256 splits: ops pinned to Test by a weight, alternating with ops Test rejects
    testbackend_reject_op(test, GGML_OP_SQR, true);
    {
        struct ggml_context * ctx = new_ctx(1200);
        struct ggml_context * xctx = new_ctx(4);
        struct ggml_tensor * x = ggml_new_tensor_1d(xctx, GGML_TYPE_F32, 8);
        struct ggml_tensor * h = x;
        for (int i = 0; i < 300; i++) {
            h = ggml_sqr(ctx, ggml_add(ctx, h, ggml_reshape_1d(ctx, wt.w[0], 8)));
        }
        struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 2048, false);
        ggml_build_forward_expand(gf, h);
        ggml_backend_buffer_t xbuf = ggml_backend_alloc_ctx_tensors(xctx, cpu);
        ggml_backend_t backends[2] = { test, cpu };
        ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 2048);
        ggml_x_clear_error();
        T_CHECK(!ggml_x_backend_sched_graph_compute(sched, gf));
        T_CHECK_MSG(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "splits") != NULL, "%s",
                    ggml_x_last_error() ? ggml_x_last_error() : "(none)");
        ggml_x_clear_error();
        ggml_backend_sched_free(sched);
        ggml_backend_buffer_free(xbuf);
        ggml_free(xctx);
        ggml_free(ctx);
    }
    testbackend_reject_op(test, GGML_OP_SQR, false);

    // more than 16 inputs in one split: a chain of adds of CPU tensors, pinned to Test by its end
    {
        struct ggml_context * ctx = new_ctx(128);
        struct ggml_context * ictx = new_ctx(32);
        struct ggml_tensor * h = ggml_new_tensor_1d(ictx, GGML_TYPE_F32, 8);
        for (int i = 0; i < 20; i++) {
            h = ggml_add(ctx, h, ggml_new_tensor_1d(ictx, GGML_TYPE_F32, 8));
        }
        h = ggml_mul(ctx, h, ggml_reshape_1d(ctx, wt.w[0], 8));
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, h);
        ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ictx, cpu);
        ggml_backend_t backends[2] = { test, cpu };
        ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 2, 256);
        ggml_x_clear_error();
        T_CHECK(!ggml_x_backend_sched_graph_compute(sched, gf));
        T_CHECK(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "inputs") != NULL);
        ggml_x_clear_error();
        ggml_backend_sched_free(sched);
        ggml_backend_buffer_free(buf);
        ggml_free(ictx);
        ggml_free(ctx);
    }

    // an op no backend of the scheduler supports
    {
        testbackend_reject_op(test, GGML_OP_MUL, true);
        struct ggml_context * ctx = new_ctx(16);
        struct ggml_tensor * y = ggml_mul(ctx, ggml_reshape_1d(ctx, wt.w[0], 8), ggml_reshape_1d(ctx, wt.w[0], 8));
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, y);
        ggml_backend_t backends[1] = { test };
        ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 1, 64);
        ggml_x_clear_error();
        T_CHECK(!ggml_x_backend_sched_graph_compute(sched, gf));
        T_CHECK(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "supports") != NULL);
        ggml_x_clear_error();
        // weights in a buffer no backend of the scheduler can use
        ggml_backend_t cpu_only[1] = { cpu };
        ggml_backend_sched_t s2 = ggml_backend_sched_new(cpu_only, NULL, 1, 64);
        T_CHECK(!ggml_x_backend_sched_graph_compute(s2, gf));
        T_CHECK(ggml_x_last_error() != NULL);
        ggml_x_clear_error();
        ggml_backend_sched_free(s2);
        ggml_backend_sched_free(sched);
        ggml_free(ctx);
        testbackend_reject_op(test, GGML_OP_MUL, false);
    }

    weights_free(&wt);
    ggml_x_set_thread_recoverable(old);
}

// a cache that lives in a Test buffer (usage ANY) is updated by a copy into a view of it: the
// copy runs where the cache is; when that backend rejects the copy, no backend can write there
static void test_sched_cache_update(void) {
    struct ggml_context * cctx = new_ctx(4);
    struct ggml_tensor * cache = ggml_new_tensor_1d(cctx, GGML_TYPE_F32, 64);
    ggml_backend_buffer_t cbuf = ggml_backend_alloc_ctx_tensors(cctx, test);
    ggml_backend_buffer_clear(cbuf, 0);

    struct ggml_context * xctx = new_ctx(4);
    struct ggml_tensor * x = ggml_new_tensor_1d(xctx, GGML_TYPE_F32, 16);
    ggml_backend_buffer_t xbuf = ggml_backend_alloc_ctx_tensors(xctx, cpu);
    float xv[16];
    for (int i = 0; i < 16; i++) {
        xv[i] = (float) i;
    }
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));

    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * dst = ggml_view_1d(ctx, cache, 16, 8 * sizeof(float));
    struct ggml_tensor * upd = ggml_cpy(ctx, ggml_scale(ctx, x, 2.0f), dst);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, upd);

    ggml_backend_sched_t sched = new_sched();
    for (int iter = 0; iter < 2; iter++) {
        T_CHECK(ggml_x_backend_sched_graph_compute(sched, gf));
        T_CHECK(ggml_backend_sched_get_node_backend(sched, upd) == test);
        T_CHECK(ggml_backend_sched_get_n_splits(sched) == 1);
        float cv[64];
        ggml_backend_tensor_get(cache, cv, 0, sizeof(cv));
        int bad = 0;
        for (int i = 0; i < 64; i++) {
            bad += cv[i] != (i >= 8 && i < 24 ? 2.0f * (float) (i - 8) : 0.0f);
        }
        T_CHECK_MSG(bad == 0, "iteration %d: %d wrong values in the cache", iter, bad);
    }
    ggml_backend_sched_free(sched);
    // the nodes of gf still point into the memory of the scheduler just freed: a graph is
    // computed again only by the scheduler that placed it, so the second one gets a new graph
    ggml_free(ctx);
    ctx = new_ctx(16);
    dst = ggml_view_1d(ctx, cache, 16, 8 * sizeof(float));
    upd = ggml_cpy(ctx, ggml_scale(ctx, x, 2.0f), dst);
    gf  = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, upd);

    testbackend_reject_op(test, GGML_OP_CPY, true);
    bool old = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();
    sched = new_sched();
    T_CHECK(!ggml_x_backend_sched_graph_compute(sched, gf));
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(old);
    testbackend_reject_op(test, GGML_OP_CPY, false);

    ggml_backend_sched_free(sched);
    ggml_free(ctx);
    ggml_backend_buffer_free(xbuf);
    ggml_free(xctx);
    ggml_backend_buffer_free(cbuf);
    ggml_free(cctx);
}


// ---------------------------------------------------------------------------------------------
// the plan cache: a graph computed again with the same structure reuses the last split; any
// change to what the split depends on makes a new one

// internal counters of the scheduler (ggml-backend-sched.c)
int64_t ggml_x_backend_sched_n_splits_made(ggml_backend_sched_t sched);
int64_t ggml_x_backend_sched_n_plans_reused(ggml_backend_sched_t sched);

struct plan_counts {
    int64_t made;
    int64_t reused;
};

static struct plan_counts plan_counts(ggml_backend_sched_t sched) {
    struct plan_counts c = { ggml_x_backend_sched_n_splits_made(sched), ggml_x_backend_sched_n_plans_reused(sched) };
    return c;
}

// checks that one compute since `before` made a new split (want_new) or reused the plan
#define T_PLAN(sched, before, want_new, what) \
    do { \
        struct plan_counts pc_ = plan_counts(sched); \
        T_CHECK_MSG(pc_.made - (before).made == ((want_new) ? 1 : 0) && pc_.reused - (before).reused == ((want_new) ? 0 : 1), \
                    "%s: %lld new splits, %lld reuses (want a %s)", what, (long long) (pc_.made - (before).made), \
                    (long long) (pc_.reused - (before).reused), (want_new) ? "new split" : "reuse"); \
    } while (0)

// assignments, supported ops and resets with one graph object
static void test_sched_plan_cache_assign(void) {
    struct weights wt, wc;
    weights_init(&wt, testbackend_buffer_type(), mlp_ne, true, 7.0f);
    weights_init(&wc, ggml_backend_cpu_buffer_type(), mlp_ne, true, 7.0f);
    struct net n;
    build_mlp(&n, &wt, &wt);
    ggml_backend_sched_t sched = new_sched();
    ggml_backend_buffer_t xbuf = NULL;
    // measured with the relu on the CPU, so that both buffers have room for both layouts
    ggml_backend_sched_set_node_backend(sched, n.act, cpu);
    ggml_backend_sched_init_measure(sched, n.gf);

    // 0: first compute; 1: again; 2: relu assigned to the CPU; 3: the same
    // assignment again; 4: no assignment; 5: relu rejected by Test; 6: again; 7: accepted again;
    // 8: again, without a reset in between
    static const bool want_new[] = { true, false, true, false, true, true, false, true, false };
    static const int want_splits[] = { 1, 1, 3, 3, 1, 3, 3, 1, 1 };
    for (int step = 0; step < 9; step++) {
        if (step != 8) {
            ggml_backend_sched_reset(sched);
        }
        if (step == 2 || step == 3) {
            ggml_backend_sched_set_node_backend(sched, n.act, cpu);
        }
        testbackend_reject_op(test, GGML_OP_UNARY, step == 5 || step == 6);
        struct plan_counts before = plan_counts(sched);
        float * x = make_input(N_IN * BATCH, 20.0f + (float) step);
        float * got = sched_output(sched, &n, x, &xbuf);
        char what[64];
        snprintf(what, sizeof(what), "step %d", step);
        if (step > 0) {
            T_PLAN(sched, before, want_new[step], what);
        }
        T_CHECK_MSG(ggml_backend_sched_get_n_splits(sched) == want_splits[step], "step %d: %d splits, want %d", step,
                    ggml_backend_sched_get_n_splits(sched), want_splits[step]);
        T_CHECK_MSG(ggml_backend_sched_get_node_backend(sched, n.act) == (want_splits[step] == 3 ? cpu : test),
                    "step %d: relu backend", step);
        T_CHECK(n.gf->nodes[0]->src[1] == n.x); // the graph is as built
        struct net ref;
        build_mlp(&ref, &wc, &wc);
        float * want = reference_output(&ref, x);
        T_CHECK_MSG(memcmp(got, want, ggml_nbytes(n.out)) == 0, "step %d: results differ from the CPU-only run", step);
        net_free(&ref);
        free(want);
        free(got);
        free(x);
    }
    testbackend_reject_op(test, GGML_OP_UNARY, false);

    // after a reset, an assignment is reported until the compute; the last split's choices
    // are not
    ggml_backend_sched_reset(sched);
    T_CHECK(ggml_backend_sched_get_node_backend(sched, n.act) == NULL);
    ggml_backend_sched_set_node_backend(sched, n.act, cpu);
    T_CHECK(ggml_backend_sched_get_node_backend(sched, n.act) == cpu);
    ggml_backend_sched_reset(sched);
    T_CHECK(ggml_backend_sched_get_node_backend(sched, n.act) == NULL);

    // an assignment to a backend that rejects the node: after the compute, the backend the
    // split chose is reported; an assignment after the compute is reported until the next one
    testbackend_reject_op(test, GGML_OP_UNARY, true);
    ggml_backend_sched_set_node_backend(sched, n.act, test);
    T_CHECK(ggml_backend_sched_get_node_backend(sched, n.act) == test);
    float * x = make_input(N_IN * BATCH, 40.0f);
    float * got = sched_output(sched, &n, x, &xbuf);
    T_CHECK(ggml_backend_sched_get_node_backend(sched, n.act) == cpu);
    ggml_backend_sched_set_node_backend(sched, n.act, test);
    T_CHECK(ggml_backend_sched_get_node_backend(sched, n.act) == test);
    testbackend_reject_op(test, GGML_OP_UNARY, false);
    free(got);
    free(x);

    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(xbuf);
    net_free(&n);
    weights_free(&wt);
    weights_free(&wc);
}

// y = scale(op(scale(x, 2), x), s): variant 0: op add, s 0.5 (y = 1.5 x); 1: op sub (y = 0.5 x);
// 2: s = 3 (y = 9 x); 3: like 0 with twice the elements
static struct ggml_tensor * build_small(struct ggml_context * ctx, int variant, struct ggml_tensor ** x,
                                        struct ggml_cgraph ** gf) {
    *x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, variant == 3 ? 16 : 8);
    struct ggml_tensor * a = ggml_scale(ctx, *x, 2.0f);
    struct ggml_tensor * b = variant == 1 ? ggml_sub(ctx, a, *x) : ggml_add(ctx, a, *x);
    struct ggml_tensor * y = ggml_scale(ctx, b, variant == 2 ? 3.0f : 0.5f);
    *gf = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(*gf, y);
    return y;
}

static float small_factor(int variant) {
    return variant == 1 ? 0.5f : variant == 2 ? 9.0f : 1.5f;
}

// computes gf with input x[i] = i + seed (x placed in xbuf) and checks y = factor * x
static void small_check_mult(ggml_backend_sched_t sched, struct ggml_cgraph * gf, struct ggml_tensor * x,
                             struct ggml_tensor * y, ggml_backend_buffer_t xbuf, float factor, float seed,
                             const char * what) {
    if (x->data == NULL) {
        ggml_tallocr_t t = ggml_tallocr_new_from_buffer(xbuf);
        ggml_tallocr_alloc(t, x);
        ggml_tallocr_free(t);
    }
    float xv[16], yv[16];
    const int n = (int) ggml_nelements(x);
    for (int i = 0; i < n; i++) {
        xv[i] = (float) i + seed;
    }
    ggml_backend_tensor_set(x, xv, 0, ggml_nbytes(x));
    ggml_backend_sched_reset(sched);
    T_CHECK_MSG(ggml_x_backend_sched_graph_compute(sched, gf), "%s: compute failed", what);
    ggml_backend_tensor_get(y, yv, 0, ggml_nbytes(y));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        bad += fabsf(yv[i] - factor * xv[i]) > 1e-5f * fabsf(xv[i]) + 1e-6f;
    }
    T_CHECK_MSG(bad == 0, "%s: %d wrong values (y[1] = %g, want %g)", what, bad, (double) yv[1], (double) (factor * xv[1]));
}

// computes gf with input x[i] = i + seed (x placed in xbuf) and checks y
static void small_check(ggml_backend_sched_t sched, struct ggml_cgraph * gf, struct ggml_tensor * x,
                        struct ggml_tensor * y, ggml_backend_buffer_t xbuf, int variant, float seed,
                        const char * what) {
    small_check_mult(sched, gf, x, y, xbuf, small_factor(variant), seed, what);
}

// measures sched with a graph larger than the small graphs and their growth, whose input is in
// the scheduler's CPU buffer (room for inputs placed there later)
static void measure_big(ggml_backend_sched_t sched) {
    struct ggml_context * ctx = new_ctx(16);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 256);
    struct ggml_tensor * cur = ggml_add(ctx, ggml_scale(ctx, x, 2.0f), x);
    for (int i = 0; i < 4; i++) {
        cur = ggml_scale(ctx, cur, 0.5f);
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, cur);
    ggml_tallocr_alloc(ggml_backend_sched_get_tallocr(sched, cpu), x);
    ggml_backend_sched_init_measure(sched, gf);
    ggml_free(ctx);
}

// graphs rebuilt in the same memory (same tensor addresses) with a different op, op parameter or
// shape; a graph object that grows; two graphs of the same size in turn
static void test_sched_plan_cache_graph(void) {
    ggml_backend_buffer_t xbuf = ggml_backend_alloc_buffer(cpu, 4096);
    size_t mem_size = 32 * ggml_tensor_overhead() + ggml_graph_overhead();
    void * mem = malloc(mem_size);
    ggml_backend_sched_t sched = new_sched();
    measure_big(sched);

    // variant sequence: a change of variant must split anew, a repeat must reuse
    static const int seq[] = { 0, 0, 1, 1, 0, 2, 2, 3, 3, 0 };
    for (int k = 0; k < (int) (sizeof(seq) / sizeof(seq[0])); k++) {
        struct ggml_init_params params = { mem_size, mem, true };
        struct ggml_context * ctx = ggml_init(params);
        struct ggml_tensor * x;
        struct ggml_cgraph * gf;
        struct ggml_tensor * y = build_small(ctx, seq[k], &x, &gf);
        struct plan_counts before = plan_counts(sched);
        char what[64];
        snprintf(what, sizeof(what), "rebuilt graph %d (variant %d)", k, seq[k]);
        small_check(sched, gf, x, y, xbuf, seq[k], (float) k, what);
        if (k > 0) {
            T_PLAN(sched, before, seq[k] != seq[k - 1], what);
        }
        ggml_free(ctx);
    }
    ggml_backend_sched_free(sched);

    // a graph object that grows: one more node
    sched = new_sched();
    measure_big(sched);
    struct ggml_context * ctx = new_ctx(32);
    struct ggml_tensor * x;
    struct ggml_cgraph * gf;
    struct ggml_tensor * y = build_small(ctx, 0, &x, &gf);
    small_check(sched, gf, x, y, xbuf, 0, 1.0f, "growing graph, first");
    struct plan_counts before = plan_counts(sched);
    small_check(sched, gf, x, y, xbuf, 0, 2.0f, "growing graph, again");
    T_PLAN(sched, before, false, "growing graph, again");
    struct ggml_tensor * y2 = ggml_scale(ctx, y, 2.0f);
    ggml_build_forward_expand(gf, y2);
    before = plan_counts(sched);
    small_check_mult(sched, gf, x, y2, xbuf, 3.0f, 3.0f, "growing graph, grown");
    T_PLAN(sched, before, true, "growing graph, grown");

    // two graphs of the same size in turn (the second in its own context)
    struct ggml_context * ctx2 = new_ctx(32);
    struct ggml_tensor * x2;
    struct ggml_cgraph * gf2;
    struct ggml_tensor * z = build_small(ctx2, 1, &x2, &gf2);
    struct ggml_cgraph * gf1 = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(gf1, y);
    T_CHECK(gf1->n_nodes == gf2->n_nodes);
    for (int k = 0; k < 4; k++) {
        before = plan_counts(sched);
        if (k % 2 == 0) {
            small_check(sched, gf1, x, y, xbuf, 0, 4.0f + (float) k, "two graphs, first");
        } else {
            small_check(sched, gf2, x2, z, xbuf, 1, 4.0f + (float) k, "two graphs, second");
        }
        T_PLAN(sched, before, true, "two graphs in turn");
    }

    // inputs placed in the scheduler's own buffer after each reset, other tensors placed there
    // first (the intermediate results must move)
    before = plan_counts(sched);
    for (int k = 0; k < 3; k++) {
        ggml_backend_sched_reset(sched);
        ggml_tallocr_t talloc = ggml_backend_sched_get_tallocr(sched, cpu);
        struct ggml_tensor * pad = ggml_new_tensor_1d(ctx2, GGML_TYPE_F32, 8);
        if (k > 0) {
            ggml_tallocr_alloc(talloc, pad);
        }
        x2->data = NULL;
        x2->buffer = NULL;
        ggml_tallocr_alloc(talloc, x2);
        float xv[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
        for (int i = 0; i < 8; i++) {
            xv[i] += (float) k;
        }
        ggml_backend_tensor_set(x2, xv, 0, sizeof(xv));
        T_CHECK(ggml_x_backend_sched_graph_compute(sched, gf2));
        float zv[8];
        ggml_backend_tensor_get(z, zv, 0, sizeof(zv));
        for (int i = 0; i < 8; i++) {
            T_NEAR(zv[i], 0.5f * xv[i], 1e-6);
        }
        if (k > 0) {
            float pv[8] = { 0 };
            ggml_backend_tensor_get(pad, pv, 0, sizeof(pv));
            (void) pv; // contents undefined; only the placement matters
            T_CHECK(pad->data != NULL && x2->data != NULL && pad->data != x2->data);
        }
    }
    struct plan_counts after = plan_counts(sched);
    // first: x2 moved from the caller's buffer to the scheduler's (new key); then reused, with
    // x2 at another offset
    T_CHECK_MSG(after.made - before.made == 1 && after.reused - before.reused == 2, "own buffer inputs: %lld made, %lld reused",
                (long long) (after.made - before.made), (long long) (after.reused - before.reused));

    ggml_backend_sched_free(sched);
    ggml_free(ctx2);
    ggml_free(ctx);
    free(mem);
    ggml_backend_buffer_free(xbuf);
}

// a Go-like life cycle at scale: a graph far smaller than the scheduler's size, computed many
// times; the result stays right and the plan is reused
static void test_sched_plan_cache_large(void) {
    struct ggml_backend * backends[1] = { cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, NULL, 1, 8192);
    ggml_backend_buffer_t xbuf = ggml_backend_alloc_buffer(cpu, 4096);
    struct ggml_context * ctx = new_ctx(400);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    struct ggml_tensor * cur = x;
    for (int i = 0; i < 300; i++) {
        cur = ggml_add(ctx, cur, x);
    }
    struct ggml_cgraph * gf = ggml_new_graph_custom(ctx, 4096, false);
    ggml_build_forward_expand(gf, cur);
    {
        ggml_tallocr_t t = ggml_tallocr_new_from_buffer(xbuf);
        ggml_tallocr_alloc(t, x);
        ggml_tallocr_free(t);
    }
    struct plan_counts before = plan_counts(sched);
    for (int k = 0; k < 5; k++) {
        float xv[8], yv[8];
        for (int i = 0; i < 8; i++) {
            xv[i] = (float) (i + k);
        }
        ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
        ggml_backend_sched_reset(sched);
        T_CHECK(ggml_x_backend_sched_graph_compute(sched, gf));
        ggml_backend_tensor_get(cur, yv, 0, sizeof(yv));
        for (int i = 0; i < 8; i++) {
            T_NEAR(yv[i], 301.0f * xv[i], 1e-6);
        }
    }
    struct plan_counts after = plan_counts(sched);
    // the first compute measures (one split) and splits again; the other four reuse that plan
    T_CHECK_MSG(after.made - before.made == 2 && after.reused - before.reused == 4, "%lld made, %lld reused",
                (long long) (after.made - before.made), (long long) (after.reused - before.reused));
    ggml_backend_sched_free(sched);
    ggml_backend_buffer_free(xbuf);
    ggml_free(ctx);
}

struct cmp_state {
    int calls;
    int stop_after;
    int mismatches;
    int last_index;
};

static bool GGML_CALL compare_cb(int node_index, struct ggml_tensor * t1, struct ggml_tensor * t2, void * user_data) {
    struct cmp_state * st = user_data;
    st->calls++;
    st->last_index = node_index;
    size_t n = ggml_nbytes(t1);
    if (n != ggml_nbytes(t2) || t1->op != t2->op || strcmp(t1->name, t2->name) != 0) {
        st->mismatches++;
        return true;
    }
    char * a = malloc(n);
    char * b = malloc(n);
    ggml_backend_tensor_get(t1, a, 0, n);
    ggml_backend_tensor_get(t2, b, 0, n);
    st->mismatches += memcmp(a, b, n) != 0;
    free(a);
    free(b);
    return st->stop_after == 0 || st->calls < st->stop_after;
}

static void test_compare_graph_backend(void) {
    struct weights wc;
    weights_init(&wc, ggml_backend_cpu_buffer_type(), att_ne, false, 6.0f);
    struct net n;
    build_attention(&n, &wc);
    float * x = make_input(D_MODEL * T_LEN, 2.0f);
    ggml_tallocr_t talloc = ggml_tallocr_new_from_backend(cpu, 1 << 20);
    ggml_tallocr_alloc(talloc, n.x);
    ggml_backend_tensor_set(n.x, x, 0, ggml_nbytes(n.x));
    ggml_gallocr_t galloc = ggml_gallocr_new();
    ggml_gallocr_alloc_graph(galloc, talloc, n.gf);

    int n_ops = 0;
    for (int i = 0; i < n.gf->n_nodes; i++) {
        enum ggml_op op = n.gf->nodes[i]->op;
        n_ops += !(op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE);
    }
    T_CHECK(n_ops >= 10);

    // graph copy to the Test backend
    struct ggml_backend_graph_copy copy = ggml_backend_graph_copy(test, n.gf);
    T_CHECK(copy.buffer != NULL && copy.graph != NULL);
    T_CHECK(copy.graph->n_nodes == n.gf->n_nodes);
    T_CHECK(!ggml_backend_buffer_is_host(copy.buffer));
    for (int i = 0; i < copy.graph->n_nodes; i++) {
        struct ggml_tensor * t = copy.graph->nodes[i];
        T_CHECK(t->buffer == copy.buffer && t->op == n.gf->nodes[i]->op);
    }
    ggml_backend_graph_copy_free(copy);

    struct cmp_state st = { 0, 0, 0, -1 };
    T_CHECK(ggml_backend_compare_graph_backend(cpu, test, n.gf, compare_cb, &st));
    T_CHECK_MSG(st.calls == n_ops, "%d callbacks for %d ops", st.calls, n_ops);
    T_CHECK(st.mismatches == 0);
    T_CHECK(st.last_index == n.gf->n_nodes - 1);

    struct cmp_state stop = { 0, 3, 0, -1 };
    T_CHECK(ggml_backend_compare_graph_backend(cpu, test, n.gf, compare_cb, &stop));
    T_CHECK(stop.calls == 3 && stop.mismatches == 0);

    ggml_gallocr_free(galloc);
    ggml_tallocr_free(talloc);
    free(x);
    net_free(&n);
    weights_free(&wc);
}

int main(void) {
    cpu  = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 1);
    test = testbackend_init(1);

    T_RUN(test_sched_mlp);
    T_RUN(test_sched_attention);
    T_RUN(test_sched_recompute);
    T_RUN(test_sched_set_node_backend);
    T_RUN(test_sched_cache_update);
    T_RUN(test_sched_limits);
    T_RUN(test_sched_measure_and_abort);
    T_RUN(test_compare_graph_backend);
    T_RUN(test_sched_plan_cache_assign);
    T_RUN(test_sched_plan_cache_graph);
    T_RUN(test_sched_plan_cache_large);

    ggml_backend_free(test);
    ggml_backend_free(cpu);
    struct testbackend_stats s;
    testbackend_get_stats(&s);
    if (s.n_buffers != 0) {
        fprintf(stderr, "%lld Test buffers leaked\n", (long long) s.n_buffers);
        t_tests_failed++;
    }
    return T_SUMMARY();
}
