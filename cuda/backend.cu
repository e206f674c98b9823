// backend.cu - the CUDA backend: device buffer type "CUDA<n>", pinned host buffer type
// "CUDA_Host", split buffer type "CUDA_Split", the backend itself (one stream and one cuBLAS
// handle per backend), registration as "CUDA<i>" and the extern "C" entry points of ggml-cuda.h.
//
// Streams are created as blocking streams, so the synchronous buffer copies (cudaMemcpy on the
// legacy default stream) are ordered after any work still queued on a backend's stream.
// graph_compute synchronises its stream before returning and reports kernel errors as false.

#include "common.cuh"
#include "ggml-cuda.h"

#include <mutex>
#include <new>
#include <string.h>
#include <vector>

// ---------------------------------------------------------------------------------------------
// errors

void ggml_cu_report(const char * what, const char * msg, const char * file, int line) {
    char buf[512];
    snprintf(buf, sizeof(buf), "ggml_cuda: %s failed: %s (%s:%d)", what, msg, file, line);
    if (ggml_x_recoverable(NULL)) {
        ggml_x_error(NULL, "%s", buf);
    } else {
        fprintf(stderr, "%s\n", buf);
    }
}

static void cu_soft_error(const char * msg) {
    if (ggml_x_recoverable(NULL)) {
        ggml_x_error(NULL, "%s", msg);
    } else {
        fprintf(stderr, "%s\n", msg);
    }
}

// ---------------------------------------------------------------------------------------------
// devices

int ggml_cu_device_count(void) {
    static int count = -1;
    static std::once_flag once;
    std::call_once(once, [] {
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess) {
            cudaGetLastError(); // no driver / no device: clear the sticky-free error
            n = 0;
        }
        count = n > GGML_CU_MAX_DEVICES ? GGML_CU_MAX_DEVICES : n;
    });
    return count;
}

static bool cu_valid_device(int device) {
    return device >= 0 && device < ggml_cu_device_count();
}

void * ggml_cu_scratch(ggml_cu_ctx & ctx, int slot, size_t size) {
    if (size == 0) {
        size = 1;
    }
    if (ctx.scratch_size[slot] >= size) {
        return ctx.scratch[slot];
    }
    if (ctx.scratch[slot] != NULL) {
        // queued kernels may still use the old buffer
        if (!CU_OK(cudaStreamSynchronize(ctx.stream)) || !CU_OK(cudaFree(ctx.scratch[slot]))) {
            return NULL;
        }
        ctx.scratch[slot] = NULL;
        ctx.scratch_size[slot] = 0;
    }
    const size_t want = GGML_PAD(size + size / 4, 256); // some headroom against regrowth
    void * p = NULL;
    if (!CU_OK(cudaMalloc(&p, want))) {
        return NULL;
    }
    ctx.scratch[slot] = p;
    ctx.scratch_size[slot] = want;
    return p;
}

static bool cu_ctx_init(ggml_cu_ctx & ctx, int device) {
    memset(&ctx, 0, sizeof(ctx));
    ctx.device = device;
    snprintf(ctx.name, sizeof(ctx.name), "CUDA%d", device);
    if (!CU_OK(cudaSetDevice(device))) {
        return false;
    }
    if (!CU_OK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamDefault))) {
        return false;
    }
    if (!CUBLAS_OK(cublasCreate(&ctx.cublas))) {
        cudaStreamDestroy(ctx.stream);
        return false;
    }
    if (!CUBLAS_OK(cublasSetStream(ctx.cublas, ctx.stream))) {
        cublasDestroy(ctx.cublas);
        cudaStreamDestroy(ctx.stream);
        return false;
    }
    return true;
}

static void cu_ctx_free(ggml_cu_ctx & ctx) {
    cudaSetDevice(ctx.device);
    cudaStreamSynchronize(ctx.stream);
    for (int i = 0; i < GGML_CU_N_SCRATCH; i++) {
        if (ctx.scratch[i] != NULL) {
            cudaFree(ctx.scratch[i]);
        }
    }
    cublasDestroy(ctx.cublas);
    cudaStreamDestroy(ctx.stream);
}

std::mutex & ggml_cu_device_helper_lock(int device) {
    static std::mutex locks[GGML_CU_MAX_DEVICES];
    return locks[device >= 0 && device < GGML_CU_MAX_DEVICES ? device : 0];
}

ggml_cu_ctx * ggml_cu_device_helper(int device) {
    static ggml_cu_ctx * helpers[GGML_CU_MAX_DEVICES];
    static std::mutex mu;
    if (!cu_valid_device(device)) {
        return NULL;
    }
    std::lock_guard<std::mutex> lock(mu);
    if (helpers[device] == NULL) {
        // creating the context makes `device` current: the caller's current device is restored
        int prev = 0;
        const bool have_prev = cudaGetDevice(&prev) == cudaSuccess;
        ggml_cu_ctx * h = new (std::nothrow) ggml_cu_ctx;
        const bool ok = h != NULL && cu_ctx_init(*h, device);
        if (have_prev) {
            cudaSetDevice(prev);
        }
        if (!ok) {
            delete h;
            return NULL;
        }
        helpers[device] = h;
    }
    return helpers[device];
}

// ---------------------------------------------------------------------------------------------
// device buffers

#define GGML_CU_ALIGNMENT 128

