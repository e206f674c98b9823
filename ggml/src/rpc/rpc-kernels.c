// rpc-kernels.c - CPU kernels of the server's translators (rpc-kernels.h). Written for this
// server from the ops' documented semantics (ggml.h of the wire's ggml); rows are split between
// the compute threads.

#include "rpc-kernels.h"
#include "rpc-tables.h"
#include "../ggml-impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float f32_param(const struct rpc_kparams * k, int i) {
    float f;
    memcpy(&f, &k->p[i], 4);
    return f;
}

// rows [*r0, *r1) of n for thread ith of nth
static void split(int64_t n, int ith, int nth, int64_t * r0, int64_t * r1) {
    *r0 = n * ith / nth;
    *r1 = n * (ith + 1) / nth;
}

// thread ith's share [*r0, *r1) of the rows (ne[1] * ne[2] * ne[3]) of t
static void thread_rows(const struct ggml_tensor * t, int ith, int nth, int64_t * r0, int64_t * r1) {
    split(t->ne[1] * t->ne[2] * t->ne[3], ith, nth, r0, r1);
}

// the indices (i1, i2, i3) of row r of t
static inline void row_index(const struct ggml_tensor * t, int64_t r, int64_t * i1, int64_t * i2, int64_t * i3) {
    *i1 = r % t->ne[1];
    *i2 = (r / t->ne[1]) % t->ne[2];
    *i3 = r / (t->ne[1] * t->ne[2]);
}

static inline char * row3(const struct ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return (char *) t->data + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
}

static inline float load(enum ggml_type type, const char * p) {
    if (type == GGML_TYPE_F16) {
        ggml_fp16_t h;
        memcpy(&h, p, sizeof(h));
        return GGML_FP16_TO_FP32(h);
    }
    float f;
    memcpy(&f, p, sizeof(f));
    return f;
}

static inline float sigmoid(float x) {
    return 1.0f / (1.0f + expf(-x));
}

static inline float gelu_tanh(float x) {
    const float c = 0.79788456080286535588f; // sqrt(2/pi)
    return 0.5f * x * (1.0f + tanhf(c * x * (1.0f + 0.044715f * x * x)));
}

static inline float gelu_erf(float x) {
    return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
}

// --- GLU ----------------------------------------------------------------------------------------

static float glu_one(const struct rpc_kparams * k, float x, float g) {
    switch (k->kind) {
        case RPC_WIRE_GLU_OP_REGLU: return (x > 0.0f ? x : 0.0f) * g;
        case RPC_WIRE_GLU_OP_GEGLU: return gelu_tanh(x) * g;
        case RPC_WIRE_GLU_OP_SWIGLU: return x * sigmoid(x) * g;
        case RPC_WIRE_GLU_OP_GEGLU_ERF: return gelu_erf(x) * g;
        case RPC_WIRE_GLU_OP_GEGLU_QUICK: return x * sigmoid(1.702f * x) * g;
        case RPC_WIRE_GLU_OP_SWIGLU_OAI: {
            const float alpha = f32_param(k, 2);
            const float limit = f32_param(k, 3);
            x = x < limit ? x : limit;
            g = g < -limit ? -limit : (g > limit ? limit : g);
            return x * sigmoid(alpha * x) * (g + 1.0f);
        }
        default: return 0.0f;
    }
}

// rows of dst; x and g rows come from a (halves of one row) or from a and b
static void glu_rows(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith,
                     int nth, const struct rpc_kparams * k) {
    const int64_t n = dst->ne[0];
    const bool swapped = k->p[1] != 0;
    int64_t r0, r1;
    thread_rows(dst, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_index(dst, r, &i1, &i2, &i3);
        const float * pa = (const float *) row3(a, i1, i2, i3);
        const float * x;
        const float * g;
        if (b == NULL) {
            x = pa + (swapped ? n : 0);
            g = pa + (swapped ? 0 : n);
        } else {
            const float * pb = (const float *) row3(b, i1, i2, i3);
            x = swapped ? pb : pa;
            g = swapped ? pa : pb;
        }
        float * y = (float *) row3(dst, i1, i2, i3);
        for (int64_t i = 0; i < n; i++) {
            y[i] = glu_one(k, x[i], g[i]);
        }
    }
}

void rpc_k_glu1(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * ud) {
    glu_rows(dst, a, NULL, ith, nth, ud);
}

