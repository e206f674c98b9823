// test-backend-buffers.c - buffer types and buffers of the CPU and the Test backend (host and
// non-host memory), tensor copies between them (sync and async), the registry strings.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-backend-impl.h"

#include "testbackend.h"
#include "testing.h"

#include <stdint.h>
#include <string.h>

static struct ggml_context * new_ctx(void) {
    struct ggml_init_params params = {
        /* .mem_size   = */ 32 * ggml_tensor_overhead(),
        /* .mem_buffer = */ NULL,
        /* .no_alloc   = */ true,
    };
    return ggml_init(params);
}

static void fill(float * v, int n, float seed) {
    for (int i = 0; i < n; i++) {
        v[i] = seed + 0.25f * (float) i;
    }
}

static void check_buft(ggml_backend_buffer_type_t buft, const char * name, size_t align, bool host, size_t pad) {
    T_CHECK(strcmp(ggml_backend_buft_name(buft), name) == 0);
    T_CHECK(ggml_backend_buft_get_alignment(buft) == align);
    T_CHECK(ggml_backend_buft_is_host(buft) == host);

    ggml_backend_buffer_t buf = ggml_backend_buft_alloc_buffer(buft, 1000);
    T_CHECK(buf != NULL);
    T_CHECK(strcmp(ggml_backend_buffer_name(buf), name) == 0);
    T_CHECK(ggml_backend_buffer_get_size(buf) == 1000);
    T_CHECK(ggml_backend_buffer_get_type(buf) == buft);
    T_CHECK(ggml_backend_buffer_is_host(buf) == host);
    T_CHECK(ggml_backend_buffer_get_alignment(buf) == align);
    T_CHECK(((uintptr_t) ggml_backend_buffer_get_base(buf)) % align == 0);
    T_CHECK(buf->usage == GGML_BACKEND_BUFFER_USAGE_ANY);
    ggml_backend_buffer_set_usage(buf, GGML_BACKEND_BUFFER_USAGE_WEIGHTS);
    T_CHECK(buf->usage == GGML_BACKEND_BUFFER_USAGE_WEIGHTS);

    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * t = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 10, 7);
    T_CHECK(ggml_backend_buft_get_alloc_size(buft, t) == ggml_nbytes(t) + pad);
    T_CHECK(ggml_backend_buffer_get_alloc_size(buf, t) == ggml_nbytes(t) + pad);

    // place t at the start of the buffer, clear, read back
    ggml_tallocr_t talloc = ggml_tallocr_new_from_buffer(buf);
    ggml_tallocr_alloc(talloc, t);
    T_CHECK(t->data == ggml_backend_buffer_get_base(buf) && t->buffer == buf);
    ggml_backend_buffer_clear(buf, 0xAB);
    uint8_t bytes[280];
    ggml_backend_tensor_get(t, bytes, 0, sizeof(bytes));
    int bad = 0;
    for (size_t i = 0; i < sizeof(bytes); i++) {
        bad += bytes[i] != 0xAB;
    }
    T_CHECK(bad == 0);

    // reset reaches the buffer (tallocr reset resets the buffer too)
    struct testbackend_stats before, after;
    testbackend_get_stats(&before);
    ggml_backend_buffer_reset(buf);
    ggml_tallocr_reset(talloc);
    testbackend_get_stats(&after);
    T_CHECK(after.n_buffer_resets - before.n_buffer_resets == (host ? 0 : 2));

    ggml_tallocr_free(talloc);
    ggml_free(ctx);
    ggml_backend_buffer_free(buf);
}

static void test_buffer_types(void) {
    check_buft(ggml_backend_cpu_buffer_type(), "CPU", 64, true, 0);
    check_buft(testbackend_buffer_type(), "Test", 32, false, 32);

    struct testbackend_stats s;
    testbackend_get_stats(&s);
    T_CHECK(s.n_buffers == 0);

    ggml_backend_t test = testbackend_init(1);
    ggml_backend_t cpu  = ggml_backend_cpu_init();
    T_CHECK(strcmp(ggml_backend_name(test), "Test") == 0);
    T_CHECK(ggml_backend_get_default_buffer_type(test) == testbackend_buffer_type());
    T_CHECK(ggml_backend_get_alignment(test) == 32);
    T_CHECK(ggml_backend_buft_supports_backend(testbackend_buffer_type(), test));
    T_CHECK(!ggml_backend_buft_supports_backend(testbackend_buffer_type(), cpu));
    T_CHECK(!ggml_backend_buft_supports_backend(ggml_backend_cpu_buffer_type(), test));
    T_CHECK(!ggml_backend_is_cpu(test));
    ggml_backend_buffer_t b = ggml_backend_alloc_buffer(test, 64);
    T_CHECK(b != NULL && !ggml_backend_buffer_is_host(b));
    ggml_backend_buffer_free(b);
    ggml_backend_free(cpu);
    ggml_backend_free(test);
}

