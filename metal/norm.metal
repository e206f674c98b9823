// norm.metal - RMS_NORM and NORM (F32) over rows; f[0] = eps. One threadgroup per row
// (i1, i2, i3). RMS_NORM reduces with SIMD-group functions (needs a GPU that has them); NORM
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
