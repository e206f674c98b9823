// ops-pending.c - descriptors of ops that have no CPU kernel (yet). A family file that
// implements an op defines ggml_cpu_op_<name> itself and removes the line here.

#include "../ggml-impl.h"

const struct ggml_cpu_op ggml_cpu_op_repeat_back = { 0 };
const struct ggml_cpu_op ggml_cpu_op_silu_back = { 0 };
const struct ggml_cpu_op ggml_cpu_op_rms_norm_back = { 0 };
const struct ggml_cpu_op ggml_cpu_op_get_rows_back = { 0 };
const struct ggml_cpu_op ggml_cpu_op_soft_max_back = { 0 };
const struct ggml_cpu_op ggml_cpu_op_rope_back = { 0 };
const struct ggml_cpu_op ggml_cpu_op_flash_attn = { 0 };
const struct ggml_cpu_op ggml_cpu_op_flash_ff = { 0 };
const struct ggml_cpu_op ggml_cpu_op_flash_attn_back = { 0 };
const struct ggml_cpu_op ggml_cpu_op_win_part = { 0 };
const struct ggml_cpu_op ggml_cpu_op_win_unpart = { 0 };
const struct ggml_cpu_op ggml_cpu_op_get_rel_pos = { 0 };
const struct ggml_cpu_op ggml_cpu_op_add_rel_pos = { 0 };
const struct ggml_cpu_op ggml_cpu_op_cross_entropy_loss = { 0 };
const struct ggml_cpu_op ggml_cpu_op_cross_entropy_loss_back = { 0 };
