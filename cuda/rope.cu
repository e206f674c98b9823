// rope.cu - ROPE (normal, neox (mode & 2) and glm (mode & 4) modes, YaRN ext_factor, xPos) on
// F32/F16 with I32 positions (one per i2), and ALIBI on F32. The angle of pair k is built by the
// same float recurrence as the CPU kernel (theta *= theta_scale, k times), so both agree to
// rounding. Any strides; dst may alias src (each thread reads its pair before writing it).

#include "common.cuh"

struct cu_rope_params {
    int   n_dims, mode, n_ctx;
    float freq_scale, ext_factor, attn_factor, xpos_base;
    bool  xpos_down;
    float theta_scale;
    float corr0, corr1;
};

static float cu_rope_yarn_corr_dim(int n_dims, int n_orig_ctx, float n_rot, float base) {
    return n_dims * logf(n_orig_ctx / (n_rot * 2 * 3.14159265358979323846f)) / (2 * logf(base));
}

__device__ __forceinline__ void cu_rope_yarn(const cu_rope_params & p, float theta_extrap, int i0, float & c, float & s) {
    const float theta_interp = p.freq_scale * theta_extrap;
    float theta = theta_interp;
    float mscale = p.attn_factor;
    if (p.ext_factor != 0.0f) {
        const float y = (i0 / 2 - p.corr0) / fmaxf(0.001f, p.corr1 - p.corr0);
        const float ramp = 1.0f - fminf(1.0f, fmaxf(0.0f, y));
        const float ramp_mix = ramp * p.ext_factor;
        theta = theta_interp * (1 - ramp_mix) + theta_extrap * ramp_mix;
        mscale *= 1.0f + 0.1f * logf(1.0f / p.freq_scale);
    }
    c = cosf(theta) * mscale;
    s = sinf(theta) * mscale;
}

// one thread per (row, pair k), k < n_dims/2; the tail elements [n_dims, ne0) are copied
__global__ void __launch_bounds__(CU_THREADS)
cu_rope_kernel(cu_t src, cu_t dst, const int32_t * pos, cu_rope_params p, int64_t n) {
    const int half = p.n_dims / 2;
    const bool neox = (p.mode & 2) != 0;
    const int64_t ne0 = src.ne[0];
    const int64_t per_row = half + (ne0 > p.n_dims ? ne0 - p.n_dims : 0);
    CU_GRID_STRIDE(idx, n) {
        const int64_t ir = idx / per_row;
        const int64_t j  = idx % per_row;
        const int64_t i1 = ir % src.ne[1];
        const int64_t i2 = (ir / src.ne[1]) % src.ne[2];
        const int64_t i3 = ir / (src.ne[1] * src.ne[2]);
        const char * x = src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3];
        char * y = dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3];
        if (j >= half) {
            const int64_t i0 = p.n_dims + (j - half);
            cu_store(y + i0 * dst.nb[0], dst.type, cu_load(x + i0 * src.nb[0], src.type));
            continue;
        }
        const int k = (int) j;
        const int32_t ps = pos[i2];
        float theta = (float) ps;
        if (neox) {
            theta *= p.freq_scale;
        }
        for (int t = 0; t < k; t++) {
            theta *= p.theta_scale;
        }
        float c, s;
        cu_rope_yarn(p, theta, neox ? 0 : 2 * k, c, s);
        if (!neox && p.xpos_base != 0.0f) {
            const int64_t i0 = 2 * (int64_t) k;
            float zeta = powf((i0 + 0.4f * ne0) / (1.4f * ne0), ps / p.xpos_base);
            if (p.xpos_down) {
                zeta = 1.0f / zeta;
            }
            c *= zeta;
            s *= zeta;
        }
        const int64_t a  = neox ? k : 2 * k;
        const int64_t b  = neox ? k + half : 2 * k + 1;
        const float x0 = cu_load(x + a * src.nb[0], src.type);
        const float x1 = cu_load(x + b * src.nb[0], src.type);
        cu_store(y + a * dst.nb[0], dst.type, x0 * c - x1 * s);
        cu_store(y + b * dst.nb[0], dst.type, x0 * s + x1 * c);
    }
}

