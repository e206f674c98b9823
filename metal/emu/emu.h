// emu.h - the interface between the emulator's fake Metal objects (device.m, Objective-C) and
// its kernel executor (launch.cpp, C++): kernels are looked up by name in the table of kernels
// compiled from metal/*.metal as C++ (kernels.cpp) and run over a grid of threadgroups.

#ifndef GGML_METAL_EMU_H
#define GGML_METAL_EMU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ggml_metal_emu_kernel ggml_metal_emu_kernel;

// the compiled kernel named name (NULL when there is none)
const ggml_metal_emu_kernel * ggml_metal_emu_kernel_find(const char * name);

// the most threads per threadgroup the emulated device runs
#define GGML_METAL_EMU_MAX_THREADS 1024
// the most threadgroup memory a dispatch may request (as Apple GPUs: 32 KiB)
#define GGML_METAL_EMU_MAX_TG_MEMORY 32768
// buffer indices a kernel reads (0: argument bytes, 1..4: buffers)
#define GGML_METAL_EMU_MAX_BINDINGS 5

typedef struct {
    const void * bind[GGML_METAL_EMU_MAX_BINDINGS]; // contents (+ offset) or the bytes of setBytes
    size_t tg_memory;                               // threadgroup(0) length
    size_t grid[3];                                 // threadgroups per grid
    size_t tg[3];                                   // threads per threadgroup
} ggml_metal_emu_dispatch;

// run kernel k over the grid; returns 0, or -1 with a message in err (a configuration error: the
// dispatch does not run). Faults inside kernels (deadlocks, SIMD functions reached by only part
// of a SIMD group) abort the process with a report.
int ggml_metal_emu_run(const ggml_metal_emu_kernel * k, const ggml_metal_emu_dispatch * d, char * err, size_t err_size);

// the number of kernels in the table and the name of kernel i (for self-tests)
int          ggml_metal_emu_kernel_count(void);
const char * ggml_metal_emu_kernel_name(int i);

#ifdef __cplusplus
}
#endif

#endif // GGML_METAL_EMU_H
