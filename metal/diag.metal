// diag.metal - DIAG_MASK_INF (F32): element (i0, i1) of every matrix becomes -inf when
// i0 > i[0] (n_past) + i1, else is copied. One threadgroup per row (i1, i2, i3).

kernel void kernel_diag_mask_inf(GGML_METAL_KERNEL_ARGS) {
    const int64_t i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
    device const char * a = src0 + i1*args.nb01 + i2*args.nb02 + i3*args.nb03;
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    const int64_t n_past = args.i[0];
    for (int64_t i0 = tpitg.x; i0 < args.ne0; i0 += ntg.x) {
        const float x = *(device const float *) (a + i0*args.nb00);
        *(device float *) (d + i0*args.nb0) = i0 > n_past + i1 ? -INFINITY : x;
    }
}
