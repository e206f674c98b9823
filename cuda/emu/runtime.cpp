// runtime.cpp - the emulated CUDA runtime: devices, device memory (PROT_NONE outside device
// operations, guard pages after every allocation), pinned host memory, streams (operations are
// queued and run only when the host synchronises; with GGML_CUDA_EMU_STREAMS=threads every
// stream also has a host thread that runs its work as soon as it is queued), copies, memsets,
// kernel launch validation, errors, and the SIGSEGV reporter.

#include "emu_internal.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <thread>
#include <set>
#include <vector>

struct CUstream_st {
    int      device;
    unsigned flags;
    bool     alive;
    bool     is_default;
    std::deque<std::unique_ptr<ggml_cuda_emu::op>> q;
};

namespace ggml_cuda_emu {

__thread activity cur_activity;

namespace {

struct alloc_t {
    uintptr_t map_base, map_end; // whole mapping: front guard, data pages, back guard
    uintptr_t open_lo, open_hi;  // the data pages (accessible while the device is open)
    uintptr_t ptr;               // what cudaMalloc returned
    size_t    size;              // requested bytes
    size_t    charged;           // bytes counted against the device memory
    int       device;
    bool      freed;
};

struct device_t {
    CUstream_st *                  default_stream = nullptr;
    std::vector<CUstream_st *>     streams; // default stream first
    size_t                         used = 0;
    std::map<uintptr_t, alloc_t *> allocs; // live, by ptr
};

struct state_t {
    int                            ndev = 1;
    device_t                       dev[MAX_DEVICES];
    std::map<uintptr_t, alloc_t *> maps; // live and quarantined (freed) allocations, by map_base
    std::deque<alloc_t *>          quarantine;
    size_t                         quarantine_bytes = 0;
    std::map<uintptr_t, size_t>    pinned;
    std::set<CUstream_st *>        all_streams; // never freed: stale handles stay recognisable
    uint64_t                       seq = 0;
    uint32_t                       open_mask = 0;
    size_t                         page = 4096;
    bool                           quiet = false;
    bool                           threaded = false; // GGML_CUDA_EMU_STREAMS=threads
};

state_t * g = nullptr;

__thread int         tls_device = 0;
__thread cudaError_t tls_last_error = cudaSuccess;

constexpr size_t QUARANTINE_MAX_BYTES = (size_t) 4 << 30; // address space kept PROT_NONE after cudaFree
constexpr size_t QUARANTINE_MAX_COUNT = 4096;
constexpr size_t GUARD_BYTES          = 64 * 1024; // PROT_NONE before and after every allocation
constexpr size_t POISON_MAX_BYTES     = (size_t) 256 << 20; // new allocations are filled with 0xff up to this

bool             g_handler = false;
__thread bool    tls_altstack = false;

void install_fault_handler();

size_t round_up(size_t v, size_t a) {
    return (v + a - 1) / a * a;
}

// GGML_CUDA_EMU_STREAMS=threads: woken when work is queued or a stream is destroyed (never
// destroyed itself: detached workers may still wait on it at exit)
std::condition_variable_any & work_cv() {
    static std::condition_variable_any * cv = new std::condition_variable_any;
    return *cv;
}

void run_front(CUstream_st * s);
void finish_device_work();

// a stream's own host thread (threaded mode): runs the stream's work as soon as it is queued,
// concurrently with the host code that queued it (operations still run one at a time, under
// the runtime lock, and the synchronising calls still run what is left themselves)
void stream_worker(CUstream_st * s) {
    std::unique_lock<std::recursive_mutex> lk(big_lock());
    for (;;) {
        work_cv().wait(lk, [s] { return !s->q.empty() || !s->alive; });
        if (s->q.empty()) {
            return; // destroyed
        }
        run_front(s);
        finish_device_work();
    }
}

CUstream_st * make_stream(int device, unsigned flags, bool is_default) {
    CUstream_st * s = new CUstream_st;
    s->device = device;
    s->flags = flags;
    s->alive = true;
    s->is_default = is_default;
    g->all_streams.insert(s);
    g->dev[device].streams.push_back(s);
    if (g->threaded) {
        std::thread(stream_worker, s).detach();
    }
    return s;
}

void init_locked() {
    if (g != nullptr) {
        return;
    }
    g = new state_t;
    g->page = (size_t) sysconf(_SC_PAGESIZE);
    const char * q = getenv("GGML_CUDA_EMU_QUIET");
    g->quiet = q != nullptr && q[0] != '\0' && strcmp(q, "0") != 0;
    int n = 1;
    const char * e = getenv("GGML_CUDA_EMU_DEVICES");
    if (e != nullptr && e[0] != '\0') {
        char * end = nullptr;
        const long v = strtol(e, &end, 10);
        if (end == e || *end != '\0' || v < 0) {
            fprintf(stderr, "ggml_cuda_emu: GGML_CUDA_EMU_DEVICES=%s is not a device count, using 1\n", e);
        } else if (v > MAX_DEVICES) {
            fprintf(stderr, "ggml_cuda_emu: GGML_CUDA_EMU_DEVICES=%s: at most %d devices\n", e, MAX_DEVICES);
            n = MAX_DEVICES;
        } else {
            n = (int) v;
        }
    }
    g->ndev = n;
    const char * st = getenv("GGML_CUDA_EMU_STREAMS");
    if (st != nullptr && strcmp(st, "threads") == 0) {
        g->threaded = true;
        g_threaded_streams = true;
    } else if (st != nullptr && st[0] != '\0' && strcmp(st, "sync") != 0) {
        fprintf(stderr, "ggml_cuda_emu: GGML_CUDA_EMU_STREAMS=%s: expected sync or threads, using sync\n", st);
    }
    for (int d = 0; d < n; d++) {
        g->dev[d].default_stream = make_stream(d, cudaStreamDefault, true);
    }
    install_fault_handler();
}

// ---- queues

void run_front(CUstream_st * s);

// legacy default stream semantics: an operation of the NULL stream waits for the earlier work of
// every blocking stream of its device, and an operation of a blocking stream for the earlier work
// of the NULL stream
void run_dependencies(CUstream_st * s, uint64_t seq) {
    device_t & d = g->dev[s->device];
    if (s->is_default) {
        for (CUstream_st * t : d.streams) {
            if (t == s || (t->flags & cudaStreamNonBlocking) != 0) {
                continue;
            }
            while (!t->q.empty() && t->q.front()->seq < seq) {
                run_front(t);
            }
        }
    } else if ((s->flags & cudaStreamNonBlocking) == 0) {
        CUstream_st * ds = d.default_stream;
        while (!ds->q.empty() && ds->q.front()->seq < seq) {
            run_front(ds);
        }
    }
}

void run_front(CUstream_st * s) {
    run_dependencies(s, s->q.front()->seq);
    std::unique_ptr<op> o = std::move(s->q.front());
    s->q.pop_front();
    o->exec();
    cur_activity = activity{};
}

void finish_device_work() {
    open_devices(0);
    cur_activity = activity{};
}

void flush_stream(CUstream_st * s) {
    while (!s->q.empty()) {
        run_front(s);
    }
    finish_device_work();
}

void flush_device(int device) {
    device_t & d = g->dev[device];
    for (;;) {
        CUstream_st * best = nullptr;
        for (CUstream_st * s : d.streams) {
            if (!s->q.empty() && (best == nullptr || s->q.front()->seq < best->q.front()->seq)) {
                best = s;
            }
        }
        if (best == nullptr) {
            break;
        }
        run_front(best);
    }
    finish_device_work();
}

void flush_all() {
    for (int d = 0; d < g->ndev; d++) {
        flush_device(d);
    }
}

// ---- memory

alloc_t * find_mapping(uintptr_t a) {
    auto it = g->maps.upper_bound(a);
    if (it == g->maps.begin()) {
        return nullptr;
    }
    --it;
    return a < it->second->map_end ? it->second : nullptr;
}

void protect(const alloc_t * a, int prot) {
    if (mprotect((void *) a->open_lo, a->open_hi - a->open_lo, prot) != 0) {
        fatal("mprotect of device memory [%p, %p) failed: %s", (void *) a->open_lo, (void *) a->open_hi,
              strerror(errno));
    }
}

void release_quarantine() {
    while (g->quarantine_bytes > QUARANTINE_MAX_BYTES || g->quarantine.size() > QUARANTINE_MAX_COUNT) {
        alloc_t * a = g->quarantine.front();
        g->quarantine.pop_front();
        g->quarantine_bytes -= a->map_end - a->map_base;
        g->maps.erase(a->map_base);
        munmap((void *) a->map_base, a->map_end - a->map_base);
        delete a;
    }
}

// ---- operations

struct copy_op final : op {
    char *            dst = nullptr;
    const char *      src = nullptr;
    size_t            dpitch = 0, spitch = 0, width = 0, height = 1;
    std::vector<char> snapshot; // pageable host source, staged at enqueue (rows packed)
    uint32_t          mask = 0;
    const char *      name = "cudaMemcpy";
    int               device = -1;

