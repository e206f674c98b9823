// ops.h - the CPU kernel contract: what every family file (cpu/ops-*.c) provides per op, how
// the engine (cpu/engine.c) runs it on several threads, and the table of kernels (cpu/ops-table.c).
// Internal to the CPU backend; the core (ggml/src outside cpu/) never includes it.

#ifndef GGML_X_CPU_OPS_H
#define GGML_X_CPU_OPS_H

#include "ggml-impl.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---------------------------------------------------------------------------------------------
// CPU kernels
//
// For every non-view node the engine calls op->forward on nth threads at once (ith = 0..nth-1).
// nth is the compute's thread count, or less when op->n_tasks says so. Each kernel splits its own
// work (usually by rows: rows ith, ith + nth, ... or contiguous ranges). A kernel that needs
// several phases (e.g. convert src1, then multiply) calls ggml_cpu_barrier(cc) between them; all
// nth threads must make the same barrier calls. After a node returns on all threads the engine
// synchronises before the next node.
//
// wdata/wsize: the shared scratch of the compute (at least op->work_size bytes for this node);
// kernels that need per-thread scratch carve it by ith.

struct ggml_cpu_barrier;

struct ggml_cpu_ctx {
    int ith;
    int nth;
    size_t wsize;
    void * wdata;
    struct ggml_cpu_barrier * barrier; // engine-owned, spans exactly nth threads
};

// wait until all nth threads of this node reached the barrier
void ggml_cpu_barrier(const struct ggml_cpu_ctx * cc);

struct ggml_cpu_op {
    // NULL: the CPU backend has no kernel for this op
    void   (*forward)(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst);
    // optional: does the kernel handle this node's types/layout? (NULL: whatever the
    // constructor accepts). Must be exact: compute never asserts on a node accepted here.
    bool   (*supports)(const struct ggml_tensor * dst);
    // optional: scratch bytes the node needs with n_threads threads (NULL: none)
    size_t (*work_size)(const struct ggml_tensor * dst, int n_threads);
    // optional: how many threads are useful (NULL: n_threads); must return 1..n_threads
    int    (*n_tasks)(const struct ggml_tensor * dst, int n_threads);
};

// the kernel of an op (never NULL; forward may be NULL)
const struct ggml_cpu_op * ggml_cpu_op_get(enum ggml_op op);

// nodes the CPU computes nothing for: view ops (NONE, RESHAPE, VIEW, PERMUTE, TRANSPOSE) and
// nodes with no elements
bool ggml_cpu_node_is_noop(const struct ggml_tensor * node);

// does the CPU backend support this node (no-op nodes always, others through the table)?
bool ggml_cpu_supports_node(const struct ggml_tensor * node);

// One kernel descriptor per op, defined in the family files (cpu/ops-*.c). Ops without a
// kernel yet are defined in cpu/ops-pending.c; a family file that implements one removes its
// line there.
#define GGML_CPU_OPS(X) \
    X(dup) X(add) X(add1) X(acc) X(sub) X(mul) X(div) X(sqr) X(sqrt) X(log) X(sum) X(sum_rows) \
    X(mean) X(argmax) X(repeat) X(repeat_back) X(concat) X(silu_back) X(norm) X(rms_norm) \
    X(rms_norm_back) X(group_norm) X(mul_mat) X(mul_mat_id) X(out_prod) X(scale) X(set) X(cpy) \
    X(cont) X(get_rows) X(get_rows_back) X(diag) X(diag_mask_inf) X(diag_mask_zero) X(soft_max) \
    X(soft_max_back) X(rope) X(rope_back) X(alibi) X(clamp) X(conv_transpose_1d) X(im2col) \
    X(conv_transpose_2d) X(pool_1d) X(pool_2d) X(upscale) X(pad) X(argsort) X(leaky_relu) \
    X(flash_attn) X(flash_ff) X(flash_attn_back) X(win_part) X(win_unpart) X(get_rel_pos) \
    X(add_rel_pos) X(unary) X(map_unary) X(map_binary) X(map_custom1_f32) X(map_custom2_f32) \
    X(map_custom3_f32) X(map_custom1) X(map_custom2) X(map_custom3) X(cross_entropy_loss) \
    X(cross_entropy_loss_back)

#define GGML_CPU_OP_DECLARE(name) extern const struct ggml_cpu_op ggml_cpu_op_##name;
GGML_CPU_OPS(GGML_CPU_OP_DECLARE)
#undef GGML_CPU_OP_DECLARE

#ifdef __cplusplus
}
#endif

#endif // GGML_X_CPU_OPS_H
