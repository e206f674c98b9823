// concat.metal - CONCAT (F32) along dim 2: dst[:, :, i2, :] = src0[:, :, i2, :] for i2 < ne02,
// src1[:, :, i2 - ne02, :] after. One threadgroup per dst row.

kernel void kernel_concat(GGML_METAL_KERNEL_ARGS) {
    const int64_t i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
    const bool first = i2 < args.ne02;
    device const char * s = first ? src0 + i1*args.nb01 + i2*args.nb02 + i3*args.nb03
                                  : src1 + i1*args.nb11 + (i2 - args.ne02)*args.nb12 + i3*args.nb13;
    const uint64_t snb0 = first ? args.nb00 : args.nb10;
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    for (int64_t i0 = tpitg.x; i0 < args.ne0; i0 += ntg.x) {
        *(device float *) (d + i0*args.nb0) = *(device const float *) (s + i0*snb0);
    }
}
