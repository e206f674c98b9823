// test-backend-hbm.c - smoke test of the CPU HBM buffer type (memkind). Built for real by
// `make test-hbm` (-DGGML_USE_CPU_HBM, -lmemkind); in ordinary builds it only reports a skip.
// A machine without high-bandwidth memory may refuse the allocation: that must be a clean
// NULL (and a recorded error in recoverable mode), never a crash.

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

#include "testing.h"

#include <string.h>

#ifdef GGML_USE_CPU_HBM

static void test_hbm_buffer_type(void) {
    ggml_backend_buffer_type_t buft = ggml_backend_cpu_hbm_buffer_type();
    T_CHECK(buft != NULL);
    T_CHECK(strcmp(ggml_backend_buft_name(buft), "CPU_HBM") == 0);
    T_CHECK(ggml_backend_buft_is_host(buft));
    T_CHECK(ggml_backend_buft_get_alignment(buft) == 64);

    ggml_backend_t cpu = ggml_backend_cpu_init();
    T_CHECK(ggml_backend_buft_supports_backend(buft, cpu));

    bool old = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();
    struct ggml_init_params params = { 16 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    struct ggml_context * ctx = ggml_init(params);
    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 256);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 256);
    struct ggml_tensor * c = ggml_add(ctx, a, b);
    ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors_from_buft(ctx, buft);
    if (buf == NULL) {
        printf("HBM allocation refused cleanly: %s\n", ggml_x_last_error() ? ggml_x_last_error() : "(no message)");
    } else {
        T_CHECK(strcmp(ggml_backend_buffer_name(buf), "CPU_HBM") == 0);
        T_CHECK(ggml_backend_buffer_is_host(buf));
        float av[256], bv[256], cv[256];
        for (int i = 0; i < 256; i++) {
            av[i] = (float) i;
            bv[i] = 0.5f;
        }
        ggml_backend_tensor_set(a, av, 0, sizeof(av));
        ggml_backend_tensor_set(b, bv, 0, sizeof(bv));
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, c);
        T_CHECK(ggml_backend_graph_compute(cpu, gf));
        ggml_backend_tensor_get(c, cv, 0, sizeof(cv));
        T_CHECK(cv[0] == 0.5f && cv[255] == 255.5f);
        ggml_backend_buffer_clear(buf, 0);
        ggml_backend_tensor_get(c, cv, 0, sizeof(cv));
        T_CHECK(cv[7] == 0.0f);
        ggml_backend_buffer_free(buf);
        printf("HBM buffer allocated and used\n");
    }
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(old);
    ggml_free(ctx);
    ggml_backend_free(cpu);
}

#else

static void test_hbm_buffer_type(void) {
    printf("built without GGML_USE_CPU_HBM: skipped (make test-hbm builds it)\n");
    T_CHECK(ggml_backend_cpu_buffer_type() != NULL);
}

#endif

int main(void) {
    T_RUN(test_hbm_buffer_type);
    return T_SUMMARY();
}
