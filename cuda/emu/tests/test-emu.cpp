// test-emu.cpp - self-tests of the host CUDA emulator (cuda/emu): results of kernels, barriers,
// shuffles, copies, streams and cuBLAS, and one test per strictness check proving that it fires
// (checks that end the process run in a forked child whose signal and stderr are inspected).
// Runs with 2 emulated devices. Exit status 0 when everything passes.

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cublas_v2.h>

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#define LAUNCH(kernel, grid, block, shmem, stream) \
    ggml_cuda_emu::launcher((grid), (block), (shmem), (stream), #kernel).bind(kernel)
#define CU_DYN(type, name) type * name = (type *) ggml_cuda_emu::dynamic_shared()

static int n_pass, n_fail;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (cond) {                                                              \
            n_pass++;                                                            \
        } else {                                                                 \
            n_fail++;                                                            \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);      \
        }                                                                        \
    } while (0)

#define CHECK_EQ_ERR(call, want)                                                                        \
    do {                                                                                                \
        const cudaError_t e_ = (call);                                                                  \
        if (e_ == (want)) {                                                                             \
            n_pass++;                                                                                   \
        } else {                                                                                        \
            n_fail++;                                                                                   \
            fprintf(stderr, "FAIL %s:%d: %s returned %s, want %s\n", __FILE__, __LINE__, #call,          \
                    cudaGetErrorName(e_), cudaGetErrorName(want));                                      \
        }                                                                                               \
    } while (0)

#define OK(call) CHECK_EQ_ERR(call, cudaSuccess)

// runs fn in a child process: it must die by `sig` with `expect` in its stderr
static void expect_death(const char * what, void (*fn)(), int sig, const char * expect) {
    int fds[2];
    if (pipe(fds) != 0) {
        n_fail++;
        return;
    }
    fflush(stdout);
    fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = { 0, 0 };
        setrlimit(RLIMIT_CORE, &rl);
        close(fds[0]);
        dup2(fds[1], 2);
        fn();
        fprintf(stderr, "(returned normally)\n");
        fflush(stderr);
        _exit(0);
    }
    close(fds[1]);
    std::string out;
    char buf[4096];
    ssize_t r;
    while ((r = read(fds[0], buf, sizeof(buf))) > 0) {
        out.append(buf, (size_t) r);
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    const bool died = WIFSIGNALED(status) && WTERMSIG(status) == sig;
    const bool msg = out.find(expect) != std::string::npos;
    if (died && msg) {
        n_pass++;
        // the first line of the report, to show what the user sees
        const size_t p = out.find("ggml_cuda_emu:");
        std::string line = p == std::string::npos ? out : out.substr(p);
        line = line.substr(0, line.find('\n'));
        printf("  death ok  %-34s %s\n", what, line.c_str());
    } else {
        n_fail++;
        fprintf(stderr, "FAIL death test %s: status 0x%x (want signal %d), message \"%s\" %s in:\n%s\n", what, status,
                sig, expect, msg ? "found" : "NOT found", out.c_str());
    }
}

// ---------------------------------------------------------------------------------------------
// kernels

__global__ void k_iota(float * p, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i] = (float) i;
    }
}

__global__ void k_write_at(float * p, int i, float v) {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        p[i] = v;
    }
}

__global__ void k_flag(int * flag) {
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0 && blockIdx.x == 0 && blockIdx.y == 0 &&
        blockIdx.z == 0) {
        *flag += 1;
    }
}

__global__ void k_nop() {}

struct hidden_ptr {
    float * p; // not named .data: not checked at launch
};

__global__ void k_hidden_read(hidden_ptr h, float * out) {
    if (threadIdx.x == 0) {
        *out = h.p[0];
    }
}

// 2D/3D thread indices: out[lin] = packed (x, y, z) of the thread and block
__global__ void k_ids(int * out) {
    const unsigned lin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    out[blk * blockDim.x * blockDim.y * blockDim.z + lin] =
        (int) (threadIdx.x | (threadIdx.y << 8) | (threadIdx.z << 16) | (blk << 24));
}

// block sum through shared memory and barriers: out[block] = sum of in over the block's range
__global__ void k_block_sum(const float * in, float * out) {
    __shared__ float buf[1024];
    const unsigned t = threadIdx.x;
    buf[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            buf[t] += buf[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        out[blockIdx.x] = buf[0];
    }
}

// threads that exit early do not block a barrier
__global__ void k_early_exit(int * out) {
    __shared__ int cnt;
    if (threadIdx.x == 0) {
        cnt = 0;
    }
    __syncthreads();
    if (threadIdx.x >= 10) {
        return;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        cnt = 7;
    }
    __syncthreads();
    out[threadIdx.x] = cnt;
}

__global__ void k_divergent_barrier(int * out) {
    if (threadIdx.x % 2 == 0) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    out[threadIdx.x] = 1;
}

// warp sums of float, int and double; width-16 xor shuffles
__global__ void k_shfl(float * f, int * iv, double * d, int * w16) {
    const unsigned t = threadIdx.x;
    float vf = (float) t;
    int vi = (int) t * 3;
    double vd = (double) t * 0.5;
    for (int o = 16; o > 0; o >>= 1) {
        vf += __shfl_xor_sync(0xffffffffu, vf, o);
        vi += __shfl_xor_sync(0xffffffffu, vi, o);
        vd += __shfl_xor_sync(0xffffffffu, vd, o);
    }
    f[t] = vf;
    iv[t] = vi;
    d[t] = vd;
    // laneMask 16 with width 16: lanes 0..15 would read the later group -> own value;
    // lanes 16..31 read lanes 0..15
    w16[t] = __shfl_xor_sync(0xffffffffu, (int) t, 16, 16);
}

__global__ void k_shfl_partial_mask(float * out) {
    out[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, 1.0f, 1);
}

__global__ void k_shfl_any(float * out) {
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (float) threadIdx.x, 1);
}

__global__ void k_shfl_exited(float * out) {
    if (threadIdx.x % 32 >= 16) {
        return;
    }
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (float) threadIdx.x, 1);
}

__global__ void k_shfl_vs_barrier(float * out) {
    if (threadIdx.x < 16) {
        out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.0f, 1);
    } else {
        __syncthreads();
    }
}

