// cuda_runtime.h (host emulator) - the CUDA runtime subset used by cuda/*.cu, executed on the CPU
// by cuda/emu. Names, signatures and enum values follow the CUDA runtime API.

#ifndef GGML_CUDA_EMU_CUDA_RUNTIME_H
#define GGML_CUDA_EMU_CUDA_RUNTIME_H

#include "ggml_cuda_emu.h"

// devices
cudaError_t cudaGetDeviceCount(int * count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int * device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp * prop, int device);
cudaError_t cudaDeviceGetAttribute(int * value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaMemGetInfo(size_t * free, size_t * total);

// errors
cudaError_t cudaGetLastError(void);
cudaError_t cudaPeekAtLastError(void);
const char * cudaGetErrorString(cudaError_t error);
const char * cudaGetErrorName(cudaError_t error);

// memory
cudaError_t cudaMalloc(void ** devPtr, size_t size);
cudaError_t cudaFree(void * devPtr);
cudaError_t cudaMallocHost(void ** ptr, size_t size);
cudaError_t cudaFreeHost(void * ptr);

template <class T> inline cudaError_t cudaMalloc(T ** devPtr, size_t size) {
    return cudaMalloc((void **) devPtr, size);
}
template <class T> inline cudaError_t cudaMallocHost(T ** ptr, size_t size) {
    return cudaMallocHost((void **) ptr, size);
}

cudaError_t cudaMemcpy(void * dst, const void * src, size_t count, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void * dst, const void * src, size_t count, cudaMemcpyKind kind, cudaStream_t stream = 0);
cudaError_t cudaMemcpy2D(void * dst, size_t dpitch, const void * src, size_t spitch, size_t width, size_t height,
                         cudaMemcpyKind kind);
cudaError_t cudaMemcpy2DAsync(void * dst, size_t dpitch, const void * src, size_t spitch, size_t width, size_t height,
                              cudaMemcpyKind kind, cudaStream_t stream = 0);
cudaError_t cudaMemcpyPeer(void * dst, int dstDevice, const void * src, int srcDevice, size_t count);
cudaError_t cudaMemcpyPeerAsync(void * dst, int dstDevice, const void * src, int srcDevice, size_t count,
                                cudaStream_t stream = 0);
cudaError_t cudaMemset(void * devPtr, int value, size_t count);
cudaError_t cudaMemsetAsync(void * devPtr, int value, size_t count, cudaStream_t stream = 0);

// streams
cudaError_t cudaStreamCreate(cudaStream_t * pStream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t * pStream, unsigned int flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamQuery(cudaStream_t stream);

#endif // GGML_CUDA_EMU_CUDA_RUNTIME_H
