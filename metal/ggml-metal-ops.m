//go:build darwin && metal && !metalemu

// ggml-metal-ops.m - which ops the Metal backend computes (supports_op) and how a graph node
// becomes a kernel dispatch: the argument block (ggml-metal-kargs.h) at buffer 0, src0..src2
// and dst at buffers 1..4 (missing sources bound to dst), threadgroup memory at index 0.
// supports_op claims exactly what the kernels of metal/*.metal compute; ops that need
// SIMD-group reductions (MUL_MAT, MUL_MAT_ID, SOFT_MAX, RMS_NORM) only on Apple7+ / Metal3
// devices.

#import "ggml-metal-impl.h"

#include "ggml-impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

// MUL_MAT with at least this many src1 columns uses the SIMD-group-matrix GEMM, fewer the
// mat-vec kernels
#define GGML_METAL_GEMM_MIN_COLS 8

static int32_t op_i32(const struct ggml_tensor * t, int i) {
    int32_t v;
    memcpy(&v, (const char *) t->op_params + i * sizeof(int32_t), sizeof(v));
    return v;
}

static float op_f32(const struct ggml_tensor * t, int i) {
    float v;
    memcpy(&v, (const char *) t->op_params + i * sizeof(float), sizeof(v));
    return v;
}

static bool all_f32(const struct ggml_tensor * op) {
    for (int i = 0; i < GGML_MAX_SRC && op->src[i] != NULL; i++) {
        if (op->src[i]->type != GGML_TYPE_F32) {
            return false;
        }
    }
    return op->type == GGML_TYPE_F32;
}

// b repeats to the shape of a
static bool repeats_to(const struct ggml_tensor * b, const struct ggml_tensor * a) {
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (b->ne[d] == 0 || a->ne[d] % b->ne[d] != 0) {
            return false;
        }
    }
    return true;
}

static bool same_shape(const struct ggml_tensor * a, const struct ggml_tensor * b) {
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (a->ne[d] != b->ne[d]) {
            return false;
        }
    }
    return true;
}

static bool is_f32_or_f16(enum ggml_type t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16;
}

// a non-quantized type of 2 or 4 bytes per element that kernel_cpy_raw and kernel_repeat copy bit
// for bit
static bool raw_type(enum ggml_type t) {
    return ggml_blck_size(t) == 1 && (ggml_type_size(t) == 2 || ggml_type_size(t) == 4);
}

// the types load_elem (common.metal) reads, with their mat-vec kernels
static bool mul_mat_src0_type(enum ggml_type t) {
    switch (t) {
    case GGML_TYPE_F32:
    case GGML_TYPE_F16:
    case GGML_TYPE_Q4_0:
    case GGML_TYPE_Q4_1:
    case GGML_TYPE_Q5_0:
    case GGML_TYPE_Q5_1:
    case GGML_TYPE_Q8_0:
    case GGML_TYPE_Q2_K:
    case GGML_TYPE_Q3_K:
    case GGML_TYPE_Q4_K:
    case GGML_TYPE_Q5_K:
    case GGML_TYPE_Q6_K:
        return true;
    default:
        return false;
    }
}

// the GEMM kernel (8x8 SIMD-group matrix tiles) for src0 type t
static enum ggml_metal_kernel_id mul_mm_kernel(enum ggml_type t) {
    switch (t) {
    case GGML_TYPE_F32:  return GGML_METAL_K_MUL_MM_F32;
    case GGML_TYPE_F16:  return GGML_METAL_K_MUL_MM_F16;
    case GGML_TYPE_Q4_0: return GGML_METAL_K_MUL_MM_Q4_0;
    case GGML_TYPE_Q4_1: return GGML_METAL_K_MUL_MM_Q4_1;
    case GGML_TYPE_Q5_0: return GGML_METAL_K_MUL_MM_Q5_0;
    case GGML_TYPE_Q5_1: return GGML_METAL_K_MUL_MM_Q5_1;
    case GGML_TYPE_Q8_0: return GGML_METAL_K_MUL_MM_Q8_0;
    case GGML_TYPE_Q2_K: return GGML_METAL_K_MUL_MM_Q2_K;
    case GGML_TYPE_Q3_K: return GGML_METAL_K_MUL_MM_Q3_K;
    case GGML_TYPE_Q4_K: return GGML_METAL_K_MUL_MM_Q4_K;
    case GGML_TYPE_Q5_K: return GGML_METAL_K_MUL_MM_Q5_K;
    default:             return GGML_METAL_K_MUL_MM_Q6_K;
    }
}