    void exec() override {
        cur_activity = activity{ name, false, device };
        open_devices(mask);
        const char * s = snapshot.empty() ? src : snapshot.data();
        const size_t sp = snapshot.empty() ? spitch : width;
        for (size_t r = 0; r < height; r++) {
            memmove(dst + r * dpitch, s + r * sp, width);
        }
    }
};

struct memset_op final : op {
    char *   dst = nullptr;
    int      value = 0;
    size_t   n = 0;
    uint32_t mask = 0;
    int      device = -1;

    void exec() override {
        cur_activity = activity{ "cudaMemset", false, device };
        open_devices(mask);
        memset(dst, value, n);
    }
};

struct kernel_exec_op final : op {
    kernel_launch l;

    void exec() override {
        cur_activity = activity{ l.cfg.name, true, l.device };
        open_devices(1u << l.device);
        run_kernel(l);
    }
};

const char * kind_name(cudaMemcpyKind k) {
    switch (k) {
        case cudaMemcpyHostToHost:     return "cudaMemcpyHostToHost";
        case cudaMemcpyHostToDevice:   return "cudaMemcpyHostToDevice";
        case cudaMemcpyDeviceToHost:   return "cudaMemcpyDeviceToHost";
        case cudaMemcpyDeviceToDevice: return "cudaMemcpyDeviceToDevice";
        case cudaMemcpyDefault:        return "cudaMemcpyDefault";
    }
    return "invalid cudaMemcpyKind";
}

const char * mem_kind_name(mem_kind k) {
    switch (k) {
        case MEM_HOST:   return "host memory";
        case MEM_PINNED: return "pinned host memory";
        case MEM_DEVICE: return "device memory";
        case MEM_BAD:    return "invalid memory";
    }
    return "?";
}

// validates a copy of dspan bytes at dst from sspan bytes at src; fills the op's device mask
cudaError_t check_copy(const char * api, void * dst, size_t dspan, const void * src, size_t sspan,
                       cudaMemcpyKind kind, copy_op & o, bool & src_pageable) {
    if ((int) kind < cudaMemcpyHostToHost || (int) kind > cudaMemcpyDefault) {
        return fail(cudaErrorInvalidMemcpyDirection, "%s: invalid kind %d", api, (int) kind);
    }
    const mem_span ds = classify(dst, dspan);
    const mem_span ss = classify(src, sspan);
    if (ds.kind == MEM_BAD) {
        return fail(cudaErrorInvalidValue, "%s(%s): destination %p (+%zu bytes): %s", api, kind_name(kind), dst, dspan,
                    ds.why);
    }
    if (ss.kind == MEM_BAD) {
        return fail(cudaErrorInvalidValue, "%s(%s): source %p (+%zu bytes): %s", api, kind_name(kind), src, sspan,
                    ss.why);
    }
    const bool dd = ds.kind == MEM_DEVICE, sd = ss.kind == MEM_DEVICE;
    bool ok = true;
    switch (kind) {
        case cudaMemcpyHostToHost:     ok = !dd && !sd; break;
        case cudaMemcpyHostToDevice:   ok = dd && !sd; break;
        case cudaMemcpyDeviceToHost:   ok = !dd && sd; break;
        case cudaMemcpyDeviceToDevice: ok = dd && sd; break;
        case cudaMemcpyDefault:        ok = true; break;
    }
    if (!ok) {
        return fail(cudaErrorInvalidValue, "%s(%s): destination %p is %s, source %p is %s", api, kind_name(kind), dst,
                    mem_kind_name(ds.kind), src, mem_kind_name(ss.kind));
    }
    o.mask = (dd ? 1u << ds.device : 0u) | (sd ? 1u << ss.device : 0u);
    o.device = dd ? ds.device : (sd ? ss.device : -1);
    src_pageable = ss.kind == MEM_HOST;
    return cudaSuccess;
}

cudaError_t resolve_or_fail(const char * api, cudaStream_t & s) {
    cudaStream_t r = resolve_stream(s);
    if (r == nullptr) {
        return fail(cudaErrorInvalidResourceHandle, "%s: invalid stream %p (destroyed or never created)", api,
                    (void *) s);
    }
    s = r;
    return cudaSuccess;
}

// a copy: run now (synchronous API: everything queued is flushed first) or queue it
cudaError_t do_copy(const char * api, void * dst, size_t dpitch, const void * src, size_t spitch, size_t width,
                    size_t height, cudaMemcpyKind kind, bool async, cudaStream_t stream) {
    guard lk(big_lock());
    init_locked();
    if (async) {
        cudaError_t e = resolve_or_fail(api, stream);
        if (e != cudaSuccess) {
            return e;
        }
    }
    if (width == 0 || height == 0) {
        if ((int) kind < cudaMemcpyHostToHost || (int) kind > cudaMemcpyDefault) {
            return fail(cudaErrorInvalidMemcpyDirection, "%s: invalid kind %d", api, (int) kind);
        }
        return cudaSuccess;
    }
    std::unique_ptr<copy_op> o(new copy_op);
    o->name = api;
    o->dst = (char *) dst;
    o->src = (const char *) src;
    o->dpitch = dpitch;
    o->spitch = spitch;
    o->width = width;
    o->height = height;
    bool pageable = false;
    cudaError_t e = check_copy(api, dst, dpitch * (height - 1) + width, src, spitch * (height - 1) + width, kind, *o,
                               pageable);
    if (e != cudaSuccess) {
        return e;
    }
    if (!async) {
        flush_all();
        o->exec();
        finish_device_work();
        return cudaSuccess;
    }
    if (pageable) {
        // CUDA stages pageable host memory: the source is read now
        o->snapshot.resize(width * height);
        for (size_t r = 0; r < height; r++) {
            memcpy(o->snapshot.data() + r * width, (const char *) src + r * spitch, width);
        }
    }
    enqueue(stream, std::move(o));
    return cudaSuccess;
}

cudaError_t do_peer_copy(const char * api, void * dst, int dst_dev, const void * src, int src_dev, size_t n, bool async,
                         cudaStream_t stream) {
    guard lk(big_lock());
    init_locked();
    if (async) {
        cudaError_t e = resolve_or_fail(api, stream);
        if (e != cudaSuccess) {
            return e;
        }
    }
    if (dst_dev < 0 || dst_dev >= g->ndev || src_dev < 0 || src_dev >= g->ndev) {
        return fail(cudaErrorInvalidDevice, "%s: invalid device (dst %d, src %d; %d devices)", api, dst_dev, src_dev,
                    g->ndev);
    }
    if (n == 0) {
        return cudaSuccess;
    }
    const mem_span ds = classify(dst, n), ss = classify(src, n);
    if (ds.kind != MEM_DEVICE || ds.device != dst_dev) {
        return fail(cudaErrorInvalidValue, "%s: destination %p (+%zu bytes) is not device memory of device %d (%s)", api,
                    dst, n, dst_dev, ds.kind == MEM_BAD ? ds.why : mem_kind_name(ds.kind));
    }
    if (ss.kind != MEM_DEVICE || ss.device != src_dev) {
        return fail(cudaErrorInvalidValue, "%s: source %p (+%zu bytes) is not device memory of device %d (%s)", api, src,
                    n, src_dev, ss.kind == MEM_BAD ? ss.why : mem_kind_name(ss.kind));
    }
    std::unique_ptr<copy_op> o(new copy_op);
    o->name = api;
    o->dst = (char *) dst;
    o->src = (const char *) src;
    o->dpitch = o->spitch = o->width = n;
    o->height = 1;
    o->mask = (1u << dst_dev) | (1u << src_dev);
    o->device = dst_dev;
    if (!async) {
        flush_all();
        o->exec();
        finish_device_work();
        return cudaSuccess;
    }
    enqueue(stream, std::move(o));
    return cudaSuccess;
}

cudaError_t do_memset(const char * api, void * p, int value, size_t n, bool async, cudaStream_t stream) {
    guard lk(big_lock());
    init_locked();
    if (async) {
        cudaError_t e = resolve_or_fail(api, stream);
        if (e != cudaSuccess) {
            return e;
        }
    }
    if (n == 0) {
        return cudaSuccess;
    }
    const mem_span s = classify(p, n);
    if (s.kind != MEM_DEVICE) {
        return fail(cudaErrorInvalidValue, "%s: %p (+%zu bytes) is not device memory (%s)", api, p, n,
                    s.kind == MEM_BAD ? s.why : mem_kind_name(s.kind));
    }
    std::unique_ptr<memset_op> o(new memset_op);
    o->dst = (char *) p;
    o->value = value;
    o->n = n;
    o->mask = 1u << s.device;
    o->device = s.device;
    if (!async) {
        flush_all();
        o->exec();
        finish_device_work();
        return cudaSuccess;
    }
    enqueue(stream, std::move(o));
    return cudaSuccess;
}

// ---- SIGSEGV reporting

void segv_handler(int sig, siginfo_t * info, void * uctx) {
    (void) uctx;
    const uintptr_t a = (uintptr_t) info->si_addr;
    char who[512];
    char what[768];
    const activity act = cur_activity;
    if (act.name == nullptr) {
        snprintf(who, sizeof(who), "host code");
    } else if (act.kernel) {
        char th[128];
        describe_thread(th, sizeof(th));
        snprintf(who, sizeof(who), "kernel %s on device %d (%s)", act.name, act.device, th);
    } else {
        snprintf(who, sizeof(who), "%s", act.name);
    }
    const alloc_t * m = g != nullptr ? find_mapping(a) : nullptr;
    const char * region = nullptr;
    if (m != nullptr) {
        const void * p0 = (const void *) m->ptr;
        const void * p1 = (const void *) (m->ptr + m->size);
        if (m->freed) {
            snprintf(what, sizeof(what),
                     "address %p in freed device memory of device %d, allocation [%p, %p) (use after cudaFree), "
                     "accessed by %s",
                     (void *) a, m->device, p0, p1, who);
        } else if (a >= m->ptr && a < m->ptr + m->size) {
            snprintf(what, sizeof(what), "device memory of device %d, allocation [%p, %p) accessed by %s (address %p)",
                     m->device, p0, p1, who, (void *) a);
        } else if (a >= m->ptr + m->size) {
            snprintf(what, sizeof(what),
                     "address %p is %zu bytes past the end of allocation [%p, %p) of device %d, accessed by %s",
                     (void *) a, (size_t) (a - (m->ptr + m->size)), p0, p1, m->device, who);
        } else {
            snprintf(what, sizeof(what), "address %p is %zu bytes before allocation [%p, %p) of device %d, accessed by %s",
                     (void *) a, (size_t) (m->ptr - a), p0, p1, m->device, who);
        }
    } else if ((region = executor_region(a)) != nullptr) {
        snprintf(what, sizeof(what), "address %p: %s, accessed by %s", (void *) a, region, who);
    } else if (act.name != nullptr) {
        snprintf(what, sizeof(what), "address %p outside any allocation during %s", (void *) a, who);
    } else {
        snprintf(what, sizeof(what), "%s at address %p in host code (not emulated device memory)",
                 sig == SIGBUS ? "SIGBUS" : "SIGSEGV", (void *) a);
    }
    char line[1024];
    const int len = snprintf(line, sizeof(line), "ggml_cuda_emu: memory fault: %s\n", what);
    if (len > 0) {
        ssize_t w = write(2, line, (size_t) len < sizeof(line) ? (size_t) len : sizeof(line) - 1);
        (void) w;
    }
    // SA_RESETHAND restored the default action: returning re-executes the access and ends the process
}

void install_fault_handler() {
    struct sigaction old;
    memset(&old, 0, sizeof(old));
    if (sigaction(SIGSEGV, nullptr, &old) != 0) {
        return;
    }
    const bool has_handler = (old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != nullptr : old.sa_handler != SIG_DFL;
    if (has_handler) {
        return; // e.g. the Go runtime: faults are reported by it
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = segv_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGSEGV, &sa, nullptr) == 0) {
        g_handler = true;
        struct sigaction ob;
        if (sigaction(SIGBUS, nullptr, &ob) == 0 && !(ob.sa_flags & SA_SIGINFO) && ob.sa_handler == SIG_DFL) {
            sigaction(SIGBUS, &sa, nullptr);
        }
    }
}

const char * error_name(cudaError_t e) {
    switch (e) {
        case cudaSuccess:                     return "cudaSuccess";
        case cudaErrorInvalidValue:           return "cudaErrorInvalidValue";
        case cudaErrorMemoryAllocation:       return "cudaErrorMemoryAllocation";
        case cudaErrorInitializationError:    return "cudaErrorInitializationError";
        case cudaErrorInvalidConfiguration:   return "cudaErrorInvalidConfiguration";
        case cudaErrorInvalidPitchValue:      return "cudaErrorInvalidPitchValue";
        case cudaErrorInvalidDevicePointer:   return "cudaErrorInvalidDevicePointer";
        case cudaErrorInvalidMemcpyDirection: return "cudaErrorInvalidMemcpyDirection";
        case cudaErrorNoDevice:               return "cudaErrorNoDevice";
        case cudaErrorInvalidDevice:          return "cudaErrorInvalidDevice";
        case cudaErrorInvalidResourceHandle:  return "cudaErrorInvalidResourceHandle";
        case cudaErrorNotReady:               return "cudaErrorNotReady";
        case cudaErrorIllegalAddress:         return "cudaErrorIllegalAddress";
        case cudaErrorLaunchFailure:          return "cudaErrorLaunchFailure";
        case cudaErrorNotSupported:           return "cudaErrorNotSupported";
        case cudaErrorUnknown:                return "cudaErrorUnknown";
    }
    return nullptr;
}

const char * error_string(cudaError_t e) {
    switch (e) {
        case cudaSuccess:                     return "no error";
        case cudaErrorInvalidValue:           return "invalid argument";
        case cudaErrorMemoryAllocation:       return "out of memory";
        case cudaErrorInitializationError:    return "initialization error";
        case cudaErrorInvalidConfiguration:   return "invalid configuration argument";
        case cudaErrorInvalidPitchValue:      return "invalid pitch argument";
        case cudaErrorInvalidDevicePointer:   return "invalid device pointer";
        case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
        case cudaErrorNoDevice:               return "no CUDA-capable device is detected";
        case cudaErrorInvalidDevice:          return "invalid device ordinal";
        case cudaErrorInvalidResourceHandle:  return "invalid resource handle";
        case cudaErrorNotReady:               return "device not ready";
        case cudaErrorIllegalAddress:         return "an illegal memory access was encountered";
        case cudaErrorLaunchFailure:          return "unspecified launch failure";
        case cudaErrorNotSupported:           return "operation not supported";
        case cudaErrorUnknown:                return "unknown error";
    }
    return nullptr;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// internal interface

std::recursive_mutex & big_lock() {
    static std::recursive_mutex mu;
    return mu;
}

bool g_threaded_streams = false;

void perturb_after_call() {
    static __thread uint64_t r = 0;
    if (r == 0) {
        r = (uint64_t) (uintptr_t) &r ^ 0x9e3779b97f4a7c15ull;
    }
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    if ((r & 3) == 0) {
        usleep((useconds_t) (1 + (r >> 8) % 50));
    } else {
        sched_yield();
    }
}

cudaError_t fail(cudaError_t e, const char * fmt, ...) {
    tls_last_error = e;
    if (g == nullptr || !g->quiet) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        fprintf(stderr, "ggml_cuda_emu: %s -> %s\n", msg, error_name(e));
    }
    return e;
}

void vfatal(const char * fmt, va_list ap) {
    char msg[2048];
    vsnprintf(msg, sizeof(msg), fmt, ap);
    fprintf(stderr, "ggml_cuda_emu: FATAL: %s\n", msg);
    fflush(stderr);
    abort();
}

void fatal(const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vfatal(fmt, ap);
}

int device_count() {
    guard lk(big_lock());
    init_locked();
    return g->ndev;
}

int current_device() {
    return tls_device;
}

cudaStream_t resolve_stream(cudaStream_t s) {
    init_locked();
    if (s == nullptr) {
        return tls_device < g->ndev ? g->dev[tls_device].default_stream : nullptr;
    }
    if (g->all_streams.count(s) == 0 || !s->alive) {
        return nullptr;
    }
    return s;
}

int stream_device(cudaStream_t s) {
    return s->device;
}

cudaStream_t default_stream(int device) {
    init_locked();
    return device >= 0 && device < g->ndev ? g->dev[device].default_stream : nullptr;
}

void enqueue(cudaStream_t s, std::unique_ptr<op> o) {
    o->seq = ++g->seq;
    s->q.push_back(std::move(o));
    if (g->threaded) {
        work_cv().notify_all();
    }
}

void flush_stream_of(cudaStream_t s) {
    flush_stream(s);
}

mem_span classify(const void * p, size_t n) {
    const uintptr_t a = (uintptr_t) p;
    if (p == nullptr) {
        return n == 0 ? mem_span{ MEM_HOST, -1, nullptr } : mem_span{ MEM_BAD, -1, "NULL pointer" };
    }
    if (g == nullptr) {
        return mem_span{ MEM_HOST, -1, nullptr };
    }
    if (const alloc_t * m = find_mapping(a)) {
        if (m->freed) {
            return mem_span{ MEM_BAD, m->device, "freed device memory (use after cudaFree)" };
        }
        if (a >= m->ptr && a <= m->ptr + m->size && n <= m->ptr + m->size - a) {
            return mem_span{ MEM_DEVICE, m->device, nullptr };
        }
        return mem_span{ MEM_BAD, m->device, "range not inside one device allocation" };
    }
    auto it = g->pinned.upper_bound(a);
    if (it != g->pinned.begin()) {
        --it;
        if (a < it->first + it->second || (n == 0 && a == it->first + it->second)) {
            if (n <= it->first + it->second - a) {
                return mem_span{ MEM_PINNED, -1, nullptr };
            }
            return mem_span{ MEM_BAD, -1, "range not inside one pinned host allocation" };
        }
    }
    if (n > 0) {
        auto mt = g->maps.lower_bound(a);
        if (mt != g->maps.end() && mt->first < a + n) {
            return mem_span{ MEM_BAD, -1, "host range overlaps device memory" };
        }
    }
    return mem_span{ MEM_HOST, -1, nullptr };
}

void open_devices(uint32_t mask) {
    const uint32_t diff = g->open_mask ^ mask;
    if (diff == 0) {
        return;
    }
    for (int d = 0; d < g->ndev; d++) {
        if ((diff >> d) & 1u) {
            const int prot = ((mask >> d) & 1u) ? PROT_READ | PROT_WRITE : PROT_NONE;
            for (auto & kv : g->dev[d].allocs) {
                protect(kv.second, prot);
            }
        }
    }
    g->open_mask = mask;
}

bool fault_handler_installed() {
    return g_handler;
}

void ensure_fault_handler_on_this_thread() {
    if (!g_handler || tls_altstack) {
        return;
    }
    tls_altstack = true;
    stack_t cur;
    if (sigaltstack(nullptr, &cur) == 0 && (cur.ss_flags & SS_DISABLE) == 0) {
        return; // the thread has one
    }
    const size_t sz = 256 * 1024;
    void * mem = mmap(nullptr, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        return;
    }
    stack_t ss;
    memset(&ss, 0, sizeof(ss));
    ss.ss_sp = mem;
    ss.ss_size = sz;
    sigaltstack(&ss, nullptr); // kept for the life of the thread
}

void check_pointer_arg(const void * p, int device, const char * name, int index, const char * what) {
    if (p == nullptr) {
        return;
    }
    const mem_span s = classify(p, 0);
    if (s.kind == MEM_PINNED || (s.kind == MEM_DEVICE && s.device == device)) {
        return;
    }
    if (s.kind == MEM_DEVICE) {
        fatal("kernel %s launched on device %d: argument %d%s = %p is device memory of device %d", name, device, index,
              what, p, s.device);
    }
    if (s.kind == MEM_BAD) {
        fatal("kernel %s launched on device %d: argument %d%s = %p: %s", name, device, index, what, p, s.why);
    }
    fatal("kernel %s launched on device %d: argument %d%s = %p is host memory (not from cudaMalloc or "
          "cudaMallocHost): the kernel would fault",
          name, device, index, what, p);
}

void launch(const launch_config & cfg, std::unique_ptr<kernel_base> k) {
    guard lk(big_lock());
    init_locked();
    const dim3 gr = cfg.grid, bl = cfg.block;
    const uint64_t threads = (uint64_t) bl.x * bl.y * bl.z;
    if (gr.x < 1 || gr.x > 2147483647u || gr.y < 1 || gr.y > 65535u || gr.z < 1 || gr.z > 65535u || bl.x > 1024u ||
        bl.y > 1024u || bl.z > 64u || threads < 1 || threads > 1024 || cfg.shmem > MAX_SHARED_MEMORY) {
        fail(cudaErrorInvalidConfiguration,
             "launch of kernel %s: grid (%u, %u, %u), block (%u, %u, %u), %zu bytes of dynamic shared memory", cfg.name,
             gr.x, gr.y, gr.z, bl.x, bl.y, bl.z, cfg.shmem);
        return;
    }
    cudaStream_t s = resolve_stream(cfg.stream);
    if (s == nullptr) {
        fail(cudaErrorInvalidResourceHandle, "launch of kernel %s: invalid stream %p", cfg.name, (void *) cfg.stream);
        return;
    }
    if (s->device != tls_device) {
        fail(cudaErrorInvalidResourceHandle, "launch of kernel %s: the stream belongs to device %d, device %d is current",
             cfg.name, s->device, tls_device);
        return;
    }
    k->check_args(s->device, cfg.name);
    std::unique_ptr<kernel_exec_op> o(new kernel_exec_op);
    o->l.cfg = cfg;
    o->l.cfg.stream = s;
    o->l.device = s->device;
    o->l.k = std::move(k);
    enqueue(s, std::move(o));
}

[[noreturn]] void not_in_kernel(const char * what) {
    fatal("%s used outside a kernel (host code)", what);
}

} // namespace ggml_cuda_emu

// ---------------------------------------------------------------------------------------------
// CUDA runtime API

using namespace ggml_cuda_emu;

cudaError_t cudaGetDeviceCount(int * count) {
    guard lk(big_lock());
    init_locked();
    if (count == nullptr) {
        return fail(cudaErrorInvalidValue, "cudaGetDeviceCount: NULL count");
    }
    *count = g->ndev;
    if (g->ndev == 0) {
        return fail(cudaErrorNoDevice, "cudaGetDeviceCount: GGML_CUDA_EMU_DEVICES=0");
    }
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
    guard lk(big_lock());
    init_locked();
    if (g->ndev == 0) {
        return fail(cudaErrorNoDevice, "cudaSetDevice(%d): no device", device);
    }
    if (device < 0 || device >= g->ndev) {
        return fail(cudaErrorInvalidDevice, "cudaSetDevice(%d): %d device(s)", device, g->ndev);
    }
    tls_device = device;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int * device) {
    guard lk(big_lock());
    init_locked();
    if (device == nullptr) {
        return fail(cudaErrorInvalidValue, "cudaGetDevice: NULL device");
    }
    if (g->ndev == 0) {
        return fail(cudaErrorNoDevice, "cudaGetDevice: no device");
    }
    *device = tls_device;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp * prop, int device) {
    guard lk(big_lock());
    init_locked();
    if (prop == nullptr) {
        return fail(cudaErrorInvalidValue, "cudaGetDeviceProperties: NULL prop");
    }
    if (device < 0 || device >= g->ndev) {
        return fail(cudaErrorInvalidDevice, "cudaGetDeviceProperties(%d): %d device(s)", device, g->ndev);
    }
    memset(prop, 0, sizeof(*prop));
    snprintf(prop->name, sizeof(prop->name), "ggml-go CUDA emulator");
    prop->totalGlobalMem = DEVICE_MEMORY;
    prop->sharedMemPerBlock = MAX_SHARED_MEMORY;
    prop->regsPerBlock = 65536;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    prop->maxThreadsDim[0] = 1024;
    prop->maxThreadsDim[1] = 1024;
    prop->maxThreadsDim[2] = 64;
    prop->maxGridSize[0] = 2147483647;
    prop->maxGridSize[1] = 65535;
    prop->maxGridSize[2] = 65535;
    prop->clockRate = 1000000;
    prop->totalConstMem = 65536;
    prop->major = 8;
    prop->minor = 9;
    prop->multiProcessorCount = 1;
    prop->canMapHostMemory = 1;
    prop->concurrentKernels = 1;
    prop->pciBusID = device;
    prop->unifiedAddressing = 1;
    prop->memoryBusWidth = 256;
    prop->l2CacheSize = 4 << 20;
    prop->maxThreadsPerMultiProcessor = 1536;
    prop->sharedMemPerMultiprocessor = 100 * 1024;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int * value, cudaDeviceAttr attr, int device) {
    guard lk(big_lock());
    init_locked();
    if (value == nullptr) {
        return fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute: NULL value");
    }
    if (device < 0 || device >= g->ndev) {
        return fail(cudaErrorInvalidDevice, "cudaDeviceGetAttribute(device %d): %d device(s)", device, g->ndev);
    }
    switch (attr) {
        case cudaDevAttrMaxThreadsPerBlock:      *value = 1024; break;
        case cudaDevAttrMaxBlockDimX:            *value = 1024; break;
        case cudaDevAttrMaxBlockDimY:            *value = 1024; break;
        case cudaDevAttrMaxBlockDimZ:            *value = 64; break;
        case cudaDevAttrMaxGridDimX:             *value = 2147483647; break;
        case cudaDevAttrMaxGridDimY:             *value = 65535; break;
        case cudaDevAttrMaxGridDimZ:             *value = 65535; break;
        case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int) MAX_SHARED_MEMORY; break;
        case cudaDevAttrWarpSize:                *value = 32; break;
        case cudaDevAttrMultiProcessorCount:     *value = 1; break;
        case cudaDevAttrComputeCapabilityMajor:  *value = 8; break;
        case cudaDevAttrComputeCapabilityMinor:  *value = 9; break;
        default:
            return fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute: attribute %d is not emulated", (int) attr);
    }
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
    guard lk(big_lock());
    init_locked();
    if (tls_device >= g->ndev) {
        return fail(cudaErrorNoDevice, "cudaDeviceSynchronize: no device");
    }
    flush_device(tls_device);
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t * free, size_t * total) {
    guard lk(big_lock());
    init_locked();
    if (free == nullptr || total == nullptr) {
        return fail(cudaErrorInvalidValue, "cudaMemGetInfo: NULL argument");
    }
    if (tls_device >= g->ndev) {
        return fail(cudaErrorNoDevice, "cudaMemGetInfo: no device");
    }
    *total = DEVICE_MEMORY;
    *free = DEVICE_MEMORY - g->dev[tls_device].used;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void) {
    const cudaError_t e = tls_last_error;
    tls_last_error = cudaSuccess;
    return e;
}

