// mul-mat.metal - MUL_MAT with F32 or F16 src1 (i[3] = its type) and F32 dst: dst[i01, i11, i12, i13] = dot(row i01 of
// src0 matrix (i12 / r2, i13 / r3), row i11 of src1 matrix (i12, i13)), r2 = ne12/ne02 and
// r3 = ne13/ne03 broadcasting src0. One SIMD group (32 threads) per dst element; the lanes
// stride over the row (F32/F16: elements; quantized types: 32-element blocks, each lane
// dequantizing whole blocks) and simd_sum combines them. One kernel per src0 type.
//
// MUL_MAT_ID (kernel_mul_mv_id_*): the host dispatches once per expert e (i[1]; src0 = that
// expert's matrices, i[2] = number of experts); src2 holds the I32 expert ids, column i[0]
// of row i11 (broadcast over dims 2 and 3) naming the expert of dst column i11. A dispatch
// writes only the columns of its expert; the one of expert 0 also zeroes columns whose id is
// out of range.

inline void mul_mv_row(int type, bool use_ids, GGML_METAL_FN_ARGS) {
    const int64_t i01 = tgpig.x, i11 = tgpig.y;
    const int64_t i12 = tgpig.z % args.ne12, i13 = tgpig.z / args.ne12;
    if (use_ids) {
        const int32_t e = *(device const int32_t *) (src2 + args.i[0]*args.nb20 + i11*args.nb21 +
                                                     (i12 % args.ne22)*args.nb22 + (i13 % args.ne23)*args.nb23);
        if (e != args.i[1]) {
            if (args.i[1] == 0 && (e < 0 || e >= args.i[2]) && tiisg == 0) {
                *(device float *) (dst + i01*args.nb0 + i11*args.nb1 + i12*args.nb2 + i13*args.nb3) = 0.0f;
            }
            return; // the whole SIMD group (one dst element) leaves together
        }
    }
    const int64_t i02 = i12 / (args.ne12 / args.ne02), i03 = i13 / (args.ne13 / args.ne03);
    device const char * a = src0 + i01*args.nb01 + i02*args.nb02 + i03*args.nb03;
    device const char * b = src1 + i11*args.nb11 + i12*args.nb12 + i13*args.nb13;
    const bool b16 = args.i[3] == GGML_METAL_T_F16;
    float s = 0.0f;
    if (type == GGML_METAL_T_F32 || type == GGML_METAL_T_F16) {
        for (int64_t i0 = tiisg; i0 < args.ne00; i0 += 32) {
            device const char * y = b + i0*args.nb10;
            s += load_elem(type, a, i0) * (b16 ? (float) *(device const half *) y : *(device const float *) y);
        }
    } else {
        // 32-element chunks (a block, or a sub-block of the 256-element k-quant blocks)
        const int64_t nblk = args.ne00 / 32;
        for (int64_t ib = tiisg; ib < nblk; ib += 32) {
            float sb = 0.0f;
            for (int64_t j = 0; j < 32; j++) {
                device const char * y = b + (ib*32 + j)*args.nb10;
                sb += load_elem(type, a, ib*32 + j) * (b16 ? (float) *(device const half *) y : *(device const float *) y);
            }
            s += sb;
        }
    }
    s = simd_sum(s);
    if (tiisg == 0) {
        *(device float *) (dst + i01*args.nb0 + i11*args.nb1 + i12*args.nb2 + i13*args.nb3) = s;
    }
}