// the mat-vec kernel for src0 type t (MUL_MAT, or MUL_MAT_ID when id)
static enum ggml_metal_kernel_id mul_mv_kernel(enum ggml_type t, bool id) {
    switch (t) {
    case GGML_TYPE_F32:  return id ? GGML_METAL_K_MUL_MV_ID_F32  : GGML_METAL_K_MUL_MV_F32;
    case GGML_TYPE_F16:  return id ? GGML_METAL_K_MUL_MV_ID_F16  : GGML_METAL_K_MUL_MV_F16;
    case GGML_TYPE_Q4_0: return id ? GGML_METAL_K_MUL_MV_ID_Q4_0 : GGML_METAL_K_MUL_MV_Q4_0;
    case GGML_TYPE_Q4_1: return id ? GGML_METAL_K_MUL_MV_ID_Q4_1 : GGML_METAL_K_MUL_MV_Q4_1;
    case GGML_TYPE_Q5_0: return id ? GGML_METAL_K_MUL_MV_ID_Q5_0 : GGML_METAL_K_MUL_MV_Q5_0;
    case GGML_TYPE_Q5_1: return id ? GGML_METAL_K_MUL_MV_ID_Q5_1 : GGML_METAL_K_MUL_MV_Q5_1;
    case GGML_TYPE_Q8_0: return id ? GGML_METAL_K_MUL_MV_ID_Q8_0 : GGML_METAL_K_MUL_MV_Q8_0;
    case GGML_TYPE_Q2_K: return id ? GGML_METAL_K_MUL_MV_ID_Q2_K : GGML_METAL_K_MUL_MV_Q2_K;
    case GGML_TYPE_Q3_K: return id ? GGML_METAL_K_MUL_MV_ID_Q3_K : GGML_METAL_K_MUL_MV_Q3_K;
    case GGML_TYPE_Q4_K: return id ? GGML_METAL_K_MUL_MV_ID_Q4_K : GGML_METAL_K_MUL_MV_Q4_K;
    case GGML_TYPE_Q5_K: return id ? GGML_METAL_K_MUL_MV_ID_Q5_K : GGML_METAL_K_MUL_MV_Q5_K;
    default:             return id ? GGML_METAL_K_MUL_MV_ID_Q6_K : GGML_METAL_K_MUL_MV_Q6_K;
    }
}

