// get-rows.metal - GET_ROWS: dst row (i10, i11) = row src1[i10, i11] (I32) of matrix i11 of
// src0 (F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K or Q6_K; i[0] =
// its type), converted to F32. One threadgroup per
// dst row; threads stride over i0.

kernel void kernel_get_rows(GGML_METAL_KERNEL_ARGS) {
    const int64_t i10 = tgpig.x, i11 = tgpig.y;
    const int32_t r = *(device const int32_t *) (src1 + i10*args.nb10 + i11*args.nb11);
    device const char * a = src0 + (int64_t) r*args.nb01 + i11*args.nb02;
    device char * d = dst + i10*args.nb1 + i11*args.nb2;
    for (int64_t i0 = tpitg.x; i0 < args.ne00; i0 += ntg.x) {
        *(device float *) (d + i0*args.nb0) = load_elem(args.i[0], a, i0);
    }
}
