// ops-rope.c - position encodings: ROPE (F32, F16) and ALIBI (F32).
//
// ROPE rotates pairs of elements of every row by angles that depend on the row's position
// (src1, one I32 per a->ne[2]) and on the pair index:
//   theta_k = pos * freq_base^(-2k/n_dims), k = 0 .. n_dims/2 - 1
// computed as the reference does, in float: theta starts at pos and is multiplied by
// powf(freq_base, -2/n_dims) after every pair. YaRN blends the interpolated angle
// (freq_scale * theta) with the extrapolated one by a ramp over the correction dims and scales
// the magnitude by attn_factor (and by 1 + 0.1 ln(1/freq_scale) when ext_factor != 0).
//   mode 0: pairs (2k, 2k + 1); mode 2 (NeoX): pairs (k, k + n_dims/2); elements at or beyond
//   n_dims are copied unchanged. NeoX follows two quirks of the reference version: the position is
//   multiplied by freq_scale before the pairs (so freq_scale applies twice) and the YaRN ramp
//   always sees pair index 0.
//   ggml_x_rope_ext (i32[13] = 1, src[2] = optional F32 frequency factors): the angle of pair k is
//   divided by factor[k] before the YaRN blend, and NeoX has neither quirk (as llama.cpp of
//   2025 computes it).
//   mode 4 (GLM): two angle sets (position clamped to n_ctx - 2, and the block position).
// Rows with the same position share their angles: each thread caches cos/sin per position.
//
// ALIBI adds slope_k * i0 to element i0 of every row of head k (k flattened over dims 2..3).

#include "../ggml-impl.h"
#include "rowconv.h"

#include <math.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

// dims at which the YaRN ramp starts / ends for a rotation count n_rot over the original context
static float rope_yarn_corr_dim(int n_dims, int n_orig_ctx, float n_rot, float base) {
    return n_dims * logf(n_orig_ctx / (n_rot * 2 * (float) M_PI)) / (2 * logf(base));
}

// same values as the public ggml_rope_yarn_corr_dims (defined with the constructors in
// ops/attention.c); kept here so the kernel does not depend on the constructor file
static void rope_corr_dims(int n_dims, int n_orig_ctx, float freq_base, float beta_fast, float beta_slow,
                           float dims[2]) {
    const float lo = floorf(rope_yarn_corr_dim(n_dims, n_orig_ctx, beta_fast, freq_base));
    const float hi = ceilf(rope_yarn_corr_dim(n_dims, n_orig_ctx, beta_slow, freq_base));
    dims[0] = lo > 0.0f ? lo : 0.0f;
    dims[1] = hi < (float) (n_dims - 1) ? hi : (float) (n_dims - 1);
}

struct rope_params {
    int n_dims, mode, n_ctx, n_orig_ctx;
    float freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, xpos_base;
    bool xpos_down;
    bool ext;              // ggml_x_rope_ext semantics
    const float * factors; // ext: per-pair divisors of the angle, or NULL
    float theta_scale;
    float corr_dims[2];
};

static void rope_read_params(const struct ggml_tensor * dst, struct rope_params * p) {
    p->n_dims      = ggml_x_get_op_params_i32(dst, 1);
    p->mode        = ggml_x_get_op_params_i32(dst, 2);
    p->n_ctx       = ggml_x_get_op_params_i32(dst, 3);
    p->n_orig_ctx  = ggml_x_get_op_params_i32(dst, 4);
    p->freq_base   = ggml_x_get_op_params_f32(dst, 5);
    p->freq_scale  = ggml_x_get_op_params_f32(dst, 6);
    p->ext_factor  = ggml_x_get_op_params_f32(dst, 7);
    p->attn_factor = ggml_x_get_op_params_f32(dst, 8);
    p->beta_fast   = ggml_x_get_op_params_f32(dst, 9);
    p->beta_slow   = ggml_x_get_op_params_f32(dst, 10);
    p->xpos_base   = ggml_x_get_op_params_f32(dst, 11);
    p->xpos_down   = ggml_x_get_op_params_i32(dst, 12) != 0;
    p->ext         = ggml_x_get_op_params_i32(dst, 13) != 0;
    p->factors     = p->ext && dst->src[2] != NULL ? (const float *) dst->src[2]->data : NULL;
    p->theta_scale = powf(p->freq_base, -2.0f / p->n_dims);
    rope_corr_dims(p->n_dims, p->n_orig_ctx, p->freq_base, p->beta_fast, p->beta_slow, p->corr_dims);
}

