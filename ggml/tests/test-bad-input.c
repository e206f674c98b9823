// test-bad-input.c - the inventory of bad input the C API can receive, one table entry per
// class. Every probe of a class makes a call that must fail cleanly in recoverable mode: the
// call returns NULL / false / 0 (or does nothing), a message is recorded for the calling thread,
// and the process does not abort. After each class, two witness computations built before the
// first probe (one through a CPU backend and its buffer, one in a context arena with
// ggml_graph_compute_with_ctx) are run again and must give the same bytes as at the start, their
// inputs must be intact, and the context the probes used must still build and compute correctly.
//
// GGML_TEST_VERBOSE=1 prints every recorded message (the wording a caller sees).
//
// Tensor lifetime mistakes (a tensor of a freed context, a freed buffer or scheduler) cannot be
// detected by the C library; the Go package checks those (tests/badinput_test.go).

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"

#include "testing.h"
#include "testbackend.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static bool verbose;
static int  n_probes;

// a probe: `failed` must hold and the thread must have a message that contains `want`
#define PROBE(failed, want) probe_check((failed), #failed, (want), __FILE__, __LINE__)

static void probe_check(bool failed, const char * expr, const char * want, const char * file, int line) {
    const char * msg = ggml_x_last_error();
    n_probes++;
    t_checks_run++;
    if (!failed || msg == NULL || msg[0] == '\0' || (want != NULL && strstr(msg, want) == NULL)) {
        t_checks_failed++;
        fprintf(stderr, "%s:%d: probe failed: %s (message: %s; wanted \"%s\")\n", file, line, expr,
                msg != NULL ? msg : "(none)", want != NULL ? want : "");
    } else if (verbose) {
        printf("       %-60.60s -> %s\n", expr, msg);
    }
    ggml_x_clear_error();
}

// a probe of a call that has no result: only the message is checked
#define PROBE_MSG(stmt, want) \
    do { \
        ggml_x_clear_error(); \
        stmt; \
        probe_check(true, #stmt, (want), __FILE__, __LINE__); \
    } while (0)

static struct ggml_context * new_ctx(size_t mem, bool no_alloc) {
    struct ggml_init_params ip = { mem, NULL, no_alloc };
    return ggml_init(ip);
}

static void fill(struct ggml_tensor * t, float seed) {
    const int64_t n = ggml_nelements(t);
    float * v = malloc(sizeof(float) * (size_t) n);
    for (int64_t i = 0; i < n; i++) {
        v[i] = seed + 0.25f * (float) ((i * 7) % 13) - 1.5f;
    }
    if (t->buffer != NULL) {
        ggml_backend_tensor_set(t, v, 0, ggml_nbytes(t));
    } else {
        memcpy(t->data, v, ggml_nbytes(t));
    }
    free(v);
}

//
// witnesses: live objects that bad calls elsewhere must not disturb
//

struct witness {
    ggml_backend_t        backend;
    struct ggml_context * bctx; // no_alloc, every tensor in bbuf
    ggml_backend_buffer_t bbuf;
    struct ggml_cgraph  * bgraph;
    struct ggml_tensor  * bin[3];
    struct ggml_tensor  * bout;

    struct ggml_context * actx; // arena
    struct ggml_cgraph  * agraph;
    struct ggml_tensor  * ain[2];
    struct ggml_tensor  * aout;

    float bin_ref[3][128];
    float bout_ref[32];
    float ain_ref[2][64];
    float aout_ref[64];
};

static struct witness W;

static void witness_run(float * bout, float * aout) {
    T_CHECK(ggml_backend_graph_compute(W.backend, W.bgraph));
    ggml_backend_tensor_get(W.bout, bout, 0, ggml_nbytes(W.bout));
    ggml_graph_compute_with_ctx(W.actx, W.agraph, 2);
    memcpy(aout, W.aout->data, ggml_nbytes(W.aout));
}

static void witness_init(void) {
    W.backend = ggml_backend_cpu_init();
    ggml_backend_cpu_set_n_threads(W.backend, 2);

    W.bctx = new_ctx(32 * ggml_tensor_overhead() + ggml_graph_overhead(), true);
    W.bin[0] = ggml_new_tensor_2d(W.bctx, GGML_TYPE_F32, 16, 8); // weights
    W.bin[1] = ggml_new_tensor_2d(W.bctx, GGML_TYPE_F32, 16, 4); // activations
    W.bin[2] = ggml_new_tensor_1d(W.bctx, GGML_TYPE_F32, 8);     // bias
    W.bout = ggml_soft_max(W.bctx, ggml_add(W.bctx, ggml_mul_mat(W.bctx, W.bin[0], W.bin[1]), W.bin[2]));
    W.bgraph = ggml_new_graph(W.bctx);
    ggml_build_forward_expand(W.bgraph, W.bout);
    W.bbuf = ggml_backend_alloc_ctx_tensors(W.bctx, W.backend);
    for (int i = 0; i < 3; i++) {
        fill(W.bin[i], (float) i);
        ggml_backend_tensor_get(W.bin[i], W.bin_ref[i], 0, ggml_nbytes(W.bin[i]));
    }

    W.actx = new_ctx(1024 * 1024, false);
    W.ain[0] = ggml_new_tensor_2d(W.actx, GGML_TYPE_F32, 8, 8);
    W.ain[1] = ggml_new_tensor_2d(W.actx, GGML_TYPE_F32, 8, 8);
    W.aout = ggml_gelu(W.actx, ggml_mul(W.actx, ggml_rms_norm(W.actx, W.ain[0], 1e-6f), W.ain[1]));
    W.agraph = ggml_new_graph(W.actx);
    ggml_build_forward_expand(W.agraph, W.aout);
    for (int i = 0; i < 2; i++) {
        fill(W.ain[i], 0.5f + (float) i);
        memcpy(W.ain_ref[i], W.ain[i]->data, ggml_nbytes(W.ain[i]));
    }
    witness_run(W.bout_ref, W.aout_ref);
}

static void witness_check(const char * after) {
    float bout[32], aout[64], bin[128];
    witness_run(bout, aout);
    T_CHECK_MSG(memcmp(bout, W.bout_ref, sizeof(bout)) == 0, "backend witness changed after %s", after);
    T_CHECK_MSG(memcmp(aout, W.aout_ref, sizeof(aout)) == 0, "arena witness changed after %s", after);
    for (int i = 0; i < 3; i++) {
        ggml_backend_tensor_get(W.bin[i], bin, 0, ggml_nbytes(W.bin[i]));
        T_CHECK_MSG(memcmp(bin, W.bin_ref[i], ggml_nbytes(W.bin[i])) == 0, "backend witness input %d changed after %s", i, after);
    }
    for (int i = 0; i < 2; i++) {
        T_CHECK_MSG(memcmp(W.ain[i]->data, W.ain_ref[i], ggml_nbytes(W.ain[i])) == 0, "arena witness input %d changed after %s", i, after);
    }
    T_CHECK_MSG(ggml_x_last_error() == NULL, "witness run recorded an error after %s: %s", after, ggml_x_last_error());
}

static void witness_free(void) {
    ggml_backend_buffer_free(W.bbuf);
    ggml_free(W.bctx);
    ggml_free(W.actx);
    ggml_backend_free(W.backend);
}

// the context the probes used still works: a small add computes the right values
static void ctx_still_works(struct ggml_context * ctx) {
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    T_CHECK(a != NULL && b != NULL);
    if (a == NULL || b == NULL) {
        return;
    }
    struct ggml_tensor * c = ggml_add(ctx, a, b);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, c);
    for (int i = 0; i < 4; i++) {
        ((float *) a->data)[i] = (float) i;
        ((float *) b->data)[i] = 10.0f * (float) i;
    }
    ggml_graph_compute_with_ctx(ctx, g, 1);
    for (int i = 0; i < 4; i++) {
        T_NEAR(((float *) c->data)[i], 11.0f * (float) i, 0);
    }
}