struct cu_buffer_ctx {
    int    device;
    void * dev;
    char   name[16];
};

struct cu_buft_ctx {
    int  device;
    char name[16];
};

GGML_CALL static const char * cu_buffer_get_name(ggml_backend_buffer_t buffer) {
    return ((cu_buffer_ctx *) buffer->context)->name;
}

static bool cu_is_device_buffer(ggml_backend_buffer_t buffer) {
    return buffer != NULL && buffer->iface.get_name == cu_buffer_get_name;
}

GGML_CALL static void cu_buffer_free(ggml_backend_buffer_t buffer) {
    cu_buffer_ctx * c = (cu_buffer_ctx *) buffer->context;
    cudaSetDevice(c->device);
    if (c->dev != NULL) {
        CU_OK(cudaFree(c->dev));
    }
    delete c;
}

GGML_CALL static void * cu_buffer_get_base(ggml_backend_buffer_t buffer) {
    return ((cu_buffer_ctx *) buffer->context)->dev;
}

GGML_CALL static void cu_buffer_set_tensor(ggml_backend_buffer_t buffer, ggml_tensor * tensor, const void * data,
                                           size_t offset, size_t size) {
    cu_buffer_ctx * c = (cu_buffer_ctx *) buffer->context;
    if (CU_OK(cudaSetDevice(c->device))) {
        CU_OK(cudaMemcpy((char *) tensor->data + offset, data, size, cudaMemcpyHostToDevice));
    }
}

GGML_CALL static void cu_buffer_get_tensor(ggml_backend_buffer_t buffer, const ggml_tensor * tensor, void * data,
                                           size_t offset, size_t size) {
    cu_buffer_ctx * c = (cu_buffer_ctx *) buffer->context;
    if (CU_OK(cudaSetDevice(c->device))) {
        CU_OK(cudaMemcpy(data, (const char *) tensor->data + offset, size, cudaMemcpyDeviceToHost));
    }
}

static ggml_backend_buffer_t cu_tensor_buffer(const ggml_tensor * t) {
    if (t->buffer != NULL) {
        return t->buffer;
    }
    return t->view_src != NULL ? t->view_src->buffer : NULL;
}

GGML_CALL static bool cu_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const ggml_tensor * src, ggml_tensor * dst) {
    cu_buffer_ctx * c = (cu_buffer_ctx *) buffer->context;
    ggml_backend_buffer_t sb = cu_tensor_buffer(src);
    if (sb == NULL) {
        return false;
    }
    const size_t n = ggml_nbytes(src);
    if (cu_is_device_buffer(sb)) {
        cu_buffer_ctx * sc = (cu_buffer_ctx *) sb->context;
        if (sc->device == c->device) {
            return CU_OK(cudaSetDevice(c->device)) && CU_OK(cudaMemcpy(dst->data, src->data, n, cudaMemcpyDeviceToDevice));
        }
        return CU_OK(cudaMemcpyPeer(dst->data, c->device, src->data, sc->device, n));
    }
    if (ggml_backend_buffer_is_host(sb)) {
        return CU_OK(cudaSetDevice(c->device)) && CU_OK(cudaMemcpy(dst->data, src->data, n, cudaMemcpyHostToDevice));
    }
    return false;
}

GGML_CALL static void cu_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    cu_buffer_ctx * c = (cu_buffer_ctx *) buffer->context;
    if (CU_OK(cudaSetDevice(c->device))) {
        CU_OK(cudaMemset(c->dev, value, buffer->size));
        CU_OK(cudaDeviceSynchronize());
    }
}

static const ggml_backend_buffer_i cu_buffer_iface = {
    /* .get_name    = */ cu_buffer_get_name,
    /* .free_buffer = */ cu_buffer_free,
    /* .get_base    = */ cu_buffer_get_base,
    /* .init_tensor = */ NULL,
    /* .set_tensor  = */ cu_buffer_set_tensor,
    /* .get_tensor  = */ cu_buffer_get_tensor,
    /* .cpy_tensor  = */ cu_buffer_cpy_tensor,
    /* .clear       = */ cu_buffer_clear,
    /* .reset       = */ NULL,
};

GGML_CALL static const char * cu_buft_get_name(ggml_backend_buffer_type_t buft) {
    return ((cu_buft_ctx *) buft->context)->name;
}

GGML_CALL static ggml_backend_buffer_t cu_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    cu_buft_ctx * bc = (cu_buft_ctx *) buft->context;
    if (!CU_OK(cudaSetDevice(bc->device))) {
        return NULL;
    }
    void * dev = NULL;
    // something is allocated even for size 0, so the base is a real device address
    const size_t alloc = GGML_PAD(size == 0 ? 1 : size, GGML_CU_ALIGNMENT);
    cudaError_t err = cudaMalloc(&dev, alloc);
    if (err != cudaSuccess) {
        cudaGetLastError();
        char msg[256];
        snprintf(msg, sizeof(msg), "ggml_backend_cuda_buffer_type_alloc_buffer: allocating %.2f MiB on device %d: %s",
                 size / 1024.0 / 1024.0, bc->device, cudaGetErrorString(err));
        cu_soft_error(msg);
        return NULL;
    }
    cu_buffer_ctx * c = new (std::nothrow) cu_buffer_ctx;
    if (c == NULL) {
        cudaFree(dev);
        cu_soft_error("ggml_backend_cuda_buffer_type_alloc_buffer: out of host memory");
        return NULL;
    }
    c->device = bc->device;
    c->dev = dev;
    snprintf(c->name, sizeof(c->name), "%s", bc->name);
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, cu_buffer_iface, c, size);
    if (buffer == NULL) {
        cudaFree(dev);
        delete c;
    }
    return buffer;
}

