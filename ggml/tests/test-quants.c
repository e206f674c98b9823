// test-quants.c - quantized types: round-trip error, hand-checked block bytes of the simple
// formats, dot products against dequantized references, ggml_quantize_chunk offsets, and every
// SIMD level this CPU runs against the scalar kernels.

#include "ggml.h"
#include "ggml-impl.h"
#include "ggml-quants.h"
#include "cpu/cpu-features.h"
#include "cpu/quants-simd.h"
#include "testing.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// uniform in [-1, 1)
static float rng_float(void) {
    return (float) ((double) (rng_next() >> 40) / (double) (1ull << 24)) * 2.0f - 1.0f;
}

static void fill_random(float * x, int n) {
    for (int i = 0; i < n; i++) {
        x[i] = rng_float();
    }
}

static double nmse(const float * ref, const float * y, int n) {
    double num = 0.0, den = 0.0;
    for (int i = 0; i < n; i++) {
        num += ((double) y[i] - ref[i]) * ((double) y[i] - ref[i]);
        den += (double) ref[i] * ref[i];
    }
    return den > 0.0 ? num / den : num;
}

static const enum ggml_type quant_types[] = {
    GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
    GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
};
#define N_QUANT_TYPES ((int) (sizeof(quant_types) / sizeof(quant_types[0])))

// Round-trip NMSE on uniform [-1, 1) data. Bounds: the simple types a little above their
// expected error; the k-quants 1.10x the reference quantizer's error on the conformance inputs.
static double roundtrip_bound(enum ggml_type t) {
    switch (t) {
        case GGML_TYPE_Q4_0: return 1.2e-2;
        case GGML_TYPE_Q4_1: return 5.0e-3;
        case GGML_TYPE_Q5_0: return 3.0e-3;
        case GGML_TYPE_Q5_1: return 1.2e-3;
        case GGML_TYPE_Q8_0: return 2.0e-5;
        case GGML_TYPE_Q2_K: return 1.10 * 5.4e-2;
        case GGML_TYPE_Q3_K: return 1.10 * 1.6e-2;
        case GGML_TYPE_Q4_K: return 1.10 * 3.0e-3;
        case GGML_TYPE_Q5_K: return 1.10 * 7.7e-4;
        case GGML_TYPE_Q6_K: return 1.10 * 1.8e-4;
        default: return 0.0;
    }
}

static void test_roundtrip(void) {
    const int n_per_row = 1024, nrows = 64, n = n_per_row * nrows;
    float * x = malloc(sizeof(float) * n);
    float * y = malloc(sizeof(float) * n);
    void * q = malloc((size_t) n * 4);
    fill_random(x, n);
    for (int it = 0; it < N_QUANT_TYPES; it++) {
        const enum ggml_type t = quant_types[it];
        const ggml_type_traits_t tr = ggml_internal_get_type_traits(t);
        T_CHECK(tr.to_float != NULL && tr.from_float != NULL && tr.from_float_reference != NULL && tr.vec_dot != NULL);
        const size_t bytes = ggml_quantize_chunk(t, x, q, 0, nrows, n_per_row, NULL, NULL);
        T_CHECK_MSG(bytes == ggml_row_size(t, n_per_row) * nrows, "%s: %zu bytes", ggml_type_name(t), bytes);
        tr.to_float(q, y, n);
        const double e = nmse(x, y, n);
        printf("  round trip %-5s NMSE %.4e (bound %.4e, ratio %.3f)\n", ggml_type_name(t), e, roundtrip_bound(t),
               e / roundtrip_bound(t));
        T_CHECK_MSG(e <= roundtrip_bound(t), "%s NMSE %g", ggml_type_name(t), e);
        // from_float_reference gives the same bytes as the public quantizer
        void * q2 = malloc(bytes);
        tr.from_float_reference(x, q2, n);
        T_CHECK_MSG(memcmp(q, q2, bytes) == 0, "%s", ggml_type_name(t));
        free(q2);
    }
    free(x);
    free(y);
    free(q);
}

