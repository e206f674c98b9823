// get-rows.c - constructors of the get-rows family: get_rows and get_rows_back (its gradient).

#include "ops-common.h"

// rows of a picked by the I32 indices in b: a [n0, rows, a2, a3], b [r, a2, a3, 1] -> [n0, r, a2, a3],
// F32 (I32 when a is I32)
struct ggml_tensor * ggml_get_rows(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_get_rows";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, b->type == GGML_TYPE_I32, "%s: b (indices) must be I32 (got %s)", fn, x_type_name(b->type));
    GGML_X_CHECK(ctx, b->ne[3] == 1, "%s: b->ne[3] must be 1 (b %s)", fn, X_SHAPE(b));
    GGML_X_CHECK(ctx, a->ne[2] == b->ne[1], "%s: a->ne[2] (%" PRId64 ") != b->ne[1] (%" PRId64 ") (a %s, b %s)",
                 fn, a->ne[2], b->ne[1], X_SHAPE(a), X_SHAPE(b));
    GGML_X_CHECK(ctx, a->ne[3] == b->ne[2], "%s: a->ne[3] (%" PRId64 ") != b->ne[2] (%" PRId64 ") (a %s, b %s)",
                 fn, a->ne[3], b->ne[2], X_SHAPE(a), X_SHAPE(b));
    const enum ggml_type type = a->type == GGML_TYPE_I32 ? GGML_TYPE_I32 : GGML_TYPE_F32;
    const int64_t ne[GGML_MAX_DIMS] = { a->ne[0], b->ne[0], b->ne[1], b->ne[2] };
    struct ggml_tensor * srcs[2] = { a, b };
    return x_op_new(ctx, fn, GGML_OP_GET_ROWS, type, ne, 2, srcs);
}

// rows of a (the gradient of get_rows' result) added into a zero tensor of c's shape at the rows
// named by b: the gradient of ggml_get_rows(c, b)
struct ggml_tensor * ggml_get_rows_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                        struct ggml_tensor * c) {
    const char * fn = "ggml_get_rows_back";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    X_CHECK_TENSOR(ctx, fn, c);
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F32, "%s: a must be F32 (got %s)", fn, x_type_name(a->type));
    GGML_X_CHECK(ctx, b->type == GGML_TYPE_I32, "%s: b (indices) must be I32 (got %s)", fn, x_type_name(b->type));
    GGML_X_CHECK(ctx, a->ne[0] == c->ne[0] && a->ne[1] == b->ne[0] && a->ne[2] == b->ne[1] && a->ne[3] == b->ne[2] &&
                      c->ne[2] == b->ne[1] && c->ne[3] == b->ne[2] && b->ne[3] == 1,
                 "%s: shapes do not match get_rows(c, b) = a (a %s, b %s, c %s)", fn, X_SHAPE(a), X_SHAPE(b), X_SHAPE(c));
    struct ggml_tensor * srcs[2] = { a, b };
    return x_op_new(ctx, fn, GGML_OP_GET_ROWS_BACK, GGML_TYPE_F32, c->ne, 2, srcs);
}