GGML_CALL static size_t cu_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return GGML_CU_ALIGNMENT;
}

GGML_CALL static bool cu_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    if (!ggml_backend_is_cuda(backend)) {
        return false;
    }
    const ggml_cu_ctx * ctx = (const ggml_cu_ctx *) backend->context;
    return ctx->device == ((cu_buft_ctx *) buft->context)->device;
}

GGML_CALL static bool cu_buft_is_host(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return false;
}

static const ggml_backend_buffer_type_i cu_buft_iface = {
    /* .get_name         = */ cu_buft_get_name,
    /* .alloc_buffer     = */ cu_buft_alloc_buffer,
    /* .get_alignment    = */ cu_buft_get_alignment,
    /* .get_alloc_size   = */ NULL, // ggml_nbytes
    /* .supports_backend = */ cu_buft_supports_backend,
    /* .is_host          = */ cu_buft_is_host,
};

GGML_CALL ggml_backend_buffer_type_t ggml_backend_cuda_buffer_type(int device) {
    static ggml_backend_buffer_type bufts[GGML_CU_MAX_DEVICES];
    static cu_buft_ctx ctxs[GGML_CU_MAX_DEVICES];
    static std::once_flag once;
    if (!cu_valid_device(device)) {
        char msg[128];
        snprintf(msg, sizeof(msg), "ggml_backend_cuda_buffer_type: no CUDA device %d (%d present)", device,
                 ggml_cu_device_count());
        cu_soft_error(msg);
        return NULL;
    }
    std::call_once(once, [] {
        for (int i = 0; i < GGML_CU_MAX_DEVICES; i++) {
            ctxs[i].device = i;
            snprintf(ctxs[i].name, sizeof(ctxs[i].name), "CUDA%d", i);
            bufts[i].iface = cu_buft_iface;
            bufts[i].context = &ctxs[i];
        }
    });
    return &bufts[device];
}

// ---------------------------------------------------------------------------------------------
// pinned host buffers (CUDA_Host): host memory the CPU backend computes on

#define GGML_CU_HOST_ALIGNMENT 64 // the CPU backend's alignment

GGML_CALL static const char * cu_host_buffer_get_name(ggml_backend_buffer_t buffer) {
    (void) buffer;
    return "CUDA_Host";
}

GGML_CALL static void cu_host_buffer_free(ggml_backend_buffer_t buffer) {
    CU_OK(cudaFreeHost(buffer->context));
}

GGML_CALL static void * cu_host_buffer_get_base(ggml_backend_buffer_t buffer) {
    return buffer->context;
}

GGML_CALL static void cu_host_buffer_set_tensor(ggml_backend_buffer_t buffer, ggml_tensor * tensor, const void * data,
                                                size_t offset, size_t size) {
    (void) buffer;
    memcpy((char *) tensor->data + offset, data, size);
}

GGML_CALL static void cu_host_buffer_get_tensor(ggml_backend_buffer_t buffer, const ggml_tensor * tensor, void * data,
                                                size_t offset, size_t size) {
    (void) buffer;
    memcpy(data, (const char *) tensor->data + offset, size);
}

GGML_CALL static bool cu_host_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const ggml_tensor * src, ggml_tensor * dst) {
    (void) buffer;
    ggml_backend_buffer_t sb = cu_tensor_buffer(src);
    if (sb == NULL) {
        return false;
    }
    if (ggml_backend_buffer_is_host(sb)) {
        memcpy(dst->data, src->data, ggml_nbytes(src));
        return true;
    }
    if (cu_is_device_buffer(sb)) {
        cu_buffer_ctx * sc = (cu_buffer_ctx *) sb->context;
        return CU_OK(cudaSetDevice(sc->device)) &&
               CU_OK(cudaMemcpy(dst->data, src->data, ggml_nbytes(src), cudaMemcpyDeviceToHost));
    }
    return false;
}

GGML_CALL static void cu_host_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    memset(buffer->context, value, buffer->size);
}

static const ggml_backend_buffer_i cu_host_buffer_iface = {
    /* .get_name    = */ cu_host_buffer_get_name,
    /* .free_buffer = */ cu_host_buffer_free,
    /* .get_base    = */ cu_host_buffer_get_base,
    /* .init_tensor = */ NULL,
    /* .set_tensor  = */ cu_host_buffer_set_tensor,
    /* .get_tensor  = */ cu_host_buffer_get_tensor,
    /* .cpy_tensor  = */ cu_host_buffer_cpy_tensor,
    /* .clear       = */ cu_host_buffer_clear,
    /* .reset       = */ NULL,
};

GGML_CALL static const char * cu_host_buft_get_name(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return "CUDA_Host";
}

