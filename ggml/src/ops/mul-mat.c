// mul-mat.c - constructors of the matrix products: mul_mat (+ set_prec) and mul_mat_id.

#include "ops-common.h"

// a [K, M, a2, a3] (not transposed), b [K, N, b2, b3] with b2 % a2 == 0, b3 % a3 == 0
static struct ggml_tensor * x_check_mul_mat(struct ggml_context * ctx, const char * fn,
                                            struct ggml_tensor * a, struct ggml_tensor * b) {
    // the callers print the operands' shapes: the messages say what is wrong, without them
    GGML_X_CHECK(ctx, a->ne[0] == b->ne[0],
                 "%s: the rows of a and b must have the same length K (dimension 0): a's have %" PRId64 " elements, b's %" PRId64,
                 fn, a->ne[0], b->ne[0]);
    GGML_X_CHECK(ctx, a->ne[0] > 0, "%s: the rows of a and b are empty (K = 0): a matrix product needs K >= 1", fn);
    GGML_X_CHECK(ctx, !ggml_is_transposed(a),
                 "%s: a must not be transposed (its stride nb[0] = %zu exceeds nb[1] = %zu): make it contiguous first (ggml_cont)",
                 fn, a->nb[0], a->nb[1]);
    GGML_X_CHECK(ctx, x_broadcasts_23(a, b),
                 "%s: b's dimensions 2 and 3 must be multiples of a's (a's are broadcast over b's)", fn);
    return a;
}

// result [M, N, b2, b3] F32, i32[0] = precision (default)
struct ggml_tensor * ggml_mul_mat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_mul_mat";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    if (x_check_mul_mat(ctx, fn, a, b) == NULL) {
        return NULL;
    }
    const int64_t ne[GGML_MAX_DIMS] = { a->ne[1], b->ne[1], b->ne[2], b->ne[3] };
    struct ggml_tensor * srcs[2] = { a, b };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_MUL_MAT, GGML_TYPE_F32, ne, 2, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_i32(result, 0, GGML_PREC_DEFAULT);
    return result;
}

void ggml_mul_mat_set_prec(struct ggml_tensor * a, enum ggml_prec prec) {
    const char * fn = "ggml_mul_mat_set_prec";
    if (a == NULL) {
        ggml_x_error(NULL, "%s: tensor argument 'a' is NULL", fn);
        return;
    }
    if (a->op != GGML_OP_MUL_MAT) {
        ggml_x_error(NULL, "%s: a is not a MUL_MAT node (op %s)", fn,
                     (int) a->op >= 0 && a->op < GGML_OP_COUNT ? ggml_op_name(a->op) : "invalid");
        return;
    }
    if (prec != GGML_PREC_DEFAULT && prec != GGML_PREC_F32) {
        ggml_x_error(NULL, "%s: invalid precision %d", fn, (int) prec);
        return;
    }
    ggml_x_set_op_params_i32(a, 0, (int32_t) prec);
}

// Per row r of b: as[ids[id, r]] times that row. i32[0] = id, i32[1] = n_as;
// src0 = ids, src1 = b, src2.. = as. Result [as[0]->ne[1], b1, b2, b3] F32.
struct ggml_tensor * ggml_mul_mat_id(struct ggml_context * ctx, struct ggml_tensor * const as[], int n_as,
                                     struct ggml_tensor * ids, int id, struct ggml_tensor * b) {
    const char * fn = "ggml_mul_mat_id";
    X_CHECK_CTX(ctx, fn);
    GGML_X_CHECK(ctx, as != NULL, "%s: as is NULL", fn);
    X_CHECK_TENSOR(ctx, fn, ids);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, n_as > 0 && n_as <= GGML_MAX_SRC - 2, "%s: n_as must be in 1..%d (got %d)",
                 fn, GGML_MAX_SRC - 2, n_as);
    for (int i = 0; i < n_as; i++) {
        GGML_X_CHECK(ctx, as[i] != NULL, "%s: as[%d] is NULL", fn, i);
    }
    GGML_X_CHECK(ctx, ids->type == GGML_TYPE_I32, "%s: ids must be I32 (got %s)", fn, x_type_name(ids->type));
    GGML_X_CHECK(ctx, ids->ne[2] == 1 && ids->ne[3] == 1, "%s: ids must be a matrix (ids %s)", fn, X_SHAPE(ids));
    GGML_X_CHECK(ctx, ids->ne[1] == b->ne[1], "%s: ids->ne[1] (%" PRId64 ") != b->ne[1] (%" PRId64 ")",
                 fn, ids->ne[1], b->ne[1]);
    GGML_X_CHECK(ctx, b->ne[2] == ids->ne[2] && b->ne[3] == ids->ne[3], "%s: b must be a matrix (b %s)",
                 fn, X_SHAPE(b));
    GGML_X_CHECK(ctx, id >= 0 && id < ids->ne[0], "%s: id (%d) out of range 0..%" PRId64, fn, id, ids->ne[0] - 1);
    for (int i = 0; i < n_as; i++) {
        GGML_X_CHECK(ctx, as[i]->type == as[0]->type, "%s: as[%d] has type %s, as[0] has %s",
                     fn, i, x_type_name(as[i]->type), x_type_name(as[0]->type));
        GGML_X_CHECK(ctx, ggml_are_same_shape(as[i], as[0]), "%s: as[%d] %s differs in shape from as[0] %s",
                     fn, i, X_SHAPE(as[i]), X_SHAPE(as[0]));
        if (x_check_mul_mat(ctx, fn, as[i], b) == NULL) {
            return NULL;
        }
    }
    const int64_t ne[GGML_MAX_DIMS] = { as[0]->ne[1], b->ne[1], b->ne[2], b->ne[3] };
    struct ggml_tensor * srcs[GGML_MAX_SRC] = { ids, b };
    for (int i = 0; i < n_as; i++) {
        srcs[i + 2] = as[i];
    }
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_MUL_MAT_ID, GGML_TYPE_F32, ne, n_as + 2, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_i32(result, 0, id);
    ggml_x_set_op_params_i32(result, 1, n_as);
    return result;
}
