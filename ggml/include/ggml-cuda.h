// ggml-cuda.h - the CUDA backend (built with `make cuda`, used from Go with `-tags cuda`).
// API-compatible with the backend-level functions of ggml b3bcd556's CUDA backend.
//
// Buffer types: device memory ("CUDA<n>"), pinned host memory usable by the CPU backend
// ("CUDA_Host"), and weights split by row ranges across devices ("CUDA_Split", matrix
// multiplication only; works with one device).

#ifndef GGML_CUDA_H
#define GGML_CUDA_H

#include "ggml.h"
#include "ggml-backend.h"

#ifdef  __cplusplus
extern "C" {
#endif

#define GGML_CUDA_MAX_DEVICES 16

// backend on device `device` (NULL when the device does not exist or cannot be initialised)
GGML_API GGML_CALL ggml_backend_t ggml_backend_cuda_init(int device);

GGML_API GGML_CALL bool ggml_backend_is_cuda(ggml_backend_t backend);

// device memory of one device
GGML_API GGML_CALL ggml_backend_buffer_type_t ggml_backend_cuda_buffer_type(int device);

// rows split across devices: tensor_split[i] is the share of device i (one entry per device is
// read, so an array of GGML_CUDA_MAX_DEVICES entries always suffices; normalised; NULL or all
// zero: in proportion to device memory)
GGML_API GGML_CALL ggml_backend_buffer_type_t ggml_backend_cuda_split_buffer_type(const float * tensor_split);

// pinned host memory, faster to copy to and from the devices; the CPU backend computes on it
GGML_API GGML_CALL ggml_backend_buffer_type_t ggml_backend_cuda_host_buffer_type(void);

GGML_API GGML_CALL int  ggml_backend_cuda_get_device_count(void);
GGML_API GGML_CALL void ggml_backend_cuda_get_device_description(int device, char * description, size_t description_size);
GGML_API GGML_CALL void ggml_backend_cuda_get_device_memory(int device, size_t * free, size_t * total);

//
// ggml-go extensions
//

// Register every device as backend "CUDA<i>" in the backend registry (idempotent; a no-op when
// no device is present). Called by the Go package's cuda build; C programs call it themselves.
GGML_API GGML_CALL void ggml_x_backend_cuda_register(void);

#ifdef  __cplusplus
}
#endif

#endif // GGML_CUDA_H