GGML_CALL static ggml_backend_buffer_t cu_host_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    void * ptr = NULL;
    const size_t alloc = GGML_PAD(size == 0 ? 1 : size, GGML_CU_HOST_ALIGNMENT);
    cudaError_t err = ggml_cu_device_count() > 0 ? cudaMallocHost(&ptr, alloc) : cudaErrorNoDevice;
    if (err != cudaSuccess) {
        // no pinning possible: plain CPU memory works the same, only copies are slower
        cudaGetLastError();
        return ggml_backend_buft_alloc_buffer(ggml_backend_cpu_buffer_type(), size);
    }
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, cu_host_buffer_iface, ptr, size);
    if (buffer == NULL) {
        cudaFreeHost(ptr);
    }
    return buffer;
}

GGML_CALL static size_t cu_host_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return GGML_CU_HOST_ALIGNMENT;
}

GGML_CALL static bool cu_host_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    (void) buft;
    return ggml_backend_is_cpu(backend);
}

GGML_CALL static bool cu_host_buft_is_host(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return true;
}

GGML_CALL ggml_backend_buffer_type_t ggml_backend_cuda_host_buffer_type(void) {
    static ggml_backend_buffer_type buft = {
        /* .iface = */ {
            /* .get_name         = */ cu_host_buft_get_name,
            /* .alloc_buffer     = */ cu_host_buft_alloc_buffer,
            /* .get_alignment    = */ cu_host_buft_get_alignment,
            /* .get_alloc_size   = */ NULL,
            /* .supports_backend = */ cu_host_buft_supports_backend,
            /* .is_host          = */ cu_host_buft_is_host,
        },
        /* .context = */ NULL,
    };
    return &buft;
}

// ---------------------------------------------------------------------------------------------
// split buffers (CUDA_Split): each tensor's rows [row0[d], row1[d]) live on device d. The
// tensors' data pointers are addresses in a fake range (the allocator needs a base); only the
// buffer's own functions and MUL_MAT (src0) look at the per-device copies in tensor->extra.

struct cu_split_buft_ctx {
    float split[GGML_CU_MAX_DEVICES]; // cumulative start fraction of device d's rows
};

struct cu_split_buffer_ctx {
    cu_split_buft_ctx cfg;
    std::vector<ggml_cu_split_extra *> extras;
};

#define GGML_CU_SPLIT_FAKE_BASE ((uintptr_t) 0x1000)

GGML_CALL static const char * cu_split_buffer_get_name(ggml_backend_buffer_t buffer) {
    (void) buffer;
    return "CUDA_Split";
}

bool ggml_cu_is_split_buffer(ggml_backend_buffer_t buffer) {
    return buffer != NULL && buffer->iface.get_name == cu_split_buffer_get_name;
}

bool ggml_cu_tensor_is_split(const ggml_tensor * t) {
    return ggml_cu_is_split_buffer(cu_tensor_buffer(t));
}

static void cu_split_rows(const cu_split_buft_ctx & cfg, int64_t nrows, int d, int64_t & r0, int64_t & r1) {
    const int n = ggml_cu_device_count();
    r0 = d == 0 ? 0 : (int64_t) ((double) nrows * cfg.split[d]);
    r1 = d + 1 >= n ? nrows : (int64_t) ((double) nrows * cfg.split[d + 1]);
    r0 = r0 < 0 ? 0 : (r0 > nrows ? nrows : r0);
    r1 = r1 < r0 ? r0 : (r1 > nrows ? nrows : r1);
}

GGML_CALL static void cu_split_buffer_free(ggml_backend_buffer_t buffer) {
    cu_split_buffer_ctx * c = (cu_split_buffer_ctx *) buffer->context;
    for (ggml_cu_split_extra * ex : c->extras) {
        for (int d = 0; d < GGML_CU_MAX_DEVICES; d++) {
            if (ex->data[d] != NULL) {
                cudaSetDevice(d);
                CU_OK(cudaFree(ex->data[d]));
            }
        }
        delete ex;
    }
    delete c;
}

GGML_CALL static void * cu_split_buffer_get_base(ggml_backend_buffer_t buffer) {
    (void) buffer;
    return (void *) GGML_CU_SPLIT_FAKE_BASE;
}

GGML_CALL static void cu_split_buffer_init_tensor(ggml_backend_buffer_t buffer, ggml_tensor * tensor) {
    if (tensor->view_src != NULL) {
        return; // views of split tensors are not computed on (supports_op rejects them)
    }
    cu_split_buffer_ctx * c = (cu_split_buffer_ctx *) buffer->context;
    if (!ggml_is_contiguous(tensor)) {
        cu_soft_error("ggml_backend_cuda_split_buffer: tensors must be contiguous");
        return;
    }
    ggml_cu_split_extra * ex = new (std::nothrow) ggml_cu_split_extra;
    if (ex == NULL) {
        cu_soft_error("ggml_backend_cuda_split_buffer_init_tensor: out of host memory");
        return;
    }
    memset(ex, 0, sizeof(*ex));
    const int64_t nrows = ggml_nrows(tensor);
    const size_t row_bytes = tensor->nb[1];
    for (int d = 0; d < ggml_cu_device_count(); d++) {
        int64_t r0, r1;
        cu_split_rows(c->cfg, nrows, d, r0, r1);
        ex->row0[d] = r0;
        ex->row1[d] = r1;
        if (r1 <= r0) {
            continue;
        }
        void * p = NULL;
        const size_t bytes = GGML_PAD((size_t) (r1 - r0) * row_bytes, GGML_CU_ALIGNMENT);
        if (!CU_OK(cudaSetDevice(d)) || !CU_OK(cudaMalloc(&p, bytes))) {
            for (int e = 0; e < d; e++) {
                if (ex->data[e] != NULL) {
                    cudaSetDevice(e);
                    cudaFree(ex->data[e]);
                }
            }
            delete ex;
            return;
        }
        ex->data[d] = p;
        ex->bytes[d] = bytes;
    }
    c->extras.push_back(ex);
    tensor->extra = ex;
}

