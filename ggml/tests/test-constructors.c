// test-constructors.c - the op constructors of ggml/src/ops/*.c: result shapes, types, sources
// and op_params on good inputs; NULL + a message naming the function (and no abort) on bad inputs
// in recoverable mode; a full arena; the default (aborting) mode.

#include "ggml.h"
#include "ggml-impl.h"
#include "testing.h"

#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static struct ggml_context * new_ctx(size_t mem_size, bool recoverable) {
    struct ggml_init_params params = { .mem_size = mem_size, .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * ctx = ggml_init(params);
    if (ctx != NULL) {
        ggml_x_set_recoverable(ctx, recoverable);
    }
    return ctx;
}

#define NEW(type, n0, n1, n2, n3) ggml_new_tensor_4d(ctx, type, n0, n1, n2, n3)
#define F32(n0, n1, n2, n3) NEW(GGML_TYPE_F32, n0, n1, n2, n3)
#define F16(n0, n1, n2, n3) NEW(GGML_TYPE_F16, n0, n1, n2, n3)
#define I32(n0, n1, n2, n3) NEW(GGML_TYPE_I32, n0, n1, n2, n3)

// result node: not NULL, op, type and shape
#define CHECK_NODE(t, op_, type_, n0, n1, n2, n3) \
    do { \
        const struct ggml_tensor * t_ = (t); \
        T_CHECK_MSG(t_ != NULL, "%s returned NULL (%s)", #t, ggml_x_last_error() ? ggml_x_last_error() : ""); \
        if (t_ != NULL) { \
            T_CHECK_MSG(t_->op == (op_), "%s: op %s, expected %s", #t, ggml_op_name(t_->op), ggml_op_name(op_)); \
            T_CHECK_MSG(t_->type == (type_), "%s: type %s, expected %s", #t, ggml_type_name(t_->type), \
                        ggml_type_name(type_)); \
            T_CHECK_MSG(t_->ne[0] == (n0) && t_->ne[1] == (n1) && t_->ne[2] == (n2) && t_->ne[3] == (n3), \
                        "%s: shape [%lld,%lld,%lld,%lld], expected [%lld,%lld,%lld,%lld]", #t, \
                        (long long) t_->ne[0], (long long) t_->ne[1], (long long) t_->ne[2], (long long) t_->ne[3], \
                        (long long) (n0), (long long) (n1), (long long) (n2), (long long) (n3)); \
        } \
    } while (0)

#define P_I32(t, i) ((t) ? ggml_x_get_op_params_i32((t), (i)) : -12345)
#define P_F32(t, i) ((t) ? ggml_x_get_op_params_f32((t), (i)) : -12345.0f)
#define SRC(t, i) ((t) ? (t)->src[i] : NULL)

// the inplace result is a view of a's data
static bool is_view_of(const struct ggml_tensor * r, const struct ggml_tensor * a) {
    if (r == NULL || r->view_src == NULL) {
        return false;
    }
    const struct ggml_tensor * root = a->view_src ? a->view_src : a;
    return r->view_src == root && r->view_offs == (a->view_src ? a->view_offs : 0) &&
           memcmp(r->nb, a->nb, sizeof(r->nb)) == 0 && memcmp(r->ne, a->ne, sizeof(r->ne)) == 0;
}

// bad input: NULL result, a recorded message that names fn, no abort
static int n_failures_checked;
#define EXPECT_FAIL(fn, expr) \
    do { \
        ggml_x_clear_error(); \
        const struct ggml_tensor * r_ = (expr); \
        const char * e_ = ggml_x_last_error(); \
        n_failures_checked++; \
        T_CHECK_MSG(r_ == NULL, "%s should fail", #expr); \
        T_CHECK_MSG(e_ != NULL && strstr(e_, fn) != NULL, "%s: message '%s' does not name %s", #expr, \
                    e_ ? e_ : "(none)", fn); \
    } while (0)

// the same with a NULL context: the thread's mode applies, so make it recoverable meanwhile
#define EXPECT_FAIL_T(fn, expr) \
    do { \
        ggml_x_set_thread_recoverable(true); \
        EXPECT_FAIL(fn, expr); \
        ggml_x_set_thread_recoverable(false); \
    } while (0)

// ---------------------------------------------------------------------------------------------
// good inputs

static void test_binary_good(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(8, 6, 4, 2);
    struct ggml_tensor * b = F32(8, 1, 2, 1);
    struct ggml_tensor * r;

    r = ggml_add(ctx, a, b);
    CHECK_NODE(r, GGML_OP_ADD, GGML_TYPE_F32, 8, 6, 4, 2);
    T_CHECK(SRC(r, 0) == a && SRC(r, 1) == b && SRC(r, 2) == NULL);
    T_CHECK(r && r->view_src == NULL);
    r = ggml_add_inplace(ctx, a, b);
    CHECK_NODE(r, GGML_OP_ADD, GGML_TYPE_F32, 8, 6, 4, 2);
    T_CHECK(is_view_of(r, a) && SRC(r, 0) == a && SRC(r, 1) == b);

    CHECK_NODE(ggml_sub(ctx, a, b), GGML_OP_SUB, GGML_TYPE_F32, 8, 6, 4, 2); // broadcasting accepted
    CHECK_NODE(ggml_sub(ctx, a, a), GGML_OP_SUB, GGML_TYPE_F32, 8, 6, 4, 2);
    T_CHECK(is_view_of(ggml_sub_inplace(ctx, a, b), a));
    CHECK_NODE(ggml_mul(ctx, a, b), GGML_OP_MUL, GGML_TYPE_F32, 8, 6, 4, 2);
    T_CHECK(is_view_of(ggml_mul_inplace(ctx, a, b), a));
    CHECK_NODE(ggml_div(ctx, a, b), GGML_OP_DIV, GGML_TYPE_F32, 8, 6, 4, 2);
    T_CHECK(is_view_of(ggml_div_inplace(ctx, a, b), a));

    struct ggml_tensor * h = F16(32, 3, 1, 1);
    r = ggml_add_cast(ctx, h, F32(32, 1, 1, 1), GGML_TYPE_F32);
    CHECK_NODE(r, GGML_OP_ADD, GGML_TYPE_F32, 32, 3, 1, 1);
    struct ggml_tensor * q = NEW(GGML_TYPE_Q4_0, 64, 2, 1, 1);
    CHECK_NODE(ggml_add_cast(ctx, q, F32(64, 2, 1, 1), GGML_TYPE_F16), GGML_OP_ADD, GGML_TYPE_F16, 64, 2, 1, 1);

    struct ggml_tensor * s = F32(1, 1, 1, 1);
    r = ggml_add1(ctx, a, s);
    CHECK_NODE(r, GGML_OP_ADD1, GGML_TYPE_F32, 8, 6, 4, 2);
    T_CHECK(SRC(r, 1) == s);
    T_CHECK(is_view_of(ggml_add1_inplace(ctx, a, s), a));

    struct ggml_tensor * w = F32(3, 2, 1, 1);
    const size_t off = 2 * a->nb[0] + 1 * a->nb[1] + 3 * a->nb[2];
    r = ggml_acc(ctx, a, w, a->nb[1], a->nb[2], a->nb[3], off);
    CHECK_NODE(r, GGML_OP_ACC, GGML_TYPE_F32, 8, 6, 4, 2);
    T_CHECK(P_I32(r, 0) == (int32_t) a->nb[1] && P_I32(r, 1) == (int32_t) a->nb[2] &&
            P_I32(r, 2) == (int32_t) a->nb[3] && P_I32(r, 3) == (int32_t) off && P_I32(r, 4) == 0);
    T_CHECK(SRC(r, 0) == a && SRC(r, 1) == w);
    r = ggml_acc_inplace(ctx, a, w, a->nb[1], a->nb[2], a->nb[3], off);
    T_CHECK(is_view_of(r, a) && P_I32(r, 4) == 1);
    // window touching the last element exactly
    const size_t last = ggml_nbytes(a) - (3 * a->nb[0] + 1 * a->nb[1]);
    CHECK_NODE(ggml_acc(ctx, a, w, a->nb[1], a->nb[2], a->nb[3], last), GGML_OP_ACC, GGML_TYPE_F32, 8, 6, 4, 2);
    ggml_free(ctx);
}

static void test_unary_good(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(5, 4, 3, 2);
    struct ggml_tensor * r;

    CHECK_NODE(ggml_sqr(ctx, a), GGML_OP_SQR, GGML_TYPE_F32, 5, 4, 3, 2);
    T_CHECK(is_view_of(ggml_sqr_inplace(ctx, a), a));
    CHECK_NODE(ggml_sqrt(ctx, a), GGML_OP_SQRT, GGML_TYPE_F32, 5, 4, 3, 2);
    T_CHECK(is_view_of(ggml_sqrt_inplace(ctx, a), a));
    CHECK_NODE(ggml_log(ctx, a), GGML_OP_LOG, GGML_TYPE_F32, 5, 4, 3, 2);
    T_CHECK(is_view_of(ggml_log_inplace(ctx, a), a));

    struct ggml_tensor * (*const fns[])(struct ggml_context *, struct ggml_tensor *) = {
        ggml_abs, ggml_sgn, ggml_neg, ggml_step, ggml_tanh, ggml_elu, ggml_relu, ggml_gelu, ggml_gelu_quick, ggml_silu,
    };
    struct ggml_tensor * (*const fns_inplace[])(struct ggml_context *, struct ggml_tensor *) = {
        ggml_abs_inplace, ggml_sgn_inplace, ggml_neg_inplace, ggml_step_inplace, ggml_tanh_inplace,
        ggml_elu_inplace, ggml_relu_inplace, ggml_gelu_inplace, ggml_gelu_quick_inplace, ggml_silu_inplace,
    };
    const enum ggml_unary_op uops[] = {
        GGML_UNARY_OP_ABS, GGML_UNARY_OP_SGN, GGML_UNARY_OP_NEG, GGML_UNARY_OP_STEP, GGML_UNARY_OP_TANH,
        GGML_UNARY_OP_ELU, GGML_UNARY_OP_RELU, GGML_UNARY_OP_GELU, GGML_UNARY_OP_GELU_QUICK, GGML_UNARY_OP_SILU,
    };
    for (size_t i = 0; i < sizeof(uops) / sizeof(uops[0]); i++) {
        r = fns[i](ctx, a);
        CHECK_NODE(r, GGML_OP_UNARY, GGML_TYPE_F32, 5, 4, 3, 2);
        T_CHECK_MSG(P_I32(r, 0) == (int32_t) uops[i], "unary %zu", i);
        T_CHECK(r && ggml_get_unary_op(r) == uops[i]);
        r = fns_inplace[i](ctx, a);
        T_CHECK_MSG(is_view_of(r, a) && P_I32(r, 0) == (int32_t) uops[i] && SRC(r, 0) == a, "unary inplace %zu", i);
        r = ggml_unary(ctx, a, uops[i]);
        CHECK_NODE(r, GGML_OP_UNARY, GGML_TYPE_F32, 5, 4, 3, 2);
        T_CHECK(P_I32(r, 0) == (int32_t) uops[i]);
        T_CHECK(is_view_of(ggml_unary_inplace(ctx, a, uops[i]), a));
    }

    r = ggml_leaky_relu(ctx, a, 0.25f, false);
    CHECK_NODE(r, GGML_OP_LEAKY_RELU, GGML_TYPE_F32, 5, 4, 3, 2);
    T_CHECK(P_F32(r, 0) == 0.25f && r && r->view_src == NULL);
    r = ggml_leaky_relu(ctx, a, 0.5f, true);
    T_CHECK(is_view_of(r, a) && P_F32(r, 0) == 0.5f);

    r = ggml_scale(ctx, a, 3.5f);
    CHECK_NODE(r, GGML_OP_SCALE, GGML_TYPE_F32, 5, 4, 3, 2);
    T_CHECK(P_F32(r, 0) == 3.5f);
    r = ggml_scale_inplace(ctx, a, -2.0f);
    T_CHECK(is_view_of(r, a) && P_F32(r, 0) == -2.0f);

    r = ggml_clamp(ctx, a, -0.5f, 0.75f);
    CHECK_NODE(r, GGML_OP_CLAMP, GGML_TYPE_F32, 5, 4, 3, 2);
    T_CHECK(P_F32(r, 0) == -0.5f && P_F32(r, 1) == 0.75f && is_view_of(r, a));
    ggml_free(ctx);
}

static void test_reduce_good(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(5, 4, 3, 2);
    CHECK_NODE(ggml_sum(ctx, a), GGML_OP_SUM, GGML_TYPE_F32, 1, 1, 1, 1);
    CHECK_NODE(ggml_sum(ctx, F16(4, 1, 1, 1)), GGML_OP_SUM, GGML_TYPE_F16, 1, 1, 1, 1);
    CHECK_NODE(ggml_sum_rows(ctx, a), GGML_OP_SUM_ROWS, GGML_TYPE_F32, 1, 4, 3, 2);
    CHECK_NODE(ggml_mean(ctx, a), GGML_OP_MEAN, GGML_TYPE_F32, 1, 4, 3, 2);
    struct ggml_tensor * r = ggml_argmax(ctx, F32(7, 9, 1, 1));
    CHECK_NODE(r, GGML_OP_ARGMAX, GGML_TYPE_I32, 9, 1, 1, 1);
    ggml_free(ctx);
}

static void test_layout_good(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(6, 4, 3, 2);
    struct ggml_tensor * r;

    r = ggml_dup(ctx, a);
    CHECK_NODE(r, GGML_OP_DUP, GGML_TYPE_F32, 6, 4, 3, 2);
    T_CHECK(SRC(r, 0) == a && r && r->view_src == NULL);
    T_CHECK(is_view_of(ggml_dup_inplace(ctx, a), a));

    struct ggml_tensor * dst = F16(12, 2, 3, 2);
    ggml_set_name(a, "src");
    r = ggml_cpy(ctx, a, dst);
    CHECK_NODE(r, GGML_OP_CPY, GGML_TYPE_F16, 12, 2, 3, 2);
    T_CHECK(is_view_of(r, dst) && SRC(r, 0) == a && SRC(r, 1) == dst);
    T_CHECK(r && strcmp(r->name, "src (copy)") == 0);
    ggml_set_name(dst, "dst");
    r = ggml_cpy(ctx, a, dst);
    T_CHECK(r && strcmp(r->name, "dst (copy of src)") == 0);
    CHECK_NODE(ggml_cpy(ctx, F32(64, 2, 1, 1), NEW(GGML_TYPE_Q8_0, 128, 1, 1, 1)), GGML_OP_CPY, GGML_TYPE_Q8_0, 128, 1, 1, 1);

    r = ggml_cast(ctx, a, GGML_TYPE_F16);
    CHECK_NODE(r, GGML_OP_CPY, GGML_TYPE_F16, 6, 4, 3, 2);
    T_CHECK(SRC(r, 0) == a && SRC(r, 1) == r && r && r->view_src == NULL);

    struct ggml_tensor * t = ggml_transpose(ctx, a);
    r = ggml_cont(ctx, t);
    CHECK_NODE(r, GGML_OP_CONT, GGML_TYPE_F32, 4, 6, 3, 2);
    T_CHECK(r && ggml_is_contiguous(r) && SRC(r, 0) == t);
    CHECK_NODE(ggml_cont_1d(ctx, t, 144), GGML_OP_CONT, GGML_TYPE_F32, 144, 1, 1, 1);
    CHECK_NODE(ggml_cont_2d(ctx, t, 12, 12), GGML_OP_CONT, GGML_TYPE_F32, 12, 12, 1, 1);
    CHECK_NODE(ggml_cont_3d(ctx, t, 2, 6, 12), GGML_OP_CONT, GGML_TYPE_F32, 2, 6, 12, 1);
    CHECK_NODE(ggml_cont_4d(ctx, t, 2, 3, 4, 6), GGML_OP_CONT, GGML_TYPE_F32, 2, 3, 4, 6);

    struct ggml_tensor * small = F32(3, 1, 3, 1);
    r = ggml_repeat(ctx, small, a);
    CHECK_NODE(r, GGML_OP_REPEAT, GGML_TYPE_F32, 6, 4, 3, 2);
    T_CHECK(SRC(r, 0) == small && SRC(r, 1) == NULL);
    CHECK_NODE(ggml_repeat(ctx, I32(1, 1, 1, 1), a), GGML_OP_REPEAT, GGML_TYPE_I32, 6, 4, 3, 2);

    r = ggml_concat(ctx, a, F32(6, 4, 5, 2));
    CHECK_NODE(r, GGML_OP_CONCAT, GGML_TYPE_F32, 6, 4, 8, 2);
    CHECK_NODE(ggml_concat(ctx, I32(2, 2, 1, 1), I32(2, 2, 3, 1)), GGML_OP_CONCAT, GGML_TYPE_I32, 2, 2, 4, 1);

    struct ggml_tensor * rows = I32(5, 3, 2, 1);
    r = ggml_get_rows(ctx, F16(8, 10, 3, 2), rows);
    CHECK_NODE(r, GGML_OP_GET_ROWS, GGML_TYPE_F32, 8, 5, 3, 2);
    T_CHECK(SRC(r, 1) == rows);
    CHECK_NODE(ggml_get_rows(ctx, NEW(GGML_TYPE_Q4_K, 256, 10, 3, 2), rows), GGML_OP_GET_ROWS, GGML_TYPE_F32, 256, 5, 3, 2);
    CHECK_NODE(ggml_get_rows(ctx, I32(8, 10, 3, 2), rows), GGML_OP_GET_ROWS, GGML_TYPE_I32, 8, 5, 3, 2);
    CHECK_NODE(ggml_get_rows(ctx, F32(8, 10, 1, 1), I32(4, 1, 1, 1)), GGML_OP_GET_ROWS, GGML_TYPE_F32, 8, 4, 1, 1);

    CHECK_NODE(ggml_diag(ctx, F32(5, 1, 2, 3)), GGML_OP_DIAG, GGML_TYPE_F32, 5, 5, 2, 3);

    struct ggml_tensor * w = F32(3, 2, 2, 1);
    const size_t off = 1 * a->nb[0] + 2 * a->nb[1];
    r = ggml_set(ctx, a, w, a->nb[1], a->nb[2], a->nb[3], off);
    CHECK_NODE(r, GGML_OP_SET, GGML_TYPE_F32, 6, 4, 3, 2);
    T_CHECK(P_I32(r, 0) == (int32_t) a->nb[1] && P_I32(r, 1) == (int32_t) a->nb[2] &&
            P_I32(r, 2) == (int32_t) a->nb[3] && P_I32(r, 3) == (int32_t) off && P_I32(r, 4) == 0);
    T_CHECK(SRC(r, 0) == a && SRC(r, 1) == w && r && r->view_src == NULL);
    r = ggml_set_inplace(ctx, a, w, a->nb[1], a->nb[2], a->nb[3], off);
    T_CHECK(is_view_of(r, a) && P_I32(r, 4) == 1);

    struct ggml_tensor * v = F32(10, 1, 1, 1);
    r = ggml_set_1d(ctx, a, v, 4 * sizeof(float));
    CHECK_NODE(r, GGML_OP_SET, GGML_TYPE_F32, 6, 4, 3, 2);
    T_CHECK(P_I32(r, 0) == (int32_t) a->nb[1] && P_I32(r, 3) == 16 && P_I32(r, 4) == 0);
    r = ggml_set_1d_inplace(ctx, a, v, 0);
    T_CHECK(is_view_of(r, a) && P_I32(r, 4) == 1);

    struct ggml_tensor * m = F32(2, 3, 1, 1);
    r = ggml_set_2d(ctx, a, m, 2 * a->nb[1], a->nb[0]);
    CHECK_NODE(r, GGML_OP_SET, GGML_TYPE_F32, 6, 4, 3, 2);
    T_CHECK(P_I32(r, 0) == (int32_t) (2 * a->nb[1]) && P_I32(r, 1) == (int32_t) a->nb[2] &&
            P_I32(r, 2) == (int32_t) a->nb[3] && P_I32(r, 3) == 4);
    T_CHECK(is_view_of(ggml_set_2d_inplace(ctx, a, m, a->nb[1], 0), a));
    CHECK_NODE(ggml_set_1d(ctx, I32(4, 1, 1, 1), I32(2, 1, 1, 1), 8), GGML_OP_SET, GGML_TYPE_I32, 4, 1, 1, 1);
    ggml_free(ctx);
}

static void test_matmul_good(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F16(16, 5, 2, 1);
    struct ggml_tensor * b = F32(16, 7, 4, 3);
    struct ggml_tensor * r = ggml_mul_mat(ctx, a, b);
    CHECK_NODE(r, GGML_OP_MUL_MAT, GGML_TYPE_F32, 5, 7, 4, 3);
    T_CHECK(SRC(r, 0) == a && SRC(r, 1) == b && P_I32(r, 0) == GGML_PREC_DEFAULT);
    ggml_mul_mat_set_prec(r, GGML_PREC_F32);
    T_CHECK(P_I32(r, 0) == GGML_PREC_F32);
    CHECK_NODE(ggml_mul_mat(ctx, NEW(GGML_TYPE_Q4_0, 64, 3, 1, 1), F32(64, 2, 1, 1)), GGML_OP_MUL_MAT, GGML_TYPE_F32, 3, 2, 1, 1);
    // b may be transposed/permuted, a may be permuted in dims 2..3
    CHECK_NODE(ggml_mul_mat(ctx, F32(4, 3, 1, 1), ggml_transpose(ctx, F32(5, 4, 1, 1))), GGML_OP_MUL_MAT, GGML_TYPE_F32, 3, 5, 1, 1);

    struct ggml_tensor * as[3] = { F16(16, 5, 1, 1), F16(16, 5, 1, 1), F16(16, 5, 1, 1) };
    struct ggml_tensor * ids = I32(3, 7, 1, 1);
    struct ggml_tensor * x = F32(16, 7, 1, 1);
    r = ggml_mul_mat_id(ctx, as, 3, ids, 2, x);
    CHECK_NODE(r, GGML_OP_MUL_MAT_ID, GGML_TYPE_F32, 5, 7, 1, 1);
    T_CHECK(P_I32(r, 0) == 2 && P_I32(r, 1) == 3);
    T_CHECK(SRC(r, 0) == ids && SRC(r, 1) == x && SRC(r, 2) == as[0] && SRC(r, 3) == as[1] && SRC(r, 4) == as[2] &&
            SRC(r, 5) == NULL);
    struct ggml_tensor * as8[8];
    for (int i = 0; i < 8; i++) {
        as8[i] = F32(16, 5, 1, 1);
    }
    r = ggml_mul_mat_id(ctx, as8, 8, I32(2, 7, 1, 1), 0, x);
    CHECK_NODE(r, GGML_OP_MUL_MAT_ID, GGML_TYPE_F32, 5, 7, 1, 1);
    T_CHECK(SRC(r, 9) == as8[7] && P_I32(r, 1) == 8);
    // ids as a view (the first k columns of an argsort)
    struct ggml_tensor * sel = ggml_top_k(ctx, F32(8, 7, 1, 1), 2);
    CHECK_NODE(ggml_mul_mat_id(ctx, as8, 8, sel, 1, x), GGML_OP_MUL_MAT_ID, GGML_TYPE_F32, 5, 7, 1, 1);

    struct ggml_tensor * pa = F32(6, 8, 2, 1);
    struct ggml_tensor * pb = F32(5, 8, 4, 3);
    r = ggml_out_prod(ctx, pa, pb);
    CHECK_NODE(r, GGML_OP_OUT_PROD, GGML_TYPE_F32, 6, 5, 4, 3);
    T_CHECK(SRC(r, 0) == pa && SRC(r, 1) == pb);
    CHECK_NODE(ggml_out_prod(ctx, F32(16, 10, 1, 1), ggml_transpose(ctx, F32(10, 12, 1, 1))), GGML_OP_OUT_PROD,
               GGML_TYPE_F32, 16, 12, 1, 1);
    ggml_free(ctx);
}

static void test_norm_good(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(64, 4, 6, 1);
    struct ggml_tensor * r;
    r = ggml_norm(ctx, a, 1e-5f);
    CHECK_NODE(r, GGML_OP_NORM, GGML_TYPE_F32, 64, 4, 6, 1);
    T_CHECK(P_F32(r, 0) == 1e-5f);
    r = ggml_norm_inplace(ctx, a, 1e-3f);
    T_CHECK(is_view_of(r, a) && P_F32(r, 0) == 1e-3f);
    r = ggml_rms_norm(ctx, a, 1e-6f);
    CHECK_NODE(r, GGML_OP_RMS_NORM, GGML_TYPE_F32, 64, 4, 6, 1);
    T_CHECK(P_F32(r, 0) == 1e-6f);
    r = ggml_rms_norm_inplace(ctx, a, 0.0f);
    T_CHECK(is_view_of(r, a) && P_F32(r, 0) == 0.0f);
    r = ggml_group_norm(ctx, a, 3);
    CHECK_NODE(r, GGML_OP_GROUP_NORM, GGML_TYPE_F32, 64, 4, 6, 1);
    T_CHECK(P_I32(r, 0) == 3);
    r = ggml_group_norm_inplace(ctx, a, 2);
    T_CHECK(is_view_of(r, a) && P_I32(r, 0) == 2);
    ggml_free(ctx);
}

static void test_attention_good(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(10, 8, 4, 1);
    struct ggml_tensor * r;

    r = ggml_diag_mask_inf(ctx, a, 3);
    CHECK_NODE(r, GGML_OP_DIAG_MASK_INF, GGML_TYPE_F32, 10, 8, 4, 1);
    T_CHECK(P_I32(r, 0) == 3 && r && r->view_src == NULL);
    r = ggml_diag_mask_inf_inplace(ctx, a, 2);
    T_CHECK(is_view_of(r, a) && P_I32(r, 0) == 2 && r->op == GGML_OP_DIAG_MASK_INF);
    r = ggml_diag_mask_zero(ctx, a, 1);
    CHECK_NODE(r, GGML_OP_DIAG_MASK_ZERO, GGML_TYPE_F32, 10, 8, 4, 1);
    T_CHECK(P_I32(r, 0) == 1);
    r = ggml_diag_mask_zero_inplace(ctx, a, 0);
    T_CHECK(is_view_of(r, a) && r->op == GGML_OP_DIAG_MASK_ZERO);

    r = ggml_soft_max(ctx, a);
    CHECK_NODE(r, GGML_OP_SOFT_MAX, GGML_TYPE_F32, 10, 8, 4, 1);
    T_CHECK(P_F32(r, 0) == 1.0f && SRC(r, 1) == NULL && r && r->view_src == NULL);
    r = ggml_soft_max_inplace(ctx, a);
    T_CHECK(is_view_of(r, a) && r->op == GGML_OP_SOFT_MAX && P_F32(r, 0) == 1.0f);
    struct ggml_tensor * mask = F32(10, 8, 1, 1);
    r = ggml_soft_max_ext(ctx, a, mask, 0.125f);
    CHECK_NODE(r, GGML_OP_SOFT_MAX, GGML_TYPE_F32, 10, 8, 4, 1);
    T_CHECK(P_F32(r, 0) == 0.125f && SRC(r, 1) == mask);
    r = ggml_soft_max_ext(ctx, a, F32(10, 4, 1, 1), 2.0f); // mask rows repeat over the rows of a
    CHECK_NODE(r, GGML_OP_SOFT_MAX, GGML_TYPE_F32, 10, 8, 4, 1);
    r = ggml_soft_max_ext(ctx, a, NULL, 0.5f);
    CHECK_NODE(r, GGML_OP_SOFT_MAX, GGML_TYPE_F32, 10, 8, 4, 1);
    T_CHECK(SRC(r, 1) == NULL && P_F32(r, 0) == 0.5f);

    struct ggml_tensor * x = F32(16, 4, 3, 1);
    struct ggml_tensor * pos = I32(3, 1, 1, 1);
    r = ggml_rope(ctx, x, pos, 8, 2, 512);
    CHECK_NODE(r, GGML_OP_ROPE, GGML_TYPE_F32, 16, 4, 3, 1);
    T_CHECK(SRC(r, 0) == x && SRC(r, 1) == pos && r && r->view_src == NULL);
    T_CHECK(P_I32(r, 0) == 0 && P_I32(r, 1) == 8 && P_I32(r, 2) == 2 && P_I32(r, 3) == 512 && P_I32(r, 4) == 0);
    T_CHECK(P_F32(r, 5) == 10000.0f && P_F32(r, 6) == 1.0f && P_F32(r, 7) == 0.0f && P_F32(r, 8) == 1.0f);
    T_CHECK(P_F32(r, 11) == 0.0f && P_I32(r, 12) == 0);
    r = ggml_rope_inplace(ctx, x, pos, 16, 0, 0);
    T_CHECK(is_view_of(r, x) && r->op == GGML_OP_ROPE && P_I32(r, 1) == 16);
    r = ggml_rope_custom(ctx, F16(16, 4, 3, 1), pos, 16, 0, 4096, 2048, 5000.0f, 0.5f, 1.0f, 0.9f, 32.0f, 1.0f);
    CHECK_NODE(r, GGML_OP_ROPE, GGML_TYPE_F16, 16, 4, 3, 1);
    T_CHECK(P_I32(r, 1) == 16 && P_I32(r, 2) == 0 && P_I32(r, 3) == 4096 && P_I32(r, 4) == 2048);
    T_CHECK(P_F32(r, 5) == 5000.0f && P_F32(r, 6) == 0.5f && P_F32(r, 7) == 1.0f && P_F32(r, 8) == 0.9f &&
            P_F32(r, 9) == 32.0f && P_F32(r, 10) == 1.0f && P_F32(r, 11) == 0.0f && P_I32(r, 12) == 0);
    r = ggml_rope_custom_inplace(ctx, x, pos, 4, 2, 0, 1024, 10000.0f, 0.25f, 0.0f, 1.0f, 32.0f, 1.0f);
    T_CHECK(is_view_of(r, x) && P_F32(r, 6) == 0.25f && P_I32(r, 4) == 1024);

    float dims[2];
    ggml_rope_yarn_corr_dims(128, 4096, 10000.0f, 32.0f, 1.0f, dims);
    T_CHECK_MSG(dims[0] == 20.0f && dims[1] == 46.0f, "corr dims %g %g", (double) dims[0], (double) dims[1]);
    ggml_rope_yarn_corr_dims(64, 4096, 10.0f, 32.0f, 1.0f, dims); // clamped to n_dims - 1
    T_CHECK_MSG(dims[1] == 63.0f, "corr dims %g %g", (double) dims[0], (double) dims[1]);
    ggml_rope_yarn_corr_dims(64, 10, 10000.0f, 32.0f, 1.0f, dims); // clamped to 0
    T_CHECK_MSG(dims[0] == 0.0f, "corr dims %g %g", (double) dims[0], (double) dims[1]);

    r = ggml_alibi(ctx, a, 5, 4, 8.0f);
    CHECK_NODE(r, GGML_OP_ALIBI, GGML_TYPE_F32, 10, 8, 4, 1);
    T_CHECK(P_I32(r, 0) == 5 && P_I32(r, 1) == 4 && P_F32(r, 2) == 8.0f && r && r->view_src == NULL);
    ggml_free(ctx);
}

static void test_conv_good(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * r;

    // im2col 2-D: kernel [KW=3, KH=3, IC=2, OC=4], input [W=10, H=8, IC=2, N=3]
    struct ggml_tensor * k2 = F16(3, 3, 2, 4);
    struct ggml_tensor * in2 = F32(10, 8, 2, 3);
    r = ggml_im2col(ctx, k2, in2, 1, 1, 1, 1, 1, 1, true);
    CHECK_NODE(r, GGML_OP_IM2COL, GGML_TYPE_F16, 18, 10, 8, 3);
    T_CHECK(SRC(r, 0) == k2 && SRC(r, 1) == in2);
    T_CHECK(P_I32(r, 0) == 1 && P_I32(r, 1) == 1 && P_I32(r, 2) == 1 && P_I32(r, 3) == 1 && P_I32(r, 4) == 1 &&
            P_I32(r, 5) == 1 && P_I32(r, 6) == 1);
    r = ggml_im2col(ctx, k2, in2, 2, 3, 0, 2, 2, 1, true);
    // OW = (10 - 2*2 - 1)/2 + 1 = 3; OH = (8 + 4 - 2 - 1)/3 + 1 = 4
    CHECK_NODE(r, GGML_OP_IM2COL, GGML_TYPE_F16, 18, 3, 4, 3);
    // im2col 1-D: kernel [K=3, IC=2, OC=5], input [L=10, IC=2, N=4]
    struct ggml_tensor * k1 = F16(3, 2, 5, 1);
    r = ggml_im2col(ctx, k1, F32(10, 2, 4, 1), 2, 0, 1, 0, 2, 0, false);
    CHECK_NODE(r, GGML_OP_IM2COL, GGML_TYPE_F16, 6, 4, 4, 1); // OW = (10 + 2 - 4 - 1)/2 + 1 = 4
    T_CHECK(P_I32(r, 0) == 2 && P_I32(r, 2) == 1 && P_I32(r, 4) == 2 && P_I32(r, 6) == 0);

    // conv_1d: [OL, OC, N]
    r = ggml_conv_1d(ctx, k1, F32(10, 2, 1, 1), 1, 0, 1);
    CHECK_NODE(r, GGML_OP_RESHAPE, GGML_TYPE_F32, 8, 5, 1, 1);
    T_CHECK(SRC(r, 0) && SRC(r, 0)->op == GGML_OP_MUL_MAT);
    r = ggml_conv_1d(ctx, k1, F32(10, 2, 3, 1), 2, 1, 1);
    CHECK_NODE(r, GGML_OP_CONT, GGML_TYPE_F32, 5, 5, 3, 1);
    r = ggml_conv_1d_ph(ctx, k1, F32(10, 2, 1, 1), 1, 1);
    CHECK_NODE(r, GGML_OP_RESHAPE, GGML_TYPE_F32, 10, 5, 1, 1);

    // conv_2d: [OW, OH, OC, N]
    r = ggml_conv_2d(ctx, k2, F32(10, 8, 2, 1), 1, 1, 1, 1, 1, 1);
    CHECK_NODE(r, GGML_OP_RESHAPE, GGML_TYPE_F32, 10, 8, 4, 1);
    T_CHECK(SRC(r, 0) && SRC(r, 0)->op == GGML_OP_MUL_MAT);
    r = ggml_conv_2d(ctx, k2, in2, 1, 1, 0, 0, 1, 1);
    CHECK_NODE(r, GGML_OP_CONT, GGML_TYPE_F32, 8, 6, 4, 3);
    r = ggml_conv_2d_sk_p0(ctx, F16(2, 2, 2, 4), F32(8, 6, 2, 1));
    CHECK_NODE(r, GGML_OP_RESHAPE, GGML_TYPE_F32, 4, 3, 4, 1);
    r = ggml_conv_2d_s1_ph(ctx, k2, F32(10, 8, 2, 1));
    CHECK_NODE(r, GGML_OP_RESHAPE, GGML_TYPE_F32, 10, 8, 4, 1);

    // conv_transpose_1d: kernel [K=3, OC=4, IC=5], input [L=10, IC=5]
    struct ggml_tensor * kt = F32(3, 4, 5, 1);
    struct ggml_tensor * it = F32(10, 5, 1, 1);
    r = ggml_conv_transpose_1d(ctx, kt, it, 2, 0, 1);
    CHECK_NODE(r, GGML_OP_CONV_TRANSPOSE_1D, GGML_TYPE_F32, 21, 4, 1, 1);
    T_CHECK(P_I32(r, 0) == 2 && P_I32(r, 1) == 0 && P_I32(r, 2) == 1 && SRC(r, 0) == kt && SRC(r, 1) == it);
    CHECK_NODE(ggml_conv_transpose_1d(ctx, F16(3, 4, 5, 1), it, 1, 0, 1), GGML_OP_CONV_TRANSPOSE_1D, GGML_TYPE_F32,
               12, 4, 1, 1);

    // conv_transpose_2d_p0: kernel [KW=3, KH=3, OC=4, IC=5], input [W=6, H=7, IC=5, N=2]
    r = ggml_conv_transpose_2d_p0(ctx, F16(3, 3, 4, 5), F32(6, 7, 5, 2), 2);
    CHECK_NODE(r, GGML_OP_CONV_TRANSPOSE_2D, GGML_TYPE_F32, 13, 15, 4, 2);
    T_CHECK(P_I32(r, 0) == 2);

    r = ggml_pool_1d(ctx, F32(10, 3, 1, 1), GGML_OP_POOL_MAX, 3, 2, 1);
    CHECK_NODE(r, GGML_OP_POOL_1D, GGML_TYPE_F32, 5, 3, 1, 1);
    T_CHECK(P_I32(r, 0) == GGML_OP_POOL_MAX && P_I32(r, 1) == 3 && P_I32(r, 2) == 2 && P_I32(r, 3) == 1);
    CHECK_NODE(ggml_pool_1d(ctx, F32(10, 10, 1, 1), GGML_OP_POOL_AVG, 2, 2, 0), GGML_OP_POOL_1D, GGML_TYPE_F32, 5, 10, 1, 1);

    r = ggml_pool_2d(ctx, F32(10, 9, 3, 1), GGML_OP_POOL_AVG, 3, 2, 2, 2, 1.0f, 0.0f);
    CHECK_NODE(r, GGML_OP_POOL_2D, GGML_TYPE_F32, 5, 4, 3, 1);
    T_CHECK(P_I32(r, 0) == GGML_OP_POOL_AVG && P_I32(r, 1) == 3 && P_I32(r, 2) == 2 && P_I32(r, 3) == 2 &&
            P_I32(r, 4) == 2 && P_F32(r, 5) == 1.0f && P_F32(r, 6) == 0.0f);

    r = ggml_upscale(ctx, F32(4, 3, 2, 1), 2);
    CHECK_NODE(r, GGML_OP_UPSCALE, GGML_TYPE_F32, 8, 6, 2, 1);
    T_CHECK(P_I32(r, 0) == 2);
    CHECK_NODE(ggml_pad(ctx, F32(4, 3, 2, 1), 1, 2, 0, 3), GGML_OP_PAD, GGML_TYPE_F32, 5, 5, 2, 4);
    ggml_free(ctx);
}

static void test_sort_good(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(5, 3, 2, 1);
    struct ggml_tensor * r = ggml_argsort(ctx, a, GGML_SORT_DESC);
    CHECK_NODE(r, GGML_OP_ARGSORT, GGML_TYPE_I32, 5, 3, 2, 1);
    T_CHECK(P_I32(r, 0) == GGML_SORT_DESC && SRC(r, 0) == a);
    r = ggml_argsort(ctx, a, GGML_SORT_ASC);
    T_CHECK(P_I32(r, 0) == GGML_SORT_ASC);

    r = ggml_top_k(ctx, a, 2);
    CHECK_NODE(r, GGML_OP_VIEW, GGML_TYPE_I32, 2, 3, 2, 1);
    const struct ggml_tensor * s = SRC(r, 0);
    T_CHECK(s && s->op == GGML_OP_ARGSORT && P_I32(s, 0) == GGML_SORT_DESC && s->ne[0] == 5);
    T_CHECK(r && s && r->nb[1] == s->nb[1] && r->nb[2] == s->nb[2] && r->view_offs == 0);
    CHECK_NODE(ggml_top_k(ctx, a, 5), GGML_OP_VIEW, GGML_TYPE_I32, 5, 3, 2, 1);
    ggml_free(ctx);
}

static void custom1(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * ud) {
    (void) dst; (void) a; (void) ith; (void) nth; (void) ud;
}
static void custom2(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith,
                    int nth, void * ud) {
    (void) dst; (void) a; (void) b; (void) ith; (void) nth; (void) ud;
}
static void custom3(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b,
                    const struct ggml_tensor * c, int ith, int nth, void * ud) {
    (void) dst; (void) a; (void) b; (void) c; (void) ith; (void) nth; (void) ud;
}

static bool custom_params_are(const struct ggml_tensor * t, void * fun, int n_tasks, void * ud) {
    if (t == NULL) {
        return false;
    }
    struct ggml_x_map_custom_params p;
    memcpy(&p, t->op_params, sizeof(p));
    return p.fun == fun && p.n_tasks == n_tasks && p.userdata == ud;
}

static void test_custom_good(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(4, 3, 1, 1);
    struct ggml_tensor * b = F16(2, 2, 1, 1);
    struct ggml_tensor * c = I32(7, 1, 1, 1);
    int ud;
    void * f1, * f2, * f3;
    ggml_custom1_op_t p1 = custom1;
    ggml_custom2_op_t p2 = custom2;
    ggml_custom3_op_t p3 = custom3;
    memcpy(&f1, &p1, sizeof(f1));
    memcpy(&f2, &p2, sizeof(f2));
    memcpy(&f3, &p3, sizeof(f3));
    struct ggml_tensor * r;

    r = ggml_map_custom1(ctx, a, custom1, 2, &ud);
    CHECK_NODE(r, GGML_OP_MAP_CUSTOM1, GGML_TYPE_F32, 4, 3, 1, 1);
    T_CHECK(custom_params_are(r, f1, 2, &ud) && SRC(r, 0) == a && r->view_src == NULL);
    r = ggml_map_custom1_inplace(ctx, a, custom1, GGML_N_TASKS_MAX, NULL);
    T_CHECK(is_view_of(r, a) && custom_params_are(r, f1, GGML_N_TASKS_MAX, NULL));
    r = ggml_map_custom2(ctx, a, b, custom2, 1, &ud);
    CHECK_NODE(r, GGML_OP_MAP_CUSTOM2, GGML_TYPE_F32, 4, 3, 1, 1);
    T_CHECK(custom_params_are(r, f2, 1, &ud) && SRC(r, 0) == a && SRC(r, 1) == b);
    r = ggml_map_custom2_inplace(ctx, a, b, custom2, 4, NULL);
    T_CHECK(is_view_of(r, a) && custom_params_are(r, f2, 4, NULL));
    r = ggml_map_custom3(ctx, a, b, c, custom3, GGML_N_TASKS_MAX, &ud);
    CHECK_NODE(r, GGML_OP_MAP_CUSTOM3, GGML_TYPE_F32, 4, 3, 1, 1);
    T_CHECK(custom_params_are(r, f3, GGML_N_TASKS_MAX, &ud) && SRC(r, 2) == c);
    r = ggml_map_custom3_inplace(ctx, a, b, c, custom3, 3, NULL);
    T_CHECK(is_view_of(r, a) && custom_params_are(r, f3, 3, NULL));
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// bad inputs (recoverable mode)

static void test_bad_null_ctx(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(4, 3, 2, 1);
    EXPECT_FAIL_T("ggml_add", ggml_add(NULL, a, a));
    EXPECT_FAIL_T("ggml_mul_mat", ggml_mul_mat(NULL, a, a));
    EXPECT_FAIL_T("ggml_soft_max", ggml_soft_max(NULL, a));
    EXPECT_FAIL_T("ggml_top_k", ggml_top_k(NULL, a, 1));
    EXPECT_FAIL_T("ggml_conv_2d", ggml_conv_2d(NULL, a, a, 1, 1, 0, 0, 1, 1));
    EXPECT_FAIL_T("ggml_map_custom1", ggml_map_custom1(NULL, a, custom1, 1, NULL));
    EXPECT_FAIL_T("ggml_mul_mat_set_prec", (ggml_mul_mat_set_prec(NULL, GGML_PREC_F32), (struct ggml_tensor *) NULL));
    EXPECT_FAIL_T("ggml_mul_mat_set_prec", (ggml_mul_mat_set_prec(a, GGML_PREC_F32), (struct ggml_tensor *) NULL));
    struct ggml_tensor * mm = ggml_mul_mat(ctx, a, a);
    EXPECT_FAIL_T("ggml_mul_mat_set_prec", (ggml_mul_mat_set_prec(mm, (enum ggml_prec) 7), (struct ggml_tensor *) NULL));
    T_CHECK(P_I32(mm, 0) == GGML_PREC_DEFAULT);
    ggml_free(ctx);
}

static void test_bad_binary(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(8, 6, 4, 2);
    struct ggml_tensor * b = F32(3, 6, 1, 1);
    struct ggml_tensor * (*const fns[])(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *) = {
        ggml_add, ggml_add_inplace, ggml_sub, ggml_sub_inplace, ggml_mul, ggml_mul_inplace, ggml_div,
        ggml_div_inplace, ggml_add1, ggml_add1_inplace,
    };
    const char * names[] = {
        "ggml_add", "ggml_add_inplace", "ggml_sub", "ggml_sub_inplace", "ggml_mul", "ggml_mul_inplace", "ggml_div",
        "ggml_div_inplace", "ggml_add1", "ggml_add1_inplace",
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        EXPECT_FAIL(names[i], fns[i](ctx, NULL, a));
        EXPECT_FAIL(names[i], fns[i](ctx, a, NULL));
        EXPECT_FAIL(names[i], fns[i](ctx, a, b));
    }
    EXPECT_FAIL("ggml_add", ggml_add(ctx, b, a)); // the big one must be a
    EXPECT_FAIL("ggml_mul", ggml_mul(ctx, F32(4, 1, 1, 1), F32(0, 1, 1, 1)));
    EXPECT_FAIL("ggml_add1", ggml_add1(ctx, a, F32(2, 1, 1, 1)));
    EXPECT_FAIL("ggml_add1", ggml_add1(ctx, ggml_transpose(ctx, a), F32(1, 1, 1, 1)));

    struct ggml_tensor * h = F16(8, 6, 4, 2);
    EXPECT_FAIL("ggml_add_cast", ggml_add_cast(ctx, NULL, a, GGML_TYPE_F32));
    EXPECT_FAIL("ggml_add_cast", ggml_add_cast(ctx, h, NULL, GGML_TYPE_F32));
    EXPECT_FAIL("ggml_add_cast", ggml_add_cast(ctx, a, a, GGML_TYPE_F32)); // a F32
    EXPECT_FAIL("ggml_add_cast", ggml_add_cast(ctx, h, b, GGML_TYPE_F32));
    EXPECT_FAIL("ggml_add_cast", ggml_add_cast(ctx, h, a, (enum ggml_type) 4));
    EXPECT_FAIL("ggml_add_cast", ggml_add_cast(ctx, h, a, GGML_TYPE_COUNT));
    EXPECT_FAIL("ggml_add_cast", ggml_add_cast(ctx, h, a, GGML_TYPE_Q4_0)); // ne0 8 not a multiple of 32

    struct ggml_tensor * w = F32(3, 2, 1, 1);
    const size_t n1 = a->nb[1], n2 = a->nb[2], n3 = a->nb[3];
    const char * accs[] = { "ggml_acc", "ggml_acc_inplace" };
    struct ggml_tensor * (*const acc_fns[])(struct ggml_context *, struct ggml_tensor *, struct ggml_tensor *, size_t,
                                            size_t, size_t, size_t) = { ggml_acc, ggml_acc_inplace };
    for (int i = 0; i < 2; i++) {
        EXPECT_FAIL_T(accs[i], acc_fns[i](NULL, a, w, n1, n2, n3, 0));
        EXPECT_FAIL(accs[i], acc_fns[i](ctx, NULL, w, n1, n2, n3, 0));
        EXPECT_FAIL(accs[i], acc_fns[i](ctx, a, NULL, n1, n2, n3, 0));
        EXPECT_FAIL(accs[i], acc_fns[i](ctx, h, w, n1, n2, n3, 0));                       // a F16
        EXPECT_FAIL(accs[i], acc_fns[i](ctx, a, F16(3, 2, 1, 1), n1, n2, n3, 0));          // b F16
        EXPECT_FAIL(accs[i], acc_fns[i](ctx, a, w, n1, n2, n3, ggml_nbytes(a)));           // window past the end
        EXPECT_FAIL(accs[i], acc_fns[i](ctx, a, w, n1, n2, n3, ggml_nbytes(a) - 2 * sizeof(float)));
        EXPECT_FAIL(accs[i], acc_fns[i](ctx, a, w, n1, n2, n3, 2));                        // misaligned
        EXPECT_FAIL(accs[i], acc_fns[i](ctx, a, w, 1ull << 40, n2, n3, 0));                // does not fit int32
        EXPECT_FAIL(accs[i], acc_fns[i](ctx, a, w, 1ull << 30, n2, n3, 0));                // window outside
        EXPECT_FAIL(accs[i], acc_fns[i](ctx, a, F32(8, 6, 4, 3), n1, n2, n3, 0));          // b larger than a
        EXPECT_FAIL(accs[i], acc_fns[i](ctx, ggml_transpose(ctx, a), w, n1, n2, n3, 0));   // a not contiguous
    }
    ggml_free(ctx);
}

static void test_bad_unary(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(4, 3, 2, 1);
    struct ggml_tensor * (*const fns[])(struct ggml_context *, struct ggml_tensor *) = {
        ggml_sqr, ggml_sqr_inplace, ggml_sqrt, ggml_sqrt_inplace, ggml_log, ggml_log_inplace,
        ggml_abs, ggml_abs_inplace, ggml_sgn, ggml_sgn_inplace, ggml_neg, ggml_neg_inplace,
        ggml_step, ggml_step_inplace, ggml_tanh, ggml_tanh_inplace, ggml_elu, ggml_elu_inplace,
        ggml_relu, ggml_relu_inplace, ggml_gelu, ggml_gelu_inplace, ggml_gelu_quick, ggml_gelu_quick_inplace,
        ggml_silu, ggml_silu_inplace, ggml_sum, ggml_sum_rows, ggml_mean, ggml_argmax, ggml_dup,
        ggml_dup_inplace, ggml_cont, ggml_diag, ggml_soft_max, ggml_soft_max_inplace,
    };
    const char * names[] = {
        "ggml_sqr", "ggml_sqr_inplace", "ggml_sqrt", "ggml_sqrt_inplace", "ggml_log", "ggml_log_inplace",
        "ggml_abs", "ggml_abs_inplace", "ggml_sgn", "ggml_sgn_inplace", "ggml_neg", "ggml_neg_inplace",
        "ggml_step", "ggml_step_inplace", "ggml_tanh", "ggml_tanh_inplace", "ggml_elu", "ggml_elu_inplace",
        "ggml_relu", "ggml_relu_inplace", "ggml_gelu", "ggml_gelu_inplace", "ggml_gelu_quick",
        "ggml_gelu_quick_inplace", "ggml_silu", "ggml_silu_inplace", "ggml_sum", "ggml_sum_rows", "ggml_mean",
        "ggml_argmax", "ggml_dup", "ggml_dup_inplace", "ggml_cont", "ggml_diag", "ggml_soft_max",
        "ggml_soft_max_inplace",
    };
    T_CHECK(sizeof(fns) / sizeof(fns[0]) == sizeof(names) / sizeof(names[0]));
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        EXPECT_FAIL(names[i], fns[i](ctx, NULL));
        EXPECT_FAIL_T(names[i], fns[i](NULL, NULL));
    }
    EXPECT_FAIL("ggml_unary", ggml_unary(ctx, NULL, GGML_UNARY_OP_ABS));
    EXPECT_FAIL("ggml_unary", ggml_unary(ctx, a, GGML_UNARY_OP_COUNT));
    EXPECT_FAIL("ggml_unary", ggml_unary(ctx, a, (enum ggml_unary_op) -1));
    EXPECT_FAIL("ggml_unary_inplace", ggml_unary_inplace(ctx, a, (enum ggml_unary_op) 99));
    EXPECT_FAIL("ggml_unary_inplace", ggml_unary_inplace(ctx, NULL, GGML_UNARY_OP_RELU));
    EXPECT_FAIL("ggml_leaky_relu", ggml_leaky_relu(ctx, NULL, 0.1f, false));
    EXPECT_FAIL("ggml_leaky_relu", ggml_leaky_relu(ctx, NULL, 0.1f, true));
    EXPECT_FAIL("ggml_scale", ggml_scale(ctx, NULL, 1.0f));
    EXPECT_FAIL("ggml_scale", ggml_scale(ctx, ggml_transpose(ctx, a), 1.0f));
    EXPECT_FAIL("ggml_scale_inplace", ggml_scale_inplace(ctx, NULL, 1.0f));
    EXPECT_FAIL("ggml_scale_inplace", ggml_scale_inplace(ctx, ggml_permute(ctx, a, 0, 2, 1, 3), 1.0f));
    EXPECT_FAIL("ggml_clamp", ggml_clamp(ctx, NULL, 0.0f, 1.0f));
    EXPECT_FAIL("ggml_argmax", ggml_argmax(ctx, a)); // not a matrix
    EXPECT_FAIL("ggml_diag", ggml_diag(ctx, a));     // ne1 != 1
    ggml_free(ctx);
}

static void test_bad_layout(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(6, 4, 3, 2);

    EXPECT_FAIL("ggml_cpy", ggml_cpy(ctx, NULL, a));
    EXPECT_FAIL("ggml_cpy", ggml_cpy(ctx, a, NULL));
    EXPECT_FAIL("ggml_cpy", ggml_cpy(ctx, a, F32(6, 4, 3, 1)));
    EXPECT_FAIL("ggml_cast", ggml_cast(ctx, NULL, GGML_TYPE_F16));
    EXPECT_FAIL("ggml_cast", ggml_cast(ctx, a, (enum ggml_type) 5));
    EXPECT_FAIL("ggml_cast", ggml_cast(ctx, a, (enum ggml_type) 1000));
    EXPECT_FAIL("ggml_cast", ggml_cast(ctx, a, GGML_TYPE_Q8_0));

    EXPECT_FAIL("ggml_cont_1d", ggml_cont_1d(ctx, NULL, 4));
    EXPECT_FAIL("ggml_cont_1d", ggml_cont_1d(ctx, a, 143));
    EXPECT_FAIL("ggml_cont_2d", ggml_cont_2d(ctx, a, 12, 11));
    EXPECT_FAIL("ggml_cont_2d", ggml_cont_2d(ctx, a, -12, -12));
    EXPECT_FAIL("ggml_cont_3d", ggml_cont_3d(ctx, a, 2, 6, 11));
    EXPECT_FAIL("ggml_cont_3d", ggml_cont_3d(ctx, NULL, 2, 6, 11));
    EXPECT_FAIL("ggml_cont_4d", ggml_cont_4d(ctx, a, 2, 3, 4, 7));
    EXPECT_FAIL("ggml_cont_4d", ggml_cont_4d(ctx, a, 1LL << 62, 1LL << 62, 4, 7));
    EXPECT_FAIL("ggml_cont_4d", ggml_cont_4d(ctx, NEW(GGML_TYPE_Q4_0, 64, 2, 1, 1), 16, 8, 1, 1)); // block size

    EXPECT_FAIL("ggml_repeat", ggml_repeat(ctx, NULL, a));
    EXPECT_FAIL("ggml_repeat", ggml_repeat(ctx, a, NULL));
    EXPECT_FAIL("ggml_repeat", ggml_repeat(ctx, F32(4, 1, 1, 1), a));
    EXPECT_FAIL("ggml_repeat", ggml_repeat(ctx, a, F32(6, 4, 3, 1)));

    EXPECT_FAIL("ggml_concat", ggml_concat(ctx, NULL, a));
    EXPECT_FAIL("ggml_concat", ggml_concat(ctx, a, NULL));
    EXPECT_FAIL("ggml_concat", ggml_concat(ctx, a, F32(5, 4, 3, 2)));
    EXPECT_FAIL("ggml_concat", ggml_concat(ctx, a, F32(6, 3, 3, 2)));
    EXPECT_FAIL("ggml_concat", ggml_concat(ctx, a, F32(6, 4, 3, 1)));
    EXPECT_FAIL("ggml_concat", ggml_concat(ctx, a, F16(6, 4, 3, 2)));

    struct ggml_tensor * rows = I32(5, 3, 2, 1);
    EXPECT_FAIL("ggml_get_rows", ggml_get_rows(ctx, NULL, rows));
    EXPECT_FAIL("ggml_get_rows", ggml_get_rows(ctx, a, NULL));
    EXPECT_FAIL("ggml_get_rows", ggml_get_rows(ctx, a, F32(5, 3, 2, 1)));   // indices F32
    EXPECT_FAIL("ggml_get_rows", ggml_get_rows(ctx, a, I32(5, 2, 2, 1)));   // a2 != b1
    EXPECT_FAIL("ggml_get_rows", ggml_get_rows(ctx, a, I32(5, 3, 1, 1)));   // a3 != b2
    EXPECT_FAIL("ggml_get_rows", ggml_get_rows(ctx, a, I32(5, 3, 2, 2)));   // b3 != 1

    EXPECT_FAIL("ggml_diag", ggml_diag(ctx, NULL));

    struct ggml_tensor * w = F32(3, 2, 1, 1);
    const size_t n1 = a->nb[1], n2 = a->nb[2], n3 = a->nb[3];
    EXPECT_FAIL("ggml_set", ggml_set(ctx, NULL, w, n1, n2, n3, 0));
    EXPECT_FAIL("ggml_set", ggml_set(ctx, a, NULL, n1, n2, n3, 0));
    EXPECT_FAIL_T("ggml_set", ggml_set(NULL, a, w, n1, n2, n3, 0));
    EXPECT_FAIL("ggml_set", ggml_set(ctx, a, F16(3, 2, 1, 1), n1, n2, n3, 0));
    EXPECT_FAIL("ggml_set", ggml_set(ctx, a, w, n1, n2, n3, ggml_nbytes(a) - 4));
    EXPECT_FAIL("ggml_set", ggml_set(ctx, a, w, n1, n2, n3, 6));
    EXPECT_FAIL("ggml_set", ggml_set(ctx, ggml_transpose(ctx, a), w, n1, n2, n3, 0));
    EXPECT_FAIL("ggml_set", ggml_set(ctx, NEW(GGML_TYPE_Q8_0, 32, 1, 1, 1), NEW(GGML_TYPE_Q8_0, 32, 1, 1, 1), 34, 34, 34, 0));
    EXPECT_FAIL("ggml_set_inplace", ggml_set_inplace(ctx, a, w, n1, n2, n3, ggml_nbytes(a)));
    EXPECT_FAIL("ggml_set_inplace", ggml_set_inplace(ctx, a, NULL, n1, n2, n3, 0));
    EXPECT_FAIL("ggml_set_1d", ggml_set_1d(ctx, a, F32(10, 1, 1, 1), ggml_nbytes(a) - 9 * sizeof(float)));
    EXPECT_FAIL("ggml_set_1d", ggml_set_1d(ctx, NULL, w, 0));
    EXPECT_FAIL("ggml_set_1d", ggml_set_1d(ctx, a, F32(145, 1, 1, 1), 0));
    EXPECT_FAIL("ggml_set_1d_inplace", ggml_set_1d_inplace(ctx, a, w, 1ull << 33));
    EXPECT_FAIL("ggml_set_1d_inplace", ggml_set_1d_inplace(ctx, a, NULL, 0));
    EXPECT_FAIL("ggml_set_2d", ggml_set_2d(ctx, a, F32(3, 100, 1, 1), n1, 0));
    EXPECT_FAIL("ggml_set_2d", ggml_set_2d(ctx, a, w, n1, 3));
    EXPECT_FAIL("ggml_set_2d", ggml_set_2d(ctx, NULL, w, n1, 0));
    EXPECT_FAIL("ggml_set_2d_inplace", ggml_set_2d_inplace(ctx, a, w, ggml_nbytes(a), 0));
    EXPECT_FAIL("ggml_set_2d_inplace", ggml_set_2d_inplace(ctx, a, NULL, n1, 0));
    ggml_free(ctx);
}

static void test_bad_matmul(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(16, 5, 2, 1);
    struct ggml_tensor * b = F32(16, 7, 4, 3);

    EXPECT_FAIL("ggml_mul_mat", ggml_mul_mat(ctx, NULL, b));
    EXPECT_FAIL("ggml_mul_mat", ggml_mul_mat(ctx, a, NULL));
    EXPECT_FAIL("ggml_mul_mat", ggml_mul_mat(ctx, a, F32(15, 7, 4, 3)));
    EXPECT_FAIL("ggml_mul_mat", ggml_mul_mat(ctx, a, F32(16, 7, 3, 3)));
    EXPECT_FAIL("ggml_mul_mat", ggml_mul_mat(ctx, F32(16, 5, 1, 2), F32(16, 7, 4, 3)));
    EXPECT_FAIL("ggml_mul_mat", ggml_mul_mat(ctx, ggml_transpose(ctx, F32(5, 16, 1, 1)), F32(16, 7, 1, 1)));

    struct ggml_tensor * as[3] = { F32(16, 5, 1, 1), F32(16, 5, 1, 1), F32(16, 5, 1, 1) };
    struct ggml_tensor * ids = I32(3, 7, 1, 1);
    struct ggml_tensor * x = F32(16, 7, 1, 1);
    EXPECT_FAIL_T("ggml_mul_mat_id", ggml_mul_mat_id(NULL, as, 3, ids, 0, x));
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, NULL, 3, ids, 0, x));
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as, 3, NULL, 0, x));
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as, 3, ids, 0, NULL));
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as, 0, ids, 0, x));
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as, -1, ids, 0, x));
    struct ggml_tensor * as9[9];
    for (int i = 0; i < 9; i++) {
        as9[i] = as[0];
    }
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as9, 9, ids, 0, x));
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as, 3, ids, 3, x));  // id out of range
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as, 3, ids, -1, x));
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as, 3, F32(3, 7, 1, 1), 0, x));
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as, 3, I32(3, 6, 1, 1), 0, x));
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as, 3, I32(3, 7, 2, 1), 0, F32(16, 7, 2, 1)));
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as, 3, ids, 0, F32(16, 7, 2, 1)));
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, as, 3, ids, 0, F32(12, 7, 1, 1)));
    struct ggml_tensor * mixed_shape[3] = { as[0], F32(16, 6, 1, 1), as[2] };
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, mixed_shape, 3, ids, 0, x));
    struct ggml_tensor * mixed_type[3] = { as[0], as[1], F16(16, 5, 1, 1) };
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, mixed_type, 3, ids, 0, x));
    struct ggml_tensor * with_null[3] = { as[0], NULL, as[2] };
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, with_null, 3, ids, 0, x));
    struct ggml_tensor * transposed[1] = { ggml_transpose(ctx, F32(5, 16, 1, 1)) };
    EXPECT_FAIL("ggml_mul_mat_id", ggml_mul_mat_id(ctx, transposed, 1, ids, 0, x));

    EXPECT_FAIL("ggml_out_prod", ggml_out_prod(ctx, NULL, b));
    EXPECT_FAIL("ggml_out_prod", ggml_out_prod(ctx, a, NULL));
    EXPECT_FAIL("ggml_out_prod", ggml_out_prod(ctx, F32(6, 8, 1, 1), F32(5, 7, 1, 1)));
    EXPECT_FAIL("ggml_out_prod", ggml_out_prod(ctx, F32(6, 8, 3, 1), F32(5, 8, 4, 1)));
    EXPECT_FAIL("ggml_out_prod", ggml_out_prod(ctx, F32(6, 8, 1, 2), F32(5, 8, 1, 3)));
    EXPECT_FAIL("ggml_out_prod", ggml_out_prod(ctx, ggml_transpose(ctx, F32(8, 6, 1, 1)), F32(5, 6, 1, 1)));
    ggml_free(ctx);
}

