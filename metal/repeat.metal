// repeat.metal - REPEAT: dst (any non-quantized type of 2 or 4 bytes per element, i[0] =
// element size) tiles src0 over its shape: dst[i0, i1, i2, i3] = src0[i0 % ne00, i1 % ne01,
// i2 % ne02, i3 % ne03]. One threadgroup per dst row.

kernel void kernel_repeat(GGML_METAL_KERNEL_ARGS) {
    const int64_t i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
    device const char * a = src0 + (i1 % args.ne01)*args.nb01 + (i2 % args.ne02)*args.nb02 + (i3 % args.ne03)*args.nb03;
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    for (int64_t i0 = tpitg.x; i0 < args.ne0; i0 += ntg.x) {
        device const char * s = a + (i0 % args.ne00)*args.nb00;
        if (args.i[0] == 2) {
            *(device ushort *) (d + i0*args.nb0) = *(device const ushort *) s;
        } else {
            *(device uint *) (d + i0*args.nb0) = *(device const uint *) s;
        }
    }
}
