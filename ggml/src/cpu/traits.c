// traits.c - the CPU type traits: a copy of the core traits (ggml-types.c) with the CPU kernels
// installed (dot products, SIMD conversions of the active level), and the public
// ggml_internal_get_type_traits, which returns them.

#include "ggml-impl.h"
#include "ggml-quants.h"
#include "cpu/quants-simd.h"
#include "cpu/traits.h"

#include <pthread.h>

static void cpu_vec_dot_f32(const int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y) {
    const float * a = (const float *) x;
    const float * b = (const float *) y;
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        sum += (double) a[i] * (double) b[i];
    }
    *s = (float) sum;
}

static void cpu_vec_dot_f16(const int n, float * GGML_RESTRICT s, const void * GGML_RESTRICT x, const void * GGML_RESTRICT y) {
    const ggml_fp16_t * a = (const ggml_fp16_t *) x;
    const ggml_fp16_t * b = (const ggml_fp16_t *) y;
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        sum += (double) GGML_FP16_TO_FP32(a[i]) * (double) GGML_FP16_TO_FP32(b[i]);
    }
    *s = (float) sum;
}

static void cpu_f16_to_f32_row(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k) {
    ggml_x_fp16_to_fp32_row_simd((const ggml_fp16_t *) x, y, k);
}

static void cpu_f32_to_f16_row(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k) {
    ggml_x_fp32_to_fp16_row_simd(x, (ggml_fp16_t *) y, k);
}

static ggml_type_traits_t cpu_traits[GGML_TYPE_COUNT];
static pthread_once_t     cpu_traits_once = PTHREAD_ONCE_INIT;

static void cpu_traits_fill(void) {
    for (int t = 0; t < GGML_TYPE_COUNT; t++) {
        cpu_traits[t] = *ggml_x_type_traits((enum ggml_type) t); // also fills the fp16 table
    }
    const struct ggml_x_quant_kernels * kq = ggml_x_quant_kernels_active();

    cpu_traits[GGML_TYPE_F32].vec_dot    = cpu_vec_dot_f32;
    cpu_traits[GGML_TYPE_F16].vec_dot    = cpu_vec_dot_f16;
    cpu_traits[GGML_TYPE_F16].to_float   = cpu_f16_to_f32_row;
    cpu_traits[GGML_TYPE_F16].from_float = cpu_f32_to_f16_row;

    // activations of the dot products: the SIMD quantizers (bit-exact to the reference)
    cpu_traits[GGML_TYPE_Q8_0].from_float = kq->quantize_row_q8_0;
    cpu_traits[GGML_TYPE_Q8_K].from_float = kq->quantize_row_q8_K;

    cpu_traits[GGML_TYPE_Q4_0].vec_dot = kq->vec_dot_q4_0_q8_0;
    cpu_traits[GGML_TYPE_Q4_1].vec_dot = kq->vec_dot_q4_1_q8_1;
    cpu_traits[GGML_TYPE_Q5_0].vec_dot = kq->vec_dot_q5_0_q8_0;
    cpu_traits[GGML_TYPE_Q5_1].vec_dot = kq->vec_dot_q5_1_q8_1;
    cpu_traits[GGML_TYPE_Q8_0].vec_dot = kq->vec_dot_q8_0_q8_0;
    cpu_traits[GGML_TYPE_Q2_K].vec_dot = kq->vec_dot_q2_K_q8_K;
    cpu_traits[GGML_TYPE_Q3_K].vec_dot = kq->vec_dot_q3_K_q8_K;
    cpu_traits[GGML_TYPE_Q4_K].vec_dot = kq->vec_dot_q4_K_q8_K;
    cpu_traits[GGML_TYPE_Q5_K].vec_dot = kq->vec_dot_q5_K_q8_K;
    cpu_traits[GGML_TYPE_Q6_K].vec_dot = kq->vec_dot_q6_K_q8_K;
    // Q8_1, Q8_K: activation types, no dot product of their own; IQ2_XXS / IQ2_XS: no kernels
}

const ggml_type_traits_t * ggml_x_cpu_type_traits(enum ggml_type type) {
    if ((int) type < 0 || type >= GGML_TYPE_COUNT) {
        return NULL;
    }
    pthread_once(&cpu_traits_once, cpu_traits_fill);
    return &cpu_traits[type];
}

ggml_type_traits_t ggml_internal_get_type_traits(enum ggml_type type) {
    const ggml_type_traits_t * t = ggml_x_cpu_type_traits(type);
    if (t == NULL) {
        ggml_type_traits_t none = { 0 };
        return none;
    }
    return *t;
}
