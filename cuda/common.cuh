// common.cuh - shared pieces of the CUDA backend: the per-backend context, tensor descriptors
// passed to kernels by value, element load/store helpers, launch helpers, error checks and the
// op entry points of every kernel family (one family per .cu file).
//
// Kernels address tensors through (data, ne[4], nb[4]) exactly like the CPU kernels: element
// (i0, i1, i2, i3) lives at data + i0*nb[0] + i1*nb[1] + i2*nb[2] + i3*nb[3], so any strides
// (views, permutations, transposes) work without special cases.

#ifndef GGML_CUDA_COMMON_CUH
#define GGML_CUDA_COMMON_CUH

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cublas_v2.h>

#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <mutex>

#include "ggml.h"
#include "ggml-backend-impl.h"
#include "ggml-impl.h"
#include "ggml-quants.h"

#define GGML_CU_MAX_DEVICES 16

// ---------------------------------------------------------------------------------------------
// errors: a failed CUDA/cuBLAS call is reported (message with file:line) and the caller returns
// false; nothing aborts the process.

void ggml_cu_report(const char * what, const char * msg, const char * file, int line);

#define CU_OK(call) ggml_cu_ok((call), #call, __FILE__, __LINE__)
#define CUBLAS_OK(call) ggml_cu_blas_ok((call), #call, __FILE__, __LINE__)

static inline bool ggml_cu_ok(cudaError_t err, const char * what, const char * file, int line) {
    if (err == cudaSuccess) {
        return true;
    }
    ggml_cu_report(what, cudaGetErrorString(err), file, line);
    return false;
}

static inline bool ggml_cu_blas_ok(cublasStatus_t st, const char * what, const char * file, int line) {
    if (st == CUBLAS_STATUS_SUCCESS) {
        return true;
    }
    char msg[64];
    snprintf(msg, sizeof(msg), "cuBLAS status %d", (int) st);
    ggml_cu_report(what, msg, file, line);
    return false;
}

// after a kernel launch: launch configuration errors show up here
#define CU_LAUNCH_OK() CU_OK(cudaGetLastError())

// kernel launches are written CU_LAUNCH(kernel, grid, block, shmem, stream)(args...): with nvcc
// that is kernel<<<grid, block, shmem, stream>>>(args...); with the host emulator (cuda/emu,
// GGML_CUDA_EMU, make test-cuda-emu) the same launch is queued on the emulated stream.
// CU_DYNAMIC_SHARED(type, name) declares the block's dynamic shared memory as `type * name`;
// CU_UNROLL before a loop with a constant trip count asks nvcc to unroll it.
#ifdef GGML_CUDA_EMU
#define CU_LAUNCH(kernel, grid, block, shmem, stream) \
    ggml_cuda_emu::launcher((grid), (block), (shmem), (stream), #kernel).bind(kernel)
#define CU_DYNAMIC_SHARED(type, name) type * name = (type *) ggml_cuda_emu::dynamic_shared()
#define CU_UNROLL
#else
#define CU_LAUNCH(kernel, grid, block, shmem, stream) kernel<<<(grid), (block), (shmem), (stream)>>>
#define CU_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#define CU_UNROLL _Pragma("unroll")
#endif

// ---------------------------------------------------------------------------------------------
// backend context

#define GGML_CU_N_SCRATCH 4

struct ggml_cu_ctx {
    int            device;
    char           name[16];
    cudaStream_t   stream;
    cublasHandle_t cublas;
    // grow-only device scratch buffers, reused by the ops (one op runs at a time on the stream;
    // growing frees the old buffer, which synchronises the device first)
    void *         scratch[GGML_CU_N_SCRATCH];
    size_t         scratch_size[GGML_CU_N_SCRATCH];
};

// device scratch slot `slot` of at least `size` bytes (NULL after reporting on failure)
void * ggml_cu_scratch(ggml_cu_ctx & ctx, int slot, size_t size);

// ---------------------------------------------------------------------------------------------
// tensor descriptors

struct cu_t {
    char *  data;
    int     type;
    int64_t ne[4];
    int64_t nb[4];
};

static inline cu_t cu_make(const ggml_tensor * t) {
    cu_t d;
    d.data = (char *) t->data;
    d.type = (int) t->type;
    for (int i = 0; i < 4; i++) {
        d.ne[i] = t->ne[i];
        d.nb[i] = (int64_t) t->nb[i];
    }
    return d;
}

static inline int64_t cu_nelements(const cu_t & t) {
    return t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3];
}

