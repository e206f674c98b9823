// upscale.metal - UPSCALE (F32), nearest neighbour along dims 0 and 1 by the integer factor
// i[0]: dst[i0, i1, i2, i3] = src0[i0 / sf, i1 / sf, i2, i3]. One threadgroup per dst row.

kernel void kernel_upscale(GGML_METAL_KERNEL_ARGS) {
    const int64_t i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
    const int64_t sf = args.i[0];
    device const char * a = src0 + (i1 / sf)*args.nb01 + i2*args.nb02 + i3*args.nb03;
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    for (int64_t i0 = tpitg.x; i0 < args.ne0; i0 += ntg.x) {
        *(device float *) (d + i0*args.nb0) = *(device const float *) (a + (i0 / sf)*args.nb00);
    }
}