// 1 at and below the low correction dim, 0 from the high one on, linear in between
static float rope_yarn_ramp(float low, float high, int i0) {
    const float y = (i0 / 2 - low) / GGML_X_MAX(0.001f, high - low);
    return 1.0f - GGML_X_MIN(1.0f, GGML_X_MAX(0.0f, y));
}

// cos/sin of one pair; i0 selects the ramp position (i0 / 2)
static void rope_yarn(const struct rope_params * p, float theta_extrap, int i0, float * c, float * s) {
    const float theta_interp = p->freq_scale * theta_extrap;
    float theta = theta_interp;
    float mscale = p->attn_factor;
    if (p->ext_factor != 0.0f) {
        const float ramp_mix = rope_yarn_ramp(p->corr_dims[0], p->corr_dims[1], i0) * p->ext_factor;
        theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
        mscale *= 1.0f + 0.1f * logf(1.0f / p->freq_scale);
    }
    *c = cosf(theta) * mscale;
    *s = sinf(theta) * mscale;
}

static bool rope_supports(const struct ggml_tensor * dst) {
    const struct ggml_tensor * a   = dst->src[0];
    const struct ggml_tensor * pos = dst->src[1];
    if (a == NULL || pos == NULL || pos->type != GGML_TYPE_I32) {
        return false;
    }
    if (!(a->type == GGML_TYPE_F32 || a->type == GGML_TYPE_F16) || dst->type != a->type) {
        return false;
    }
    for (int d = 0; d < GGML_MAX_DIMS; d++) {
        if (a->ne[d] != dst->ne[d]) {
            return false;
        }
    }
    if (ggml_nelements(pos) < a->ne[2]) {
        return false;
    }
    const int n_dims = ggml_x_get_op_params_i32(dst, 1);
    const int mode   = ggml_x_get_op_params_i32(dst, 2);
    if (n_dims <= 0 || n_dims % 2 != 0) {
        return false;
    }
    const struct ggml_tensor * ff = dst->src[2];
    if (ggml_x_get_op_params_i32(dst, 13) != 0) {
        if (dst->op != GGML_OP_ROPE || (mode != 0 && mode != 2)) {
            return false;
        }
        if (ff != NULL && (ff->type != GGML_TYPE_F32 || !ggml_is_contiguous(ff) || ggml_nelements(ff) < n_dims / 2)) {
            return false;
        }
    } else if (ff != NULL) {
        return false;
    }
    if (mode & 4) {
        // GLM: ne0/4 rotations reading elements i0 + {0, 1, 2, 3} * n_dims/2
        return a->ne[0] / 4 + 3 * (int64_t) (n_dims / 2) <= a->ne[0];
    }
    return n_dims <= a->ne[0];
}

static size_t rope_work_size(const struct ggml_tensor * dst, int n_threads) {
    const int64_t n_dims = ggml_x_get_op_params_i32(dst, 1);
    return 64 + (size_t) n_threads * (size_t) (GGML_X_MAX(n_dims, dst->ne[0]) + 16) * sizeof(float);
}

static inline float rope_load(bool f16, const char * p) {
    return f16 ? GGML_FP16_TO_FP32(*(const ggml_fp16_t *) p) : *(const float *) p;
}

static inline void rope_store(bool f16, char * p, float v) {
    if (f16) {
        *(ggml_fp16_t *) p = GGML_FP32_TO_FP16(v);
    } else {
        *(float *) p = v;
    }
}

// cos/sin of the n_dims/2 pairs of a row at position pos (modes 0 and 2)
static void rope_fill_cache(const struct rope_params * p, int32_t pos, int64_t ne0, float * cache) {
    const bool neox = (p->mode & 2) != 0;
    float theta = (float) pos;
    if (p->ext) {
        for (int k = 0; k < p->n_dims / 2; k++) {
            float c, s;
            rope_yarn(p, p->factors != NULL ? theta / p->factors[k] : theta, 2 * k, &c, &s);
            theta *= p->theta_scale;
            cache[2 * k + 0] = c;
            cache[2 * k + 1] = s;
        }
        return;
    }
    if (neox) {
        // the reference's NeoX path pre-scales the position by freq_scale (on top of the
        // scaling in rope_yarn); this only matters for freq_scale != 1
        theta *= p->freq_scale;
    }
    for (int k = 0; k < p->n_dims / 2; k++) {
        float c, s;
        // NeoX hands the truncated -k/n_dims (always 0) to the ramp, like the reference
        rope_yarn(p, theta, neox ? 0 : 2 * k, &c, &s);
        if (!neox && p->xpos_base != 0.0f) {
            const int64_t i0 = 2 * (int64_t) k;
            float zeta = powf((i0 + 0.4f * ne0) / (1.4f * ne0), pos / p->xpos_base);
            if (p->xpos_down) {
                zeta = 1.0f / zeta;
            }
            c *= zeta;
            s *= zeta;
        }
        theta *= p->theta_scale;
        cache[2 * k + 0] = c;
        cache[2 * k + 1] = s;
    }
}