static void test_bad_norm(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(8, 4, 6, 1);
    EXPECT_FAIL("ggml_norm", ggml_norm(ctx, NULL, 1e-5f));
    EXPECT_FAIL("ggml_norm", ggml_norm(ctx, a, -1.0f));
    EXPECT_FAIL("ggml_norm", ggml_norm(ctx, a, NAN));
    EXPECT_FAIL("ggml_norm_inplace", ggml_norm_inplace(ctx, NULL, 1e-5f));
    EXPECT_FAIL("ggml_norm_inplace", ggml_norm_inplace(ctx, a, -1e-5f));
    EXPECT_FAIL("ggml_rms_norm", ggml_rms_norm(ctx, NULL, 1e-5f));
    EXPECT_FAIL("ggml_rms_norm", ggml_rms_norm(ctx, a, -1.0f));
    EXPECT_FAIL("ggml_rms_norm_inplace", ggml_rms_norm_inplace(ctx, NULL, 1e-5f));
    EXPECT_FAIL_T("ggml_rms_norm_inplace", ggml_rms_norm_inplace(NULL, a, 1e-5f));
    EXPECT_FAIL("ggml_group_norm", ggml_group_norm(ctx, NULL, 2));
    EXPECT_FAIL("ggml_group_norm", ggml_group_norm(ctx, a, 0));
    EXPECT_FAIL("ggml_group_norm", ggml_group_norm(ctx, a, -3));
    EXPECT_FAIL("ggml_group_norm_inplace", ggml_group_norm_inplace(ctx, a, 0));
    EXPECT_FAIL("ggml_group_norm_inplace", ggml_group_norm_inplace(ctx, NULL, 1));
    ggml_free(ctx);
}

