// ops-unary.c - element-wise F32 functions: UNARY (abs, sgn, neg, step, tanh, elu, relu, gelu,
// gelu_quick, silu), SQR, SQRT, LOG, SCALE (f32[0] = s), CLAMP (f32[0] = min, f32[1] = max) and
// LEAKY_RELU (f32[0] = negative slope); SILU_BACK (the gradient of silu) at the end.
//
// dst has src0's shape (it may alias src0 for the inplace variants). Work is split over rows;
// rows with dense elements run a tight loop, others are gathered through a small buffer, so
// any strides are accepted.
//
// gelu and gelu_quick give what ggml's CPU backend gives, bit for bit: the function's value at
// the input rounded to fp16, itself rounded to fp16 (a 65,536-entry table of each, built once),
// and for gelu, 0 below -10 and x itself above 10. The tables are looked up by vec.h's
// lookup_f16, 16 (AVX-512) or 8 (AVX2) values per gather: 64 rows of 5632, one thread, 3.7 ns
// per element before (one scalar conversion and load each) -> 0.51 (AVX2 level: 1.04). In a
// graph that computes gradients (the node or its input has a grad) they are the smooth functions
// instead, whose derivatives the backward pass uses (a step function's finite differences would
// not match them): the row kernels of vec.h, as silu always is (in the scalar kernels evaluated
// in double precision and rounded once, in the SIMD ones with a float exp: within the
// conformance threshold of the reference's).

#include "../ggml-impl.h"
#include "rowconv.h"
#include "vec.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

// fp16 values from their bits (ggml_fp16_t is a floating type on ARM: never cast between them)
static inline ggml_fp16_t fp16_of_bits(uint16_t b) {
    ggml_fp16_t h;
    memcpy(&h, &b, sizeof(h));
    return h;
}

// the fp16 tables of gelu (tanh form) and gelu_quick, indexed by the input's fp16 bits (and
// padding: the SIMD lookups read 4 bytes at an entry)
static ggml_fp16_t gelu_table[(1 << 16) + 2];
static ggml_fp16_t gelu_quick_table[(1 << 16) + 2];
static pthread_once_t gelu_tables_once = PTHREAD_ONCE_INIT;

static void gelu_tables_build(void) {
    for (uint32_t i = 0; i < (1u << 16); i++) {
        const float x = ggml_x_fp16_to_fp32(fp16_of_bits((uint16_t) i));
        const float g = 0.5f * x * (1.0f + tanhf(0.79788456080286535588f * x * (1.0f + 0.044715f * x * x)));
        const float q = x * (1.0f / (1.0f + expf(-1.702f * x)));
        gelu_table[i] = GGML_FP32_TO_FP16(g);
        gelu_quick_table[i] = GGML_FP32_TO_FP16(q);
    }
}

// gelu: 0 at or below -10, x at or above 10, the table between (vec.h lookup_f16)
static void gelu_rows(int64_t n, float * y, const float * x) {
    pthread_once(&gelu_tables_once, gelu_tables_build);
    ggml_x_vec_kernels_active()->lookup_f16(n, y, x, gelu_table, -10.0f, 10.0f);
}

// gelu_quick: the table everywhere
static void gelu_quick_rows(int64_t n, float * y, const float * x) {
    pthread_once(&gelu_tables_once, gelu_tables_build);
    ggml_x_vec_kernels_active()->lookup_f16(n, y, x, gelu_quick_table, NAN, NAN);
}

enum unary_kind {
    // the first GGML_UNARY_OP_COUNT values are enum ggml_unary_op
    UN_SQR = GGML_UNARY_OP_COUNT,
    UN_SQRT,
    UN_LOG,
    UN_SCALE,
    UN_CLAMP,
    UN_LEAKY_RELU,
    UN_GELU_SMOOTH,       // gelu in a graph that computes gradients: the function itself
    UN_GELU_QUICK_SMOOTH, // gelu_quick likewise
};

static bool unary_op_supports(const struct ggml_tensor * dst) {
    const int32_t op = ggml_x_get_op_params_i32(dst, 0);
    return rowconv_f32_same_shape(dst) && op >= 0 && op < GGML_UNARY_OP_COUNT;
}

