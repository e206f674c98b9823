// vec.c - the scalar row kernels of vec.h (the reference for the SIMD ones), the fp16 exp table
// of the softmax, and the per-level selection.

#include "cpu/vec.h"

#include <math.h>
#include <pthread.h>

// ---------------------------------------------------------------------------------------------
// fp16 exp table

// 65536 entries plus 16 of padding, so a vector load or gather past the last index stays inside
static float g_exp_f16[65536 + 16];
static pthread_once_t g_exp_f16_once = PTHREAD_ONCE_INIT;

static void vec_exp_f16_build(void) {
    for (uint32_t h = 0; h < 65536; h++) {
        const uint16_t bits = (uint16_t) h;
        ggml_fp16_t hv;
        memcpy(&hv, &bits, sizeof(hv)); // bits, not a numeric conversion (__fp16 on arm64)
        const float x = ggml_fp16_to_fp32(hv);
        g_exp_f16[h] = ggml_fp16_to_fp32(ggml_x_fp32_to_fp16(expf(x)));
    }
}

const float * ggml_x_vec_exp_f16_table(void) {
    pthread_once(&g_exp_f16_once, vec_exp_f16_build);
    return g_exp_f16;
}

// ---------------------------------------------------------------------------------------------
// scalar kernels

static inline float vec_silu_ref(float x) {
    const double v = x;
    return (float) (v / (1.0 + exp(-v)));
}

static inline float vec_gelu_ref(float x) {
    const double c = 0.79788456080286535587989211986876; // sqrt(2/pi)
    const double v = x;
    return (float) (0.5 * v * (1.0 + tanh(c * (v + 0.044715 * v * v * v))));
}

static inline float vec_gelu_quick_ref(float x) {
    const double v = x;
    return (float) (v / (1.0 + exp(-1.702 * v)));
}

static void vec_unary_scalar(int kind, int64_t n, float * y, const float * x) {
    switch (kind) {
        case GGML_X_VEC_SILU:
            for (int64_t i = 0; i < n; i++) y[i] = vec_silu_ref(x[i]);
            break;
        case GGML_X_VEC_GELU:
            for (int64_t i = 0; i < n; i++) y[i] = vec_gelu_ref(x[i]);
            break;
        case GGML_X_VEC_GELU_QUICK:
            for (int64_t i = 0; i < n; i++) y[i] = vec_gelu_quick_ref(x[i]);
            break;
        default:
            break;
    }
}

static double vec_sum_sq_scalar(int64_t n, const float * x) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += (double) (x[i] * x[i]);
    }
    return s;
}

static double vec_sum_scalar(int64_t n, const float * x) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        s += (double) x[i];
    }
    return s;
}

static double vec_sub_sum_sq_scalar(int64_t n, float * y, const float * x, float m) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i] - m;
        y[i] = v;
        s += (double) (v * v);
    }
    return s;
}

static void vec_scale_scalar(int64_t n, float * y, const float * x, float s) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = x[i] * s;
    }
}

static float vec_scale_mask_max_scalar(int64_t n, float * w, const float * x, float scale, const float * mask) {
    float max = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        float v = x[i] * scale;
        if (mask != NULL) {
            v += mask[i];
        }
        w[i] = v;
        max = max > v ? max : v;
    }
    return max;
}

static double vec_exp_sum_scalar(int64_t n, float * w, float max) {
    const float * t = ggml_x_vec_exp_f16_table();
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
        float v = 0.0f;
        if (w[i] != -INFINITY) {
            const ggml_fp16_t h = ggml_x_fp32_to_fp16(w[i] - max);
            uint16_t bits;
            memcpy(&bits, &h, sizeof(bits)); // ggml_fp16_t is __fp16 on arm64
            v = t[bits];
            s += (double) v;
        }
        w[i] = v;
    }
    return s;
}

// ---------------------------------------------------------------------------------------------
// selection

#if defined(__x86_64__)
void ggml_x_vec_kernels_avx2(struct ggml_x_vec_kernels * k);   // vec-avx2.c
void ggml_x_vec_kernels_avx512(struct ggml_x_vec_kernels * k); // vec-avx512.c
#endif

static void vec_lookup_f16_scalar(int64_t n, float * y, const float * x, const ggml_fp16_t * table, float lo,
                                  float hi) {
    for (int64_t i = 0; i < n; i++) {
        const float v = x[i];
        if (v <= lo) {
            y[i] = 0.0f;
        } else if (v >= hi) {
            y[i] = v;
        } else {
            const ggml_fp16_t h = ggml_x_fp32_to_fp16(v);
            uint16_t bits;
            memcpy(&bits, &h, sizeof(bits)); // bits, not a numeric conversion (__fp16 on arm64)
            y[i] = ggml_fp16_to_fp32(table[bits]);
        }
    }
}

static void vec_softcap_scalar(int64_t n, float * y, const float * x, float c) {
    for (int64_t i = 0; i < n; i++) {
        y[i] = c * tanhf(x[i] / c);
    }
}

static void vec_kernels_scalar(struct ggml_x_vec_kernels * k) {
    k->unary          = vec_unary_scalar;
    k->sum_sq         = vec_sum_sq_scalar;
    k->sum            = vec_sum_scalar;
    k->sub_sum_sq     = vec_sub_sum_sq_scalar;
    k->scale          = vec_scale_scalar;
    k->scale_mask_max = vec_scale_mask_max_scalar;
    k->exp_sum        = vec_exp_sum_scalar;
    k->lookup_f16     = vec_lookup_f16_scalar;
    k->softcap        = vec_softcap_scalar;
}

bool ggml_x_vec_kernels_for_level(enum ggml_x_cpu_level level, struct ggml_x_vec_kernels * k) {
    vec_kernels_scalar(k);
    if (!ggml_x_cpu_level_supported(level)) {
        return false;
    }
    switch (level) {
#if defined(__x86_64__)
        case GGML_X_CPU_AVX2:
            ggml_x_vec_kernels_avx2(k);
            break;
        case GGML_X_CPU_AVX512:
        case GGML_X_CPU_AVX512_VNNI:
            ggml_x_vec_kernels_avx2(k);
            ggml_x_vec_kernels_avx512(k);
            break;
#endif
        default:
            break; // scalar (arm64: the compiler's auto-vectorised scalar code for now)
    }
    return true;
}

static struct ggml_x_vec_kernels g_vec_active;
static pthread_once_t g_vec_once = PTHREAD_ONCE_INIT;

static void vec_select(void) {
    ggml_x_vec_kernels_for_level(ggml_x_cpu_level(), &g_vec_active);
}

const struct ggml_x_vec_kernels * ggml_x_vec_kernels_active(void) {
    pthread_once(&g_vec_once, vec_select);
    return &g_vec_active;
}