// copy the byte range [offset, offset + size) of a split tensor from/to host memory
static void cu_split_copy(const ggml_tensor * tensor, char * host, size_t offset, size_t size, bool to_device) {
    const ggml_cu_split_extra * ex = (const ggml_cu_split_extra *) tensor->extra;
    if (ex == NULL) {
        cu_soft_error("ggml_backend_cuda_split_buffer: tensor has no device storage");
        return;
    }
    const size_t row_bytes = tensor->nb[1];
    for (int d = 0; d < GGML_CU_MAX_DEVICES; d++) {
        if (ex->data[d] == NULL) {
            continue;
        }
        const size_t b0 = (size_t) ex->row0[d] * row_bytes, b1 = (size_t) ex->row1[d] * row_bytes;
        const size_t lo = offset > b0 ? offset : b0;
        const size_t hi = offset + size < b1 ? offset + size : b1;
        if (lo >= hi) {
            continue;
        }
        if (!CU_OK(cudaSetDevice(d))) {
            return;
        }
        char * dev = (char *) ex->data[d] + (lo - b0);
        if (to_device) {
            CU_OK(cudaMemcpy(dev, host + (lo - offset), hi - lo, cudaMemcpyHostToDevice));
        } else {
            CU_OK(cudaMemcpy(host + (lo - offset), dev, hi - lo, cudaMemcpyDeviceToHost));
        }
    }
}

GGML_CALL static void cu_split_buffer_set_tensor(ggml_backend_buffer_t buffer, ggml_tensor * tensor, const void * data,
                                                 size_t offset, size_t size) {
    (void) buffer;
    cu_split_copy(tensor, (char *) data, offset, size, true);
}

GGML_CALL static void cu_split_buffer_get_tensor(ggml_backend_buffer_t buffer, const ggml_tensor * tensor, void * data,
                                                 size_t offset, size_t size) {
    (void) buffer;
    cu_split_copy(tensor, (char *) data, offset, size, false);
}

// cudaMemset on device memory may return before the device has written it: every device that
// was written is synchronised, and the caller's current device is restored
GGML_CALL static void cu_split_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    cu_split_buffer_ctx * c = (cu_split_buffer_ctx *) buffer->context;
    int prev = 0;
    const bool have_prev = cudaGetDevice(&prev) == cudaSuccess;
    bool used[GGML_CU_MAX_DEVICES] = { false };
    for (ggml_cu_split_extra * ex : c->extras) {
        for (int d = 0; d < GGML_CU_MAX_DEVICES; d++) {
            if (ex->data[d] == NULL) {
                continue;
            }
            if (CU_OK(cudaSetDevice(d)) && CU_OK(cudaMemset(ex->data[d], value, ex->bytes[d]))) {
                used[d] = true;
            }
        }
    }
    for (int d = 0; d < GGML_CU_MAX_DEVICES; d++) {
        if (used[d] && CU_OK(cudaSetDevice(d))) {
            CU_OK(cudaDeviceSynchronize());
        }
    }
    if (have_prev) {
        cudaSetDevice(prev);
    }
}

static const ggml_backend_buffer_i cu_split_buffer_iface = {
    /* .get_name    = */ cu_split_buffer_get_name,
    /* .free_buffer = */ cu_split_buffer_free,
    /* .get_base    = */ cu_split_buffer_get_base,
    /* .init_tensor = */ cu_split_buffer_init_tensor,
    /* .set_tensor  = */ cu_split_buffer_set_tensor,
    /* .get_tensor  = */ cu_split_buffer_get_tensor,
    /* .cpy_tensor  = */ NULL,
    /* .clear       = */ cu_split_buffer_clear,
    /* .reset       = */ NULL,
};

GGML_CALL static const char * cu_split_buft_get_name(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return "CUDA_Split";
}

GGML_CALL static ggml_backend_buffer_t cu_split_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    cu_split_buffer_ctx * c = new (std::nothrow) cu_split_buffer_ctx;
    if (c == NULL) {
        cu_soft_error("ggml_backend_cuda_split_buffer_type_alloc_buffer: out of host memory");
        return NULL;
    }
    c->cfg = *(const cu_split_buft_ctx *) buft->context;
    ggml_backend_buffer_t buffer = ggml_backend_buffer_init(buft, cu_split_buffer_iface, c, size);
    if (buffer == NULL) {
        delete c;
    }
    return buffer;
}

GGML_CALL static size_t cu_split_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return GGML_CU_ALIGNMENT;
}

GGML_CALL static bool cu_split_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    (void) buft;
    return ggml_backend_is_cuda(backend);
}

static const ggml_backend_buffer_type_i cu_split_buft_iface = {
    /* .get_name         = */ cu_split_buft_get_name,
    /* .alloc_buffer     = */ cu_split_buft_alloc_buffer,
    /* .get_alignment    = */ cu_split_buft_get_alignment,
    /* .get_alloc_size   = */ NULL,
    /* .supports_backend = */ cu_split_buft_supports_backend,
    /* .is_host          = */ cu_buft_is_host,
};

