// pad.c - constructor of pad (zeros appended along each dimension).

#include "ops-common.h"

// a followed by p_i zeros along each dimension i
struct ggml_tensor * ggml_pad(struct ggml_context * ctx, struct ggml_tensor * a, int p0, int p1, int p2, int p3) {
    const char * fn = "ggml_pad";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    const int p[GGML_MAX_DIMS] = { p0, p1, p2, p3 };
    int64_t ne[GGML_MAX_DIMS];
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        GGML_X_CHECK(ctx, p[i] >= 0, "%s: p%d must be >= 0 (got %d)", fn, i, p[i]);
        ne[i] = a->ne[i] + p[i];
    }
    struct ggml_tensor * srcs[1] = { a };
    return x_op_new(ctx, fn, GGML_OP_PAD, a->type, ne, 1, srcs);
}