//
// the classes
//

// operands whose shapes the op does not accept
static void bad_shapes(void) {
    struct ggml_context * ctx = new_ctx(1024 * 1024, false);
    const size_t used = ggml_used_mem(ctx);
    struct ggml_tensor * a43 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor * a53 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    struct ggml_tensor * a52 = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 2);
    struct ggml_tensor * a8  = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    const size_t used_before = ggml_used_mem(ctx);
    (void) used;

    PROBE(ggml_add(ctx, a43, a53) == NULL, "ggml_add");
    PROBE(ggml_mul(ctx, a43, a52) == NULL, "ggml_mul");
    PROBE(ggml_mul_mat(ctx, a43, a52) == NULL, "ggml_mul_mat");
    PROBE(ggml_cpy(ctx, a43, a53) == NULL, "ggml_cpy");
    PROBE(ggml_reshape_2d(ctx, a43, 5, 2) == NULL, "ggml_reshape");
    PROBE(ggml_reshape(ctx, a43, a53) == NULL, "ggml_reshape");
    PROBE(ggml_concat(ctx, a43, a52) == NULL, "ggml_concat");
    PROBE(ggml_soft_max_ext(ctx, a43, a8, 1.0f) == NULL, "ggml_soft_max");
    PROBE(ggml_repeat(ctx, a53, a43) == NULL, "ggml_repeat");
    PROBE(ggml_out_prod(ctx, a43, a52) == NULL, "ggml_out_prod");
    PROBE(ggml_set_1d(ctx, a8, a43, 0) == NULL, "ggml_set");
    // failed constructors take no memory from the context
    T_CHECK(ggml_used_mem(ctx) == used_before);
    ctx_still_works(ctx);
    ggml_free(ctx);
}

// operand types the op does not accept, and types that do not exist
static void bad_types(void) {
    struct ggml_context * ctx = new_ctx(1024 * 1024, false);
    struct ggml_tensor * x  = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 32, 4);
    struct ggml_tensor * fi = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    const size_t used_before = ggml_used_mem(ctx);

    PROBE(ggml_get_rows(ctx, x, fi) == NULL, "ggml_get_rows");
    PROBE(ggml_rope(ctx, ggml_reshape_3d(ctx, x, 8, 4, 4), fi, 8, 0, 0) == NULL, "ggml_rope");
    PROBE(ggml_new_tensor_1d(ctx, GGML_TYPE_COUNT, 4) == NULL, "type");
    PROBE(ggml_new_tensor_1d(ctx, (enum ggml_type) 4, 32) == NULL, "type"); // removed Q4_2
    PROBE(ggml_new_tensor_1d(ctx, (enum ggml_type) -1, 32) == NULL, "type");
    PROBE(ggml_unary(ctx, x, (enum ggml_unary_op) 1000) == NULL, "unary");
    T_CHECK(ggml_used_mem(ctx) > used_before); // the reshape view of the rope probe
    ctx_still_works(ctx);
    ggml_free(ctx);
}