static inline int64_t cu_nrows(const cu_t & t) {
    return t.ne[1] * t.ne[2] * t.ne[3];
}

// flat index (i0 fastest) -> coordinates
__device__ __forceinline__ void cu_unravel(int64_t idx, const int64_t * ne, int64_t & i0, int64_t & i1,
                                           int64_t & i2, int64_t & i3) {
    i0 = idx % ne[0];
    idx /= ne[0];
    i1 = idx % ne[1];
    idx /= ne[1];
    i2 = idx % ne[2];
    i3 = idx / ne[2];
}

// the same in the index type I: uint32_t when the element count is at most INT32_MAX (then every
// ne[i] fits too), int64_t otherwise. 64-bit division is a long instruction sequence on a GPU,
// 32-bit division a few instructions: element-wise kernels are templated on I and launched with
// uint32_t where the sizes allow (cu_small_index).
template <typename I>
__device__ __forceinline__ void cu_unravel_t(int64_t idx, const int64_t * ne, int64_t & i0, int64_t & i1,
                                             int64_t & i2, int64_t & i3) {
    I x = (I) idx;
    const I n0 = (I) ne[0], n1 = (I) ne[1], n2 = (I) ne[2];
    i0 = (int64_t) (x % n0);
    x /= n0;
    i1 = (int64_t) (x % n1);
    x /= n1;
    i2 = (int64_t) (x % n2);
    i3 = (int64_t) (x / n2);
}

// i mod n in the index type I (0 <= i, 0 < n, both below 2^31 when I is uint32_t)
template <typename I> __device__ __forceinline__ int64_t cu_mod_t(int64_t i, int64_t n) {
    return (int64_t) ((I) i % (I) n);
}

static inline bool cu_small_index(int64_t n) {
    return n <= INT32_MAX;
}

__device__ __forceinline__ char * cu_ptr(const cu_t & t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return t.data + i0 * t.nb[0] + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// row ir (flat over ne1, ne2, ne3) -> pointer to its first element
__device__ __forceinline__ char * cu_row(const cu_t & t, int64_t ir) {
    const int64_t i1 = ir % t.ne[1];
    const int64_t i2 = (ir / t.ne[1]) % t.ne[2];
    const int64_t i3 = ir / (t.ne[1] * t.ne[2]);
    return t.data + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// F32 / F16 element access (the only float types the element-wise kernels accept)
__device__ __forceinline__ float cu_load(const char * p, int type) {
    if (type == GGML_TYPE_F16) {
        return __half2float(*(const __half *) p);
    }
    return *(const float *) p;
}

__device__ __forceinline__ void cu_store(char * p, int type, float v) {
    if (type == GGML_TYPE_F16) {
        *(__half *) p = __float2half_rn(v);
    } else {
        *(float *) p = v;
    }
}

// fp16 scales of the block structs (ggml_fp16_t fields). ggml.h makes ggml_fp16_t uint16_t on
// x86, __fp16 on ARM C/C++ compilers and the class `half` when nvcc compiles for an ARM host
// (Grace, Jetson): an assignment or cast between ggml_fp16_t and an integer would convert the
// *value* there (cvt.rzi.u16.f16), so the scales are only ever moved as their 16 bits.
static_assert(sizeof(ggml_fp16_t) == 2, "ggml_fp16_t must be 16 bits");
static_assert(sizeof(__half_raw) == 2 && sizeof(__half) == 2, "__half must be 16 bits");

__device__ __forceinline__ uint16_t cu_fp16_bits(const ggml_fp16_t & h) {
    uint16_t bits;
    memcpy(&bits, &h, sizeof(bits));
    return bits;
}

__device__ __forceinline__ float cu_h2f(const ggml_fp16_t & h) {
    __half_raw r;
    r.x = cu_fp16_bits(h);
    return __half2float(__half(r));
}

__device__ __forceinline__ ggml_fp16_t cu_f2h(float f) {
    const __half_raw r = __half_raw(__float2half_rn(f));
    const uint16_t bits = r.x;
    ggml_fp16_t h;
    memcpy(&h, &bits, sizeof(h));
    return h;
}

static inline bool cu_is_float(enum ggml_type t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16;
}

static inline bool cu_same_shape(const ggml_tensor * a, const ggml_tensor * b) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        if (a->ne[i] != b->ne[i]) {
            return false;
        }
    }
    return true;
}

