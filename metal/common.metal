// common.metal - what every kernel family shares: quantized block layouts (as in ggml-quants.h),
// the one kernel signature every kernel uses, element loads/stores by ggml type, and
// threadgroup reductions. The embedded source is this file, ggml-metal-kargs.h, then the
// family files in name order.
//
// Every kernel takes the argument block (buffer 0), up to three sources and the destination
// (buffers 1..4, unused ones bound to the destination), threadgroup scratch memory
// (threadgroup(0)) and its position; the host (ggml-metal-ops.m) binds them all the same way.

#include <metal_stdlib>

using namespace metal;

// [[threadgroup(0)]] spelled through a macro: the C++ shim of metal/emu defines the word
// `threadgroup` away as an address space, which would also empty the attribute
#ifdef GGML_METAL_EMU_KERNELS
#define GGML_METAL_TG0
#else
#define GGML_METAL_TG0 [[threadgroup(0)]]
#endif

#define GGML_METAL_KERNEL_ARGS                                   \
    constant ggml_metal_kargs & args  [[buffer(0)]],             \
    device const char *         src0  [[buffer(1)]],             \
    device const char *         src1  [[buffer(2)]],             \
    device const char *         src2  [[buffer(3)]],             \
    device char *               dst   [[buffer(4)]],             \
    threadgroup char *          shmem GGML_METAL_TG0,            \
    uint3                       tgpig [[threadgroup_position_in_grid]],   \
    uint3                       tpitg [[thread_position_in_threadgroup]], \
    uint3                       ntg   [[threads_per_threadgroup]],        \
    uint                        tiisg [[thread_index_in_simdgroup]],      \
    uint                        sgitg [[simdgroup_index_in_threadgroup]]

// the same parameters for helper functions (attributes belong to kernels only), and the call
#define GGML_METAL_FN_ARGS                                                          \
    constant ggml_metal_kargs & args, device const char * src0,                     \
    device const char * src1, device const char * src2, device char * dst,          \
    threadgroup char * shmem, uint3 tgpig, uint3 tpitg, uint3 ntg, uint tiisg, uint sgitg
#define GGML_METAL_CALL args, src0, src1, src2, dst, shmem, tgpig, tpitg, ntg, tiisg, sgitg

#define QK4_0 32
#define QK4_1 32
#define QK8_0 32

typedef struct {
    half    d;
    uint8_t qs[QK4_0 / 2];
} block_q4_0;

typedef struct {
    half    d;
    half    m;
    uint8_t qs[QK4_1 / 2];
} block_q4_1;

typedef struct {
    half   d;
    int8_t qs[QK8_0];
} block_q8_0;

#define QK5_0 32
#define QK5_1 32
#define QK_K  256

typedef struct {
    half    d;
    uint8_t qh[4];
    uint8_t qs[QK5_0 / 2];
} block_q5_0;

typedef struct {
    half    d;
    half    m;
    uint8_t qh[4];
    uint8_t qs[QK5_1 / 2];
} block_q5_1;

typedef struct {
    uint8_t scales[QK_K / 16];
    uint8_t qs[QK_K / 4];
    half    d;
    half    dmin;
} block_q2_K;

typedef struct {
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[12];
    half    d;
} block_q3_K;

typedef struct {
    half    d;
    half    dmin;
    uint8_t scales[12];
    uint8_t qs[QK_K / 2];
} block_q4_K;

typedef struct {
    half    d;
    half    dmin;
    uint8_t scales[12];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} block_q5_K;

typedef struct {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t  scales[QK_K / 16];
    half    d;
} block_q6_K;

// ggml_type values the kernels dispatch on at run time
#define GGML_METAL_T_F32  0
#define GGML_METAL_T_F16  1
#define GGML_METAL_T_Q4_0 2
#define GGML_METAL_T_Q4_1 3
#define GGML_METAL_T_Q5_0 6
#define GGML_METAL_T_Q5_1 7
#define GGML_METAL_T_Q8_0 8
#define GGML_METAL_T_Q2_K 10
#define GGML_METAL_T_Q3_K 11
#define GGML_METAL_T_Q4_K 12
#define GGML_METAL_T_Q5_K 13
#define GGML_METAL_T_Q6_K 14

