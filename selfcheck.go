//go:build cgo

package ggml

/*
#include <stdio.h>
#include <string.h>
#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"

// Computes c = a + b for 8 floats on a 1-thread CPU backend and compares with the expected sum.
// Runs in the thread's recoverable mode so that a library error becomes a message, not an abort.
// Returns 0 on success; otherwise writes a message to msg.
static int ggml_go_selfcheck(char * msg, size_t msg_size) {
    enum { N = 8 };
    bool prev_mode = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();

    int rc = 1;
    struct ggml_context * ctx = NULL;
    ggml_backend_t backend = NULL;
    ggml_backend_buffer_t buf = NULL;

    struct ggml_init_params params = { 8 * ggml_tensor_overhead() + ggml_graph_overhead(), NULL, true };
    ctx = ggml_init(params);
    if (ctx == NULL) { snprintf(msg, msg_size, "ggml_init failed"); goto done; }
    ggml_x_set_recoverable(ctx, true);

    struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, N);
    struct ggml_tensor * c = ggml_add(ctx, a, b);
    if (a == NULL || b == NULL || c == NULL) { snprintf(msg, msg_size, "building the graph failed"); goto done; }
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    if (gf == NULL) { snprintf(msg, msg_size, "ggml_new_graph failed"); goto done; }
    ggml_build_forward_expand(gf, c);

    backend = ggml_backend_cpu_init();
    if (backend == NULL) { snprintf(msg, msg_size, "ggml_backend_cpu_init failed"); goto done; }
    ggml_backend_cpu_set_n_threads(backend, 1);
    if (!ggml_backend_supports_op(backend, c)) { snprintf(msg, msg_size, "the CPU backend does not support ADD yet"); goto done; }
    buf = ggml_backend_alloc_ctx_tensors(ctx, backend);
    if (buf == NULL) { snprintf(msg, msg_size, "ggml_backend_alloc_ctx_tensors failed"); goto done; }

    float va[N], vb[N], vc[N];
    for (int i = 0; i < N; i++) { va[i] = (float) i; vb[i] = 0.5f * (float) i; }
    ggml_backend_tensor_set(a, va, 0, sizeof(va));
    ggml_backend_tensor_set(b, vb, 0, sizeof(vb));
    if (!ggml_backend_graph_compute(backend, gf)) { snprintf(msg, msg_size, "ggml_backend_graph_compute failed"); goto done; }
    ggml_backend_tensor_get(c, vc, 0, sizeof(vc));
    for (int i = 0; i < N; i++) {
        if (vc[i] != va[i] + vb[i]) {
            snprintf(msg, msg_size, "wrong result at %d: %g != %g", i, (double) vc[i], (double) (va[i] + vb[i]));
            goto done;
        }
    }
    rc = 0;

done:
    if (rc != 0 && ggml_x_last_error() != NULL) {
        size_t len = strlen(msg);
        snprintf(msg + len, msg_size - len, " (%s)", ggml_x_last_error());
    }
    ggml_backend_buffer_free(buf);
    ggml_backend_free(backend);
    ggml_free(ctx);
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(prev_mode);
    return rc;
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// SelfCheck computes a tiny graph (the sum of two 8-element vectors) on a one-thread CPU backend
// and verifies the result. It returns nil when the C library works on this machine.
func SelfCheck() error {
	var msg [512]C.char
	if C.ggml_go_selfcheck(&msg[0], C.size_t(unsafe.Sizeof(msg))) != 0 {
		return errors.New("ggml: self-check failed: " + C.GoString(&msg[0]))
	}
	return nil
}
