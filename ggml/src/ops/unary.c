// unary.c - constructors of the element-wise unary ops: sqr, sqrt, log, the GGML_OP_UNARY family
// (abs, sgn, neg, step, tanh, elu, relu, gelu, gelu_quick, silu), leaky_relu, scale, clamp, and
// silu_back (the gradient of silu).

#include "ops-common.h"

// result of a's shape and type computing op on a (inplace: a view of a)
static struct ggml_tensor * x_unary_like(struct ggml_context * ctx, const char * fn, enum ggml_op op,
                                         struct ggml_tensor * a, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    struct ggml_tensor * srcs[1] = { a };
    return x_op_like(ctx, fn, op, a, inplace, 1, srcs);
}

struct ggml_tensor * ggml_sqr(struct ggml_context * ctx, struct ggml_tensor * a) {
    return x_unary_like(ctx, "ggml_sqr", GGML_OP_SQR, a, false);
}

struct ggml_tensor * ggml_sqr_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return x_unary_like(ctx, "ggml_sqr_inplace", GGML_OP_SQR, a, true);
}

struct ggml_tensor * ggml_sqrt(struct ggml_context * ctx, struct ggml_tensor * a) {
    return x_unary_like(ctx, "ggml_sqrt", GGML_OP_SQRT, a, false);
}

struct ggml_tensor * ggml_sqrt_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return x_unary_like(ctx, "ggml_sqrt_inplace", GGML_OP_SQRT, a, true);
}

struct ggml_tensor * ggml_log(struct ggml_context * ctx, struct ggml_tensor * a) {
    return x_unary_like(ctx, "ggml_log", GGML_OP_LOG, a, false);
}

struct ggml_tensor * ggml_log_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return x_unary_like(ctx, "ggml_log_inplace", GGML_OP_LOG, a, true);
}

// GGML_OP_UNARY with i32[0] = the unary op
static struct ggml_tensor * x_unary(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a,
                                    enum ggml_unary_op uop, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, (int) uop >= 0 && uop < GGML_UNARY_OP_COUNT,
                 "%s: invalid unary op %d (valid: 0..%d)", fn, (int) uop, GGML_UNARY_OP_COUNT - 1);
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_like(ctx, fn, GGML_OP_UNARY, a, inplace, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_i32(result, 0, (int32_t) uop);
    return result;
}

struct ggml_tensor * ggml_unary(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op) {
    return x_unary(ctx, "ggml_unary", a, op, false);
}

struct ggml_tensor * ggml_unary_inplace(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_unary_op op) {
    return x_unary(ctx, "ggml_unary_inplace", a, op, true);
}

#define X_DEFINE_UNARY(name, uop) \
    struct ggml_tensor * ggml_##name(struct ggml_context * ctx, struct ggml_tensor * a) { \
        return x_unary(ctx, "ggml_" #name, a, uop, false); \
    } \
    struct ggml_tensor * ggml_##name##_inplace(struct ggml_context * ctx, struct ggml_tensor * a) { \
        return x_unary(ctx, "ggml_" #name "_inplace", a, uop, true); \
    }

X_DEFINE_UNARY(abs,        GGML_UNARY_OP_ABS)
X_DEFINE_UNARY(sgn,        GGML_UNARY_OP_SGN)
X_DEFINE_UNARY(neg,        GGML_UNARY_OP_NEG)
X_DEFINE_UNARY(step,       GGML_UNARY_OP_STEP)
X_DEFINE_UNARY(tanh,       GGML_UNARY_OP_TANH)
X_DEFINE_UNARY(elu,        GGML_UNARY_OP_ELU)
X_DEFINE_UNARY(relu,       GGML_UNARY_OP_RELU)
X_DEFINE_UNARY(gelu,       GGML_UNARY_OP_GELU)
X_DEFINE_UNARY(gelu_quick, GGML_UNARY_OP_GELU_QUICK)
X_DEFINE_UNARY(silu,       GGML_UNARY_OP_SILU)

#undef X_DEFINE_UNARY

// x for x > 0, negative_slope * x otherwise
struct ggml_tensor * ggml_leaky_relu(struct ggml_context * ctx, struct ggml_tensor * a, float negative_slope,
                                     bool inplace) {
    const char * fn = inplace ? "ggml_leaky_relu (inplace)" : "ggml_leaky_relu";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_like(ctx, fn, GGML_OP_LEAKY_RELU, a, inplace, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_f32(result, 0, negative_slope);
    return result;
}

static struct ggml_tensor * x_scale(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a, float s,
                                    bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, x_is_padded_1d(a), "%s: a must have packed rows (a %s, nb [%zu,%zu,%zu,%zu])",
                 fn, X_SHAPE(a), a->nb[0], a->nb[1], a->nb[2], a->nb[3]);
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_like(ctx, fn, GGML_OP_SCALE, a, inplace, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_f32(result, 0, s);
    return result;
}

struct ggml_tensor * ggml_scale(struct ggml_context * ctx, struct ggml_tensor * a, float s) {
    return x_scale(ctx, "ggml_scale", a, s, false);
}

struct ggml_tensor * ggml_scale_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float s) {
    return x_scale(ctx, "ggml_scale_inplace", a, s, true);
}

// min(max(a, min), max); as in the reference the result is a view of a (computed in place)
struct ggml_tensor * ggml_clamp(struct ggml_context * ctx, struct ggml_tensor * a, float min, float max) {
    const char * fn = "ggml_clamp";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_view(ctx, fn, GGML_OP_CLAMP, a, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_f32(result, 0, min);
    ggml_x_set_op_params_f32(result, 1, max);
    return result;
}

struct ggml_tensor * ggml_silu_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_back_pair(ctx, "ggml_silu_back", GGML_OP_SILU_BACK, a, b, false);
}
