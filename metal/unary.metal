// unary.metal - element-wise F32 ops: SCALE (f[0]), SQR, SQRT, LOG, CLAMP (f[0], f[1]),
// LEAKY_RELU (f[0] = negative slope) and the unary ops ABS, SGN, NEG, STEP, TANH, ELU, RELU,
// GELU, GELU_QUICK, SILU. One threadgroup per row (i1, i2, i3);
// threads stride over i0. i[0] selects the function (enum ggml_metal_unary_fn of
// ggml-metal-kargs.h, which the host uses too).

inline float unary_apply(int fn, float x, float p, float q) {
    switch (fn) {
    case GGML_METAL_UNARY_SQRT:       return sqrt(x);
    case GGML_METAL_UNARY_LOG:        return log(x);
    case GGML_METAL_UNARY_CLAMP:      return max(min(x, q), p);
    case GGML_METAL_UNARY_ABS:        return fabs(x);
    case GGML_METAL_UNARY_SGN:        return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
    case GGML_METAL_UNARY_NEG:        return -x;
    case GGML_METAL_UNARY_STEP:       return x > 0.0f ? 1.0f : 0.0f;
    case GGML_METAL_UNARY_ELU:        return x > 0.0f ? x : exp(x) - 1.0f;
    case GGML_METAL_UNARY_SCALE:      return x * p;
    case GGML_METAL_UNARY_SQR:        return x * x;
    case GGML_METAL_UNARY_LEAKY_RELU: return x > 0.0f ? x : x * p;
    case GGML_METAL_UNARY_TANH:       return tanh(x);
    case GGML_METAL_UNARY_RELU:       return x > 0.0f ? x : 0.0f;
    case GGML_METAL_UNARY_GELU: {
        const float c = 0.7978845608028654f; // sqrt(2/pi)
        return 0.5f * x * (1.0f + tanh(c * x * (1.0f + 0.044715f * x * x)));
    }
    case GGML_METAL_UNARY_GELU_QUICK: return x / (1.0f + exp(-1.702f * x));
    default:               return x / (1.0f + exp(-x)); // SILU
    }
}

kernel void kernel_unary(GGML_METAL_KERNEL_ARGS) {
    const int64_t i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
    device const char * a = src0 + i1*args.nb01 + i2*args.nb02 + i3*args.nb03;
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    for (int64_t i0 = tpitg.x; i0 < args.ne0; i0 += ntg.x) {
        const float x = *(device const float *) (a + i0*args.nb00);
        *(device float *) (d + i0*args.nb0) = unary_apply(args.i[0], x, args.f[0], args.f[1]);
    }
}
