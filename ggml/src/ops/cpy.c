// layout.c - constructors of the ops that copy or rearrange data: dup, cpy, cast, cont,
// cont_1d..4d, repeat, concat, get_rows, diag, set, set_1d, set_2d (+ inplace).

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

// a tiled to b's shape (b only provides the shape; it is not a source)
struct ggml_tensor * ggml_repeat(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_repeat";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, x_can_repeat(a, b), "%s: b's dims must be multiples of a's (a %s, b %s)",
                 fn, X_SHAPE(a), X_SHAPE(b));
    struct ggml_tensor * srcs[1] = { a };
    return x_op_new(ctx, fn, GGML_OP_REPEAT, a->type, b->ne, 1, srcs);
}

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

// copy of a with the window (nb1, nb2, nb3, offset) overwritten by b
static struct ggml_tensor * x_set(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a,
                                  struct ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset,
                                  bool inplace) {
    GGML_X_CHECK(ctx, a->type == b->type, "%s: a and b differ in type (%s, %s)",
                 fn, x_type_name(a->type), x_type_name(b->type));
    if (x_check_window(ctx, fn, a, b, nb1, nb2, nb3, offset) == NULL) {
        return NULL;
    }
    struct ggml_tensor * srcs[2] = { a, b };
    struct ggml_tensor * result = x_op_like(ctx, fn, GGML_OP_SET, a, inplace, 2, srcs);
    if (result == NULL) {
        return NULL;
    }
    const int32_t params[5] = { (int32_t) nb1, (int32_t) nb2, (int32_t) nb3, (int32_t) offset, inplace ? 1 : 0 };
    ggml_x_set_op_params(result, params, sizeof(params));
    return result;
}

#define X_SET_ARGS(fn) \
    X_CHECK_CTX(ctx, fn); \
    X_CHECK_TENSOR(ctx, fn, a); \
    X_CHECK_TENSOR(ctx, fn, b)

struct ggml_tensor * ggml_set(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                              size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    X_SET_ARGS("ggml_set");
    return x_set(ctx, "ggml_set", a, b, nb1, nb2, nb3, offset, false);
}

struct ggml_tensor * ggml_set_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    X_SET_ARGS("ggml_set_inplace");
    return x_set(ctx, "ggml_set_inplace", a, b, nb1, nb2, nb3, offset, true);
}

struct ggml_tensor * ggml_set_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                 size_t offset) {
    X_SET_ARGS("ggml_set_1d");
    return x_set(ctx, "ggml_set_1d", a, b, a->nb[1], a->nb[2], a->nb[3], offset, false);
}

struct ggml_tensor * ggml_set_1d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                         size_t offset) {
    X_SET_ARGS("ggml_set_1d_inplace");
    return x_set(ctx, "ggml_set_1d_inplace", a, b, a->nb[1], a->nb[2], a->nb[3], offset, true);
}

struct ggml_tensor * ggml_set_2d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                 size_t nb1, size_t offset) {
    X_SET_ARGS("ggml_set_2d");
    return x_set(ctx, "ggml_set_2d", a, b, nb1, a->nb[2], a->nb[3], offset, false);
}

struct ggml_tensor * ggml_set_2d_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                         size_t nb1, size_t offset) {
    X_SET_ARGS("ggml_set_2d_inplace");
    return x_set(ctx, "ggml_set_2d_inplace", a, b, nb1, a->nb[2], a->nb[3], offset, true);
}

#undef X_SET_ARGS