static void round_trip(ggml_backend_buffer_type_t buft) {
    struct ggml_context * ctx = new_ctx();
    struct ggml_tensor * a = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 17, 3);
    struct ggml_tensor * h = ggml_new_tensor_1d(ctx, GGML_TYPE_F16, 33);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    T_CHECK(buf != NULL && a->buffer == buf && h->buffer == buf);

    float in[51], out[51];
    fill(in, 51, 1.0f);
    ggml_backend_tensor_set(a, in, 0, sizeof(in));
    memset(out, 0, sizeof(out));
    ggml_backend_tensor_get(a, out, 0, sizeof(out));
    T_CHECK(memcmp(in, out, sizeof(in)) == 0);

    // partial writes and reads
    float part[4] = { -1, -2, -3, -4 };
    ggml_backend_tensor_set(a, part, 10 * sizeof(float), sizeof(part));
    ggml_backend_tensor_get(a, out, 0, sizeof(out));
    T_CHECK(out[9] == in[9] && out[10] == -1 && out[13] == -4 && out[14] == in[14]);
    float p2[2];
    ggml_backend_tensor_get(a, p2, 11 * sizeof(float), sizeof(p2));
    T_CHECK(p2[0] == -2 && p2[1] == -3);

    // a view created after allocation reads through its source's buffer
    struct ggml_tensor * row = ggml_view_1d(ctx, a, 17, 1 * a->nb[1]);
    float r[17];
    ggml_backend_tensor_get(row, r, 0, sizeof(r));
    T_CHECK(r[0] == in[17] && r[16] == in[33]);

    ggml_fp16_t hin[33], hout[33];
    for (int i = 0; i < 33; i++) {
        hin[i] = ggml_fp32_to_fp16((float) i * 0.5f);
    }
    ggml_backend_tensor_set(h, hin, 0, sizeof(hin));
    ggml_backend_tensor_get(h, hout, 0, sizeof(hout));
    T_CHECK(memcmp(hin, hout, sizeof(hin)) == 0);

    // out of bounds accesses are rejected (recoverable mode) and change nothing
    bool old = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();
    float junk[8] = { 9, 9, 9, 9, 9, 9, 9, 9 };
    ggml_backend_tensor_set(a, junk, ggml_nbytes(a) - 4, sizeof(junk));
    T_CHECK(ggml_x_last_error() != NULL && strstr(ggml_x_last_error(), "out of bounds") != NULL);
    ggml_x_clear_error();
    ggml_backend_tensor_get(a, junk, 1, ggml_nbytes(a));
    T_CHECK(ggml_x_last_error() != NULL);
    T_CHECK(junk[0] == 9);
    ggml_x_clear_error();
    ggml_backend_tensor_set(a, junk, SIZE_MAX - 2, 4);
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    ggml_backend_buffer_set_usage(buf, (enum ggml_backend_buffer_usage) 7);
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(old);
    ggml_backend_tensor_get(a, out, 0, sizeof(out));
    T_CHECK(out[50] == in[50]);

    ggml_backend_buffer_free(buf);
    ggml_free(ctx);
}

static void test_round_trips(void) {
    round_trip(ggml_backend_cpu_buffer_type());
    round_trip(testbackend_buffer_type());
}

