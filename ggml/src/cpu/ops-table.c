// ops-table.c - maps each ggml_op to its CPU kernel descriptor.

#include "../ggml-impl.h"
#include "ops.h"

static const struct ggml_cpu_op ggml_cpu_op_none_desc = { 0 };

static const struct ggml_cpu_op * const ggml_cpu_op_table[GGML_OP_COUNT] = {
    [GGML_OP_NONE]                    = &ggml_cpu_op_none_desc,
    [GGML_OP_DUP]                     = &ggml_cpu_op_dup,
    [GGML_OP_ADD]                     = &ggml_cpu_op_add,
    [GGML_OP_ADD1]                    = &ggml_cpu_op_add1,
    [GGML_OP_ACC]                     = &ggml_cpu_op_acc,
    [GGML_OP_SUB]                     = &ggml_cpu_op_sub,
    [GGML_OP_MUL]                     = &ggml_cpu_op_mul,
    [GGML_OP_DIV]                     = &ggml_cpu_op_div,
    [GGML_OP_SQR]                     = &ggml_cpu_op_sqr,
    [GGML_OP_SQRT]                    = &ggml_cpu_op_sqrt,
    [GGML_OP_LOG]                     = &ggml_cpu_op_log,
    [GGML_OP_SUM]                     = &ggml_cpu_op_sum,
    [GGML_OP_SUM_ROWS]                = &ggml_cpu_op_sum_rows,
    [GGML_OP_MEAN]                    = &ggml_cpu_op_mean,
    [GGML_OP_ARGMAX]                  = &ggml_cpu_op_argmax,
    [GGML_OP_REPEAT]                  = &ggml_cpu_op_repeat,
    [GGML_OP_REPEAT_BACK]             = &ggml_cpu_op_repeat_back,
    [GGML_OP_CONCAT]                  = &ggml_cpu_op_concat,
    [GGML_OP_SILU_BACK]               = &ggml_cpu_op_silu_back,
    [GGML_OP_NORM]                    = &ggml_cpu_op_norm,
    [GGML_OP_RMS_NORM]                = &ggml_cpu_op_rms_norm,
    [GGML_OP_RMS_NORM_BACK]           = &ggml_cpu_op_rms_norm_back,
    [GGML_OP_GROUP_NORM]              = &ggml_cpu_op_group_norm,
    [GGML_OP_MUL_MAT]                 = &ggml_cpu_op_mul_mat,
    [GGML_OP_MUL_MAT_ID]              = &ggml_cpu_op_mul_mat_id,
    [GGML_OP_OUT_PROD]                = &ggml_cpu_op_out_prod,
    [GGML_OP_SCALE]                   = &ggml_cpu_op_scale,
    [GGML_OP_SET]                     = &ggml_cpu_op_set,
    [GGML_OP_CPY]                     = &ggml_cpu_op_cpy,
    [GGML_OP_CONT]                    = &ggml_cpu_op_cont,
    [GGML_OP_RESHAPE]                 = &ggml_cpu_op_none_desc,
    [GGML_OP_VIEW]                    = &ggml_cpu_op_none_desc,
    [GGML_OP_PERMUTE]                 = &ggml_cpu_op_none_desc,
    [GGML_OP_TRANSPOSE]               = &ggml_cpu_op_none_desc,
    [GGML_OP_GET_ROWS]                = &ggml_cpu_op_get_rows,
    [GGML_OP_GET_ROWS_BACK]           = &ggml_cpu_op_get_rows_back,
    [GGML_OP_DIAG]                    = &ggml_cpu_op_diag,
    [GGML_OP_DIAG_MASK_INF]           = &ggml_cpu_op_diag_mask_inf,
    [GGML_OP_DIAG_MASK_ZERO]          = &ggml_cpu_op_diag_mask_zero,
    [GGML_OP_SOFT_MAX]                = &ggml_cpu_op_soft_max,
    [GGML_OP_SOFT_MAX_BACK]           = &ggml_cpu_op_soft_max_back,
    [GGML_OP_ROPE]                    = &ggml_cpu_op_rope,
    [GGML_OP_ROPE_BACK]               = &ggml_cpu_op_rope_back,
    [GGML_OP_ALIBI]                   = &ggml_cpu_op_alibi,
    [GGML_OP_CLAMP]                   = &ggml_cpu_op_clamp,
    [GGML_OP_CONV_TRANSPOSE_1D]       = &ggml_cpu_op_conv_transpose_1d,
    [GGML_OP_IM2COL]                  = &ggml_cpu_op_im2col,
    [GGML_OP_CONV_TRANSPOSE_2D]       = &ggml_cpu_op_conv_transpose_2d,
    [GGML_OP_POOL_1D]                 = &ggml_cpu_op_pool_1d,
    [GGML_OP_POOL_2D]                 = &ggml_cpu_op_pool_2d,
    [GGML_OP_UPSCALE]                 = &ggml_cpu_op_upscale,
    [GGML_OP_PAD]                     = &ggml_cpu_op_pad,
    [GGML_OP_ARGSORT]                 = &ggml_cpu_op_argsort,
    [GGML_OP_LEAKY_RELU]              = &ggml_cpu_op_leaky_relu,
    [GGML_OP_FLASH_ATTN]              = &ggml_cpu_op_flash_attn,
    [GGML_OP_FLASH_FF]                = &ggml_cpu_op_flash_ff,
    [GGML_OP_FLASH_ATTN_BACK]         = &ggml_cpu_op_flash_attn_back,
    [GGML_OP_WIN_PART]                = &ggml_cpu_op_win_part,
    [GGML_OP_WIN_UNPART]              = &ggml_cpu_op_win_unpart,
    [GGML_OP_GET_REL_POS]             = &ggml_cpu_op_get_rel_pos,
    [GGML_OP_ADD_REL_POS]             = &ggml_cpu_op_add_rel_pos,
    [GGML_OP_UNARY]                   = &ggml_cpu_op_unary,
    [GGML_OP_MAP_UNARY]               = &ggml_cpu_op_map_unary,
    [GGML_OP_MAP_BINARY]              = &ggml_cpu_op_map_binary,
    [GGML_OP_MAP_CUSTOM1_F32]         = &ggml_cpu_op_map_custom1_f32,
    [GGML_OP_MAP_CUSTOM2_F32]         = &ggml_cpu_op_map_custom2_f32,
    [GGML_OP_MAP_CUSTOM3_F32]         = &ggml_cpu_op_map_custom3_f32,
    [GGML_OP_MAP_CUSTOM1]             = &ggml_cpu_op_map_custom1,
    [GGML_OP_MAP_CUSTOM2]             = &ggml_cpu_op_map_custom2,
    [GGML_OP_MAP_CUSTOM3]             = &ggml_cpu_op_map_custom3,
    [GGML_OP_CROSS_ENTROPY_LOSS]      = &ggml_cpu_op_cross_entropy_loss,
    [GGML_OP_CROSS_ENTROPY_LOSS_BACK] = &ggml_cpu_op_cross_entropy_loss_back,
};

const struct ggml_cpu_op * ggml_cpu_op_get(enum ggml_op op) {
    if ((int) op < 0 || op >= GGML_OP_COUNT || ggml_cpu_op_table[op] == NULL) {
        return &ggml_cpu_op_none_desc;
    }
    return ggml_cpu_op_table[op];
}

static bool ggml_cpu_is_view_op(enum ggml_op op) {
    return op == GGML_OP_NONE || op == GGML_OP_RESHAPE || op == GGML_OP_VIEW ||
           op == GGML_OP_PERMUTE || op == GGML_OP_TRANSPOSE;
}

bool ggml_cpu_node_is_noop(const struct ggml_tensor * node) {
    return ggml_cpu_is_view_op(node->op) || ggml_nelements(node) == 0;
}

bool ggml_cpu_supports_node(const struct ggml_tensor * node) {
    if (node == NULL) {
        return false;
    }
    if (ggml_cpu_node_is_noop(node)) {
        return true;
    }
    const struct ggml_cpu_op * op = ggml_cpu_op_get(node->op);
    if (op->forward == NULL) {
        return false;
    }
    return op->supports == NULL || op->supports(node);
}
