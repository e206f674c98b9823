// softmax.metal - SOFT_MAX (F32): dst row = softmax(f[0] * src0 row + mask row), the mask
// (src1, F32, optional: i[0] = 1 when present) row being the flattened row index modulo
// ne11. One threadgroup per row; SIMD-group reductions for the maximum and the sum.

kernel void kernel_soft_max(GGML_METAL_KERNEL_ARGS) {
    threadgroup float * buf = (threadgroup float *) shmem;
    const int64_t i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
    device const char * a = src0 + i1*args.nb01 + i2*args.nb02 + i3*args.nb03;
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    const bool has_mask = args.i[0] != 0;
    const int64_t ir = i1 + args.ne01*(i2 + args.ne02*i3);
    device const char * m = src1 + (has_mask ? (ir % args.ne11)*args.nb11 : 0);
    const float scale = args.f[0];

    float mx = -INFINITY;
    for (int64_t i0 = tpitg.x; i0 < args.ne00; i0 += ntg.x) {
        float x = *(device const float *) (a + i0*args.nb00) * scale;
        if (has_mask) {
            x += *(device const float *) (m + i0*args.nb10);
        }
        mx = max(mx, x);
    }
    mx = tg_max_simd(mx, buf, tiisg, sgitg, ntg.x);

    float sum = 0.0f;
    for (int64_t i0 = tpitg.x; i0 < args.ne00; i0 += ntg.x) {
        float x = *(device const float *) (a + i0*args.nb00) * scale;
        if (has_mask) {
            x += *(device const float *) (m + i0*args.nb10);
        }
        const float e = x == -INFINITY ? 0.0f : exp(x - mx);
        *(device float *) (d + i0*args.nb0) = e;
        sum += e;
    }
    // each thread reads back only the elements it wrote: no barrier needed before this
    sum = tg_sum_simd(sum, buf, tiisg, sgitg, ntg.x);
    const float inv = 1.0f / sum;
    for (int64_t i0 = tpitg.x; i0 < args.ne00; i0 += ntg.x) {
        *(device float *) (d + i0*args.nb0) *= inv;
    }
}
