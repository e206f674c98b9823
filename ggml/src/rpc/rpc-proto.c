// rpc-proto.c - tensor record encoding and descriptor I/O with deadlines (rpc-proto.h).

#include "rpc-proto.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

void rpc_tensor_encode(const struct rpc_tensor * t, uint8_t out[RPC_TENSOR_SIZE]) {
    memset(out, 0, RPC_TENSOR_SIZE);
    rpc_put_u64(out + 0, t->id);
    rpc_put_u32(out + 8, t->type);
    rpc_put_u64(out + 12, t->buffer);
    for (int i = 0; i < RPC_MAX_DIMS; i++) {
        rpc_put_u32(out + 20 + 4 * i, t->ne[i]);
        rpc_put_u32(out + 36 + 4 * i, t->nb[i]);
    }
    rpc_put_u32(out + 52, t->op);
    for (int i = 0; i < RPC_MAX_OP_PARAMS / 4; i++) {
        rpc_put_u32(out + 56 + 4 * i, (uint32_t) t->op_params[i]);
    }
    rpc_put_u32(out + 120, (uint32_t) t->flags);
    for (int i = 0; i < RPC_MAX_SRC; i++) {
        rpc_put_u64(out + 124 + 8 * i, t->src[i]);
    }
    rpc_put_u64(out + 204, t->view_src);
    rpc_put_u64(out + 212, t->view_offs);
    rpc_put_u64(out + 220, t->data);
    memcpy(out + 228, t->name, RPC_MAX_NAME);
    out[228 + RPC_MAX_NAME - 1] = 0;
    rpc_put_u32(out + 292, (uint32_t) t->use_count);
}

void rpc_tensor_decode(const uint8_t in[RPC_TENSOR_SIZE], struct rpc_tensor * t) {
    t->id = rpc_get_u64(in + 0);
    t->type = rpc_get_u32(in + 8);
    t->buffer = rpc_get_u64(in + 12);
    for (int i = 0; i < RPC_MAX_DIMS; i++) {
        t->ne[i] = rpc_get_u32(in + 20 + 4 * i);
        t->nb[i] = rpc_get_u32(in + 36 + 4 * i);
    }
    t->op = rpc_get_u32(in + 52);
    for (int i = 0; i < RPC_MAX_OP_PARAMS / 4; i++) {
        t->op_params[i] = (int32_t) rpc_get_u32(in + 56 + 4 * i);
    }
    t->flags = (int32_t) rpc_get_u32(in + 120);
    for (int i = 0; i < RPC_MAX_SRC; i++) {
        t->src[i] = rpc_get_u64(in + 124 + 8 * i);
    }
    t->view_src = rpc_get_u64(in + 204);
    t->view_offs = rpc_get_u64(in + 212);
    t->data = rpc_get_u64(in + 220);
    memcpy(t->name, in + 228, RPC_MAX_NAME);
    t->name[RPC_MAX_NAME - 1] = 0;
    t->use_count = (int32_t) rpc_get_u32(in + 292);
}

uint64_t rpc_fnv1a64(const void * data, size_t size) {
    const uint8_t * p = data;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// wait until fd is ready for events or the deadline (0: none) passes
static bool wait_fd(int fd, short events, int64_t deadline, const char ** why) {
    for (;;) {
        int wait = -1;
        if (deadline > 0) {
            int64_t left = deadline - now_ms();
            if (left <= 0) {
                *why = "timed out";
                return false;
            }
            wait = left > 1000000 ? 1000000 : (int) left;
        }
        struct pollfd p = { .fd = fd, .events = events };
        int r = poll(&p, 1, wait);
        if (r > 0) {
            return true;
        }
        if (r < 0 && errno != EINTR) {
            *why = "poll failed";
            return false;
        }
    }
}

#define RPC_IO_CHUNK ((size_t) 1 << 30)

bool rpc_write_all(int fd, const void * buf, size_t size, int timeout_ms, const char ** why) {
    const uint8_t * p = buf;
    int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
    while (size > 0) {
        if (!wait_fd(fd, POLLOUT, deadline, why)) {
            return false;
        }
        ssize_t n = send(fd, p, size < RPC_IO_CHUNK ? size : RPC_IO_CHUNK, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
                continue;
            }
            if (errno == ENOTSOCK) {
                n = write(fd, p, size < RPC_IO_CHUNK ? size : RPC_IO_CHUNK);
                if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
                    continue;
                }
            }
            if (n < 0) {
                *why = "connection lost while sending";
                return false;
            }
        }
        p += n;
        size -= (size_t) n;
    }
    return true;
}

bool rpc_read_all(int fd, void * buf, size_t size, int timeout_ms, const char ** why) {
    uint8_t * p = buf;
    int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
    while (size > 0) {
        if (!wait_fd(fd, POLLIN, deadline, why)) {
            return false;
        }
        ssize_t n = recv(fd, p, size < RPC_IO_CHUNK ? size : RPC_IO_CHUNK, MSG_DONTWAIT);
        if (n < 0 && errno == ENOTSOCK) {
            n = read(fd, p, size < RPC_IO_CHUNK ? size : RPC_IO_CHUNK);
        }
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
                continue;
            }
            *why = "connection lost while receiving";
            return false;
        }
        if (n == 0) {
            *why = "connection closed by the peer";
            return false;
        }
        p += n;
        size -= (size_t) n;
    }
    return true;
}