// glm mode: one thread per row, i0 < ne0/4 in order as on the CPU (the quadruples
// {i0, i0 + half, i0 + 2 half, i0 + 3 half} of different i0 overlap when half < ne0/4, so the
// result is defined by that order, also when dst aliases src)
__global__ void __launch_bounds__(CU_THREADS)
cu_rope_glm_kernel(cu_t src, cu_t dst, const int32_t * pos, cu_rope_params p, int64_t nrows) {
    const int half = p.n_dims / 2;
    const int64_t q = src.ne[0] / 4;
    CU_GRID_STRIDE(ir, nrows) {
        const int64_t i1 = ir % src.ne[1];
        const int64_t i2 = (ir / src.ne[1]) % src.ne[2];
        const int64_t i3 = ir / (src.ne[1] * src.ne[2]);
        const char * xr = src.data + i1 * src.nb[1] + i2 * src.nb[2] + i3 * src.nb[3];
        char * yr = dst.data + i1 * dst.nb[1] + i2 * dst.nb[2] + i3 * dst.nb[3];
        const int32_t ps = pos[i2];
        float theta = (float) min(ps, p.n_ctx - 2);
        float block_theta = (float) max(ps - (p.n_ctx - 2), 0);
        for (int64_t i0 = 0; i0 < q; i0++) {
            const float c = cosf(theta), s = sinf(theta);
            const float cb = cosf(block_theta), sb = sinf(block_theta);
            theta *= p.theta_scale;
            block_theta *= p.theta_scale;
            const char * x = xr + i0 * src.nb[0];
            char * y = yr + i0 * dst.nb[0];
            const float x0 = cu_load(x, src.type);
            const float x1 = cu_load(x + half * src.nb[0], src.type);
            const float x2 = cu_load(x + 2 * half * src.nb[0], src.type);
            const float x3 = cu_load(x + 3 * half * src.nb[0], src.type);
            cu_store(y, dst.type, x0 * c - x1 * s);
            cu_store(y + half * dst.nb[0], dst.type, x0 * s + x1 * c);
            cu_store(y + 2 * half * dst.nb[0], dst.type, x2 * cb - x3 * sb);
            cu_store(y + 3 * half * dst.nb[0], dst.type, x2 * sb + x3 * cb);
        }
    }
}

__global__ void __launch_bounds__(CU_THREADS)
cu_alibi_kernel(cu_t src, cu_t dst, int h, float m0, float m1, int64_t n) {
    CU_GRID_STRIDE(idx, n) {
        int64_t i0, i1, i2, i3;
        cu_unravel(idx, dst.ne, i0, i1, i2, i3);
        const int64_t k = i2 + src.ne[2] * i3;
        const float slope = k < h ? powf(m0, (float) (k + 1)) : powf(m1, (float) (2 * (k - h) + 1));
        const float x = *(const float *) cu_ptr(src, i0, i1, i2, i3);
        *(float *) cu_ptr(dst, i0, i1, i2, i3) = (float) i0 * slope + x;
    }
}

