// reduce.c - constructors of the reductions: sum, sum_rows, mean, argmax.

#include "ops-common.h"

// sum of all elements: a 1-element tensor of a's type
struct ggml_tensor * ggml_sum(struct ggml_context * ctx, struct ggml_tensor * a) {
    const char * fn = "ggml_sum";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    const int64_t ne[GGML_MAX_DIMS] = { 1, 1, 1, 1 };
    struct ggml_tensor * srcs[1] = { a };
    return x_op_new(ctx, fn, GGML_OP_SUM, a->type, ne, 1, srcs);
}

// per-row sums: [n0, n1, n2, n3] -> [1, n1, n2, n3], a's type
struct ggml_tensor * ggml_sum_rows(struct ggml_context * ctx, struct ggml_tensor * a) {
    const char * fn = "ggml_sum_rows";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    const int64_t ne[GGML_MAX_DIMS] = { 1, a->ne[1], a->ne[2], a->ne[3] };
    struct ggml_tensor * srcs[1] = { a };
    return x_op_new(ctx, fn, GGML_OP_SUM_ROWS, a->type, ne, 1, srcs);
}

// per-row means: [n0, n1, n2, n3] -> [1, n1, n2, n3], F32
struct ggml_tensor * ggml_mean(struct ggml_context * ctx, struct ggml_tensor * a) {
    const char * fn = "ggml_mean";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    const int64_t ne[GGML_MAX_DIMS] = { 1, a->ne[1], a->ne[2], a->ne[3] };
    struct ggml_tensor * srcs[1] = { a };
    return x_op_new(ctx, fn, GGML_OP_MEAN, GGML_TYPE_F32, ne, 1, srcs);
}

// index of the largest element of each row of a matrix: [n0, n1] -> [n1], I32
struct ggml_tensor * ggml_argmax(struct ggml_context * ctx, struct ggml_tensor * a) {
    const char * fn = "ggml_argmax";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, ggml_is_matrix(a), "%s: a must be a matrix (a %s)", fn, X_SHAPE(a));
    GGML_X_CHECK(ctx, a->ne[0] <= INT32_MAX, "%s: rows too long for I32 indices (a->ne[0] = %" PRId64 ")",
                 fn, a->ne[0]);
    const int64_t ne[GGML_MAX_DIMS] = { a->ne[1], 1, 1, 1 };
    struct ggml_tensor * srcs[1] = { a };
    return x_op_new(ctx, fn, GGML_OP_ARGMAX, GGML_TYPE_I32, ne, 1, srcs);
}