cudaError_t cudaPeekAtLastError(void) {
    return tls_last_error;
}

const char * cudaGetErrorString(cudaError_t error) {
    const char * s = error_string(error);
    return s != nullptr ? s : "unrecognized error code";
}

const char * cudaGetErrorName(cudaError_t error) {
    const char * s = error_name(error);
    return s != nullptr ? s : "cudaErrorUnknown";
}

cudaError_t cudaMalloc(void ** devPtr, size_t size) {
    guard lk(big_lock());
    init_locked();
    if (devPtr == nullptr) {
        return fail(cudaErrorInvalidValue, "cudaMalloc: NULL devPtr");
    }
    if (tls_device >= g->ndev) {
        return fail(cudaErrorNoDevice, "cudaMalloc: no device");
    }
    if (size == 0) {
        *devPtr = nullptr;
        return cudaSuccess;
    }
    device_t & d = g->dev[tls_device];
    const size_t charged = round_up(size, 256);
    if (size > DEVICE_MEMORY || charged > DEVICE_MEMORY - d.used) {
        return fail(cudaErrorMemoryAllocation, "cudaMalloc(%zu bytes) on device %d: %zu of %zu bytes free", size,
                    tls_device, DEVICE_MEMORY - d.used, DEVICE_MEMORY);
    }
    const size_t pg = g->page;
    const size_t data = round_up(charged, pg);
    const size_t gb = round_up(GUARD_BYTES, pg);
    const size_t len = gb + data + gb;
    void * base = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        return fail(cudaErrorMemoryAllocation, "cudaMalloc(%zu bytes): mmap failed: %s", size, strerror(errno));
    }
    alloc_t * a = new alloc_t;
    a->map_base = (uintptr_t) base;
    a->map_end = a->map_base + len;
    a->open_lo = a->map_base + gb;
    a->open_hi = a->open_lo + data;
    a->ptr = a->open_hi - charged; // the end is within 256 bytes of the guard page
    a->size = size;
    a->charged = charged;
    a->device = tls_device;
    a->freed = false;
    // fresh device memory is garbage on a GPU: 0xff bytes (NaN as F32 and F16)
    const size_t poison = std::min(data, POISON_MAX_BYTES);
    protect(a, PROT_READ | PROT_WRITE);
    memset((void *) (a->open_hi - poison), 0xff, poison);
    if (((g->open_mask >> tls_device) & 1u) == 0) {
        protect(a, PROT_NONE);
    }
    g->maps[a->map_base] = a;
    d.allocs[a->ptr] = a;
    d.used += charged;
    *devPtr = (void *) a->ptr;
    return cudaSuccess;
}

