// cpu-features.h - run-time CPU feature detection and the SIMD dispatch level.
//
// Detection runs once (thread-safe) on first use. The dispatch level is the best kernel family
// the machine runs; the environment variable GGML_X_CPU_LEVEL (scalar, avx2, avx512, vnni on
// x86-64; scalar, neon, dotprod on arm64) lowers it for testing. It is never raised above what
// was detected.

#ifndef GGML_X_CPU_FEATURES_H
#define GGML_X_CPU_FEATURES_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ggml_x_cpu_features {
    // x86-64 (instruction set present and its register state enabled by the OS)
    bool sse3;
    bool ssse3;
    bool avx;
    bool avx2;
    bool fma;
    bool f16c;
    bool avx512f;
    bool avx512dq;
    bool avx512bw;
    bool avx512vl;
    bool avx512_vbmi;
    bool avx512_vnni;
    bool avx_vnni;
    // arm64
    bool neon;
    bool arm_fma;
    bool dotprod;
};

// Kernel families, ordered within each architecture: a level implies all lower ones of its
// architecture. SCALAR is the portable C code everywhere.
enum ggml_x_cpu_level {
    GGML_X_CPU_SCALAR = 0,
    // x86-64
    GGML_X_CPU_AVX2,         // AVX2 + FMA + F16C
    GGML_X_CPU_AVX512,       // + AVX-512 F/BW/VL/DQ
    GGML_X_CPU_AVX512_VNNI,  // + AVX-512 VNNI
    // arm64
    GGML_X_CPU_NEON,
    GGML_X_CPU_NEON_DOTPROD,
    GGML_X_CPU_LEVEL_COUNT,
};

const struct ggml_x_cpu_features * ggml_x_cpu_features(void);

// best level of this machine, ignoring the environment
enum ggml_x_cpu_level ggml_x_cpu_level_detected(void);

// level the kernels are selected for: detected, lowered by GGML_X_CPU_LEVEL
enum ggml_x_cpu_level ggml_x_cpu_level(void);

// does this machine run kernels of `level` (SCALAR always; a level of the other architecture never)?
bool ggml_x_cpu_level_supported(enum ggml_x_cpu_level level);

const char * ggml_x_cpu_level_name(enum ggml_x_cpu_level level);

#ifdef __cplusplus
}
#endif

#endif // GGML_X_CPU_FEATURES_H