// y[i] = f(x[i]) for dense rows; y may alias x
static void unary_vec(int kind, int64_t n, float * y, const float * x, const float * p) {
    switch (kind) {
        case GGML_UNARY_OP_ABS:
            for (int64_t i = 0; i < n; i++) y[i] = fabsf(x[i]);
            break;
        case GGML_UNARY_OP_SGN:
            for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? 1.0f : (x[i] < 0.0f ? -1.0f : 0.0f);
            break;
        case GGML_UNARY_OP_NEG:
            for (int64_t i = 0; i < n; i++) y[i] = -x[i];
            break;
        case GGML_UNARY_OP_STEP:
            for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? 1.0f : 0.0f;
            break;
        case GGML_UNARY_OP_TANH:
            for (int64_t i = 0; i < n; i++) y[i] = tanhf(x[i]);
            break;
        case GGML_UNARY_OP_ELU:
            for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : expf(x[i]) - 1.0f;
            break;
        case GGML_UNARY_OP_RELU:
            for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
            break;
        case GGML_UNARY_OP_GELU:
            gelu_rows(n, y, x);
            break;
        case GGML_UNARY_OP_GELU_QUICK:
            gelu_quick_rows(n, y, x);
            break;
        case GGML_UNARY_OP_SILU:
            ggml_x_vec_kernels_active()->unary(GGML_X_VEC_SILU, n, y, x);
            break;
        case UN_GELU_SMOOTH:
            ggml_x_vec_kernels_active()->unary(GGML_X_VEC_GELU, n, y, x);
            break;
        case UN_GELU_QUICK_SMOOTH:
            ggml_x_vec_kernels_active()->unary(GGML_X_VEC_GELU_QUICK, n, y, x);
            break;
        case UN_SQR:
            for (int64_t i = 0; i < n; i++) y[i] = x[i] * x[i];
            break;
        case UN_SQRT:
            for (int64_t i = 0; i < n; i++) y[i] = sqrtf(x[i]);
            break;
        case UN_LOG:
            for (int64_t i = 0; i < n; i++) y[i] = logf(x[i]);
            break;
        case UN_SCALE:
            ggml_x_vec_kernels_active()->scale(n, y, x, p[0]);
            break;
        case UN_CLAMP: {
            const float lo = p[0], hi = p[1];
            for (int64_t i = 0; i < n; i++) {
                const float v = x[i] < hi ? x[i] : hi;
                y[i] = v > lo ? v : lo;
            }
            break;
        }
        case UN_LEAKY_RELU: {
            const float slope = p[0];
            for (int64_t i = 0; i < n; i++) {
                const float v = x[i];
                y[i] = (v > 0.0f ? v : 0.0f) + slope * (v < 0.0f ? v : 0.0f);
            }
            break;
        }
        default:
            break;
    }
}

#define UNARY_CHUNK 256