void rpc_k_glu2(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith, int nth,
                void * ud) {
    glu_rows(dst, a, b, ith, nth, ud);
}

// --- SET_ROWS -----------------------------------------------------------------------------------

void rpc_k_set_rows(struct ggml_tensor * dst, const struct ggml_tensor * dest, const struct ggml_tensor * src,
                    const struct ggml_tensor * idx, int ith, int nth, void * ud) {
    (void) dest;
    const struct rpc_kparams * k = ud;
    const int64_t n = src->ne[0];
    // idx is an I32 tensor, or an I64 one stored as bytes (ne[0] counts bytes then)
    const int64_t idx_nb0 = k->elt_bytes == 8 ? 8 : (int64_t) idx->nb[0];
    int64_t r0, r1;
    thread_rows(src, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i, i2, i3;
        row_index(src, r, &i, &i2, &i3);
        const char * pi = (const char *) idx->data + i * idx_nb0 + (i2 % idx->ne[1]) * idx->nb[1] +
                          (i3 % idx->ne[2]) * idx->nb[2];
        int64_t row;
        if (k->elt_bytes == 8) {
            memcpy(&row, pi, 8);
        } else {
            int32_t v;
            memcpy(&v, pi, 4);
            row = v;
        }
        if (row < 0 || row >= dst->ne[1]) {
            *k->error = 1;
            continue;
        }
        const float * x = (const float *) row3(src, i, i2, i3);
        char * y = row3(dst, row, i2, i3);
        if (dst->type == GGML_TYPE_F16) {
            ggml_fp16_t * h = (ggml_fp16_t *) y;
            for (int64_t j = 0; j < n; j++) {
                h[j] = GGML_FP32_TO_FP16(x[j]);
            }
        } else {
            memcpy(y, x, (size_t) n * sizeof(float));
        }
    }
}

// --- SOFT_MAX -----------------------------------------------------------------------------------

float rpc_alibi_slope(float max_bias, int h, int n_head) {
    if (max_bias <= 0.0f) {
        return 1.0f;
    }
    const int n_head_log2 = 1 << (int) floor(log2((double) n_head));
    const float m0 = powf(2.0f, -max_bias / (float) n_head_log2);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / (float) n_head_log2);
    return h < n_head_log2 ? powf(m0, (float) (h + 1)) : powf(m1, (float) (2 * (h - n_head_log2) + 1));
}

void rpc_k_soft_max(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * mask,
                    const struct ggml_tensor * unused, int ith, int nth, void * ud) {
    (void) unused;
    const struct rpc_kparams * k = ud;
    const float scale = f32_param(k, 0);
    const float max_bias = f32_param(k, 1);
    const struct ggml_tensor * sinks = dst->src[3];
    const int64_t n = a->ne[0];
    int64_t r0, r1;
    thread_rows(a, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_index(a, r, &i1, &i2, &i3);
        const float slope = rpc_alibi_slope(max_bias, (int) i2, (int) a->ne[2]);
        const float * x = (const float *) row3(a, i1, i2, i3);
        const char * m = mask ? row3(mask, i1, i2 % mask->ne[2], i3 % mask->ne[3]) : NULL;
        const size_t m_nb0 = mask ? mask->nb[0] : 0;
        float * y = (float *) row3(dst, i1, i2, i3);
        float max = -INFINITY;
        for (int64_t j = 0; j < n; j++) {
            float v = x[j] * scale;
            if (m != NULL) {
                v += slope * load(mask->type, m + j * m_nb0);
            }
            y[j] = v;
            max = v > max ? v : max;
        }
        float sink = -INFINITY;
        if (sinks != NULL) {
            sink = ((const float *) sinks->data)[i2];
            max = sink > max ? sink : max;
        }
        double sum = 0.0;
        if (max == -INFINITY) { // every score masked: a row of zeros
            memset(y, 0, (size_t) n * sizeof(float));
            continue;
        }
        for (int64_t j = 0; j < n; j++) {
            const float e = expf(y[j] - max);
            y[j] = e;
            sum += e;
        }
        if (sinks != NULL) {
            sum += expf(sink - max);
        }
        const float inv = sum > 0.0 ? (float) (1.0 / sum) : 0.0f;
        for (int64_t j = 0; j < n; j++) {
            y[j] *= inv;
        }
    }
}

// --- SCALE, UNARY -------------------------------------------------------------------------------

