// ggml_cuda_emu.h - declarations shared by the host (CPU) emulator of the CUDA subset used by
// cuda/*.cu: runtime types, device-side builtins (threadIdx, __syncthreads, __shfl_xor_sync ...)
// and the kernel launcher behind CU_LAUNCH. Included by the emulator's cuda_runtime.h,
// cuda_fp16.h and cublas_v2.h; compiled as C++17 with -DGGML_CUDA_EMU. See cuda/emu/README.md.

#ifndef GGML_CUDA_EMU_H
#define GGML_CUDA_EMU_H

#ifndef __cplusplus
#error "the CUDA emulator headers are C++ only"
#endif

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <math.h>

#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

// ---------------------------------------------------------------------------------------------
// function and variable qualifiers: device code is ordinary host code

#define __global__
#define __device__ __attribute__((unused)) // nvcc drops unused device functions from the host pass
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
// one OS thread runs one block at a time, so a thread_local static is block-shared memory
#define __shared__ static thread_local
#define __constant__

// ---------------------------------------------------------------------------------------------
// runtime types

enum cudaError {
    cudaSuccess                     = 0,
    cudaErrorInvalidValue           = 1,
    cudaErrorMemoryAllocation       = 2,
    cudaErrorInitializationError    = 3,
    cudaErrorInvalidConfiguration   = 9,
    cudaErrorInvalidPitchValue      = 12,
    cudaErrorInvalidDevicePointer   = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorNoDevice               = 100,
    cudaErrorInvalidDevice          = 101,
    cudaErrorInvalidResourceHandle  = 400,
    cudaErrorNotReady               = 600,
    cudaErrorIllegalAddress         = 700,
    cudaErrorLaunchFailure          = 719,
    cudaErrorNotSupported           = 801,
    cudaErrorUnknown                = 999,
};
typedef enum cudaError cudaError_t;

enum cudaMemcpyKind {
    cudaMemcpyHostToHost     = 0,
    cudaMemcpyHostToDevice   = 1,
    cudaMemcpyDeviceToHost   = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault        = 4,
};

enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock       = 1,
    cudaDevAttrMaxBlockDimX             = 2,
    cudaDevAttrMaxBlockDimY             = 3,
    cudaDevAttrMaxBlockDimZ             = 4,
    cudaDevAttrMaxGridDimX              = 5,
    cudaDevAttrMaxGridDimY              = 6,
    cudaDevAttrMaxGridDimZ              = 7,
    cudaDevAttrMaxSharedMemoryPerBlock  = 8,
    cudaDevAttrWarpSize                 = 10,
    cudaDevAttrMultiProcessorCount      = 16,
    cudaDevAttrComputeCapabilityMajor   = 75,
    cudaDevAttrComputeCapabilityMinor   = 76,
};

#define cudaStreamDefault     0x00u
#define cudaStreamNonBlocking 0x01u

typedef struct CUstream_st * cudaStream_t;

struct uint3 {
    unsigned int x, y, z;
};

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{ x, y, z }; }
};

struct cudaDeviceProp {
    char   name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int    regsPerBlock;
    int    warpSize;
    int    maxThreadsPerBlock;
    int    maxThreadsDim[3];
    int    maxGridSize[3];
    int    clockRate;
    size_t totalConstMem;
    int    major;
    int    minor;
    int    multiProcessorCount;
    int    integrated;
    int    canMapHostMemory;
    int    concurrentKernels;
    int    pciBusID;
    int    pciDeviceID;
    int    unifiedAddressing;
    int    memoryBusWidth;
    int    l2CacheSize;
    int    maxThreadsPerMultiProcessor;
    size_t sharedMemPerMultiprocessor;
};

// ---------------------------------------------------------------------------------------------
// emulator internals used by the inline device builtins and the launcher