static void test_copies(void) {
    ggml_backend_t cpu  = ggml_backend_cpu_init();
    ggml_backend_t test = testbackend_init(1);

    struct ggml_context * cctx = new_ctx();
    struct ggml_context * tctx = new_ctx();
    struct ggml_tensor * a = ggml_new_tensor_1d(cctx, GGML_TYPE_F32, 100); // CPU
    struct ggml_tensor * c = ggml_new_tensor_1d(cctx, GGML_TYPE_F32, 100); // CPU
    struct ggml_tensor * b = ggml_new_tensor_1d(tctx, GGML_TYPE_F32, 100); // Test
    struct ggml_tensor * d = ggml_new_tensor_1d(tctx, GGML_TYPE_F32, 100); // Test
    ggml_backend_buffer_t cbuf = ggml_backend_alloc_ctx_tensors(cctx, cpu);
    ggml_backend_buffer_t tbuf = ggml_backend_alloc_ctx_tensors(tctx, test);
    T_CHECK(cbuf != NULL && tbuf != NULL);

    float src[100], out[100];
    fill(src, 100, 3.0f);
    memcpy(a->data, src, sizeof(src));

    struct testbackend_stats s0, s1;
    testbackend_get_stats(&s0);

    // CPU -> Test: a set on the Test buffer
    ggml_backend_tensor_copy(a, b);
    testbackend_get_stats(&s1);
    T_CHECK(s1.n_set - s0.n_set == 1);
    ggml_backend_tensor_get(b, out, 0, sizeof(out));
    T_CHECK(memcmp(out, src, sizeof(src)) == 0);

    // Test -> Test: the Test buffer's cpy_tensor, no staging through the host
    testbackend_get_stats(&s0);
    ggml_backend_tensor_copy(b, d);
    testbackend_get_stats(&s1);
    T_CHECK(s1.n_cpy - s0.n_cpy == 1 && s1.n_set == s0.n_set && s1.n_get == s0.n_get);

    // Test -> CPU: a get from the Test buffer into host memory
    testbackend_get_stats(&s0);
    ggml_backend_tensor_copy(d, c);
    testbackend_get_stats(&s1);
    T_CHECK(s1.n_get - s0.n_get == 1);
    T_CHECK(memcmp(c->data, src, sizeof(src)) == 0);

    // host -> host: the CPU buffer's cpy_tensor fast path (plain memcpy) handles it
    memset(c->data, 0, sizeof(src));
    T_CHECK(c->buffer->iface.cpy_tensor(c->buffer, a, c));
    T_CHECK(memcmp(c->data, src, sizeof(src)) == 0);
    memset(c->data, 0, sizeof(src));
    T_CHECK(ggml_backend_buffer_copy_tensor(a, c));
    T_CHECK(memcmp(c->data, src, sizeof(src)) == 0);
    // ... but not from non-host memory: then the generic path stages through the host
    T_CHECK(!c->buffer->iface.cpy_tensor(c->buffer, d, c));
    memset(c->data, 0, sizeof(src));
    testbackend_get_stats(&s0);
    T_CHECK(ggml_backend_buffer_copy_tensor(d, c));
    testbackend_get_stats(&s1);
    T_CHECK(s1.n_get - s0.n_get == 1);
    T_CHECK(memcmp(c->data, src, sizeof(src)) == 0);

    // async: the Test backend implements the async calls
    float v2[100];
    fill(v2, 100, -7.0f);
    testbackend_get_stats(&s0);
    ggml_backend_tensor_set_async(test, b, v2, 0, sizeof(v2));
    ggml_backend_tensor_get_async(test, b, out, 0, sizeof(out));
    ggml_backend_synchronize(test);
    testbackend_get_stats(&s1);
    T_CHECK(s1.n_set_async - s0.n_set_async == 1 && s1.n_get_async - s0.n_get_async == 1);
    T_CHECK(memcmp(out, v2, sizeof(v2)) == 0);

    testbackend_get_stats(&s0);
    ggml_backend_tensor_copy_async(test, b, d); // Test -> Test: cpy_tensor_async
    ggml_backend_tensor_copy_async(test, a, b); // host -> Test: set_tensor_async
    ggml_backend_synchronize(test);
    testbackend_get_stats(&s1);
    T_CHECK(s1.n_cpy_async - s0.n_cpy_async == 1);
    T_CHECK(s1.n_set_async - s0.n_set_async == 1);
    ggml_backend_tensor_get(d, out, 0, sizeof(out));
    T_CHECK(memcmp(out, v2, sizeof(v2)) == 0);
    ggml_backend_tensor_get(b, out, 0, sizeof(out));
    T_CHECK(memcmp(out, src, sizeof(src)) == 0);

    // async on the CPU backend: no async entries, falls back to the synchronous calls
    float v3[100];
    fill(v3, 100, 11.0f);
    ggml_backend_tensor_set_async(cpu, c, v3, 0, sizeof(v3));
    ggml_backend_tensor_get_async(cpu, c, out, 0, sizeof(out));
    ggml_backend_synchronize(cpu);
    T_CHECK(memcmp(out, v3, sizeof(v3)) == 0);
    ggml_backend_tensor_copy_async(cpu, d, c); // Test -> CPU with the CPU backend: sync fallback
    T_CHECK(memcmp(c->data, v2, sizeof(v2)) == 0);
    ggml_backend_tensor_copy_async(cpu, a, c);
    T_CHECK(memcmp(c->data, src, sizeof(src)) == 0);

    // different layouts are rejected (recoverable)
    bool old = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    struct ggml_tensor * small = ggml_view_1d(cctx, a, 50, 0);
    ggml_x_clear_error();
    ggml_backend_tensor_copy(small, b);
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(old);

    ggml_backend_buffer_free(cbuf);
    ggml_backend_buffer_free(tbuf);
    ggml_free(cctx);
    ggml_free(tctx);
    ggml_backend_free(cpu);
    ggml_backend_free(test);
}