static void check_bytes(const char * what, const void * got, const uint8_t * want, size_t n) {
    const uint8_t * g = (const uint8_t *) got;
    for (size_t i = 0; i < n; i++) {
        T_CHECK_MSG(g[i] == want[i], "%s byte %zu: got 0x%02x, want 0x%02x", what, i, g[i], want[i]);
    }
}

// one block of known values: x[0] = -4, x[1] = 1, x[17] = -0.5, the rest 0
static void test_bit_patterns(void) {
    float x[32] = { 0 };
    x[0] = -4.0f;
    x[1] = 1.0f;
    x[17] = -0.5f;
    uint8_t want[36];
    uint8_t got[36];

    // q4_0: max -4 -> d = 0.5 (f16 0x3800); q = trunc(2x + 8.5): 0, 10, 8 ..., element 17 -> 7
    ggml_x_quantize_row_q4_0_ref(x, got, 32);
    memset(want, 0x88, sizeof(want));
    want[0] = 0x00; want[1] = 0x38; want[2] = 0x80; want[3] = 0x7a;
    check_bytes("q4_0", got, want, 18);

    // q4_1: min -4, max 1 -> d = 1/3 (f16 0x3555), m = -4 (0xc400); q = trunc(3(x+4) + 0.5):
    // 0, 15, 12 ..., element 17 -> 11
    ggml_x_quantize_row_q4_1_ref(x, got, 32);
    memset(want, 0xcc, sizeof(want));
    want[0] = 0x55; want[1] = 0x35; want[2] = 0x00; want[3] = 0xc4; want[4] = 0xc0; want[5] = 0xbf;
    check_bytes("q4_1", got, want, 20);

    // q5_0: d = 0.25 (0x3400); q = trunc(4x + 16.5): 0, 20, 16 ..., element 17 -> 14;
    // qh = bit 4 of every q: all but elements 0 and 17
    ggml_x_quantize_row_q5_0_ref(x, got, 32);
    memset(want, 0x00, sizeof(want));
    want[0] = 0x00; want[1] = 0x34;
    want[2] = 0xfe; want[3] = 0xff; want[4] = 0xfd; want[5] = 0xff;
    want[6] = 0x00; want[7] = 0xe4;
    check_bytes("q5_0", got, want, 22);

    // q5_1: d = 5/31 (0x3129), m = -4; q = trunc(6.2(x+4) + 0.5): 0, 31, 25 ..., element 17 -> 22
    ggml_x_quantize_row_q5_1_ref(x, got, 32);
    memset(want, 0x99, sizeof(want));
    want[0] = 0x29; want[1] = 0x31; want[2] = 0x00; want[3] = 0xc4;
    want[4] = 0xfe; want[5] = 0xff; want[6] = 0xff; want[7] = 0xff;
    want[8] = 0x90; want[9] = 0x6f;
    check_bytes("q5_1", got, want, 24);

    // q8_0: d = 4/127 (0x2808); q = round(31.75 x): -127, 32, 0 ..., element 17 -> -16
    ggml_x_quantize_row_q8_0_ref(x, got, 32);
    memset(want, 0x00, sizeof(want));
    want[0] = 0x08; want[1] = 0x28; want[2] = 0x81; want[3] = 32; want[2 + 17] = (uint8_t) -16;
    check_bytes("q8_0", got, want, 34);

    // dequantization of a hand-built q4_0 block: d = 0.5, q = j % 16
    block_q4_0 b;
    b.d = ggml_fp32_to_fp16(0.5f);
    for (int j = 0; j < 16; j++) {
        b.qs[j] = (uint8_t) (j | ((15 - j) << 4));
    }
    float y[32];
    ggml_x_dequantize_row_q4_0(&b, y, 32);
    for (int j = 0; j < 16; j++) {
        T_NEAR(y[j], 0.5f * (j - 8), 0);
        T_NEAR(y[j + 16], 0.5f * (7 - j), 0);
    }
}

