// norm.c - constructors of the normalisations: norm, rms_norm, group_norm (+ inplace), and
// rms_norm_back (the gradient of rms_norm).

#include "ops-common.h"

// per-row normalisation with f32[0] = eps
static struct ggml_tensor * x_norm(struct ggml_context * ctx, const char * fn, enum ggml_op op,
                                   struct ggml_tensor * a, float eps, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, eps >= 0.0f, "%s: eps must be >= 0 (got %g)", fn, (double) eps);
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_like(ctx, fn, op, a, inplace, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_f32(result, 0, eps);
    return result;
}

struct ggml_tensor * ggml_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return x_norm(ctx, "ggml_norm", GGML_OP_NORM, a, eps, false);
}

struct ggml_tensor * ggml_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return x_norm(ctx, "ggml_norm_inplace", GGML_OP_NORM, a, eps, true);
}

struct ggml_tensor * ggml_rms_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return x_norm(ctx, "ggml_rms_norm", GGML_OP_RMS_NORM, a, eps, false);
}

struct ggml_tensor * ggml_rms_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, float eps) {
    return x_norm(ctx, "ggml_rms_norm_inplace", GGML_OP_RMS_NORM, a, eps, true);
}

// normalisation over groups of channels (dimension 2 split into n_groups); i32[0] = n_groups
static struct ggml_tensor * x_group_norm(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a,
                                         int n_groups, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, n_groups > 0, "%s: n_groups must be > 0 (got %d)", fn, n_groups);
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_like(ctx, fn, GGML_OP_GROUP_NORM, a, inplace, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_i32(result, 0, n_groups);
    return result;
}

struct ggml_tensor * ggml_group_norm(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups) {
    return x_group_norm(ctx, "ggml_group_norm", a, n_groups, false);
}

struct ggml_tensor * ggml_group_norm_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_groups) {
    return x_group_norm(ctx, "ggml_group_norm_inplace", a, n_groups, true);
}

struct ggml_tensor * ggml_rms_norm_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                        float eps) {
    const char * fn = "ggml_rms_norm_back";
    X_CHECK_CTX(ctx, fn);
    GGML_X_CHECK(ctx, eps >= 0.0f, "%s: eps must be >= 0 (got %g)", fn, (double) eps);
    struct ggml_tensor * result = x_back_pair(ctx, fn, GGML_OP_RMS_NORM_BACK, a, b, false);
    if (result != NULL) {
        ggml_x_set_op_params_f32(result, 0, eps);
    }
    return result;
}