// extents that are negative, too many dimensions, sizes that overflow, rows that do not fill
// whole quantization blocks
static void bad_dimensions(void) {
    struct ggml_context * ctx = new_ctx(1024 * 1024, false);
    const int64_t neg[2] = { 4, -3 };
    const int64_t huge[4] = { INT64_C(1) << 40, INT64_C(1) << 40, INT64_C(1) << 40, 1 };
    const int64_t five[5] = { 1, 1, 1, 1, 1 };
    PROBE(ggml_new_tensor(ctx, GGML_TYPE_F32, 2, neg) == NULL, "ggml_new_tensor");
    PROBE(ggml_new_tensor(ctx, GGML_TYPE_F32, 5, five) == NULL, "ggml_new_tensor");
    PROBE(ggml_new_tensor(ctx, GGML_TYPE_F32, 0, five) == NULL, "ggml_new_tensor");
    PROBE(ggml_new_tensor(ctx, GGML_TYPE_F32, 4, huge) == NULL, "ggml_new_tensor");
    PROBE(ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 33, 2) == NULL, "ggml_new_tensor");
    ctx_still_works(ctx);
    ggml_free(ctx);
}

// views, permutations and offsets outside their source
static void bad_views(void) {
    struct ggml_context * ctx = new_ctx(1024 * 1024, false);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 4); // 128 bytes
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * q = ggml_new_tensor_2d(ctx, GGML_TYPE_Q4_0, 64, 2);
    PROBE(ggml_view_1d(ctx, a, 8, 100) == NULL, "ggml_view");
    PROBE(ggml_view_1d(ctx, a, 33, 0) == NULL, "ggml_view");
    PROBE(ggml_view_1d(ctx, a, 4, SIZE_MAX - 8) == NULL, "ggml_view");
    PROBE(ggml_view_2d(ctx, a, 8, 4, 64, 0) == NULL, "ggml_view");
    PROBE(ggml_view_3d(ctx, a, 8, 2, 3, 32, 64, 0) == NULL, "ggml_view");
    PROBE(ggml_view_1d(ctx, a, -1, 0) == NULL, "ggml_view");
    PROBE(ggml_view_1d(ctx, q, 16, 0) == NULL, "ggml_view"); // not whole blocks
    PROBE(ggml_permute(ctx, a, 0, 0, 1, 2) == NULL, "ggml_permute");
    PROBE(ggml_permute(ctx, a, 0, 1, 2, 4) == NULL, "ggml_permute");
    PROBE(ggml_set_1d(ctx, a, b, 120) == NULL, "ggml_set");
    PROBE(ggml_set_2d(ctx, a, ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 8, 2), 32, 96) == NULL, "ggml_set");
    ctx_still_works(ctx);
    ggml_free(ctx);
}

// tensor get/set outside the tensor, on a tensor without memory, element accessors out of range
static void bad_tensor_access(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct ggml_context * ctx = new_ctx(8 * ggml_tensor_overhead(), true);
    struct ggml_tensor * t = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    struct ggml_tensor * u = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    struct ggml_tensor * none = NULL;
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    none = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4); // after the allocation: no memory
    fill(t, 1.0f);
    fill(u, 2.0f);
    float tv[16], uv[16], big[32] = { 0 }, back[16];
    ggml_backend_tensor_get(t, tv, 0, sizeof(tv));
    ggml_backend_tensor_get(u, uv, 0, sizeof(uv));

    PROBE_MSG(ggml_backend_tensor_set(t, big, 0, sizeof(big)), "out of bounds");
    PROBE_MSG(ggml_backend_tensor_set(t, big, 60, 8), "out of bounds");
    PROBE_MSG(ggml_backend_tensor_set(t, big, SIZE_MAX - 2, 4), "out of bounds");
    PROBE_MSG(ggml_backend_tensor_get(t, big, 4, 64), "out of bounds");
    PROBE_MSG(ggml_backend_tensor_get(t, big, SIZE_MAX, 1), "out of bounds");
    PROBE_MSG(ggml_backend_tensor_set(none, big, 0, 16), NULL);
    PROBE_MSG(ggml_backend_tensor_get(none, big, 0, 16), NULL);
    PROBE_MSG(ggml_backend_tensor_set(NULL, big, 0, 16), NULL);
    PROBE_MSG(ggml_backend_tensor_copy(t, none), NULL);
    // the neighbours and the tensor itself are unchanged
    ggml_backend_tensor_get(t, back, 0, sizeof(back));
    T_CHECK(memcmp(back, tv, sizeof(tv)) == 0);
    ggml_backend_tensor_get(u, back, 0, sizeof(back));
    T_CHECK(memcmp(back, uv, sizeof(uv)) == 0);
    ggml_backend_buffer_free(buf);
    ggml_free(ctx);

    // element accessors of an arena tensor
    struct ggml_context * actx = new_ctx(1024 * 1024, false);
    struct ggml_tensor * a = ggml_new_tensor_1d(actx, GGML_TYPE_F32, 4);
    struct ggml_tensor * guard = ggml_new_tensor_1d(actx, GGML_TYPE_F32, 4);
    fill(guard, 3.0f);
    float gv[4];
    memcpy(gv, guard->data, sizeof(gv));
    PROBE_MSG(ggml_set_f32_1d(a, 4, 1.0f), NULL);
    PROBE_MSG(ggml_set_i32_1d(a, -1, 1), NULL);
    PROBE_MSG((void) ggml_get_f32_1d(a, 100), NULL);
    PROBE_MSG(ggml_set_f32_nd(a, 0, 1, 0, 0, 1.0f), NULL);
    T_CHECK(memcmp(gv, guard->data, sizeof(gv)) == 0);
    ctx_still_works(actx);
    ggml_free(actx);
    ggml_backend_free(cpu);
}