// GEMM for batches (the host uses it when src1 has at least 8 columns): one SIMD group per
// 8x8 tile of dst (rows i01 of src0 x columns i11 of src1); for every 8-wide slice of k the lanes
// stage the src0 and src1 tiles (dequantized, zero-padded) in threadgroup memory and
// simdgroup_multiply_accumulate adds their product. Threadgroup memory: 3 x 64 floats.
inline void mul_mm_tile(int type, GGML_METAL_FN_ARGS) {
    threadgroup float * sa = (threadgroup float *) shmem;
    threadgroup float * sb = sa + 64;
    threadgroup float * sc = sb + 64;
    const int64_t r0 = (int64_t) tgpig.x * 8, c0 = (int64_t) tgpig.y * 8;
    const int64_t i12 = tgpig.z % args.ne12, i13 = tgpig.z / args.ne12;
    const int64_t i02 = i12 / (args.ne12 / args.ne02), i03 = i13 / (args.ne13 / args.ne03);
    const bool b16 = args.i[3] == GGML_METAL_T_F16;
    simdgroup_float8x8 mc = make_filled_simdgroup_matrix<float, 8>(0.0f);
    for (int64_t k0 = 0; k0 < args.ne00; k0 += 8) {
        for (uint t = tiisg; t < 64; t += 32) {
            const int64_t r = t / 8, kk = t % 8; // sa[t] = src0(row r0 + r, k0 + kk)
            float va = 0.0f;
            if (r0 + r < args.ne01 && k0 + kk < args.ne00) {
                va = load_elem(type, src0 + (r0 + r)*args.nb01 + i02*args.nb02 + i03*args.nb03, k0 + kk);
            }
            sa[t] = va;
            const int64_t kb = t / 8, c = t % 8; // sb[t] = src1(k0 + kb, column c0 + c)
            float vb = 0.0f;
            if (c0 + c < args.ne11 && k0 + kb < args.ne10) {
                device const char * y = src1 + (c0 + c)*args.nb11 + i12*args.nb12 + i13*args.nb13 + (k0 + kb)*args.nb10;
                vb = b16 ? (float) *(device const half *) y : *(device const float *) y;
            }
            sb[t] = vb;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        simdgroup_float8x8 ma;
        simdgroup_float8x8 mb;
        simdgroup_load(ma, sa, 8);
        simdgroup_load(mb, sb, 8);
        simdgroup_multiply_accumulate(mc, ma, mb, mc);
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    simdgroup_store(mc, sc, 8);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint t = tiisg; t < 64; t += 32) {
        const int64_t r = t / 8, c = t % 8;
        if (r0 + r < args.ne01 && c0 + c < args.ne11) {
            *(device float *) (dst + (r0 + r)*args.nb0 + (c0 + c)*args.nb1 + i12*args.nb2 + i13*args.nb3) = sc[t];
        }
    }
}

kernel void kernel_mul_mv_f32_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_F32, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_f16_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_F16, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_q4_0_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q4_0, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_q4_1_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q4_1, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_q5_0_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q5_0, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_q5_1_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q5_1, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_q8_0_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q8_0, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_q2_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q2_K, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_q3_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q3_K, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_q4_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q4_K, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_q5_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q5_K, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_q6_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q6_K, false, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_f32_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_F32, true, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_f16_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_F16, true, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_q4_0_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q4_0, true, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_q4_1_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q4_1, true, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_q5_0_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q5_0, true, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_q5_1_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q5_1, true, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_q8_0_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q8_0, true, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_q2_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q2_K, true, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_q3_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q3_K, true, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_q4_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q4_K, true, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_q5_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q5_K, true, GGML_METAL_CALL); }
kernel void kernel_mul_mv_id_q6_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mv_row(GGML_METAL_T_Q6_K, true, GGML_METAL_CALL); }
kernel void kernel_mul_mm_f32_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_F32, GGML_METAL_CALL); }
kernel void kernel_mul_mm_f16_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_F16, GGML_METAL_CALL); }
kernel void kernel_mul_mm_q4_0_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_Q4_0, GGML_METAL_CALL); }
kernel void kernel_mul_mm_q4_1_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_Q4_1, GGML_METAL_CALL); }
kernel void kernel_mul_mm_q5_0_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_Q5_0, GGML_METAL_CALL); }
kernel void kernel_mul_mm_q5_1_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_Q5_1, GGML_METAL_CALL); }
kernel void kernel_mul_mm_q8_0_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_Q8_0, GGML_METAL_CALL); }
kernel void kernel_mul_mm_q2_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_Q2_K, GGML_METAL_CALL); }
kernel void kernel_mul_mm_q3_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_Q3_K, GGML_METAL_CALL); }
kernel void kernel_mul_mm_q4_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_Q4_K, GGML_METAL_CALL); }
kernel void kernel_mul_mm_q5_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_Q5_K, GGML_METAL_CALL); }
kernel void kernel_mul_mm_q6_K_f32(GGML_METAL_KERNEL_ARGS) { mul_mm_tile(GGML_METAL_T_Q6_K, GGML_METAL_CALL); }
