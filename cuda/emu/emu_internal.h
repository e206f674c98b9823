// emu_internal.h - shared internals of the CUDA emulator (runtime.cpp, launch.cpp, cublas.cpp).

#ifndef GGML_CUDA_EMU_INTERNAL_H
#define GGML_CUDA_EMU_INTERNAL_H

#include "cuda_runtime.h"

#include <deque>
#include <memory>
#include <mutex>
#include <stdarg.h>

namespace ggml_cuda_emu {

constexpr int    MAX_DEVICES       = 16;
constexpr size_t DEVICE_MEMORY     = (size_t) 8 << 30;
constexpr size_t MAX_SHARED_MEMORY = 48 * 1024;

// everything the runtime owns is protected by one (recursive) lock; device work runs under it
std::recursive_mutex & big_lock();

// GGML_CUDA_EMU_STREAMS=threads: set once at initialisation
extern bool g_threaded_streams;
// after an API call, in threaded mode: sometimes let another host thread (a stream worker, the
// caller's other threads) run first, so that interleavings between calls vary
void perturb_after_call();

// the lock of one API call (or of a worker's operation)
struct guard {
    std::recursive_mutex & mu;
    explicit guard(std::recursive_mutex & m) : mu(m) {
        mu.lock();
    }
    ~guard() {
        mu.unlock();
        if (g_threaded_streams) {
            perturb_after_call();
        }
    }
    guard(const guard &) = delete;
    guard & operator=(const guard &) = delete;
};

// an operation queued on a stream
struct op {
    uint64_t seq = 0;
    virtual ~op() {}
    virtual void exec() = 0;
};

void enqueue(cudaStream_t s, std::unique_ptr<op> o); // s resolved and valid
void flush_stream_of(cudaStream_t s);                 // run everything queued on s (and what it waits for)

// resolve a user stream handle (NULL: the current device's default stream); NULL when invalid
cudaStream_t resolve_stream(cudaStream_t s);
int stream_device(cudaStream_t s);
cudaStream_t default_stream(int device);

int device_count();
int current_device();

// last error of this host thread (also returned by the failing call); msg goes to stderr
cudaError_t fail(cudaError_t e, const char * fmt, ...) __attribute__((format(printf, 2, 3)));

// abort the process with a message naming what the emulator was doing
[[noreturn]] void fatal(const char * fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] void vfatal(const char * fmt, va_list ap);

// ---- memory

// where a range lies: a live allocation of `device`, pinned host memory, or other host memory
enum mem_kind { MEM_HOST, MEM_PINNED, MEM_DEVICE, MEM_BAD };
struct mem_span {
    mem_kind kind;
    int device;       // MEM_DEVICE
    const char * why; // MEM_BAD
};
// [p, p + n) (n may be 0: p may then be one past the end of an allocation)
mem_span classify(const void * p, size_t n);

// make exactly the devices in `mask` (bit d: device d) accessible to the running operation
void open_devices(uint32_t mask);

// what the emulator is executing now (for fault messages); NULL name: host code
struct activity {
    const char * name;  // kernel or operation name
    bool kernel;
    int device;
};
extern __thread activity cur_activity;
void describe_thread(char * buf, size_t n); // "block (x,y,z) thread (x,y,z)" of the running CUDA thread

// SIGSEGV reporting (installed by the runtime when the process has no handler)
void ensure_fault_handler_on_this_thread();
bool fault_handler_installed();

// ---- kernels (launch.cpp)

struct kernel_launch {
    launch_config cfg;
    int device;
    std::unique_ptr<kernel_base> k;
};
void run_kernel(const kernel_launch & l);

// address ranges owned by the kernel executor, for fault messages
const char * executor_region(uintptr_t addr);

} // namespace ggml_cuda_emu

#endif // GGML_CUDA_EMU_INTERNAL_H