// a context whose arena (or object space) is full
static void context_full(void) {
    struct ggml_context * ctx = new_ctx(ggml_tensor_overhead() * 3 + 256, false);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    T_CHECK(a != NULL);
    PROBE(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1 << 20) == NULL, "");
    PROBE(ggml_new_graph(ctx) == NULL, "");
    PROBE(ggml_dup_tensor(ctx, ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1 << 20)) == NULL, "");
    // the tensor made before is intact and usable
    a->name[0] = 0;
    ggml_set_f32(a, 2.0f);
    T_CHECK(ggml_get_f32_1d(a, 7) == 2.0f);
    ggml_free(ctx);

    struct ggml_init_params ip = { (size_t) 1 << 50, NULL, false }; // 1 PiB (valgrind flags sizes >= 2^63)
    PROBE(ggml_init(ip) == NULL, "");
}

// graphs asked to hold more nodes than their size, views and copies out of range
static void graph_too_small(void) {
    struct ggml_context * ctx = new_ctx(1024 * 1024, false);
    struct ggml_tensor * x = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * y = x;
    for (int i = 0; i < 12; i++) {
        y = ggml_add(ctx, y, x);
    }
    struct ggml_cgraph * small = ggml_new_graph_custom(ctx, 4, false);
    PROBE_MSG(ggml_build_forward_expand(small, y), "");
    T_CHECK(small->n_nodes <= small->size && small->n_leafs <= small->size);
    struct ggml_cgraph * big = ggml_new_graph_custom(ctx, 64, false);
    ggml_build_forward_expand(big, y);
    T_CHECK(big->n_nodes == 12);
    struct ggml_cgraph * dst = ggml_new_graph_custom(ctx, 4, false);
    PROBE_MSG(ggml_graph_cpy(big, dst), "");
    T_CHECK(dst->n_nodes <= dst->size);
    struct ggml_cgraph v = ggml_graph_view(big, 5, 40);
    T_CHECK(v.n_nodes <= big->n_nodes);
    ggml_x_clear_error();
    PROBE(ggml_new_graph_custom(ctx, 0, false) == NULL || ggml_x_last_error() != NULL, "");
    // the big graph computes correctly
    for (int i = 0; i < 4; i++) {
        ((float *) x->data)[i] = (float) i;
    }
    ggml_graph_compute_with_ctx(ctx, big, 2);
    for (int i = 0; i < 4; i++) {
        T_NEAR(((float *) y->data)[i], 13.0f * (float) i, 0);
    }
    ggml_free(ctx);
}

//
// buffer types whose allocations fail: "Failing" always, "Small" above 64 bytes (enough for the
// 1-byte buffers of measure allocators, not for real ones); the small ones are CPU buffers
//

static const char * GGML_CALL failing_name(ggml_backend_buffer_type_t buft) {
    return buft->context != NULL ? "Small" : "Failing";
}
static ggml_backend_buffer_t GGML_CALL failing_alloc(ggml_backend_buffer_type_t buft, size_t size) {
    if (buft->context == NULL || size > 64) {
        return NULL;
    }
    ggml_backend_buffer_t b = ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), size);
    if (b != NULL) {
        b->buft = buft;
    }
    return b;
}
static size_t GGML_CALL failing_align(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return 32;
}
static bool GGML_CALL failing_supports(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    (void) buft;
    return ggml_backend_is_cpu(backend);
}
static bool GGML_CALL failing_is_host(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return true;
}
static struct ggml_backend_buffer_type failing_buft = {
    /* .iface = */ {
        /* .get_name         = */ failing_name,
        /* .alloc_buffer     = */ failing_alloc,
        /* .get_alignment    = */ failing_align,
        /* .get_alloc_size   = */ NULL,
        /* .supports_backend = */ failing_supports,
        /* .is_host          = */ failing_is_host,
    },
    /* .context = */ NULL,
};
static struct ggml_backend_buffer_type small_buft = {
    /* .iface = */ {
        /* .get_name         = */ failing_name,
        /* .alloc_buffer     = */ failing_alloc,
        /* .get_alignment    = */ failing_align,
        /* .get_alloc_size   = */ NULL,
        /* .supports_backend = */ failing_supports,
        /* .is_host          = */ failing_is_host,
    },
    /* .context = */ &small_buft,
};