static void test_bad_attention(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(10, 8, 4, 1);

    EXPECT_FAIL("ggml_diag_mask_inf", ggml_diag_mask_inf(ctx, NULL, 0));
    EXPECT_FAIL("ggml_diag_mask_inf_inplace", ggml_diag_mask_inf_inplace(ctx, NULL, 0));
    EXPECT_FAIL("ggml_diag_mask_zero", ggml_diag_mask_zero(ctx, NULL, 0));
    EXPECT_FAIL_T("ggml_diag_mask_zero_inplace", ggml_diag_mask_zero_inplace(NULL, a, 0));

    EXPECT_FAIL("ggml_soft_max_ext", ggml_soft_max_ext(ctx, NULL, NULL, 1.0f));
    EXPECT_FAIL("ggml_soft_max_ext", ggml_soft_max_ext(ctx, a, F16(10, 8, 1, 1), 1.0f));
    EXPECT_FAIL("ggml_soft_max_ext", ggml_soft_max_ext(ctx, a, F32(9, 8, 1, 1), 1.0f));
    EXPECT_FAIL("ggml_soft_max_ext", ggml_soft_max_ext(ctx, a, F32(10, 3, 1, 1), 1.0f));
    EXPECT_FAIL("ggml_soft_max_ext", ggml_soft_max_ext(ctx, a, F32(10, 8, 4, 1), 1.0f));
    EXPECT_FAIL("ggml_soft_max_ext", ggml_soft_max_ext(ctx, a, ggml_transpose(ctx, F32(8, 10, 1, 1)), 1.0f));

    struct ggml_tensor * x = F32(16, 4, 3, 1);
    struct ggml_tensor * pos = I32(3, 1, 1, 1);
    EXPECT_FAIL("ggml_rope", ggml_rope(ctx, NULL, pos, 16, 0, 0));
    EXPECT_FAIL("ggml_rope", ggml_rope(ctx, x, NULL, 16, 0, 0));
    EXPECT_FAIL("ggml_rope", ggml_rope(ctx, x, F32(3, 1, 1, 1), 16, 0, 0));
    EXPECT_FAIL("ggml_rope", ggml_rope(ctx, x, I32(4, 1, 1, 1), 16, 0, 0));
    EXPECT_FAIL("ggml_rope", ggml_rope(ctx, x, I32(3, 2, 1, 1), 16, 0, 0));
    EXPECT_FAIL("ggml_rope", ggml_rope(ctx, x, pos, 0, 0, 0));
    EXPECT_FAIL("ggml_rope", ggml_rope(ctx, x, pos, -2, 2, 0));
    EXPECT_FAIL("ggml_rope", ggml_rope(ctx, x, pos, 18, 2, 0));
    EXPECT_FAIL("ggml_rope_inplace", ggml_rope_inplace(ctx, x, pos, 18, 0, 0));
    EXPECT_FAIL("ggml_rope_inplace", ggml_rope_inplace(ctx, NULL, pos, 8, 0, 0));
    EXPECT_FAIL("ggml_rope_custom", ggml_rope_custom(ctx, x, pos, 0, 0, 0, 0, 10000.0f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f));
    EXPECT_FAIL("ggml_rope_custom", ggml_rope_custom(ctx, x, F32(3, 1, 1, 1), 8, 0, 0, 0, 1e4f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f));
    EXPECT_FAIL("ggml_rope_custom_inplace",
                ggml_rope_custom_inplace(ctx, x, I32(2, 1, 1, 1), 8, 0, 0, 0, 1e4f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f));
    EXPECT_FAIL_T("ggml_rope_custom_inplace",
                ggml_rope_custom_inplace(NULL, x, pos, 8, 0, 0, 0, 1e4f, 1.0f, 0.0f, 1.0f, 32.0f, 1.0f));

    EXPECT_FAIL("ggml_alibi", ggml_alibi(ctx, NULL, 0, 4, 8.0f));
    EXPECT_FAIL("ggml_alibi", ggml_alibi(ctx, a, -1, 4, 8.0f));
    EXPECT_FAIL("ggml_alibi", ggml_alibi(ctx, a, 0, 3, 8.0f));
    EXPECT_FAIL("ggml_alibi", ggml_alibi(ctx, a, 0, 0, 8.0f));
    ggml_free(ctx);
}

