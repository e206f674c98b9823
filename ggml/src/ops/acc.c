// acc.c - constructors of the strided-window family: acc (b added into a window of a) and set,
// set_1d, set_2d (the window overwritten by b), + inplace.

#include "ops-common.h"

// copy of a with b added into the window (nb1, nb2, nb3, offset)
static struct ggml_tensor * x_acc(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a,
                                  struct ggml_tensor * b, size_t nb1, size_t nb2, size_t nb3, size_t offset,
                                  bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F32 && b->type == GGML_TYPE_F32,
                 "%s: a and b must be F32 (a %s, b %s)", fn, x_type_name(a->type), x_type_name(b->type));
    if (x_check_window(ctx, fn, a, b, nb1, nb2, nb3, offset) == NULL) {
        return NULL;
    }
    struct ggml_tensor * srcs[2] = { a, b };
    struct ggml_tensor * result = x_op_like(ctx, fn, GGML_OP_ACC, a, inplace, 2, srcs);
    if (result == NULL) {
        return NULL;
    }
    const int32_t params[5] = { (int32_t) nb1, (int32_t) nb2, (int32_t) nb3, (int32_t) offset, inplace ? 1 : 0 };
    ggml_x_set_op_params(result, params, sizeof(params));
    return result;
}

struct ggml_tensor * ggml_acc(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                              size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return x_acc(ctx, "ggml_acc", a, b, nb1, nb2, nb3, offset, false);
}

struct ggml_tensor * ggml_acc_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    return x_acc(ctx, "ggml_acc_inplace", a, b, nb1, nb2, nb3, offset, true);
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