// vec_dot of every type against the float dot product of the dequantized operands
static void test_vec_dot_vs_dequant(void) {
    const int n = 4096;
    float * x = malloc(sizeof(float) * n);
    float * y = malloc(sizeof(float) * n);
    float * xd = malloc(sizeof(float) * n);
    float * yd = malloc(sizeof(float) * n);
    void * qx = malloc((size_t) n * 4);
    void * qy = malloc((size_t) n * 4);
    fill_random(x, n);
    fill_random(y, n);
    for (int it = 0; it < N_QUANT_TYPES; it++) {
        const enum ggml_type t = quant_types[it];
        const ggml_type_traits_t tx = ggml_internal_get_type_traits(t);
        const ggml_type_traits_t ty = ggml_internal_get_type_traits(tx.vec_dot_type);
        tx.from_float(x, qx, n);
        ty.from_float(y, qy, n);
        tx.to_float(qx, xd, n);
        ty.to_float(qy, yd, n);
        double ref = 0.0, mag = 0.0;
        for (int i = 0; i < n; i++) {
            ref += (double) xd[i] * yd[i];
            mag += fabs((double) xd[i] * yd[i]);
        }
        float s = 0.0f;
        tx.vec_dot(n, &s, qx, qy);
        T_CHECK_MSG(fabs(s - ref) <= 1e-5 * mag, "%s: vec_dot %.7g, dequantized %.7g", ggml_type_name(t), s, ref);
    }
    free(x); free(y); free(xd); free(yd); free(qx); free(qy);
}

static void test_quantize_chunk(void) {
    const int n_per_row = 512, nrows = 6, n = n_per_row * nrows;
    float * x = malloc(sizeof(float) * n);
    fill_random(x, n);
    const enum ggml_type extra[] = { GGML_TYPE_F16, GGML_TYPE_F32 };
    for (int it = 0; it < N_QUANT_TYPES + 2; it++) {
        const enum ggml_type t = it < N_QUANT_TYPES ? quant_types[it] : extra[it - N_QUANT_TYPES];
        const size_t row = ggml_row_size(t, n_per_row);
        uint8_t * whole = malloc(row * nrows);
        uint8_t * parts = calloc(nrows, row);
        int64_t hist[16] = { 0 };
        T_CHECK(ggml_quantize_chunk(t, x, whole, 0, nrows, n_per_row, hist, NULL) == row * nrows);
        // rows 0..1, then 2..5, written at their offsets
        T_CHECK(ggml_quantize_chunk(t, x, parts, 0, 2, n_per_row, NULL, NULL) == row * 2);
        T_CHECK(ggml_quantize_chunk(t, x, parts, 2 * n_per_row, 4, n_per_row, NULL, NULL) == row * 4);
        T_CHECK_MSG(memcmp(whole, parts, row * nrows) == 0, "%s", ggml_type_name(t));
        if (t == GGML_TYPE_Q4_0 || t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_0 || t == GGML_TYPE_Q5_1 || t == GGML_TYPE_Q8_0) {
            int64_t total = 0;
            for (int i = 0; i < 16; i++) {
                total += hist[i];
            }
            T_CHECK_MSG(total == n, "%s histogram total %lld", ggml_type_name(t), (long long) total);
        }
        free(whole);
        free(parts);
    }
    // unsupported type: reported, nothing written
    ggml_x_set_thread_recoverable(true);
    ggml_x_clear_error();
    uint8_t buf[256];
    T_CHECK(ggml_quantize_chunk(GGML_TYPE_IQ2_XXS, x, buf, 0, 1, 256, NULL, NULL) == 0);
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    T_CHECK(ggml_quantize_chunk(GGML_TYPE_Q4_0, x, buf, 7, 1, 32, NULL, NULL) == 0); // start not a row start
    T_CHECK(ggml_x_last_error() != NULL);
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(false);
    // IQ2 types have no kernels
    T_CHECK(ggml_internal_get_type_traits(GGML_TYPE_IQ2_XXS).to_float == NULL);
    T_CHECK(ggml_internal_get_type_traits(GGML_TYPE_IQ2_XS).vec_dot == NULL);
    free(x);
}

