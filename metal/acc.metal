// acc.metal - ACC (F32 dst, F32 or F16 src1; i[4] = src1 type): after src0 has been copied into
// dst (a kernel_cpy dispatch before this one, unless in place), src1 is added into the window of
// dst at byte offset i[3] with byte strides i[0], i[1], i[2] for dims 1..3 (element stride 4).
// One threadgroup per src1 row (i11, i12, i13).

kernel void kernel_acc(GGML_METAL_KERNEL_ARGS) {
    const int64_t i11 = tgpig.x, i12 = tgpig.y, i13 = tgpig.z;
    device const char * b = src1 + i11*args.nb11 + i12*args.nb12 + i13*args.nb13;
    device char * d = dst + args.i[3] + i11*args.i[0] + i12*args.i[1] + i13*args.i[2];
    for (int64_t i10 = tpitg.x; i10 < args.ne10; i10 += ntg.x) {
        const float v = args.i[4] == GGML_METAL_T_F16 ? (float) *(device const half *) (b + i10*args.nb10)
                                                       : *(device const float *) (b + i10*args.nb10);
        *(device float *) (d + i10*sizeof(float)) += v;
    }
}