static void test_registry_strings(void) {
    T_CHECK(ggml_backend_reg_get_count() >= 1);
    size_t icpu = ggml_backend_reg_find_by_name("CPU");
    T_CHECK(icpu == 0);
    T_CHECK(strcmp(ggml_backend_reg_get_name(icpu), "CPU") == 0);
    T_CHECK(ggml_backend_reg_get_default_buffer_type(icpu) == ggml_backend_cpu_buffer_type());

    ggml_backend_t b = ggml_backend_reg_init_backend_from_str("CPU");
    T_CHECK(ggml_backend_is_cpu(b));
    ggml_backend_free(b);
    b = ggml_backend_reg_init_backend_from_str("CPU:threads=2");
    T_CHECK(ggml_backend_is_cpu(b));
    ggml_backend_free(b);
    b = ggml_backend_reg_init_backend(icpu, "threads=1");
    T_CHECK(ggml_backend_is_cpu(b));
    ggml_backend_free(b);

    bool old = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    const char * bad[] = { "CPU:threads=0", "CPU:threads=x", "CPU:cores=2", "NoSuchBackend", "Test" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ggml_x_clear_error();
        b = ggml_backend_reg_init_backend_from_str(bad[i]);
        T_CHECK_MSG(b == NULL, "%s", bad[i]);
        ggml_backend_free(b);
    }
    ggml_x_clear_error();
    T_CHECK(ggml_backend_reg_get_name(1000) == NULL);
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(old);

    ggml_backend_buffer_t buf = ggml_backend_reg_alloc_buffer(icpu, 128);
    T_CHECK(buf != NULL && ggml_backend_buffer_is_host(buf));
    ggml_backend_buffer_free(buf);

    // the Test backend registers on request only
    size_t n = ggml_backend_reg_get_count();
    T_CHECK(ggml_backend_reg_find_by_name("Test") == SIZE_MAX);
    testbackend_register();
    testbackend_register();
    T_CHECK(ggml_backend_reg_get_count() == n + 1);
    size_t itest = ggml_backend_reg_find_by_name("Test");
    T_CHECK(itest == n);
    T_CHECK(ggml_backend_reg_get_default_buffer_type(itest) == testbackend_buffer_type());
    b = ggml_backend_reg_init_backend_from_str("Test:threads=2");
    T_CHECK(testbackend_is(b));
    ggml_backend_free(b);
    b = ggml_backend_reg_init_backend_from_str("Test");
    T_CHECK(testbackend_is(b));
    ggml_backend_free(b);
    buf = ggml_backend_reg_alloc_buffer(itest, 128);
    T_CHECK(buf != NULL && !ggml_backend_buffer_is_host(buf));
    ggml_backend_buffer_free(buf);
}

int main(void) {
    T_RUN(test_buffer_types);
    T_RUN(test_round_trips);
    T_RUN(test_copies);
    T_RUN(test_registry_strings);
    return T_SUMMARY();
}