GGML_CALL ggml_backend_buffer_type_t ggml_backend_cuda_split_buffer_type(const float * tensor_split) {
    static std::mutex mu;
    static std::vector<ggml_backend_buffer_type *> known; // one type per distinct split, never freed
    const int n = ggml_cu_device_count();
    if (n == 0) {
        cu_soft_error("ggml_backend_cuda_split_buffer_type: no CUDA device");
        return NULL;
    }
    // shares -> cumulative start fractions
    float share[GGML_CU_MAX_DEVICES] = { 0 };
    float total = 0.0f;
    for (int d = 0; d < n; d++) {
        share[d] = tensor_split != NULL && tensor_split[d] > 0.0f ? tensor_split[d] : 0.0f;
        total += share[d];
    }
    if (total <= 0.0f) {
        for (int d = 0; d < n; d++) {
            size_t free_mem = 0, total_mem = 0;
            ggml_backend_cuda_get_device_memory(d, &free_mem, &total_mem);
            share[d] = (float) total_mem;
            total += share[d];
        }
        if (total <= 0.0f) {
            share[0] = total = 1.0f;
        }
    }
    cu_split_buft_ctx cfg;
    memset(&cfg, 0, sizeof(cfg));
    float acc = 0.0f;
    for (int d = 0; d < n; d++) {
        cfg.split[d] = acc / total;
        acc += share[d];
    }

    std::lock_guard<std::mutex> lock(mu);
    for (ggml_backend_buffer_type * b : known) {
        if (memcmp(b->context, &cfg, sizeof(cfg)) == 0) {
            return b;
        }
    }
    cu_split_buft_ctx * c = new (std::nothrow) cu_split_buft_ctx(cfg);
    ggml_backend_buffer_type * b = new (std::nothrow) ggml_backend_buffer_type;
    if (c == NULL || b == NULL) {
        delete c;
        delete b;
        cu_soft_error("ggml_backend_cuda_split_buffer_type: out of host memory");
        return NULL;
    }
    b->iface = cu_split_buft_iface;
    b->context = c;
    known.push_back(b);
    return b;
}

// ---------------------------------------------------------------------------------------------
// backend

GGML_CALL static const char * cu_backend_get_name(ggml_backend_t backend) {
    return ((ggml_cu_ctx *) backend->context)->name;
}

GGML_CALL static void cu_backend_free(ggml_backend_t backend) {
    ggml_cu_ctx * ctx = (ggml_cu_ctx *) backend->context;
    cu_ctx_free(*ctx);
    delete ctx;
    delete backend;
}

GGML_CALL static ggml_backend_buffer_type_t cu_backend_get_default_buffer_type(ggml_backend_t backend) {
    return ggml_backend_cuda_buffer_type(((ggml_cu_ctx *) backend->context)->device);
}

// is t stored in a device buffer of ctx's device?
static bool cu_on_device(const ggml_cu_ctx * ctx, const ggml_tensor * t) {
    ggml_backend_buffer_t b = cu_tensor_buffer(t);
    return cu_is_device_buffer(b) && ((cu_buffer_ctx *) b->context)->device == ctx->device;
}

GGML_CALL static void cu_backend_set_tensor_async(ggml_backend_t backend, ggml_tensor * tensor, const void * data,
                                                  size_t offset, size_t size) {
    ggml_cu_ctx * ctx = (ggml_cu_ctx *) backend->context;
    if (!cu_on_device(ctx, tensor)) {
        ggml_backend_buffer_t b = cu_tensor_buffer(tensor);
        b->iface.set_tensor(b, tensor, data, offset, size);
        return;
    }
    if (CU_OK(cudaSetDevice(ctx->device))) {
        CU_OK(cudaMemcpyAsync((char *) tensor->data + offset, data, size, cudaMemcpyHostToDevice, ctx->stream));
    }
}

GGML_CALL static void cu_backend_get_tensor_async(ggml_backend_t backend, const ggml_tensor * tensor, void * data,
                                                  size_t offset, size_t size) {
    ggml_cu_ctx * ctx = (ggml_cu_ctx *) backend->context;
    if (!cu_on_device(ctx, tensor)) {
        ggml_backend_buffer_t b = cu_tensor_buffer(tensor);
        b->iface.get_tensor(b, tensor, data, offset, size);
        return;
    }
    if (CU_OK(cudaSetDevice(ctx->device))) {
        CU_OK(cudaMemcpyAsync(data, (const char *) tensor->data + offset, size, cudaMemcpyDeviceToHost, ctx->stream));
    }
}

GGML_CALL static bool cu_backend_cpy_tensor_async(ggml_backend_t backend, const ggml_tensor * src, ggml_tensor * dst) {
    ggml_cu_ctx * ctx = (ggml_cu_ctx *) backend->context;
    ggml_backend_buffer_t sb = cu_tensor_buffer(src);
    ggml_backend_buffer_t db = cu_tensor_buffer(dst);
    if (!cu_is_device_buffer(sb) || !cu_is_device_buffer(db)) {
        return false;
    }
    const int sd = ((cu_buffer_ctx *) sb->context)->device, dd = ((cu_buffer_ctx *) db->context)->device;
    if (!CU_OK(cudaSetDevice(ctx->device))) {
        return false;
    }
    const size_t n = ggml_nbytes(src);
    if (sd == dd) {
        return CU_OK(cudaMemcpyAsync(dst->data, src->data, n, cudaMemcpyDeviceToDevice, ctx->stream));
    }
    return CU_OK(cudaMemcpyPeerAsync(dst->data, dd, src->data, sd, n, ctx->stream));
}

