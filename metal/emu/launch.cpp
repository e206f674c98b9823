// launch.cpp - the emulator's kernel executor. Threadgroups run one after another on the
// calling thread; each thread of a threadgroup is a fiber (pooled 256 KiB stacks). Fibers
// switch with a few instructions of assembly on x86-64 and aarch64 (callee-saved registers and
// the stack pointer): swapcontext saves and restores the signal mask, a system call per switch,
// which took as much time as the kernels themselves. ucontext elsewhere.
// Fibers run until they finish or reach a synchronisation point:
//   * threadgroup_barrier: released when every not-yet-finished thread of the threadgroup waits
//     at one;
//   * simd_sum / simd_max / SIMD-group matrix operations: released per SIMD group (32 consecutive thread indices) when every
//     not-yet-finished lane of the group waits at the same function; the result covers those
//     lanes (finished lanes are inactive, as on a GPU).
// SIMD groups are released before barriers. When nothing can proceed (some threads at a
// barrier, others at a SIMD function, or lanes at different functions) the process aborts with
// a report: on a GPU this hangs or is undefined. Threadgroup memory starts as 0xff bytes (NaN)
// in every threadgroup, as fresh GPU memory is garbage.

// the standard headers first: the shim defines `thread`, `device` and `constant` as macros
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

#include "emu_internal.h"

#include "cuda/emu/fiber-switch.h" // shared with the CUDA emulator

#ifndef GGML_EMU_FIBER_SWITCH_ASM
#define GGML_METAL_EMU_UCONTEXT 1
#endif

#ifndef GGML_METAL_EMU_UCONTEXT
GGML_EMU_FIBER_SWITCH(ggml_metal_emu_switch)
#endif

namespace {

enum state { READY, AT_BARRIER, AT_SIMD, DONE };
enum simd_op { SIMD_SUM, SIMD_MAX, SIMD_SYNC };

struct fiber {
#ifdef GGML_METAL_EMU_UCONTEXT
    ucontext_t ctx;
#else
    void * sp;
#endif
    state st;
    simd_op op;
    float val;
    uint index;
};

struct group {
    ggml_metal_emu_kernel_fn fn;
    const ggml_metal_emu_dispatch * d;
    metal::uint3 tgpig, ntg;
    char * shmem;
    std::vector<fiber> fibers;
#ifdef GGML_METAL_EMU_UCONTEXT
    ucontext_t main;
#else
    void * main_sp;
#endif
};

const size_t STACK_SIZE = 256 * 1024;

thread_local group * cur_group = nullptr;
thread_local fiber * cur_fiber = nullptr;
thread_local std::vector<char *> stacks; // pooled; each preceded by a PROT_NONE guard page

char * stack_at(size_t i) {
    while (stacks.size() <= i) {
        const size_t page = (size_t) sysconf(_SC_PAGESIZE);
        void * p = mmap(nullptr, STACK_SIZE + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            std::fprintf(stderr, "ggml_metal_emu: cannot map a fiber stack\n");
            std::abort();
        }
        mprotect(p, page, PROT_NONE);
        stacks.push_back((char *) p + page);
    }
    return stacks[i];
}

[[noreturn]] void fault(const char * what) {
    std::fprintf(stderr, "ggml_metal_emu: %s\n", what);
    std::abort();
}

void fiber_main() {
    group * g = cur_group;
    fiber * f = cur_fiber;
    const uint t = f->index;
    const metal::uint3 tpitg = {t % g->ntg.x, (t / g->ntg.x) % g->ntg.y, t / (g->ntg.x * g->ntg.y)};
    const ggml_metal_kargs & args = *(const ggml_metal_kargs *) g->d->bind[0];
    g->fn(args, (const char *) g->d->bind[1], (const char *) g->d->bind[2], (const char *) g->d->bind[3],
          (char *) g->d->bind[4], g->shmem, g->tgpig, tpitg, g->ntg, t % 32, t / 32);
    f->st = DONE;
#ifndef GGML_METAL_EMU_UCONTEXT
    ggml_metal_emu_switch(&f->sp, g->main_sp); // a finished fiber is not resumed
    fault("internal error: a finished fiber was resumed");
#endif
    // returning resumes uc_link (the scheduler)
}

// switch from the running fiber back to the scheduler
void yield_to_scheduler() {
    fiber * f = cur_fiber;
    if (f == nullptr) {
        fault("threadgroup_barrier or a SIMD-group function called outside a kernel");
    }
#ifdef GGML_METAL_EMU_UCONTEXT
    swapcontext(&f->ctx, &cur_group->main);
#else
    ggml_metal_emu_switch(&f->sp, cur_group->main_sp);
#endif
}

float simd_wait(simd_op op, float v) {
    fiber * f = cur_fiber;
    if (f == nullptr) {
        fault("a SIMD-group function called outside a kernel");
    }
    f->st = AT_SIMD;
    f->op = op;
    f->val = v;
    yield_to_scheduler();
    return f->val;
}

// release complete SIMD groups; true when one was released
bool release_simd(group & g) {
    bool released = false;
    const size_t n = g.fibers.size();
    for (size_t s = 0; s < n; s += 32) {
        const size_t e = s + 32 < n ? s + 32 : n;
        bool all = true, any = false;
        simd_op op = SIMD_SUM;
        for (size_t i = s; i < e; i++) {
            const fiber & f = g.fibers[i];
            if (f.st == DONE) {
                continue;
            }
            if (f.st != AT_SIMD || (any && f.op != op)) {
                all = false;
                break;
            }
            op = f.op;
            any = true;
        }
        if (!all || !any) {
            continue;
        }
        float r = op == SIMD_SUM ? 0.0f : -INFINITY;
        for (size_t i = s; i < e; i++) { // lane order, as a fixed reduction tree would not be
            if (g.fibers[i].st == AT_SIMD) {
                if (op == SIMD_SUM) {
                    r += g.fibers[i].val;
                } else if (op == SIMD_MAX) {
                    r = g.fibers[i].val > r ? g.fibers[i].val : r;
                }
            }
        }
        for (size_t i = s; i < e; i++) {
            if (g.fibers[i].st == AT_SIMD) {
                g.fibers[i].val = r;
                g.fibers[i].st = READY;
            }
        }
        released = true;
    }
    return released;
}

// getcontext/swapcontext return twice: kept out of run_group's loops (-Wclobbered)
__attribute__((noinline)) void init_fiber(group & g, size_t i) {
    fiber & f = g.fibers[i];
    f.st = READY;
    f.index = (uint) i;
#ifdef GGML_METAL_EMU_UCONTEXT
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stack_at(i);
    f.ctx.uc_stack.ss_size = STACK_SIZE;
    f.ctx.uc_link = &g.main;
    makecontext(&f.ctx, fiber_main, 0);
#else
    f.sp = ggml_emu_fiber_frame(stack_at(i) + STACK_SIZE, fiber_main);
#endif
}

__attribute__((noinline)) void resume(group & g, fiber & f) {
    cur_fiber = &f;
#ifdef GGML_METAL_EMU_UCONTEXT
    swapcontext(&g.main, &f.ctx);
#else
    ggml_metal_emu_switch(&g.main_sp, f.sp);
#endif
    cur_fiber = nullptr;
}

void run_group(group & g) {
    const size_t n = g.fibers.size();
    for (size_t i = 0; i < n; i++) {
        init_fiber(g, i);
    }
    size_t live = n;
    while (live > 0) {
        for (size_t i = 0; i < n; i++) {
            fiber & f = g.fibers[i];
            if (f.st != READY) {
                continue;
            }
            resume(g, f);
            if (f.st == DONE) {
                live--;
            }
        }
        if (live == 0 || release_simd(g)) {
            continue;
        }
        size_t at_barrier = 0;
        for (const fiber & f : g.fibers) {
            at_barrier += f.st == AT_BARRIER;
        }
        if (at_barrier != live) {
            char msg[256];
            std::snprintf(msg, sizeof(msg),
                          "deadlock in threadgroup (%u, %u, %u): %zu of %zu running threads wait at a barrier, "
                          "the others at SIMD-group functions their SIMD group does not complete",
                          g.tgpig.x, g.tgpig.y, g.tgpig.z, at_barrier, live);
            fault(msg);
        }
        for (fiber & f : g.fibers) {
            if (f.st == AT_BARRIER) {
                f.st = READY;
            }
        }
    }
}

} // namespace