// allocations that fail: a buffer type whose alloc returns NULL, sizes no allocator can give,
// a tensor allocator that runs out of space
static void allocation_failures(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct ggml_context * ctx = new_ctx(16 * ggml_tensor_overhead() + ggml_graph_overhead(), true);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 64);
    struct ggml_tensor * c = ggml_add(ctx, a, b);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, c);

    PROBE(ggml_backend_buft_alloc_buffer(&failing_buft, 1024) == NULL, "Failing");
    PROBE(ggml_backend_alloc_ctx_tensors_from_buft(ctx, &failing_buft) == NULL, "");
    T_CHECK(a->data == NULL && a->buffer == NULL && c->data == NULL);
    PROBE(ggml_tallocr_new_from_buft(&failing_buft, 1024) == NULL, "Failing");
    PROBE(ggml_tallocr_new_measure_from_buft(&failing_buft) == NULL, "Failing");
    PROBE(ggml_backend_sched_new(&cpu, (ggml_backend_buffer_type_t[]) { &failing_buft }, 1, 64) == NULL, "ggml_backend_sched_new");
    PROBE(ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), (size_t) 1 << 50) == NULL, "");
    PROBE(ggml_backend_alloc_buffer(cpu, SIZE_MAX - 8) == NULL, "too large"); // size + alignment overflows

    // a scheduler whose buffers cannot be allocated: the compute fails, nothing is computed
    ggml_backend_buffer_type_t bufts[1] = { &small_buft };
    ggml_backend_t backends[1] = { cpu };
    ggml_backend_sched_t sched = ggml_backend_sched_new(backends, bufts, 1, 64);
    T_CHECK(sched != NULL);
    ggml_backend_buffer_t wbuf = NULL;
    if (sched != NULL) {
        // inputs live in a CPU buffer; the intermediate c needs the scheduler's memory
        struct ggml_context * ictx = new_ctx(4 * ggml_tensor_overhead(), true);
        struct ggml_tensor * ia = ggml_new_tensor_1d(ictx, GGML_TYPE_F32, 64);
        wbuf = ggml_backend_alloc_ctx_tensors(ictx, cpu);
        struct ggml_context * gctx = new_ctx(8 * ggml_tensor_overhead() + ggml_graph_overhead(), true);
        struct ggml_tensor * r = ggml_scale(gctx, ggml_add(gctx, ia, ia), 2.0f);
        struct ggml_cgraph * sg = ggml_new_graph(gctx);
        ggml_build_forward_expand(sg, r);
        PROBE(!ggml_x_backend_sched_graph_compute(sched, sg), "Small");
        PROBE(!ggml_x_backend_sched_graph_compute(sched, sg), "Small"); // and again: still consistent
        ggml_backend_sched_free(sched);
        ggml_free(gctx);
        ggml_backend_buffer_free(wbuf);
        ggml_free(ictx);
    }

    // a tensor allocator over a buffer that is too small
    ggml_backend_buffer_t small = ggml_backend_alloc_buffer(cpu, 300);
    ggml_tallocr_t talloc = ggml_tallocr_new_from_buffer(small);
    ggml_tallocr_alloc(talloc, a);
    T_CHECK(a->data != NULL);
    PROBE_MSG(ggml_tallocr_alloc(talloc, b), "");
    T_CHECK(b->data == NULL);
    // a graph allocator over the same allocator
    ggml_gallocr_t galloc = ggml_gallocr_new();
    PROBE(ggml_gallocr_alloc_graph(galloc, talloc, g) == 0 || c->data == NULL || ggml_x_last_error() != NULL, "");
    ggml_gallocr_free(galloc);
    ggml_tallocr_free(talloc);
    ggml_backend_buffer_free(small);
    // ggml_backend_tensor_alloc at an address outside the buffer
    ggml_backend_buffer_t buf2 = ggml_backend_alloc_buffer(cpu, 256);
    struct ggml_context * c2 = new_ctx(4 * ggml_tensor_overhead(), true);
    struct ggml_tensor * t2 = ggml_new_tensor_1d(c2, GGML_TYPE_F32, 64);
    PROBE_MSG(ggml_backend_tensor_alloc(buf2, t2, (char *) ggml_backend_buffer_get_base(buf2) + 128), "");
    T_CHECK(t2->data == NULL);
    ggml_free(c2);
    ggml_backend_buffer_free(buf2);

    ggml_free(ctx);
    ggml_backend_free(cpu);
}

