// upscale.c - constructor of upscale (nearest-neighbour enlargement of dims 0 and 1).

#include "ops-common.h"

// nearest-neighbour enlargement of dims 0 and 1 by scale_factor; i32[0] = scale_factor
struct ggml_tensor * ggml_upscale(struct ggml_context * ctx, struct ggml_tensor * a, int scale_factor) {
    const char * fn = "ggml_upscale";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, scale_factor > 0, "%s: scale_factor must be > 0 (got %d)", fn, scale_factor);
    GGML_X_CHECK(ctx, a->ne[0] <= INT64_MAX / scale_factor && a->ne[1] <= INT64_MAX / scale_factor,
                 "%s: result too large (a %s, scale_factor %d)", fn, X_SHAPE(a), scale_factor);
    const int64_t ne[GGML_MAX_DIMS] = { a->ne[0] * scale_factor, a->ne[1] * scale_factor, a->ne[2], a->ne[3] };
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_UPSCALE, a->type, ne, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_i32(result, 0, scale_factor);
    return result;
}
