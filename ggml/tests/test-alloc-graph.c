// test-alloc-graph.c - graph allocators (gallocr), measure allocators and the legacy allocr:
// memory reuse, in-place reuse, views, re-allocation of the same graph, out of space.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"

#include "testbackend.h"
#include "testing.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define N 1024 // elements per tensor
#define CHAIN 8

static struct ggml_context * new_ctx(void) {
    struct ggml_init_params params = {
        /* .mem_size   = */ 256 * ggml_tensor_overhead() + ggml_graph_overhead(),
        /* .mem_buffer = */ NULL,
        /* .no_alloc   = */ true,
    };
    return ggml_init(params);
}

static ggml_backend_t new_cpu(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(cpu, 2);
    return cpu;
}

// x (placed by the caller) -> CHAIN x dup -> sqr; no op of the chain can work in place, so the
// memory saving comes from freeing
static struct ggml_cgraph * build_dup_chain(struct ggml_context * ctx, struct ggml_tensor * x) {
    struct ggml_tensor * h = x;
    for (int i = 0; i < CHAIN; i++) {
        h = ggml_dup(ctx, h);
        h = ggml_cpy(ctx, h, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N)); // op CPY is a view of its dst
    }
    h = ggml_sqr(ctx, h);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, h);
    return gf;
}

static void set_input(struct ggml_tensor * x, float seed) {
    float v[N];
    for (int i = 0; i < N; i++) {
        v[i] = seed + 0.001f * (float) i;
    }
    ggml_backend_tensor_set(x, v, 0, sizeof(v));
}