bool ggml_metal_supports_op(const struct ggml_metal_context * ctx, const struct ggml_tensor * op) {
    const struct ggml_tensor * src0 = op->src[0];
    const struct ggml_tensor * src1 = op->src[1];
    switch (op->op) {
    case GGML_OP_NONE:
    case GGML_OP_RESHAPE:
    case GGML_OP_VIEW:
    case GGML_OP_TRANSPOSE:
    case GGML_OP_PERMUTE:
        return true;
    case GGML_OP_ADD:
    case GGML_OP_SUB:
    case GGML_OP_MUL:
    case GGML_OP_DIV:
        return src0 != NULL && src1 != NULL && all_f32(op) && same_shape(src0, op) && repeats_to(src1, src0);
    case GGML_OP_ADD1:
        return src0 != NULL && src1 != NULL && all_f32(op) && same_shape(src0, op) && ggml_nelements(src1) == 1;
    case GGML_OP_REPEAT:
        return src0 != NULL && src0->type == op->type && raw_type(op->type) && repeats_to(src0, op);
    case GGML_OP_SCALE:
    case GGML_OP_SQR:
    case GGML_OP_SQRT:
    case GGML_OP_LOG:
    case GGML_OP_CLAMP:
    case GGML_OP_LEAKY_RELU:
        return src0 != NULL && all_f32(op) && same_shape(src0, op);
    case GGML_OP_UNARY:
        switch (ggml_get_unary_op(op)) {
        case GGML_UNARY_OP_ABS:
        case GGML_UNARY_OP_SGN:
        case GGML_UNARY_OP_NEG:
        case GGML_UNARY_OP_STEP:
        case GGML_UNARY_OP_ELU:
        case GGML_UNARY_OP_TANH:
        case GGML_UNARY_OP_RELU:
        case GGML_UNARY_OP_GELU:
        case GGML_UNARY_OP_GELU_QUICK:
        case GGML_UNARY_OP_SILU:
            return src0 != NULL && all_f32(op) && same_shape(src0, op);
        default:
            return false;
        }
    case GGML_OP_NORM:
        return all_f32(op) && same_shape(src0, op);
    case GGML_OP_GROUP_NORM:
        return all_f32(op) && same_shape(src0, op) && op_i32(op, 0) > 0;
    case GGML_OP_ALIBI:
        return all_f32(op) && same_shape(src0, op) && op_i32(op, 1) > 0;
    case GGML_OP_PAD:
        return all_f32(op) && op->ne[0] >= src0->ne[0] && op->ne[1] >= src0->ne[1] && op->ne[2] >= src0->ne[2] &&
               op->ne[3] >= src0->ne[3];
    case GGML_OP_UPSCALE: {
        const int sf = op_i32(op, 0);
        return all_f32(op) && sf > 0 && op->ne[0] <= src0->ne[0] * sf && op->ne[1] <= src0->ne[1] * sf &&
               op->ne[2] == src0->ne[2] && op->ne[3] == src0->ne[3];
    }
    case GGML_OP_CONCAT:
        return src1 != NULL && all_f32(op) && src0->ne[0] == op->ne[0] && src1->ne[0] == op->ne[0] &&
               src0->ne[1] == op->ne[1] && src1->ne[1] == op->ne[1] && src0->ne[3] == op->ne[3] &&
               src1->ne[3] == op->ne[3] && src0->ne[2] + src1->ne[2] == op->ne[2];
    case GGML_OP_ACC:
        return src0 != NULL && src1 != NULL && src0->type == GGML_TYPE_F32 && op->type == GGML_TYPE_F32 &&
               is_f32_or_f16(src1->type) && same_shape(src0, op) && ggml_is_contiguous(op);
    case GGML_OP_ARGSORT:
        return src0 != NULL && src0->type == GGML_TYPE_F32 && op->type == GGML_TYPE_I32 && same_shape(src0, op);
    case GGML_OP_RMS_NORM:
        return ctx->has_simdgroup_reduction && all_f32(op) && same_shape(src0, op);
    case GGML_OP_SUM_ROWS:
        return all_f32(op) && op->ne[0] == 1 && op->ne[1] == src0->ne[1] && op->ne[2] == src0->ne[2] &&
               op->ne[3] == src0->ne[3];
    case GGML_OP_SOFT_MAX:
        return ctx->has_simdgroup_reduction && all_f32(op) && same_shape(src0, op) &&
               (src1 == NULL || (src1->ne[0] >= src0->ne[0] && src1->ne[1] >= 1));
    case GGML_OP_DIAG_MASK_INF:
        return all_f32(op) && same_shape(src0, op);
    case GGML_OP_ROPE: {
        const int n_dims = op_i32(op, 1);
        const int mode = op_i32(op, 2);
        return src0 != NULL && src1 != NULL && is_f32_or_f16(src0->type) && op->type == src0->type &&
               src1->type == GGML_TYPE_I32 && ggml_nelements(src1) >= src0->ne[2] && same_shape(src0, op) &&
               (mode == 0 || mode == 2) && n_dims > 0 && n_dims % 2 == 0 && n_dims <= src0->ne[0] &&
               op_f32(op, 11) == 0.0f && op_i32(op, 13) == 0 && op->src[2] == NULL && // no ggml_x_rope_ext kernel
               src0->nb[0] == ggml_type_size(src0->type) &&
               op->nb[0] == ggml_type_size(op->type);
    }
    case GGML_OP_GET_ROWS:
        return src0 != NULL && src1 != NULL && mul_mat_src0_type(src0->type) && src1->type == GGML_TYPE_I32 &&
               op->type == GGML_TYPE_F32 && src0->ne[3] == 1 && src1->ne[2] == 1 && op->ne[3] == 1 &&
               src0->nb[0] == ggml_type_size(src0->type);
    case GGML_OP_CPY:
    case GGML_OP_DUP:
    case GGML_OP_CONT:
        if (src0 == NULL || ggml_nelements(src0) != ggml_nelements(op)) {
            return false;
        }
        if (op->type == GGML_TYPE_Q8_0 || op->type == GGML_TYPE_Q4_0 || op->type == GGML_TYPE_Q4_1) {
            // whole rows of blocks: equal row lengths, contiguous destination rows
            return src0->type == GGML_TYPE_F32 && src0->ne[0] == op->ne[0] && op->ne[0] % 32 == 0 &&
                   op->nb[0] == ggml_type_size(op->type);
        }
        return (is_f32_or_f16(src0->type) && is_f32_or_f16(op->type)) || (src0->type == op->type && raw_type(op->type));
    case GGML_OP_MUL_MAT_ID: {
        const struct ggml_tensor * ids = op->src[0];
        const struct ggml_tensor * a0 = op->src[2];
        const int id = op_i32(op, 0);
        const int n_as = op_i32(op, 1);
        if (!ctx->has_simdgroup_reduction || ids == NULL || src1 == NULL || a0 == NULL ||
            ids->type != GGML_TYPE_I32 || src1->type != GGML_TYPE_F32 || op->type != GGML_TYPE_F32 ||
            n_as < 1 || n_as > GGML_MAX_SRC - 2 || id < 0 || id >= ids->ne[0] || ids->ne[1] != src1->ne[1] ||
            !mul_mat_src0_type(a0->type) || a0->ne[0] != src1->ne[0] || src1->ne[2] % a0->ne[2] != 0 ||
            src1->ne[3] % a0->ne[3] != 0 || op->ne[0] != a0->ne[1] || op->ne[1] != src1->ne[1] ||
            op->ne[2] != src1->ne[2] || op->ne[3] != src1->ne[3]) {
            return false;
        }
        for (int e = 0; e < n_as; e++) {
            const struct ggml_tensor * ae = op->src[2 + e];
            if (ae == NULL || ae->type != a0->type || !same_shape(ae, a0) || ae->nb[0] != ggml_type_size(ae->type) ||
                ae->nb[1] != a0->nb[1] || ae->nb[2] != a0->nb[2] || ae->nb[3] != a0->nb[3]) {
                return false;
            }
        }
        return true;
    }
    case GGML_OP_MUL_MAT:
        return ctx->has_simdgroup_reduction && src0 != NULL && src1 != NULL && mul_mat_src0_type(src0->type) &&
               is_f32_or_f16(src1->type) && op->type == GGML_TYPE_F32 &&
               src0->nb[0] == ggml_type_size(src0->type) && src1->ne[2] % src0->ne[2] == 0 &&
               src1->ne[3] % src0->ne[3] == 0 && src0->ne[0] == src1->ne[0];
    default:
        return false;
    }
}

