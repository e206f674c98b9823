// cublas_v2.h (host emulator) - the cuBLAS subset used by cuda/*.cu (handles, streams,
// cublasGemmEx), executed on the CPU by cuda/emu/cublas.cpp. Enum values follow cuBLAS.

#ifndef GGML_CUDA_EMU_CUBLAS_V2_H
#define GGML_CUDA_EMU_CUBLAS_V2_H

#include "cuda_runtime.h"
#include "cuda_fp16.h"

typedef enum {
    CUBLAS_STATUS_SUCCESS          = 0,
    CUBLAS_STATUS_NOT_INITIALIZED  = 1,
    CUBLAS_STATUS_ALLOC_FAILED     = 3,
    CUBLAS_STATUS_INVALID_VALUE    = 7,
    CUBLAS_STATUS_ARCH_MISMATCH    = 8,
    CUBLAS_STATUS_MAPPING_ERROR    = 11,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR   = 14,
    CUBLAS_STATUS_NOT_SUPPORTED    = 15,
    CUBLAS_STATUS_LICENSE_ERROR    = 16,
} cublasStatus_t;

typedef enum {
    CUBLAS_OP_N = 0,
    CUBLAS_OP_T = 1,
    CUBLAS_OP_C = 2,
} cublasOperation_t;

typedef enum cudaDataType_t {
    CUDA_R_32F  = 0,
    CUDA_R_64F  = 1,
    CUDA_R_16F  = 2,
    CUDA_R_8I   = 3,
    CUDA_R_32I  = 10,
    CUDA_R_16BF = 14,
} cudaDataType;

typedef enum {
    CUBLAS_COMPUTE_16F           = 64,
    CUBLAS_COMPUTE_16F_PEDANTIC  = 65,
    CUBLAS_COMPUTE_32F           = 68,
    CUBLAS_COMPUTE_32F_PEDANTIC  = 69,
    CUBLAS_COMPUTE_32F_FAST_16F  = 74,
    CUBLAS_COMPUTE_32F_FAST_16BF = 75,
    CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
    CUBLAS_COMPUTE_64F           = 70,
    CUBLAS_COMPUTE_64F_PEDANTIC  = 71,
    CUBLAS_COMPUTE_32I           = 72,
    CUBLAS_COMPUTE_32I_PEDANTIC  = 73,
} cublasComputeType_t;

typedef enum {
    CUBLAS_GEMM_DEFAULT           = -1,
    CUBLAS_GEMM_DEFAULT_TENSOR_OP = 99,
} cublasGemmAlgo_t;

typedef struct cublasContext * cublasHandle_t;

cublasStatus_t cublasCreate(cublasHandle_t * handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream);
cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t * stream);
const char * cublasGetStatusString(cublasStatus_t status);

// C = alpha * op(A) * op(B) + beta * C, column-major; alpha/beta are host pointers of the
// compute type's scale type (__half for CUBLAS_COMPUTE_16F*, float otherwise)
cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void * alpha, const void * A, cudaDataType Atype, int lda, const void * B,
                            cudaDataType Btype, int ldb, const void * beta, void * C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo);

// batchCount products C_i = alpha * op(A_i) * op(B_i) + beta * C_i, X_i = X + i * strideX elements
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void * alpha, const void * A, cudaDataType Atype,
                                          int lda, long long int strideA, const void * B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void * beta, void * C, cudaDataType Ctype,
                                          int ldc, long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo);

#endif // GGML_CUDA_EMU_CUBLAS_V2_H
