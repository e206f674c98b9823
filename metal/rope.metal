// rope.metal - position encodings: ALIBI (below) and ROPE (F32, F16), modes 0 (pairs 2k,
// 2k+1) and 2 (NeoX: pairs k, k + n_dims/2), with YaRN. src1 holds one I32 position per i2. Parameters: i[0] = n_dims, i[1] = mode,
// i[2] = src/dst type; f[0] = freq_base, f[1] = freq_scale, f[2] = ext_factor,
// f[3] = attn_factor, f[4], f[5] = YaRN correction dims (computed by the host).
// One threadgroup per row (i1, i2, i3); threads stride over pairs. Elements at or beyond
// n_dims are copied. NeoX keeps the reference's quirks: the position is scaled by freq_scale
// before the angles, and the YaRN ramp always sees pair 0.

inline float rope_ramp(float low, float high, int i0) {
    const float y = (float) (i0 / 2 - low) / max(0.001f, high - low);
    return 1.0f - min(1.0f, max(0.0f, y));
}

kernel void kernel_rope(GGML_METAL_KERNEL_ARGS) {
    const int64_t i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
    const int n_dims = args.i[0];
    const bool neox = (args.i[1] & 2) != 0;
    const int type = args.i[2];
    const float freq_base = args.f[0], freq_scale = args.f[1], ext_factor = args.f[2];
    const float attn_factor = args.f[3], corr0 = args.f[4], corr1 = args.f[5];
    const int32_t pos = ((device const int32_t *) src1)[i2];
    device const char * a = src0 + i1*args.nb01 + i2*args.nb02 + i3*args.nb03;
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    const float esz = (float) args.nb00;

    const int64_t npairs = n_dims / 2;
    for (int64_t k = tpitg.x; k < npairs; k += ntg.x) {
        float theta_extrap = (float) pos * (neox ? freq_scale : 1.0f);
        theta_extrap *= pow(freq_base, -2.0f * (float) k / (float) n_dims);
        const float theta_interp = freq_scale * theta_extrap;
        float theta = theta_interp;
        float mscale = attn_factor;
        if (ext_factor != 0.0f) {
            const float mix = rope_ramp(corr0, corr1, neox ? 0 : (int) (2 * k)) * ext_factor;
            theta = theta_interp * (1.0f - mix) + theta_extrap * mix;
            mscale *= 1.0f + 0.1f * log(1.0f / freq_scale);
        }
        const float c = cos(theta) * mscale, s = sin(theta) * mscale;
        const int64_t j0 = neox ? k : 2 * k;
        const int64_t j1 = neox ? k + npairs : 2 * k + 1;
        const float x0 = load_elem(type, a, j0 * (int64_t) (args.nb00 / (uint64_t) esz));
        const float x1 = load_elem(type, a, j1 * (int64_t) (args.nb00 / (uint64_t) esz));
        store_elem(type, d, j0 * (int64_t) (args.nb0 / (uint64_t) esz), x0 * c - x1 * s);
        store_elem(type, d, j1 * (int64_t) (args.nb0 / (uint64_t) esz), x0 * s + x1 * c);
    }
    for (int64_t i0 = n_dims + tpitg.x; i0 < args.ne0; i0 += ntg.x) {
        store_elem(type, d, i0 * (int64_t) (args.nb0 / (uint64_t) esz),
                   load_elem(type, a, i0 * (int64_t) (args.nb00 / (uint64_t) esz)));
    }
}

// ALIBI (F32): element i0 of every row of head k (k = i2 + ne2*i3) gets i0 * slope_k added,
// slope_k = m0^(k+1) for k < h, m1^(2(k-h)+1) after; the host passes h (i[0]), m0 and m1
// (f[0], f[1]). One threadgroup per row.
kernel void kernel_alibi(GGML_METAL_KERNEL_ARGS) {
    const int64_t i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
    const int64_t k = i2 + args.ne02 * i3;
    const int64_t h = args.i[0];
    const float slope = k < h ? pow(args.f[0], (float) (k + 1)) : pow(args.f[1], (float) (2 * (k - h) + 1));
    device const char * a = src0 + i1*args.nb01 + i2*args.nb02 + i3*args.nb03;
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    for (int64_t i0 = tpitg.x; i0 < args.ne0; i0 += ntg.x) {
        *(device float *) (d + i0*args.nb0) = (float) i0 * slope + *(device const float *) (a + i0*args.nb00);
    }
}