// every SIMD level this CPU runs against the scalar kernels
static void test_simd_levels(void) {
    const int n = 4096;
    float * x = malloc(sizeof(float) * n);
    float * y = malloc(sizeof(float) * n);
    uint8_t * a = malloc((size_t) n * 2);
    uint8_t * b = malloc((size_t) n * 2);
    uint8_t * qx = malloc((size_t) n * 2);
    uint8_t * qy = malloc((size_t) n * 2);
    fill_random(x, n);
    fill_random(y, n);
    // a few exact ties and specials for the quantizer rounding and the fp16 conversion
    x[3] = 0.5f; x[40] = -1.0f; x[41] = 1.0f; x[300] = 0.0f;

    struct ggml_x_quant_kernels ref, k;
    ggml_x_quant_kernels_for_level(GGML_X_CPU_SCALAR, &ref);
    printf("  detected level: %s, dispatch level: %s\n", ggml_x_cpu_level_name(ggml_x_cpu_level_detected()),
           ggml_x_cpu_level_name(ggml_x_cpu_level()));

    for (int lv = 0; lv < GGML_X_CPU_LEVEL_COUNT; lv++) {
        if (!ggml_x_cpu_level_supported((enum ggml_x_cpu_level) lv)) {
            continue;
        }
        T_CHECK(ggml_x_quant_kernels_for_level((enum ggml_x_cpu_level) lv, &k));
        const char * name = ggml_x_cpu_level_name((enum ggml_x_cpu_level) lv);
        printf("  checking level %s\n", name);

        // activation quantizers: identical bytes
        ref.quantize_row_q8_0(x, a, n);
        k.quantize_row_q8_0(x, b, n);
        T_CHECK_MSG(memcmp(a, b, ggml_row_size(GGML_TYPE_Q8_0, n)) == 0, "%s q8_0", name);
        ref.quantize_row_q8_K(x, a, n);
        k.quantize_row_q8_K(x, b, n);
        T_CHECK_MSG(memcmp(a, b, ggml_row_size(GGML_TYPE_Q8_K, n)) == 0, "%s q8_K", name);

        // fp16 rows: identical bits, odd lengths for the tails
        for (int len = 1; len <= 37; len += 9) {
            ggml_fp16_t h1[64], h2[64];
            float f1[64], f2[64];
            ref.fp32_to_fp16_row(x + 100, h1, len);
            k.fp32_to_fp16_row(x + 100, h2, len);
            T_CHECK_MSG(memcmp(h1, h2, sizeof(ggml_fp16_t) * len) == 0, "%s fp32->fp16 len %d", name, len);
            ref.fp16_to_fp32_row(h1, f1, len);
            k.fp16_to_fp32_row(h1, f2, len);
            T_CHECK_MSG(memcmp(f1, f2, sizeof(float) * len) == 0, "%s fp16->fp32 len %d", name, len);
        }

        // dot products within 1e-5 relative
        struct { const char * what; ggml_from_float_t qa; ggml_from_float_t qb; ggml_vec_dot_t r; ggml_vec_dot_t v; } dots[] = {
            { "q8_0.q8_0", ggml_x_quantize_row_q8_0_ref, ggml_x_quantize_row_q8_0_ref, ref.vec_dot_q8_0_q8_0, k.vec_dot_q8_0_q8_0 },
            { "q4_0.q8_0", ggml_x_quantize_row_q4_0_ref, ggml_x_quantize_row_q8_0_ref, ref.vec_dot_q4_0_q8_0, k.vec_dot_q4_0_q8_0 },
            { "q4_K.q8_K", ggml_x_quantize_row_q4_K_ref, ggml_x_quantize_row_q8_K_ref, ref.vec_dot_q4_K_q8_K, k.vec_dot_q4_K_q8_K },
            { "q6_K.q8_K", ggml_x_quantize_row_q6_K_ref, ggml_x_quantize_row_q8_K_ref, ref.vec_dot_q6_K_q8_K, k.vec_dot_q6_K_q8_K },
        };
        for (size_t d = 0; d < sizeof(dots) / sizeof(dots[0]); d++) {
            dots[d].qa(x, qx, n);
            dots[d].qb(y, qy, n);
            // full length, and a short length (an odd number of 32-blocks for the paired loops)
            const int lens[2] = { n, 256 + 96 };
            for (int li = 0; li < 2; li++) {
                const int len = d >= 2 ? (lens[li] / 256) * 256 : lens[li];
                float sr = 0.0f, sv = 0.0f;
                dots[d].r(len, &sr, qx, qy);
                dots[d].v(len, &sv, qx, qy);
                T_CHECK_MSG(fabsf(sr - sv) <= 1e-5f * GGML_X_MAX(1.0f, fabsf(sr)), "%s %s n=%d: %.9g vs scalar %.9g",
                            name, dots[d].what, len, sv, sr);
            }
        }
    }
    free(x); free(y); free(a); free(b); free(qx); free(qy);
}