cudaError_t cudaFree(void * devPtr) {
    guard lk(big_lock());
    init_locked();
    flush_all(); // cudaFree synchronises
    if (devPtr == nullptr) {
        return cudaSuccess;
    }
    alloc_t * m = find_mapping((uintptr_t) devPtr);
    if (m == nullptr || m->freed || m->ptr != (uintptr_t) devPtr) {
        return fail(cudaErrorInvalidValue, "cudaFree(%p): %s", devPtr,
                    m == nullptr ? "not device memory"
                                 : (m->freed ? "already freed" : "not the start of an allocation"));
    }
    device_t & d = g->dev[m->device];
    d.allocs.erase(m->ptr);
    d.used -= m->charged;
    m->freed = true;
    protect(m, PROT_NONE);
    madvise((void *) m->open_lo, m->open_hi - m->open_lo, MADV_DONTNEED);
    g->quarantine.push_back(m);
    g->quarantine_bytes += m->map_end - m->map_base;
    release_quarantine();
    return cudaSuccess;
}

cudaError_t cudaMallocHost(void ** ptr, size_t size) {
    guard lk(big_lock());
    init_locked();
    if (ptr == nullptr) {
        return fail(cudaErrorInvalidValue, "cudaMallocHost: NULL ptr");
    }
    if (g->ndev == 0) {
        return fail(cudaErrorNoDevice, "cudaMallocHost: no device");
    }
    if (size == 0) {
        *ptr = nullptr;
        return cudaSuccess;
    }
    void * p = nullptr;
    if (posix_memalign(&p, g->page, size) != 0) {
        return fail(cudaErrorMemoryAllocation, "cudaMallocHost(%zu bytes): out of host memory", size);
    }
    g->pinned[(uintptr_t) p] = size;
    *ptr = p;
    return cudaSuccess;
}

