// ggml-metal-kargs.h - the argument block every kernel receives at buffer index 0, shared by
// the host (C/Objective-C) and the kernels (MSL; the embedded source puts this file right after
// common.metal). Shapes use ggml's vocabulary: ne = element counts, nb = byte strides.
// Only 8- and 4-byte members, 8-byte ones first, so both compilers lay it out alike.

#ifndef GGML_METAL_KARGS_H
#define GGML_METAL_KARGS_H

#ifndef __METAL_VERSION__
#ifndef GGML_METAL_EMU_KERNELS
#include <stdint.h>
#endif
#endif

typedef struct {
    int64_t  ne00, ne01, ne02, ne03; // src0
    uint64_t nb00, nb01, nb02, nb03;
    int64_t  ne10, ne11, ne12, ne13; // src1
    uint64_t nb10, nb11, nb12, nb13;
    int64_t  ne20, ne21, ne22, ne23; // src2
    uint64_t nb20, nb21, nb22, nb23;
    int64_t  ne0,  ne1,  ne2,  ne3;  // dst
    uint64_t nb0,  nb1,  nb2,  nb3;
    int32_t  i[16];                  // op parameters (integers)
    float    f[16];                  // op parameters (floats)
} ggml_metal_kargs;

// The functions of kernel_unary (unary.metal), selected by i[0]; the host sets them by name.
enum ggml_metal_unary_fn {
    GGML_METAL_UNARY_SCALE      = 0,
    GGML_METAL_UNARY_SQR        = 1,
    GGML_METAL_UNARY_LEAKY_RELU = 2,
    GGML_METAL_UNARY_TANH       = 3,
    GGML_METAL_UNARY_RELU       = 4,
    GGML_METAL_UNARY_GELU       = 5,
    GGML_METAL_UNARY_GELU_QUICK = 6,
    GGML_METAL_UNARY_SILU       = 7,
    GGML_METAL_UNARY_SQRT       = 8,
    GGML_METAL_UNARY_LOG        = 9,
    GGML_METAL_UNARY_CLAMP      = 10,
    GGML_METAL_UNARY_ABS        = 11,
    GGML_METAL_UNARY_SGN        = 12,
    GGML_METAL_UNARY_NEG        = 13,
    GGML_METAL_UNARY_STEP       = 14,
    GGML_METAL_UNARY_ELU        = 15,
};

#endif // GGML_METAL_KARGS_H