// scale (*sc) and min (*mn) of sub-block is (0..7) of a Q4_K/Q5_K block: 6-bit values packed in
// 12 bytes (sub-blocks 0-3 in the low 6 bits of bytes 0-3 / 4-7, sub-blocks 4-7 split over the
// nibbles of bytes 8-11 and the top 2 bits of bytes 0-7)
inline void k_scale_min(int is, device const uint8_t * q, thread int * sc, thread int * mn) {
    if (is < 4) {
        *sc = q[is] & 63;
        *mn = q[is + 4] & 63;
    } else {
        *sc = (q[is + 4] & 0x0f) | ((q[is - 4] >> 6) << 4);
        *mn = (q[is + 4] >> 4) | ((q[is] >> 6) << 4);
    }
}

// element j of a row of type `type` starting at row
inline float load_elem(int type, device const char * row, int64_t j) {
    switch (type) {
    case GGML_METAL_T_F16:
        return (float) ((device const half *) row)[j];
    case GGML_METAL_T_Q4_0: {
        device const block_q4_0 * b = (device const block_q4_0 *) row + j / QK4_0;
        const int k = (int) (j % QK4_0);
        const int q = k < QK4_0 / 2 ? (b->qs[k] & 0x0f) : (b->qs[k - QK4_0 / 2] >> 4);
        return (float) b->d * (float) (q - 8);
    }
    case GGML_METAL_T_Q4_1: {
        device const block_q4_1 * b = (device const block_q4_1 *) row + j / QK4_1;
        const int k = (int) (j % QK4_1);
        const int q = k < QK4_1 / 2 ? (b->qs[k] & 0x0f) : (b->qs[k - QK4_1 / 2] >> 4);
        return (float) b->d * (float) q + (float) b->m;
    }
    case GGML_METAL_T_Q8_0: {
        device const block_q8_0 * b = (device const block_q8_0 *) row + j / QK8_0;
        return (float) b->d * (float) b->qs[j % QK8_0];
    }
    case GGML_METAL_T_Q5_0:
    case GGML_METAL_T_Q5_1: {
        // both: 4-bit low parts as Q4_0/Q4_1, bit k of the 32-bit qh the fifth bit of element k
        const bool q51 = type == GGML_METAL_T_Q5_1;
        device const uint8_t * blk = (device const uint8_t *) row + (j / 32) * (q51 ? sizeof(block_q5_1) : sizeof(block_q5_0));
        device const uint8_t * qh = blk + (q51 ? 4 : 2);
        device const uint8_t * qs = qh + 4;
        const int k = (int) (j % 32);
        const int lo = k < 16 ? (qs[k] & 0x0f) : (qs[k - 16] >> 4);
        const int q = lo | (((qh[k / 8] >> (k % 8)) & 1) << 4);
        const float d = (float) *(device const half *) blk;
        return q51 ? d * (float) q + (float) *(device const half *) (blk + 2) : d * (float) (q - 16);
    }
    case GGML_METAL_T_Q2_K:
    case GGML_METAL_T_Q3_K: {
        // 2 halves of 128, each 4 slices of 32 (2-bit field 2t of byte qs[32n + l]); sub-block
        // 8n + 2t + l/16. Q2_K: scale and min are the nibbles of scales[]; Q3_K: a 6-bit signed
        // scale (low nibble from bytes 0-7, 2 high bits from bytes 8-11) and the high bit
        // (bit 4n + t of hmask[l]) subtracting 4 when clear
        const int64_t ib = j / QK_K;
        const int k = (int) (j % QK_K);
        const int n = k / 128, r = k % 128, t = r / 32, l = r % 32;
        const int is = 8 * n + 2 * t + l / 16;
        if (type == GGML_METAL_T_Q2_K) {
            device const block_q2_K * b = (device const block_q2_K *) row + ib;
            const int q = (b->qs[32 * n + l] >> (2 * t)) & 3;
            const uint8_t sc = b->scales[is];
            return (float) b->d * (float) (sc & 0x0f) * (float) q - (float) b->dmin * (float) (sc >> 4);
        }
        device const block_q3_K * b = (device const block_q3_K *) row + ib;
        const int q = ((b->qs[32 * n + l] >> (2 * t)) & 3) - ((b->hmask[l] >> (4 * n + t)) & 1 ? 0 : 4);
        const int lo = is < 8 ? (b->scales[is % 8] & 0x0f) : (b->scales[is % 8] >> 4);
        const int hi = (b->scales[8 + is % 4] >> (2 * (is / 4))) & 3;
        return (float) b->d * (float) ((lo | (hi << 4)) - 32) * (float) q;
    }
    case GGML_METAL_T_Q4_K:
    case GGML_METAL_T_Q5_K: {
        // 4 chunks of 64: element r of chunk c is the low (r < 32) or high nibble of byte
        // 32c + r%32, sub-block 2c + (r >= 32); Q5_K adds bit (2c + (r >= 32)) of qh[r%32] as 16
        const bool q5 = type == GGML_METAL_T_Q5_K;
        const int64_t ib = j / QK_K;
        const int k = (int) (j % QK_K);
        const int c = k / 64, r = k % 64, l = r % 32, hi = r >= 32 ? 1 : 0;
        device const uint8_t * scales;
        device const uint8_t * qs;
        float d, dmin;
        int h = 0;
        if (q5) {
            device const block_q5_K * b = (device const block_q5_K *) row + ib;
            scales = b->scales;
            qs = b->qs;
            d = (float) b->d;
            dmin = (float) b->dmin;
            h = ((b->qh[l] >> (2 * c + hi)) & 1) << 4;
        } else {
            device const block_q4_K * b = (device const block_q4_K *) row + ib;
            scales = b->scales;
            qs = b->qs;
            d = (float) b->d;
            dmin = (float) b->dmin;
        }
        int sc, mn;
        k_scale_min(2 * c + hi, scales, &sc, &mn);
        const int q = (hi ? (qs[32 * c + l] >> 4) : (qs[32 * c + l] & 0x0f)) + h;
        return d * (float) sc * (float) q - dmin * (float) mn;
    }
    case GGML_METAL_T_Q6_K: {
        // 2 halves of 128, each 4 quarters of 32: quarter t of half n takes the low (t < 2) or
        // high nibble of ql[64n + l + 32(t % 2)], bits 2t.. of qh[32n + l], scale 8n + l/16 + 2t
        device const block_q6_K * b = (device const block_q6_K *) row + j / QK_K;
        const int k = (int) (j % QK_K);
        const int n = k / 128, r = k % 128, t = r / 32, l = r % 32;
        const uint8_t qlb = b->ql[64 * n + l + 32 * (t % 2)];
        const int lo = t < 2 ? (qlb & 0x0f) : (qlb >> 4);
        const int q = (lo | (((b->qh[32 * n + l] >> (2 * t)) & 3) << 4)) - 32;
        return (float) b->d * (float) b->scales[8 * n + l / 16 + 2 * t] * (float) q;
    }
    default:
        return ((device const float *) row)[j];
    }
}