cudaError_t cudaFreeHost(void * ptr) {
    guard lk(big_lock());
    init_locked();
    flush_all();
    if (ptr == nullptr) {
        return cudaSuccess;
    }
    auto it = g->pinned.find((uintptr_t) ptr);
    if (it == g->pinned.end()) {
        return fail(cudaErrorInvalidValue, "cudaFreeHost(%p): not memory from cudaMallocHost", ptr);
    }
    g->pinned.erase(it);
    free(ptr);
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void * dst, const void * src, size_t count, cudaMemcpyKind kind) {
    return do_copy("cudaMemcpy", dst, count, src, count, count, 1, kind, false, nullptr);
}

cudaError_t cudaMemcpyAsync(void * dst, const void * src, size_t count, cudaMemcpyKind kind, cudaStream_t stream) {
    return do_copy("cudaMemcpyAsync", dst, count, src, count, count, 1, kind, true, stream);
}

static cudaError_t check_pitches(const char * api, size_t dpitch, size_t spitch, size_t width) {
    if (dpitch < width || spitch < width) {
        return fail(cudaErrorInvalidPitchValue, "%s: width %zu bytes, dpitch %zu, spitch %zu", api, width, dpitch,
                    spitch);
    }
    return cudaSuccess;
}

cudaError_t cudaMemcpy2D(void * dst, size_t dpitch, const void * src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind) {
    {
        guard lk(big_lock());
        init_locked();
        cudaError_t e = check_pitches("cudaMemcpy2D", dpitch, spitch, width);
        if (e != cudaSuccess) {
            return e;
        }
    }
    return do_copy("cudaMemcpy2D", dst, dpitch, src, spitch, width, height, kind, false, nullptr);
}