// the scheduler's limits: backend count, graph size, splits
static void scheduler_limits(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    ggml_backend_t many[17];
    for (int i = 0; i < 17; i++) {
        many[i] = cpu;
    }
    PROBE(ggml_backend_sched_new(many, NULL, 17, 64) == NULL, "");
    PROBE(ggml_backend_sched_new(many, NULL, 0, 64) == NULL, "");
    PROBE(ggml_backend_sched_new(NULL, NULL, 1, 64) == NULL, "");

    // a graph larger than the scheduler's graph_size
    ggml_backend_sched_t sched = ggml_backend_sched_new(many, NULL, 1, 4);
    struct ggml_context * ctx = new_ctx(64 * ggml_tensor_overhead() + ggml_graph_overhead(), true);
    struct ggml_context * ictx = new_ctx(4 * ggml_tensor_overhead(), true);
    struct ggml_tensor * x = ggml_new_tensor_1d(ictx, GGML_TYPE_F32, 4);
    ggml_backend_buffer_t xbuf = ggml_backend_alloc_ctx_tensors(ictx, cpu);
    float xv[4] = { 1, 2, 3, 4 };
    ggml_backend_tensor_set(x, xv, 0, sizeof(xv));
    struct ggml_tensor * y = x;
    for (int i = 0; i < 40; i++) {
        y = ggml_add(ctx, y, x);
    }
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, y);
    PROBE(!ggml_x_backend_sched_graph_compute(sched, g), "graph");
    ggml_backend_sched_free(sched);

    // more splits than the scheduler can make: nodes alternate between two backends
    ggml_backend_t test = testbackend_init(1);
    ggml_backend_t two[2] = { test, cpu };
    sched = ggml_backend_sched_new(two, NULL, 2, 1024);
    struct ggml_context * sctx = new_ctx(700 * ggml_tensor_overhead() + ggml_graph_overhead_custom(1024, false), true);
    y = x;
    for (int i = 0; i < 600; i++) {
        y = ggml_scale(sctx, y, 1.0f);
    }
    struct ggml_cgraph * sg = ggml_new_graph_custom(sctx, 1024, false);
    ggml_build_forward_expand(sg, y);
    for (int i = 0; i < sg->n_nodes; i++) {
        ggml_backend_sched_set_node_backend(sched, sg->nodes[i], two[i % 2]);
    }
    PROBE(!ggml_x_backend_sched_graph_compute(sched, sg), "splits");
    // the same scheduler computes a valid graph afterwards
    ggml_backend_sched_reset(sched);
    struct ggml_context * okctx = new_ctx(8 * ggml_tensor_overhead() + ggml_graph_overhead(), true);
    struct ggml_tensor * z = ggml_scale(okctx, ggml_add(okctx, x, x), 0.5f);
    struct ggml_cgraph * okg = ggml_new_graph(okctx);
    ggml_build_forward_expand(okg, z);
    T_CHECK(ggml_x_backend_sched_graph_compute(sched, okg));
    float zv[4];
    ggml_backend_tensor_get(z, zv, 0, sizeof(zv));
    T_CHECK(memcmp(zv, xv, sizeof(xv)) == 0);
    ggml_backend_sched_free(sched);
    ggml_free(okctx);
    ggml_free(sctx);
    ggml_backend_free(test);

    ggml_free(ctx);
    ggml_backend_buffer_free(xbuf);
    ggml_free(ictx);
    ggml_backend_free(cpu);
}

// backend names and parameters the registry does not know
static void unknown_backends(void) {
    T_CHECK(ggml_backend_reg_find_by_name("NoSuchBackend") == SIZE_MAX);
    PROBE(ggml_backend_reg_init_backend_from_str("NoSuchBackend") == NULL, "NoSuchBackend");
    PROBE(ggml_backend_reg_init_backend_from_str("NoSuchBackend:threads=2") == NULL, "NoSuchBackend");
    PROBE(ggml_backend_reg_init_backend_from_str("CPU:colour=blue") == NULL, "colour");
    PROBE(ggml_backend_reg_init_backend_from_str("CPU:threads=0") == NULL, "thread");
    PROBE(ggml_backend_reg_init_backend_from_str("CPU:threads=x") == NULL, "thread");
    PROBE(ggml_backend_reg_init_backend_from_str("") == NULL, "");
    PROBE(ggml_backend_reg_init_backend(ggml_backend_reg_get_count() + 3, NULL) == NULL, "");
    PROBE(ggml_backend_reg_get_name(ggml_backend_reg_get_count()) == NULL, "");
    PROBE(ggml_backend_reg_alloc_buffer(ggml_backend_reg_get_count(), 64) == NULL, "");
    // a good name still works
    ggml_backend_t b = ggml_backend_reg_init_backend_from_str("CPU:threads=1");
    T_CHECK(b != NULL && ggml_backend_is_cpu(b));
    ggml_backend_free(b);
}

// NULL where an object is required
static void null_arguments(void) {
    struct ggml_context * ctx = new_ctx(1024 * 1024, false);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    PROBE(ggml_add(ctx, NULL, a) == NULL, "");
    PROBE(ggml_mul_mat(ctx, a, NULL) == NULL, "");
    PROBE(ggml_new_tensor_1d(NULL, GGML_TYPE_F32, 4) == NULL, "");
    PROBE(ggml_view_1d(ctx, NULL, 1, 0) == NULL, "");
    PROBE_MSG(ggml_build_forward_expand(NULL, a), "");
    PROBE(!ggml_backend_graph_compute(W.backend, NULL), "");
    PROBE(ggml_backend_alloc_ctx_tensors(NULL, W.backend) == NULL, "");
    PROBE(ggml_backend_sched_new(NULL, NULL, 0, 0) == NULL, "");
    ctx_still_works(ctx);
    ggml_free(ctx);
}