GGML_CALL static void cu_backend_synchronize(ggml_backend_t backend) {
    ggml_cu_ctx * ctx = (ggml_cu_ctx *) backend->context;
    if (CU_OK(cudaSetDevice(ctx->device))) {
        CU_OK(cudaStreamSynchronize(ctx->stream));
    }
}

static bool cu_is_view_op(enum ggml_op op) {
    return op == GGML_OP_NONE || op == GGML_OP_RESHAPE || op == GGML_OP_VIEW || op == GGML_OP_PERMUTE ||
           op == GGML_OP_TRANSPOSE;
}

// the kernel family of an op (NULL pair: not supported)
struct cu_op_entry {
    bool (*supported)(const ggml_tensor *);
    bool (*run)(ggml_cu_ctx &, ggml_tensor *);
};

static cu_op_entry cu_op_lookup(enum ggml_op op) {
    switch (op) {
        case GGML_OP_UNARY:
        case GGML_OP_SQR:
        case GGML_OP_SQRT:
        case GGML_OP_LOG:
        case GGML_OP_SCALE:
        case GGML_OP_CLAMP:
        case GGML_OP_LEAKY_RELU:    return { ggml_cu_unary_supported, ggml_cu_unary };
        case GGML_OP_ADD:
        case GGML_OP_ADD1:
        case GGML_OP_SUB:
        case GGML_OP_MUL:
        case GGML_OP_DIV:           return { ggml_cu_binary_supported, ggml_cu_binary };
        case GGML_OP_ACC:
        case GGML_OP_SET:           return { ggml_cu_acc_supported, ggml_cu_acc };
        case GGML_OP_NORM:
        case GGML_OP_RMS_NORM:
        case GGML_OP_GROUP_NORM:    return { ggml_cu_norm_supported, ggml_cu_norm };
        case GGML_OP_SOFT_MAX:      return { ggml_cu_softmax_supported, ggml_cu_softmax };
        case GGML_OP_DIAG_MASK_INF:
        case GGML_OP_DIAG_MASK_ZERO: return { ggml_cu_diag_supported, ggml_cu_diag };
        case GGML_OP_ROPE:
        case GGML_OP_ALIBI:         return { ggml_cu_rope_supported, ggml_cu_rope };
        case GGML_OP_GET_ROWS:      return { ggml_cu_get_rows_supported, ggml_cu_get_rows };
        case GGML_OP_DUP:
        case GGML_OP_CPY:
        case GGML_OP_CONT:          return { ggml_cu_cpy_supported, ggml_cu_cpy };
        case GGML_OP_MUL_MAT:       return { ggml_cu_mul_mat_supported, ggml_cu_mul_mat };
        case GGML_OP_MUL_MAT_ID:    return { ggml_cu_mul_mat_id_supported, ggml_cu_mul_mat_id };
        case GGML_OP_IM2COL:        return { ggml_cu_im2col_supported, ggml_cu_im2col };
        case GGML_OP_ARGSORT:       return { ggml_cu_argsort_supported, ggml_cu_argsort };
        case GGML_OP_SUM_ROWS:
        case GGML_OP_SUM:
        case GGML_OP_MEAN:          return { ggml_cu_reduce_supported, ggml_cu_reduce };
        case GGML_OP_UPSCALE:       return { ggml_cu_upscale_supported, ggml_cu_upscale };
        case GGML_OP_PAD:           return { ggml_cu_pad_supported, ggml_cu_pad };
        case GGML_OP_CONCAT:        return { ggml_cu_concat_supported, ggml_cu_concat };
        case GGML_OP_REPEAT:        return { ggml_cu_repeat_supported, ggml_cu_repeat };
        default:                    return { NULL, NULL };
    }
}

GGML_CALL static bool cu_backend_supports_op(ggml_backend_t backend, const ggml_tensor * op) {
    (void) backend;
    if (cu_is_view_op(op->op)) {
        return true;
    }
    // split tensors are readable only as MUL_MAT weights
    if (ggml_cu_tensor_is_split(op)) {
        return false;
    }
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (op->src[i] != NULL && ggml_cu_tensor_is_split(op->src[i]) && !(op->op == GGML_OP_MUL_MAT && i == 0)) {
            return false;
        }
    }
    const cu_op_entry e = cu_op_lookup(op->op);
    return e.supported != NULL && e.supported(op);
}

