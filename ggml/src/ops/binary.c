// binary.c - constructors of the element-wise binary ops: add, add_cast, add1, sub, mul, div and
// their inplace variants.

#include "ops-common.h"

// a (op) b with b broadcast onto a: every a->ne[i] is a multiple of b->ne[i]
static struct ggml_tensor * x_binary(struct ggml_context * ctx, const char * fn, enum ggml_op op,
                                     struct ggml_tensor * a, struct ggml_tensor * b, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, x_can_repeat(b, a), "%s: b %s cannot be broadcast to a %s (a->ne[i] %% b->ne[i] != 0)",
                 fn, X_SHAPE(b), X_SHAPE(a));
    struct ggml_tensor * srcs[2] = { a, b };
    return x_op_like(ctx, fn, op, a, inplace, 2, srcs);
}

struct ggml_tensor * ggml_add(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_binary(ctx, "ggml_add", GGML_OP_ADD, a, b, false);
}

struct ggml_tensor * ggml_add_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_binary(ctx, "ggml_add_inplace", GGML_OP_ADD, a, b, true);
}

struct ggml_tensor * ggml_sub(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_binary(ctx, "ggml_sub", GGML_OP_SUB, a, b, false);
}

struct ggml_tensor * ggml_sub_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_binary(ctx, "ggml_sub_inplace", GGML_OP_SUB, a, b, true);
}

struct ggml_tensor * ggml_mul(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_binary(ctx, "ggml_mul", GGML_OP_MUL, a, b, false);
}

struct ggml_tensor * ggml_mul_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_binary(ctx, "ggml_mul_inplace", GGML_OP_MUL, a, b, true);
}

struct ggml_tensor * ggml_div(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_binary(ctx, "ggml_div", GGML_OP_DIV, a, b, false);
}

struct ggml_tensor * ggml_div_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_binary(ctx, "ggml_div_inplace", GGML_OP_DIV, a, b, true);
}

// a + b stored as `type`; as in the reference, a must be F16 or quantized
struct ggml_tensor * ggml_add_cast(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                   enum ggml_type type) {
    const char * fn = "ggml_add_cast";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    X_CHECK_TYPE(ctx, fn, type);
    GGML_X_CHECK(ctx, x_can_repeat(b, a), "%s: b %s cannot be broadcast to a %s (a->ne[i] %% b->ne[i] != 0)",
                 fn, X_SHAPE(b), X_SHAPE(a));
    GGML_X_CHECK(ctx, ggml_is_quantized(a->type) || a->type == GGML_TYPE_F16,
                 "%s: a must be F16 or quantized (got %s)", fn, x_type_name(a->type));
    GGML_X_CHECK(ctx, a->ne[0] % ggml_blck_size(type) == 0,
                 "%s: a->ne[0] (%" PRId64 ") is not a multiple of the block size of %s (%d)",
                 fn, a->ne[0], x_type_name(type), ggml_blck_size(type));
    struct ggml_tensor * srcs[2] = { a, b };
    return x_op_new(ctx, fn, GGML_OP_ADD, type, a->ne, 2, srcs);
}

// a + b where b holds a single value
static struct ggml_tensor * x_add1(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a,
                                   struct ggml_tensor * b, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, ggml_is_scalar(b), "%s: b must have exactly one element (b %s)", fn, X_SHAPE(b));
    GGML_X_CHECK(ctx, x_is_padded_1d(a), "%s: a must have packed rows (a %s, nb [%zu,%zu,%zu,%zu])",
                 fn, X_SHAPE(a), a->nb[0], a->nb[1], a->nb[2], a->nb[3]);
    struct ggml_tensor * srcs[2] = { a, b };
    return x_op_like(ctx, fn, GGML_OP_ADD1, a, inplace, 2, srcs);
}

struct ggml_tensor * ggml_add1(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_add1(ctx, "ggml_add1", a, b, false);
}

struct ggml_tensor * ggml_add1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_add1(ctx, "ggml_add1_inplace", a, b, true);
}
