// cublas.cpp - the emulated cuBLAS subset: handles bound to the device current at creation, a
// stream per handle, and cublasGemmEx / cublasGemmStridedBatchedEx with cuBLAS's column-major
// semantics and argument checks.
// The product is queued on the handle's stream and computed when the stream is flushed, with
// float accumulation in k order; CUBLAS_COMPUTE_32F_FAST_TF32 rounds A and B to TF32 (10 explicit
// mantissa bits, nearest even) and CUBLAS_COMPUTE_32F_FAST_16F to F16 first; CUBLAS_COMPUTE_16F
// rounds the accumulator to F16 after every step.

#include "emu_internal.h"

#include "cublas_v2.h"

#include <stdio.h>
#include <string.h>

#include <set>
#include <vector>

struct cublasContext {
    int          device;
    cudaStream_t stream; // as given (NULL: the device's default stream)
    bool         alive;
};

namespace ggml_cuda_emu {
namespace {

std::set<cublasContext *> g_handles; // never freed: stale handles stay recognisable

cublasStatus_t blas_fail(cublasStatus_t st, const char * fmt, ...) __attribute__((format(printf, 2, 3)));

const char * status_name(cublasStatus_t st) {
    switch (st) {
        case CUBLAS_STATUS_SUCCESS:          return "CUBLAS_STATUS_SUCCESS";
        case CUBLAS_STATUS_NOT_INITIALIZED:  return "CUBLAS_STATUS_NOT_INITIALIZED";
        case CUBLAS_STATUS_ALLOC_FAILED:     return "CUBLAS_STATUS_ALLOC_FAILED";
        case CUBLAS_STATUS_INVALID_VALUE:    return "CUBLAS_STATUS_INVALID_VALUE";
        case CUBLAS_STATUS_ARCH_MISMATCH:    return "CUBLAS_STATUS_ARCH_MISMATCH";
        case CUBLAS_STATUS_MAPPING_ERROR:    return "CUBLAS_STATUS_MAPPING_ERROR";
        case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
        case CUBLAS_STATUS_INTERNAL_ERROR:   return "CUBLAS_STATUS_INTERNAL_ERROR";
        case CUBLAS_STATUS_NOT_SUPPORTED:    return "CUBLAS_STATUS_NOT_SUPPORTED";
        case CUBLAS_STATUS_LICENSE_ERROR:    return "CUBLAS_STATUS_LICENSE_ERROR";
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

cublasStatus_t blas_fail(cublasStatus_t st, const char * fmt, ...) {
    const char * q = getenv("GGML_CUDA_EMU_QUIET");
    if (q == nullptr || q[0] == '\0' || strcmp(q, "0") == 0) {
        char msg[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        fprintf(stderr, "ggml_cuda_emu: %s -> %s\n", msg, status_name(st));
    }
    return st;
}

bool live(cublasHandle_t h) {
    return h != nullptr && g_handles.count(h) != 0 && h->alive;
}

size_t type_size(cudaDataType t) {
    switch (t) {
        case CUDA_R_32F: return 4;
        case CUDA_R_16F: return 2;
        default:         return 0;
    }
}

const char * type_name(cudaDataType t) {
    switch (t) {
        case CUDA_R_32F:  return "CUDA_R_32F";
        case CUDA_R_64F:  return "CUDA_R_64F";
        case CUDA_R_16F:  return "CUDA_R_16F";
        case CUDA_R_8I:   return "CUDA_R_8I";
        case CUDA_R_32I:  return "CUDA_R_32I";
        case CUDA_R_16BF: return "CUDA_R_16BF";
    }
    return "unknown cudaDataType";
}

float tf32_round(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof(x));
    if ((x & 0x7f800000u) != 0x7f800000u) { // finite: round to 10 mantissa bits, nearest even
        x += 0xfffu + ((x >> 13) & 1u);
        x &= ~0x1fffu;
    }
    memcpy(&f, &x, sizeof(f));
    return f;
}

float load(const char * p, cudaDataType t) {
    if (t == CUDA_R_16F) {
        unsigned short h;
        memcpy(&h, p, 2);
        return f16_bits_to_f32(h);
    }
    float f;
    memcpy(&f, p, 4);
    return f;
}

void store(char * p, cudaDataType t, float v) {
    if (t == CUDA_R_16F) {
        const unsigned short h = f32_to_f16_bits(v);
        memcpy(p, &h, 2);
    } else {
        memcpy(p, &v, 4);
    }
}

enum class round_mode { none, tf32, f16 };

struct gemm_op final : op {
    int device;
    bool ta, tb;
    int m, n, k;
    float alpha, beta;
    const char * A;
    const char * B;
    char * C;
    cudaDataType at, bt, ct;
    int lda, ldb, ldc;
    round_mode in_round;
    bool half_acc;
    const char * api;
    long long stride_a, stride_b, stride_c; // elements between the batch's matrices
    int batch;

    void exec() override {
        cur_activity = activity{ api, false, device };
        open_devices(1u << device);
        const char * A0 = A;
        const char * B0 = B;
        char * C0 = C;
        for (int bi = 0; bi < batch; bi++) {
            A = A0 + (ptrdiff_t) (bi * stride_a) * (ptrdiff_t) type_size(at);
            B = B0 + (ptrdiff_t) (bi * stride_b) * (ptrdiff_t) type_size(bt);
            C = C0 + (ptrdiff_t) (bi * stride_c) * (ptrdiff_t) type_size(ct);
            exec_one();
        }
        A = A0;
        B = B0;
        C = C0;
    }

    void exec_one() {
        const size_t as = type_size(at), bs = type_size(bt), cs = type_size(ct);
        auto rnd = [this](float v) {
            switch (in_round) {
                case round_mode::tf32: return tf32_round(v);
                case round_mode::f16:  return f16_bits_to_f32(f32_to_f16_bits(v));
                default:               return v;
            }
        };
        // op(A) as m rows of k, op(B) as n columns of k: contiguous in k
        std::vector<float> a((size_t) m * k), b((size_t) n * k);
        for (int i = 0; i < m; i++) {
            for (int l = 0; l < k; l++) {
                const size_t off = ta ? (size_t) i * lda + l : (size_t) l * lda + i;
                a[(size_t) i * k + l] = rnd(load(A + off * as, at));
            }
        }
        for (int j = 0; j < n; j++) {
            for (int l = 0; l < k; l++) {
                const size_t off = tb ? (size_t) l * ldb + j : (size_t) j * ldb + l;
                b[(size_t) j * k + l] = rnd(load(B + off * bs, bt));
            }
        }
        for (int j = 0; j < n; j++) {
            const float * bj = b.data() + (size_t) j * k;
            for (int i = 0; i < m; i++) {
                const float * ai = a.data() + (size_t) i * k;
                float acc = 0.0f;
                if (half_acc) {
                    for (int l = 0; l < k; l++) {
                        acc = f16_bits_to_f32(f32_to_f16_bits(acc + ai[l] * bj[l]));
                    }
                } else {
                    for (int l = 0; l < k; l++) {
                        acc += ai[l] * bj[l];
                    }
                }
                char * cp = C + ((size_t) j * ldc + i) * cs;
                float v = alpha * acc;
                if (beta != 0.0f) {
                    v += beta * load(cp, ct); // beta == 0: C is not read (may hold NaN)
                }
                store(cp, ct, v);
            }
        }
    }
};

// [p, p + bytes of a rows x cols column-major matrix with leading dimension ld) on device?
bool operand_ok(const void * p, int rows, int cols, int ld, size_t es, int device, const char ** why) {
    if (rows == 0 || cols == 0) {
        return true;
    }
    const size_t bytes = ((size_t) (cols - 1) * (size_t) ld + (size_t) rows) * es;
    const mem_span s = classify(p, bytes);
    if (s.kind == MEM_DEVICE && s.device == device) {
        return true;
    }
    if (s.kind == MEM_PINNED) {
        return true;
    }
    *why = s.kind == MEM_BAD ? s.why
         : s.kind == MEM_DEVICE ? "device memory of another device"
                                : "host memory (not from cudaMalloc)";
    return false;
}

} // namespace
} // namespace ggml_cuda_emu

using namespace ggml_cuda_emu;

cublasStatus_t cublasCreate(cublasHandle_t * handle) {
    guard lk(big_lock());
    if (handle == nullptr) {
        return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "cublasCreate: NULL handle");
    }
    if (device_count() == 0) {
        return blas_fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasCreate: no device");
    }
    cublasContext * h = new cublasContext;
    h->device = current_device();
    h->stream = nullptr;
    h->alive = true;
    g_handles.insert(h);
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
    guard lk(big_lock());
    if (!live(handle)) {
        return blas_fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasDestroy(%p): not a live handle", (void *) handle);
    }
    // work queued through the handle completes first
    cudaStream_t s = handle->stream == nullptr ? default_stream(handle->device) : resolve_stream(handle->stream);
    if (s != nullptr) {
        flush_stream_of(s);
    }
    handle->alive = false;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
    guard lk(big_lock());
    if (!live(handle)) {
        return blas_fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasSetStream(%p): not a live handle", (void *) handle);
    }
    if (stream != nullptr && resolve_stream(stream) == nullptr) {
        return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "cublasSetStream: invalid stream %p", (void *) stream);
    }
    handle->stream = stream;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream(cublasHandle_t handle, cudaStream_t * stream) {
    guard lk(big_lock());
    if (!live(handle)) {
        return blas_fail(CUBLAS_STATUS_NOT_INITIALIZED, "cublasGetStream(%p): not a live handle", (void *) handle);
    }
    if (stream == nullptr) {
        return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "cublasGetStream: NULL stream");
    }
    *stream = handle->stream;
    return CUBLAS_STATUS_SUCCESS;
}