static void test_bad_conv(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * k2 = F16(3, 3, 2, 4);
    struct ggml_tensor * in2 = F32(10, 8, 2, 1);
    struct ggml_tensor * k1 = F16(3, 2, 5, 1);
    struct ggml_tensor * in1 = F32(10, 2, 1, 1);

    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, NULL, in2, 1, 1, 0, 0, 1, 1, true));
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k2, NULL, 1, 1, 0, 0, 1, 1, true));
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, F32(3, 3, 2, 4), in2, 1, 1, 0, 0, 1, 1, true)); // kernel F32
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k2, F16(10, 8, 2, 1), 1, 1, 0, 0, 1, 1, true)); // input F16
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k2, in2, 0, 1, 0, 0, 1, 1, true));
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k2, in2, 1, 0, 0, 0, 1, 1, true));
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k2, in2, 1, 1, -1, 0, 1, 1, true));
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k2, in2, 1, 1, 0, -1, 1, 1, true));
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k2, in2, 1, 1, 0, 0, 0, 1, true));
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k2, in2, 1, 1, 0, 0, 1, -1, true));
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k2, F32(10, 8, 3, 1), 1, 1, 0, 0, 1, 1, true)); // channels
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k2, F32(2, 8, 2, 1), 1, 1, 0, 0, 1, 1, true));  // kernel too wide
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k2, in2, 1, 1, 0, 0, 1, 5, true));              // dilated too tall
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k1, F32(10, 3, 1, 1), 1, 0, 0, 0, 1, 0, false)); // channels
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k1, F32(2, 2, 1, 1), 1, 0, 0, 0, 1, 0, false));
    EXPECT_FAIL("ggml_im2col", ggml_im2col(ctx, k1, F32(10, 2, 1, 2), 1, 0, 0, 0, 1, 0, false)); // 4-D 1-D input

    EXPECT_FAIL("ggml_conv_1d", ggml_conv_1d(ctx, NULL, in1, 1, 0, 1));
    EXPECT_FAIL("ggml_conv_1d", ggml_conv_1d(ctx, k1, NULL, 1, 0, 1));
    EXPECT_FAIL("ggml_conv_1d", ggml_conv_1d(ctx, k1, in1, 0, 0, 1));
    EXPECT_FAIL("ggml_conv_1d", ggml_conv_1d(ctx, k1, in1, 1, 0, 0));
    EXPECT_FAIL("ggml_conv_1d", ggml_conv_1d(ctx, k1, F32(10, 3, 1, 1), 1, 0, 1));
    EXPECT_FAIL("ggml_conv_1d", ggml_conv_1d(ctx, ggml_permute(ctx, F16(3, 5, 2, 1), 0, 2, 1, 3), in1, 1, 0, 1));
    EXPECT_FAIL("ggml_conv_1d_ph", ggml_conv_1d_ph(ctx, NULL, in1, 1, 1));
    EXPECT_FAIL("ggml_conv_1d_ph", ggml_conv_1d_ph(ctx, k1, in1, 0, 1));
    EXPECT_FAIL("ggml_conv_2d", ggml_conv_2d(ctx, NULL, in2, 1, 1, 0, 0, 1, 1));
    EXPECT_FAIL("ggml_conv_2d", ggml_conv_2d(ctx, k2, NULL, 1, 1, 0, 0, 1, 1));
    EXPECT_FAIL("ggml_conv_2d", ggml_conv_2d(ctx, k2, in2, 1, 0, 0, 0, 1, 1));
    EXPECT_FAIL("ggml_conv_2d", ggml_conv_2d(ctx, k2, F32(10, 8, 5, 1), 1, 1, 0, 0, 1, 1));
    EXPECT_FAIL("ggml_conv_2d", ggml_conv_2d(ctx, F32(3, 3, 2, 4), in2, 1, 1, 0, 0, 1, 1));
    EXPECT_FAIL("ggml_conv_2d_sk_p0", ggml_conv_2d_sk_p0(ctx, NULL, in2));
    EXPECT_FAIL("ggml_conv_2d_sk_p0", ggml_conv_2d_sk_p0(ctx, k2, F32(10, 8, 3, 1)));
    EXPECT_FAIL("ggml_conv_2d_sk_p0", ggml_conv_2d_sk_p0(ctx, F16(11, 3, 2, 4), in2));
    EXPECT_FAIL("ggml_conv_2d_s1_ph", ggml_conv_2d_s1_ph(ctx, NULL, in2));
    EXPECT_FAIL("ggml_conv_2d_s1_ph", ggml_conv_2d_s1_ph(ctx, k2, NULL));
    EXPECT_FAIL("ggml_conv_2d_s1_ph", ggml_conv_2d_s1_ph(ctx, k2, F32(10, 8, 3, 1)));

    struct ggml_tensor * kt = F32(3, 4, 5, 1);
    struct ggml_tensor * it = F32(10, 5, 1, 1);
    EXPECT_FAIL("ggml_conv_transpose_1d", ggml_conv_transpose_1d(ctx, NULL, it, 1, 0, 1));
    EXPECT_FAIL("ggml_conv_transpose_1d", ggml_conv_transpose_1d(ctx, kt, NULL, 1, 0, 1));
    EXPECT_FAIL("ggml_conv_transpose_1d", ggml_conv_transpose_1d(ctx, kt, it, 0, 0, 1));
    EXPECT_FAIL("ggml_conv_transpose_1d", ggml_conv_transpose_1d(ctx, kt, it, 1, 1, 1));
    EXPECT_FAIL("ggml_conv_transpose_1d", ggml_conv_transpose_1d(ctx, kt, it, 1, 0, 2));
    EXPECT_FAIL("ggml_conv_transpose_1d", ggml_conv_transpose_1d(ctx, kt, F32(10, 4, 1, 1), 1, 0, 1));
    EXPECT_FAIL("ggml_conv_transpose_1d", ggml_conv_transpose_1d(ctx, kt, F32(10, 5, 2, 1), 1, 0, 1));
    EXPECT_FAIL("ggml_conv_transpose_1d", ggml_conv_transpose_1d(ctx, F32(3, 4, 5, 2), it, 1, 0, 1));
    EXPECT_FAIL("ggml_conv_transpose_1d", ggml_conv_transpose_1d(ctx, I32(3, 4, 5, 1), it, 1, 0, 1));
    EXPECT_FAIL("ggml_conv_transpose_1d", ggml_conv_transpose_1d(ctx, kt, F16(10, 5, 1, 1), 1, 0, 1));

    EXPECT_FAIL("ggml_conv_transpose_2d_p0", ggml_conv_transpose_2d_p0(ctx, NULL, in2, 1));
    EXPECT_FAIL("ggml_conv_transpose_2d_p0", ggml_conv_transpose_2d_p0(ctx, F16(3, 3, 4, 2), NULL, 1));
    EXPECT_FAIL("ggml_conv_transpose_2d_p0", ggml_conv_transpose_2d_p0(ctx, F16(3, 3, 4, 2), in2, 0));
    EXPECT_FAIL("ggml_conv_transpose_2d_p0", ggml_conv_transpose_2d_p0(ctx, F16(3, 3, 4, 3), in2, 1));
    EXPECT_FAIL("ggml_conv_transpose_2d_p0", ggml_conv_transpose_2d_p0(ctx, F32(3, 3, 4, 2), in2, 1));

    struct ggml_tensor * p = F32(10, 3, 1, 1);
    EXPECT_FAIL("ggml_pool_1d", ggml_pool_1d(ctx, NULL, GGML_OP_POOL_MAX, 2, 2, 0));
    EXPECT_FAIL("ggml_pool_1d", ggml_pool_1d(ctx, p, GGML_OP_POOL_COUNT, 2, 2, 0));
    EXPECT_FAIL("ggml_pool_1d", ggml_pool_1d(ctx, p, (enum ggml_op_pool) -1, 2, 2, 0));
    EXPECT_FAIL("ggml_pool_1d", ggml_pool_1d(ctx, p, GGML_OP_POOL_MAX, 0, 2, 0));
    EXPECT_FAIL("ggml_pool_1d", ggml_pool_1d(ctx, p, GGML_OP_POOL_MAX, 2, 0, 0));
    EXPECT_FAIL("ggml_pool_1d", ggml_pool_1d(ctx, p, GGML_OP_POOL_MAX, 2, 2, -1));
    EXPECT_FAIL("ggml_pool_1d", ggml_pool_1d(ctx, p, GGML_OP_POOL_MAX, 12, 2, 0));
    EXPECT_FAIL("ggml_pool_2d", ggml_pool_2d(ctx, NULL, GGML_OP_POOL_MAX, 2, 2, 2, 2, 0, 0));
    EXPECT_FAIL("ggml_pool_2d", ggml_pool_2d(ctx, p, GGML_OP_POOL_COUNT, 2, 2, 2, 2, 0, 0));
    EXPECT_FAIL("ggml_pool_2d", ggml_pool_2d(ctx, p, GGML_OP_POOL_AVG, 0, 2, 2, 2, 0, 0));
    EXPECT_FAIL("ggml_pool_2d", ggml_pool_2d(ctx, p, GGML_OP_POOL_AVG, 2, 0, 2, 2, 0, 0));
    EXPECT_FAIL("ggml_pool_2d", ggml_pool_2d(ctx, p, GGML_OP_POOL_AVG, 2, 2, 0, 2, 0, 0));
    EXPECT_FAIL("ggml_pool_2d", ggml_pool_2d(ctx, p, GGML_OP_POOL_AVG, 2, 2, 2, -2, 0, 0));
    EXPECT_FAIL("ggml_pool_2d", ggml_pool_2d(ctx, p, GGML_OP_POOL_AVG, 2, 2, 2, 2, -1.0f, 0));
    EXPECT_FAIL("ggml_pool_2d", ggml_pool_2d(ctx, p, GGML_OP_POOL_AVG, 2, 2, 2, 2, 0, NAN));
    EXPECT_FAIL("ggml_pool_2d", ggml_pool_2d(ctx, p, GGML_OP_POOL_AVG, 2, 5, 2, 2, 0, 0));

    EXPECT_FAIL("ggml_upscale", ggml_upscale(ctx, NULL, 2));
    EXPECT_FAIL("ggml_upscale", ggml_upscale(ctx, p, 0));
    EXPECT_FAIL("ggml_upscale", ggml_upscale(ctx, p, -2));
    EXPECT_FAIL("ggml_upscale", ggml_upscale(ctx, p, 1 << 30)); // far too large for the arena
    EXPECT_FAIL("ggml_pad", ggml_pad(ctx, NULL, 1, 1, 1, 1));
    EXPECT_FAIL("ggml_pad", ggml_pad(ctx, p, -1, 0, 0, 0));
    EXPECT_FAIL("ggml_pad", ggml_pad(ctx, p, 0, 0, 0, -5));
    ggml_free(ctx);
}

