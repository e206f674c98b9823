// quants-dispatch.c - selects the SIMD level's kernels once (see quants-simd.h).

#include "cpu/quants-simd.h"
#include "ggml-quants.h"

#include <pthread.h>

#if defined(__aarch64__)
// cpu/quants-neon.c
void ggml_x_quant_kernels_neon(struct ggml_x_quant_kernels * k);
void ggml_x_quant_kernels_neon_dotprod(struct ggml_x_quant_kernels * k);
#endif

static void ggml_x_quant_kernels_scalar(struct ggml_x_quant_kernels * k) {
    k->quantize_row_q8_0 = ggml_x_quantize_row_q8_0_ref;
    k->quantize_row_q8_K = ggml_x_quantize_row_q8_K_ref;
    k->vec_dot_q8_0_q8_0 = ggml_x_vec_dot_q8_0_q8_0_ref;
    k->vec_dot_q4_0_q8_0 = ggml_x_vec_dot_q4_0_q8_0_ref;
    k->vec_dot_q4_K_q8_K = ggml_x_vec_dot_q4_K_q8_K_ref;
    k->vec_dot_q6_K_q8_K = ggml_x_vec_dot_q6_K_q8_K_ref;
    k->vec_dot_q4_1_q8_1 = ggml_x_vec_dot_q4_1_q8_1_ref;
    k->vec_dot_q5_0_q8_0 = ggml_x_vec_dot_q5_0_q8_0_ref;
    k->vec_dot_q5_1_q8_1 = ggml_x_vec_dot_q5_1_q8_1_ref;
    k->vec_dot_q2_K_q8_K = ggml_x_vec_dot_q2_K_q8_K_ref;
    k->vec_dot_q3_K_q8_K = ggml_x_vec_dot_q3_K_q8_K_ref;
    k->vec_dot_q5_K_q8_K = ggml_x_vec_dot_q5_K_q8_K_ref;
    k->fp16_to_fp32_row  = ggml_x_fp16_to_fp32_row_scalar;
    k->fp32_to_fp16_row  = ggml_x_fp32_to_fp16_row_scalar;
    k->vec_dot_cols_q2_K = NULL;
    k->vec_dot_cols_q3_K = NULL;
    k->vec_dot_cols_q4_K = NULL;
    k->vec_dot_cols_q5_K = NULL;
    k->vec_dot_cols_q6_K = NULL;
}

bool ggml_x_quant_kernels_for_level(enum ggml_x_cpu_level level, struct ggml_x_quant_kernels * k) {
    ggml_x_quant_kernels_scalar(k);
    if (!ggml_x_cpu_level_supported(level)) {
        return false;
    }
    switch (level) {
        case GGML_X_CPU_SCALAR:
            return true;
#if defined(__x86_64__)
        case GGML_X_CPU_AVX2:
            ggml_x_quant_kernels_avx2(k);
            return true;
        case GGML_X_CPU_AVX512:
            ggml_x_quant_kernels_avx2(k);
            ggml_x_quant_kernels_avx512(k);
            return true;
        case GGML_X_CPU_AVX512_VNNI:
            ggml_x_quant_kernels_avx2(k);
            ggml_x_quant_kernels_avx512(k);
            ggml_x_quant_kernels_avx512_vnni(k);
            return true;
#endif
#if defined(__aarch64__)
        case GGML_X_CPU_NEON:
            ggml_x_quant_kernels_neon(k);
            return true;
        case GGML_X_CPU_NEON_DOTPROD:
            ggml_x_quant_kernels_neon(k);
            ggml_x_quant_kernels_neon_dotprod(k);
            return true;
#endif
        default:
            // not reached: a supported level is scalar or of this architecture
            return true;
    }
}

ggml_x_vec_dot_cols_t ggml_x_quant_dot_cols(const struct ggml_x_quant_kernels * k, enum ggml_type wtype) {
    switch (wtype) {
        case GGML_TYPE_Q2_K: return k->vec_dot_cols_q2_K;
        case GGML_TYPE_Q3_K: return k->vec_dot_cols_q3_K;
        case GGML_TYPE_Q4_K: return k->vec_dot_cols_q4_K;
        case GGML_TYPE_Q5_K: return k->vec_dot_cols_q5_K;
        case GGML_TYPE_Q6_K: return k->vec_dot_cols_q6_K;
        default:             return NULL;
    }
}

static struct ggml_x_quant_kernels g_active;
static pthread_once_t              g_active_once = PTHREAD_ONCE_INIT;

static void ggml_x_quant_kernels_select(void) {
    ggml_x_quant_kernels_for_level(ggml_x_cpu_level(), &g_active);
}

const struct ggml_x_quant_kernels * ggml_x_quant_kernels_active(void) {
    pthread_once(&g_active_once, ggml_x_quant_kernels_select);
    return &g_active;
}
