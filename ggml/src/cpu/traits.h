// traits.h - the CPU backend's type traits: the core traits (ggml-types.c) with the CPU kernels
// added: vec_dot of every type that has one (the SIMD level chosen at start-up), and from_float /
// to_float where a SIMD variant exists (f16 rows, q8_0 and q8_K activations). The public
// ggml_internal_get_type_traits returns these (cpu/traits.c).

#ifndef GGML_X_CPU_TRAITS_H
#define GGML_X_CPU_TRAITS_H

#include "ggml-impl.h"

#ifdef __cplusplus
extern "C" {
#endif

// the CPU traits of type (NULL for out-of-range types); filled once, thread-safe
const ggml_type_traits_t * ggml_x_cpu_type_traits(enum ggml_type type);

#ifdef __cplusplus
}
#endif

#endif // GGML_X_CPU_TRAITS_H