// 1D launch over n items with blocks of `threads`; grid.x is capped and kernels loop
// (grid-stride) so any n fits
#define CU_THREADS 256

static inline unsigned cu_blocks(int64_t n, int threads = CU_THREADS) {
    int64_t b = (n + threads - 1) / threads;
    if (b < 1) {
        b = 1;
    }
    if (b > 65535LL * 16) {
        b = 65535LL * 16;
    }
    return (unsigned) b;
}

#define CU_GRID_STRIDE(idx, n) \
    for (int64_t idx = (int64_t) blockIdx.x * blockDim.x + threadIdx.x; idx < (n); \
         idx += (int64_t) gridDim.x * blockDim.x)

// rows loop for one-block-per-row kernels (grid.x capped at 65535 * 16)
static inline unsigned cu_row_blocks(int64_t nrows) {
    return cu_blocks(nrows, 1);
}

// block-wide sum of v (blockDim.x a multiple of 32, at most 1024); every thread gets the sum
__device__ __forceinline__ float cu_warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

__device__ __forceinline__ double cu_warp_sum_d(double v) {
    for (int o = 16; o > 0; o >>= 1) {
        v += __shfl_xor_sync(0xffffffffu, v, o);
    }
    return v;
}

__device__ __forceinline__ double cu_block_sum_d(double v, double * shared32) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    v = cu_warp_sum_d(v);
    __syncthreads(); // shared32 may still be read from a previous call
    if (lane == 0) {
        shared32[warp] = v;
    }
    __syncthreads();
    double s = 0.0;
    for (int w = 0; w < nwarps; w++) {
        s += shared32[w];
    }
    return s;
}

__device__ __forceinline__ float cu_block_max(float v, float * shared32) {
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    __syncthreads();
    if (lane == 0) {
        shared32[warp] = v;
    }
    __syncthreads();
    float m = -INFINITY;
    for (int w = 0; w < nwarps; w++) {
        m = fmaxf(m, shared32[w]);
    }
    return m;
}

// ---------------------------------------------------------------------------------------------
// op entry points: *_supported is exactly what the kernel handles; the op function runs it on
// ctx.stream and returns false (after reporting) only on a CUDA error.

#define GGML_CU_FAMILY(name) \
    bool ggml_cu_##name##_supported(const ggml_tensor * dst); \
    bool ggml_cu_##name(ggml_cu_ctx & ctx, ggml_tensor * dst);