cudaError_t cudaMemcpy2DAsync(void * dst, size_t dpitch, const void * src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream) {
    {
        guard lk(big_lock());
        init_locked();
        cudaError_t e = check_pitches("cudaMemcpy2DAsync", dpitch, spitch, width);
        if (e != cudaSuccess) {
            return e;
        }
    }
    return do_copy("cudaMemcpy2DAsync", dst, dpitch, src, spitch, width, height, kind, true, stream);
}

cudaError_t cudaMemcpyPeer(void * dst, int dstDevice, const void * src, int srcDevice, size_t count) {
    return do_peer_copy("cudaMemcpyPeer", dst, dstDevice, src, srcDevice, count, false, nullptr);
}

cudaError_t cudaMemcpyPeerAsync(void * dst, int dstDevice, const void * src, int srcDevice, size_t count,
                                cudaStream_t stream) {
    return do_peer_copy("cudaMemcpyPeerAsync", dst, dstDevice, src, srcDevice, count, true, stream);
}

cudaError_t cudaMemset(void * devPtr, int value, size_t count) {
    return do_memset("cudaMemset", devPtr, value, count, false, nullptr);
}

cudaError_t cudaMemsetAsync(void * devPtr, int value, size_t count, cudaStream_t stream) {
    return do_memset("cudaMemsetAsync", devPtr, value, count, true, stream);
}