static void rope_row_glm(const struct rope_params * p, int32_t pos, int64_t ne0, bool f16,
                         const char * src, size_t nb00, char * dst, size_t nb0, float sin_sign) {
    const int half = p->n_dims / 2;
    float theta = (float) GGML_X_MIN(pos, p->n_ctx - 2);
    float block_theta = (float) GGML_X_MAX(pos - (p->n_ctx - 2), 0);
    for (int64_t i0 = 0; i0 < ne0 / 4; i0++) {
        const float c  = cosf(theta),       s  = sin_sign * sinf(theta);
        const float cb = cosf(block_theta), sb = sin_sign * sinf(block_theta);
        theta *= p->theta_scale;
        block_theta *= p->theta_scale;
        const char * x = src + i0 * nb00;
        char * y = dst + i0 * nb0;
        const float x0 = rope_load(f16, x);
        const float x1 = rope_load(f16, x + half * nb00);
        const float x2 = rope_load(f16, x + 2 * half * nb00);
        const float x3 = rope_load(f16, x + 3 * half * nb00);
        rope_store(f16, y,                x0 * c - x1 * s);
        rope_store(f16, y + half * nb0,   x0 * s + x1 * c);
        rope_store(f16, y + 2 * half * nb0, x2 * cb - x3 * sb);
        rope_store(f16, y + 3 * half * nb0, x2 * sb + x3 * cb);
    }
}

// sin_sign = 1: the rotation; -1: its transpose (ROPE_BACK, the gradient of ROPE)
static void rope_apply(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst, float sin_sign) {
    const struct ggml_tensor * a = dst->src[0];
    const int32_t * pos = (const int32_t *) dst->src[1]->data;
    struct rope_params p;
    rope_read_params(dst, &p);

    const bool f16  = a->type == GGML_TYPE_F16;
    const bool neox = (p.mode & 2) != 0;
    const bool glm  = (p.mode & 4) != 0;
    const int64_t ne0 = a->ne[0], ne1 = a->ne[1], ne2 = a->ne[2];
    const int64_t nr = ne1 * ne2 * a->ne[3];
    const size_t nb00 = a->nb[0], nb0 = dst->nb[0];
    const int half = p.n_dims / 2;

    float * cache = (float *) (((uintptr_t) cc->wdata + 63) & ~(uintptr_t) 63);
    cache += (size_t) cc->ith * (size_t) (GGML_X_MAX((int64_t) p.n_dims, ne0) + 16);

    const int64_t dr  = (nr + cc->nth - 1) / cc->nth;
    const int64_t ir0 = GGML_X_MIN(dr * cc->ith, nr);
    const int64_t ir1 = GGML_X_MIN(ir0 + dr, nr);

    int64_t cached_i2 = -1;
    for (int64_t ir = ir0; ir < ir1; ir++) {
        const int64_t i1 = ir % ne1;
        const int64_t i2 = (ir / ne1) % ne2;
        const int64_t i3 = ir / (ne1 * ne2);
        const char * src = (const char *) a->data + i1*a->nb[1] + i2*a->nb[2] + i3*a->nb[3];
        char * out = (char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3];

        if (glm) {
            rope_row_glm(&p, pos[i2], ne0, f16, src, nb00, out, nb0, sin_sign);
            continue;
        }
        if (i2 != cached_i2) {
            rope_fill_cache(&p, pos[i2], ne0, cache);
            for (int k = 0; k < half; k++) {
                cache[2 * k + 1] *= sin_sign;
            }
            cached_i2 = i2;
        }

        // pair k: elements (k*step0, k*step0 + off1)
        const int64_t step0 = neox ? 1 : 2;
        const int64_t off1  = neox ? half : 1;
        if (!f16 && nb00 == sizeof(float) && nb0 == sizeof(float)) {
            const float * x = (const float *) src;
            float * y = (float *) out;
            for (int k = 0; k < half; k++) {
                const float c = cache[2 * k], s = cache[2 * k + 1];
                const float x0 = x[k * step0], x1 = x[k * step0 + off1];
                y[k * step0]        = x0 * c - x1 * s;
                y[k * step0 + off1] = x0 * s + x1 * c;
            }
            for (int64_t i0 = p.n_dims; i0 < ne0; i0++) {
                y[i0] = x[i0];
            }
        } else {
            for (int k = 0; k < half; k++) {
                const float c = cache[2 * k], s = cache[2 * k + 1];
                const float x0 = rope_load(f16, src + (k * step0) * nb00);
                const float x1 = rope_load(f16, src + (k * step0 + off1) * nb00);
                rope_store(f16, out + (k * step0) * nb0,        x0 * c - x1 * s);
                rope_store(f16, out + (k * step0 + off1) * nb0, x0 * s + x1 * c);
            }
            const size_t esize = f16 ? sizeof(ggml_fp16_t) : sizeof(float);
            for (int64_t i0 = p.n_dims; i0 < ne0; i0++) {
                memcpy(out + i0 * nb0, src + i0 * nb00, esize);
            }
        }
    }
}