static void unary_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst, int kind) {
    const struct ggml_tensor * src0 = dst->src[0];
    if ((kind == GGML_UNARY_OP_GELU || kind == GGML_UNARY_OP_GELU_QUICK) && (dst->grad != NULL || src0->grad != NULL)) {
        kind = kind == GGML_UNARY_OP_GELU ? UN_GELU_SMOOTH : UN_GELU_QUICK_SMOOTH;
    }
    float p[2] = { 0.0f, 0.0f };
    if (kind == UN_SCALE || kind == UN_CLAMP || kind == UN_LEAKY_RELU) {
        p[0] = ggml_x_get_op_params_f32(dst, 0);
        p[1] = ggml_x_get_op_params_f32(dst, 1);
    }

    const int64_t ne0 = dst->ne[0], ne1 = dst->ne[1], ne2 = dst->ne[2];
    const size_t snb0 = src0->nb[0], dnb0 = dst->nb[0];
    const bool dense = snb0 == sizeof(float) && dnb0 == sizeof(float);

    const int64_t nr = ggml_nrows(dst);
    if (dense && nr < cc->nth) {
        // fewer rows than threads (one token's activations): split the rows along dim 0
        int64_t e0, e1;
        rowconv_split_aligned(ne0, cc->ith, cc->nth, 16, &e0, &e1);
        for (int64_t ir = 0; ir < nr && e1 > e0; ir++) {
            int64_t i1, i2, i3;
            rowconv_unravel(ir, ne1, ne2, &i1, &i2, &i3);
            const float * x = (const float *) rowconv_row(src0, i1, i2, i3);
            float * y = (float *) rowconv_row(dst, i1, i2, i3);
            unary_vec(kind, e1 - e0, y + e0, x + e0, p);
        }
        return;
    }

    int64_t ir0, ir1;
    rowconv_split(nr, cc->ith, cc->nth, &ir0, &ir1);

    for (int64_t ir = ir0; ir < ir1; ir++) {
        int64_t i1, i2, i3;
        rowconv_unravel(ir, ne1, ne2, &i1, &i2, &i3);
        const char * x = rowconv_row(src0, i1, i2, i3);
        char * y = rowconv_row(dst, i1, i2, i3);
        if (dense) {
            unary_vec(kind, ne0, (float *) y, (const float *) x, p);
            continue;
        }
        float tmp[UNARY_CHUNK];
        for (int64_t c0 = 0; c0 < ne0; c0 += UNARY_CHUNK) {
            const int64_t n = GGML_X_MIN(ne0 - c0, (int64_t) UNARY_CHUNK);
            for (int64_t i = 0; i < n; i++) {
                tmp[i] = *(const float *) (x + (c0 + i) * snb0);
            }
            unary_vec(kind, n, tmp, tmp, p);
            for (int64_t i = 0; i < n; i++) {
                *(float *) (y + (c0 + i) * dnb0) = tmp[i];
            }
        }
    }
}

static void unary_op_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    unary_forward(cc, dst, ggml_x_get_op_params_i32(dst, 0));
}
static void sqr_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    unary_forward(cc, dst, UN_SQR);
}
static void sqrt_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    unary_forward(cc, dst, UN_SQRT);
}
static void log_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    unary_forward(cc, dst, UN_LOG);
}
static void scale_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    unary_forward(cc, dst, UN_SCALE);
}
static void clamp_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    unary_forward(cc, dst, UN_CLAMP);
}
static void leaky_relu_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    unary_forward(cc, dst, UN_LEAKY_RELU);
}

const struct ggml_cpu_op ggml_cpu_op_unary = { .forward = unary_op_forward, .supports = unary_op_supports };
const struct ggml_cpu_op ggml_cpu_op_sqr = { .forward = sqr_forward, .supports = rowconv_f32_same_shape };
const struct ggml_cpu_op ggml_cpu_op_sqrt = { .forward = sqrt_forward, .supports = rowconv_f32_same_shape };
const struct ggml_cpu_op ggml_cpu_op_log = { .forward = log_forward, .supports = rowconv_f32_same_shape };
const struct ggml_cpu_op ggml_cpu_op_scale = { .forward = scale_forward, .supports = rowconv_f32_same_shape };
const struct ggml_cpu_op ggml_cpu_op_clamp = { .forward = clamp_forward, .supports = rowconv_f32_same_shape };
const struct ggml_cpu_op ggml_cpu_op_leaky_relu = { .forward = leaky_relu_forward, .supports = rowconv_f32_same_shape };

// ---------------------------------------------------------------------------------------------
// SILU_BACK
// SILU_BACK (the gradient of silu, F32): dst = dy * s(x) * (1 + x * (1 - s(x))), s the logistic
// function; src0 = x, src1 = dy.

static void silu_back_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * x = dst->src[0];
    const struct ggml_tensor * dy = dst->src[1];
    int64_t ir0, ir1;
    rowconv_split(ggml_nrows(dst), cc->ith, cc->nth, &ir0, &ir1);
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const char * xr = rowconv_row_flat(x, ir);
        const char * gr = rowconv_row_flat(dy, ir);
        char * d = rowconv_row_flat(dst, ir);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            const double v = ROWCONV_F32_AT(x, i0, xr);
            const double s = 1.0 / (1.0 + exp(-v));
            ROWCONV_F32_AT(dst, i0, d) = (float) ((double) ROWCONV_F32_AT(dy, i0, gr) * s * (1.0 + v * (1.0 - s)));
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_silu_back = {
    .forward  = silu_back_forward,
    .supports = rowconv_back_pair_supports,
};