__global__ void k_dyn_shared(float * out, int n_write) {
    CU_DYN(float, sh);
    for (int i = (int) threadIdx.x; i < n_write; i += (int) blockDim.x) {
        sh[i] = (float) i;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float s = 0.0f;
        for (int i = 0; i < n_write; i++) {
            s += sh[i];
        }
        out[blockIdx.x] = s;
    }
}

// ---------------------------------------------------------------------------------------------
// devices, errors

static void test_devices() {
    int n = 0;
    OK(cudaGetDeviceCount(&n));
    CHECK(n == 2);
    cudaDeviceProp prop;
    OK(cudaGetDeviceProperties(&prop, 1));
    CHECK(strcmp(prop.name, "ggml-go CUDA emulator") == 0);
    CHECK(prop.major == 8 && prop.minor == 9 && prop.warpSize == 32);
    int major = 0, minor = 0;
    OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    OK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
    CHECK(major == 8 && minor == 9);
    CHECK_EQ_ERR(cudaGetDeviceProperties(&prop, 2), cudaErrorInvalidDevice);
    CHECK_EQ_ERR(cudaSetDevice(2), cudaErrorInvalidDevice);
    CHECK_EQ_ERR(cudaSetDevice(-1), cudaErrorInvalidDevice);
    // the last error is kept until read, and reading clears it
    CHECK_EQ_ERR(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    CHECK_EQ_ERR(cudaGetLastError(), cudaErrorInvalidDevice);
    CHECK_EQ_ERR(cudaGetLastError(), cudaSuccess);
    // the current device is per host thread
    OK(cudaSetDevice(1));
    int other = -1;
    std::thread t([&other] { cudaGetDevice(&other); });
    t.join();
    CHECK(other == 0);
    int cur = -1;
    OK(cudaGetDevice(&cur));
    CHECK(cur == 1);
    OK(cudaSetDevice(0));
    // every error code has a string
    const cudaError_t codes[] = { cudaSuccess, cudaErrorInvalidValue, cudaErrorMemoryAllocation,
                                  cudaErrorInvalidConfiguration, cudaErrorInvalidPitchValue,
                                  cudaErrorInvalidMemcpyDirection, cudaErrorNoDevice, cudaErrorInvalidDevice,
                                  cudaErrorInvalidResourceHandle, cudaErrorNotReady, cudaErrorIllegalAddress,
                                  cudaErrorLaunchFailure };
    for (cudaError_t c : codes) {
        CHECK(cudaGetErrorString(c) != nullptr && strcmp(cudaGetErrorString(c), "unrecognized error code") != 0);
    }
}

// ---------------------------------------------------------------------------------------------
// memory

static void test_memory() {
    size_t free0 = 0, total = 0;
    OK(cudaMemGetInfo(&free0, &total));
    CHECK(total == ((size_t) 8 << 30) && free0 <= total);
    void * p = nullptr;
    OK(cudaMalloc(&p, 1000));
    CHECK(p != nullptr && ((uintptr_t) p % 256) == 0);
    size_t free1 = 0;
    OK(cudaMemGetInfo(&free1, &total));
    CHECK(free0 - free1 == 1024);
    // fresh device memory is not zero (0xff: NaN)
    float probe[4];
    OK(cudaMemcpy(probe, p, sizeof(probe), cudaMemcpyDeviceToHost));
    CHECK(isnan(probe[0]) && isnan(probe[3]));
    void * big = nullptr;
    CHECK_EQ_ERR(cudaMalloc(&big, (size_t) 9 << 30), cudaErrorMemoryAllocation);
    CHECK_EQ_ERR(cudaGetLastError(), cudaErrorMemoryAllocation);
    CHECK_EQ_ERR(cudaFree((char *) p + 256), cudaErrorInvalidValue);
    void * h = malloc(16);
    CHECK_EQ_ERR(cudaFree(h), cudaErrorInvalidValue);
    free(h);
    OK(cudaFree(p));
    CHECK_EQ_ERR(cudaFree(p), cudaErrorInvalidValue); // double free
    OK(cudaMemGetInfo(&free1, &total));
    CHECK(free1 == free0);
    OK(cudaFree(nullptr));
    // allocations are per device
    OK(cudaSetDevice(1));
    OK(cudaMalloc(&p, 4096));
    size_t f0 = 0, f1 = 0;
    OK(cudaMemGetInfo(&f1, &total));
    OK(cudaSetDevice(0));
    OK(cudaMemGetInfo(&f0, &total));
    CHECK(f0 == free0 && f1 == total - 4096);
    OK(cudaFree(p));
    // pinned host memory is host memory
    float * pin = nullptr;
    OK(cudaMallocHost(&pin, 64 * sizeof(float)));
    pin[0] = 1.0f;
    CHECK_EQ_ERR(cudaFreeHost(pin + 1), cudaErrorInvalidValue);
    OK(cudaFreeHost(pin));
}

static float * g_dev; // for the death tests

static void die_host_read() {
    float v = g_dev[3]; // host code reading device memory
    printf("%f\n", (double) v);
}

static void die_host_write_freed() {
    void * p = nullptr;
    cudaMalloc(&p, 4096);
    cudaFree(p);
    ((volatile char *) p)[0] = 1;
}

static void die_kernel_past_end() {
    float * p = nullptr;
    cudaMalloc(&p, 1024 * sizeof(float));
    LAUNCH(k_write_at, 1, 32, 0, 0)(p, 1024, 1.0f);
    cudaDeviceSynchronize();
}

static void die_kernel_before_start() {
    float * p = nullptr;
    cudaMalloc(&p, 1000 * sizeof(float));
    LAUNCH(k_write_at, 1, 32, 0, 0)(p, -3000, 1.0f);
    cudaDeviceSynchronize();
}

static void die_kernel_other_device() {
    float * p1 = nullptr;
    float * out = nullptr;
    cudaSetDevice(1);
    cudaMalloc(&p1, 256);
    cudaSetDevice(0);
    cudaMalloc(&out, 256);
    LAUNCH(k_hidden_read, 1, 32, 0, 0)(hidden_ptr{ p1 }, out);
    cudaDeviceSynchronize();
}

static void die_kernel_arg_other_device() {
    float * p1 = nullptr;
    cudaSetDevice(1);
    cudaMalloc(&p1, 256);
    cudaSetDevice(0);
    LAUNCH(k_iota, 1, 32, 0, 0)(p1, 32);
}

static void die_kernel_arg_host() {
    std::vector<float> host(32);
    LAUNCH(k_iota, 1, 32, 0, 0)(host.data(), 32);
}

static void die_kernel_arg_freed() {
    float * p = nullptr;
    cudaMalloc(&p, 256);
    cudaFree(p);
    LAUNCH(k_iota, 1, 32, 0, 0)(p, 32);
}

static void die_thread_idx_in_host() {
    printf("%u\n", threadIdx.x);
}

static void test_memory_faults() {
    OK(cudaMalloc(&g_dev, 4096));
    expect_death("host reads device memory", die_host_read, SIGSEGV, "accessed by host code");
    expect_death("host writes freed memory", die_host_write_freed, SIGSEGV, "use after cudaFree");
    expect_death("kernel writes past the end", die_kernel_past_end, SIGSEGV, "past the end of allocation");
    expect_death("kernel writes before the start", die_kernel_before_start, SIGSEGV, "before allocation");
    expect_death("kernel reads other device", die_kernel_other_device, SIGSEGV,
                 "device memory of device 1, allocation");
    expect_death("kernel arg: other device", die_kernel_arg_other_device, SIGABRT, "is device memory of device 1");
    expect_death("kernel arg: host memory", die_kernel_arg_host, SIGABRT, "is host memory");
    expect_death("kernel arg: freed memory", die_kernel_arg_freed, SIGABRT, "use after cudaFree");
    expect_death("threadIdx in host code", die_thread_idx_in_host, SIGABRT, "threadIdx used outside a kernel");
    OK(cudaFree(g_dev));
}

// ---------------------------------------------------------------------------------------------
// launches

static void test_launch_validation() {
    int * flag = nullptr;
    OK(cudaMallocHost(&flag, sizeof(int))); // pinned: kernels may use it
    *flag = 0;
    struct cfg {
        dim3 grid, block;
        size_t shmem;
        bool ok;
    };
    const cfg cases[] = {
        { dim3(0), dim3(32), 0, false },
        { dim3(1), dim3(0), 0, false },
        { dim3(1), dim3(1025), 0, false },
        { dim3(1), dim3(1, 1025), 0, false },
        { dim3(1), dim3(1, 1, 65), 0, false },
        { dim3(1), dim3(64, 32), 0, false }, // 2048 threads
        { dim3(1, 65536), dim3(32), 0, false },
        { dim3(1, 1, 65536), dim3(32), 0, false },
        { dim3(1, 0), dim3(32), 0, false },
        { dim3(1), dim3(32), 48 * 1024 + 1, false },
        { dim3(1), dim3(1024), 0, true },
        { dim3(1), dim3(32, 32), 0, true },
        { dim3(1), dim3(1, 1, 64), 0, true },
        { dim3(2, 3, 4), dim3(4, 2, 2), 48 * 1024, true },
        { dim3(1, 65535), dim3(1), 0, true },
    };
    for (const cfg & c : cases) {
        *flag = 0;
        LAUNCH(k_flag, c.grid, c.block, c.shmem, 0)(flag);
        const cudaError_t e = cudaGetLastError();
        OK(cudaDeviceSynchronize());
        if (c.ok) {
            CHECK(e == cudaSuccess && *flag == 1);
        } else {
            CHECK(e == cudaErrorInvalidConfiguration && *flag == 0); // not run
        }
        CHECK(cudaGetLastError() == cudaSuccess);
    }
    // int expressions convert like in CUDA: -1 becomes a huge unsigned grid
    LAUNCH(k_flag, -1, 32, 0, 0)(flag);
    CHECK_EQ_ERR(cudaGetLastError(), cudaErrorInvalidConfiguration);
    // 2D/3D thread and block indices
    int * ids = nullptr;
    const int nt = 4 * 3 * 2, nb = 2 * 2 * 2;
    OK(cudaMalloc(&ids, nt * nb * sizeof(int)));
    LAUNCH(k_ids, dim3(2, 2, 2), dim3(4, 3, 2), 0, 0)(ids);
    OK(cudaGetLastError());
    std::vector<int> h(nt * nb);
    OK(cudaMemcpy(h.data(), ids, h.size() * sizeof(int), cudaMemcpyDeviceToHost));
    bool good = true;
    for (int b = 0; b < nb; b++) {
        for (int z = 0; z < 2; z++) {
            for (int y = 0; y < 3; y++) {
                for (int x = 0; x < 4; x++) {
                    const int lin = x + 4 * (y + 3 * z);
                    good = good && h[b * nt + lin] == (x | (y << 8) | (z << 16) | (b << 24));
                }
            }
        }
    }
    CHECK(good);
    OK(cudaFree(ids));
    // a kernel launch must use a stream of the current device
    cudaStream_t s1 = nullptr;
    OK(cudaSetDevice(1));
    OK(cudaStreamCreate(&s1));
    OK(cudaSetDevice(0));
    LAUNCH(k_nop, 1, 32, 0, s1)();
    CHECK_EQ_ERR(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    OK(cudaStreamDestroy(s1));
    LAUNCH(k_nop, 1, 32, 0, s1)(); // destroyed
    CHECK_EQ_ERR(cudaGetLastError(), cudaErrorInvalidResourceHandle);
    OK(cudaFreeHost(flag));
}

// ---------------------------------------------------------------------------------------------
// streams and copies

static void test_streams() {
    const int n = 1000;
    float * d = nullptr;
    OK(cudaMalloc(&d, n * sizeof(float)));
    cudaStream_t s = nullptr;
    OK(cudaStreamCreateWithFlags(&s, cudaStreamDefault));
    // queued: nothing runs before the host synchronises
    std::vector<float> h(n, -1.0f);
    LAUNCH(k_iota, (n + 255) / 256, 256, 0, s)(d, n);
    OK(cudaGetLastError());
    OK(cudaMemcpyAsync(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost, s));
    CHECK(h[5] == -1.0f); // stale until synchronised
    OK(cudaStreamSynchronize(s));
    CHECK(h[5] == 5.0f && h[n - 1] == (float) (n - 1));
    // host -> device from pageable memory: the source is read at enqueue
    std::vector<float> src(n, 1.0f);
    OK(cudaMemcpyAsync(d, src.data(), n * sizeof(float), cudaMemcpyHostToDevice, s));
    src.assign(n, 2.0f);
    OK(cudaStreamSynchronize(s));
    OK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(h[0] == 1.0f && h[n - 1] == 1.0f);
    // ... from pinned memory: read when the copy executes (a real DMA)
    float * pin = nullptr;
    OK(cudaMallocHost(&pin, n * sizeof(float)));
    for (int i = 0; i < n; i++) pin[i] = 3.0f;
    OK(cudaMemcpyAsync(d, pin, n * sizeof(float), cudaMemcpyHostToDevice, s));
    for (int i = 0; i < n; i++) pin[i] = 4.0f;
    OK(cudaStreamSynchronize(s));
    OK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(h[0] == 4.0f);
    // synchronising another stream does not run this one
    cudaStream_t s2 = nullptr;
    OK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    h.assign(n, -1.0f);
    OK(cudaMemcpyAsync(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost, s2));
    OK(cudaStreamSynchronize(s));
    CHECK(h[0] == -1.0f);
    OK(cudaDeviceSynchronize());
    CHECK(h[0] == 4.0f);
    // legacy default stream: a NULL-stream operation waits for earlier work of blocking streams
    LAUNCH(k_iota, (n + 255) / 256, 256, 0, s)(d, n);
    h.assign(n, -1.0f);
    OK(cudaMemcpyAsync(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost, 0));
    OK(cudaStreamSynchronize(0));
    CHECK(h[7] == 7.0f);
    // synchronous calls flush everything first
    LAUNCH(k_write_at, 1, 32, 0, s)(d, 0, 42.0f);
    OK(cudaMemcpy(h.data(), d, sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(h[0] == 42.0f);
    // destroying a stream runs its work
    LAUNCH(k_write_at, 1, 32, 0, s2)(d, 1, 43.0f);
    h.assign(n, -1.0f);
    OK(cudaMemcpyAsync(h.data(), d, 2 * sizeof(float), cudaMemcpyDeviceToHost, s2));
    OK(cudaStreamDestroy(s2));
    CHECK(h[1] == 43.0f);
    CHECK_EQ_ERR(cudaStreamSynchronize(s2), cudaErrorInvalidResourceHandle);
    CHECK_EQ_ERR(cudaStreamDestroy(s2), cudaErrorInvalidResourceHandle);
    CHECK_EQ_ERR(cudaMemcpyAsync(h.data(), d, 4, cudaMemcpyDeviceToHost, s2), cudaErrorInvalidResourceHandle);
    OK(cudaStreamDestroy(s));
    OK(cudaFreeHost(pin));
    OK(cudaFree(d));
}

static void test_copies() {
    char * d = nullptr;
    char * d1 = nullptr;
    OK(cudaMalloc(&d, 1000));
    std::vector<char> h(2000, 7);
    CHECK_EQ_ERR(cudaMemcpy(h.data(), h.data() + 1000, 100, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CHECK_EQ_ERR(cudaMemcpy(d, h.data(), 100, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CHECK_EQ_ERR(cudaMemcpy(d, d + 500, 100, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CHECK_EQ_ERR(cudaMemcpy(d, h.data(), 1001, cudaMemcpyHostToDevice), cudaErrorInvalidValue);   // past the end
    CHECK_EQ_ERR(cudaMemcpy(h.data(), d + 990, 11, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
    CHECK_EQ_ERR(cudaMemcpy(d, h.data(), 10, (cudaMemcpyKind) 7), cudaErrorInvalidMemcpyDirection);
    CHECK_EQ_ERR(cudaMemcpy(d, nullptr, 10, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
    CHECK_EQ_ERR(cudaMemset(h.data(), 0, 10), cudaErrorInvalidValue);
    CHECK_EQ_ERR(cudaMemset(d + 1, 0, 1000), cudaErrorInvalidValue);
    OK(cudaMemcpy(d, h.data(), 1000, cudaMemcpyHostToDevice)); // exactly the allocation
    OK(cudaMemset(d + 10, 3, 5));
    OK(cudaMemcpy(d + 500, d, 100, cudaMemcpyDeviceToDevice));
    std::vector<char> back(1000, 0);
    OK(cudaMemcpy(back.data(), d, 1000, cudaMemcpyDefault)); // kind inferred
    CHECK(back[0] == 7 && back[10] == 3 && back[14] == 3 && back[15] == 7 && back[510] == 3);
    OK(cudaMemcpy(back.data(), h.data(), 10, cudaMemcpyHostToHost));
    // 2D copies
    CHECK_EQ_ERR(cudaMemcpy2DAsync(d, 10, d + 500, 20, 16, 4, cudaMemcpyDeviceToDevice, 0), cudaErrorInvalidPitchValue);
    CHECK_EQ_ERR(cudaMemcpy2DAsync(d, 100, d + 500, 100, 100, 6, cudaMemcpyDeviceToDevice, 0), cudaErrorInvalidValue);
    std::vector<char> rows(64);
    for (int i = 0; i < 64; i++) rows[i] = (char) i;
    OK(cudaMemcpy2DAsync(d, 100, rows.data(), 16, 16, 4, cudaMemcpyHostToDevice, 0)); // 4 rows of 16 into pitch 100
    OK(cudaDeviceSynchronize());
    OK(cudaMemcpy(back.data(), d, 1000, cudaMemcpyDeviceToHost));
    CHECK(back[0] == 0 && back[15] == 15 && back[16] == 7 && back[100] == 16 && back[315] == 63);
    // peer copies
    OK(cudaSetDevice(1));
    OK(cudaMalloc(&d1, 1000));
    OK(cudaSetDevice(0));
    OK(cudaMemcpyPeer(d1, 1, d, 0, 1000));
    CHECK_EQ_ERR(cudaMemcpyPeer(d1, 0, d, 0, 1000), cudaErrorInvalidValue); // d1 is on device 1
    CHECK_EQ_ERR(cudaMemcpyPeer(d1, 5, d, 0, 1000), cudaErrorInvalidDevice);
    OK(cudaMemset(d, 0, 1000));
    OK(cudaMemcpyPeerAsync(d, 0, d1, 1, 1000, 0));
    OK(cudaStreamSynchronize(0));
    OK(cudaMemcpy(back.data(), d, 1000, cudaMemcpyDeviceToHost));
    CHECK(back[100] == 16 && back[15] == 15);
    // cross-device cudaMemcpyDefault (unified addressing)
    OK(cudaMemset(d, 1, 1000));
    OK(cudaMemcpy(d1, d, 1000, cudaMemcpyDefault));
    OK(cudaMemcpy(back.data(), d1, 1000, cudaMemcpyDefault));
    CHECK(back[999] == 1);
    OK(cudaFree(d1));
    OK(cudaFree(d));
}

// ---------------------------------------------------------------------------------------------
// barriers and shuffles

static void die_divergent_barrier() {
    int * out = nullptr;
    cudaMalloc(&out, 64 * sizeof(int));
    LAUNCH(k_divergent_barrier, 1, 64, 0, 0)(out);
    cudaDeviceSynchronize();
}

static void die_shfl_mask() {
    float * out = nullptr;
    cudaMalloc(&out, 64 * sizeof(float));
    LAUNCH(k_shfl_partial_mask, 1, 32, 0, 0)(out);
    cudaDeviceSynchronize();
}

static void die_shfl_partial_warp() {
    float * out = nullptr;
    cudaMalloc(&out, 64 * sizeof(float));
    LAUNCH(k_shfl_any, 1, 48, 0, 0)(out);
    cudaDeviceSynchronize();
}

static void die_shfl_exited() {
    float * out = nullptr;
    cudaMalloc(&out, 64 * sizeof(float));
    LAUNCH(k_shfl_exited, 1, 64, 0, 0)(out);
    cudaDeviceSynchronize();
}

static void die_shfl_vs_barrier() {
    float * out = nullptr;
    cudaMalloc(&out, 64 * sizeof(float));
    LAUNCH(k_shfl_vs_barrier, 1, 32, 0, 0)(out);
    cudaDeviceSynchronize();
}

static void test_barriers_shuffles() {
    const int nb = 5, bs = 512;
    float * in = nullptr;
    float * out = nullptr;
    OK(cudaMalloc(&in, nb * bs * sizeof(float)));
    OK(cudaMalloc(&out, nb * sizeof(float)));
    std::vector<float> h(nb * bs);
    for (int i = 0; i < nb * bs; i++) h[i] = (float) (i % 7);
    OK(cudaMemcpy(in, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    LAUNCH(k_block_sum, nb, bs, 0, 0)(in, out);
    OK(cudaGetLastError());
    std::vector<float> r(nb);
    OK(cudaMemcpy(r.data(), out, nb * sizeof(float), cudaMemcpyDeviceToHost));
    bool good = true;
    for (int b = 0; b < nb; b++) {
        double s = 0;
        for (int i = 0; i < bs; i++) s += h[b * bs + i];
        good = good && r[b] == (float) s;
    }
    CHECK(good);

    int * iv = nullptr;
    OK(cudaMalloc(&iv, 64 * sizeof(int)));
    LAUNCH(k_early_exit, 1, 64, 0, 0)(iv);
    std::vector<int> hi(64, 0);
    OK(cudaMemcpy(hi.data(), iv, 10 * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(hi[0] == 7 && hi[9] == 7);

    const int nt = 64;
    float * f = nullptr;
    double * d = nullptr;
    int * w16 = nullptr;
    OK(cudaMalloc(&f, nt * sizeof(float)));
    OK(cudaMalloc(&d, nt * sizeof(double)));
    OK(cudaMalloc(&w16, nt * sizeof(int)));
    LAUNCH(k_shfl, 1, nt, 0, 0)(f, iv, d, w16);
    OK(cudaGetLastError());
    std::vector<float> hf(nt);
    std::vector<double> hd(nt);
    std::vector<int> hw(nt);
    OK(cudaMemcpy(hf.data(), f, nt * sizeof(float), cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(hi.data(), iv, nt * sizeof(int), cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(hd.data(), d, nt * sizeof(double), cudaMemcpyDeviceToHost));
    OK(cudaMemcpy(hw.data(), w16, nt * sizeof(int), cudaMemcpyDeviceToHost));
    good = true;
    for (int t = 0; t < nt; t++) {
        const int w0 = t / 32 * 32;
        double s = 0;
        for (int l = 0; l < 32; l++) s += w0 + l;
        good = good && hf[t] == (float) s && hi[t] == (int) (3 * s) && hd[t] == 0.5 * s;
        const int lane = t % 32;
        good = good && hw[t] == (lane < 16 ? t : t - 16);
    }
    CHECK(good);
    OK(cudaFree(w16));
    OK(cudaFree(d));
    OK(cudaFree(f));
    OK(cudaFree(iv));
    OK(cudaFree(out));
    OK(cudaFree(in));

    expect_death("divergent __syncthreads", die_divergent_barrier, SIGABRT, "divergent __syncthreads");
    expect_death("shuffle with a partial mask", die_shfl_mask, SIGABRT, "mask 0x0000ffff");
    expect_death("shuffle in a 16-lane warp", die_shfl_partial_warp, SIGABRT, "has only 16 lane(s)");
    expect_death("shuffle with exited lanes", die_shfl_exited, SIGABRT, "lane(s) of the warp have exited");
    expect_death("shuffle vs barrier deadlock", die_shfl_vs_barrier, SIGABRT, "deadlock");
}

// ---------------------------------------------------------------------------------------------
// dynamic shared memory

static void die_dyn_overrun() {
    float * out = nullptr;
    cudaMalloc(&out, 256);
    LAUNCH(k_dyn_shared, 1, 32, 16 * sizeof(float), 0)(out, 17);
    cudaDeviceSynchronize();
}

static void test_dynamic_shared() {
    float * out = nullptr;
    OK(cudaMalloc(&out, 4 * sizeof(float)));
    LAUNCH(k_dyn_shared, 4, 64, 1000 * sizeof(float), 0)(out, 1000);
    OK(cudaGetLastError());
    float h[4];
    OK(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
    CHECK(h[0] == 499500.0f && h[3] == 499500.0f);
    OK(cudaFree(out));
    expect_death("dynamic shared overrun", die_dyn_overrun, SIGSEGV, "dynamic shared memory");
}

// ---------------------------------------------------------------------------------------------
// fp16

// the compiler's binary16 type, the reference for the conversions (g++ for aarch64 has no
// _Float16 in C++ before GCC 13; its __fp16 is IEEE binary16)
#if defined(__aarch64__)
typedef __fp16 ref_f16;
#else
typedef _Float16 ref_f16;
#endif

static void test_fp16() {
    // CUDA's integral conversions of half convert values (they do not copy bits)
    {
        const __half h = (unsigned short) 0x3c00; // 15360.0, not 1.0
        CHECK(__half2float(h) == 15360.0f);
        const __half one = __float2half_rn(1.75f);
        CHECK((unsigned short) one == 1);         // 1.75 truncated, not the bits 0x3f00
        CHECK((int) __float2half_rn(-2.5f) == -2);
    }
    // every half converts to float and back exactly
    bool good = true;
    for (uint32_t b = 0; b < 65536; b++) {
        __half_raw r;
        r.x = (unsigned short) b;
        const float f = __half2float(__half(r));
        ref_f16 hb;
        memcpy(&hb, &r.x, 2);
        const float fr = (float) hb;
        if (isnan(fr)) {
            good = good && isnan(f);
            continue;
        }
        good = good && memcmp(&f, &fr, 4) == 0;
        const unsigned short back = __half_raw(__float2half_rn(f)).x;
        good = good && back == r.x;
    }
    CHECK(good);
    // float -> half against the compiler's binary16 (round to nearest even), on a dense sample
    good = true;
    uint64_t bad = 0;
    for (uint64_t x = 0; x < 0x100000000ull; x += 997) {
        const uint32_t bits = (uint32_t) x;
        float f;
        memcpy(&f, &bits, 4);
        const ref_f16 r = (ref_f16) f;
        unsigned short rb;
        memcpy(&rb, &r, 2);
        const unsigned short mb = __half_raw(__float2half_rn(f)).x;
        if (isnan(f)) {
            good = good && (mb & 0x7c00) == 0x7c00 && (mb & 0x3ff) != 0 && (mb & 0x8000) == (rb & 0x8000);
        } else if (mb != rb) {
            good = false;
            if (bad++ < 5) {
                fprintf(stderr, "  f16 mismatch: %a -> 0x%04x, want 0x%04x\n", (double) f, mb, rb);
            }
        }
    }
    CHECK(good);
    // boundaries: ties to even, subnormals, overflow
    auto h = [](float f) { return __half_raw(__float2half_rn(f)).x; };
    CHECK(h(65504.0f) == 0x7bff);
    CHECK(h(65519.99f) == 0x7bff);
    CHECK(h(65520.0f) == 0x7c00);
    CHECK(h(-INFINITY) == 0xfc00);
    CHECK(h(ldexpf(1.0f, -24)) == 0x0001);
    CHECK(h(ldexpf(1.0f, -25)) == 0x0000);              // tie -> even (0)
    CHECK(h(ldexpf(1.5f, -25)) == 0x0001);
    CHECK(h(ldexpf(3.0f, -25)) == 0x0002);              // 1.5 units: tie -> even (2)
    CHECK(h(1.0f + ldexpf(1.0f, -11)) == 0x3c00);        // tie -> even
    CHECK(h(1.0f + ldexpf(3.0f, -11)) == 0x3c02);
    CHECK(h(ldexpf(1.0f, -14) * 0.99999994f) == 0x0400); // rounds up into the normals
    CHECK(h(-0.0f) == 0x8000);
}

// ---------------------------------------------------------------------------------------------
// cuBLAS

static double ref_elem(const std::vector<float> & A, const std::vector<float> & B, bool ta, bool tb, int lda, int ldb,
                       int i, int j, int k) {
    double s = 0;
    for (int l = 0; l < k; l++) {
        const float a = ta ? A[(size_t) i * lda + l] : A[(size_t) l * lda + i];
        const float b = tb ? B[(size_t) l * ldb + j] : B[(size_t) j * ldb + l];
        s += (double) a * b;
    }
    return s;
}

static void die_gemm_host_operand() {
    cublasHandle_t h;
    cublasCreate(&h);
    std::vector<float> A(16), B(16);
    float * C = nullptr;
    cudaMalloc(&C, 64);
    const float one = 1.0f, zero = 0.0f;
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, A.data(), CUDA_R_32F, 4, B.data(), CUDA_R_32F, 4, &zero,
                 C, CUDA_R_32F, 4, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

static void test_cublas() {
    cublasHandle_t h = nullptr;
    CHECK(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
    cudaStream_t s = nullptr;
    OK(cudaStreamCreate(&s));
    CHECK(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
    const int m = 7, n = 5, k = 9, ld = 12;
    std::vector<float> A((size_t) ld * ld), B((size_t) ld * ld), Cinit((size_t) ld * n);
    for (size_t i = 0; i < A.size(); i++) A[i] = (float) ((i * 37) % 17) / 8.0f - 1.0f;
    for (size_t i = 0; i < B.size(); i++) B[i] = (float) ((i * 11) % 13) / 4.0f - 1.5f;
    for (size_t i = 0; i < Cinit.size(); i++) Cinit[i] = (float) (i % 5);
    float * dA = nullptr;
    float * dB = nullptr;
    float * dC = nullptr;
    OK(cudaMalloc(&dA, A.size() * sizeof(float)));
    OK(cudaMalloc(&dB, B.size() * sizeof(float)));
    OK(cudaMalloc(&dC, Cinit.size() * sizeof(float)));
    OK(cudaMemcpy(dA, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice));
    OK(cudaMemcpy(dB, B.data(), B.size() * sizeof(float), cudaMemcpyHostToDevice));
    const float alpha = 1.5f, beta = 0.5f;
    bool good = true;
    for (int ta = 0; ta < 2; ta++) {
        for (int tb = 0; tb < 2; tb++) {
            OK(cudaMemcpy(dC, Cinit.data(), Cinit.size() * sizeof(float), cudaMemcpyHostToDevice));
            const cublasStatus_t st =
                cublasGemmEx(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &alpha, dA,
                             CUDA_R_32F, ld, dB, CUDA_R_32F, ld, &beta, dC, CUDA_R_32F, ld, CUBLAS_COMPUTE_32F,
                             CUBLAS_GEMM_DEFAULT);
            CHECK(st == CUBLAS_STATUS_SUCCESS);
            std::vector<float> C(Cinit.size(), -7.0f);
            OK(cudaMemcpyAsync(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
            CHECK(C[0] == -7.0f); // queued on the handle's stream
            OK(cudaStreamSynchronize(s));
            for (int j = 0; j < n; j++) {
                for (int i = 0; i < m; i++) {
                    const double want = alpha * ref_elem(A, B, ta, tb, ld, ld, i, j, k) + beta * Cinit[j * ld + i];
                    good = good && fabs(C[j * ld + i] - want) < 1e-4;
                }
                for (int i = m; i < ld; i++) {
                    good = good && C[j * ld + i] == Cinit[j * ld + i]; // rows past m untouched
                }
            }
        }
    }
    CHECK(good);
    // beta == 0: C is not read (NaN stays out)
    OK(cudaMemset(dC, 0xff, Cinit.size() * sizeof(float)));
    const float zero = 0.0f, one = 1.0f;
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, CUDA_R_32F, ld, dB, CUDA_R_32F, ld, &zero, dC,
                       CUDA_R_32F, ld, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    std::vector<float> C(Cinit.size());
    OK(cudaMemcpy(C.data(), dC, C.size() * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(!isnan(C[0]) && !isnan(C[(n - 1) * ld + m - 1]) && isnan(C[m]));
    // TF32: inputs keep 10 mantissa bits (1 + 2^-12 -> 1)
    const float a1[1] = { 1.0f + ldexpf(1.0f, -12) }, b1[1] = { 3.0f };
    OK(cudaMemcpy(dA, a1, 4, cudaMemcpyHostToDevice));
    OK(cudaMemcpy(dB, b1, 4, cudaMemcpyHostToDevice));
    float r32 = 0, rtf = 0;
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, dA, CUDA_R_32F, 1, dB, CUDA_R_32F, 1, &zero, dC,
                       CUDA_R_32F, 1, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    OK(cudaMemcpy(&r32, dC, 4, cudaMemcpyDeviceToHost));
    CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &one, dA, CUDA_R_32F, 1, dB, CUDA_R_32F, 1, &zero, dC,
                       CUDA_R_32F, 1, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    OK(cudaMemcpy(&rtf, dC, 4, cudaMemcpyDeviceToHost));
    CHECK(r32 == 3.0f * (1.0f + ldexpf(1.0f, -12)) && rtf == 3.0f);
    // F16 operands, F32 output
    __half ha[6], hb[3];
    for (int i = 0; i < 6; i++) ha[i] = __float2half_rn((float) (i + 1) * 0.25f);
    for (int i = 0; i < 3; i++) hb[i] = __float2half_rn((float) (i + 1));
    OK(cudaMemcpy(dA, ha, sizeof(ha), cudaMemcpyHostToDevice));
    OK(cudaMemcpy(dB, hb, sizeof(hb), cudaMemcpyHostToDevice));
    // A stored 3 x 2 (k x m, lda 3), op T: C (2 x 1) = A^T b
    CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 2, 1, 3, &one, dA, CUDA_R_16F, 3, dB, CUDA_R_16F, 3, &zero, dC,
                       CUDA_R_32F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    float c2[2];
    OK(cudaMemcpy(c2, dC, sizeof(c2), cudaMemcpyDeviceToHost));
    CHECK(c2[0] == 0.25f * 1 + 0.5f * 2 + 0.75f * 3 && c2[1] == 1.0f * 1 + 1.25f * 2 + 1.5f * 3);
    // argument checks
    auto gemm = [&](cublasOperation_t ta, int mm, int nn, int kk, int lda, int ldb, int ldc, cudaDataType at,
                    cudaDataType bt, cudaDataType ct, cublasComputeType_t cp) {
        return cublasGemmEx(h, ta, CUBLAS_OP_N, mm, nn, kk, &one, dA, at, lda, dB, bt, ldb, &zero, dC, ct, ldc, cp,
                            CUBLAS_GEMM_DEFAULT);
    };
    CHECK(gemm(CUBLAS_OP_N, 4, 2, 3, 3, 3, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F) ==
          CUBLAS_STATUS_INVALID_VALUE); // lda < m
    CHECK(gemm(CUBLAS_OP_T, 4, 2, 3, 3, 3, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F) ==
          CUBLAS_STATUS_SUCCESS); // op T: lda >= k
    CHECK(gemm(CUBLAS_OP_N, 4, 2, 3, 4, 2, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F) ==
          CUBLAS_STATUS_INVALID_VALUE); // ldb < k
    CHECK(gemm(CUBLAS_OP_N, 4, 2, 3, 4, 3, 3, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F) ==
          CUBLAS_STATUS_INVALID_VALUE); // ldc < m
    CHECK(gemm(CUBLAS_OP_N, -1, 2, 3, 4, 3, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(gemm((cublasOperation_t) 5, 4, 2, 3, 4, 3, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F) ==
          CUBLAS_STATUS_INVALID_VALUE);
    CHECK(gemm(CUBLAS_OP_N, 4, 2, 3, 4, 3, 4, CUDA_R_32F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F) ==
          CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK(gemm(CUBLAS_OP_N, 4, 2, 3, 4, 3, 4, CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32) ==
          CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK(gemm(CUBLAS_OP_N, 4, 2, 3, 4, 3, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_16F) ==
          CUBLAS_STATUS_NOT_SUPPORTED);
    CHECK(gemm(CUBLAS_OP_N, 0, 2, 3, 1, 3, 1, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F) ==
          CUBLAS_STATUS_SUCCESS); // empty
    // strided batch: 3 products of 2 x 2 matrices, B shared (stride 0), C slices 5 apart
    {
        const float a3[12] = { 1, 2, 3, 4, 5, 6, 7, 8, -1, -2, -3, -4 }, b2[4] = { 1, 0, 1, 1 };
        OK(cudaMemcpy(dA, a3, sizeof(a3), cudaMemcpyHostToDevice));
        OK(cudaMemcpy(dB, b2, sizeof(b2), cudaMemcpyHostToDevice));
        OK(cudaMemset(dC, 0xff, 15 * sizeof(float)));
        CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, dA, CUDA_R_32F, 2, 4, dB,
                                         CUDA_R_32F, 2, 0, &zero, dC, CUDA_R_32F, 2, 5, 3, CUBLAS_COMPUTE_32F,
                                         CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
        float c15[15];
        OK(cudaMemcpy(c15, dC, sizeof(c15), cudaMemcpyDeviceToHost));
        bool bgood = true;
        for (int b = 0; b < 3; b++) {
            const float * a = a3 + 4 * b; // column-major 2 x 2: C = A * [[1, 1], [0, 1]]
            const float want[4] = { a[0], a[1], a[0] + a[2], a[1] + a[3] };
            for (int i = 0; i < 4; i++) bgood = bgood && c15[5 * b + i] == want[i];
            bgood = bgood && (b == 2 || isnan(c15[5 * b + 4])); // the gap is not written
        }
        CHECK(bgood);
        // results that overlap (strideC 3 < 4 elements) and a negative count are rejected
        CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, dA, CUDA_R_32F, 2, 4, dB,
                                         CUDA_R_32F, 2, 0, &zero, dC, CUDA_R_32F, 2, 3, 3, CUBLAS_COMPUTE_32F,
                                         CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);
        CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, dA, CUDA_R_32F, 2, 4, dB,
                                         CUDA_R_32F, 2, 0, &zero, dC, CUDA_R_32F, 2, 5, -1, CUBLAS_COMPUTE_32F,
                                         CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_INVALID_VALUE);
    }
    // the handle belongs to device 0
    OK(cudaSetDevice(1));
    CHECK(gemm(CUBLAS_OP_N, 4, 2, 3, 4, 3, 4, CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F) ==
          CUBLAS_STATUS_EXECUTION_FAILED);
    OK(cudaSetDevice(0));
    OK(cudaDeviceSynchronize());
    CHECK(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS);
    CHECK(cublasDestroy(h) == CUBLAS_STATUS_NOT_INITIALIZED);
    OK(cudaStreamDestroy(s));
    OK(cudaFree(dC));
    OK(cudaFree(dB));
    OK(cudaFree(dA));
    expect_death("cuBLAS with a host operand", die_gemm_host_operand, SIGABRT, "is not device memory of device 0");
}

// ---------------------------------------------------------------------------------------------
// performance

__global__ void k_axpy(const float * x, float * y, float a, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}

__global__ void k_reduce_rows(const float * x, float * out, int ne0) {
    __shared__ float red[32];
    float s = 0.0f;
    for (int i = (int) threadIdx.x; i < ne0; i += (int) blockDim.x) {
        s += x[(size_t) blockIdx.x * ne0 + i];
    }
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync(0xffffffffu, s, o);
    }
    __syncthreads();
    if (threadIdx.x % 32 == 0) {
        red[threadIdx.x / 32] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = 0.0f;
        for (unsigned w = 0; w < blockDim.x / 32; w++) t += red[w];
        out[blockIdx.x] = t;
    }
}

static void test_performance() {
    const int n = 1 << 20;
    float * x = nullptr;
    float * y = nullptr;
    OK(cudaMalloc(&x, n * sizeof(float)));
    OK(cudaMalloc(&y, n * sizeof(float)));
    OK(cudaMemset(x, 0, n * sizeof(float)));
    OK(cudaMemset(y, 0, n * sizeof(float)));
    auto t0 = std::chrono::steady_clock::now();
    LAUNCH(k_axpy, n / 256, 256, 0, 0)(x, y, 2.0f, n);
    OK(cudaDeviceSynchronize());
    auto t1 = std::chrono::steady_clock::now();
    const double s1 = std::chrono::duration<double>(t1 - t0).count();
    // 1M threads with 2 barriers and 5 shuffle rounds each
    const int rows = 4096, ne0 = 256;
    LAUNCH(k_reduce_rows, rows, 256, 0, 0)(x, y, ne0);
    OK(cudaDeviceSynchronize());
    auto t2 = std::chrono::steady_clock::now();
    const double s2 = std::chrono::duration<double>(t2 - t1).count();
    printf("  perf: 1M threads, no barriers: %.3f s (%.0f ns/thread); 1M threads, 2 barriers + 5 shuffles: %.3f s "
           "(%.0f ns/thread)\n",
           s1, s1 * 1e9 / n, s2, s2 * 1e9 / (rows * 256.0));
    CHECK(s1 < 1.0);
    OK(cudaFree(y));
    OK(cudaFree(x));
}

int main() {
    setenv("GGML_CUDA_EMU_DEVICES", "2", 1);
    setvbuf(stdout, nullptr, _IONBF, 0);
    const struct {
        const char * name;
        void (*fn)();
    } tests[] = {
        { "devices", test_devices },
        { "memory", test_memory },
        { "memory faults", test_memory_faults },
        { "launch validation", test_launch_validation },
        { "streams", test_streams },
        { "copies", test_copies },
        { "barriers and shuffles", test_barriers_shuffles },
        { "dynamic shared memory", test_dynamic_shared },
        { "fp16", test_fp16 },
        { "cublas", test_cublas },
        { "performance", test_performance },
    };
    for (const auto & t : tests) {
        const int f0 = n_fail;
        cudaGetLastError(); // errors provoked by the previous test
        t.fn();
        printf("%s %s\n", n_fail == f0 ? "ok  " : "FAIL", t.name);
    }
    printf("test-emu: %d passed, %d failed\n", n_pass, n_fail);
    return n_fail == 0 ? 0 : 1;
}