bool ggml_cu_rope_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (dst->op == GGML_OP_ALIBI) {
        return a != NULL && a->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && cu_same_shape(a, dst) &&
               ggml_x_get_op_params_i32(dst, 1) > 0;
    }
    const ggml_tensor * pos = dst->src[1];
    if (a == NULL || pos == NULL || pos->type != GGML_TYPE_I32 || !ggml_is_contiguous(pos)) {
        return false;
    }
    // ggml_x_rope_ext (frequency factors, 2025 NeoX semantics) has no CUDA kernel: the CPU runs it
    if (ggml_x_get_op_params_i32(dst, 13) != 0 || dst->src[2] != NULL) {
        return false;
    }
    if (!cu_is_float(a->type) || dst->type != a->type || !cu_same_shape(a, dst)) {
        return false;
    }
    if (ggml_nelements(pos) < a->ne[2]) {
        return false;
    }
    const int n_dims = ggml_x_get_op_params_i32(dst, 1);
    const int mode   = ggml_x_get_op_params_i32(dst, 2);
    if (n_dims <= 0 || n_dims % 2 != 0) {
        return false;
    }
    if (mode & 4) {
        return a->ne[0] / 4 + 3 * (int64_t) (n_dims / 2) <= a->ne[0];
    }
    return n_dims <= a->ne[0];
}

bool ggml_cu_rope(ggml_cu_ctx & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (ggml_nelements(dst) == 0) {
        return true;
    }
    if (dst->op == GGML_OP_ALIBI) {
        const int n_head = ggml_x_get_op_params_i32(dst, 1);
        const float max_bias = ggml_x_get_op_params_f32(dst, 2);
        const int h = 1 << (int) floor(log2((double) n_head));
        const float m0 = powf(2.0f, -max_bias / h);
        const float m1 = powf(2.0f, -(max_bias / 2.0f) / h);
        const int64_t n = ggml_nelements(dst);
        CU_LAUNCH(cu_alibi_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)(cu_make(a), cu_make(dst), h, m0, m1, n);
        return CU_LAUNCH_OK();
    }

    cu_rope_params p;
    p.n_dims      = ggml_x_get_op_params_i32(dst, 1);
    p.mode        = ggml_x_get_op_params_i32(dst, 2);
    p.n_ctx       = ggml_x_get_op_params_i32(dst, 3);
    const int n_orig_ctx = ggml_x_get_op_params_i32(dst, 4);
    const float freq_base = ggml_x_get_op_params_f32(dst, 5);
    p.freq_scale  = ggml_x_get_op_params_f32(dst, 6);
    p.ext_factor  = ggml_x_get_op_params_f32(dst, 7);
    p.attn_factor = ggml_x_get_op_params_f32(dst, 8);
    const float beta_fast = ggml_x_get_op_params_f32(dst, 9);
    const float beta_slow = ggml_x_get_op_params_f32(dst, 10);
    p.xpos_base   = ggml_x_get_op_params_f32(dst, 11);
    p.xpos_down   = ggml_x_get_op_params_i32(dst, 12) != 0;
    p.theta_scale = powf(freq_base, -2.0f / p.n_dims);
    const float lo = floorf(cu_rope_yarn_corr_dim(p.n_dims, n_orig_ctx, beta_fast, freq_base));
    const float hi = ceilf(cu_rope_yarn_corr_dim(p.n_dims, n_orig_ctx, beta_slow, freq_base));
    p.corr0 = lo > 0.0f ? lo : 0.0f;
    p.corr1 = hi < (float) (p.n_dims - 1) ? hi : (float) (p.n_dims - 1);

    const int32_t * pos = (const int32_t *) dst->src[1]->data;
    const int64_t nrows = ggml_nrows(a);
    if (p.mode & 4) {
        if (nrows == 0 || a->ne[0] / 4 == 0) {
            return true;
        }
        CU_LAUNCH(cu_rope_glm_kernel, cu_blocks(nrows), CU_THREADS, 0, ctx.stream)(cu_make(a), cu_make(dst), pos, p,
                                                                                   nrows);
        return CU_LAUNCH_OK();
    }
    const int64_t per_row = p.n_dims / 2 + (a->ne[0] > p.n_dims ? a->ne[0] - p.n_dims : 0);
    const int64_t n = nrows * per_row;
    CU_LAUNCH(cu_rope_kernel, cu_blocks(n), CU_THREADS, 0, ctx.stream)(cu_make(a), cu_make(dst), pos, p, n);
    return CU_LAUNCH_OK();
}
