// test-backend-basic.c - the CPU buffer type, buffers, the CPU backend, the registry, tensor
// placement (alloc_ctx_tensors, tallocr) and error reporting of the backend layer.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"

#include "testing.h"

#include <stdint.h>
#include <string.h>

static struct ggml_context * new_ctx(bool no_alloc) {
    struct ggml_init_params params = {
        /* .mem_size   = */ 64 * ggml_tensor_overhead() + ggml_graph_overhead(),
        /* .mem_buffer = */ NULL,
        /* .no_alloc   = */ no_alloc,
    };
    return ggml_init(params);
}

static void test_cpu_buffer_type(void) {
    ggml_backend_buffer_type_t buft = ggml_backend_cpu_buffer_type();
    T_CHECK(buft != NULL);
    T_CHECK(strcmp(ggml_backend_buft_name(buft), "CPU") == 0);
    T_CHECK(ggml_backend_buft_get_alignment(buft) == 64);
    T_CHECK(ggml_backend_buft_is_host(buft));

    ggml_backend_t cpu = ggml_backend_cpu_init();
    T_CHECK(cpu != NULL);
    T_CHECK(ggml_backend_is_cpu(cpu));
    T_CHECK(!ggml_backend_is_cpu(NULL));
    T_CHECK(strcmp(ggml_backend_name(cpu), "CPU") == 0);
    T_CHECK(ggml_backend_get_default_buffer_type(cpu) == buft);
    T_CHECK(ggml_backend_get_alignment(cpu) == 64);
    T_CHECK(ggml_backend_buft_supports_backend(buft, cpu));
    ggml_backend_free(cpu);
}