static void test_bad_sort_custom(void) {
    struct ggml_context * ctx = new_ctx(1 << 20, true);
    struct ggml_tensor * a = F32(5, 3, 2, 1);
    EXPECT_FAIL("ggml_argsort", ggml_argsort(ctx, NULL, GGML_SORT_ASC));
    EXPECT_FAIL("ggml_argsort", ggml_argsort(ctx, a, (enum ggml_sort_order) 2));
    EXPECT_FAIL("ggml_argsort", ggml_argsort(ctx, a, (enum ggml_sort_order) -1));
    EXPECT_FAIL("ggml_top_k", ggml_top_k(ctx, NULL, 1));
    EXPECT_FAIL("ggml_top_k", ggml_top_k(ctx, a, 0));
    EXPECT_FAIL("ggml_top_k", ggml_top_k(ctx, a, -1));
    EXPECT_FAIL("ggml_top_k", ggml_top_k(ctx, a, 6));

    struct ggml_tensor * b = F32(2, 2, 1, 1);
    EXPECT_FAIL("ggml_map_custom1", ggml_map_custom1(ctx, NULL, custom1, 1, NULL));
    EXPECT_FAIL("ggml_map_custom1", ggml_map_custom1(ctx, a, NULL, 1, NULL));
    EXPECT_FAIL("ggml_map_custom1", ggml_map_custom1(ctx, a, custom1, 0, NULL));
    EXPECT_FAIL("ggml_map_custom1", ggml_map_custom1(ctx, a, custom1, -2, NULL));
    EXPECT_FAIL("ggml_map_custom1_inplace", ggml_map_custom1_inplace(ctx, NULL, custom1, 1, NULL));
    EXPECT_FAIL("ggml_map_custom1_inplace", ggml_map_custom1_inplace(ctx, a, NULL, 1, NULL));
    EXPECT_FAIL("ggml_map_custom2", ggml_map_custom2(ctx, a, NULL, custom2, 1, NULL));
    EXPECT_FAIL("ggml_map_custom2", ggml_map_custom2(ctx, NULL, b, custom2, 1, NULL));
    EXPECT_FAIL("ggml_map_custom2", ggml_map_custom2(ctx, a, b, NULL, 1, NULL));
    EXPECT_FAIL("ggml_map_custom2", ggml_map_custom2(ctx, a, b, custom2, 0, NULL));
    EXPECT_FAIL("ggml_map_custom2_inplace", ggml_map_custom2_inplace(ctx, a, NULL, custom2, 1, NULL));
    EXPECT_FAIL_T("ggml_map_custom2_inplace", ggml_map_custom2_inplace(NULL, a, b, custom2, 1, NULL));
    EXPECT_FAIL("ggml_map_custom3", ggml_map_custom3(ctx, a, b, NULL, custom3, 1, NULL));
    EXPECT_FAIL("ggml_map_custom3", ggml_map_custom3(ctx, a, b, b, NULL, 1, NULL));
    EXPECT_FAIL("ggml_map_custom3", ggml_map_custom3(ctx, a, b, b, custom3, -5, NULL));
    EXPECT_FAIL("ggml_map_custom3_inplace", ggml_map_custom3_inplace(ctx, a, NULL, b, custom3, 1, NULL));
    EXPECT_FAIL("ggml_map_custom3_inplace", ggml_map_custom3_inplace(ctx, a, b, b, custom3, 0, NULL));
    ggml_free(ctx);
}

