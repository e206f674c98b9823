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

#endif // GGML_METAL_KARGS_H