static void kargs_fill_srcs(ggml_metal_kargs * k, const struct ggml_tensor * const s[3], const struct ggml_tensor * node) {
    memset(k, 0, sizeof(*k));
    int64_t * ne[4] = {&k->ne00, &k->ne10, &k->ne20, &k->ne0};
    uint64_t * nb[4] = {&k->nb00, &k->nb10, &k->nb20, &k->nb0};
    for (int j = 0; j < 4; j++) {
        const struct ggml_tensor * t = j < 3 ? s[j] : node;
        for (int d = 0; d < 4; d++) {
            ne[j][d] = t != NULL ? t->ne[d] : 1;
            nb[j][d] = t != NULL ? t->nb[d] : 0;
        }
    }
}

static void kargs_fill(ggml_metal_kargs * k, const struct ggml_tensor * node) {
    const struct ggml_tensor * s[3] = {node->src[0], node->src[1], node->src[2]};
    kargs_fill_srcs(k, s, node);
}

// bind the argument block, srcs (NULL ones: dst) and dst, and dispatch grid x nth threads
static bool metal_dispatch(struct ggml_metal_context * ctx, id<MTLComputeCommandEncoder> enc,
                           enum ggml_metal_kernel_id kid, const ggml_metal_kargs * k,
                           const struct ggml_tensor * const srcs[3], const struct ggml_tensor * node,
                           MTLSize grid, NSUInteger nth, NSUInteger tg_mem, char * err, size_t err_size) {
    size_t off_dst = 0;
    id<MTLBuffer> b_dst = ggml_metal_tensor_buffer(node, &off_dst);
    if (b_dst == nil) {
        snprintf(err, err_size, "node %s (%s): its data is not in a Metal buffer", node->name, ggml_op_name(node->op));
        return false;
    }
    [enc setComputePipelineState:ctx->pipelines[kid]];
    [enc setBytes:k length:sizeof(*k) atIndex:0];
    for (int i = 0; i < 3; i++) {
        const struct ggml_tensor * s = srcs[i];
        size_t off = 0;
        id<MTLBuffer> b = s != NULL ? ggml_metal_tensor_buffer(s, &off) : nil;
        if (s != NULL && b == nil) {
            snprintf(err, err_size, "node %s (%s): source %d (%s) is not in a Metal buffer", node->name,
                     ggml_op_name(node->op), i, s->name);
            return false;
        }
        if (b == nil) {
            [enc setBuffer:b_dst offset:off_dst atIndex:(NSUInteger) (1 + i)];
        } else {
            [enc setBuffer:b offset:off atIndex:(NSUInteger) (1 + i)];
        }
    }
    [enc setBuffer:b_dst offset:off_dst atIndex:4];
    [enc setThreadgroupMemoryLength:(tg_mem + 15) / 16 * 16 atIndex:0];
    [enc dispatchThreadgroups:grid threadsPerThreadgroup:MTLSizeMake(nth, 1, 1)];
    return true;
}

