// pad.metal - PAD (F32): dst[i0, i1, i2, i3] = src0[i0, i1, i2, i3] inside src0's shape, 0
// beyond it (zeros appended at the end of every dimension). One threadgroup per dst row.

kernel void kernel_pad(GGML_METAL_KERNEL_ARGS) {
    const int64_t i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
    const bool row_in = i1 < args.ne01 && i2 < args.ne02 && i3 < args.ne03;
    device const char * a = src0 + (row_in ? i1*args.nb01 + i2*args.nb02 + i3*args.nb03 : 0);
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    for (int64_t i0 = tpitg.x; i0 < args.ne0; i0 += ntg.x) {
        *(device float *) (d + i0*args.nb0) = row_in && i0 < args.ne00 ? *(device const float *) (a + i0*args.nb00) : 0.0f;
    }
}
