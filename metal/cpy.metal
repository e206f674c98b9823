// cpy.metal - CPY / DUP / CONT from F32 or F16 (i[0] = source type) to F32 or F16 (i[1] =
// destination type) in row-major element order: element n of src0 goes to element n of dst,
// whatever the two shapes. One threadgroup per src0 row (i01, i02, i03); threads stride over i00.

kernel void kernel_cpy(GGML_METAL_KERNEL_ARGS) {
    const int64_t i01 = tgpig.x, i02 = tgpig.y, i03 = tgpig.z;
    device const char * a = src0 + i01*args.nb01 + i02*args.nb02 + i03*args.nb03;
    const int64_t base = args.ne00*(i01 + args.ne01*(i02 + args.ne02*i03));
    for (int64_t i00 = tpitg.x; i00 < args.ne00; i00 += ntg.x) {
        const int64_t n = base + i00;
        const int64_t i0 = n % args.ne0;
        const int64_t i1 = (n / args.ne0) % args.ne1;
        const int64_t i2 = (n / (args.ne0*args.ne1)) % args.ne2;
        const int64_t i3 = n / (args.ne0*args.ne1*args.ne2);
        const float v = args.i[0] == GGML_METAL_T_F16
            ? (float) *(device const half *) (a + i00*args.nb00)
            : *(device const float *) (a + i00*args.nb00);
        device char * d = dst + i0*args.nb0 + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
        if (args.i[1] == GGML_METAL_T_F16) {
            *(device half *) d = (half) v;
        } else {
            *(device float *) d = v;
        }
    }
}