static void test_gallocr_reuse(void) {
    ggml_backend_t cpu = new_cpu();
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    // the input gets its own buffer before the graph is built
    struct ggml_context * ictx = new_ctx();
    struct ggml_tensor * xi = ggml_new_tensor_1d(ictx, GGML_TYPE_F32, N);
    ggml_backend_buffer_t ibuf = ggml_backend_alloc_ctx_tensors(ictx, cpu);
    x = xi;
    struct ggml_cgraph * gf = build_dup_chain(ctx, x);
    struct ggml_tensor * out = gf->nodes[gf->n_nodes - 1];

    // measure, then allocate the same graph for real in a buffer of exactly that size
    ggml_gallocr_t galloc = ggml_gallocr_new();
    ggml_tallocr_t measure = ggml_tallocr_new_measure_from_backend(cpu);
    T_CHECK(ggml_tallocr_is_measure(measure));
    size_t size = ggml_gallocr_alloc_graph(galloc, measure, gf);
    ggml_tallocr_free(measure);

    size_t one = GGML_PAD(N * sizeof(float), 64);
    size_t sum = 0;
    int n_intermediate = 0;
    for (int i = 0; i < gf->n_nodes; i++) {
        T_CHECK(gf->nodes[i]->data == NULL || gf->nodes[i]->buffer == NULL || gf->nodes[i]->buffer == ibuf); // measure leaves nothing behind
        if (gf->nodes[i]->view_src == NULL) {
            sum += one;
            n_intermediate++;
        }
    }
    for (int i = 0; i < gf->n_leafs; i++) {
        if (gf->leafs[i] != x) {
            sum += one; // the cpy destinations
        }
    }
    T_CHECK_MSG(size > 0 && size < sum, "peak %zu, sum of intermediates %zu", size, sum);
    T_CHECK_MSG(size <= 3 * one, "peak %zu (> 3 tensors)", size);

    ggml_tallocr_t talloc = ggml_tallocr_new_from_backend(cpu, size);
    T_CHECK(!ggml_tallocr_is_measure(talloc));
    for (int iter = 0; iter < 3; iter++) {
        ggml_tallocr_reset(talloc);
        size_t used = ggml_gallocr_alloc_graph(galloc, talloc, gf);
        T_CHECK(used <= size);
        for (int i = 0; i < gf->n_nodes; i++) {
            T_CHECK(gf->nodes[i]->data != NULL && gf->nodes[i]->buffer != NULL);
        }
        set_input(x, (float) iter);
        T_CHECK(ggml_backend_graph_compute(cpu, gf));
        float v[N];
        ggml_backend_tensor_get(out, v, 0, sizeof(v));
        int bad = 0;
        for (int i = 0; i < N; i++) {
            float e = (float) iter + 0.001f * (float) i;
            bad += v[i] != e * e;
        }
        T_CHECK_MSG(bad == 0, "iteration %d: %d wrong values", iter, bad);
    }
    (void) n_intermediate;

    ggml_tallocr_free(talloc);
    ggml_gallocr_free(galloc);
    ggml_backend_buffer_free(ibuf);
    ggml_free(ictx);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

// a chain of ops that work in place: everything shares one range; the input placed by the caller
// in the same allocator is never overwritten
static void test_gallocr_inplace(void) {
    ggml_backend_t cpu = new_cpu();
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor * h = ggml_sqr(ctx, x);
    for (int i = 0; i < CHAIN; i++) {
        h = ggml_add(ctx, h, x);
        h = ggml_scale(ctx, h, 0.5f);
    }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, h);

    ggml_tallocr_t talloc = ggml_tallocr_new_from_backend(cpu, 64 * 1024);
    ggml_tallocr_alloc(talloc, x); // the caller's input, in the allocator's own buffer
    ggml_gallocr_t galloc = ggml_gallocr_new();
    size_t size = ggml_gallocr_alloc_graph(galloc, talloc, gf);
    size_t one = GGML_PAD(N * sizeof(float), 64);
    T_CHECK_MSG(size == 2 * one, "peak %zu, expected input + one range (%zu)", size, 2 * one);
    int shared = 0;
    for (int i = 1; i < gf->n_nodes; i++) {
        shared += gf->nodes[i]->data == gf->nodes[0]->data;
        T_CHECK(gf->nodes[i]->view_src == NULL); // in-place reuse does not turn nodes into views
    }
    T_CHECK(shared == gf->n_nodes - 1);
    T_CHECK(gf->nodes[0]->data != x->data);

    set_input(x, 1.0f);
    T_CHECK(ggml_backend_graph_compute(cpu, gf));
    float xv[N], hv[N];
    ggml_backend_tensor_get(x, xv, 0, sizeof(xv));
    ggml_backend_tensor_get(h, hv, 0, sizeof(hv));
    int bad = 0;
    for (int i = 0; i < N; i++) {
        float xi = 1.0f + 0.001f * (float) i;
        bad += xv[i] != xi;
        float e = xi * xi;
        for (int k = 0; k < CHAIN; k++) {
            e = (e + xi) * 0.5f;
        }
        bad += hv[i] != e;
    }
    T_CHECK_MSG(bad == 0, "%d wrong values", bad);

    ggml_gallocr_free(galloc);
    ggml_tallocr_free(talloc);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

// An op that can work in place is given a view p of an in-place result X (X works in place over
// m): p, X and m share one range. The op may take it over only when nothing else still reads
// it: neither X itself (a consumer still to run) nor another view of X. Checking only the owner
// m (no consumer left, one sharer: X) wrongly let the op overwrite X's values (a fault first seen
// in the recomputing backward graph of gradient checkpointing).
static void test_gallocr_inplace_through_inplace_result(void) {
    for (int mode = 0; mode < 2; mode++) {
        ggml_backend_t cpu = new_cpu();
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, N / 32);
        struct ggml_tensor * m = ggml_sqr(ctx, x);   // own range: x is the caller's
        struct ggml_tensor * X = ggml_sqrt(ctx, m);  // in place over m
        struct ggml_tensor * keep;                   // what still reads X's values after t
        struct ggml_tensor * p;
        if (mode == 0) {
            keep = ggml_reshape_2d(ctx, X, 32, N / 32); // a second view of X
            p    = ggml_reshape_2d(ctx, X, 32, N / 32);
        } else {
            keep = X; // X itself, consumed after t
            p    = ggml_view_2d(ctx, X, 32, N / 32, X->nb[1], 0);
        }
        struct ggml_tensor * t   = ggml_sqr(ctx, p); // may not work in place over p
        struct ggml_tensor * out = ggml_mul(ctx, keep, t);
        struct ggml_cgraph * gf  = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, out);
        T_CHECK(gf->nodes[gf->n_nodes - 1] == out); // keep is read after t has run

        ggml_tallocr_t talloc = ggml_tallocr_new_from_backend(cpu, 64 * 1024);
        ggml_tallocr_alloc(talloc, x);
        ggml_gallocr_t galloc = ggml_gallocr_new();
        T_CHECK(ggml_gallocr_alloc_graph(galloc, talloc, gf) > 0);
        T_CHECK(X->data == m->data);                                     // X did work in place
        T_CHECK_MSG(t->data != X->data, "mode %d: t overwrote X", mode); // t did not

        set_input(x, -1.0f);
        T_CHECK(ggml_backend_graph_compute(cpu, gf));
        float v[N];
        ggml_backend_tensor_get(out, v, 0, sizeof(v));
        int bad = 0;
        for (int i = 0; i < N; i++) {
            const float xi = -1.0f + 0.001f * (float) i;
            const float e  = sqrtf(xi * xi);
            bad += fabsf(v[i] - e * (e * e)) > 1e-5f * (1.0f + e * e * e);
        }
        T_CHECK_MSG(bad == 0, "mode %d: %d wrong values", mode, bad);

        ggml_gallocr_free(galloc);
        ggml_tallocr_free(talloc);
        ggml_free(ctx);
        ggml_backend_free(cpu);
    }
}

