// conform-shim.c - runs the op-conformance harness (../shared/conformance, which computes on
// ggml_backend_cpu_init()) on CUDA0 instead: linked with -Wl,--wrap=ggml_backend_cpu_init and
// -Wl,--wrap=ggml_backend_cpu_set_n_threads, the harness's calls land here
// (scripts/conformance-device.sh, make conformance-cuda-emu).

#include "ggml-backend.h"
#include "ggml-cuda.h"

ggml_backend_t __wrap_ggml_backend_cpu_init(void);
void __wrap_ggml_backend_cpu_set_n_threads(ggml_backend_t backend, int n_threads);

ggml_backend_t __wrap_ggml_backend_cpu_init(void) {
    return ggml_backend_cuda_init(0);
}

void __wrap_ggml_backend_cpu_set_n_threads(ggml_backend_t backend, int n_threads) {
    (void) backend;
    (void) n_threads;
}