// Every dot product of every SIMD level against the scalar one, on data the quantizers do not
// produce as well as data they do: lengths of 1..many blocks, random bytes, all levels at their
// minimum or maximum (with the largest sub-block scales), activations at +-127. Tolerance:
// relative to the sum of |x_i * y_i| of the dequantized operands (the float sums are ordered
// differently; the integer parts are exact).
struct dot_case {
    const char *   what;
    enum ggml_type tx, ty;
    size_t         kernel;      // offsetof(struct ggml_x_quant_kernels, ...)
    int            f16_off[2];  // byte offsets of the block's fp16 fields (d, m / dmin; -1: none)
};

static const struct dot_case dot_cases[] = {
    { "q4_0.q8_0", GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, offsetof(struct ggml_x_quant_kernels, vec_dot_q4_0_q8_0), { 0, -1 } },
    { "q4_1.q8_1", GGML_TYPE_Q4_1, GGML_TYPE_Q8_1, offsetof(struct ggml_x_quant_kernels, vec_dot_q4_1_q8_1), { 0, 2 } },
    { "q5_0.q8_0", GGML_TYPE_Q5_0, GGML_TYPE_Q8_0, offsetof(struct ggml_x_quant_kernels, vec_dot_q5_0_q8_0), { 0, -1 } },
    { "q5_1.q8_1", GGML_TYPE_Q5_1, GGML_TYPE_Q8_1, offsetof(struct ggml_x_quant_kernels, vec_dot_q5_1_q8_1), { 0, 2 } },
    { "q8_0.q8_0", GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, offsetof(struct ggml_x_quant_kernels, vec_dot_q8_0_q8_0), { 0, -1 } },
    { "q2_K.q8_K", GGML_TYPE_Q2_K, GGML_TYPE_Q8_K, offsetof(struct ggml_x_quant_kernels, vec_dot_q2_K_q8_K),
      { offsetof(block_q2_K, d), offsetof(block_q2_K, dmin) } },
    { "q3_K.q8_K", GGML_TYPE_Q3_K, GGML_TYPE_Q8_K, offsetof(struct ggml_x_quant_kernels, vec_dot_q3_K_q8_K),
      { offsetof(block_q3_K, d), -1 } },
    { "q4_K.q8_K", GGML_TYPE_Q4_K, GGML_TYPE_Q8_K, offsetof(struct ggml_x_quant_kernels, vec_dot_q4_K_q8_K),
      { offsetof(block_q4_K, d), offsetof(block_q4_K, dmin) } },
    { "q5_K.q8_K", GGML_TYPE_Q5_K, GGML_TYPE_Q8_K, offsetof(struct ggml_x_quant_kernels, vec_dot_q5_K_q8_K),
      { offsetof(block_q5_K, d), offsetof(block_q5_K, dmin) } },
    { "q6_K.q8_K", GGML_TYPE_Q6_K, GGML_TYPE_Q8_K, offsetof(struct ggml_x_quant_kernels, vec_dot_q6_K_q8_K),
      { offsetof(block_q6_K, d), -1 } },
};

static ggml_vec_dot_t dot_kernel(const struct ggml_x_quant_kernels * k, size_t off) {
    ggml_vec_dot_t f;
    memcpy(&f, (const char *) k + off, sizeof(f));
    return f;
}