static void test_buffer_basics(void) {
    ggml_backend_buffer_type_t buft = ggml_backend_cpu_buffer_type();
    ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(buft, 1000);
    T_CHECK(buf != NULL);
    T_CHECK(strcmp(ggml_backend_buffer_name(buf), "CPU") == 0);
    T_CHECK(ggml_backend_buffer_get_size(buf) == 1000);
    T_CHECK(ggml_backend_buffer_get_type(buf) == buft);
    T_CHECK(ggml_backend_buffer_is_host(buf));
    T_CHECK(ggml_backend_buffer_get_alignment(buf) == 64);
    uint8_t * base = ggml_backend_buffer_get_base(buf);
    T_CHECK(base != NULL);
    T_CHECK(((uintptr_t) base) % 64 == 0);

    // clear writes every byte
    ggml_backend_buffer_clear(buf, 0xAB);
    int bad = 0;
    for (int i = 0; i < 1000; i++) {
        bad += base[i] != 0xAB;
    }
    T_CHECK(bad == 0);

    // usage defaults to ANY and can be set
    T_CHECK(buf->usage == GGML_BACKEND_BUFFER_USAGE_ANY);
    ggml_backend_buffer_set_usage(buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    T_CHECK(buf->usage == GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    ggml_backend_buffer_reset(buf); // CPU buffers have no per-tensor state: a no-op
    ggml_backend_buffer_free(buf);
    ggml_backend_buffer_free(NULL);

    // zero-size buffers are valid
    ggml_backend_buffer_t empty = ggml_backend_buft_alloc_buffer(buft, 0);
    T_CHECK(empty != NULL);
    T_CHECK(ggml_backend_buffer_get_size(empty) == 0);
    ggml_backend_buffer_clear(empty, 0);
    ggml_backend_buffer_free(empty);

    // a buffer around caller memory does not free it
    static _Alignas(64) uint8_t mem[256];
    ggml_backend_buffer_t wrapped = ggml_backend_cpu_buffer_from_ptr(mem, sizeof(mem));
    T_CHECK(wrapped != NULL);
    T_CHECK(ggml_backend_buffer_get_base(wrapped) == mem);
    ggml_backend_buffer_clear(wrapped, 7);
    T_CHECK(mem[0] == 7 && mem[255] == 7);
    ggml_backend_buffer_free(wrapped);
    T_CHECK(mem[0] == 7);
}

static void test_set_get_round_trip(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct ggml_context * ctx = new_ctx(true);
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 5, 3);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, 7);
    struct ggml_tensor * v = ggml_view_1d(ctx, a, 5, 5 * sizeof(float)); // row 1 of a
    T_CHECK(a->data == NULL && b->data == NULL);

    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    T_CHECK(buf != NULL);
    T_CHECK(a->buffer == buf && b->buffer == buf && v->buffer == buf);
    T_CHECK(a->data != NULL && b->data != NULL);
    T_CHECK(((uintptr_t) a->data) % 64 == 0 && ((uintptr_t) b->data) % 64 == 0);
    T_CHECK(v->data == (char *) a->data + 5 * sizeof(float));
    T_CHECK(ggml_backend_buffer_get_size(buf) >= 128);

    float in[15], out[15];
    for (int i = 0; i < 15; i++) {
        in[i] = (float) i * 0.25f - 1.0f;
    }
    ggml_backend_tensor_set(a, in, 0, sizeof(in));
    memset(out, 0, sizeof(out));
    ggml_backend_tensor_get(a, out, 0, sizeof(out));
    T_CHECK(memcmp(in, out, sizeof(in)) == 0);

    // partial access with an offset
    float two[2];
    ggml_backend_tensor_get(a, two, 4 * sizeof(float), sizeof(two));
    T_CHECK(two[0] == in[4] && two[1] == in[5]);

    // through the view
    float row[5];
    ggml_backend_tensor_get(v, row, 0, sizeof(row));
    T_CHECK(memcmp(row, in + 5, sizeof(row)) == 0);
    float fives[5] = { 5, 5, 5, 5, 5 };
    ggml_backend_tensor_set(v, fives, 0, sizeof(fives));
    ggml_backend_tensor_get(a, out, 0, sizeof(out));
    T_CHECK(out[4] == in[4] && out[5] == 5 && out[9] == 5 && out[10] == in[10]);

    // async falls back to the synchronous path on the CPU backend
    int32_t iv[7] = { 1, -2, 3, -4, 5, -6, 7 }, ov[7] = { 0 };
    ggml_backend_tensor_set_async(cpu, b, iv, 0, sizeof(iv));
    ggml_backend_synchronize(cpu);
    ggml_backend_tensor_get_async(cpu, b, ov, 0, sizeof(ov));
    ggml_backend_synchronize(cpu);
    T_CHECK(memcmp(iv, ov, sizeof(iv)) == 0);

    // nothing left to allocate
    T_CHECK(ggml_backend_alloc_ctx_tensors(ctx, cpu) == NULL);

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

static void test_tensor_copy(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct ggml_context * ctx = new_ctx(true);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 16);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    T_CHECK(buf != NULL);

    float in[16], out[16];
    for (int i = 0; i < 16; i++) {
        in[i] = (float) (i * i);
    }
    ggml_backend_tensor_set(a, in, 0, sizeof(in));
    ggml_backend_tensor_copy(a, b);
    ggml_backend_tensor_get(b, out, 0, sizeof(out));
    T_CHECK(memcmp(in, out, sizeof(in)) == 0);

    ggml_backend_buffer_clear(buf, 0);
    ggml_backend_tensor_set(a, in, 0, sizeof(in));
    ggml_backend_tensor_copy_async(cpu, a, b);
    ggml_backend_synchronize(cpu);
    ggml_backend_tensor_get(b, out, 0, sizeof(out));
    T_CHECK(memcmp(in, out, sizeof(in)) == 0);

    ggml_backend_buffer_clear(buf, 0);
    ggml_backend_tensor_set(a, in, 0, sizeof(in));
    T_CHECK(ggml_backend_buffer_copy_tensor(a, b));
    ggml_backend_tensor_get(b, out, 0, sizeof(out));
    T_CHECK(memcmp(in, out, sizeof(in)) == 0);

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

static void test_tensor_alloc_and_tallocr(void) {
    ggml_backend_buffer_type_t buft = ggml_backend_cpu_buffer_type();
    struct ggml_context * ctx = new_ctx(true);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 10); // 40 bytes -> 64
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 20); // 80 bytes -> 128
    struct ggml_tensor * c = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);

    // measure: how much would a and b need?
    ggml_tallocr_t meas = ggml_tallocr_new_measure_from_buft(buft);
    T_CHECK(meas != NULL);
    T_CHECK(ggml_tallocr_is_measure(meas));
    ggml_tallocr_alloc(meas, a);
    ggml_tallocr_alloc(meas, b);
    T_CHECK(ggml_tallocr_max_size(meas) == 64 + 128);
    ggml_tallocr_free(meas);
    a->data = NULL; a->buffer = NULL;
    b->data = NULL; b->buffer = NULL;

    // real allocation in a buffer of exactly that size
    ggml_tallocr_t talloc = ggml_tallocr_new_from_buft(buft, 64 + 128);
    T_CHECK(talloc != NULL);
    T_CHECK(!ggml_tallocr_is_measure(talloc));
    ggml_backend_buffer_t buf = ggml_tallocr_get_buffer(talloc);
    T_CHECK(buf != NULL);
    ggml_tallocr_alloc(talloc, a);
    ggml_tallocr_alloc(talloc, b);
    T_CHECK(a->buffer == buf && b->buffer == buf);
    T_CHECK((char *) a->data == (char *) ggml_backend_buffer_get_base(buf));
    T_CHECK((char *) b->data == (char *) a->data + 64);
    T_CHECK(ggml_tallocr_max_size(talloc) == 192);

    // the buffer is full now: c does not fit (recoverable mode records the error)
    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();
    ggml_tallocr_alloc(talloc, c);
    T_CHECK(ggml_x_last_error() != NULL);
    T_CHECK(c->data == NULL);
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(false);

    // after a reset the memory is handed out again from the start
    ggml_tallocr_reset(talloc);
    ggml_tallocr_alloc(talloc, c);
    T_CHECK(c->data == a->data);
    ggml_tallocr_free(talloc); // owns its buffer

    // ggml_backend_tensor_alloc places a tensor at an explicit address
    struct ggml_tensor * d = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    ggml_backend_buffer_t buf2 = ggml_backend_buft_alloc_buffer(buft, 256);
    char * base = ggml_backend_buffer_get_base(buf2);
    ggml_backend_tensor_alloc(buf2, d, base + 128);
    T_CHECK(d->data == base + 128 && d->buffer == buf2);
    struct ggml_tensor * dv = ggml_view_1d(ctx, d, 4, 4 * sizeof(float));
    dv->buffer = NULL; // views of allocated tensors get their buffer from view_init
    ggml_backend_view_init(buf2, dv);
    T_CHECK(dv->data == base + 128 + 16 && dv->buffer == buf2);
    ggml_backend_buffer_free(buf2);

    // a tallocr over caller memory
    static _Alignas(64) char mem[512];
    struct ggml_tensor * e = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3);
    ggml_tallocr_t tmem = ggml_tallocr_new(mem, sizeof(mem), 32);
    ggml_tallocr_alloc(tmem, e);
    T_CHECK(e->data == mem);
    T_CHECK(ggml_tallocr_max_size(tmem) == 32);
    ggml_tallocr_free(tmem);

    ggml_free(ctx);
}