// store v as element j of an F32 or F16 row
inline void store_elem(int type, device char * row, int64_t j, float v) {
    if (type == GGML_METAL_T_F16) {
        ((device half *) row)[j] = (half) v;
    } else {
        ((device float *) row)[j] = v;
    }
}

// sum of v over the threadgroup with SIMD-group reductions: buf holds one float per SIMD group;
// every thread gets the sum
inline float tg_sum_simd(float v, threadgroup float * buf, uint tiisg, uint sgitg, uint nthreads) {
    const uint nsg = (nthreads + 31) / 32;
    v = simd_sum(v);
    threadgroup_barrier(mem_flags::mem_threadgroup); // earlier readers of buf are done
    if (tiisg == 0) {
        buf[sgitg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float r = 0.0f;
    for (uint i = 0; i < nsg; i++) {
        r += buf[i];
    }
    return r;
}

// maximum of v over the threadgroup, as tg_sum_simd
inline float tg_max_simd(float v, threadgroup float * buf, uint tiisg, uint sgitg, uint nthreads) {
    const uint nsg = (nthreads + 31) / 32;
    v = simd_max(v);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tiisg == 0) {
        buf[sgitg] = v;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float r = -INFINITY;
    for (uint i = 0; i < nsg; i++) {
        r = max(r, buf[i]);
    }
    return r;
}

// sum of v over the threadgroup without SIMD-group functions (a tree in threadgroup memory;
// nthreads must be a power of two and buf must hold nthreads floats)
inline float tg_sum_tree(float v, threadgroup float * buf, uint tid, uint nthreads) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    buf[tid] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = nthreads / 2; s > 0; s /= 2) {
        if (tid < s) {
            buf[tid] += buf[tid + s];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    return buf[0];
}