// ---------------------------------------------------------------------------------------------
// arena full: every constructor eventually returns NULL instead of aborting

static void test_arena_full(void) {
    const size_t overhead = ggml_tensor_overhead();
    for (int which = 0; which < 12; which++) {
        // room for the inputs and a few more tensors, then the arena runs out
        struct ggml_context * ctx = new_ctx(7 * overhead, true);
        T_CHECK(ctx != NULL);
        if (ctx == NULL) {
            return;
        }
        struct ggml_tensor * a = F16(3, 3, 2, 4);
        struct ggml_tensor * b = F32(10, 8, 2, 1);
        T_CHECK(a != NULL && b != NULL);
        struct ggml_tensor * r = a;
        int steps = 0;
        const char * fn = "";
        while (r != NULL && steps < 100) {
            switch (which) {
                case 0:  fn = "ggml_add";          r = ggml_add(ctx, b, b); break;
                case 1:  fn = "ggml_add_inplace";  r = ggml_add_inplace(ctx, b, b); break;
                case 2:  fn = "ggml_mul_mat";      r = ggml_mul_mat(ctx, b, b); break;
                case 3:  fn = "ggml_conv_2d";      r = ggml_conv_2d(ctx, a, b, 1, 1, 0, 0, 1, 1); break;
                case 4:  fn = "ggml_top_k";        r = ggml_top_k(ctx, b, 3); break;
                case 5:  fn = "ggml_cpy";          r = ggml_cpy(ctx, b, b); break;
                case 6:  fn = "ggml_rope";         r = ggml_rope(ctx, b, NEW(GGML_TYPE_I32, 2, 1, 1, 1), 4, 0, 0); break;
                case 7:  fn = "ggml_conv_1d";      r = ggml_conv_1d(ctx, F16(3, 8, 4, 1), b, 1, 0, 1); break;
                case 8:  fn = "ggml_soft_max_ext"; r = ggml_soft_max_ext(ctx, b, NULL, 1.0f); break;
                case 9:  fn = "ggml_set_1d";       r = ggml_set_1d(ctx, b, b, 0); break;
                case 10: fn = "ggml_map_custom1";  r = ggml_map_custom1(ctx, b, custom1, 1, NULL); break;
                default: fn = "ggml_conv_2d";      r = ggml_conv_2d(ctx, a, F32(10, 8, 2, 2), 1, 1, 0, 0, 1, 1); break;
            }
            steps++;
        }
        T_CHECK_MSG(r == NULL, "%s: the arena never filled", fn);
        const char * e = ggml_x_last_error();
        T_CHECK_MSG(e != NULL, "%s: no message for a full arena", fn);
        ggml_free(ctx);
    }
}