static void test_errors_recoverable(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct ggml_context * ctx = new_ctx(true);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);
    struct ggml_tensor * unalloc = NULL;
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    T_CHECK(buf != NULL);
    unalloc = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4);

    float data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    float out[4] = { 0 };
    ggml_backend_tensor_set(a, data, 0, 4 * sizeof(float));

    ggml_x_set_thread_recoverable(true);

    // out-of-bounds write: rejected, memory untouched
    ggml_x_clear_error();
    ggml_backend_tensor_set(a, data + 4, 2 * sizeof(float), 4 * sizeof(float));
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_backend_tensor_get(a, out, 0, sizeof(out));
    T_CHECK(out[2] == 3 && out[3] == 4);

    // out-of-bounds read, offset overflow
    ggml_x_clear_error();
    ggml_backend_tensor_get(a, out, 1, sizeof(out));
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    ggml_backend_tensor_get(a, out, SIZE_MAX, 2);
    T_CHECK(ggml_x_last_error() != NULL);

    // tensor without memory or buffer
    ggml_x_clear_error();
    ggml_backend_tensor_set(unalloc, data, 0, sizeof(float));
    T_CHECK(ggml_x_last_error() != NULL);

    // NULL arguments
    ggml_x_clear_error();
    ggml_backend_tensor_set(NULL, data, 0, sizeof(float));
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    T_CHECK(!ggml_backend_graph_compute(NULL, NULL));
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    T_CHECK(!ggml_backend_supports_op(cpu, NULL));
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    ggml_backend_cpu_set_n_threads(NULL, 2);
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    ggml_backend_cpu_set_n_threads(cpu, 0);
    T_CHECK(ggml_x_last_error() != NULL);

    // a context that does not use no_alloc cannot be placed in a buffer
    struct ggml_context * ctx_data = new_ctx(false);
    ggml_new_tensor_1d(ctx_data, GGML_TYPE_F32, 4);
    ggml_x_clear_error();
    T_CHECK(ggml_backend_alloc_ctx_tensors(ctx_data, cpu) == NULL);
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_free(ctx_data);

    // registry lookups of unknown names
    ggml_x_clear_error();
    T_CHECK(ggml_backend_reg_init_backend_from_str("NoSuchBackend") == NULL);
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    T_CHECK(ggml_backend_reg_get_name(1000) == NULL);
    T_CHECK(ggml_x_last_error() != NULL);

    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(false);

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

