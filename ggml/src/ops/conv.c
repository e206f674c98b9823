// conv.c - constructors of the convolution family: im2col, conv_1d (+ _ph), conv_2d (+ _sk_p0,
// _s1_ph), conv_transpose_1d, conv_transpose_2d_p0.
//
// Layouts (dimension 0 first): 1-D input [L, IC, N], 1-D kernel [K, IC, OC];
// 2-D input [W, H, IC, N], 2-D kernel [KW, KH, IC, OC].

#include "ops-common.h"

// output length of a convolution, or -1 when the dilated kernel does not fit the padded input
static int64_t x_conv_out(int64_t in, int64_t k, int s, int p, int d) {
    const int64_t span = in + 2 * (int64_t) p - (int64_t) d * (k - 1) - 1;
    return span < 0 ? -1 : span / s + 1;
}

// unfold the input patches: 2-D: a [KW, KH, IC, OC], b [W, H, IC, N] -> [IC*KH*KW, OW, OH, N];
// 1-D: a [K, IC, OC], b [L, IC, N] -> [IC*K, OW, N]. F16 result.
struct ggml_tensor * ggml_im2col(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                 int s0, int s1, int p0, int p1, int d0, int d1, bool is_2D) {
    const char * fn = "ggml_im2col";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F16, "%s: a (kernel) must be F16 (got %s)", fn, x_type_name(a->type));
    GGML_X_CHECK(ctx, b->type == GGML_TYPE_F32, "%s: b (input) must be F32 (got %s)", fn, x_type_name(b->type));
    GGML_X_CHECK(ctx, s0 > 0 && d0 > 0 && p0 >= 0, "%s: need s0 > 0, d0 > 0, p0 >= 0 (s0 %d, p0 %d, d0 %d)",
                 fn, s0, p0, d0);
    int64_t ne[GGML_MAX_DIMS];
    if (is_2D) {
        GGML_X_CHECK(ctx, s1 > 0 && d1 > 0 && p1 >= 0, "%s: need s1 > 0, d1 > 0, p1 >= 0 (s1 %d, p1 %d, d1 %d)",
                     fn, s1, p1, d1);
        GGML_X_CHECK(ctx, a->ne[2] == b->ne[2], "%s: channel mismatch: a->ne[2] (%" PRId64 ") != b->ne[2] (%" PRId64 ")",
                     fn, a->ne[2], b->ne[2]);
        const int64_t ow = x_conv_out(b->ne[0], a->ne[0], s0, p0, d0);
        const int64_t oh = x_conv_out(b->ne[1], a->ne[1], s1, p1, d1);
        GGML_X_CHECK(ctx, ow > 0 && oh > 0,
                     "%s: the kernel %s does not fit the input %s (s %d,%d, p %d,%d, d %d,%d)",
                     fn, X_SHAPE(a), X_SHAPE(b), s0, s1, p0, p1, d0, d1);
        ne[0] = a->ne[0] * a->ne[1] * a->ne[2];
        ne[1] = ow;
        ne[2] = oh;
        ne[3] = b->ne[3];
    } else {
        GGML_X_CHECK(ctx, a->ne[1] == b->ne[1], "%s: channel mismatch: a->ne[1] (%" PRId64 ") != b->ne[1] (%" PRId64 ")",
                     fn, a->ne[1], b->ne[1]);
        GGML_X_CHECK(ctx, b->ne[3] == 1, "%s: 1-D input must be 3-D (b %s)", fn, X_SHAPE(b));
        const int64_t ow = x_conv_out(b->ne[0], a->ne[0], s0, p0, d0);
        GGML_X_CHECK(ctx, ow > 0, "%s: the kernel %s does not fit the input %s (s0 %d, p0 %d, d0 %d)",
                     fn, X_SHAPE(a), X_SHAPE(b), s0, p0, d0);
        ne[0] = a->ne[0] * a->ne[1];
        ne[1] = ow;
        ne[2] = b->ne[2];
        ne[3] = 1;
    }
    struct ggml_tensor * srcs[2] = { a, b };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_IM2COL, GGML_TYPE_F16, ne, 2, srcs);
    if (result == NULL) {
        return NULL;
    }
    const int32_t params[7] = { s0, s1, p0, p1, d0, d1, is_2D ? 1 : 0 };
    ggml_x_set_op_params(result, params, sizeof(params));
    return result;
}

