// emu_internal.h - the C++ side of the emulator: the signature every kernel has (the
// parameters of GGML_METAL_KERNEL_ARGS in metal/common.metal, as the shim compiles them).

#ifndef GGML_METAL_EMU_INTERNAL_H
#define GGML_METAL_EMU_INTERNAL_H

#include "metal_stdlib"
#include "emu.h"
#include "../ggml-metal-kargs.h"

typedef void (*ggml_metal_emu_kernel_fn)(const ggml_metal_kargs & args, const char * src0,
                                         const char * src1, const char * src2, char * dst,
                                         char * shmem, metal::uint3 tgpig, metal::uint3 tpitg,
                                         metal::uint3 ntg, uint tiisg, uint sgitg);

ggml_metal_emu_kernel_fn ggml_metal_emu_kernel_fn_of(const ggml_metal_emu_kernel * k);

#endif // GGML_METAL_EMU_INTERNAL_H