const char * cublasGetStatusString(cublasStatus_t status) {
    return status_name(status);
}

static cublasStatus_t gemm_impl(const char * api, cublasHandle_t handle, cublasOperation_t transa,
                                cublasOperation_t transb, int m, int n, int k, const void * alpha, const void * A,
                                cudaDataType Atype, int lda, long long strideA, const void * B, cudaDataType Btype,
                                int ldb, long long strideB, const void * beta, void * C, cudaDataType Ctype, int ldc,
                                long long strideC, int batch, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    guard lk(big_lock());
    if (!live(handle)) {
        return blas_fail(CUBLAS_STATUS_NOT_INITIALIZED, "%s: %p is not a live handle", api, (void *) handle);
    }
    const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
    const int a_rows = ta ? k : m, a_cols = ta ? m : k;
    const int b_rows = tb ? n : k, b_cols = tb ? k : n;
    auto mx1 = [](int v) { return v > 1 ? v : 1; };
    if ((transa != CUBLAS_OP_N && transa != CUBLAS_OP_T && transa != CUBLAS_OP_C) ||
        (transb != CUBLAS_OP_N && transb != CUBLAS_OP_T && transb != CUBLAS_OP_C)) {
        return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "%s: invalid transa %d / transb %d", api, (int) transa,
                         (int) transb);
    }
    if (m < 0 || n < 0 || k < 0) {
        return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "%s: m %d, n %d, k %d", api, m, n, k);
    }
    if (lda < mx1(a_rows) || ldb < mx1(b_rows) || ldc < mx1(m)) {
        return blas_fail(CUBLAS_STATUS_INVALID_VALUE,
                         "%s(%s, %s, m %d, n %d, k %d): lda %d (needs >= %d), ldb %d (>= %d), ldc %d (>= %d)", api,
                         ta ? "T" : "N", tb ? "T" : "N", m, n, k, lda, mx1(a_rows), ldb, mx1(b_rows), ldc, mx1(m));
    }
    if (algo != CUBLAS_GEMM_DEFAULT && algo != CUBLAS_GEMM_DEFAULT_TENSOR_OP && !(algo >= 0 && algo <= 23) &&
        !(algo >= 100 && algo <= 115)) {
        return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "%s: invalid algo %d", api, (int) algo);
    }
    // supported type combinations (a subset of cuBLAS's table)
    bool ok = false;
    bool half_scale = false;
    round_mode rm = round_mode::none;
    bool half_acc = false;
    switch (computeType) {
        case CUBLAS_COMPUTE_16F:
        case CUBLAS_COMPUTE_16F_PEDANTIC:
            ok = Atype == CUDA_R_16F && Btype == CUDA_R_16F && Ctype == CUDA_R_16F;
            half_scale = true;
            half_acc = true;
            break;
        case CUBLAS_COMPUTE_32F:
        case CUBLAS_COMPUTE_32F_PEDANTIC:
            ok = (Atype == CUDA_R_32F && Btype == CUDA_R_32F && Ctype == CUDA_R_32F) ||
                 (Atype == CUDA_R_16F && Btype == CUDA_R_16F && (Ctype == CUDA_R_16F || Ctype == CUDA_R_32F));
            break;
        case CUBLAS_COMPUTE_32F_FAST_TF32:
            ok = Atype == CUDA_R_32F && Btype == CUDA_R_32F && Ctype == CUDA_R_32F;
            rm = round_mode::tf32;
            break;
        case CUBLAS_COMPUTE_32F_FAST_16F:
            ok = Atype == CUDA_R_32F && Btype == CUDA_R_32F && Ctype == CUDA_R_32F;
            rm = round_mode::f16;
            break;
        default:
            ok = false;
            break;
    }
    if (!ok) {
        return blas_fail(CUBLAS_STATUS_NOT_SUPPORTED, "%s: compute type %d with A %s, B %s, C %s", api,
                         (int) computeType, type_name(Atype), type_name(Btype), type_name(Ctype));
    }
    if (alpha == nullptr || beta == nullptr) {
        return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "%s: NULL alpha or beta", api);
    }
    if (current_device() != handle->device) {
        return blas_fail(CUBLAS_STATUS_EXECUTION_FAILED,
                         "%s: the handle belongs to device %d but device %d is current", api, handle->device,
                         current_device());
    }
    cudaStream_t s = resolve_stream(handle->stream);
    if (s == nullptr) {
        return blas_fail(CUBLAS_STATUS_EXECUTION_FAILED, "%s: the handle's stream %p was destroyed", api,
                         (void *) handle->stream);
    }
    if (stream_device(s) != handle->device) {
        return blas_fail(CUBLAS_STATUS_EXECUTION_FAILED,
                         "%s: the handle's stream belongs to device %d, the handle to device %d", api,
                         stream_device(s), handle->device);
    }
    if (batch < 0) {
        return blas_fail(CUBLAS_STATUS_INVALID_VALUE, "%s: batchCount %d", api, batch);
    }
    // the results of a batch must not overlap (cuBLAS leaves that undefined: here it is an error)
    const long long c_span = (long long) (n > 0 ? (long long) (n - 1) * ldc + m : 0);
    if (batch > 1 && m > 0 && n > 0 && (strideC < 0 ? -strideC : strideC) < c_span) {
        return blas_fail(CUBLAS_STATUS_INVALID_VALUE,
                         "%s: strideC %lld is smaller than one result matrix (%lld elements): the %d results overlap",
                         api, strideC, c_span, batch);
    }
    if (m == 0 || n == 0 || batch == 0) {
        return CUBLAS_STATUS_SUCCESS;
    }
    // host pointer mode: the scalars are read now (a device pointer faults here, as on a GPU)
    float al, be;
    if (half_scale) {
        unsigned short ha, hb;
        memcpy(&ha, alpha, 2);
        memcpy(&hb, beta, 2);
        al = f16_bits_to_f32(ha);
        be = f16_bits_to_f32(hb);
    } else {
        memcpy(&al, alpha, 4);
        memcpy(&be, beta, 4);
    }
    const int dev = handle->device;
    const char * why = "";
    for (int bi = 0; bi < batch; bi++) {
        const char * Ab = (const char *) A + (ptrdiff_t) (bi * strideA) * (ptrdiff_t) type_size(Atype);
        const char * Bb = (const char *) B + (ptrdiff_t) (bi * strideB) * (ptrdiff_t) type_size(Btype);
        char * Cb = (char *) C + (ptrdiff_t) (bi * strideC) * (ptrdiff_t) type_size(Ctype);
        if (!operand_ok(Ab, k > 0 ? a_rows : 0, a_cols, lda, type_size(Atype), dev, &why)) {
            fatal("%s on device %d: A = %p (%d x %d, lda %d, %s) is not device memory of device %d: %s", api, dev, (const void *) Ab,
                  a_rows, a_cols, lda, type_name(Atype), dev, why);
        }
        if (!operand_ok(Bb, k > 0 ? b_rows : 0, b_cols, ldb, type_size(Btype), dev, &why)) {
            fatal("%s on device %d: B = %p (%d x %d, ldb %d, %s) is not device memory of device %d: %s", api, dev, (const void *) Bb,
                  b_rows, b_cols, ldb, type_name(Btype), dev, why);
        }
        if (!operand_ok(Cb, m, n, ldc, type_size(Ctype), dev, &why)) {
            fatal("%s on device %d: C = %p (%d x %d, ldc %d, %s) is not device memory of device %d: %s", api, dev, (void *) Cb, m,
                  n, ldc, type_name(Ctype), dev, why);
        }
    }
    std::unique_ptr<gemm_op> o(new gemm_op);
    o->device = dev;
    o->ta = ta;
    o->tb = tb;
    o->m = m;
    o->n = n;
    o->k = k;
    o->alpha = al;
    o->beta = be;
    o->A = (const char *) A;
    o->B = (const char *) B;
    o->C = (char *) C;
    o->at = Atype;
    o->bt = Btype;
    o->ct = Ctype;
    o->lda = lda;
    o->ldb = ldb;
    o->ldc = ldc;
    o->in_round = rm;
    o->half_acc = half_acc;
    o->api = api;
    o->stride_a = strideA;
    o->stride_b = strideB;
    o->stride_c = strideC;
    o->batch = batch;
    enqueue(s, std::move(o));
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void * alpha, const void * A, cudaDataType Atype, int lda, const void * B,
                            cudaDataType Btype, int ldb, const void * beta, void * C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    return gemm_impl("cublasGemmEx", handle, transa, transb, m, n, k, alpha, A, Atype, lda, 0, B, Btype, ldb, 0, beta,
                     C, Ctype, ldc, 0, 1, computeType, algo);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void * alpha, const void * A, cudaDataType Atype,
                                          int lda, long long int strideA, const void * B, cudaDataType Btype, int ldb,
                                          long long int strideB, const void * beta, void * C, cudaDataType Ctype,
                                          int ldc, long long int strideC, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    return gemm_impl("cublasGemmStridedBatchedEx", handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
                     Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}
