// rpc-proto.h - the wire of ggml's RPC protocol 5.1.0 (ggml d99724f2) shared by the client and
// the server: command numbers, sizes, the 296-byte tensor record and I/O on a file descriptor
// with deadlines. Every integer on the wire is little-endian and every struct packed; the
// records are encoded and decoded field by field, never by casting.

#ifndef GGML_RPC_PROTO_H
#define GGML_RPC_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ggml.h"

#define RPC_PROTO_MAJOR 5
#define RPC_PROTO_MINOR 1
#define RPC_PROTO_PATCH 0

// constants that shape the wire: the server's, which equal ours (checked below)
#define RPC_MAX_DIMS       4
#define RPC_MAX_SRC        10
#define RPC_MAX_OP_PARAMS  64
#define RPC_MAX_NAME       64
#define RPC_CONN_CAPS_SIZE 24
#define RPC_HASH_THRESHOLD (10u * 1024u * 1024u)
#define RPC_TENSOR_SIZE    296

_Static_assert(GGML_MAX_DIMS == RPC_MAX_DIMS, "ggml and the RPC wire disagree on GGML_MAX_DIMS");
_Static_assert(GGML_MAX_SRC == RPC_MAX_SRC, "ggml and the RPC wire disagree on GGML_MAX_SRC");
_Static_assert(GGML_MAX_OP_PARAMS == RPC_MAX_OP_PARAMS, "ggml and the RPC wire disagree on GGML_MAX_OP_PARAMS");
_Static_assert(GGML_MAX_NAME == RPC_MAX_NAME, "ggml and the RPC wire disagree on GGML_MAX_NAME");

enum rpc_cmd {
    RPC_CMD_ALLOC_BUFFER      = 0,
    RPC_CMD_GET_ALIGNMENT     = 1,
    RPC_CMD_GET_MAX_SIZE      = 2,
    RPC_CMD_BUFFER_GET_BASE   = 3,
    RPC_CMD_FREE_BUFFER       = 4,
    RPC_CMD_BUFFER_CLEAR      = 5,
    RPC_CMD_SET_TENSOR        = 6,
    RPC_CMD_SET_TENSOR_HASH   = 7,
    RPC_CMD_GET_TENSOR        = 8,
    RPC_CMD_COPY_TENSOR       = 9,
    RPC_CMD_GRAPH_COMPUTE     = 10,
    RPC_CMD_GET_DEVICE_MEMORY = 11,
    RPC_CMD_INIT_TENSOR       = 12,
    RPC_CMD_GET_ALLOC_SIZE    = 13,
    RPC_CMD_HELLO             = 14,
    RPC_CMD_DEVICE_COUNT      = 15,
    RPC_CMD_GRAPH_RECOMPUTE   = 16,
    RPC_CMD_MEMSET_TENSOR     = 17,
    RPC_CMD_COUNT             = 18,
};

// the tensor record, decoded; numbers are the wire's (the server's ggml numbering)
struct rpc_tensor {
    uint64_t id;
    uint32_t type;
    uint64_t buffer;
    uint32_t ne[RPC_MAX_DIMS];
    uint32_t nb[RPC_MAX_DIMS];
    uint32_t op;
    int32_t  op_params[RPC_MAX_OP_PARAMS / 4];
    int32_t  flags;
    uint64_t src[RPC_MAX_SRC];
    uint64_t view_src;
    uint64_t view_offs;
    uint64_t data;
    char     name[RPC_MAX_NAME];
    int32_t  use_count;
};

static inline void rpc_put_u32(uint8_t * p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t) (v >> (8 * i));
}
static inline void rpc_put_u64(uint8_t * p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t) (v >> (8 * i));
}
static inline uint32_t rpc_get_u32(const uint8_t * p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t) p[i] << (8 * i);
    return v;
}
static inline uint64_t rpc_get_u64(const uint8_t * p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t) p[i] << (8 * i);
    return v;
}

void rpc_tensor_encode(const struct rpc_tensor * t, uint8_t out[RPC_TENSOR_SIZE]);
void rpc_tensor_decode(const uint8_t in[RPC_TENSOR_SIZE], struct rpc_tensor * t);

// 64-bit FNV-1a, the hash of SET_TENSOR_HASH
uint64_t rpc_fnv1a64(const void * data, size_t size);

// I/O on a blocking or non-blocking descriptor with a deadline. timeout_ms <= 0: wait forever.
// They return false on error, end of stream or timeout, with a reason in *why.
bool rpc_write_all(int fd, const void * buf, size_t size, int timeout_ms, const char ** why);
bool rpc_read_all(int fd, void * buf, size_t size, int timeout_ms, const char ** why);

#endif // GGML_RPC_PROTO_H