// weights: 0 quantized random values, 1 random bytes, 2 all bytes 0xff, 3 all bytes 0; the fp16
// fields then get finite values (random, or fixed for the constant modes)
static void make_weights(const struct dot_case * c, int mode, const float * x, uint8_t * q, int n) {
    const size_t bs = ggml_type_size(c->tx);
    const size_t nblk = (size_t) (n / ggml_blck_size(c->tx));
    if (mode == 0) {
        ggml_internal_get_type_traits(c->tx).from_float_reference(x, q, n);
        return;
    }
    for (size_t i = 0; i < nblk * bs; i++) {
        q[i] = mode == 1 ? (uint8_t) rng_next() : mode == 2 ? 0xff : 0x00;
    }
    for (size_t b = 0; b < nblk; b++) {
        for (int f = 0; f < 2; f++) {
            if (c->f16_off[f] < 0) {
                continue;
            }
            const float v = mode == 1 ? 2.0f * rng_float() : mode == 2 ? (f ? -3.0f : 1.5f) : (f ? 2.0f : -0.75f);
            const ggml_fp16_t h = ggml_fp32_to_fp16(v);
            memcpy(q + b * bs + (size_t) c->f16_off[f], &h, sizeof(h));
        }
    }
}

// activations: 0 quantized random values, 1 random levels in [-127, 127], 2 all +127,
// 3 alternating -127 / +127; scale and sums consistent with the levels
static void make_acts(enum ggml_type ty, int mode, const float * y, uint8_t * q, int n) {
    if (mode == 0) {
        ggml_internal_get_type_traits(ty).from_float_reference(y, q, n);
        return;
    }
    const int qk = ggml_blck_size(ty);
    for (int b = 0; b < n / qk; b++) {
        int8_t lv[QK_K];
        for (int i = 0; i < qk; i++) {
            lv[i] = (int8_t) (mode == 1 ? (int) (rng_next() % 255) - 127 : mode == 2 ? 127 : (i & 1 ? 127 : -127));
        }
        const float d = mode == 1 ? 0.01f * (1.0f + rng_float()) : 0.0078125f;
        if (ty == GGML_TYPE_Q8_0) {
            block_q8_0 * blk = (block_q8_0 *) q + b;
            blk->d = ggml_fp32_to_fp16(d);
            memcpy(blk->qs, lv, QK8_0);
        } else if (ty == GGML_TYPE_Q8_1) {
            block_q8_1 * blk = (block_q8_1 *) q + b;
            int sum = 0;
            for (int i = 0; i < QK8_1; i++) {
                sum += lv[i];
            }
            blk->d = d;
            blk->s = d * (float) sum;
            memcpy(blk->qs, lv, QK8_1);
        } else {
            block_q8_K * blk = (block_q8_K *) q + b;
            blk->d = d;
            memcpy(blk->qs, lv, QK_K);
            for (int g = 0; g < QK_K / 16; g++) {
                int sum = 0;
                for (int i = 0; i < 16; i++) {
                    sum += lv[16 * g + i];
                }
                blk->bsums[g] = (int16_t) sum;
            }
        }
    }
}

