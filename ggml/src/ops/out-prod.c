// out-prod.c - constructor of out_prod (sum of outer products of the columns of a and b).

#include "ops-common.h"

// sum over k of a[:, k] (outer) b[:, k]: a [M, K, a2, a3], b [N, K, b2, b3] -> [M, N, b2, b3] F32,
// a's dims 2..3 broadcast over b's
struct ggml_tensor * ggml_out_prod(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_out_prod";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, !ggml_is_transposed(a), "%s: a must not be transposed (a %s, nb [%zu,%zu,%zu,%zu])",
                 fn, X_SHAPE(a), a->nb[0], a->nb[1], a->nb[2], a->nb[3]);
    GGML_X_CHECK(ctx, a->ne[1] == b->ne[1], "%s: a->ne[1] (%" PRId64 ") != b->ne[1] (%" PRId64 ") (a %s, b %s)",
                 fn, a->ne[1], b->ne[1], X_SHAPE(a), X_SHAPE(b));
    GGML_X_CHECK(ctx, x_broadcasts_23(a, b),
                 "%s: b->ne[2..3] must be multiples of a->ne[2..3] (a %s, b %s)", fn, X_SHAPE(a), X_SHAPE(b));
    const int64_t ne[GGML_MAX_DIMS] = { a->ne[0], b->ne[0], b->ne[2], b->ne[3] };
    struct ggml_tensor * srcs[2] = { a, b };
    return x_op_new(ctx, fn, GGML_OP_OUT_PROD, GGML_TYPE_F32, ne, 2, srcs);
}
