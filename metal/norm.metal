// norm.metal - RMS_NORM and NORM (F32) over rows (f[0] = eps), and GROUP_NORM (below). One
// threadgroup per row (i1, i2, i3). RMS_NORM reduces with SIMD-group functions (needs a GPU that has them); NORM
// reduces through threadgroup memory only (power-of-two threadgroups).

kernel void kernel_rms_norm(GGML_METAL_KERNEL_ARGS) {
    threadgroup float * buf = (threadgroup float *) shmem;
    device const char * a = src0 + tgpig.x*args.nb01 + tgpig.y*args.nb02 + tgpig.z*args.nb03;
    device char * d = dst + tgpig.x*args.nb1 + tgpig.y*args.nb2 + tgpig.z*args.nb3;
    float s = 0.0f;
    for (int64_t i0 = tpitg.x; i0 < args.ne00; i0 += ntg.x) {
        const float x = *(device const float *) (a + i0*args.nb00);
        s += x * x;
    }
    s = tg_sum_simd(s, buf, tiisg, sgitg, ntg.x);
    const float scale = 1.0f / sqrt(s / (float) args.ne00 + args.f[0]);
    for (int64_t i0 = tpitg.x; i0 < args.ne00; i0 += ntg.x) {
        *(device float *) (d + i0*args.nb0) = *(device const float *) (a + i0*args.nb00) * scale;
    }
}

kernel void kernel_norm(GGML_METAL_KERNEL_ARGS) {
    threadgroup float * buf = (threadgroup float *) shmem;
    device const char * a = src0 + tgpig.x*args.nb01 + tgpig.y*args.nb02 + tgpig.z*args.nb03;
    device char * d = dst + tgpig.x*args.nb1 + tgpig.y*args.nb2 + tgpig.z*args.nb3;
    float s = 0.0f;
    for (int64_t i0 = tpitg.x; i0 < args.ne00; i0 += ntg.x) {
        s += *(device const float *) (a + i0*args.nb00);
    }
    const float mean = tg_sum_tree(s, buf, tpitg.x, ntg.x) / (float) args.ne00;
    float v = 0.0f;
    for (int64_t i0 = tpitg.x; i0 < args.ne00; i0 += ntg.x) {
        const float x = *(device const float *) (a + i0*args.nb00) - mean;
        v += x * x;
    }
    const float var = tg_sum_tree(v, buf, tpitg.x, ntg.x) / (float) args.ne00;
    const float scale = 1.0f / sqrt(var + args.f[0]);
    for (int64_t i0 = tpitg.x; i0 < args.ne00; i0 += ntg.x) {
        *(device float *) (d + i0*args.nb0) = (*(device const float *) (a + i0*args.nb00) - mean) * scale;
    }
}

// GROUP_NORM (F32): channels (dim 2) form i[0] groups of ceil(ne2 / i[0]) channels (the last may
// be smaller); every group of every dim-3 slice is normalised like NORM over its
// ne0*ne1*channels elements, eps 1e-6. One threadgroup per (group, i3); tree reductions.
kernel void kernel_group_norm(GGML_METAL_KERNEL_ARGS) {
    threadgroup float * buf = (threadgroup float *) shmem;
    const int64_t g = tgpig.x, i3 = tgpig.y;
    const int64_t per_group = (args.ne02 + args.i[0] - 1) / args.i[0];
    const int64_t c0 = g * per_group;
    const int64_t c1 = min(c0 + per_group, args.ne02);
    if (c0 >= c1) {
        return; // the whole threadgroup leaves together
    }
    const int64_t n = args.ne00 * args.ne01 * (c1 - c0);
    float s = 0.0f;
    for (int64_t j = tpitg.x; j < n; j += ntg.x) {
        const int64_t i0 = j % args.ne00, i1 = (j / args.ne00) % args.ne01, i2 = c0 + j / (args.ne00 * args.ne01);
        s += *(device const float *) (src0 + i0*args.nb00 + i1*args.nb01 + i2*args.nb02 + i3*args.nb03);
    }
    const float mean = tg_sum_tree(s, buf, tpitg.x, ntg.x) / (float) n;
    float v = 0.0f;
    for (int64_t j = tpitg.x; j < n; j += ntg.x) {
        const int64_t i0 = j % args.ne00, i1 = (j / args.ne00) % args.ne01, i2 = c0 + j / (args.ne00 * args.ne01);
        const float x = *(device const float *) (src0 + i0*args.nb00 + i1*args.nb01 + i2*args.nb02 + i3*args.nb03) - mean;
        v += x * x;
    }
    const float scale = 1.0f / sqrt(tg_sum_tree(v, buf, tpitg.x, ntg.x) / (float) n + 1e-6f);
    for (int64_t j = tpitg.x; j < n; j += ntg.x) {
        const int64_t i0 = j % args.ne00, i1 = (j / args.ne00) % args.ne01, i2 = c0 + j / (args.ne00 * args.ne01);
        const float x = *(device const float *) (src0 + i0*args.nb00 + i1*args.nb01 + i2*args.nb02 + i3*args.nb03);
        *(device float *) (dst + i0*args.nb0 + i1*args.nb1 + i2*args.nb2 + i3*args.nb3) = (x - mean) * scale;
    }
}
