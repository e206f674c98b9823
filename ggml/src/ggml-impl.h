// ggml-impl.h - internal contract between the parts of the C library:
//   * error reporting (recoverable mode, doc/design.md "Errors never abort"),
//   * tensor creation helpers used by the op constructors (ggml/src/ops/),
//   * the op_params layout of every op (constructors write it, kernels read it),
//   * the CPU kernel interface (ggml/src/cpu/), with the per-node thread split and barrier,
//   * fp16 helpers and type traits access.
// Nothing here is public API.

#ifndef GGML_IMPL_H
#define GGML_IMPL_H

#include "ggml.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GGML_X_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GGML_X_MAX(a, b) ((a) > (b) ? (a) : (b))

// ---------------------------------------------------------------------------------------------
// Errors
//
// ggml_x_error records a formatted message on the calling thread. If the mode in force is
// recoverable (ctx's flag when ctx != NULL, otherwise the thread's flag) it returns and the caller
// returns NULL/false; otherwise it prints the message to stderr and aborts, as upstream does.
// Message convention: "<function>: <what is wrong> (<shapes/values>)", e.g.
//   "ggml_mul_mat: a->ne[0] (64) != b->ne[0] (32)".
void ggml_x_error(const struct ggml_context * ctx, const char * fmt, ...) GGML_ATTRIBUTE_FORMAT(2, 3);
bool ggml_x_recoverable(const struct ggml_context * ctx); // the mode that applies to ctx (NULL: thread's)
// number of messages recorded on the calling thread so far: a caller of a vtable entry compares
// it before and after to tell whether the implementation reported its own failure
uint64_t ggml_x_error_serial(void);

// Validate a condition: on failure report (ggml_x_error) and return `ret` from the enclosing
// function. GGML_X_CHECK returns NULL (constructors), GGML_X_CHECK_VOID returns nothing.
#define GGML_X_CHECK_RET(ctx, cond, ret, ...) \
    do { \
        if (!(cond)) { \
            ggml_x_error((ctx), __VA_ARGS__); \
            return ret; \
        } \
    } while (0)

#define GGML_X_CHECK(ctx, cond, ...) GGML_X_CHECK_RET(ctx, cond, NULL, __VA_ARGS__)

#define GGML_X_CHECK_VOID(ctx, cond, ...) \
    do { \
        if (!(cond)) { \
            ggml_x_error((ctx), __VA_ARGS__); \
            return; \
        } \
    } while (0)

// Format a shape as "[ne0,ne1,ne2,ne3]" into buf (at least 96 bytes); returns buf.
const char * ggml_x_shape_str(const struct ggml_tensor * t, char * buf, size_t size);

// ---------------------------------------------------------------------------------------------
// Tensor creation (ggml.c)

// New tensor object in ctx. With view_src != NULL the tensor aliases view_src's data at byte
// offset view_offs (checked against view_src's size by the caller). Dense strides are set for
// `type`. Returns NULL (after ggml_x_error) when the arena is full or the shape is invalid.
struct ggml_tensor * ggml_x_new_tensor_impl(struct ggml_context * ctx, enum ggml_type type, int n_dims,
                                            const int64_t * ne, struct ggml_tensor * view_src, size_t view_offs);

// Result tensor of an op: like ggml_new_tensor(ctx, type, 4, ne) but sets op and sources.
// srcs may contain NULLs at the end; n_srcs <= GGML_MAX_SRC.
struct ggml_tensor * ggml_x_new_op_tensor(struct ggml_context * ctx, enum ggml_op op, enum ggml_type type,
                                          const int64_t ne[GGML_MAX_DIMS], int n_srcs, struct ggml_tensor * const * srcs);

// Inplace result of an op: a view of a (same shape, strides and data) with op and sources set.
struct ggml_tensor * ggml_x_new_op_view(struct ggml_context * ctx, enum ggml_op op, struct ggml_tensor * a,
                                        int n_srcs, struct ggml_tensor * const * srcs);

// Autodiff (autodiff.c): give t a gradient tensor when one of its sources has one (called by the
// helpers above and the view constructors). False (after ggml_x_error) when the arena is full.
// ggml_x_grad_suspend(true/false) nests; while suspended (inside the backward pass) nothing is
// attached.
bool ggml_x_grad_attach(struct ggml_context * ctx, struct ggml_tensor * t);
void ggml_x_grad_suspend(bool suspend);

// Allocate `size` bytes of arena memory in ctx as an object of the given type (e.g.
// GGML_OBJECT_WORK_BUFFER for ggml_graph_compute_with_ctx). NULL (after ggml_x_error) when full.
void * ggml_x_ctx_alloc(struct ggml_context * ctx, enum ggml_object_type type, size_t size);

// same type, shape and strides (a byte-for-byte copy between the two is meaningful)
static inline bool ggml_x_same_layout(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    if (a->type != b->type) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) {
            return false;
        }
    }
    return true;
}

// op_params accessors
static inline void ggml_x_set_op_params(struct ggml_tensor * t, const void * params, size_t size) {
    GGML_ASSERT(size <= GGML_MAX_OP_PARAMS);
    memcpy(t->op_params, params, size);
}
static inline int32_t ggml_x_get_op_params_i32(const struct ggml_tensor * t, int i) {
    return t->op_params[i];
}
static inline void ggml_x_set_op_params_i32(struct ggml_tensor * t, int i, int32_t v) {
    t->op_params[i] = v;
}
static inline float ggml_x_get_op_params_f32(const struct ggml_tensor * t, int i) {
    float v;
    memcpy(&v, &t->op_params[i], sizeof(v));
    return v;
}
static inline void ggml_x_set_op_params_f32(struct ggml_tensor * t, int i, float v) {
    memcpy(&t->op_params[i], &v, sizeof(v));
}

