// argsort.metal - ARGSORT (F32 -> I32) per row, ascending (i[0] = 0) or descending (1), stable:
// element i00 goes to position rank(i00) = the number of elements that sort before it (smaller,
// or equal with a smaller index; larger for descending). One threadgroup per row; threads stride
// over the elements, each counting its rank over the whole row (O(ne00^2), no synchronisation).

kernel void kernel_argsort(GGML_METAL_KERNEL_ARGS) {
    const int64_t i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
    device const char * a = src0 + i1*args.nb01 + i2*args.nb02 + i3*args.nb03;
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    const bool desc = args.i[0] != 0;
    for (int64_t i = tpitg.x; i < args.ne00; i += ntg.x) {
        const float x = *(device const float *) (a + i*args.nb00);
        int64_t rank = 0;
        for (int64_t j = 0; j < args.ne00; j++) {
            const float y = *(device const float *) (a + j*args.nb00);
            const bool before = desc ? y > x : y < x;
            rank += before || (y == x && j < i);
        }
        *(device int32_t *) (d + rank*args.nb0) = (int32_t) i;
    }
}
