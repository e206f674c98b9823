// argsort.c - constructors of the sorting ops: argsort, top_k.

#include "ops-common.h"

// per-row permutation that sorts a (I32 indices, a's shape); i32[0] = order
struct ggml_tensor * ggml_argsort(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_sort_order order) {
    const char * fn = "ggml_argsort";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, order == GGML_SORT_ASC || order == GGML_SORT_DESC, "%s: invalid sort order %d", fn, (int) order);
    GGML_X_CHECK(ctx, a->ne[0] <= INT32_MAX, "%s: rows too long for I32 indices (a->ne[0] = %" PRId64 ")", fn, a->ne[0]);
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_ARGSORT, GGML_TYPE_I32, a->ne, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_i32(result, 0, (int32_t) order);
    return result;
}

// indices of the k largest elements of each row: a view of the first k columns of a descending
// argsort, [k, n1, n2, n3] I32
struct ggml_tensor * ggml_top_k(struct ggml_context * ctx, struct ggml_tensor * a, int k) {
    const char * fn = "ggml_top_k";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, k >= 1 && k <= a->ne[0], "%s: k (%d) must be in 1..a->ne[0] (%" PRId64 ")", fn, k, a->ne[0]);
    struct ggml_tensor * sorted = x_checked(ctx, fn, ggml_argsort(ctx, a, GGML_SORT_DESC));
    if (sorted == NULL) {
        return NULL;
    }
    return x_checked(ctx, fn, ggml_view_4d(ctx, sorted, k, sorted->ne[1], sorted->ne[2], sorted->ne[3],
                                           sorted->nb[1], sorted->nb[2], sorted->nb[3], 0));
}