static void test_registry(void) {
    T_CHECK(ggml_backend_reg_get_count() >= 1);
    size_t i = ggml_backend_reg_find_by_name("CPU");
    T_CHECK(i != SIZE_MAX);
    if (i == SIZE_MAX) {
        return;
    }
    T_CHECK(strcmp(ggml_backend_reg_get_name(i), "CPU") == 0);
    T_CHECK(ggml_backend_reg_get_default_buffer_type(i) == ggml_backend_cpu_buffer_type());
    T_CHECK(ggml_backend_reg_find_by_name("nope") == SIZE_MAX);

    ggml_backend_t b1 = ggml_backend_reg_init_backend(i, NULL);
    T_CHECK(ggml_backend_is_cpu(b1));
    ggml_backend_free(b1);

    ggml_backend_t b2 = ggml_backend_reg_init_backend_from_str("CPU:threads=3");
    T_CHECK(ggml_backend_is_cpu(b2));
    ggml_backend_free(b2);

    ggml_backend_t b3 = ggml_backend_reg_init_backend_from_str("CPU");
    T_CHECK(ggml_backend_is_cpu(b3));
    ggml_backend_free(b3);

    ggml_backend_buffer_t buf = ggml_backend_reg_alloc_buffer(i, 128);
    T_CHECK(buf != NULL && ggml_backend_buffer_get_size(buf) == 128);
    ggml_backend_buffer_free(buf);

    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();
    T_CHECK(ggml_backend_reg_init_backend_from_str("CPU:threads=zero") == NULL);
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(false);
}

// a + b, then (a + b) * b when MUL exists, on 1..3 threads, through compute and through a plan
static void test_graph_compute(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct ggml_context * ctx = new_ctx(true);
    const int n = 67;
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, 3);
    struct ggml_tensor * b = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n, 3);
    struct ggml_tensor * c = ggml_add(ctx, a, b);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, c);

    if (!ggml_backend_supports_op(cpu, c)) {
        printf("     (ADD not supported by the CPU backend yet: compute checks skipped)\n");
        ggml_free(ctx);
        ggml_backend_free(cpu);
        return;
    }

    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, cpu);
    T_CHECK(buf != NULL);

    float va[3 * 67], vb[3 * 67], vc[3 * 67];
    for (int i = 0; i < 3 * n; i++) {
        va[i] = (float) i * 0.5f;
        vb[i] = 1.0f - (float) i;
    }
    ggml_backend_tensor_set(a, va, 0, sizeof(va));
    ggml_backend_tensor_set(b, vb, 0, sizeof(vb));

    for (int nt = 1; nt <= 3; nt++) {
        ggml_backend_cpu_set_n_threads(cpu, nt);
        memset(vc, 0, sizeof(vc));
        T_CHECK(ggml_backend_graph_compute(cpu, gf));
        ggml_backend_tensor_get(c, vc, 0, sizeof(vc));
        int bad = 0;
        for (int i = 0; i < 3 * n; i++) {
            bad += vc[i] != va[i] + vb[i];
        }
        T_CHECK_MSG(bad == 0, "%d wrong elements with %d threads", bad, nt);
    }

    // through a plan
    ggml_backend_buffer_clear(buf, 0);
    ggml_backend_tensor_set(a, va, 0, sizeof(va));
    ggml_backend_tensor_set(b, vb, 0, sizeof(vb));
    ggml_backend_graph_plan_t plan = ggml_backend_graph_plan_create(cpu, gf);
    T_CHECK(plan != NULL);
    ggml_backend_graph_plan_compute(cpu, plan);
    ggml_backend_graph_plan_free(cpu, plan);
    ggml_backend_tensor_get(c, vc, 0, sizeof(vc));
    int bad = 0;
    for (int i = 0; i < 3 * n; i++) {
        bad += vc[i] != va[i] + vb[i];
    }
    T_CHECK(bad == 0);

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

// computing a graph whose tensors have no memory fails cleanly in recoverable mode
static void test_graph_compute_unallocated(void) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    struct ggml_context * ctx = new_ctx(true);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8);
    struct ggml_tensor * c = ggml_add(ctx, a, b);
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(gf, c);

    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();
    T_CHECK(!ggml_backend_graph_compute(cpu, gf));
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(false);

    ggml_free(ctx);
    ggml_backend_free(cpu);
}

int main(void) {
    T_RUN(test_cpu_buffer_type);
    T_RUN(test_buffer_basics);
    T_RUN(test_set_get_round_trip);
    T_RUN(test_tensor_copy);
    T_RUN(test_tensor_alloc_and_tallocr);
    T_RUN(test_errors_recoverable);
    T_RUN(test_registry);
    T_RUN(test_graph_compute);
    T_RUN(test_graph_compute_unallocated);
    return T_SUMMARY();
}
