// ggml-metal-impl.h - what the two halves of the Metal host code share: the backend's state,
// the kernel list (one pipeline state per kernel), and the functions ggml-metal-ops.m offers
// ggml-metal.m (which op the device supports, how a node is encoded).

#ifndef GGML_METAL_IMPL_H
#define GGML_METAL_IMPL_H

#import <Metal/Metal.h>

#include "ggml-metal.h"
#include "ggml-backend-impl.h"
#include "ggml-metal-kargs.h"

// every kernel of metal/*.metal the host dispatches: enum name, function name
#define GGML_METAL_KERNEL_LIST(X)                      \
    X(ADD,           "kernel_add")                     \
    X(MUL,           "kernel_mul")                     \
    X(DIV,           "kernel_div")                     \
    X(SUB,           "kernel_sub")                     \
    X(REPEAT,        "kernel_repeat")                  \
    X(CPY_RAW,       "kernel_cpy_raw")                 \
    X(UNARY,         "kernel_unary")                   \
    X(RMS_NORM,      "kernel_rms_norm")                \
    X(NORM,          "kernel_norm")                    \
    X(GROUP_NORM,    "kernel_group_norm")              \
    X(ALIBI,         "kernel_alibi")                   \
    X(PAD,           "kernel_pad")                     \
    X(UPSCALE,       "kernel_upscale")                 \
    X(CONCAT,        "kernel_concat")                  \
    X(ACC,           "kernel_acc")                     \
    X(ARGSORT,       "kernel_argsort")                 \
    X(SUM_ROWS,      "kernel_sum_rows")                \
    X(SOFT_MAX,      "kernel_soft_max")                \
    X(DIAG_MASK_INF, "kernel_diag_mask_inf")           \
    X(ROPE,          "kernel_rope")                    \
    X(GET_ROWS,      "kernel_get_rows")                \
    X(CPY,           "kernel_cpy")                     \
    X(CPY_F32_Q,     "kernel_cpy_f32_q")               \
    X(MUL_MV_F32, "kernel_mul_mv_f32_f32") \
    X(MUL_MV_F16, "kernel_mul_mv_f16_f32") \
    X(MUL_MV_Q4_0, "kernel_mul_mv_q4_0_f32") \
    X(MUL_MV_Q4_1, "kernel_mul_mv_q4_1_f32") \
    X(MUL_MV_Q5_0, "kernel_mul_mv_q5_0_f32") \
    X(MUL_MV_Q5_1, "kernel_mul_mv_q5_1_f32") \
    X(MUL_MV_Q8_0, "kernel_mul_mv_q8_0_f32") \
    X(MUL_MV_Q2_K, "kernel_mul_mv_q2_K_f32") \
    X(MUL_MV_Q3_K, "kernel_mul_mv_q3_K_f32") \
    X(MUL_MV_Q4_K, "kernel_mul_mv_q4_K_f32") \
    X(MUL_MV_Q5_K, "kernel_mul_mv_q5_K_f32") \
    X(MUL_MV_Q6_K, "kernel_mul_mv_q6_K_f32") \
    X(MUL_MV_ID_F32, "kernel_mul_mv_id_f32_f32") \
    X(MUL_MV_ID_F16, "kernel_mul_mv_id_f16_f32") \
    X(MUL_MV_ID_Q4_0, "kernel_mul_mv_id_q4_0_f32") \
    X(MUL_MV_ID_Q4_1, "kernel_mul_mv_id_q4_1_f32") \
    X(MUL_MV_ID_Q5_0, "kernel_mul_mv_id_q5_0_f32") \
    X(MUL_MV_ID_Q5_1, "kernel_mul_mv_id_q5_1_f32") \
    X(MUL_MV_ID_Q8_0, "kernel_mul_mv_id_q8_0_f32") \
    X(MUL_MV_ID_Q2_K, "kernel_mul_mv_id_q2_K_f32") \
    X(MUL_MV_ID_Q3_K, "kernel_mul_mv_id_q3_K_f32") \
    X(MUL_MV_ID_Q4_K, "kernel_mul_mv_id_q4_K_f32") \
    X(MUL_MV_ID_Q5_K, "kernel_mul_mv_id_q5_K_f32") \
    X(MUL_MV_ID_Q6_K, "kernel_mul_mv_id_q6_K_f32") \
    X(MUL_MM_F32, "kernel_mul_mm_f32_f32") \
    X(MUL_MM_F16, "kernel_mul_mm_f16_f32") \
    X(MUL_MM_Q4_0, "kernel_mul_mm_q4_0_f32") \
    X(MUL_MM_Q4_1, "kernel_mul_mm_q4_1_f32") \
    X(MUL_MM_Q5_0, "kernel_mul_mm_q5_0_f32") \
    X(MUL_MM_Q5_1, "kernel_mul_mm_q5_1_f32") \
    X(MUL_MM_Q8_0, "kernel_mul_mm_q8_0_f32") \
    X(MUL_MM_Q2_K, "kernel_mul_mm_q2_K_f32") \
    X(MUL_MM_Q3_K, "kernel_mul_mm_q3_K_f32") \
    X(MUL_MM_Q4_K, "kernel_mul_mm_q4_K_f32") \
    X(MUL_MM_Q5_K, "kernel_mul_mm_q5_K_f32") \
    X(MUL_MM_Q6_K, "kernel_mul_mm_q6_K_f32")

enum ggml_metal_kernel_id {
#define GGML_METAL_ENUM(e, name) GGML_METAL_K_##e,
    GGML_METAL_KERNEL_LIST(GGML_METAL_ENUM)
#undef GGML_METAL_ENUM
    GGML_METAL_K_COUNT
};

struct ggml_metal_context {
    id<MTLDevice>               device;
    id<MTLCommandQueue>         queue;
    id<MTLLibrary>              library;
    id<MTLComputePipelineState> pipelines[GGML_METAL_K_COUNT];
    bool                        has_simdgroup_reduction; // Apple7+ or Metal3
    int                         n_cb;                    // command buffers per graph
};

// the MTLBuffer holding t's data and t's offset in it (nil when t is not in a Metal buffer)
id<MTLBuffer> ggml_metal_tensor_buffer(const struct ggml_tensor * t, size_t * offset);

// whether ctx's device computes op
bool ggml_metal_supports_op(const struct ggml_metal_context * ctx, const struct ggml_tensor * op);

// encode node into enc; false (with a message in err) when it cannot be
bool ggml_metal_encode_node(struct ggml_metal_context * ctx, id<MTLComputeCommandEncoder> enc,
                            const struct ggml_tensor * node, char * err, size_t err_size);

// messages to the log callback
void ggml_metal_log(enum ggml_log_level level, const char * fmt, ...) __attribute__((format(printf, 2, 3)));

#endif // GGML_METAL_IMPL_H