// threads per threadgroup for a row of n elements: a power of two from 32 to 256
static int row_threads(int64_t n) {
    int nth = 32;
    while (nth < n && nth < 256) {
        nth *= 2;
    }
    return nth;
}

static float rope_corr_dim(int n_dims, int n_orig_ctx, float n_rot, float base) {
    return n_dims * logf(n_orig_ctx / (n_rot * 2 * (float) M_PI)) / (2 * logf(base));
}

bool ggml_metal_encode_node(struct ggml_metal_context * ctx, id<MTLComputeCommandEncoder> enc,
                            const struct ggml_tensor * node, char * err, size_t err_size) {
    if (ggml_nelements(node) == 0) {
        return true;
    }
    switch (node->op) {
    case GGML_OP_NONE:
    case GGML_OP_RESHAPE:
    case GGML_OP_VIEW:
    case GGML_OP_TRANSPOSE:
    case GGML_OP_PERMUTE:
        return true;
    default:
        break;
    }
    if (!ggml_metal_supports_op(ctx, node)) {
        snprintf(err, err_size, "op %s (%s) of node %s is not supported by this device", ggml_op_name(node->op),
                 ggml_type_name(node->type), node->name);
        return false;
    }

    ggml_metal_kargs k;
    kargs_fill(&k, node);
    enum ggml_metal_kernel_id kid;
    MTLSize grid = MTLSizeMake((NSUInteger) node->ne[1], (NSUInteger) node->ne[2], (NSUInteger) node->ne[3]);
    NSUInteger nth = (NSUInteger) row_threads(node->ne[0]);
    NSUInteger tg_mem = 16;

    switch (node->op) {
    case GGML_OP_ADD:
    case GGML_OP_ADD1: kid = GGML_METAL_K_ADD; break;
    case GGML_OP_SUB: kid = GGML_METAL_K_SUB; break;
    case GGML_OP_REPEAT:
        kid = GGML_METAL_K_REPEAT;
        k.i[0] = (int32_t) ggml_type_size(node->type);
        break;
    case GGML_OP_MUL: kid = GGML_METAL_K_MUL; break;
    case GGML_OP_DIV: kid = GGML_METAL_K_DIV; break;
    case GGML_OP_SCALE:
        kid = GGML_METAL_K_UNARY;
        k.i[0] = 0;
        k.f[0] = op_f32(node, 0);
        break;
    case GGML_OP_SQR:
        kid = GGML_METAL_K_UNARY;
        k.i[0] = 1;
        break;
    case GGML_OP_LEAKY_RELU:
        kid = GGML_METAL_K_UNARY;
        k.i[0] = 2;
        k.f[0] = op_f32(node, 0);
        break;
    case GGML_OP_SQRT:
        kid = GGML_METAL_K_UNARY;
        k.i[0] = 8;
        break;
    case GGML_OP_LOG:
        kid = GGML_METAL_K_UNARY;
        k.i[0] = 9;
        break;
    case GGML_OP_CLAMP:
        kid = GGML_METAL_K_UNARY;
        k.i[0] = 10;
        k.f[0] = op_f32(node, 0);
        k.f[1] = op_f32(node, 1);
        break;
    case GGML_OP_UNARY:
        kid = GGML_METAL_K_UNARY;
        switch (ggml_get_unary_op(node)) {
        case GGML_UNARY_OP_TANH:       k.i[0] = 3; break;
        case GGML_UNARY_OP_RELU:       k.i[0] = 4; break;
        case GGML_UNARY_OP_GELU:       k.i[0] = 5; break;
        case GGML_UNARY_OP_GELU_QUICK: k.i[0] = 6; break;
        case GGML_UNARY_OP_ABS:        k.i[0] = 11; break;
        case GGML_UNARY_OP_SGN:        k.i[0] = 12; break;
        case GGML_UNARY_OP_NEG:        k.i[0] = 13; break;
        case GGML_UNARY_OP_STEP:       k.i[0] = 14; break;
        case GGML_UNARY_OP_ELU:        k.i[0] = 15; break;
        default:                       k.i[0] = 7; break; // SILU (supports_op admitted no other)
        }
        break;
    case GGML_OP_RMS_NORM:
        kid = GGML_METAL_K_RMS_NORM;
        k.f[0] = op_f32(node, 0);
        tg_mem = 32 * sizeof(float);
        break;
    case GGML_OP_GROUP_NORM:
        kid = GGML_METAL_K_GROUP_NORM;
        k.i[0] = op_i32(node, 0);
        grid = MTLSizeMake((NSUInteger) k.i[0], (NSUInteger) node->ne[3], 1);
        nth = 256;
        tg_mem = nth * sizeof(float);
        break;
    case GGML_OP_ALIBI: {
        kid = GGML_METAL_K_ALIBI;
        const int n_head = op_i32(node, 1);
        const float max_bias = op_f32(node, 2);
        const int h = 1 << (int) floor(log2((double) n_head));
        k.i[0] = h;
        k.f[0] = powf(2.0f, -max_bias / h);
        k.f[1] = powf(2.0f, -(max_bias / 2.0f) / h);
        break;
    }
    case GGML_OP_PAD:
        kid = GGML_METAL_K_PAD;
        break;
    case GGML_OP_UPSCALE:
        kid = GGML_METAL_K_UPSCALE;
        k.i[0] = op_i32(node, 0);
        break;
    case GGML_OP_CONCAT:
        kid = GGML_METAL_K_CONCAT;
        break;
    case GGML_OP_ARGSORT:
        kid = GGML_METAL_K_ARGSORT;
        k.i[0] = op_i32(node, 0);
        break;
    case GGML_OP_ACC: {
        // dst = src0 (unless in place), then the window += src1
        const struct ggml_tensor * s0 = node->src[0];
        if (s0->data != node->data) {
            const struct ggml_tensor * csrcs[3] = {s0, NULL, NULL};
            ggml_metal_kargs kc;
            kargs_fill_srcs(&kc, csrcs, node);
            kc.i[0] = GGML_TYPE_F32;
            kc.i[1] = GGML_TYPE_F32;
            if (!metal_dispatch(ctx, enc, GGML_METAL_K_CPY, &kc, csrcs, node,
                                MTLSizeMake((NSUInteger) s0->ne[1], (NSUInteger) s0->ne[2], (NSUInteger) s0->ne[3]),
                                (NSUInteger) row_threads(s0->ne[0]), 16, err, err_size)) {
                return false;
            }
        }
        kid = GGML_METAL_K_ACC;
        for (int i = 0; i < 4; i++) {
            k.i[i] = op_i32(node, i);
        }
        k.i[4] = (int32_t) node->src[1]->type;
        grid = MTLSizeMake((NSUInteger) node->src[1]->ne[1], (NSUInteger) node->src[1]->ne[2], (NSUInteger) node->src[1]->ne[3]);
        nth = (NSUInteger) row_threads(node->src[1]->ne[0]);
        break;
    }
    case GGML_OP_NORM:
        kid = GGML_METAL_K_NORM;
        k.f[0] = op_f32(node, 0);
        tg_mem = nth * sizeof(float);
        break;
    case GGML_OP_SUM_ROWS:
        kid = GGML_METAL_K_SUM_ROWS;
        nth = (NSUInteger) row_threads(node->src[0]->ne[0]);
        tg_mem = nth * sizeof(float);
        break;
    case GGML_OP_SOFT_MAX:
        kid = GGML_METAL_K_SOFT_MAX;
        k.i[0] = node->src[1] != NULL;
        k.f[0] = op_f32(node, 0);
        tg_mem = 32 * sizeof(float);
        break;
    case GGML_OP_DIAG_MASK_INF:
        kid = GGML_METAL_K_DIAG_MASK_INF;
        k.i[0] = op_i32(node, 0);
        break;
    case GGML_OP_ROPE: {
        kid = GGML_METAL_K_ROPE;
        const int n_dims = op_i32(node, 1);
        const int n_orig_ctx = op_i32(node, 4);
        const float freq_base = op_f32(node, 5);
        k.i[0] = n_dims;
        k.i[1] = op_i32(node, 2);
        k.i[2] = (int32_t) node->type;
        k.f[0] = freq_base;
        k.f[1] = op_f32(node, 6);
        k.f[2] = op_f32(node, 7);
        k.f[3] = op_f32(node, 8);
        const float lo = floorf(rope_corr_dim(n_dims, n_orig_ctx, op_f32(node, 9), freq_base));
        const float hi = ceilf(rope_corr_dim(n_dims, n_orig_ctx, op_f32(node, 10), freq_base));
        k.f[4] = lo > 0.0f ? lo : 0.0f;
        k.f[5] = hi < (float) (n_dims - 1) ? hi : (float) (n_dims - 1);
        nth = (NSUInteger) row_threads(n_dims / 2);
        break;
    }
    case GGML_OP_GET_ROWS:
        kid = GGML_METAL_K_GET_ROWS;
        k.i[0] = (int32_t) node->src[0]->type;
        grid = MTLSizeMake((NSUInteger) node->src[1]->ne[0], (NSUInteger) node->src[1]->ne[1], 1);
        break;
    case GGML_OP_CPY:
    case GGML_OP_DUP:
    case GGML_OP_CONT: {
        const struct ggml_tensor * s0 = node->src[0];
        const bool quant = ggml_blck_size(node->type) > 1;
        const bool raw = !quant && !(is_f32_or_f16(s0->type) && is_f32_or_f16(node->type));
        kid = quant ? GGML_METAL_K_CPY_F32_Q : (raw ? GGML_METAL_K_CPY_RAW : GGML_METAL_K_CPY);
        k.i[0] = raw ? (int32_t) ggml_type_size(node->type) : (int32_t) s0->type;
        k.i[1] = (int32_t) node->type;
        grid = MTLSizeMake((NSUInteger) s0->ne[1], (NSUInteger) s0->ne[2], (NSUInteger) s0->ne[3]);
        nth = quant ? 32 : (NSUInteger) row_threads(s0->ne[0]);
        break;
    }
    case GGML_OP_MUL_MAT_ID: {
        const struct ggml_tensor * a0 = node->src[2];
        kid = mul_mv_kernel(a0->type, true);
        grid = MTLSizeMake((NSUInteger) a0->ne[1], (NSUInteger) node->src[1]->ne[1],
                           (NSUInteger) (node->src[1]->ne[2] * node->src[1]->ne[3]));
        const int n_as = op_i32(node, 1);
        // one dispatch per expert: src0 = its matrices, src1 = b, src2 = the ids
        for (int e = 0; e < n_as; e++) {
            const struct ggml_tensor * srcs[3] = {node->src[2 + e], node->src[1], node->src[0]};
            ggml_metal_kargs ke;
            kargs_fill_srcs(&ke, srcs, node);
            ke.i[0] = op_i32(node, 0);
            ke.i[1] = e;
            ke.i[2] = n_as;
            ke.i[3] = GGML_TYPE_F32;
            if (!metal_dispatch(ctx, enc, kid, &ke, srcs, node, grid, 32, 16, err, err_size)) {
                return false;
            }
        }
        return true;
    }
    case GGML_OP_MUL_MAT:
        k.i[3] = (int32_t) node->src[1]->type;
        nth = 32;
        if (node->src[1]->ne[1] >= GGML_METAL_GEMM_MIN_COLS) {
            kid = mul_mm_kernel(node->src[0]->type);
            grid = MTLSizeMake((NSUInteger) ((node->src[0]->ne[1] + 7) / 8), (NSUInteger) ((node->src[1]->ne[1] + 7) / 8),
                               (NSUInteger) (node->src[1]->ne[2] * node->src[1]->ne[3]));
            tg_mem = 3 * 64 * sizeof(float);
        } else {
            kid = mul_mv_kernel(node->src[0]->type, false);
            grid = MTLSizeMake((NSUInteger) node->src[0]->ne[1], (NSUInteger) node->src[1]->ne[1],
                               (NSUInteger) (node->src[1]->ne[2] * node->src[1]->ne[3]));
        }
        break;
    default:
        snprintf(err, err_size, "op %s has no kernel", ggml_op_name(node->op));
        return false;
    }

    const struct ggml_tensor * srcs[3] = {node->src[0], node->src[1], node->src[2]};
    return metal_dispatch(ctx, enc, kid, &k, srcs, node, grid, nth, tg_mem, err, err_size);
}
