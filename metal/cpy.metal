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

// CPY from F32 to Q8_0, Q4_0 or Q4_1 (i[1] = destination type): rows of equal length (ne00 ==
// ne0, a multiple of 32), src0 row n going to dst row n in row-major order. One threadgroup per
// src0 row; each thread quantizes whole 32-element blocks the way the reference quantizers do
// (Q8_0: d = absmax/127, q = round(x/d); Q4_0: d = -(the element of largest magnitude)/8,
// q = min(15, trunc(x/d + 8.5)); Q4_1: d = (max - min)/15, q = min(15, trunc((x - min)/d + 0.5))).
kernel void kernel_cpy_f32_q(GGML_METAL_KERNEL_ARGS) {
    const int64_t i01 = tgpig.x, i02 = tgpig.y, i03 = tgpig.z;
    device const char * a = src0 + i01*args.nb01 + i02*args.nb02 + i03*args.nb03;
    const int64_t ir = i01 + args.ne01*(i02 + args.ne02*i03);
    const int64_t i1 = ir % args.ne1, i2 = (ir / args.ne1) % args.ne2, i3 = ir / (args.ne1*args.ne2);
    device char * d = dst + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
    const int type = args.i[1];
    for (int64_t ib = tpitg.x; ib < args.ne00 / 32; ib += ntg.x) {
        float x[32];
        for (int j = 0; j < 32; j++) {
            x[j] = *(device const float *) (a + (ib*32 + j)*args.nb00);
        }
        if (type == GGML_METAL_T_Q8_0) {
            device block_q8_0 * y = (device block_q8_0 *) d + ib;
            float amax = 0.0f;
            for (int j = 0; j < 32; j++) {
                amax = max(amax, fabs(x[j]));
            }
            const float dd = amax / 127.0f;
            const float id = dd != 0.0f ? 1.0f / dd : 0.0f;
            y->d = (half) dd;
            for (int j = 0; j < 32; j++) {
                y->qs[j] = (int8_t) round(x[j] * id);
            }
        } else if (type == GGML_METAL_T_Q4_0) {
            device block_q4_0 * y = (device block_q4_0 *) d + ib;
            float amax = 0.0f, mx = 0.0f;
            for (int j = 0; j < 32; j++) {
                if (fabs(x[j]) > amax) {
                    amax = fabs(x[j]);
                    mx = x[j];
                }
            }
            const float dd = mx / -8.0f;
            const float id = dd != 0.0f ? 1.0f / dd : 0.0f;
            y->d = (half) dd;
            for (int j = 0; j < 16; j++) {
                const int q0 = min(15, (int) (int8_t) (x[j] * id + 8.5f));
                const int q1 = min(15, (int) (int8_t) (x[j + 16] * id + 8.5f));
                y->qs[j] = (uint8_t) (q0 | (q1 << 4));
            }
        } else {
            device block_q4_1 * y = (device block_q4_1 *) d + ib;
            float mn = x[0], mx = x[0];
            for (int j = 1; j < 32; j++) {
                mn = min(mn, x[j]);
                mx = max(mx, x[j]);
            }
            const float dd = (mx - mn) / 15.0f;
            const float id = dd != 0.0f ? 1.0f / dd : 0.0f;
            y->d = (half) dd;
            y->m = (half) mn;
            for (int j = 0; j < 16; j++) {
                const int q0 = min(15, (int) (int8_t) ((x[j] - mn) * id + 0.5f));
                const int q1 = min(15, (int) (int8_t) ((x[j + 16] - mn) * id + 0.5f));
                y->qs[j] = (uint8_t) (q0 | (q1 << 4));
            }
        }
    }
}

// CPY / DUP / CONT between tensors of one non-quantized type of 2 or 4 bytes per element
// (i[0] = element size; I32, I16, ...): the bits are copied in row-major element order, as
// kernel_cpy does for F32/F16. One threadgroup per src0 row.
kernel void kernel_cpy_raw(GGML_METAL_KERNEL_ARGS) {
    const int64_t i01 = tgpig.x, i02 = tgpig.y, i03 = tgpig.z;
    device const char * a = src0 + i01*args.nb01 + i02*args.nb02 + i03*args.nb03;
    const int64_t base = args.ne00*(i01 + args.ne01*(i02 + args.ne02*i03));
    for (int64_t i00 = tpitg.x; i00 < args.ne00; i00 += ntg.x) {
        const int64_t n = base + i00;
        const int64_t i0 = n % args.ne0;
        const int64_t i1 = (n / args.ne0) % args.ne1;
        const int64_t i2 = (n / (args.ne0*args.ne1)) % args.ne2;
        const int64_t i3 = n / (args.ne0*args.ne1*args.ne2);
        device char * d = dst + i0*args.nb0 + i1*args.nb1 + i2*args.nb2 + i3*args.nb3;
        if (args.i[0] == 2) {
            *(device ushort *) d = *(device const ushort *) (a + i00*args.nb00);
        } else {
            *(device uint *) d = *(device const uint *) (a + i00*args.nb00);
        }
    }
}