void rpc_k_scale(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * ud) {
    const struct rpc_kparams * k = ud;
    const float s = f32_param(k, 0), b = f32_param(k, 1);
    const int64_t n = a->ne[0];
    int64_t r0, r1;
    thread_rows(a, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_index(a, r, &i1, &i2, &i3);
        const float * x = (const float *) row3(a, i1, i2, i3);
        float * y = (float *) row3(dst, i1, i2, i3);
        for (int64_t j = 0; j < n; j++) {
            y[j] = x[j] * s + b;
        }
    }
}

static float unary_one(int kind, float x) {
    switch (kind) {
        case RPC_WIRE_UNARY_OP_SIGMOID: return sigmoid(x);
        case RPC_WIRE_UNARY_OP_HARDSWISH: {
            const float t = (x + 3.0f) / 6.0f;
            return x * (t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t));
        }
        case RPC_WIRE_UNARY_OP_HARDSIGMOID: {
            const float t = (x + 3.0f) / 6.0f;
            return t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
        }
        case RPC_WIRE_UNARY_OP_EXP: return expf(x);
        case RPC_WIRE_UNARY_OP_EXPM1: return expm1f(x);
        case RPC_WIRE_UNARY_OP_SOFTPLUS: return x > 20.0f ? x : log1pf(expf(x));
        case RPC_WIRE_UNARY_OP_GELU_ERF: return gelu_erf(x);
        case RPC_WIRE_UNARY_OP_FLOOR: return floorf(x);
        case RPC_WIRE_UNARY_OP_CEIL: return ceilf(x);
        case RPC_WIRE_UNARY_OP_ROUND: return roundf(x);
        case RPC_WIRE_UNARY_OP_TRUNC: return truncf(x);
        default: return 0.0f;
    }
}

void rpc_k_unary(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * ud) {
    const struct rpc_kparams * k = ud;
    const int64_t n = a->ne[0];
    int64_t r0, r1;
    thread_rows(a, ith, nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        int64_t i1, i2, i3;
        row_index(a, r, &i1, &i2, &i3);
        const float * x = (const float *) row3(a, i1, i2, i3);
        float * y = (float *) row3(dst, i1, i2, i3);
        for (int64_t j = 0; j < n; j++) {
            y[j] = unary_one(k->kind, x[j]);
        }
    }
}

// --- FLASH_ATTN_EXT -----------------------------------------------------------------------------

// dot and axpy of F32 rows with eight partial sums, which compilers vectorize
static float dot_f32(const float * a, const float * b, int64_t n) {
    float s[8] = { 0 };
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (int j = 0; j < 8; j++) {
            s[j] += a[i + j] * b[i + j];
        }
    }
    float t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; i < n; i++) {
        t += a[i] * b[i];
    }
    return t;
}

static void axpy_f32(float * y, float w, const float * x, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        y[i] += w * x[i];
    }
}

// row_f32 returns row p of n values of type t as F32: p itself, or converted into buf
static const float * row_f32(enum ggml_type t, const char * p, int64_t n, float * buf) {
    if (t == GGML_TYPE_F32) {
        return (const float *) p;
    }
    const ggml_fp16_t * h = (const ggml_fp16_t *) p;
    for (int64_t i = 0; i < n; i++) {
        buf[i] = GGML_FP16_TO_FP32(h[i]);
    }
    return buf;
}

