// ggml-metal.h - the Metal backend (Apple GPUs; Go build tag metal on darwin, or the Linux
// emulator of metal/emu with the tags metal metalemu).
// API-compatible with the backend-level functions of ggml b3bcd556's Metal backend.
//
// One buffer type, "Metal": page-aligned host memory shared with the GPU, so the CPU backend
// computes on it too (is_host) and weights can be mapped from a file
// (ggml_backend_metal_buffer_from_ptr). Kernels are compiled at initialisation from source
// embedded in the program; no files are read at run time.

#ifndef GGML_METAL_H
#define GGML_METAL_H

#include "ggml.h"
#include "ggml-backend.h"

#include <stdbool.h>
#include <stddef.h>

// the most MTLBuffers one mapped region is split into (regions larger than the device's
// maxBufferLength become overlapping views)
#define GGML_METAL_MAX_BUFFERS 64
// the most command buffers a graph is encoded into
#define GGML_METAL_MAX_COMMAND_BUFFERS 32

#ifdef  __cplusplus
extern "C" {
#endif

// the log callback of the reference's ggml.h (identical redefinitions are allowed in C11)
typedef void (*ggml_log_callback)(enum ggml_log_level level, const char * text, void * user_data);

// route the backend's messages (device name, kernel compilation) to log_callback; NULL restores
// the default (stderr for errors and warnings only)
GGML_API void ggml_backend_metal_log_set_callback(ggml_log_callback log_callback, void * user_data);

// backend on the system's default Metal device (NULL when there is none or the kernels do not
// compile; the reason is in ggml_x_last_error in recoverable mode)
GGML_API ggml_backend_t ggml_backend_metal_init(void);

GGML_API bool ggml_backend_is_metal(ggml_backend_t backend);

// a buffer over existing host memory (e.g. a mapped model file): data must be page-aligned;
// max_size is the size of the largest tensor, so that views of at most the device's
// maxBufferLength overlap by that much and every tensor lies wholly within one of them
GGML_API GGML_CALL ggml_backend_buffer_t ggml_backend_metal_buffer_from_ptr(void * data, size_t size, size_t max_size);

// number of command buffers a graph is split into (1 .. GGML_METAL_MAX_COMMAND_BUFFERS)
GGML_API void ggml_backend_metal_set_n_cb(ggml_backend_t backend, int n_cb);

GGML_API GGML_CALL ggml_backend_buffer_type_t ggml_backend_metal_buffer_type(void);

// whether the device supports Apple GPU family `family` (1 = MTLGPUFamilyApple1, ... 7 = Apple7)
GGML_API bool ggml_backend_metal_supports_family(ggml_backend_t backend, int family);

//
// ggml-go extensions
//

// register the default device as backend "Metal" (idempotent; a no-op without a device)
GGML_API GGML_CALL void ggml_x_backend_metal_register(void);

// the kernel source compiled by ggml_backend_metal_init (copied); the Go package passes its
// embedded source, C programs link build/metal*/metal-source.o, which sets it at load time
GGML_API void ggml_x_metal_set_source(const char * source, size_t len);

#ifdef  __cplusplus
}
#endif

#endif // GGML_METAL_H