// default mode: a bad input prints the message and aborts, as upstream does
static void test_default_mode_aborts(void) {
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        FILE * devnull = freopen("/dev/null", "w", stderr);
        (void) devnull;
        struct ggml_context * ctx = new_ctx(1 << 16, false);
        struct ggml_tensor * a = F32(4, 3, 1, 1);
        ggml_mul_mat(ctx, a, F32(5, 3, 1, 1));
        _exit(0); // not reached when the constructor aborts
    }
    T_CHECK(pid > 0);
    int status = 0;
    waitpid(pid, &status, 0);
    T_CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "status %d", status);
}

int main(void) {
    T_RUN(test_binary_good);
    T_RUN(test_unary_good);
    T_RUN(test_reduce_good);
    T_RUN(test_layout_good);
    T_RUN(test_matmul_good);
    T_RUN(test_norm_good);
    T_RUN(test_attention_good);
    T_RUN(test_conv_good);
    T_RUN(test_sort_good);
    T_RUN(test_custom_good);
    T_RUN(test_bad_null_ctx);
    T_RUN(test_bad_binary);
    T_RUN(test_bad_unary);
    T_RUN(test_bad_layout);
    T_RUN(test_bad_matmul);
    T_RUN(test_bad_norm);
    T_RUN(test_bad_attention);
    T_RUN(test_bad_conv);
    T_RUN(test_bad_sort_custom);
    T_RUN(test_arena_full);
    T_RUN(test_default_mode_aborts);
    printf("bad-input cases checked: %d\n", n_failures_checked);
    return T_SUMMARY();
}