// op parameters out of their range
static void bad_op_params(void) {
    struct ggml_context * ctx = new_ctx(1024 * 1024, false);
    struct ggml_tensor * img = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 8, 8, 2, 1);
    struct ggml_tensor * ker = ggml_new_tensor_4d(ctx, GGML_TYPE_F16, 3, 3, 2, 4);
    struct ggml_tensor * x = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, 8, 2, 5);
    struct ggml_tensor * pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 5);
    struct ggml_tensor * pos4 = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4);
    PROBE(ggml_pool_2d(ctx, img, GGML_OP_POOL_MAX, 0, 2, 1, 1, 0, 0) == NULL, "ggml_pool");
    PROBE(ggml_pool_2d(ctx, img, GGML_OP_POOL_MAX, 2, 2, 0, 1, 0, 0) == NULL, "ggml_pool");
    PROBE(ggml_pool_2d(ctx, img, GGML_OP_POOL_MAX, 20, 2, 1, 1, 0, 0) == NULL, "ggml_pool");
    PROBE(ggml_im2col(ctx, ker, img, 0, 1, 0, 0, 1, 1, true) == NULL, "ggml_im2col");
    PROBE(ggml_im2col(ctx, ker, img, 1, 1, 0, 0, 0, 1, true) == NULL, "ggml_im2col");
    PROBE(ggml_top_k(ctx, x, 9) == NULL, "ggml_top_k");
    PROBE(ggml_top_k(ctx, x, 0) == NULL || ggml_x_last_error() != NULL, "ggml_top_k");
    PROBE(ggml_upscale(ctx, img, 0) == NULL, "ggml_upscale");
    PROBE(ggml_pad(ctx, img, -1, 0, 0, 0) == NULL, "ggml_pad");
    PROBE(ggml_rope(ctx, x, pos4, 8, 0, 0) == NULL, "ggml_rope");
    PROBE(ggml_rope(ctx, x, pos, 9, 0, 0) == NULL, "ggml_rope");
    PROBE(ggml_rope(ctx, x, pos, 8, 4, 0) == NULL, "ggml_rope"); // glm: x[i0 + 3 * 4] is past the row
    ctx_still_works(ctx);
    ggml_free(ctx);
}

// compute requests that cannot be carried out: tensors without memory, threads < 1,
// ops the backend does not support
static void bad_compute(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    PROBE_MSG(ggml_backend_cpu_set_n_threads(cpu, 0), "");
    PROBE_MSG(ggml_backend_cpu_set_n_threads(cpu, -3), "");
    struct ggml_context * ctx = new_ctx(8 * ggml_tensor_overhead() + ggml_graph_overhead(), true);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * c = ggml_add(ctx, a, a);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, c);
    PROBE(!ggml_backend_graph_compute(cpu, g), ""); // nothing allocated
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    float v[4] = { 1, 2, 3, 4 }, r[4];
    ggml_backend_tensor_set(a, v, 0, sizeof(v));
    T_CHECK(ggml_backend_graph_compute(cpu, g)); // the backend still works (threads unchanged)
    ggml_backend_tensor_get(c, r, 0, sizeof(r));
    T_NEAR(r[3], 8.0f, 0);

    // a backend that rejects the op: compute refuses the graph
    ggml_backend_t test = testbackend_init(1);
    testbackend_reject_op(test, GGML_OP_ADD, true);
    struct ggml_context * tctx = new_ctx(8 * ggml_tensor_overhead() + ggml_graph_overhead(), true);
    struct ggml_tensor * ta = ggml_new_tensor_1d(tctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * tc = ggml_add(tctx, ta, ta);
    struct ggml_cgraph * tg = ggml_new_graph(tctx);
    ggml_build_forward_expand(tg, tc);
    ggml_backend_buffer_t tbuf = ggml_backend_alloc_ctx_tensors(tctx, test);
    T_CHECK(!ggml_backend_supports_op(test, tc));
    PROBE(!ggml_backend_graph_compute(test, tg), "Test");
    // a graph whose memory is in another backend's buffer
    PROBE(!ggml_backend_graph_compute(test, g), "Test");

    // a node whose types no CPU kernel handles (mul_mat with a quantized src1)
    struct ggml_context * qctx = new_ctx(8 * ggml_tensor_overhead() + ggml_graph_overhead(), true);
    struct ggml_tensor * qa = ggml_new_tensor_2d(qctx, GGML_TYPE_F32, 32, 4);
    struct ggml_tensor * qb = ggml_new_tensor_2d(qctx, GGML_TYPE_Q4_0, 32, 4);
    struct ggml_tensor * qm = ggml_mul_mat(qctx, qa, qb);
    if (qm != NULL) {
        struct ggml_cgraph * qg = ggml_new_graph(qctx);
        ggml_build_forward_expand(qg, qm);
        ggml_backend_buffer_t qbuf = ggml_backend_alloc_ctx_tensors(qctx, cpu);
        ggml_backend_buffer_clear(qbuf, 0);
        T_CHECK(!ggml_backend_supports_op(cpu, qm));
        PROBE(!ggml_backend_graph_compute(cpu, qg), "");
        ggml_backend_buffer_free(qbuf);
    } else {
        PROBE(true, "ggml_mul_mat");
    }
    ggml_free(qctx);
    ggml_backend_buffer_free(tbuf);
    ggml_free(tctx);
    ggml_backend_free(test);

    // arena compute with a bad thread count runs with one thread
    struct ggml_context * actx = new_ctx(1024 * 1024, false);
    struct ggml_tensor * x = ggml_new_tensor_1d(actx, GGML_TYPE_F32, 4);
    struct ggml_tensor * y = ggml_scale(actx, x, 3.0f);
    struct ggml_cgraph * ag = ggml_new_graph(actx);
    ggml_build_forward_expand(ag, y);
    memcpy(x->data, v, sizeof(v));
    ggml_x_clear_error();
    ggml_graph_compute_with_ctx(actx, ag, 0);
    T_NEAR(((float *) y->data)[3], 12.0f, 0);
    ggml_x_clear_error();
    ggml_free(actx);

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

// index data out of range at compute time: GET_ROWS and MUL_MAT_ID write zero rows, never
// read or write outside their tensors
static void bad_index_data(void) {
    struct ggml_context * ctx = new_ctx(1024 * 1024, false);
    struct ggml_tensor * rows = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor * idx = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 4);
    struct ggml_tensor * got = ggml_get_rows(ctx, rows, idx);
    struct ggml_tensor * as[2] = { ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2), ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 2) };
    struct ggml_tensor * ids = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 1, 3);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3);
    struct ggml_tensor * mm = ggml_mul_mat_id(ctx, as, 2, ids, 0, b);
    T_CHECK(got != NULL && mm != NULL);
    struct ggml_cgraph * g = ggml_new_graph(ctx);
    ggml_build_forward_expand(g, got);
    ggml_build_forward_expand(g, mm);
    fill(rows, 1.0f);
    fill(as[0], 2.0f);
    fill(as[1], 3.0f);
    fill(b, 4.0f);
    const int32_t iv[4] = { 2, -1, 3, INT32_MAX };
    memcpy(idx->data, iv, sizeof(iv));
    const int32_t idv[3] = { 1, 7, -5 };
    memcpy(ids->data, idv, sizeof(idv));
    ggml_graph_compute_with_ctx(ctx, g, 2);
    const float * gv = (const float *) got->data;
    const float * rv = (const float *) rows->data;
    for (int i = 0; i < 4; i++) {
        T_CHECK(gv[i] == rv[8 + i]);
        T_CHECK(gv[4 + i] == 0.0f && gv[8 + i] == 0.0f && gv[12 + i] == 0.0f);
    }
    const float * mv = (const float *) mm->data;
    T_CHECK(mv[2] == 0.0f && mv[3] == 0.0f && mv[4] == 0.0f && mv[5] == 0.0f);
    T_CHECK(mv[0] != 0.0f || mv[1] != 0.0f);
    ggml_free(ctx);
}

