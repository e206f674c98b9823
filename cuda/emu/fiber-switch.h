// fiber-switch.h - the coroutine switch of the CPU emulators (cuda/emu/launch.cpp,
// metal/emu/launch.cpp), on x86-64 and aarch64: a few instructions that push the callee-saved
// registers on the current stack, store the stack pointer, load another one and pop the
// registers saved there. swapcontext would also save and restore the signal mask, a system call
// per switch. Elsewhere the emulators use ucontext (GGML_EMU_FIBER_SWITCH_ASM is not defined).
//
// GGML_EMU_FIBER_SWITCH(name) declares and defines
//   extern "C" void name(void ** save_sp, void * new_sp);
// which saves the current context on its stack, stores that stack pointer in *save_sp and
// resumes the context saved at new_sp. ggml_emu_fiber_frame prepares a fresh stack for it.
// Each emulator passes its own name (both libraries may be linked into one program).

#ifndef GGML_EMU_FIBER_SWITCH_H
#define GGML_EMU_FIBER_SWITCH_H

#if defined(__x86_64__)
#define GGML_EMU_FIBER_SWITCH_ASM 1
#define GGML_EMU_FIBER_SWITCH(name)                                                         \
    extern "C" void name(void ** save_sp, void * new_sp);                                   \
    asm(".text\n.p2align 4\n.globl " #name "\n.hidden " #name "\n.type " #name ", @function\n" \
        #name ":\n"                                                                         \
        "    pushq %rbp\n    pushq %rbx\n    pushq %r12\n"                                  \
        "    pushq %r13\n    pushq %r14\n    pushq %r15\n"                                  \
        "    movq %rsp, (%rdi)\n    movq %rsi, %rsp\n"                                      \
        "    popq %r15\n    popq %r14\n    popq %r13\n"                                     \
        "    popq %r12\n    popq %rbx\n    popq %rbp\n"                                     \
        "    ret\n.size " #name ", .-" #name "\n");
#elif defined(__aarch64__)
#define GGML_EMU_FIBER_SWITCH_ASM 1
#define GGML_EMU_FIBER_SWITCH(name)                                                         \
    extern "C" void name(void ** save_sp, void * new_sp);                                   \
    asm(".text\n.p2align 4\n.globl " #name "\n.hidden " #name "\n.type " #name ", %function\n" \
        #name ":\n"                                                                         \
        "    sub sp, sp, #160\n"                                                            \
        "    stp x19, x20, [sp, #0]\n    stp x21, x22, [sp, #16]\n"                         \
        "    stp x23, x24, [sp, #32]\n    stp x25, x26, [sp, #48]\n"                        \
        "    stp x27, x28, [sp, #64]\n    stp x29, x30, [sp, #80]\n"                        \
        "    stp d8, d9, [sp, #96]\n    stp d10, d11, [sp, #112]\n"                         \
        "    stp d12, d13, [sp, #128]\n    stp d14, d15, [sp, #144]\n"                      \
        "    mov x2, sp\n    str x2, [x0]\n    mov sp, x1\n"                                \
        "    ldp x19, x20, [sp, #0]\n    ldp x21, x22, [sp, #16]\n"                         \
        "    ldp x23, x24, [sp, #32]\n    ldp x25, x26, [sp, #48]\n"                        \
        "    ldp x27, x28, [sp, #64]\n    ldp x29, x30, [sp, #80]\n"                        \
        "    ldp d8, d9, [sp, #96]\n    ldp d10, d11, [sp, #112]\n"                         \
        "    ldp d12, d13, [sp, #128]\n    ldp d14, d15, [sp, #144]\n"                      \
        "    add sp, sp, #160\n"                                                            \
        "    ret\n.size " #name ", .-" #name "\n");
#endif

#ifdef GGML_EMU_FIBER_SWITCH_ASM
#include <stdint.h>
#include <string.h>

// The stack pointer to switch to for a fiber that starts in entry (which must never return)
// on the stack that ends at stack_end: the frame the switch pops, at the ABI's 16-byte
// alignment. x86-64: r15 r14 r13 r12 rbx rbp (zeroed), entry as the return address, a zeroed
// caller's return address; aarch64: 160 bytes, x19..x28, x29, x30 = entry, d8..d15.
static inline void * ggml_emu_fiber_frame(char * stack_end, void (*entry)(void)) {
    const uintptr_t top = (uintptr_t) stack_end & ~(uintptr_t) 15;
#if defined(__x86_64__)
    void ** f = (void **) (top - 64);
    memset(f, 0, 64);
    f[6] = (void *) entry;
#else
    void ** f = (void **) (top - 160);
    memset(f, 0, 160);
    f[11] = (void *) entry;
#endif
    return f;
}
#endif

#endif // GGML_EMU_FIBER_SWITCH_H