// A leaf without memory that is a node's source is an input the caller sets before the compute
// (like the seed gradient of a backward graph). It gets memory before any node, never memory a
// node computed earlier had (which would overwrite the value set), and keeps it for the whole
// pass (a node after its last reader does not get it either).
static void test_gallocr_input_leaf(void) {
    ggml_backend_t cpu = new_cpu();
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor * s = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N); // the input nobody placed
    struct ggml_tensor * h = x;
    for (int i = 0; i < CHAIN; i++) {
        h = ggml_dup(ctx, h); // each dies once the next one ran: its memory is free again
    }
    struct ggml_tensor * prod = ggml_mul(ctx, h, s);
    struct ggml_tensor * out  = ggml_dup(ctx, ggml_dup(ctx, prod));
    struct ggml_cgraph * gf   = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, out);

    ggml_tallocr_t talloc = ggml_tallocr_new_from_backend(cpu, 64 * 1024);
    ggml_tallocr_alloc(talloc, x);
    ggml_gallocr_t galloc = ggml_gallocr_new();
    T_CHECK(ggml_gallocr_alloc_graph(galloc, talloc, gf) > 0);
    T_CHECK(s->data != NULL);
    for (int i = 0; i < gf->n_nodes; i++) {
        T_CHECK_MSG(gf->nodes[i]->data != s->data, "node %d (%s) shares the input's memory", i, gf->nodes[i]->name);
    }

    for (int iter = 0; iter < 2; iter++) {
        set_input(x, 1.0f);
        float sv[N];
        for (int i = 0; i < N; i++) {
            sv[i] = 2.0f + (float) iter;
        }
        ggml_backend_tensor_set(s, sv, 0, sizeof(sv));
        T_CHECK(ggml_backend_graph_compute(cpu, gf));
        float v[N];
        ggml_backend_tensor_get(out, v, 0, sizeof(v));
        int bad = 0;
        for (int i = 0; i < N; i++) {
            bad += v[i] != (1.0f + 0.001f * (float) i) * sv[i];
        }
        T_CHECK_MSG(bad == 0, "iteration %d: %d wrong values", iter, bad);
    }

    ggml_gallocr_free(galloc);
    ggml_tallocr_free(talloc);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

// views, permutes, reshapes and a non-host buffer type
static void test_gallocr_views_test_backend(void) {
    ggml_backend_t test = testbackend_init(1);
    ggml_backend_t cpu  = new_cpu();
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 6);
    struct ggml_tensor * t  = ggml_transpose(ctx, ggml_sqr(ctx, a));
    struct ggml_tensor * c  = ggml_cont(ctx, t);
    struct ggml_tensor * r  = ggml_reshape_1d(ctx, c, 48);
    struct ggml_tensor * v  = ggml_view_1d(ctx, r, 24, 12 * sizeof(float));
    struct ggml_tensor * o  = ggml_add(ctx, v, v);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, o);

    ggml_tallocr_t talloc = ggml_tallocr_new_from_backend(test, 4096);
    ggml_tallocr_alloc(talloc, a);
    float av[48];
    for (int i = 0; i < 48; i++) {
        av[i] = (float) i - 20.0f;
    }
    ggml_backend_tensor_set(a, av, 0, sizeof(av));
    ggml_gallocr_t galloc = ggml_gallocr_new();
    T_CHECK(ggml_gallocr_alloc_graph(galloc, talloc, gf) > 0);
    T_CHECK(t->buffer == ggml_tallocr_get_buffer(talloc));
    T_CHECK(v->buffer == ggml_tallocr_get_buffer(talloc) && v->data == (char *) c->data + 12 * sizeof(float));
    T_CHECK(ggml_backend_graph_compute(test, gf));

    float ov[24];
    ggml_backend_tensor_get(o, ov, 0, sizeof(ov));
    int bad = 0;
    for (int k = 0; k < 24; k++) {
        int idx = 12 + k;           // index into c = transpose(sqr(a)), shape [6, 8]
        int i0 = idx % 6, i1 = idx / 6;
        float s = av[i0 * 8 + i1];
        bad += ov[k] != 2.0f * s * s;
    }
    T_CHECK_MSG(bad == 0, "%d wrong values", bad);

    ggml_gallocr_free(galloc);
    ggml_tallocr_free(talloc);
    ggml_free(ctx);
    ggml_backend_free(cpu);
    ggml_backend_free(test);
}