static void test_simd_dots_every_type(void) {
    const int nmax = 48 * QK_K;
    float * x = malloc(sizeof(float) * nmax);
    float * y = malloc(sizeof(float) * nmax);
    float * xd = malloc(sizeof(float) * nmax);
    float * yd = malloc(sizeof(float) * nmax);
    uint8_t * qx = malloc((size_t) nmax * 2);
    uint8_t * qy = malloc((size_t) nmax * 2);
    struct ggml_x_quant_kernels ref, k;
    ggml_x_quant_kernels_for_level(GGML_X_CPU_SCALAR, &ref);
    // block counts; 0 stands for a long row of 48 * QK_K elements, whose activation row is over
    // GGML_X_FAR_MIN_ACT bytes (the kernels' far-prefetch path, cpu/prefetch.h)
    const int mult[] = { 1, 2, 3, 5, 16, 17, 0 };
    int checked = 0;
    for (int lv = 1; lv < GGML_X_CPU_LEVEL_COUNT; lv++) {
        if (!ggml_x_cpu_level_supported((enum ggml_x_cpu_level) lv)) {
            continue;
        }
        T_CHECK(ggml_x_quant_kernels_for_level((enum ggml_x_cpu_level) lv, &k));
        const char * name = ggml_x_cpu_level_name((enum ggml_x_cpu_level) lv);
        for (size_t ci = 0; ci < sizeof(dot_cases) / sizeof(dot_cases[0]); ci++) {
            const struct dot_case * c = &dot_cases[ci];
            const ggml_vec_dot_t fr = dot_kernel(&ref, c->kernel), fv = dot_kernel(&k, c->kernel);
            const int blk = ggml_blck_size(c->tx);
            for (size_t mi = 0; mi < sizeof(mult) / sizeof(mult[0]); mi++) {
                const int n = mult[mi] != 0 ? mult[mi] * blk : nmax;
                for (int xm = 0; xm < 4; xm++) {
                    for (int ym = 0; ym < 4; ym++) {
                        fill_random(x, n);
                        fill_random(y, n);
                        make_weights(c, xm, x, qx, n);
                        make_acts(c->ty, ym, y, qy, n);
                        ggml_internal_get_type_traits(c->tx).to_float(qx, xd, n);
                        ggml_internal_get_type_traits(c->ty).to_float(qy, yd, n);
                        double mag = 0.0;
                        for (int i = 0; i < n; i++) {
                            mag += fabs((double) xd[i] * yd[i]);
                        }
                        float sr = 0.0f, sv = 0.0f;
                        fr(n, &sr, qx, qy);
                        fv(n, &sv, qx, qy);
                        T_CHECK_MSG(fabs((double) sr - sv) <= 1e-5 * mag + 1e-30, "%s %s n=%d weights %d acts %d: %.9g vs scalar %.9g (sum |terms| %.6g)",
                                    name, c->what, n, xm, ym, sv, sr, mag);
                        checked++;
                    }
                }
            }
        }
    }
    printf("  %d level x type x length x data cases\n", checked);
    free(x); free(y); free(xd); free(yd); free(qx); free(qy);
}

