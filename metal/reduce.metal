// reduce.metal - SUM_ROWS (F32): dst[0, i1, i2, i3] = sum over i0 of src0. One threadgroup
// per row, reduced through threadgroup memory (no SIMD-group functions; power-of-two groups).

kernel void kernel_sum_rows(GGML_METAL_KERNEL_ARGS) {
    threadgroup float * buf = (threadgroup float *) shmem;
    device const char * a = src0 + tgpig.x*args.nb01 + tgpig.y*args.nb02 + tgpig.z*args.nb03;
    float s = 0.0f;
    for (int64_t i0 = tpitg.x; i0 < args.ne00; i0 += ntg.x) {
        s += *(device const float *) (a + i0*args.nb00);
    }
    s = tg_sum_tree(s, buf, tpitg.x, ntg.x);
    if (tpitg.x == 0) {
        *(device float *) (dst + tgpig.x*args.nb1 + tgpig.y*args.nb2 + tgpig.z*args.nb3) = s;
    }
}
