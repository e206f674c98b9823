// ggml-types.c - the core type traits: name, block geometry, is_quantized, the vec_dot partner
// type and the reference conversions (ggml-quants.c, the scalar fp16 rows of ggml.c) of every
// ggml_type. vec_dot stays NULL here: the CPU backend's traits (cpu/traits.c) add the dot products
// and the SIMD conversions, and define the public ggml_internal_get_type_traits.
//
// IQ2_XXS / IQ2_XS have no conversions: their function pointers stay NULL and ops report the
// type as unsupported.

#include "ggml-impl.h"
#include "ggml-quants.h"

static void ggml_x_f16_to_f32_row(const void * GGML_RESTRICT x, float * GGML_RESTRICT y, int k) {
    ggml_x_fp16_to_fp32_row_scalar((const ggml_fp16_t *) x, y, k);
}

static void ggml_x_f32_to_f16_row(const float * GGML_RESTRICT x, void * GGML_RESTRICT y, int k) {
    ggml_x_fp32_to_fp16_row_scalar(x, (ggml_fp16_t *) y, k);
}

static const ggml_type_traits_t ggml_x_traits[GGML_TYPE_COUNT] = {
    [GGML_TYPE_F32] = {
        .type_name = "f32", .blck_size = 1, .type_size = sizeof(float), .is_quantized = false,
        .vec_dot_type = GGML_TYPE_F32,
    },
    [GGML_TYPE_F16] = {
        .type_name = "f16", .blck_size = 1, .type_size = sizeof(ggml_fp16_t), .is_quantized = false,
        .to_float = ggml_x_f16_to_f32_row, .from_float = ggml_x_f32_to_f16_row,
        .from_float_reference = ggml_x_f32_to_f16_row,
        .vec_dot_type = GGML_TYPE_F16,
    },
    [GGML_TYPE_Q4_0] = { .type_name = "q4_0",    .blck_size = 32,  .type_size = 18,  .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_0,
        .to_float = ggml_x_dequantize_row_q4_0, .from_float = ggml_x_quantize_row_q4_0_ref,
        .from_float_reference = ggml_x_quantize_row_q4_0_ref },
    [GGML_TYPE_Q4_1] = { .type_name = "q4_1",    .blck_size = 32,  .type_size = 20,  .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_1,
        .to_float = ggml_x_dequantize_row_q4_1, .from_float = ggml_x_quantize_row_q4_1_ref,
        .from_float_reference = ggml_x_quantize_row_q4_1_ref },
    [4]                 = { .type_name = "DEPRECATED", .blck_size = 0, .type_size = 0 },
    [5]                 = { .type_name = "DEPRECATED", .blck_size = 0, .type_size = 0 },
    [GGML_TYPE_Q5_0] = { .type_name = "q5_0",    .blck_size = 32,  .type_size = 22,  .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_0,
        .to_float = ggml_x_dequantize_row_q5_0, .from_float = ggml_x_quantize_row_q5_0_ref,
        .from_float_reference = ggml_x_quantize_row_q5_0_ref },
    [GGML_TYPE_Q5_1] = { .type_name = "q5_1",    .blck_size = 32,  .type_size = 24,  .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_1,
        .to_float = ggml_x_dequantize_row_q5_1, .from_float = ggml_x_quantize_row_q5_1_ref,
        .from_float_reference = ggml_x_quantize_row_q5_1_ref },
    [GGML_TYPE_Q8_0] = { .type_name = "q8_0",    .blck_size = 32,  .type_size = 34,  .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_0,
        .to_float = ggml_x_dequantize_row_q8_0, .from_float = ggml_x_quantize_row_q8_0_ref,
        .from_float_reference = ggml_x_quantize_row_q8_0_ref },
    [GGML_TYPE_Q8_1] = { .type_name = "q8_1",    .blck_size = 32,  .type_size = 40,  .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_1,
        .to_float = ggml_x_dequantize_row_q8_1, .from_float = ggml_x_quantize_row_q8_1_ref,
        .from_float_reference = ggml_x_quantize_row_q8_1_ref },
    [GGML_TYPE_Q2_K] = { .type_name = "q2_K",    .blck_size = 256, .type_size = 84,  .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_K,
        .to_float = ggml_x_dequantize_row_q2_K, .from_float = ggml_x_quantize_row_q2_K_ref,
        .from_float_reference = ggml_x_quantize_row_q2_K_ref },
    [GGML_TYPE_Q3_K] = { .type_name = "q3_K",    .blck_size = 256, .type_size = 110, .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_K,
        .to_float = ggml_x_dequantize_row_q3_K, .from_float = ggml_x_quantize_row_q3_K_ref,
        .from_float_reference = ggml_x_quantize_row_q3_K_ref },
    [GGML_TYPE_Q4_K] = { .type_name = "q4_K",    .blck_size = 256, .type_size = 144, .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_K,
        .to_float = ggml_x_dequantize_row_q4_K, .from_float = ggml_x_quantize_row_q4_K_ref,
        .from_float_reference = ggml_x_quantize_row_q4_K_ref },
    [GGML_TYPE_Q5_K] = { .type_name = "q5_K",    .blck_size = 256, .type_size = 176, .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_K,
        .to_float = ggml_x_dequantize_row_q5_K, .from_float = ggml_x_quantize_row_q5_K_ref,
        .from_float_reference = ggml_x_quantize_row_q5_K_ref },
    [GGML_TYPE_Q6_K] = { .type_name = "q6_K",    .blck_size = 256, .type_size = 210, .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_K,
        .to_float = ggml_x_dequantize_row_q6_K, .from_float = ggml_x_quantize_row_q6_K_ref,
        .from_float_reference = ggml_x_quantize_row_q6_K_ref },
    [GGML_TYPE_Q8_K] = { .type_name = "q8_K",    .blck_size = 256, .type_size = 292, .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_K,
        .to_float = ggml_x_dequantize_row_q8_K, .from_float = ggml_x_quantize_row_q8_K_ref,
        .from_float_reference = ggml_x_quantize_row_q8_K_ref },
    [GGML_TYPE_IQ2_XXS] = { .type_name = "iq2_xxs", .blck_size = 256, .type_size = 66,  .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_K },
    [GGML_TYPE_IQ2_XS]  = { .type_name = "iq2_xs",  .blck_size = 256, .type_size = 74,  .is_quantized = true, .vec_dot_type = GGML_TYPE_Q8_K },
    [GGML_TYPE_I8]  = { .type_name = "i8",  .blck_size = 1, .type_size = sizeof(int8_t),  .is_quantized = false },
    [GGML_TYPE_I16] = { .type_name = "i16", .blck_size = 1, .type_size = sizeof(int16_t), .is_quantized = false },
    [GGML_TYPE_I32] = { .type_name = "i32", .blck_size = 1, .type_size = sizeof(int32_t), .is_quantized = false },
};

bool ggml_x_type_valid(enum ggml_type type) {
    return (int) type >= 0 && type < GGML_TYPE_COUNT && ggml_x_traits[type].blck_size > 0;
}

const ggml_type_traits_t * ggml_x_type_traits(enum ggml_type type) {
    if ((int) type < 0 || type >= GGML_TYPE_COUNT) {
        return NULL;
    }
    ggml_x_init_tables(); // the reference kernels read fp16 scales through the table
    return &ggml_x_traits[type];
}