extern "C" void ggml_metal_emu_threadgroup_barrier(void) {
    fiber * f = cur_fiber;
    if (f == nullptr) {
        fault("threadgroup_barrier called outside a kernel");
    }
    f->st = AT_BARRIER;
    yield_to_scheduler();
}

extern "C" float ggml_metal_emu_simd_sum(float v) { return simd_wait(SIMD_SUM, v); }
extern "C" float ggml_metal_emu_simd_max(float v) { return simd_wait(SIMD_MAX, v); }
extern "C" void ggml_metal_emu_simd_sync(void) { (void) simd_wait(SIMD_SYNC, 0.0f); }

extern "C" int ggml_metal_emu_run(const ggml_metal_emu_kernel * k, const ggml_metal_emu_dispatch * d,
                                  char * err, size_t err_size) {
    const size_t nthreads = d->tg[0] * d->tg[1] * d->tg[2];
    if (k == nullptr || d->bind[0] == nullptr) {
        std::snprintf(err, err_size, "dispatch without a pipeline state or argument bytes");
        return -1;
    }
    if (nthreads == 0 || nthreads > GGML_METAL_EMU_MAX_THREADS) {
        std::snprintf(err, err_size, "threads per threadgroup %zux%zux%zu: must be 1..%d in all",
                      d->tg[0], d->tg[1], d->tg[2], GGML_METAL_EMU_MAX_THREADS);
        return -1;
    }
    if (d->grid[0] == 0 || d->grid[1] == 0 || d->grid[2] == 0) {
        std::snprintf(err, err_size, "empty grid %zux%zux%zu", d->grid[0], d->grid[1], d->grid[2]);
        return -1;
    }
    if (d->tg_memory > GGML_METAL_EMU_MAX_TG_MEMORY || d->tg_memory % 16 != 0) {
        std::snprintf(err, err_size, "threadgroup memory %zu bytes: must be a multiple of 16, at most %d",
                      d->tg_memory, GGML_METAL_EMU_MAX_TG_MEMORY);
        return -1;
    }
    if (cur_group != nullptr) {
        std::snprintf(err, err_size, "dispatch from inside a kernel");
        return -1;
    }
    group g;
    g.fn = ggml_metal_emu_kernel_fn_of(k);
    g.d = d;
    g.ntg = {(uint) d->tg[0], (uint) d->tg[1], (uint) d->tg[2]};
    g.fibers.resize(nthreads);
    std::vector<char> shmem(d->tg_memory + 16);
    g.shmem = shmem.data();
    cur_group = &g;
    for (size_t z = 0; z < d->grid[2]; z++) {
        for (size_t y = 0; y < d->grid[1]; y++) {
            for (size_t x = 0; x < d->grid[0]; x++) {
                std::memset(g.shmem, 0xff, d->tg_memory);
                g.tgpig = {(uint) x, (uint) y, (uint) z};
                run_group(g);
            }
        }
    }
    cur_group = nullptr;
    return 0;
}