// The multi-column dot products (ggml_x_vec_dot_cols_t) of every level that has them: each
// s[j] against the scalar dot of the weight row and column j (tolerance as above) and against
// the level's single-column dot product (same tolerance), and bit-identical to the same kernel
// called for column j alone (results must not depend on the column count). Lengths
// of 1..17 super-blocks, 1..16 columns (more than one pass of every kernel's column group)
// with mixed activation modes, all weight modes.
static void test_simd_dot_cols_every_type(void) {
    enum { MAXC = 16 };
    const int nmax = 17 * QK_K;
    float * x = malloc(sizeof(float) * nmax);
    float * y = malloc(sizeof(float) * nmax);
    float * xd = malloc(sizeof(float) * nmax);
    float * yd = malloc(sizeof(float) * nmax);
    uint8_t * qx = malloc((size_t) nmax * 2);
    uint8_t * qy[MAXC];
    int ymode[MAXC];
    for (int j = 0; j < MAXC; j++) {
        qy[j] = malloc((size_t) nmax * 2);
    }
    struct ggml_x_quant_kernels ref, k;
    ggml_x_quant_kernels_for_level(GGML_X_CPU_SCALAR, &ref);
    int checked = 0;
    for (int lv = 0; lv < GGML_X_CPU_LEVEL_COUNT; lv++) {
        if (!ggml_x_cpu_level_supported((enum ggml_x_cpu_level) lv)) {
            continue;
        }
        T_CHECK(ggml_x_quant_kernels_for_level((enum ggml_x_cpu_level) lv, &k));
        const char * name = ggml_x_cpu_level_name((enum ggml_x_cpu_level) lv);
        for (size_t ci = 0; ci < sizeof(dot_cases) / sizeof(dot_cases[0]); ci++) {
            const struct dot_case * c = &dot_cases[ci];
            const ggml_x_vec_dot_cols_t fc = ggml_x_quant_dot_cols(&k, c->tx);
            if (fc == NULL) {
                continue;
            }
            const ggml_vec_dot_t fr = dot_kernel(&ref, c->kernel), fv = dot_kernel(&k, c->kernel);
            const int blk = ggml_blck_size(c->tx);
            for (int nblk = 1; nblk <= 17; nblk++) {
                const int n = nblk * blk;
                for (int xm = 0; xm < 4; xm++) {
                    fill_random(x, n);
                    make_weights(c, xm, x, qx, n);
                    ggml_internal_get_type_traits(c->tx).to_float(qx, xd, n);
                    for (int j = 0; j < MAXC; j++) {
                        ymode[j] = (j + xm + nblk) % 4;
                        fill_random(y, n);
                        make_acts(c->ty, ymode[j], y, qy[j], n);
                    }
                    for (int nc = 1; nc <= MAXC; nc++) {
                        float sc[MAXC];
                        fc(n, sc, qx, (const void * const *) qy, nc);
                        for (int j = 0; j < nc; j++) {
                            ggml_internal_get_type_traits(c->ty).to_float(qy[j], yd, n);
                            double mag = 0.0;
                            for (int i = 0; i < n; i++) {
                                mag += fabs((double) xd[i] * yd[i]);
                            }
                            float sr = 0.0f, sv = 0.0f, s1 = 0.0f;
                            fr(n, &sr, qx, qy[j]);
                            fv(n, &sv, qx, qy[j]);
                            fc(n, &s1, qx, (const void * const *) &qy[j], 1);
                            T_CHECK_MSG(fabs((double) sr - sc[j]) <= 1e-5 * mag + 1e-30,
                                        "%s cols %s n=%d nc=%d col %d weights %d acts %d: %.9g vs scalar %.9g (sum |terms| %.6g)",
                                        name, c->what, n, nc, j, xm, ymode[j], sc[j], sr, mag);
                            T_CHECK_MSG(fabs((double) sv - sc[j]) <= 1e-5 * mag + 1e-30,
                                        "%s cols %s n=%d nc=%d col %d: %.9g vs the level's dot %.9g",
                                        name, c->what, n, nc, j, sc[j], sv);
                            T_CHECK_MSG(memcmp(&s1, &sc[j], sizeof(float)) == 0,
                                        "%s cols %s n=%d nc=%d col %d: %.9g vs the column alone %.9g",
                                        name, c->what, n, nc, j, sc[j], s1);
                            checked++;
                        }
                    }
                }
            }
        }
    }
    printf("  %d level x type x length x columns cases\n", checked);
    free(x); free(y); free(xd); free(yd); free(qx);
    for (int j = 0; j < MAXC; j++) {
        free(qy[j]);
    }
}

static void test_cpu_features(void) {
    const struct ggml_x_cpu_features * f = ggml_x_cpu_features();
    printf("  avx %d avx2 %d fma %d f16c %d avx512 %d vnni %d avx_vnni %d neon %d dotprod %d\n",
           ggml_cpu_has_avx(), ggml_cpu_has_avx2(), ggml_cpu_has_fma(), ggml_cpu_has_f16c(),
           ggml_cpu_has_avx512(), ggml_cpu_has_avx512_vnni(), ggml_cpu_has_avx_vnni(), ggml_cpu_has_neon(),
           (int) f->dotprod);
    T_CHECK(!ggml_cpu_has_avx2() || ggml_cpu_has_avx());
    T_CHECK(ggml_x_cpu_level() <= ggml_x_cpu_level_detected());
    T_CHECK(ggml_x_cpu_level_supported(GGML_X_CPU_SCALAR));
    T_CHECK(ggml_cpu_has_blas() == 0 && ggml_cpu_has_wasm_simd() == 0 && ggml_cpu_has_vsx() == 0);
}

int main(void) {
    ggml_x_init_tables();
    T_RUN(test_cpu_features);
    T_RUN(test_bit_patterns);
    T_RUN(test_roundtrip);
    T_RUN(test_vec_dot_vs_dequant);
    T_RUN(test_quantize_chunk);
    T_RUN(test_simd_levels);
    T_RUN(test_simd_dots_every_type);
    T_RUN(test_simd_dot_cols_every_type);
    return T_SUMMARY();
}
