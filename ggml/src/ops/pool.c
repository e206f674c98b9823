// pool.c - constructors of the pooling ops: pool_1d, pool_2d.

#include "ops-common.h"

// pooled length as the reference computes it (in float, truncated)
static int64_t x_pool_out(int64_t in, int k, int s, float p) {
    return (int64_t) (((float) in + 2.0f * p - (float) k) / (float) s + 1.0f);
}

// 1-D pooling of each row: [n0, n1, n2, n3] -> [(n0 + 2*p0 - k0)/s0 + 1, n1, n2, n3] F32.
// i32[0..3] = op, k0, s0, p0
struct ggml_tensor * ggml_pool_1d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op,
                                  int k0, int s0, int p0) {
    const char * fn = "ggml_pool_1d";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, (int) op >= 0 && op < GGML_OP_POOL_COUNT, "%s: invalid pool op %d", fn, (int) op);
    GGML_X_CHECK(ctx, k0 > 0 && s0 > 0 && p0 >= 0, "%s: need k0 > 0, s0 > 0, p0 >= 0 (k0 %d, s0 %d, p0 %d)",
                 fn, k0, s0, p0);
    const int64_t ow = x_pool_out(a->ne[0], k0, s0, (float) p0);
    GGML_X_CHECK(ctx, ow > 0, "%s: the window (k0 %d, p0 %d) does not fit a->ne[0] (%" PRId64 ")", fn, k0, p0, a->ne[0]);
    const int64_t ne[GGML_MAX_DIMS] = { ow, a->ne[1], a->ne[2], a->ne[3] };
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_POOL_1D, GGML_TYPE_F32, ne, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    const int32_t params[4] = { (int32_t) op, k0, s0, p0 };
    ggml_x_set_op_params(result, params, sizeof(params));
    return result;
}

// 2-D pooling of each [n0, n1] plane -> [OW, OH, n2, n3] F32.
// i32[0..4] = op, k0, k1, s0, s1; f32[5] = p0, f32[6] = p1
struct ggml_tensor * ggml_pool_2d(struct ggml_context * ctx, struct ggml_tensor * a, enum ggml_op_pool op,
                                  int k0, int k1, int s0, int s1, float p0, float p1) {
    const char * fn = "ggml_pool_2d";
    X_CHECK_CTX(ctx, fn);
    X_CHECK_TENSOR(ctx, fn, a);
    GGML_X_CHECK(ctx, (int) op >= 0 && op < GGML_OP_POOL_COUNT, "%s: invalid pool op %d", fn, (int) op);
    GGML_X_CHECK(ctx, k0 > 0 && k1 > 0 && s0 > 0 && s1 > 0, "%s: kernel sizes and strides must be > 0 (k %d,%d, s %d,%d)",
                 fn, k0, k1, s0, s1);
    GGML_X_CHECK(ctx, p0 >= 0.0f && p1 >= 0.0f && p0 <= (float) INT32_MAX && p1 <= (float) INT32_MAX,
                 "%s: padding must be >= 0 (p0 %g, p1 %g)", fn, (double) p0, (double) p1);
    const int64_t ow = x_pool_out(a->ne[0], k0, s0, p0);
    const int64_t oh = x_pool_out(a->ne[1], k1, s1, p1);
    GGML_X_CHECK(ctx, ow > 0 && oh > 0, "%s: the window (k %d,%d, p %g,%g) does not fit a %s",
                 fn, k0, k1, (double) p0, (double) p1, X_SHAPE(a));
    const int64_t ne[GGML_MAX_DIMS] = { ow, oh, a->ne[2], a->ne[3] };
    struct ggml_tensor * srcs[1] = { a };
    struct ggml_tensor * result = x_op_new(ctx, fn, GGML_OP_POOL_2D, GGML_TYPE_F32, ne, 1, srcs);
    if (result == NULL) {
        return NULL;
    }
    ggml_x_set_op_params_i32(result, 0, (int32_t) op);
    ggml_x_set_op_params_i32(result, 1, k0);
    ggml_x_set_op_params_i32(result, 2, k1);
    ggml_x_set_op_params_i32(result, 3, s0);
    ggml_x_set_op_params_i32(result, 4, s1);
    ggml_x_set_op_params_f32(result, 5, p0);
    ggml_x_set_op_params_f32(result, 6, p1);
    return result;
}