// one entry point per family file (file names: doc/op-families.md)
GGML_CU_FAMILY(unary)       // UNARY, SQR, SQRT, LOG, SCALE, CLAMP, LEAKY_RELU  (unary.cu)
GGML_CU_FAMILY(binary)      // ADD, SUB, MUL, DIV, ADD1                         (binary.cu)
GGML_CU_FAMILY(acc)         // ACC, SET                                         (acc.cu)
GGML_CU_FAMILY(norm)        // NORM, RMS_NORM, GROUP_NORM                       (norm.cu)
GGML_CU_FAMILY(softmax)     // SOFT_MAX                                         (softmax.cu)
GGML_CU_FAMILY(diag)        // DIAG_MASK_INF, DIAG_MASK_ZERO                    (diag.cu)
GGML_CU_FAMILY(rope)        // ROPE, ALIBI                                      (rope.cu)
GGML_CU_FAMILY(get_rows)    // GET_ROWS                                         (get-rows.cu)
GGML_CU_FAMILY(cpy)         // DUP, CPY, CONT                                   (cpy.cu)
GGML_CU_FAMILY(mul_mat)     // MUL_MAT                                          (mul-mat.cu)
GGML_CU_FAMILY(mul_mat_id)  // MUL_MAT_ID                                       (mul-mat-id.cu)
GGML_CU_FAMILY(im2col)      // IM2COL                                           (conv.cu)
GGML_CU_FAMILY(argsort)     // ARGSORT                                          (argsort.cu)
GGML_CU_FAMILY(reduce)      // SUM_ROWS, SUM, MEAN                              (reduce.cu)
GGML_CU_FAMILY(upscale)     // UPSCALE                                          (upscale.cu)
GGML_CU_FAMILY(pad)         // PAD                                              (pad.cu)
GGML_CU_FAMILY(concat)      // CONCAT                                           (concat.cu)
GGML_CU_FAMILY(repeat)      // REPEAT                                           (repeat.cu)

#undef GGML_CU_FAMILY

// ---------------------------------------------------------------------------------------------
// shared by mul-mat.cu and mul-mat-id.cu

// is `type` a weight type the matrix kernels can dequantize (32-element chunks)?
bool ggml_cu_mm_weight_type(enum ggml_type type);

// dst rows [0, m) x columns [0, n) of one 2D product, all contiguous on ctx's device:
//   y[i1 * ldy + i0] = sum_k W(row i0)[k] * x[i1 * k_len + k]    (x is F32, dense)
// W rows are `w_row_bytes` apart, of type wtype. Uses the mat-vec kernels for n <= 8, else
// dequantize (or take as is) to F16/F32 and cuBLAS.
bool ggml_cu_mm_2d(ggml_cu_ctx & ctx, enum ggml_type wtype, const char * w, size_t w_row_bytes, int64_t m,
                   const float * x, int64_t n, int64_t k_len, float * y, int64_t ldy, bool prec_f32);

// convert any F32/F16 tensor view into a dense F32 array (on ctx.stream)
bool ggml_cu_to_f32_dense(ggml_cu_ctx & ctx, const cu_t & src, float * out);

// the split buffer's per-device copies of a tensor (NULL when t is not in a split buffer)
struct ggml_cu_split_extra {
    void *  data[GGML_CU_MAX_DEVICES]; // rows [row0[d], row1[d]) on device d (NULL: none)
    int64_t row0[GGML_CU_MAX_DEVICES];
    int64_t row1[GGML_CU_MAX_DEVICES];
    size_t  bytes[GGML_CU_MAX_DEVICES]; // allocation size of data[d]
};

bool ggml_cu_is_split_buffer(ggml_backend_buffer_t buffer);

// is t (or the tensor it views) stored in a split buffer?
bool ggml_cu_tensor_is_split(const ggml_tensor * t);

// a context (stream, cuBLAS handle, scratch) for work on another device than the backend's,
// created on first use and kept for the life of the process (NULL after reporting on failure).
// Used by MUL_MAT on split weights. Backends on several host threads share it: hold
// ggml_cu_device_helper_lock(device) from before its first use until its stream has finished
// with its scratch buffers.
ggml_cu_ctx * ggml_cu_device_helper(int device);
std::mutex & ggml_cu_device_helper_lock(int device);

// the device count (0 when the runtime finds none)
int ggml_cu_device_count(void);

#endif // GGML_CUDA_COMMON_CUH
