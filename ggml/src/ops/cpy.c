// cpy.c - constructors of the copy family: dup, cpy, cast, cont, cont_1d..4d (+ inplace).

#include "ops-common.h"

static struct ggml_tensor * x_dup(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    struct ggml_tensor * srcs[1] = { a };
    return x_op_like(ctx, fn, GGML_OP_DUP, a, inplace, 1, srcs);
}

struct ggml_tensor * ggml_dup(struct ggml_context * ctx, struct ggml_tensor * a) {
    return x_dup(ctx, "ggml_dup", a, false);
}

struct ggml_tensor * ggml_dup_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return x_dup(ctx, "ggml_dup_inplace", a, true);
}

// copy a (converting its type) into b's memory; the result is a view of b
struct ggml_tensor * ggml_cpy(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_cpy";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, ggml_nelements(a) == ggml_nelements(b),
                 "%s: a and b differ in element count (a %s, b %s)", fn, X_SHAPE(a), X_SHAPE(b));
    struct ggml_tensor * srcs[2] = { a, b };
    struct ggml_tensor * result = x_op_view(ctx, fn, GGML_OP_CPY, b, 2, srcs);
    if (result == NULL) {
        return NULL;
    }
    if (b->name[0] != '\0') {
        ggml_format_name(result, "%s (copy of %s)", b->name, a->name);
    } else {
        ggml_format_name(result, "%s (copy)", a->name);
    }
    return result;
}

// a converted to `type` (a CPY node into a new tensor that is its own destination)
struct ggml_tensor * ggml_cast(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_type type) {
    const char * fn = "ggml_cast";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TYPE(ctx, fn, type);
    GGML_X_CHECK(ctx, a->ne[0] % ggml_blck_size(type) == 0,
                 "%s: a->ne[0] (%" PRId64 ") is not a multiple of the block size of %s (%d)",
                 fn, a->ne[0], x_type_name(type), ggml_blck_size(type));
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_CPY, type, a->ne, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    result->src[1] = result;
    ggml_format_name(result, "%s (copy)", a->name);
    return result;
}

// dense copy of a with shape ne (same element count)
static struct ggml_tensor * x_cont(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a,
                                   const int64_t ne[GGML_MAX_DIMS]) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        GGML_X_CHECK(ctx, ne[i] >= 0, "%s: ne%d (%" PRId64 ") is negative", fn, i, ne[i]);
    }
    int64_t n = 1;
    bool overflow = false;
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        overflow = overflow || __builtin_mul_overflow(n, ne[i], &n);
    }
    GGML_X_CHECK(ctx, !overflow && n == ggml_nelements(a),
                 "%s: [%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "] does not have the element count of a %s",
                 fn, ne[0], ne[1], ne[2], ne[3], X_SHAPE(a));
    GGML_X_CHECK(ctx, ne[0] % ggml_blck_size(a->type) == 0,
                 "%s: ne0 (%" PRId64 ") is not a multiple of the block size of %s (%d)",
                 fn, ne[0], x_type_name(a->type), ggml_blck_size(a->type));
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_CONT, a->type, ne, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_format_name(result, "%s (cont)", a->name);
    return result;
}

struct ggml_tensor * ggml_cont(struct ggml_context * ctx, struct ggml_tensor * a) {
    const char * fn = "ggml_cont";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    return x_cont(ctx, fn, a, a->ne);
}

struct ggml_tensor * ggml_cont_1d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0) {
    const char * fn = "ggml_cont_1d";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    const int64_t ne[GGML_MAX_DIMS] = { ne0, 1, 1, 1 };
    return x_cont(ctx, fn, a, ne);
}

struct ggml_tensor * ggml_cont_2d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1) {
    const char * fn = "ggml_cont_2d";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    const int64_t ne[GGML_MAX_DIMS] = { ne0, ne1, 1, 1 };
    return x_cont(ctx, fn, a, ne);
}

struct ggml_tensor * ggml_cont_3d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1,
                                  int64_t ne2) {
    const char * fn = "ggml_cont_3d";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    const int64_t ne[GGML_MAX_DIMS] = { ne0, ne1, ne2, 1 };
    return x_cont(ctx, fn, a, ne);
}

struct ggml_tensor * ggml_cont_4d(struct ggml_context * ctx, struct ggml_tensor * a, int64_t ne0, int64_t ne1,
                                  int64_t ne2, int64_t ne3) {
    const char * fn = "ggml_cont_4d";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    const int64_t ne[GGML_MAX_DIMS] = { ne0, ne1, ne2, ne3 };
    return x_cont(ctx, fn, a, ne);
}
