// loss.c - constructors of the training losses: cross_entropy_loss and its gradient.

#include "ops-common.h"

struct ggml_tensor * ggml_cross_entropy_loss(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_cross_entropy_loss";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, ggml_are_same_shape(a, b), "%s: logits a and targets b must have the same shape (a %s, b %s)",
                 fn, X_SHAPE(a), X_SHAPE(b));
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_F32, "%s: a and b must be F32 (got %s, %s)",
                 fn, x_type_name(a->type), x_type_name(b->type));
    const int64_t ne[GGML_MAX_DIMS] = { 1, 1, 1, 1 };
    struct ggml_tensor * srcs[2] = { a, b };
    return x_op_new(ctx, fn, GGML_OP_CROSS_ENTROPY_LOSS, GGML_TYPE_F32, ne, 2, srcs);
}

struct ggml_tensor * ggml_cross_entropy_loss_back(struct ggml_context * ctx, struct ggml_tensor * a,
                                                  struct ggml_tensor * b, struct ggml_tensor * c) {
    const char * fn = "ggml_cross_entropy_loss_back";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    X_CHECK_TENSOR(ctx, fn, c);
    GGML_X_CHECK(ctx, ggml_are_same_shape(a, b), "%s: a and b must have the same shape (a %s, b %s)", fn, X_SHAPE(a),
                 X_SHAPE(b));
    GGML_X_CHECK(ctx, ggml_nelements(c) == 1, "%s: c (the loss gradient) must have one element (c %s)", fn, X_SHAPE(c));
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_F32 && c->type == GGML_TYPE_F32,
                 "%s: a, b and c must be F32", fn);
    struct ggml_tensor * srcs[3] = { a, b, c };
    return x_op_new(ctx, fn, GGML_OP_CROSS_ENTROPY_LOSS_BACK, GGML_TYPE_F32, a->ne, 3, srcs);
}