cudaError_t cudaStreamCreate(cudaStream_t * pStream) {
    return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t * pStream, unsigned int flags) {
    guard lk(big_lock());
    init_locked();
    if (pStream == nullptr) {
        return fail(cudaErrorInvalidValue, "cudaStreamCreateWithFlags: NULL pStream");
    }
    if ((flags & ~cudaStreamNonBlocking) != 0) {
        return fail(cudaErrorInvalidValue, "cudaStreamCreateWithFlags: invalid flags 0x%x", flags);
    }
    if (tls_device >= g->ndev) {
        return fail(cudaErrorNoDevice, "cudaStreamCreateWithFlags: no device");
    }
    *pStream = make_stream(tls_device, flags, false);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
    guard lk(big_lock());
    init_locked();
    if (stream == nullptr || g->all_streams.count(stream) == 0 || !stream->alive || stream->is_default) {
        return fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy(%p): not a live stream", (void *) stream);
    }
    flush_stream(stream);
    stream->alive = false;
    std::vector<CUstream_st *> & v = g->dev[stream->device].streams;
    v.erase(std::remove(v.begin(), v.end(), stream), v.end());
    if (g->threaded) {
        work_cv().notify_all(); // its worker ends
    }
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
    guard lk(big_lock());
    init_locked();
    cudaError_t e = resolve_or_fail("cudaStreamSynchronize", stream);
    if (e != cudaSuccess) {
        return e;
    }
    flush_stream(stream);
    return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
    // the emulator has no background progress: a query completes the stream's work
    return cudaStreamSynchronize(stream);
}
