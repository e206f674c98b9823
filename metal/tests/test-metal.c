// test-metal.c - the Metal backend against the CPU backend: every op family it claims, on
// random inputs, computed on both and compared; supports_op with and without SIMD-group
// reductions (run it again with GGML_METAL_EMU_NO_SIMDGROUP=1 on the emulator); buffer type
// properties; a mapped region larger than the device's maxBufferLength (emulator: set through
// GGML_METAL_EMU_MAX_BUFFER before the buffer is made) split into overlapping views.
// On a Mac it runs against the real device (every check holds there too).

#include "ggml.h"
#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-metal.h"
#include "testing.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static ggml_backend_t g_metal;
static bool g_simd;

typedef struct ggml_tensor * (*build_fn)(struct ggml_context * ctx, struct ggml_tensor ** in);

struct input {
    enum ggml_type type;
    int64_t ne[4];
    int32_t i32_mod; // I32 inputs: values i % i32_mod
};

static uint32_t rng_state = 12345;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float) ((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void fill(struct ggml_tensor * t, const struct input * in, uint32_t seed) {
    const int64_t n = ggml_nelements(t);
    rng_state = seed;
    if (t->type == GGML_TYPE_I32) {
        int32_t * v = malloc((size_t) n * sizeof(int32_t));
        for (int64_t i = 0; i < n; i++) {
            v[i] = (int32_t) ((i * 7 + 3) % in->i32_mod);
        }
        ggml_backend_tensor_set(t, v, 0, (size_t) n * sizeof(int32_t));
        free(v);
        return;
    }
    float * f = malloc((size_t) n * sizeof(float));
    for (int64_t i = 0; i < n; i++) {
        f[i] = frand();
    }
    if (t->type == GGML_TYPE_F32) {
        ggml_backend_tensor_set(t, f, 0, (size_t) n * sizeof(float));
    } else {
        void * q = malloc(ggml_nbytes(t));
        const int64_t nrows = n / t->ne[0];
        if (t->type == GGML_TYPE_F16) {
            for (int64_t i = 0; i < n; i++) {
                ((ggml_fp16_t *) q)[i] = ggml_fp32_to_fp16(f[i]);
            }
        } else {
            ggml_quantize_chunk(t->type, f, q, 0, (int) nrows, (int) t->ne[0], NULL, NULL);
        }
        ggml_backend_tensor_set(t, q, 0, ggml_nbytes(t));
        free(q);
    }
    free(f);
}

// out as floats (F32 or F16 result, contiguous; a quantized result byte by byte, so that the
// comparison is exact)
static float * read_out(struct ggml_tensor * t) {
    const int64_t n = ggml_nelements(t);
    if (t->type != GGML_TYPE_F32 && t->type != GGML_TYPE_F16) {
        const size_t nb = ggml_nbytes(t);
        unsigned char * raw = malloc(nb);
        float * f = malloc(nb * sizeof(float));
        ggml_backend_tensor_get(t, raw, 0, nb);
        for (size_t i = 0; i < nb; i++) {
            f[i] = (float) raw[i];
        }
        free(raw);
        return f;
    }
    float * f = malloc((size_t) n * sizeof(float));
    if (t->type == GGML_TYPE_F16) {
        ggml_fp16_t * h = malloc((size_t) n * sizeof(ggml_fp16_t));
        ggml_backend_tensor_get(t, h, 0, (size_t) n * sizeof(ggml_fp16_t));
        for (int64_t i = 0; i < n; i++) {
            f[i] = ggml_fp16_to_fp32(h[i]);
        }
        free(h);
    } else {
        ggml_backend_tensor_get(t, f, 0, (size_t) n * sizeof(float));
    }
    return f;
}

// compute build(inputs) on backend b; returns the output as floats (NULL when not supported)
static float * compute(ggml_backend_t b, const struct input * ins, int n_in, build_fn build, int64_t * n_out,
                       bool * supported) {
    struct ggml_init_params p = {.mem_size = 64 * ggml_tensor_overhead() + ggml_graph_overhead(), .mem_buffer = NULL, .no_alloc = true};
    struct ggml_context * ctx = ggml_init(p);
    struct ggml_tensor * in[6];
    for (int i = 0; i < n_in; i++) {
        in[i] = ggml_new_tensor(ctx, ins[i].type, 4, ins[i].ne);
    }
    struct ggml_tensor * out = build(ctx, in);
    *supported = ggml_backend_supports_op(b, out);
    float * res = NULL;
    if (*supported) {
        ggml_backend_buffer_t buf = ggml_backend_alloc_ctx_tensors(ctx, b);
        T_CHECK(buf != NULL);
        for (int i = 0; i < n_in; i++) {
            fill(in[i], &ins[i], 1000u + (uint32_t) i);
        }
        struct ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_build_forward_expand(gf, out);
        T_CHECK(ggml_backend_graph_compute(b, gf));
        res = read_out(out);
        *n_out = out->type == GGML_TYPE_F32 || out->type == GGML_TYPE_F16 ? ggml_nelements(out) : (int64_t) ggml_nbytes(out);
        ggml_backend_buffer_free(buf);
    }
    ggml_free(ctx);
    return res;
}

static void check_case(const char * name, const struct input * ins, int n_in, build_fn build, double tol, bool needs_simd) {
    ggml_backend_t cpu = ggml_backend_cpu_init();
    int64_t n_cpu = 0, n_metal = 0;
    bool sup_cpu = false, sup_metal = false;
    float * want = compute(cpu, ins, n_in, build, &n_cpu, &sup_cpu);
    float * got = compute(g_metal, ins, n_in, build, &n_metal, &sup_metal);
    T_CHECK_MSG(sup_cpu, "%s: the CPU backend does not support the case", name);
    T_CHECK_MSG(sup_metal == (!needs_simd || g_simd), "%s: supports_op says %d (SIMD-group reductions: %d)", name,
                sup_metal, g_simd);
    if (want != NULL && got != NULL && tol < 0) {
        // normalised mean squared error at most -tol (the CPU quantizes src1 for quantized
        // matrix products; the GPU kernels multiply with F32 src1)
        T_CHECK(n_cpu == n_metal);
        double num = 0, den = 0;
        for (int64_t i = 0; i < n_cpu; i++) {
            num += ((double) got[i] - want[i]) * ((double) got[i] - want[i]);
            den += (double) want[i] * want[i];
        }
        T_CHECK_MSG(num <= -tol * den, "%s: NMSE %.3g above %.3g", name, num / den, -tol);
    } else if (want != NULL && got != NULL) {
        T_CHECK(n_cpu == n_metal);
        int bad = 0;
        for (int64_t i = 0; i < n_cpu && bad < 5; i++) {
            const double a = got[i], w = want[i];
            const bool ok = (isinf(w) && a == w) || fabs(a - w) <= tol * (fabs(w) > 1.0 ? fabs(w) : 1.0);
            if (!ok) {
                bad++;
                T_CHECK_MSG(ok, "%s: element %lld: Metal %.9g, CPU %.9g", name, (long long) i, a, w);
            }
        }
    }
    free(want);
    free(got);
    ggml_backend_free(cpu);
}

static struct ggml_tensor * b_add(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_add(c, in[0], in[1]); }
static struct ggml_tensor * b_mul(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_mul(c, in[0], in[1]); }
static struct ggml_tensor * b_div(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_div(c, in[0], in[1]); }
static struct ggml_tensor * b_scale(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_scale(c, in[0], 0.37f); }
static struct ggml_tensor * b_sqr(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_sqr(c, in[0]); }
static struct ggml_tensor * b_silu(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_silu(c, in[0]); }
static struct ggml_tensor * b_gelu(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_gelu(c, in[0]); }
static struct ggml_tensor * b_gelu_quick(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_gelu_quick(c, in[0]); }
static struct ggml_tensor * b_tanh(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_tanh(c, in[0]); }
static struct ggml_tensor * b_relu(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_relu(c, in[0]); }
static struct ggml_tensor * b_leaky(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_leaky_relu(c, in[0], 0.1f, false); }
static struct ggml_tensor * b_rms(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_rms_norm(c, in[0], 1e-5f); }
static struct ggml_tensor * b_norm(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_norm(c, in[0], 1e-5f); }
static struct ggml_tensor * b_sum_rows(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_sum_rows(c, in[0]); }
static struct ggml_tensor * b_softmax(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_soft_max_ext(c, in[0], in[1], 0.5f); }
static struct ggml_tensor * b_softmax0(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_soft_max(c, in[0]); }
static struct ggml_tensor * b_diag(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_diag_mask_inf(c, in[0], 2); }
static struct ggml_tensor * b_rope0(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_rope(c, in[0], in[1], 16, 0, 0); }
static struct ggml_tensor * b_rope2(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_rope(c, in[0], in[1], 12, 2, 0); }
static struct ggml_tensor * b_rope_yarn(struct ggml_context * c, struct ggml_tensor ** in) {
    return ggml_rope_custom(c, in[0], in[1], 16, 0, 0, 64, 10000.0f, 0.5f, 1.0f, 1.0f, 32.0f, 1.0f);
}
static struct ggml_tensor * b_get_rows(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_get_rows(c, in[0], in[1]); }
static struct ggml_tensor * b_cpy_f16(struct ggml_context * c, struct ggml_tensor ** in) {
    return ggml_cpy(c, in[0], ggml_new_tensor_2d(c, GGML_TYPE_F16, in[0]->ne[0] * in[0]->ne[1], in[0]->ne[2]));
}
static struct ggml_tensor * b_cont_t(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_cont(c, ggml_transpose(c, in[0])); }
static struct ggml_tensor * b_abs(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_abs(c, in[0]); }
static struct ggml_tensor * b_sgn(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_sgn(c, in[0]); }
static struct ggml_tensor * b_neg(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_neg(c, in[0]); }
static struct ggml_tensor * b_step(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_step(c, in[0]); }
static struct ggml_tensor * b_elu(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_elu(c, in[0]); }
static struct ggml_tensor * b_sqrt(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_sqrt(c, ggml_abs(c, in[0])); }
static struct ggml_tensor * b_log(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_log(c, ggml_abs(c, in[0])); }
static struct ggml_tensor * b_clamp(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_clamp(c, in[0], -0.3f, 0.5f); }
static struct ggml_tensor * b_cpy_q(struct ggml_context * c, struct ggml_tensor ** in, enum ggml_type t) {
    return ggml_cpy(c, in[0], ggml_new_tensor_2d(c, t, in[0]->ne[0], in[0]->ne[1] * in[0]->ne[2]));
}
static struct ggml_tensor * b_cpy_q8_0(struct ggml_context * c, struct ggml_tensor ** in) { return b_cpy_q(c, in, GGML_TYPE_Q8_0); }
static struct ggml_tensor * b_cpy_q4_0(struct ggml_context * c, struct ggml_tensor ** in) { return b_cpy_q(c, in, GGML_TYPE_Q4_0); }
static struct ggml_tensor * b_cpy_q4_1(struct ggml_context * c, struct ggml_tensor ** in) { return b_cpy_q(c, in, GGML_TYPE_Q4_1); }
// ids = in[0] (values 0..3: 3 is out of range), 3 experts in[1..3], b = in[4]; id column 1
static struct ggml_tensor * b_mul_mat_id(struct ggml_context * c, struct ggml_tensor ** in) {
    struct ggml_tensor * as[3] = {in[1], in[2], in[3]};
    return ggml_mul_mat_id(c, as, 3, in[0], 1, in[4]);
}
static struct ggml_tensor * b_pad(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_pad(c, in[0], 3, 2, 1, 1); }
static struct ggml_tensor * b_upscale(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_upscale(c, in[0], 2); }
static struct ggml_tensor * b_concat(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_concat(c, in[0], in[1]); }
static struct ggml_tensor * b_argsort_asc(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_argsort(c, in[0], GGML_SORT_ASC); }
static struct ggml_tensor * b_argsort_desc(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_argsort(c, in[0], GGML_SORT_DESC); }
static struct ggml_tensor * b_group_norm(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_group_norm(c, in[0], 3); }
static struct ggml_tensor * b_alibi(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_alibi(c, in[0], 0, 4, 8.0f); }
static struct ggml_tensor * b_acc(struct ggml_context * c, struct ggml_tensor ** in) {
    return ggml_acc(c, in[0], in[1], in[0]->nb[1], in[0]->nb[2], in[0]->nb[3], 2 * in[0]->nb[1] + 4 * sizeof(float));
}
static struct ggml_tensor * b_sub(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_sub(c, in[0], in[1]); }
static struct ggml_tensor * b_add1(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_add1(c, in[0], in[1]); }
static struct ggml_tensor * b_repeat(struct ggml_context * c, struct ggml_tensor ** in) {
    return ggml_repeat(c, in[0], ggml_new_tensor_4d(c, in[0]->type, in[0]->ne[0] * 2, in[0]->ne[1], in[0]->ne[2] * 3, 2));
}
static struct ggml_tensor * b_dup_perm(struct ggml_context * c, struct ggml_tensor ** in) {
    return ggml_cont(c, ggml_permute(c, in[0], 1, 2, 0, 3));
}
static struct ggml_tensor * b_mul_mat(struct ggml_context * c, struct ggml_tensor ** in) { return ggml_mul_mat(c, in[0], in[1]); }

#define IN(t, a, b, cc, d) {t, {a, b, cc, d}, 1}

static void test_ops(void) {
    const struct input bin[] = {IN(GGML_TYPE_F32, 67, 5, 3, 2), IN(GGML_TYPE_F32, 67, 1, 3, 1)};
    check_case("ADD bcast", bin, 2, b_add, 1e-6, false);
    check_case("SUB bcast", bin, 2, b_sub, 1e-6, false);
    const struct input a1[] = {IN(GGML_TYPE_F32, 67, 5, 3, 2), IN(GGML_TYPE_F32, 1, 1, 1, 1)};
    check_case("ADD1", a1, 2, b_add1, 1e-6, false);
    const struct input rp32[] = {IN(GGML_TYPE_F32, 7, 3, 2, 1)};
    check_case("REPEAT f32", rp32, 1, b_repeat, 0, false);
    const struct input rpi[] = {{GGML_TYPE_I32, {7, 3, 2, 1}, 1000}};
    check_case("REPEAT i32", rpi, 1, b_repeat, 0, false);
    check_case("CONT permuted i32", rpi, 1, b_dup_perm, 0, false);
    check_case("MUL bcast", bin, 2, b_mul, 1e-6, false);
    check_case("DIV bcast", bin, 2, b_div, 1e-6, false);
    const struct input un[] = {IN(GGML_TYPE_F32, 300, 7, 2, 1)};
    check_case("SCALE", un, 1, b_scale, 1e-6, false);
    check_case("SQR", un, 1, b_sqr, 1e-6, false);
    check_case("SILU", un, 1, b_silu, 1e-5, false);
    check_case("GELU", un, 1, b_gelu, 2e-3, false); // the CPU rounds GELU's input to F16
    check_case("GELU_QUICK", un, 1, b_gelu_quick, 2e-3, false);
    check_case("TANH", un, 1, b_tanh, 1e-5, false);
    check_case("RELU", un, 1, b_relu, 0, false);
    check_case("LEAKY_RELU", un, 1, b_leaky, 1e-6, false);
    check_case("RMS_NORM", un, 1, b_rms, 1e-5, true);
    check_case("NORM", un, 1, b_norm, 1e-5, false);
    check_case("SUM_ROWS", un, 1, b_sum_rows, 1e-5, false);
    const struct input sm[] = {IN(GGML_TYPE_F32, 70, 6, 2, 1), IN(GGML_TYPE_F32, 70, 6, 1, 1)};
    check_case("SOFT_MAX mask", sm, 2, b_softmax, 1e-4, true); // the CPU exponentiates through F16
    check_case("SOFT_MAX", sm, 1, b_softmax0, 1e-4, true);
    check_case("DIAG_MASK_INF", sm, 1, b_diag, 0, false);
    struct input rp[] = {IN(GGML_TYPE_F32, 24, 3, 5, 1), {GGML_TYPE_I32, {5, 1, 1, 1}, 40}};
    check_case("ROPE mode 0", rp, 2, b_rope0, 1e-4, false);
    check_case("ROPE neox", rp, 2, b_rope2, 1e-4, false);
    check_case("ROPE yarn", rp, 2, b_rope_yarn, 1e-4, false);
    rp[0].type = GGML_TYPE_F16;
    check_case("ROPE f16", rp, 2, b_rope0, 2e-3, false);
    const enum ggml_type qt[] = {GGML_TYPE_F32,  GGML_TYPE_F16,  GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,
                                 GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K,
                                 GGML_TYPE_Q5_K, GGML_TYPE_Q6_K};
    for (size_t i = 0; i < sizeof(qt) / sizeof(qt[0]); i++) {
        char name[64];
        const struct input gr[] = {IN(qt[i], 256, 9, 3, 1), {GGML_TYPE_I32, {4, 3, 1, 1}, 9}};
        snprintf(name, sizeof(name), "GET_ROWS %s", ggml_type_name(qt[i]));
        check_case(name, gr, 2, b_get_rows, 1e-6, false);
        // mat-vec and a small batch, broadcasting src0 over dims 2 and 3
        const struct input mm[] = {IN(qt[i], 256, 13, 2, 1), IN(GGML_TYPE_F32, 256, 3, 4, 2)};
        snprintf(name, sizeof(name), "MUL_MAT %s", ggml_type_name(qt[i]));
        // the CPU quantizes src1 to Q8_0 for quantized src0; F16 src0: src1 rounded to F16
        check_case(name, mm, 2, b_mul_mat, i == 0 ? 1e-5 : -5e-4, true);
        // 19 columns: the SIMD-group-matrix GEMM, with partial 8x8 tiles in both directions
        const struct input mg[] = {IN(qt[i], 256, 13, 2, 1), IN(GGML_TYPE_F32, 256, 19, 4, 2)};
        snprintf(name, sizeof(name), "MUL_MAT GEMM %s", ggml_type_name(qt[i]));
        check_case(name, mg, 2, b_mul_mat, i == 0 ? 1e-5 : -5e-4, true);
    }
    for (size_t i = 0; i < sizeof(qt) / sizeof(qt[0]); i++) {
        char name[64];
        const struct input mi[] = {{GGML_TYPE_I32, {2, 7, 1, 1}, 4}, IN(qt[i], 256, 9, 1, 1), IN(qt[i], 256, 9, 1, 1),
                                   IN(qt[i], 256, 9, 1, 1), IN(GGML_TYPE_F32, 256, 7, 1, 1)};
        snprintf(name, sizeof(name), "MUL_MAT_ID %s", ggml_type_name(qt[i]));
        check_case(name, mi, 5, b_mul_mat_id, i == 0 ? 1e-5 : -5e-4, true);
    }
    const struct input mh[] = {IN(GGML_TYPE_F16, 96, 13, 2, 1), IN(GGML_TYPE_F16, 96, 3, 4, 2)};
    check_case("MUL_MAT f16 x f16", mh, 2, b_mul_mat, 1e-3, true);
    const struct input mk[] = {IN(GGML_TYPE_F32, 101, 9, 1, 1), IN(GGML_TYPE_F32, 101, 10, 1, 1)};
    check_case("MUL_MAT GEMM k=101", mk, 2, b_mul_mat, 1e-5, true);
    check_case("ABS", un, 1, b_abs, 0, false);
    check_case("SGN", un, 1, b_sgn, 0, false);
    check_case("NEG", un, 1, b_neg, 0, false);
    check_case("STEP", un, 1, b_step, 0, false);
    check_case("ELU", un, 1, b_elu, 1e-6, false);
    check_case("SQRT", un, 1, b_sqrt, 1e-6, false);
    check_case("LOG", un, 1, b_log, 1e-6, false);
    check_case("CLAMP", un, 1, b_clamp, 0, false);
    const struct input cq[] = {IN(GGML_TYPE_F32, 96, 5, 2, 1)};
    check_case("CPY f32->q8_0", cq, 1, b_cpy_q8_0, 0, false); // read back dequantized: must be exact
    check_case("CPY f32->q4_0", cq, 1, b_cpy_q4_0, 0, false);
    check_case("CPY f32->q4_1", cq, 1, b_cpy_q4_1, 0, false);
    const struct input pd[] = {IN(GGML_TYPE_F32, 17, 5, 3, 2), IN(GGML_TYPE_F32, 17, 5, 4, 2)};
    check_case("PAD", pd, 1, b_pad, 0, false);
    check_case("UPSCALE", pd, 1, b_upscale, 0, false);
    check_case("CONCAT", pd, 2, b_concat, 0, false);
    check_case("GROUP_NORM", pd + 1, 1, b_group_norm, 1e-5, false);
    check_case("ALIBI", pd + 1, 1, b_alibi, 1e-6, false);
    const struct input as[] = {IN(GGML_TYPE_F32, 300, 4, 2, 1)};
    check_case("ARGSORT asc", as, 1, b_argsort_asc, 0, false);
    check_case("ARGSORT desc", as, 1, b_argsort_desc, 0, false);
    const struct input ac[] = {IN(GGML_TYPE_F32, 20, 6, 3, 1), IN(GGML_TYPE_F32, 9, 3, 2, 1)};
    check_case("ACC", ac, 2, b_acc, 1e-6, false);
    const struct input cp[] = {IN(GGML_TYPE_F32, 40, 3, 2, 1)};
    check_case("CPY f32->f16 reshaped", cp, 1, b_cpy_f16, 1e-3, false);
    check_case("CONT transposed", cp, 1, b_cont_t, 0, false);
}

static void test_buffer_type(void) {
    ggml_backend_buffer_type_t bt = ggml_backend_metal_buffer_type();
    T_CHECK(strcmp(ggml_backend_buft_name(bt), "Metal") == 0);
    T_CHECK(ggml_backend_buft_get_alignment(bt) == 32);
    T_CHECK(ggml_backend_buft_is_host(bt));
    T_CHECK(ggml_backend_get_default_buffer_type(g_metal) == bt);
    T_CHECK(ggml_backend_is_metal(g_metal));
    T_CHECK(strcmp(ggml_backend_name(g_metal), "Metal") == 0);
    ggml_backend_t cpu = ggml_backend_cpu_init();
    T_CHECK(!ggml_backend_is_metal(cpu));
    T_CHECK(ggml_backend_buft_supports_backend(bt, cpu));
    ggml_backend_free(cpu);
    T_CHECK(ggml_backend_metal_supports_family(g_metal, 1));
    T_CHECK(ggml_backend_metal_supports_family(g_metal, 7) == g_simd);
    ggml_backend_buffer_t b = ggml_backend_buft_alloc_buffer(bt, 1000);
    T_CHECK(b != NULL && ggml_backend_buffer_get_size(b) >= 1000);
    T_CHECK(((uintptr_t) ggml_backend_buffer_get_base(b) % (uintptr_t) sysconf(_SC_PAGESIZE)) == 0);
    ggml_backend_buffer_free(b);
    ggml_backend_metal_set_n_cb(g_metal, 3); // graphs below run in three command buffers
}

// a mapped region of 5 MiB over a device whose maxBufferLength is 1 MiB (set before the buffer
// is made): tensors across the whole region, each of at most 256 KiB, computed on
static void test_buffer_from_ptr(void) {
    const size_t size = 5u << 20, max_tensor = 256u << 10;
    setenv("GGML_METAL_EMU_MAX_BUFFER", "1048576", 1);
    void * region = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    T_CHECK(region != MAP_FAILED);
    T_CHECK(ggml_backend_metal_buffer_from_ptr((char *) region + 1, size - 4096, max_tensor) == NULL); // unaligned
    ggml_backend_buffer_t buf = ggml_backend_metal_buffer_from_ptr(region, size, max_tensor);
    unsetenv("GGML_METAL_EMU_MAX_BUFFER");
    T_CHECK(buf != NULL);
    if (buf == NULL) {
        munmap(region, size);
        return;
    }
    T_CHECK(ggml_backend_buffer_is_host(buf));
    struct ggml_init_params p = {.mem_size = 256 * ggml_tensor_overhead() + 8 * ggml_graph_overhead(), .mem_buffer = NULL, .no_alloc = true};
    struct ggml_context * ctx = ggml_init(p);
    const int64_t n = (int64_t) (max_tensor / sizeof(float));
    struct ggml_cgraph * gf = ggml_new_graph(ctx);
    struct ggml_tensor * outs[6];
    // (a, b, out) triples at 800 KiB * k + {0, 256 KiB + 32, 512 KiB + 64}: tensors straddle
    // the edges of the views (which start every 768 KiB)
    for (int k = 0; k < 6; k++) {
        struct ggml_tensor * t[2];
        const size_t base = (size_t) k * (800u << 10);
        for (int j = 0; j < 2; j++) {
            t[j] = ggml_new_tensor_1d(ctx, GGML_TYPE_F32, n);
            ggml_backend_tensor_alloc(buf, t[j], (char *) region + base + (size_t) j * (max_tensor + 32));
        }
        float * v = malloc((size_t) n * sizeof(float));
        for (int64_t i = 0; i < n; i++) {
            v[i] = (float) (i % 1000) + (float) k;
        }
        ggml_backend_tensor_set(t[0], v, 0, (size_t) n * sizeof(float));
        for (int64_t i = 0; i < n; i++) {
            v[i] = 0.5f;
        }
        ggml_backend_tensor_set(t[1], v, 0, (size_t) n * sizeof(float));
        free(v);
        outs[k] = ggml_mul(ctx, t[0], t[1]);
        ggml_backend_tensor_alloc(buf, outs[k], (char *) region + base + 2 * (max_tensor + 32));
        ggml_build_forward_expand(gf, outs[k]);
        // each output is read back right after its graph: the next triple may overlap it
        T_CHECK(ggml_backend_graph_compute(g_metal, gf));
        float * r = read_out(outs[k]);
        int bad = 0;
        for (int64_t i = 0; i < n && bad < 3; i++) {
            if (r[i] != ((float) (i % 1000) + (float) k) * 0.5f) {
                bad++;
                T_CHECK_MSG(false, "view test %d: element %lld is %g", k, (long long) i, r[i]);
            }
        }
        free(r);
        gf = ggml_new_graph(ctx);
    }
    ggml_free(ctx);
    ggml_backend_buffer_free(buf);
    munmap(region, size);
}

int main(void) {
    ggml_x_backend_metal_register();
    g_metal = ggml_backend_metal_init();
    if (g_metal == NULL) {
        fprintf(stderr, "test-metal: no Metal backend: %s\n", ggml_x_last_error());
        return 1;
    }
    g_simd = ggml_backend_metal_supports_family(g_metal, 7);
    printf("test-metal: SIMD-group reductions %s\n", g_simd ? "on" : "off");
    T_RUN(test_buffer_type);
    T_RUN(test_ops);
    T_RUN(test_buffer_from_ptr);
    ggml_backend_free(g_metal);
    return T_SUMMARY();
}
