// repeat.c - constructors of the repeat family: repeat (tile a to b's shape) and repeat_back
// (its gradient: the sum of the tiles).

#include "ops-common.h"

// a tiled to b's shape (b only provides the shape; it is not a source)
struct ggml_tensor * ggml_repeat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_repeat";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, x_can_repeat(a, b), "%s: b's dims must be multiples of a's (a %s, b %s)",
                 fn, X_SHAPE(a), X_SHAPE(b));
    struct ggml_tensor * srcs[1] = { a };
    return x_op_new(ctx, fn, GGML_OP_REPEAT, a->type, b->ne, 1, srcs);
}

// sum of the tiles of a that make up b's shape: a's shape must be a tiling of b's
struct ggml_tensor * ggml_repeat_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_repeat_back";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, x_can_repeat(b, a), "%s: a's shape must be a multiple of b's (a %s, b %s)", fn, X_SHAPE(a),
                 X_SHAPE(b));
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F32, "%s: a must be F32 (got %s)", fn, x_type_name(a->type));
    struct ggml_tensor * srcs[1] = { a };
    return x_op_new(ctx, fn, GGML_OP_REPEAT_BACK, GGML_TYPE_F32, b->ne, 1, srcs);
}
