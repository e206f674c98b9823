// concat.c - constructor of concat (a and b joined along dimension 2).

#include "ops-common.h"

// a and b joined along dimension 2
struct ggml_tensor * ggml_concat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_concat";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, a->type == b->type, "%s: a and b differ in type (%s, %s)",
                 fn, x_type_name(a->type), x_type_name(b->type));
    GGML_X_CHECK(ctx, a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[3] == b->ne[3],
                 "%s: a and b must agree in dims 0, 1 and 3 (a %s, b %s)", fn, X_SHAPE(a), X_SHAPE(b));
    const int64_t ne[GGML_MAX_DIMS] = { a->ne[0], a->ne[1], a->ne[2] + b->ne[2], a->ne[3] };
    struct ggml_tensor * srcs[2] = { a, b };
    return x_op_new(ctx, fn, GGML_OP_CONCAT, a->type, ne, 2, srcs);
}