// quantization requests that do not fit the type
static void bad_quantize(void) {
    float src[64] = { 0 };
    uint8_t dst[256];
    int64_t hist[16] = { 0 };
    ggml_x_clear_error();
    PROBE(ggml_quantize_chunk(GGML_TYPE_Q4_0, src, dst, 0, 1, 48, hist, NULL) == 0, "");   // row not whole blocks
    PROBE(ggml_quantize_chunk(GGML_TYPE_Q4_0, src, dst, 16, 1, 32, hist, NULL) == 0, "");  // start inside a row
    PROBE(ggml_quantize_chunk(GGML_TYPE_COUNT, src, dst, 0, 1, 32, hist, NULL) == 0, "");  // no such type
    PROBE(ggml_quantize_chunk(GGML_TYPE_Q4_0, src, dst, 0, -1, 32, hist, NULL) == 0, "");  // negative rows
}

struct bad_class {
    const char * name;
    const char * what;
    void (*run)(void);
};

static const struct bad_class k_classes[] = {
    { "shapes",          "operand shapes an op does not accept",                             bad_shapes },
    { "types",           "operand types an op does not accept, unknown types",               bad_types },
    { "dimensions",      "negative/overflowing extents, n_dims outside 1..4, partial blocks", bad_dimensions },
    { "views",           "views, permutations, set offsets outside their source",            bad_views },
    { "tensor-access",   "tensor get/set out of bounds or without memory, element accessors", bad_tensor_access },
    { "context-full",    "context arena exhausted, context larger than memory",              context_full },
    { "graph-size",      "graph holding more nodes than its size, copy into a smaller graph", graph_too_small },
    { "allocation",      "buffer types whose alloc fails, huge buffers, allocators out of space", allocation_failures },
    { "scheduler",       "scheduler backend count, graph_size and split limits",             scheduler_limits },
    { "backend-names",   "unknown backend names and parameters, registry indices",           unknown_backends },
    { "null",            "NULL where an object is required",                                 null_arguments },
    { "op-params",       "op parameters out of range (kernels, strides, k, pads, dims)",     bad_op_params },
    { "compute",         "compute without memory, thread counts < 1, unsupported ops",       bad_compute },
    { "index-data",      "row/expert indices out of range in tensor data at compute time",   bad_index_data },
    { "quantize",        "quantization chunks that do not fit the type's blocks",            bad_quantize },
};
#define N_CLASSES ((int) (sizeof(k_classes) / sizeof(k_classes[0])))

int main(void) {
    const char * v = getenv("GGML_TEST_VERBOSE");
    verbose = v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
    // what a binding does: no call ever aborts
    ggml_x_set_default_recoverable(true);
    ggml_x_clear_error();
    witness_init();
    for (int i = 0; i < N_CLASSES; i++) {
        const int before = t_checks_failed;
        const int probes_before = n_probes;
        t_tests_run++;
        ggml_x_clear_error();
        k_classes[i].run();
        ggml_x_clear_error();
        witness_check(k_classes[i].name);
        if (t_checks_failed != before) {
            t_tests_failed++;
            fprintf(stderr, "FAIL %s (%s)\n", k_classes[i].name, k_classes[i].what);
        } else {
            printf("ok   %-14s %2d probes  %s\n", k_classes[i].name, n_probes - probes_before, k_classes[i].what);
        }
    }
    witness_free();
    printf("bad-input classes: %d, probes: %d\n", N_CLASSES, n_probes);
    return T_SUMMARY();
}