// 1-D convolution: im2col, then one matrix product with the flattened kernel.
// a [K, IC, OC] (F16, dense), b [L, IC, N] -> [OL, OC, N] F32
struct ggml_tensor * ggml_conv_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                  int s0, int p0, int d0) {
    const char * fn = "ggml_conv_1d";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, ggml_is_contiguous(a), "%s: a (kernel) must be contiguous (a %s)", fn, X_SHAPE(a));
    GGML_X_CHECK(ctx, a->ne[3] == 1, "%s: a (kernel) must be 3-D (a %s)", fn, X_SHAPE(a));
    struct ggml_tensor * cols = x_checked(ctx, fn, ggml_im2col(ctx, a, b, s0, 0, p0, 0, d0, 0, false)); // [IC*K, OL, N]
    if (cols == NULL) {
        return NULL;
    }
    const int64_t ol = cols->ne[1], n = cols->ne[2], oc = a->ne[2];
    struct ggml_tensor * lhs = x_checked(ctx, fn, ggml_reshape_2d(ctx, cols, cols->ne[0], ol * n));
    struct ggml_tensor * rhs = lhs ? x_checked(ctx, fn, ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1], oc)) : NULL;
    struct ggml_tensor * res = rhs ? x_checked(ctx, fn, ggml_mul_mat(ctx, lhs, rhs)) : NULL; // [OL*N, OC]
    if (res == NULL) {
        return NULL;
    }
    if (n == 1) {
        return x_checked(ctx, fn, ggml_reshape_3d(ctx, res, ol, oc, 1));
    }
    // the product is ordered [OL, N, OC]: bring the batch outermost
    res = x_checked(ctx, fn, ggml_reshape_3d(ctx, res, ol, n, oc));
    res = res ? x_checked(ctx, fn, ggml_permute(ctx, res, 0, 2, 1, 3)) : NULL;
    return res ? x_checked(ctx, fn, ggml_cont(ctx, res)) : NULL;
}

// conv_1d with padding of half the kernel size
struct ggml_tensor * ggml_conv_1d_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                     int s, int d) {
    const char * fn = "ggml_conv_1d_ph";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    return x_checked(ctx, fn, ggml_conv_1d(ctx, a, b, s, (int) (a->ne[0] / 2), d));
}

// 2-D convolution: im2col, then one matrix product with the flattened kernel.
// a [KW, KH, IC, OC] (F16, dense), b [W, H, IC, N] -> [OW, OH, OC, N] F32
struct ggml_tensor * ggml_conv_2d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                  int s0, int s1, int p0, int p1, int d0, int d1) {
    const char * fn = "ggml_conv_2d";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, ggml_is_contiguous(a), "%s: a (kernel) must be contiguous (a %s)", fn, X_SHAPE(a));
    struct ggml_tensor * cols = x_checked(ctx, fn, ggml_im2col(ctx, a, b, s0, s1, p0, p1, d0, d1, true)); // [IC*KH*KW, OW, OH, N]
    if (cols == NULL) {
        return NULL;
    }
    const int64_t ow = cols->ne[1], oh = cols->ne[2], n = cols->ne[3], oc = a->ne[3];
    struct ggml_tensor * lhs = x_checked(ctx, fn, ggml_reshape_2d(ctx, cols, cols->ne[0], ow * oh * n));
    struct ggml_tensor * rhs = lhs ? x_checked(ctx, fn, ggml_reshape_2d(ctx, a, a->ne[0] * a->ne[1] * a->ne[2], oc)) : NULL;
    struct ggml_tensor * res = rhs ? x_checked(ctx, fn, ggml_mul_mat(ctx, lhs, rhs)) : NULL; // [OW*OH*N, OC]
    if (res == NULL) {
        return NULL;
    }
    if (n == 1) {
        return x_checked(ctx, fn, ggml_reshape_4d(ctx, res, ow, oh, oc, 1));
    }
    // the product is ordered [OW, OH, N, OC]: bring the batch outermost
    res = x_checked(ctx, fn, ggml_reshape_4d(ctx, res, ow, oh, n, oc));
    res = res ? x_checked(ctx, fn, ggml_permute(ctx, res, 0, 1, 3, 2)) : NULL;
    return res ? x_checked(ctx, fn, ggml_cont(ctx, res)) : NULL;
}

// conv_2d with stride = kernel size and no padding
struct ggml_tensor * ggml_conv_2d_sk_p0(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_conv_2d_sk_p0";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, a->ne[0] <= INT32_MAX && a->ne[1] <= INT32_MAX, "%s: kernel too large (a %s)", fn, X_SHAPE(a));
    return x_checked(ctx, fn, ggml_conv_2d(ctx, a, b, (int) a->ne[0], (int) a->ne[1], 0, 0, 1, 1));
}

// conv_2d with stride 1 and padding of half the kernel size
struct ggml_tensor * ggml_conv_2d_s1_ph(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    const char * fn = "ggml_conv_2d_s1_ph";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    return x_checked(ctx, fn, ggml_conv_2d(ctx, a, b, 1, 1, (int) (a->ne[0] / 2), (int) (a->ne[1] / 2), 1, 1));
}

