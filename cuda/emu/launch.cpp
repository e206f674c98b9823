// launch.cpp - the kernel executor. Blocks run one after another on the OS thread that flushes
// the stream; inside a block every CUDA thread is a coroutine with its own stack. The scheduler
// runs every runnable thread until it blocks (at __syncthreads or a warp shuffle) or returns;
// when none is runnable it releases complete warps waiting at a shuffle, then a complete
// __syncthreads barrier, and aborts on divergent barriers, incomplete shuffles and deadlocks.
//
// Coroutine switch: a few instructions of assembly on x86-64 and aarch64 (callee-saved registers
// and the stack pointer), ucontext elsewhere. Stacks are pooled: a thread that returns without
// blocking hands its stack to the next one, so a barrier-free kernel touches a single stack.

#include "emu_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <vector>

#include "fiber-switch.h"

#ifndef GGML_EMU_FIBER_SWITCH_ASM
#define GGML_CUDA_EMU_UCONTEXT 1
#endif

#ifdef GGML_CUDA_EMU_UCONTEXT
#include <ucontext.h>
#endif

namespace ggml_cuda_emu {

__thread exec_state tls;

} // namespace ggml_cuda_emu

#ifndef GGML_CUDA_EMU_UCONTEXT
GGML_EMU_FIBER_SWITCH(ggml_cuda_emu_switch)
#endif