// ---------------------------------------------------------------------------------------------
// op_params and sources of every op (as in the reference, so nodes are interchangeable).
// i32[k] / f32[k] = op_params word k read as int32 / float.
//
//   DUP, SQR, SQRT, LOG, SUM, SUM_ROWS, MEAN, ARGMAX, CONT, DIAG, PAD, CONCAT, REPEAT: none
//   ADD, SUB, MUL, DIV      src0 = a, src1 = b (b broadcasts: a->ne[i] % b->ne[i] == 0;
//                           SUB in the reference needs equal shapes; we accept broadcasting)
//                           result type = a's type (ggml_add_cast: the requested type)
//   ADD1                    src1 = b, a 1-element tensor
//   ACC, SET                i32[0..3] = nb1, nb2, nb3, offset (bytes), i32[4] = inplace (0/1)
//   NORM, RMS_NORM          f32[0] = eps
//   GROUP_NORM              i32[0] = n_groups (eps is 1e-6f)
//   MUL_MAT                 src0 = a (weights), src1 = b; i32[0] = enum ggml_prec
//   MUL_MAT_ID              i32[0] = id, i32[1] = n_as; src0 = ids (I32), src1 = b,
//                           src2 + i = as[i] (n_as <= GGML_MAX_SRC - 2)
//   OUT_PROD                src0 = a, src1 = b
//   SCALE                   f32[0] = s
//   CPY                     src0 = a, src1 = b; the result is a view of b
//   RESHAPE, TRANSPOSE      view ops, no params
//   VIEW                    op_params holds the size_t byte offset (words 0..1)
//   PERMUTE                 i32[0..3] = axis0..axis3
//   GET_ROWS                src0 = data, src1 = I32 indices
//   DIAG_MASK_INF/_ZERO     i32[0] = n_past
//   SOFT_MAX                f32[0] = scale; src1 = mask or NULL
//   ROPE                    i32[0] = n_past (always 0), i32[1] = n_dims, i32[2] = mode,
//                           i32[3] = n_ctx, i32[4] = n_orig_ctx, f32[5] = freq_base,
//                           f32[6] = freq_scale, f32[7] = ext_factor, f32[8] = attn_factor,
//                           f32[9] = beta_fast, f32[10] = beta_slow, f32[11] = xpos_base,
//                           i32[12] = xpos_down; src1 = I32 positions
//                           (ggml_rope: n_orig_ctx = 0, freq_base 10000, freq_scale 1,
//                           ext_factor 0, attn_factor 1, beta_fast 0, beta_slow 0)
//   ALIBI                   i32[0] = n_past, i32[1] = n_head, f32[2] = bias_max
//   CLAMP                   f32[0] = min, f32[1] = max
//   CONV_TRANSPOSE_1D       i32[0..2] = s0, p0, d0; src0 = kernel, src1 = input
//   IM2COL                  i32[0..6] = s0, s1, p0, p1, d0, d1, is_2D; src0 = kernel, src1 = input
//   CONV_TRANSPOSE_2D       i32[0] = stride; src0 = kernel, src1 = input
//   POOL_1D                 i32[0..3] = op, k0, s0, p0
//   POOL_2D                 i32[0..4] = op, k0, k1, s0, s1; f32[5] = p0, f32[6] = p1
//   UPSCALE                 i32[0] = scale_factor
//   ARGSORT                 i32[0] = enum ggml_sort_order
//   LEAKY_RELU              f32[0] = negative_slope
//   UNARY                   i32[0] = enum ggml_unary_op
//   MAP_CUSTOM1/2/3         op_params holds a struct ggml_x_map_custom_params
//   MAP_UNARY, MAP_BINARY,
//   MAP_CUSTOM1/2/3_F32     op_params holds the function pointer

struct ggml_x_map_custom_params {
    void * fun;  // ggml_custom1_op_t / ggml_custom2_op_t / ggml_custom3_op_t
    int    n_tasks; // GGML_N_TASKS_MAX (-1): as many as the compute uses
    void * userdata;
};

// ---------------------------------------------------------------------------------------------
// CPU kernels (ggml/src/cpu/)
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

// ---------------------------------------------------------------------------------------------
// fp16 (ggml.c): exact conversions, round-to-nearest-even for fp32 -> fp16

extern float ggml_x_fp16_table[1 << 16]; // fp16 bits -> fp32, filled by ggml_x_init_tables()
void ggml_x_init_tables(void);           // idempotent, thread-safe; called by ggml_init and friends

static inline float ggml_x_fp16_to_fp32(ggml_fp16_t h) {
    uint16_t bits;
    memcpy(&bits, &h, sizeof(bits));
    return ggml_x_fp16_table[bits];
}
ggml_fp16_t ggml_x_fp32_to_fp16(float f);

#define GGML_FP16_TO_FP32(x) ggml_x_fp16_to_fp32(x)
#define GGML_FP32_TO_FP16(x) ggml_x_fp32_to_fp16(x)

// ---------------------------------------------------------------------------------------------
// type traits (ggml-types.c): the table behind ggml_internal_get_type_traits

const ggml_type_traits_t * ggml_x_type_traits(enum ggml_type type); // NULL for invalid types
bool ggml_x_type_valid(enum ggml_type type); // a real type (not 4, 5, COUNT or out of range)

#ifdef __cplusplus
}
#endif

#endif // GGML_IMPL_H