static void rope_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    rope_apply(cc, dst, 1.0f);
}

static void rope_back_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    rope_apply(cc, dst, -1.0f);
}

const struct ggml_cpu_op ggml_cpu_op_rope = {
    .forward   = rope_forward,
    .supports  = rope_supports,
    .work_size = rope_work_size,
};

// ROPE_BACK: same op_params and sources as ROPE; the sines change sign, which applies the
// transposed (inverse) rotation, magnitude scalings unchanged
const struct ggml_cpu_op ggml_cpu_op_rope_back = {
    .forward   = rope_back_forward,
    .supports  = rope_supports,
    .work_size = rope_work_size,
};

// ---------------------------------------------------------------------------------------------
// ALIBI
//
// i32[0] = n_past (unused by the kernel), i32[1] = n_head, f32[2] = bias_max.
// With h = the largest power of two <= n_head, m0 = 2^(-bias_max/h), m1 = 2^(-bias_max/2/h):
// slope_k = m0^(k+1) for k < h, else m1^(2(k-h)+1), k = i2 + ne2*i3.

static bool alibi_supports(const struct ggml_tensor * dst) {
    return rowconv_f32_same_shape(dst) && ggml_x_get_op_params_i32(dst, 1) > 0;
}

static void alibi_forward(const struct ggml_cpu_ctx * cc, struct ggml_tensor * dst) {
    const struct ggml_tensor * a = dst->src[0];
    const int n_head = ggml_x_get_op_params_i32(dst, 1);
    const float max_bias = ggml_x_get_op_params_f32(dst, 2);

    const int64_t ne0 = a->ne[0], ne1 = a->ne[1], ne2 = a->ne[2];
    const int64_t nr = ne1 * ne2 * a->ne[3];

    const int h = 1 << (int) floor(log2((double) n_head));
    const float m0 = powf(2.0f, -max_bias / h);
    const float m1 = powf(2.0f, -(max_bias / 2.0f) / h);

    for (int64_t ir = cc->ith; ir < nr; ir += cc->nth) {
        const int64_t i1 = ir % ne1;
        const int64_t i2 = (ir / ne1) % ne2;
        const int64_t i3 = ir / (ne1 * ne2);
        const int64_t k = i2 + ne2 * i3;
        const float slope = k < h ? powf(m0, (float) (k + 1)) : powf(m1, (float) (2 * (k - h) + 1));
        const char * x = (const char *) a->data + i1*a->nb[1] + i2*a->nb[2] + i3*a->nb[3];
        char * y = (char *) dst->data + i1*dst->nb[1] + i2*dst->nb[2] + i3*dst->nb[3];
        for (int64_t i0 = 0; i0 < ne0; i0++) {
            *(float *) (y + i0*dst->nb[0]) = (float) i0 * slope + *(const float *) (x + i0*a->nb[0]);
        }
    }
}

const struct ggml_cpu_op ggml_cpu_op_alibi = {
    .forward  = alibi_forward,
    .supports = alibi_supports,
};