namespace ggml_cuda_emu {

namespace {

constexpr size_t STACK_SIZE = 128 * 1024; // per CUDA thread, plus a guard page below

enum thread_state { T_READY, T_BARRIER, T_SHFL, T_DONE };

struct stack_rec {
    char * map;   // guard page, then the stack
    char * lo;    // lowest usable byte
    char * hi;    // one past the highest
};

struct warp_t {
    unsigned n_lanes;
    unsigned n_shfl;
    unsigned n_done;
    uint32_t gen;
    int      size[2];
    uint64_t buf[2][32];
};

struct block_exec;

} // namespace

struct coroutine {
    void *       sp;
#ifdef GGML_CUDA_EMU_UCONTEXT
    ucontext_t   uc;
#endif
    uint3        tid;
    unsigned     lin, lane, warp;
    int          state;
    const char * file; // where it waits
    int          line;
    stack_rec *  stk;
};

namespace {

struct block_exec {
    const kernel_launch *  l = nullptr;
    unsigned               nthreads = 0;
    std::vector<coroutine> th;
    std::vector<warp_t>    warps;
    unsigned               n_done = 0, n_bar = 0;
    void *                 sched_sp = nullptr;
#ifdef GGML_CUDA_EMU_UCONTEXT
    ucontext_t             sched_uc;
#endif
};

// executor state: one kernel runs at a time (under the runtime lock)
block_exec               g_block;
std::vector<stack_rec *> g_free_stacks;
std::vector<stack_rec *> g_all_stacks;
// GGML_CUDA_EMU_SCHEDULE: "" (in order), "reverse", "random" (GGML_CUDA_EMU_SEED, else a seed
// drawn per process and printed once on stderr)
enum schedule_mode { S_ORDER, S_REVERSE, S_RANDOM };
schedule_mode            g_sched = S_ORDER;
bool                     g_env_read = false;
uint64_t                 g_rng = 0;
std::vector<unsigned>    g_order;     // thread order of one scheduling round (S_RANDOM)
std::vector<uint64_t>    g_block_ord; // block order of one launch (S_RANDOM)

// splitmix64
inline uint64_t rng_next() {
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// uniform in [0, n) (n > 0; the modulo bias is irrelevant here)
inline uint64_t rng_below(uint64_t n) {
    return rng_next() % n;
}

template <typename T> void shuffle(std::vector<T> & v) {
    for (size_t i = v.size(); i > 1; i--) {
        const size_t j = (size_t) rng_below(i);
        T t = v[i - 1];
        v[i - 1] = v[j];
        v[j] = t;
    }
}

void read_schedule_env() {
    g_env_read = true;
    const char * s = getenv("GGML_CUDA_EMU_SCHEDULE");
    if (s == nullptr || *s == '\0' || strcmp(s, "order") == 0) {
        g_sched = S_ORDER;
    } else if (strcmp(s, "reverse") == 0) {
        g_sched = S_REVERSE;
    } else if (strcmp(s, "random") == 0) {
        g_sched = S_RANDOM;
        const char * seed = getenv("GGML_CUDA_EMU_SEED");
        if (seed != nullptr && *seed != '\0') {
            g_rng = strtoull(seed, nullptr, 0);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            g_rng = ((uint64_t) ts.tv_nsec << 20) ^ (uint64_t) ts.tv_sec ^ ((uint64_t) getpid() << 40);
            g_rng = rng_next() & 0xffffffffull;
        }
        fprintf(stderr, "ggml-go CUDA emulator: random block order and thread interleaving, "
                        "GGML_CUDA_EMU_SEED=%llu reproduces this run\n", (unsigned long long) g_rng);
    } else {
        fatal("GGML_CUDA_EMU_SCHEDULE=%s: expected order, reverse or random", s);
    }
}

struct dyn_region {
    char * base; // MAX_SHARED_MEMORY bytes, then a guard page
    size_t shmem;
};
std::vector<dyn_region *> g_dyn_regions;
__thread dyn_region *     tls_dyn = nullptr;
__thread char *           tls_dyn_ptr = nullptr;

stack_rec * get_stack() {
    if (!g_free_stacks.empty()) {
        stack_rec * s = g_free_stacks.back();
        g_free_stacks.pop_back();
        return s;
    }
    const size_t pg = (size_t) sysconf(_SC_PAGESIZE);
    void * m = mmap(nullptr, STACK_SIZE + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
                    0);
    if (m == MAP_FAILED) {
        fatal("out of memory for CUDA thread stacks");
    }
    mprotect(m, pg, PROT_NONE);
    stack_rec * s = new stack_rec;
    s->map = (char *) m;
    s->lo = (char *) m + pg;
    s->hi = s->lo + STACK_SIZE;
    g_all_stacks.push_back(s);
    return s;
}

void put_stack(stack_rec * s) {
    g_free_stacks.push_back(s);
}

void ensure_dyn_region() {
    if (tls_dyn != nullptr) {
        return;
    }
    const size_t pg = (size_t) sysconf(_SC_PAGESIZE);
    const size_t bytes = (MAX_SHARED_MEMORY + pg - 1) / pg * pg;
    void * m = mmap(nullptr, bytes + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        fatal("out of memory for dynamic shared memory");
    }
    mprotect((char *) m + bytes, pg, PROT_NONE);
    dyn_region * r = new dyn_region;
    r->base = (char *) m + bytes - MAX_SHARED_MEMORY;
    r->shmem = 0;
    g_dyn_regions.push_back(r);
    tls_dyn = r;
}

[[noreturn]] void thread_fatal(const char * fmt, ...) __attribute__((format(printf, 1, 2)));

void thread_fatal(const char * fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const launch_config & c = g_block.l->cfg;
    char th[128];
    describe_thread(th, sizeof(th));
    fatal("kernel %s (grid (%u, %u, %u), block (%u, %u, %u)) on device %d, %s: %s", c.name, c.grid.x, c.grid.y,
          c.grid.z, c.block.x, c.block.y, c.block.z, g_block.l->device, th, msg);
}

[[noreturn]] void block_fatal(const char * fmt, ...) __attribute__((format(printf, 1, 2)));

void block_fatal(const char * fmt, ...) {
    char msg[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    const launch_config & c = g_block.l->cfg;
    fatal("kernel %s (grid (%u, %u, %u), block (%u, %u, %u)) on device %d, block (%u, %u, %u): %s", c.name, c.grid.x,
          c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z, g_block.l->device, tls.block_idx.x, tls.block_idx.y,
          tls.block_idx.z, msg);
}

// the coroutine gives control back to the scheduler
inline void yield_to_scheduler(coroutine * c) {
#ifdef GGML_CUDA_EMU_UCONTEXT
    swapcontext(&c->uc, &g_block.sched_uc);
#else
    ggml_cuda_emu_switch(&c->sp, g_block.sched_sp);
#endif
}

void coroutine_main() {
    g_block.l->k->run_thread();
    coroutine * c = tls.cur;
    c->state = T_DONE;
    yield_to_scheduler(c);
    fatal("internal error: a finished CUDA thread was resumed");
}

// run coroutine c (starting it when it has no stack yet) until it blocks or returns
inline void run(coroutine * c) {
    tls.cur = c;
    tls.thread_idx = &c->tid;
    if (c->stk == nullptr) {
        c->stk = get_stack();
#ifdef GGML_CUDA_EMU_UCONTEXT
        getcontext(&c->uc);
        c->uc.uc_stack.ss_sp = c->stk->lo;
        c->uc.uc_stack.ss_size = STACK_SIZE;
        c->uc.uc_link = nullptr;
        makecontext(&c->uc, (void (*)()) coroutine_main, 0);
#else
        c->sp = ggml_emu_fiber_frame(c->stk->hi, coroutine_main);
#endif
    }
#ifdef GGML_CUDA_EMU_UCONTEXT
    swapcontext(&g_block.sched_uc, &c->uc);
#else
    ggml_cuda_emu_switch(&g_block.sched_sp, c->sp);
#endif
    tls.cur = nullptr;
    tls.thread_idx = nullptr;
    if (c->state == T_DONE) {
        put_stack(c->stk);
        c->stk = nullptr;
        g_block.n_done++;
        g_block.warps[c->warp].n_done++;
    }
}

void release_warp(warp_t & w, unsigned wi) {
    w.gen++;
    w.n_shfl = 0;
    const unsigned first = wi * 32;
    for (unsigned i = first; i < first + w.n_lanes; i++) {
        coroutine & c = g_block.th[i];
        if (c.state == T_SHFL) {
            c.state = T_READY;
        }
    }
}

// nothing is runnable: release what is complete, or diagnose
void release_step() {
    block_exec & b = g_block;
    bool released = false;
    for (unsigned wi = 0; wi < b.warps.size(); wi++) {
        warp_t & w = b.warps[wi];
        if (w.n_shfl == 0) {
            continue;
        }
        if (w.n_shfl == w.n_lanes) {
            release_warp(w, wi);
            released = true;
        } else if (w.n_shfl + w.n_done == w.n_lanes) {
            const coroutine * c = nullptr;
            for (unsigned i = wi * 32; i < wi * 32 + w.n_lanes && c == nullptr; i++) {
                if (b.th[i].state == T_SHFL) {
                    c = &b.th[i];
                }
            }
            block_fatal("warp %u: %u lane(s) wait at __shfl_xor_sync (%s:%d) but %u lane(s) of the warp have exited "
                        "(a full-mask shuffle needs every lane)",
                        wi, w.n_shfl, c->file, c->line, w.n_done);
        }
    }
    if (released) {
        return;
    }
    const unsigned live = b.nthreads - b.n_done;
    if (b.n_bar > 0 && b.n_bar == live) {
        const coroutine * first = nullptr;
        for (coroutine & c : b.th) {
            if (c.state != T_BARRIER) {
                continue;
            }
            if (first == nullptr) {
                first = &c;
            } else if (c.line != first->line || strcmp(c.file, first->file) != 0) {
                block_fatal("divergent __syncthreads: thread (%u, %u, %u) waits at %s:%d, thread (%u, %u, %u) at %s:%d",
                            first->tid.x, first->tid.y, first->tid.z, first->file, first->line, c.tid.x, c.tid.y,
                            c.tid.z, c.file, c.line);
            }
        }
        for (coroutine & c : b.th) {
            if (c.state == T_BARRIER) {
                c.state = T_READY;
            }
        }
        b.n_bar = 0;
        return;
    }
    // deadlock: describe the first blocked warp and barrier
    char desc[1024];
    size_t len = 0;
    desc[0] = '\0';
    for (unsigned wi = 0; wi < b.warps.size() && len < sizeof(desc) - 200; wi++) {
        const warp_t & w = b.warps[wi];
        unsigned n_bar = 0;
        const coroutine * cs = nullptr;
        const coroutine * cb = nullptr;
        for (unsigned i = wi * 32; i < wi * 32 + w.n_lanes; i++) {
            const coroutine & c = b.th[i];
            if (c.state == T_BARRIER) {
                n_bar++;
                cb = cb ? cb : &c;
            } else if (c.state == T_SHFL) {
                cs = cs ? cs : &c;
            }
        }
        if (cs != nullptr) {
            len += (size_t) snprintf(desc + len, sizeof(desc) - len,
                                     "warp %u: %u lane(s) at __shfl_xor_sync (%s:%d), %u at __syncthreads%s%s%s%d%s, "
                                     "%u exited; ",
                                     wi, w.n_shfl, cs->file, cs->line, n_bar, cb ? " (" : "", cb ? cb->file : "",
                                     cb ? ":" : "", cb ? cb->line : 0, cb ? ")" : "", w.n_done);
            if (len >= sizeof(desc)) {
                len = sizeof(desc) - 1;
            }
        }
    }
    block_fatal("deadlock: no CUDA thread can proceed (%u at __syncthreads, %u exited of %u): %s", b.n_bar, b.n_done,
                b.nthreads, desc);
}

void run_block() {
    block_exec & b = g_block;
    const unsigned n = b.nthreads;
    b.n_done = 0;
    b.n_bar = 0;
    for (unsigned wi = 0; wi < b.warps.size(); wi++) {
        warp_t & w = b.warps[wi];
        w.n_lanes = n - wi * 32 < 32 ? n - wi * 32 : 32;
        w.n_shfl = 0;
        w.n_done = 0;
        w.gen = 0;
    }
    for (unsigned i = 0; i < n; i++) {
        coroutine & c = b.th[i];
        c.state = T_READY;
        c.stk = nullptr;
    }
    for (;;) {
        if (g_sched == S_RANDOM) {
            // every round (threads run until they reach a barrier or shuffle, or exit) in a new
            // random order: results that depend on the order of unsynchronised accesses change
            g_order.resize(n);
            for (unsigned i = 0; i < n; i++) {
                g_order[i] = i;
            }
            shuffle(g_order);
            for (unsigned i = 0; i < n; i++) {
                if (b.th[g_order[i]].state == T_READY) {
                    run(&b.th[g_order[i]]);
                }
            }
        } else if (g_sched == S_REVERSE) {
            for (unsigned i = n; i-- > 0;) {
                if (b.th[i].state == T_READY) {
                    run(&b.th[i]);
                }
            }
        } else {
            for (unsigned i = 0; i < n; i++) {
                if (b.th[i].state == T_READY) {
                    run(&b.th[i]);
                }
            }
        }
        if (b.n_done == n) {
            break;
        }
        release_step();
    }
}

} // namespace

// ---------------------------------------------------------------------------------------------

void run_kernel(const kernel_launch & l) {
    if (!g_env_read) {
        read_schedule_env();
    }
    ensure_fault_handler_on_this_thread();
    ensure_dyn_region();
    block_exec & b = g_block;
    b.l = &l;
    const dim3 bd = l.cfg.block, gd = l.cfg.grid;
    b.nthreads = bd.x * bd.y * bd.z;
    b.th.resize(b.nthreads);
    b.warps.resize((b.nthreads + 31) / 32);
    for (unsigned i = 0; i < b.nthreads; i++) {
        coroutine & c = b.th[i];
        c.lin = i;
        c.tid = uint3{ i % bd.x, (i / bd.x) % bd.y, i / (bd.x * bd.y) };
        c.lane = i % 32;
        c.warp = i / 32;
        c.file = "";
        c.line = 0;
    }
    tls.block_dim = bd;
    tls.grid_dim = gd;
    const size_t dyn_bytes = (l.cfg.shmem + 15) / 16 * 16;
    tls_dyn->shmem = l.cfg.shmem;
    tls_dyn_ptr = tls_dyn->base + MAX_SHARED_MEMORY - dyn_bytes;
    const uint64_t nblocks = (uint64_t) gd.x * gd.y * gd.z;
    if (g_sched == S_RANDOM) {
        g_block_ord.resize(nblocks);
        for (uint64_t k = 0; k < nblocks; k++) {
            g_block_ord[k] = k;
        }
        shuffle(g_block_ord);
    }
    for (uint64_t k = 0; k < nblocks; k++) {
        const uint64_t bk = g_sched == S_RANDOM ? g_block_ord[k] : (g_sched == S_REVERSE ? nblocks - 1 - k : k);
        tls.block_idx = uint3{ (unsigned) (bk % gd.x), (unsigned) ((bk / gd.x) % gd.y), (unsigned) (bk / ((uint64_t) gd.x * gd.y)) };
        if (dyn_bytes > 0) {
            memset(tls_dyn_ptr, 0xff, dyn_bytes); // uninitialised shared memory reads as NaN
        }
        run_block();
    }
    tls.cur = nullptr;
    b.l = nullptr;
}

void syncthreads(const char * file, int line) {
    coroutine * c = tls.cur;
    if (c == nullptr) {
        not_in_kernel("__syncthreads");
    }
    c->state = T_BARRIER;
    c->file = file;
    c->line = line;
    g_block.n_bar++;
    yield_to_scheduler(c);
}

uint64_t shfl_xor(unsigned mask, uint64_t bits, int size, int lane_mask, int width, const char * file, int line) {
    coroutine * c = tls.cur;
    if (c == nullptr) {
        not_in_kernel("__shfl_xor_sync");
    }
    warp_t & w = g_block.warps[c->warp];
    if (mask != 0xffffffffu) {
        thread_fatal("__shfl_xor_sync at %s:%d with mask 0x%08x: the emulator requires full-warp shuffles "
                     "(mask 0xffffffff)",
                     file, line, mask);
    }
    if (w.n_lanes != 32) {
        thread_fatal("__shfl_xor_sync at %s:%d: warp %u has only %u lane(s) (block size %u is not a multiple of 32), "
                     "mask 0xffffffff names missing lanes",
                     file, line, c->warp, w.n_lanes, g_block.nthreads);
    }
    if (width < 1 || width > 32 || (width & (width - 1)) != 0) {
        thread_fatal("__shfl_xor_sync at %s:%d: width %d is not a power of 2 in [1, 32]", file, line, width);
    }
    if (lane_mask < 0 || lane_mask > 31) {
        thread_fatal("__shfl_xor_sync at %s:%d: laneMask %d is not in [0, 31]", file, line, lane_mask);
    }
    const unsigned slot = w.gen & 1u;
    if (w.n_shfl == 0) {
        w.size[slot] = size;
    } else if (w.size[slot] != size) {
        thread_fatal("__shfl_xor_sync at %s:%d: %d-byte value while other lanes of the warp shuffle %d-byte values "
                     "(divergent shuffles)",
                     file, line, size, w.size[slot]);
    }
    w.buf[slot][c->lane] = bits;
    w.n_shfl++;
    c->state = T_SHFL;
    c->file = file;
    c->line = line;
    yield_to_scheduler(c);
    const unsigned lane = c->lane;
    const unsigned partner = lane ^ (unsigned) lane_mask;
    if (partner / (unsigned) width > lane / (unsigned) width) {
        return bits; // a later group of `width` lanes: own value
    }
    return w.buf[slot][partner];
}

void * dynamic_shared() {
    if (tls.cur == nullptr) {
        not_in_kernel("dynamic shared memory");
    }
    return tls_dyn_ptr;
}

void describe_thread(char * buf, size_t n) {
    const coroutine * c = tls.cur;
    if (c == nullptr) {
        snprintf(buf, n, "block (%u, %u, %u)", tls.block_idx.x, tls.block_idx.y, tls.block_idx.z);
        return;
    }
    snprintf(buf, n, "block (%u, %u, %u) thread (%u, %u, %u)", tls.block_idx.x, tls.block_idx.y, tls.block_idx.z,
             c->tid.x, c->tid.y, c->tid.z);
}

const char * executor_region(uintptr_t a) {
    static char msg[256];
    const size_t pg = (size_t) sysconf(_SC_PAGESIZE);
    for (const stack_rec * s : g_all_stacks) {
        if (a >= (uintptr_t) s->map && a < (uintptr_t) s->lo) {
            snprintf(msg, sizeof(msg), "guard page below a CUDA thread's stack (stack overflow: %zu KiB per thread)",
                     STACK_SIZE / 1024);
            return msg;
        }
    }
    for (const dyn_region * r : g_dyn_regions) {
        const uintptr_t end = (uintptr_t) r->base + MAX_SHARED_MEMORY;
        if (a >= end && a < end + pg) {
            snprintf(msg, sizeof(msg), "past the end of the block's dynamic shared memory (%zu bytes at launch)",
                     r->shmem);
            return msg;
        }
    }
    return nullptr;
}

} // namespace ggml_cuda_emu
