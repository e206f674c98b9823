// binary.metal - ADD (and ADD1), SUB, MUL, DIV (F32): dst = src0 op src1, src1 broadcast by repetition along
// every dimension. One threadgroup per dst row (i1, i2, i3); threads stride over i0.

inline void binary_row(int op, GGML_METAL_FN_ARGS) {
    const int64_t i1 = tgpig.x, i2 = tgpig.y, i3 = tgpig.z;
    const int64_t i11 = i1 % args.ne11, i12 = i2 % args.ne12, i13 = i3 % args.ne13;
    device const char * a = src0 + i1*args.nb01 + i2*args.nb02 + i3*args.nb03;
    device const char * b = src1 + i11*args.nb11 + i12*args.nb12 + i13*args.nb13;
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    for (int64_t i0 = tpitg.x; i0 < args.ne0; i0 += ntg.x) {
        const float x = *(device const float *) (a + i0*args.nb00);
        const float y = *(device const float *) (b + (i0 % args.ne10)*args.nb10);
        float r;
        if (op == 0) {
            r = x + y;
        } else if (op == 1) {
            r = x * y;
        } else if (op == 3) {
            r = x - y;
        } else {
            r = x / y;
        }
        *(device float *) (d + i0*args.nb0) = r;
    }
}

kernel void kernel_add(GGML_METAL_KERNEL_ARGS) { binary_row(0, GGML_METAL_CALL); }
kernel void kernel_mul(GGML_METAL_KERNEL_ARGS) { binary_row(1, GGML_METAL_CALL); }
kernel void kernel_div(GGML_METAL_KERNEL_ARGS) { binary_row(2, GGML_METAL_CALL); }
kernel void kernel_sub(GGML_METAL_KERNEL_ARGS) { binary_row(3, GGML_METAL_CALL); }
