// ggml-rpc.h - ggml's RPC protocol 5.1.0: a backend whose buffers and graph computations live
// on a remote server (ggml's rpc-server or ggml-go's cmd/ggml-rpc-server), and a server that
// serves one of our backends to such clients.
//
// The upstream-named functions take an endpoint "host:port" and open their own TCP connection
// (cached per endpoint, as upstream's registry does). The ggml_x_ variants work on a connected
// file descriptor the caller hands over (a TCP socket, or one end of a socket pair whose other
// end is pumped through TLS by Go), with explicit timeouts.
//
// Op and type numbers are translated by name between this library's ggml (b3bcd556) and the
// wire's (ggml of 2026-08); ops with no peer are reported unsupported, so a scheduler keeps
// them on another backend.

#ifndef GGML_RPC_H
#define GGML_RPC_H

#include "ggml.h"
#include "ggml-backend.h"

#ifdef  __cplusplus
extern "C" {
#endif

#define RPC_PROTO_MAJOR_VERSION 5
#define RPC_PROTO_MINOR_VERSION 1
#define RPC_PROTO_PATCH_VERSION 0

// the name prefix of RPC backends and buffer types: "RPC[host:port]"
#define GGML_RPC_NAME "RPC"

// upstream-like API

// a backend on device 0 of the server at endpoint ("host:port"); NULL (with ggml_x_last_error)
// when it cannot connect or the server speaks another protocol version
GGML_API ggml_backend_t ggml_backend_rpc_init(const char * endpoint);
GGML_API bool           ggml_backend_is_rpc(ggml_backend_t backend);
GGML_API ggml_backend_buffer_type_t ggml_backend_rpc_buffer_type(const char * endpoint);
GGML_API void           ggml_backend_rpc_get_device_memory(const char * endpoint, size_t * free, size_t * total);
// serves backend on endpoint, one client at a time, until the process ends; cache_dir (NULL:
// none) keeps large tensors by hash; free_mem/total_mem (0: the machine's) are reported to
// clients. Returns only when it cannot listen.
GGML_API void           ggml_backend_rpc_start_server(ggml_backend_t backend, const char * endpoint, const char * cache_dir,
                                                      size_t free_mem, size_t total_mem);

// ggml-go extensions: descriptors and timeouts

struct ggml_x_rpc_client_params {
    uint32_t device;             // the server's device index
    int      timeout_ms;         // every request/reply (0: wait forever)
    int      compute_timeout_ms; // a graph computation (0: wait forever)
    bool     no_sync;            // do not confirm each GRAPH_COMPUTE with a round trip (upstream's
                                 // behaviour: a failure then shows at the next call)
    bool     no_recompute;       // always send graphs in full (upstream sends GRAPH_RECOMPUTE only
                                 // for scheduler graphs it recognises by uid)
};

GGML_API struct ggml_x_rpc_client_params ggml_x_rpc_client_default_params(void);

// ggml_x_backend_rpc_init_fd: a backend on a connected descriptor, which it owns from now on
// (closed by the last of the backend and its buffers to be freed, or here on failure). name is
// the endpoint shown in the backend's name. Performs HELLO and the version check.
GGML_API ggml_backend_t ggml_x_backend_rpc_init_fd(int fd, const char * name, const struct ggml_x_rpc_client_params * params);
// false once a request of backend's connection failed (the backend can only be freed then)
GGML_API bool ggml_x_backend_rpc_alive(ggml_backend_t backend);
// the server's device count and this device's memory, as last queried
GGML_API bool ggml_x_backend_rpc_device_memory(ggml_backend_t backend, size_t * free, size_t * total);
// the number of our ops a server can compute (for reports)
GGML_API int  ggml_x_rpc_supported_op_count(void);

struct ggml_x_rpc_server_params {
    const char * cache_dir;       // NULL: no large-tensor cache
    size_t   free_mem, total_mem; // reported by GET_DEVICE_MEMORY (0: the machine's RAM)
    size_t   alignment;           // reported by GET_ALIGNMENT (0: the backend's)
    uint64_t max_alloc;           // bytes all buffers of a connection may hold (0: no limit)
    uint64_t max_message;         // largest GRAPH_COMPUTE / SET_TENSOR payload (0: 1 GiB + 304 / 4 GiB)
    uint32_t max_graph_nodes;     // (0: 1 << 20)
    int      idle_timeout_ms;     // wait for the next request (0: forever)
    int      io_timeout_ms;       // within a request, and for each reply (0: forever)
    bool     verbose;             // log each connection's closing reason to stderr
};

GGML_API struct ggml_x_rpc_server_params ggml_x_rpc_server_default_params(void);

// ggml_x_rpc_serve_fd serves one connection until it ends. The descriptor stays the caller's.
// Returns 0 when the client closed the connection, -1 when the server closed it (a malformed
// or refused request, a timeout, a failed computation: the reason is in *why_out if not NULL).
// Nothing a client sends makes it abort.
GGML_API int ggml_x_rpc_serve_fd(ggml_backend_t backend, int fd, const struct ggml_x_rpc_server_params * params,
                                 char * why_out, size_t why_size);

#ifdef  __cplusplus
}
#endif

#endif // GGML_RPC_H