void rpc_k_flash_attn_ext(struct ggml_tensor * dst, const struct ggml_tensor * q, const struct ggml_tensor * k,
                          const struct ggml_tensor * v, int ith, int nth, void * ud) {
    const struct rpc_kparams * kp = ud;
    float scale = f32_param(kp, 0);
    const float max_bias = f32_param(kp, 1);
    const float softcap = f32_param(kp, 2);
    if (softcap != 0.0f) {
        scale /= softcap;
    }
    const struct ggml_tensor * mask = dst->src[3];
    const struct ggml_tensor * sinks = dst->src[4];
    const int64_t D = q->ne[0], Dv = v->ne[0];
    const int64_t n_q = q->ne[1], H = q->ne[2], B = q->ne[3];
    const int64_t n_kv = k->ne[1];
    const int64_t rk2 = H / k->ne[2], rv2 = H / v->ne[2];
    const int64_t rk3 = B / k->ne[3], rv3 = B / v->ne[3];
    int64_t r0, r1;
    split(n_q * H * B, ith, nth, &r0, &r1);
    if (r0 >= r1) {
        return;
    }
    // this thread's rows meet few K/V heads: each is converted to F32 once (when it fits in
    // 64 MiB; else rows are converted one at a time)
    const bool cache = (k->type != GGML_TYPE_F32 || v->type != GGML_TYPE_F32) &&
                       (uint64_t) n_kv * (uint64_t) (D + Dv) * sizeof(float) <= ((uint64_t) 64 << 20);
    float * kc = cache ? malloc((size_t) n_kv * (size_t) (D + Dv) * sizeof(float)) : NULL;
    float * vc = kc ? kc + n_kv * D : NULL;
    int64_t cached_k2 = -1, cached_k3 = -1, cached_v2 = -1, cached_v3 = -1;
    float * ms = malloc((size_t) n_kv * sizeof(float));
    float acc[RPC_FA_MAX_D];
    float kbuf[RPC_FA_MAX_D];
    if (ms == NULL) {
        *kp->error = 1;
        free(kc);
        return;
    }
    for (int64_t r = r0; r < r1; r++) {
        const int64_t iq1 = r % n_q, iq2 = (r / n_q) % H, iq3 = r / (n_q * H);
        const float slope = rpc_alibi_slope(max_bias, (int) iq2, (int) H);
        const float * qr = (const float *) row3(q, iq1, iq2, iq3);
        const char * mr = mask ? row3(mask, iq1, iq2 % mask->ne[2], iq3 % mask->ne[3]) : NULL;
        const int64_t ik2 = iq2 / rk2, iv2 = iq2 / rv2, ik3 = iq3 / rk3, iv3 = iq3 / rv3;
        if (kc != NULL && (ik2 != cached_k2 || ik3 != cached_k3)) {
            for (int64_t ic = 0; ic < n_kv; ic++) {
                const float * kr = row_f32(k->type, row3(k, ic, ik2, ik3), D, kc + ic * D);
                if (kr != kc + ic * D) {
                    memcpy(kc + ic * D, kr, (size_t) D * sizeof(float));
                }
            }
            cached_k2 = ik2;
            cached_k3 = ik3;
        }
        if (vc != NULL && (iv2 != cached_v2 || iv3 != cached_v3)) {
            for (int64_t ic = 0; ic < n_kv; ic++) {
                const float * vr = row_f32(v->type, row3(v, ic, iv2, iv3), Dv, vc + ic * Dv);
                if (vr != vc + ic * Dv) {
                    memcpy(vc + ic * Dv, vr, (size_t) Dv * sizeof(float));
                }
            }
            cached_v2 = iv2;
            cached_v3 = iv3;
        }
        // scores, then one softmax pass and one accumulation pass
        float M = -INFINITY;
        for (int64_t ic = 0; ic < n_kv; ic++) {
            const float mv = mr ? slope * load(mask->type, mr + ic * mask->nb[0]) : 0.0f;
            if (mv == -INFINITY) {
                ms[ic] = -INFINITY;
                continue;
            }
            const float * kr = kc ? kc + ic * D : row_f32(k->type, row3(k, ic, ik2, ik3), D, kbuf);
            float s = dot_f32(qr, kr, D) * scale;
            if (softcap != 0.0f) {
                s = softcap * tanhf(s);
            }
            s += mv;
            ms[ic] = s;
            M = s > M ? s : M;
        }
        float sink = -INFINITY;
        if (sinks != NULL) {
            sink = ((const float *) sinks->data)[iq2];
            M = sink > M ? sink : M;
        }
        memset(acc, 0, (size_t) Dv * sizeof(float));
        float S = 0.0f;
        if (M != -INFINITY) {
            for (int64_t ic = 0; ic < n_kv; ic++) {
                if (ms[ic] == -INFINITY) {
                    continue;
                }
                const float w = expf(ms[ic] - M);
                const float * vr = vc ? vc + ic * Dv : row_f32(v->type, row3(v, ic, iv2, iv3), Dv, kbuf);
                axpy_f32(acc, w, vr, Dv);
                S += w;
            }
            if (sinks != NULL) {
                S += expf(sink - M);
            }
        }
        const float inv = S == 0.0f ? 0.0f : 1.0f / S;
        float * y = (float *) row3(dst, iq2, iq1, iq3);
        for (int64_t i = 0; i < Dv; i++) {
            y[i] = acc[i] * inv;
        }
    }
    free(ms);
    free(kc);
}
