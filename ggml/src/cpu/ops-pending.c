// ops-pending.c - descriptors of ops that have no CPU kernel (yet). A family file that
// implements an op defines ggml_cpu_op_<name> itself and removes the line here.

#include "../ggml-impl.h"
#include "ops.h"

const struct ggml_cpu_op ggml_cpu_op_flash_ff = { 0 };
const struct ggml_cpu_op ggml_cpu_op_win_part = { 0 };
const struct ggml_cpu_op ggml_cpu_op_win_unpart = { 0 };
const struct ggml_cpu_op ggml_cpu_op_get_rel_pos = { 0 };
const struct ggml_cpu_op ggml_cpu_op_add_rel_pos = { 0 };
