// ops-custom.c - user-supplied operators.
//
// MAP_CUSTOM1/2/3: op_params holds a struct ggml_x_map_custom_params; the function is called on
// n_tasks threads (GGML_N_TASKS_MAX: all of them) with its ith/nth and does its own split.
// MAP_CUSTOM1/2/3_F32, MAP_UNARY, MAP_BINARY (deprecated API): op_params holds the function
// pointer; they run on one thread. MAP_UNARY/MAP_BINARY call the function once per F32 row.

#include "../ggml-impl.h"
#include "rowconv.h"

static struct ggml_x_map_custom_params custom_params(const struct ggml_tensor * dst) {
    struct ggml_x_map_custom_params p;
    memcpy(&p, dst->op_params, sizeof(p));
    return p;
}

static int custom_n_tasks(const struct ggml_tensor * dst, int n_threads) {
    const struct ggml_x_map_custom_params p = custom_params(dst);
    if (p.n_tasks == GGML_N_TASKS_MAX || p.n_tasks >= n_threads) {
        return n_threads;
    }
    return p.n_tasks < 1 ? 1 : p.n_tasks;
}

static int custom_single_task(const struct ggml_tensor * dst, int n_threads) {
    (void) dst;
    (void) n_threads;
    return 1;
}

// ---------------------------------------------------------------------------------------------
// MAP_CUSTOM1/2/3

static void custom1_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_x_map_custom_params p = custom_params(dst);
    ggml_custom1_op_t fun;
    memcpy(&fun, &p.fun, sizeof(fun));
    fun(dst, dst->src[0], cc->ith, cc->nth, p.userdata);
}

static void custom2_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_x_map_custom_params p = custom_params(dst);
    ggml_custom2_op_t fun;
    memcpy(&fun, &p.fun, sizeof(fun));
    fun(dst, dst->src[0], dst->src[1], cc->ith, cc->nth, p.userdata);
}

static void custom3_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_x_map_custom_params p = custom_params(dst);
    ggml_custom3_op_t fun;
    memcpy(&fun, &p.fun, sizeof(fun));
    fun(dst, dst->src[0], dst->src[1], dst->src[2], cc->ith, cc->nth, p.userdata);
}

const struct ggml_cpu_op ggml_cpu_op_map_custom1 = { .forward = custom1_forward, .n_tasks = custom_n_tasks };
const struct ggml_cpu_op ggml_cpu_op_map_custom2 = { .forward = custom2_forward, .n_tasks = custom_n_tasks };
const struct ggml_cpu_op ggml_cpu_op_map_custom3 = { .forward = custom3_forward, .n_tasks = custom_n_tasks };

// ---------------------------------------------------------------------------------------------
// MAP_CUSTOM1/2/3_F32 (single thread)

static void custom1_f32_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    if (cc->ith != 0) {
        return;
    }
    ggml_custom1_op_f32_t fun;
    memcpy(&fun, dst->op_params, sizeof(fun));
    fun(dst, dst->src[0]);
}

static void custom2_f32_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    if (cc->ith != 0) {
        return;
    }
    ggml_custom2_op_f32_t fun;
    memcpy(&fun, dst->op_params, sizeof(fun));
    fun(dst, dst->src[0], dst->src[1]);
}

static void custom3_f32_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    if (cc->ith != 0) {
        return;
    }
    ggml_custom3_op_f32_t fun;
    memcpy(&fun, dst->op_params, sizeof(fun));
    fun(dst, dst->src[0], dst->src[1], dst->src[2]);
}

const struct ggml_cpu_op ggml_cpu_op_map_custom1_f32 = { .forward = custom1_f32_forward, .n_tasks = custom_single_task };
const struct ggml_cpu_op ggml_cpu_op_map_custom2_f32 = { .forward = custom2_f32_forward, .n_tasks = custom_single_task };
const struct ggml_cpu_op ggml_cpu_op_map_custom3_f32 = { .forward = custom3_f32_forward, .n_tasks = custom_single_task };

// ---------------------------------------------------------------------------------------------
// MAP_UNARY / MAP_BINARY: fun(n, dst_row, src0_row[, src1_row]) per row (single thread)

static bool map_same_rows(const struct ggml_tensor * a, const struct ggml_tensor * dst) {
    if (a == NULL || a->type != GGML_TYPE_F32 || a->nb[0] != sizeof(float)) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (a->ne[i] != dst->ne[i]) {
            return false;
        }
    }
    return true;
}

static bool map_unary_supports(const struct ggml_tensor * dst) {
    return dst->type == GGML_TYPE_F32 && dst->nb[0] == sizeof(float) && map_same_rows(dst->src[0], dst);
}

static bool map_binary_supports(const struct ggml_tensor * dst) {
    return map_unary_supports(dst) && map_same_rows(dst->src[1], dst);
}

static void map_unary_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    if (cc->ith != 0) {
        return;
    }
    const struct ggml_tensor * src0 = dst->src[0];
    ggml_unary_op_f32_t fun;
    memcpy(&fun, dst->op_params, sizeof(fun));
    const int n = (int) dst->ne[0];
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++) {
                float * d = (float *) rowconv_row(dst, i1, i2, i3);
                const float * a = (const float *) rowconv_row(src0, i1, i2, i3);
                fun(n, d, a);
            }
        }
    }
}

static void map_binary_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    if (cc->ith != 0) {
        return;
    }
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    ggml_binary_op_f32_t fun;
    memcpy(&fun, dst->op_params, sizeof(fun));
    const int n = (int) dst->ne[0];
    for (int64_t i3 = 0; i3 < dst->ne[3]; i3++) {
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++) {
                float * d = (float *) rowconv_row(dst, i1, i2, i3);
                const float * a = (const float *) rowconv_row(src0, i1, i2, i3);
                const float * b = (const float *) rowconv_row(src1, i1, i2, i3);
                fun(n, d, a, b);
            }
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_map_unary = {
    .forward  = map_unary_forward,
    .supports = map_unary_supports,
    .n_tasks  = custom_single_task,
};

const struct ggml_cpu_op ggml_cpu_op_map_binary = {
    .forward  = map_binary_forward,
    .supports = map_binary_supports,
    .n_tasks  = custom_single_task,
};