static void test_gallocr_out_of_space(void) {
    ggml_backend_t cpu = new_cpu();
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_cgraph * gf = build_dup_chain(ctx, x);
    ggml_tallocr_t talloc = ggml_tallocr_new_from_backend(cpu, N * sizeof(float) + 64);
    ggml_gallocr_t galloc = ggml_gallocr_new();

    bool old = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();
    size_t size = ggml_gallocr_alloc_graph(galloc, talloc, gf);
    T_CHECK(size == 0);
    T_CHECK(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "not enough space") != NULL);
    ggml_x_clear_error();
    // a tensor alloc that does not fit
    ggml_tallocr_reset(talloc);
    struct ggml_tensor * big = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2 * N);
    ggml_tallocr_alloc(talloc, big);
    T_CHECK(big->data == NULL && ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(old);

    ggml_gallocr_free(galloc);
    ggml_tallocr_free(talloc);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

static void test_allocr_legacy(void) {
    ggml_backend_t cpu = new_cpu();
    size_t size = 0;
    for (int pass = 0; pass < 2; pass++) {
        // as the examples do it: measure with one graph, allocate a fresh one of the same shape
        struct ggml_context * ctx = new_ctx();
        struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
        struct ggml_cgraph * gf = build_dup_chain(ctx, x);
        if (pass == 0) {
            ggml_allocr_t m = ggml_allocr_new_measure(64);
            T_CHECK(ggml_allocr_is_measure(m));
            ggml_allocr_alloc(m, x);
            size = ggml_allocr_alloc_graph(m, gf) + 64;
            T_CHECK(size > N * sizeof(float) && ggml_allocr_max_size(m) + 64 == size);
            ggml_allocr_free(m);
            ggml_free(ctx);
            continue;
        }
        void * mem = NULL;
        T_CHECK(posix_memalign(&mem, 64, size) == 0);
        ggml_allocr_t a = ggml_allocr_new(mem, size, 64);
        T_CHECK(!ggml_allocr_is_measure(a));
        T_CHECK(ggml_allocr_get_buffer(a) != NULL && ggml_backend_buffer_get_base(ggml_allocr_get_buffer(a)) == mem);
        // a parse sequence: every node in order, each followed by a barrier (the same order and
        // the same frees as without a sequence)
        int seq[128];
        int n = 0;
        for (int i = 0; i < gf->n_nodes; i++) {
            seq[n++] = i;
            seq[n++] = -1;
        }
        ggml_allocr_set_parse_seq(a, seq, n);
        ggml_allocr_alloc(a, x);
        set_input(x, 2.0f);
        T_CHECK(ggml_allocr_alloc_graph(a, gf) > 0);
        T_CHECK(ggml_backend_graph_compute(cpu, gf));
        float v[N];
        ggml_backend_tensor_get(gf->nodes[gf->n_nodes - 1], v, 0, sizeof(v));
        float e = 2.0f + 0.001f * 5;
        T_NEAR(v[5], e * e, 0);
        ggml_allocr_reset(a);
        ggml_allocr_free(a);
        free(mem);
        ggml_free(ctx);
    }

    ggml_allocr_t b = ggml_allocr_new_measure_from_backend(cpu);
    T_CHECK(b != NULL && ggml_allocr_is_measure(b));
    ggml_allocr_free(b);
    b = ggml_allocr_new_from_backend(cpu, 4096);
    T_CHECK(b != NULL && ggml_backend_buffer_get_size(ggml_allocr_get_buffer(b)) == 4096);
    ggml_allocr_free(b);
    ggml_backend_buffer_t buf = ggml_backend_alloc_buffer(cpu, 4096);
    b = ggml_allocr_new_from_buffer(buf);
    T_CHECK(ggml_allocr_get_buffer(b) == buf);
    ggml_allocr_free(b);
    ggml_backend_buffer_free(buf);
    ggml_backend_free(cpu);
}

int main(void) {
    T_RUN(test_gallocr_reuse);
    T_RUN(test_gallocr_inplace);
    T_RUN(test_gallocr_inplace_through_inplace_result);
    T_RUN(test_gallocr_input_leaf);
    T_RUN(test_gallocr_views_test_backend);
    T_RUN(test_gallocr_out_of_space);
    T_RUN(test_allocr_legacy);
    return T_SUMMARY();
}