GGML_CALL static bool cu_backend_graph_compute(ggml_backend_t backend, ggml_cgraph * cgraph) {
    ggml_cu_ctx * ctx = (ggml_cu_ctx *) backend->context;
    if (!CU_OK(cudaSetDevice(ctx->device))) {
        return false;
    }
    for (int i = 0; i < cgraph->n_nodes; i++) {
        ggml_tensor * node = cgraph->nodes[i];
        if (cu_is_view_op(node->op) || ggml_nelements(node) == 0) {
            continue;
        }
        if (!cu_backend_supports_op(backend, node)) {
            char msg[256];
            snprintf(msg, sizeof(msg), "ggml_backend_cuda_graph_compute: %s: op %s (node %d, '%s') is not supported",
                     ctx->name, ggml_op_desc(node), i, node->name);
            cu_soft_error(msg);
            return false;
        }
        if (node->data == NULL) {
            char msg[256];
            snprintf(msg, sizeof(msg), "ggml_backend_cuda_graph_compute: node %d ('%s') is not allocated", i, node->name);
            cu_soft_error(msg);
            return false;
        }
        // every operand must be device memory of this backend (or split weights)
        for (int j = -1; j < GGML_MAX_SRC; j++) {
            const ggml_tensor * t = j < 0 ? node : node->src[j];
            if (t == NULL) {
                continue;
            }
            if (!cu_on_device(ctx, t) && !ggml_cu_tensor_is_split(t)) {
                char msg[256];
                snprintf(msg, sizeof(msg), "ggml_backend_cuda_graph_compute: %s: tensor '%s' of node %d is not in %s memory",
                         ctx->name, t->name, i, ctx->name);
                cu_soft_error(msg);
                return false;
            }
        }
        if (!cu_op_lookup(node->op).run(*ctx, node)) {
            char msg[256];
            snprintf(msg, sizeof(msg), "ggml_backend_cuda_graph_compute: %s: op %s failed (node %d, '%s')", ctx->name,
                     ggml_op_desc(node), i, node->name);
            cu_soft_error(msg);
            cudaStreamSynchronize(ctx->stream);
            return false;
        }
    }
    // kernel faults surface here
    return CU_OK(cudaStreamSynchronize(ctx->stream)) && CU_OK(cudaGetLastError());
}

static const ggml_backend_i cu_backend_iface = {
    /* .get_name                = */ cu_backend_get_name,
    /* .free                    = */ cu_backend_free,
    /* .get_default_buffer_type = */ cu_backend_get_default_buffer_type,
    /* .set_tensor_async        = */ cu_backend_set_tensor_async,
    /* .get_tensor_async        = */ cu_backend_get_tensor_async,
    /* .cpy_tensor_async        = */ cu_backend_cpy_tensor_async,
    /* .synchronize             = */ cu_backend_synchronize,
    /* .graph_plan_create       = */ NULL,
    /* .graph_plan_free         = */ NULL,
    /* .graph_plan_compute      = */ NULL,
    /* .graph_compute           = */ cu_backend_graph_compute,
    /* .supports_op             = */ cu_backend_supports_op,
};

// ---------------------------------------------------------------------------------------------
// public entry points

extern "C" {

GGML_CALL ggml_backend_t ggml_backend_cuda_init(int device) {
    if (!cu_valid_device(device)) {
        char msg[128];
        snprintf(msg, sizeof(msg), "ggml_backend_cuda_init: no CUDA device %d (%d present)", device,
                 ggml_cu_device_count());
        cu_soft_error(msg);
        return NULL;
    }
    ggml_cu_ctx * ctx = new (std::nothrow) ggml_cu_ctx;
    ggml_backend_t backend = new (std::nothrow) ggml_backend;
    if (ctx == NULL || backend == NULL || !cu_ctx_init(*ctx, device)) {
        delete ctx;
        delete backend;
        return NULL;
    }
    backend->iface = cu_backend_iface;
    backend->context = ctx;
    return backend;
}

GGML_CALL bool ggml_backend_is_cuda(ggml_backend_t backend) {
    return backend != NULL && backend->iface.get_name == cu_backend_get_name;
}

GGML_CALL int ggml_backend_cuda_get_device_count(void) {
    return ggml_cu_device_count();
}

GGML_CALL void ggml_backend_cuda_get_device_description(int device, char * description, size_t description_size) {
    if (description == NULL || description_size == 0) {
        return;
    }
    description[0] = '\0';
    if (!cu_valid_device(device)) {
        return;
    }
    cudaDeviceProp prop;
    if (!CU_OK(cudaGetDeviceProperties(&prop, device))) {
        return;
    }
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    snprintf(description, description_size, "%s (compute capability %d.%d)", prop.name, major, minor);
}

GGML_CALL void ggml_backend_cuda_get_device_memory(int device, size_t * free, size_t * total) {
    size_t f = 0, t = 0;
    if (cu_valid_device(device)) {
        int prev = 0;
        cudaGetDevice(&prev);
        if (CU_OK(cudaSetDevice(device))) {
            if (!CU_OK(cudaMemGetInfo(&f, &t))) {
                f = t = 0;
            }
        }
        cudaSetDevice(prev);
    }
    if (free != NULL) {
        *free = f;
    }
    if (total != NULL) {
        *total = t;
    }
}

// registry entry: params are ignored (the device comes from the name)
GGML_CALL static ggml_backend_t cu_reg_init(const char * params, void * user_data) {
    (void) params;
    return ggml_backend_cuda_init((int) (intptr_t) user_data);
}

GGML_CALL void ggml_x_backend_cuda_register(void) {
    static std::once_flag once;
    std::call_once(once, [] {
        const int n = ggml_cu_device_count();
        for (int d = 0; d < n; d++) {
            char name[16];
            snprintf(name, sizeof(name), "CUDA%d", d);
            ggml_backend_register(name, cu_reg_init, ggml_backend_cuda_buffer_type(d), (void *) (intptr_t) d);
        }
    });
}

} // extern "C"