namespace ggml_cuda_emu {

struct coroutine; // one CUDA thread (launch.cpp)

// per OS thread: the CUDA thread running now (NULL in host code) and its block's coordinates
struct exec_state {
    coroutine * cur;
    const uint3 * thread_idx; // of cur
    uint3 block_idx;
    uint3 block_dim;
    uint3 grid_dim;
};
extern __thread exec_state tls;

[[noreturn]] void not_in_kernel(const char * what);

inline const exec_state & device_state(const char * what) {
    if (tls.cur == nullptr) {
        not_in_kernel(what);
    }
    return tls;
}

// block-wide barrier and warp shuffle (launch.cpp); file/line name the call site
void syncthreads(const char * file, int line);
uint64_t shfl_xor(unsigned mask, uint64_t bits, int size, int lane_mask, int width, const char * file, int line);

// the block's dynamic shared memory (the launch's shmem bytes, followed by a guard page)
void * dynamic_shared();

// ---- kernel launches

struct launch_config {
    dim3 grid;
    dim3 block;
    size_t shmem;
    cudaStream_t stream;
    const char * name;
};

// a queued kernel: its parameters (copied at launch) and a way to run one CUDA thread
struct kernel_base {
    virtual ~kernel_base() {}
    virtual void run_thread() = 0;
    // abort unless every pointer argument is NULL, pinned host memory or device memory of device
    virtual void check_args(int device, const char * name) const = 0;
};

// validates cfg (error -> cudaGetLastError) and queues k on the stream (runtime.cpp)
void launch(const launch_config & cfg, std::unique_ptr<kernel_base> k);

// abort when p (argument `index` of kernel `name`, or its member `.data`) is neither NULL nor
// pinned host memory nor device memory of `device`
void check_pointer_arg(const void * p, int device, const char * name, int index, const char * what);

template <class T, class = void> struct has_data_member : std::false_type {};
template <class T>
struct has_data_member<T, std::void_t<decltype(std::declval<const T &>().data)>>
    : std::is_pointer<decltype(std::declval<const T &>().data)> {};

template <class T> void check_one_arg(const T & v, int device, const char * name, int index) {
    if constexpr (std::is_pointer_v<T>) {
        check_pointer_arg((const void *) v, device, name, index, "");
    } else if constexpr (std::is_class_v<T> && has_data_member<T>::value) {
        // tensor descriptors of this project (cu_t): their data pointer is checked as well
        check_pointer_arg((const void *) v.data, device, name, index, ".data");
    } else {
        (void) v;
        (void) device;
        (void) name;
        (void) index;
    }
}

template <class... P> struct kernel_op final : kernel_base {
    using args_t = std::tuple<std::decay_t<P>...>;
    void (*fn)(P...);
    args_t args;

    kernel_op(void (*f)(P...), std::decay_t<P>... a) : fn(f), args(std::move(a)...) {}

    void run_thread() override {
        // each CUDA thread gets its own copy of the parameters, as on the GPU
        std::apply(fn, args);
    }

    void check_args(int device, const char * name) const override {
        check_all(device, name, std::index_sequence_for<P...>{});
    }

  private:
    template <size_t... I> void check_all(int device, const char * name, std::index_sequence<I...>) const {
        (check_one_arg(std::get<I>(args), device, name, (int) I), ...);
        (void) device;
        (void) name;
    }
};

template <class... P> struct bound_launch {
    launch_config cfg;
    void (*fn)(P...);

    // arguments convert to the kernel's parameter types and are copied now
    void operator()(std::decay_t<P>... a) const {
        launch(cfg, std::unique_ptr<kernel_base>(new kernel_op<P...>(fn, std::move(a)...)));
    }
};

struct launcher {
    launch_config cfg;
    launcher(dim3 grid, dim3 block, size_t shmem, cudaStream_t stream, const char * name)
        : cfg{ grid, block, shmem, stream, name } {}

    template <class... P> bound_launch<P...> bind(void (*kernel)(P...)) const {
        static_assert(!(std::is_reference_v<P> || ...), "kernel parameters must be passed by value");
        static_assert((std::is_trivially_copyable_v<std::decay_t<P>> && ...),
                      "kernel parameters must be trivially copyable");
        static_assert(sizeof(std::tuple<std::decay_t<P>...>) <= 4096, "kernel parameters exceed 4 KiB");
        return bound_launch<P...>{ cfg, kernel };
    }
};

} // namespace ggml_cuda_emu

// ---------------------------------------------------------------------------------------------
// device builtins

#define threadIdx (*::ggml_cuda_emu::device_state("threadIdx").thread_idx)
#define blockIdx  (::ggml_cuda_emu::device_state("blockIdx").block_idx)
#define blockDim  (::ggml_cuda_emu::device_state("blockDim").block_dim)
#define gridDim   (::ggml_cuda_emu::device_state("gridDim").grid_dim)

constexpr int warpSize = 32;

inline void __syncthreads(const char * file = __builtin_FILE(), int line = __builtin_LINE()) {
    ::ggml_cuda_emu::syncthreads(file, line);
}

// full-warp xor shuffle of a value of at most 8 bytes (int, unsigned, float, double, ...)
template <class T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32, const char * file = __builtin_FILE(),
                         int line = __builtin_LINE()) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "__shfl_xor_sync: unsupported type");
    uint64_t bits = 0;
    memcpy(&bits, &var, sizeof(T));
    bits = ::ggml_cuda_emu::shfl_xor(mask, bits, (int) sizeof(T), laneMask, width, file, line);
    T out;
    memcpy(&out, &bits, sizeof(T));
    return out;
}

// IEEE single precision operations rounded to nearest even, never fused (build with
// -ffp-contract=off)
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __frcp_rn(float a) { return 1.0f / a; }
inline float __fsqrt_rn(float a) { return sqrtf(a); }
inline float rsqrtf(float a) { return 1.0f / sqrtf(a); }
inline double rsqrt(double a) { return 1.0 / sqrt(a); }

// CUDA's min/max overloads for mixed arithmetic types: the usual arithmetic conversions
template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> min(A a, B b) {
    using C = std::common_type_t<A, B>;
    if constexpr (std::is_floating_point_v<C>) {
        return fmin((C) a, (C) b);
    } else {
        return (C) a < (C) b ? (C) a : (C) b;
    }
}

template <class A, class B, class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>>>
inline std::common_type_t<A, B> max(A a, B b) {
    using C = std::common_type_t<A, B>;
    if constexpr (std::is_floating_point_v<C>) {
        return fmax((C) a, (C) b);
    } else {
        return (C) a > (C) b ? (C) a : (C) b;
    }
}

#endif // GGML_CUDA_EMU_H
