// unary.cu - element-wise F32 functions: UNARY (abs, sgn, neg, step, tanh, elu, relu, gelu,
// gelu_quick, silu), SQR, SQRT, LOG, SCALE, CLAMP and LEAKY_RELU. Same formulas as the CPU
// kernels (gelu, gelu_quick and silu in double precision, rounded once). Any strides; dst may
// alias src (each element is read before it is written by the same thread).

#include "common.cuh"

enum cu_unary_kind {
    CU_UN_SQR = GGML_UNARY_OP_COUNT,
    CU_UN_SQRT,
    CU_UN_LOG,
    CU_UN_SCALE,
    CU_UN_CLAMP,
    CU_UN_LEAKY_RELU,
};

__device__ __forceinline__ float cu_unary_apply(int kind, float x, float p0, float p1) {
    switch (kind) {
        case GGML_UNARY_OP_ABS:  return fabsf(x);
        case GGML_UNARY_OP_SGN:  return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
        case GGML_UNARY_OP_NEG:  return -x;
        case GGML_UNARY_OP_STEP: return x > 0.0f ? 1.0f : 0.0f;
        case GGML_UNARY_OP_TANH: return tanhf(x);
        case GGML_UNARY_OP_ELU:  return x > 0.0f ? x : expf(x) - 1.0f;
        case GGML_UNARY_OP_RELU: return x > 0.0f ? x : 0.0f;
        case GGML_UNARY_OP_GELU: {
            const double c = 0.79788456080286535587989211986876; // sqrt(2/pi)
            const double v = x;
            return (float) (0.5 * v * (1.0 + tanh(c * (v + 0.044715 * v * v * v))));
        }
        case GGML_UNARY_OP_GELU_QUICK: {
            const double v = x;
            return (float) (v / (1.0 + exp(-1.702 * v)));
        }
        case GGML_UNARY_OP_SILU: {
            const double v = x;
            return (float) (v / (1.0 + exp(-v)));
        }
        case CU_UN_SQR:   return x * x;
        case CU_UN_SQRT:  return sqrtf(x);
        case CU_UN_LOG:   return logf(x);
        case CU_UN_SCALE: return x * p0;
        case CU_UN_CLAMP: {
            const float v = x < p1 ? x : p1;
            return v > p0 ? v : p0;
        }
        case CU_UN_LEAKY_RELU: return (x > 0.0f ? x : 0.0f) + p0 * (x < 0.0f ? x : 0.0f);
        default: return x;
    }
}

// I: the index type (uint32_t when n <= INT32_MAX, cu_small_index)
template <typename I>
__global__ void __launch_bounds__(CU_THREADS)
cu_unary_kernel(cu_t src, cu_t dst, int kind, float p0, float p1, int64_t n) {
    CU_GRID_STRIDE(idx, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel_t<I>(idx, dst.ne, i0, i1, i2, i3);
        const float x = *(const float *) cu_ptr(src, i0, i1, i2, i3);
        *(float *) cu_ptr(dst, i0, i1, i2, i3) = cu_unary_apply(kind, x, p0, p1);
    }
}

static int cu_unary_kind_of(const ggml_tensor * dst) {
    switch (dst->op) {
        case GGML_OP_UNARY:      return ggml_x_get_op_params_i32(dst, 0);
        case GGML_OP_SQR:        return CU_UN_SQR;
        case GGML_OP_SQRT:       return CU_UN_SQRT;
        case GGML_OP_LOG:        return CU_UN_LOG;
        case GGML_OP_SCALE:      return CU_UN_SCALE;
        case GGML_OP_CLAMP:      return CU_UN_CLAMP;
        case GGML_OP_LEAKY_RELU: return CU_UN_LEAKY_RELU;
        default:                 return -1;
    }
}

bool ggml_cu_unary_supported(const ggml_tensor * dst) {
    const ggml_tensor * src = dst->src[0];
    if (src == NULL || src->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32 || !cu_same_shape(src, dst)) {
        return false;
    }
    const int kind = cu_unary_kind_of(dst);
    if (dst->op == GGML_OP_UNARY) {
        return kind >= 0 && kind < GGML_UNARY_OP_COUNT;
    }
    return kind >= 0;
}

bool ggml_cu_unary(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const int kind = cu_unary_kind_of(dst);
    float p0 = 0.0f, p1 = 0.0f;
    if (kind == CU_UN_SCALE || kind == CU_UN_CLAMP || kind == CU_UN_LEAKY_RELU) {
        p0 = ggml_x_get_op_params_f32(dst, 0);
        p1 = ggml_x_get_op_params_f32(dst, 1);
    }
    const int64_t n = ggml_nelements(dst);
    if (n == 0) {
        return true;
    }
    const cu_t s = cu_make(dst->src[0]), d = cu_make(dst);
    if (cu_small_index(n)) {
        CU_LAUNCH(cu_unary_kernel<uint32_t>, cu_blocks(n), CU_THREADS, 0, ctx.stream)(s, d, kind, p0, p1, n);
    } else {
        CU_LAUNCH(cu_unary_kernel<int64_t>, cu_blocks(n), CU_THREADS, 0, ctx.stream)(s, d, kind, p0, p1, n);
    }
    return CU_LAUNCH_OK();
}
