// diag.c - constructors of the diag family: diag (a diagonal matrix from a row vector) and the
// causal masks diag_mask_inf / diag_mask_zero (+ inplace).

#include "ops-common.h"

// diagonal matrix from a row vector: [n, 1, a2, a3] -> [n, n, a2, a3]
struct ggml_tensor * ggml_diag(struct ggml_context * ctx, struct ggml_tensor * a) {
    const char * fn = "ggml_diag";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, a->ne[1] == 1, "%s: a->ne[1] must be 1 (a %s)", fn, X_SHAPE(a));
    const int64_t ne[GGML_MAX_DIMS] = { a->ne[0], a->ne[0], a->ne[2], a->ne[3] };
    struct ggml_tensor * srcs[1] = { a };
    return x_op_new(ctx, fn, GGML_OP_DIAG, a->type, ne, 1, srcs);
}

static struct ggml_tensor * x_diag_mask(struct ggml_context * ctx, const char * fn, enum ggml_op op,
                                        struct ggml_tensor * a, int n_past, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_like(ctx, fn, op, a, inplace, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_i32(result, 0, n_past);
    return result;
}

struct ggml_tensor * ggml_diag_mask_inf(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return x_diag_mask(ctx, "ggml_diag_mask_inf", GGML_OP_DIAG_MASK_INF, a, n_past, false);
}

struct ggml_tensor * ggml_diag_mask_inf_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return x_diag_mask(ctx, "ggml_diag_mask_inf_inplace", GGML_OP_DIAG_MASK_INF, a, n_past, true);
}

struct ggml_tensor * ggml_diag_mask_zero(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return x_diag_mask(ctx, "ggml_diag_mask_zero", GGML_OP_DIAG_MASK_ZERO, a, n_past, false);
}

struct ggml_tensor * ggml_diag_mask_zero_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_past) {
    return x_diag_mask(ctx, "ggml_diag_mask_zero_inplace", GGML_OP_DIAG_MASK_ZERO, a, n_past, true);
}
