// custom.c - constructors of the user-defined ops: map_custom1/2/3 (+ inplace).
// op_params hold a struct ggml_x_map_custom_params { fun, n_tasks, userdata }.

#include "ops-common.h"

static struct ggml_tensor * x_map_custom(struct ggml_context * ctx, const char * fn, enum ggml_op op,
                                         int n_srcs, struct ggml_tensor * const * srcs, void * fun,
                                         int n_tasks, void * userdata, bool inplace) {
    X_CHECK_CTX(ctx, fn);
    static const char * const names[3] = { "a", "b", "c" };
    for (int i = 0; i < n_srcs; i++) {
        GGML_X_CHECK(ctx, srcs[i] != NULL, "%s: tensor argument '%s' is NULL", fn, names[i]);
    }
    GGML_X_CHECK(ctx, fun != NULL, "%s: fun is NULL", fn);
    GGML_X_CHECK(ctx, n_tasks == GGML_N_TASKS_MAX || n_tasks > 0,
                 "%s: n_tasks must be > 0 or GGML_N_TASKS_MAX (got %d)", fn, n_tasks);
    struct ggml_tensor * result = x_op_like(ctx, fn, op, srcs[0], inplace, n_srcs, srcs);
    if (result == NULL) {
        return NULL;
    }
    const struct ggml_x_map_custom_params params = { .fun = fun, .n_tasks = n_tasks, .userdata = userdata };
    ggml_x_set_op_params(result, &params, sizeof(params));
    return result;
}

// a function pointer carried as data (op_params store it as void *)
static void * x_fun_ptr(const void * fp_storage, size_t size) {
    void * p = NULL;
    memcpy(&p, fp_storage, size < sizeof(p) ? size : sizeof(p));
    return p;
}

#define X_FUN(f) x_fun_ptr(&(f), sizeof(f))

struct ggml_tensor * ggml_map_custom1(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun,
                                      int n_tasks, void * userdata) {
    struct ggml_tensor * srcs[1] = { a };
    return x_map_custom(ctx, "ggml_map_custom1", GGML_OP_MAP_CUSTOM1, 1, srcs, X_FUN(fun), n_tasks, userdata, false);
}

struct ggml_tensor * ggml_map_custom1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, ggml_custom1_op_t fun,
                                              int n_tasks, void * userdata) {
    struct ggml_tensor * srcs[1] = { a };
    return x_map_custom(ctx, "ggml_map_custom1_inplace", GGML_OP_MAP_CUSTOM1, 1, srcs, X_FUN(fun), n_tasks, userdata, true);
}

struct ggml_tensor * ggml_map_custom2(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    struct ggml_tensor * srcs[2] = { a, b };
    return x_map_custom(ctx, "ggml_map_custom2", GGML_OP_MAP_CUSTOM2, 2, srcs, X_FUN(fun), n_tasks, userdata, false);
}

struct ggml_tensor * ggml_map_custom2_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                              ggml_custom2_op_t fun, int n_tasks, void * userdata) {
    struct ggml_tensor * srcs[2] = { a, b };
    return x_map_custom(ctx, "ggml_map_custom2_inplace", GGML_OP_MAP_CUSTOM2, 2, srcs, X_FUN(fun), n_tasks, userdata, true);
}

struct ggml_tensor * ggml_map_custom3(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                      struct ggml_tensor * c, ggml_custom3_op_t fun, int n_tasks, void * userdata) {
    struct ggml_tensor * srcs[3] = { a, b, c };
    return x_map_custom(ctx, "ggml_map_custom3", GGML_OP_MAP_CUSTOM3, 3, srcs, X_FUN(fun), n_tasks, userdata, false);
}

struct ggml_tensor * ggml_map_custom3_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b,
                                              struct ggml_tensor * c, ggml_custom3_op_t fun, int n_tasks,
                                              void * userdata) {
    struct ggml_tensor * srcs[3] = { a, b, c };
    return x_map_custom(ctx, "ggml_map_custom3_inplace", GGML_OP_MAP_CUSTOM3, 3, srcs, X_FUN(fun), n_tasks, userdata, true);
}
