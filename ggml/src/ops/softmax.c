// softmax.c - constructors of the softmax family: soft_max, soft_max_inplace, soft_max_ext,
// soft_max_back (+ inplace).

#include "ops-common.h"

// soft_max(a*scale + mask) per row; mask (optional): F32, dense, [a0, m1, 1, 1] with m1 dividing
// the rows of a. f32[0] = scale, src1 = mask.
static struct ggml_tensor * x_soft_max(struct ggml_context * ctx, const char * fn, struct ggml_tensor * a,
                                       struct ggml_tensor * mask, float scale, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    if (mask != NULL) {
        GGML_X_CHECK(ctx, mask->type == GGML_TYPE_F32, "%s: mask must be F32 (got %s)", fn, x_type_name(mask->type));
        GGML_X_CHECK(ctx, ggml_is_contiguous(mask), "%s: mask must be contiguous (mask %s)", fn, X_SHAPE(mask));
        GGML_X_CHECK(ctx, mask->ne[2] == 1 && mask->ne[3] == 1, "%s: mask must be a matrix (mask %s)",
                     fn, X_SHAPE(mask));
        GGML_X_CHECK(ctx, mask->ne[0] == a->ne[0] && x_can_repeat(mask, a),
                     "%s: mask %s does not broadcast over the rows of a %s", fn, X_SHAPE(mask), X_SHAPE(a));
    }
    struct ggml_tensor * srcs[2] = { a, mask };
    struct ggml_tensor * result = x_op_like(ctx, fn, GGML_OP_SOFT_MAX, a, inplace, mask ? 2 : 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_soft_max_scale_set(result, scale);
    return result;
}

struct ggml_tensor * ggml_soft_max(struct ggml_context * ctx, struct ggml_tensor * a) {
    return x_soft_max(ctx, "ggml_soft_max", a, NULL, 1.0f, false);
}

struct ggml_tensor * ggml_soft_max_inplace(struct ggml_context * ctx, struct ggml_tensor * a) {
    return x_soft_max(ctx, "ggml_soft_max_inplace", a, NULL, 1.0f, true);
}

struct ggml_tensor * ggml_soft_max_ext(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * mask,
                                       float scale) {
    return x_soft_max(ctx, "ggml_soft_max_ext", a, mask, scale, false);
}

struct ggml_tensor * ggml_soft_max_back(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    return x_back_pair(ctx, "ggml_soft_max_back", GGML_OP_SOFT_MAX_BACK, a, b, false);
}

struct ggml_tensor * ggml_soft_max_back_inplace(struct ggml_context * ctx, struct ggml_tensor * a,
                                                struct ggml_tensor * b) {
    return x_back_pair(ctx, "ggml_soft_max_back_inplace", GGML_OP_SOFT_MAX_BACK, a, b, true);
}
