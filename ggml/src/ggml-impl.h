// ggml-impl.h - internal contract between the parts of the C library:
//   * error reporting (recoverable mode, doc/design.md "Errors never abort"),
//   * tensor creation helpers used by the op constructors (ggml/src/ops/),
//   * the op_params layout of every op (constructors write it, kernels read it),
//   * fp16 helpers and type traits access.
// Nothing here is public API. The core (this directory outside cpu/) knows no backend: the CPU
// kernel contract is cpu/ops.h, the CPU type traits cpu/traits.h.

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
// fp16 (ggml.c): exact conversions, round-to-nearest-even for fp32 -> fp16

extern float ggml_x_fp16_table[1 << 16]; // fp16 bits -> fp32, filled by ggml_x_init_tables()
void ggml_x_init_tables(void);           // idempotent, thread-safe; called by ggml_init and friends

static inline float ggml_x_fp16_to_fp32(ggml_fp16_t h) {
    uint16_t bits;
    memcpy(&bits, &h, sizeof(bits));
    return ggml_x_fp16_table[bits];
}
ggml_fp16_t ggml_x_fp32_to_fp16(float f);

// scalar row conversions (ggml.c), the reference of the CPU backend's SIMD rows behind the public
// ggml_fp16_to_fp32_row / ggml_fp32_to_fp16_row (cpu/convert.c); the core uses these
void ggml_x_fp16_to_fp32_row_scalar(const ggml_fp16_t * GGML_RESTRICT x, float * GGML_RESTRICT y, int n);
void ggml_x_fp32_to_fp16_row_scalar(const float * GGML_RESTRICT x, ggml_fp16_t * GGML_RESTRICT y, int n);

#define GGML_FP16_TO_FP32(x) ggml_x_fp16_to_fp32(x)
#define GGML_FP32_TO_FP16(x) ggml_x_fp32_to_fp16(x)

// ---------------------------------------------------------------------------------------------
// core type traits (ggml-types.c): name, block geometry, is_quantized, vec_dot_type and the
// reference conversions (to_float, from_float = from_float_reference); vec_dot is NULL. The CPU
// backend adds its kernels (vec_dot, SIMD conversions) in cpu/traits.c, which also defines the
// public ggml_internal_get_type_traits.

const ggml_type_traits_t * ggml_x_type_traits(enum ggml_type type); // NULL for out-of-range types
bool ggml_x_type_valid(enum ggml_type type); // a real type (not 4, 5, COUNT or out of range)

#ifdef __cplusplus
}
#endif

#endif // GGML_IMPL_H