// transposed 1-D convolution: a [K, OC, IC] (F16/F32), b [L, IC] (F32) -> [(L-1)*s0 + K, OC] F32.
// As in the reference only p0 == 0 and d0 == 1 are supported. i32[0..2] = s0, p0, d0.
struct ggml_tensor * ggml_conv_transpose_1d(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                            int s0, int p0, int d0) {
    const char * fn = "ggml_conv_transpose_1d";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F16 || a->type == GGML_TYPE_F32, "%s: a (kernel) must be F16 or F32 (got %s)",
                 fn, x_type_name(a->type));
    GGML_X_CHECK(ctx, b->type == GGML_TYPE_F32, "%s: b (input) must be F32 (got %s)", fn, x_type_name(b->type));
    GGML_X_CHECK(ctx, ggml_is_matrix(b), "%s: b (input) must be a matrix (b %s)", fn, X_SHAPE(b));
    GGML_X_CHECK(ctx, a->ne[3] == 1, "%s: a (kernel) must be 3-D (a %s)", fn, X_SHAPE(a));
    GGML_X_CHECK(ctx, a->ne[2] == b->ne[1], "%s: channel mismatch: a->ne[2] (%" PRId64 ") != b->ne[1] (%" PRId64 ")",
                 fn, a->ne[2], b->ne[1]);
    GGML_X_CHECK(ctx, s0 > 0, "%s: s0 must be > 0 (got %d)", fn, s0);
    GGML_X_CHECK(ctx, p0 == 0, "%s: only p0 == 0 is supported (got %d)", fn, p0);
    GGML_X_CHECK(ctx, d0 == 1, "%s: only d0 == 1 is supported (got %d)", fn, d0);
    GGML_X_CHECK(ctx, a->ne[0] > 0 && b->ne[0] > 0, "%s: empty kernel or input (a %s, b %s)", fn, X_SHAPE(a), X_SHAPE(b));
    const int64_t len = (b->ne[0] - 1) * s0 - 2 * (int64_t) p0 + (int64_t) d0 * (a->ne[0] - 1) + 1;
    const int64_t ne[GGML_MAX_DIMS] = { len, a->ne[1], b->ne[2], 1 };
    struct ggml_tensor * srcs[2] = { a, b };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_CONV_TRANSPOSE_1D, GGML_TYPE_F32, ne, 2, srcs);
    if (result == NULL) {
        return NULL;
    }
    const int32_t params[3] = { s0, p0, d0 };
    ggml_x_set_op_params(result, params, sizeof(params));
    return result;
}

// transposed 2-D convolution without padding: a [KW, KH, OC, IC] (F16), b [W, H, IC, N] (F32)
// -> [(W-1)*s + KW, (H-1)*s + KH, OC, N] F32. i32[0] = stride.
struct ggml_tensor * ggml_conv_transpose_2d_p0(struct ggml_context * ctx, struct ggml_tensor * a,
                                               struct ggml_tensor * b, int stride) {
    const char * fn = "ggml_conv_transpose_2d_p0";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    X_CHECK_TENSOR(ctx, fn, b);
    GGML_X_CHECK(ctx, a->type == GGML_TYPE_F16, "%s: a (kernel) must be F16 (got %s)", fn, x_type_name(a->type));
    GGML_X_CHECK(ctx, b->type == GGML_TYPE_F32, "%s: b (input) must be F32 (got %s)", fn, x_type_name(b->type));
    GGML_X_CHECK(ctx, a->ne[3] == b->ne[2], "%s: channel mismatch: a->ne[3] (%" PRId64 ") != b->ne[2] (%" PRId64 ")",
                 fn, a->ne[3], b->ne[2]);
    GGML_X_CHECK(ctx, stride > 0, "%s: stride must be > 0 (got %d)", fn, stride);
    GGML_X_CHECK(ctx, a->ne[0] > 0 && a->ne[1] > 0 && b->ne[0] > 0 && b->ne[1] > 0,
                 "%s: empty kernel or input (a %s, b %s)", fn, X_SHAPE(a), X_SHAPE(b));
    const int64_t ne[GGML_MAX_DIMS] = {
        (b->ne[0] - 1) * stride + a->ne[0],
        (b->ne[1] - 1) * stride + a->ne[1],
        a->ne[2],
        b->ne[3],
    };
    struct ggml_tensor * srcs[2] = { a, b };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_CONV_TRANSPOSE_2D, GGML_TYPE_F32, ne, 2, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_i32(result, 0, stride);
    return result;
}
