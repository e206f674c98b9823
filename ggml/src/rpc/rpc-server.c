// rpc-server.c - serves one of our backends over ggml's RPC protocol 5.1.0, one connection at a
// time (ggml-rpc.h). Every request is checked before it touches memory: buffer handles belong to
// this connection, tensor data lies inside its buffer, offsets and sizes stay inside it, graph
// nodes are rebuilt with our own op constructors (which check shapes and types) from sources
// that are already known. Any violation closes the connection; nothing aborts.

#define _GNU_SOURCE
#include "ggml-rpc.h"
#include "rpc-proto.h"
#include "rpc-ops.h"
#include "../ggml-backend-impl.h"
#include "../ggml-impl.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct srv_buffer {
    uint64_t handle;
    ggml_backend_buffer_t buf;
    uint64_t base; // address of its memory in this process
    uint64_t size;
};

struct srv {
    ggml_backend_t backend;
    struct ggml_x_rpc_server_params p;
    int fd;
    const char * why;
    char why_buf[256];
    struct srv_buffer * bufs;
    size_t n_bufs, cap_bufs;
    uint64_t next_handle;
    uint64_t allocated;
    // the last graph computed, for GRAPH_RECOMPUTE
    struct ggml_context * graph_ctx;
    struct ggml_cgraph * graph;
    struct rpc_arena graph_arena; // the translators' memory of that graph
    // scratch tensors for copies through the backend API
    struct ggml_context * tmp_ctx;
};

static bool fail(struct srv * s, const char * fmt, ...) GGML_ATTRIBUTE_FORMAT(2, 3);
static bool fail(struct srv * s, const char * fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->why_buf, sizeof(s->why_buf), fmt, ap);
    va_end(ap);
    s->why = s->why_buf;
    return false;
}

static bool recv_payload(struct srv * s, void * buf, size_t size) {
    const char * why = NULL;
    if (!rpc_read_all(s->fd, buf, size, s->p.io_timeout_ms, &why)) {
        return fail(s, "reading a request: %s", why);
    }
    return true;
}

static bool send_reply(struct srv * s, const void * payload, uint64_t size) {
    uint8_t hdr[8];
    rpc_put_u64(hdr, size);
    const char * why = NULL;
    if (!rpc_write_all(s->fd, hdr, 8, s->p.io_timeout_ms, &why) ||
        (size > 0 && !rpc_write_all(s->fd, payload, size, s->p.io_timeout_ms, &why))) {
        return fail(s, "sending a reply: %s", why);
    }
    return true;
}

static struct srv_buffer * find_buffer(struct srv * s, uint64_t handle) {
    if (handle == 0) {
        return NULL;
    }
    for (size_t i = 0; i < s->n_bufs; i++) {
        if (s->bufs[i].handle == handle) {
            return &s->bufs[i];
        }
    }
    return NULL;
}

// a checked tensor record: our type (-1: a wire type we hold as raw bytes), its buffer (NULL
// when none) and its footprint in it
struct checked {
    struct rpc_tensor r;
    int type;
    struct srv_buffer * buf;
    uint64_t extent;
};

// check_tensor decodes and checks a record: a known type; if it names a buffer, one of this
// connection's, with the tensor's whole footprint inside it. need_buffer: it must name one.
static bool check_tensor(struct srv * s, const uint8_t * rec, bool need_buffer, struct checked * c) {
    rpc_tensor_decode(rec, &c->r);
    c->type = rpc_type_from_wire_num(c->r.type);
    if (!rpc_wire_extent(c->r.type, c->r.ne, c->r.nb, &c->extent)) {
        return fail(s, "tensor '%s': unknown type %u or impossible geometry", c->r.name, c->r.type);
    }
    c->buf = find_buffer(s, c->r.buffer);
    if (c->buf == NULL) {
        if (need_buffer) {
            return fail(s, "tensor '%s': buffer 0x%" PRIx64 " is not one of this connection", c->r.name, c->r.buffer);
        }
        return true;
    }
    const uint64_t d = c->r.data;
    if (d < c->buf->base || d - c->buf->base > c->buf->size || c->extent > c->buf->size - (d - c->buf->base)) {
        return fail(s, "tensor '%s': data outside its buffer", c->r.name);
    }
    return true;
}

// local_tensor: a tensor of ctx with a checked record's type and geometry (raw bytes for a wire
// type we lack, rpc_local_layout); NULL when this server cannot hold that layout
static struct ggml_tensor * local_tensor(struct ggml_context * ctx, const struct checked * c) {
    enum ggml_type type;
    int64_t ne[4];
    size_t nb[4];
    if (!rpc_local_layout(c->r.type, c->r.ne, c->r.nb, &type, ne, nb)) {
        return NULL;
    }
    struct ggml_tensor * t = ggml_new_tensor_4d(ctx, type, ne[0], ne[1], ne[2], ne[3]);
    if (t != NULL) {
        for (int i = 0; i < 4; i++) {
            t->nb[i] = nb[i];
        }
    }
    return t;
}

// region [data + offset, + size) of a checked tensor, inside its buffer
static bool check_region(struct srv * s, const struct checked * c, uint64_t offset, uint64_t size, uint8_t ** p) {
    const uint64_t start = c->r.data - c->buf->base;
    if (offset > c->buf->size - start || size > c->buf->size - start - offset) {
        return fail(s, "tensor '%s': region of %" PRIu64 " bytes at offset %" PRIu64 " outside its buffer", c->r.name, size,
                    offset);
    }
    *p = (uint8_t *) (uintptr_t) (c->r.data + offset);
    return true;
}

// a 1-D I8 tensor over [p, p + size) of buf, for the backend's copy functions
static struct ggml_tensor * region_tensor(struct srv * s, struct srv_buffer * b, uint8_t * p, size_t size) {
    if (s->tmp_ctx != NULL) {
        ggml_free(s->tmp_ctx);
    }
    struct ggml_init_params ip = { .mem_size = 2 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    s->tmp_ctx = ggml_init(ip);
    if (s->tmp_ctx == NULL) {
        return NULL;
    }
    struct ggml_tensor * t = ggml_new_tensor_1d(s->tmp_ctx, GGML_TYPE_I8, (int64_t) size);
    if (t != NULL) {
        t->data = p;
        t->buffer = b->buf;
    }
    return t;
}

#define STAGE_CHUNK ((size_t) 16 << 20)

// recv_into reads size bytes of the request into buffer memory at p
static bool recv_into(struct srv * s, struct srv_buffer * b, uint8_t * p, uint64_t size) {
    if (ggml_backend_buffer_is_host(b->buf)) {
        return recv_payload(s, p, size);
    }
    uint8_t * stage = malloc(size < STAGE_CHUNK ? (size_t) size : STAGE_CHUNK);
    if (stage == NULL) {
        return fail(s, "out of memory");
    }
    for (uint64_t done = 0; done < size;) {
        size_t n = size - done < STAGE_CHUNK ? (size_t) (size - done) : STAGE_CHUNK;
        struct ggml_tensor * t;
        if (!recv_payload(s, stage, n) || (t = region_tensor(s, b, p + done, n)) == NULL) {
            free(stage);
            return s->why ? false : fail(s, "out of memory");
        }
        ggml_backend_tensor_set(t, stage, 0, n);
        done += n;
    }
    free(stage);
    return true;
}

// send_from replies with size bytes of buffer memory at p
static bool send_from(struct srv * s, struct srv_buffer * b, const uint8_t * p, uint64_t size) {
    if (ggml_backend_buffer_is_host(b->buf)) {
        return send_reply(s, p, size);
    }
    uint8_t hdr[8];
    rpc_put_u64(hdr, size);
    const char * why = NULL;
    if (!rpc_write_all(s->fd, hdr, 8, s->p.io_timeout_ms, &why)) {
        return fail(s, "sending a reply: %s", why);
    }
    uint8_t * stage = malloc(size < STAGE_CHUNK ? (size_t) size : STAGE_CHUNK);
    if (stage == NULL && size > 0) {
        return fail(s, "out of memory");
    }
    for (uint64_t done = 0; done < size;) {
        size_t n = size - done < STAGE_CHUNK ? (size_t) (size - done) : STAGE_CHUNK;
        struct ggml_tensor * t = region_tensor(s, b, (uint8_t *) p + done, n);
        if (t == NULL) {
            free(stage);
            return fail(s, "out of memory");
        }
        ggml_backend_tensor_get(t, stage, 0, n);
        if (!rpc_write_all(s->fd, stage, n, s->p.io_timeout_ms, &why)) {
            free(stage);
            return fail(s, "sending a reply: %s", why);
        }
        done += n;
    }
    free(stage);
    return true;
}

static bool fill(struct srv * s, struct srv_buffer * b, uint8_t * p, uint64_t size, uint8_t value) {
    if (ggml_backend_buffer_is_host(b->buf)) {
        memset(p, value, size);
        return true;
    }
    uint8_t * stage = malloc(size < STAGE_CHUNK ? (size_t) size : STAGE_CHUNK);
    if (stage == NULL && size > 0) {
        return fail(s, "out of memory");
    }
    memset(stage, value, size < STAGE_CHUNK ? (size_t) size : STAGE_CHUNK);
    for (uint64_t done = 0; done < size;) {
        size_t n = size - done < STAGE_CHUNK ? (size_t) (size - done) : STAGE_CHUNK;
        struct ggml_tensor * t = region_tensor(s, b, p + done, n);
        if (t == NULL) {
            free(stage);
            return fail(s, "out of memory");
        }
        ggml_backend_tensor_set(t, stage, 0, n);
        done += n;
    }
    free(stage);
    return true;
}

static void drop_graph(struct srv * s) {
    if (s->graph_ctx != NULL) {
        ggml_free(s->graph_ctx);
    }
    s->graph_ctx = NULL;
    s->graph = NULL;
    rpc_arena_free(&s->graph_arena);
}

static bool check_device(struct srv * s, const uint8_t * p) {
    uint32_t dev = rpc_get_u32(p);
    if (dev != 0) {
        return fail(s, "device %u out of range (1 device)", dev);
    }
    return true;
}

static uint64_t machine_memory(bool available) {
    long pages = sysconf(available ? _SC_AVPHYS_PAGES : _SC_PHYS_PAGES);
    long psize = sysconf(_SC_PAGESIZE);
    return pages > 0 && psize > 0 ? (uint64_t) pages * (uint64_t) psize : 0;
}

// the cache file of hash, or false when there is no cache
static bool cache_path(struct srv * s, uint64_t hash, char * out, size_t size) {
    if (s->p.cache_dir == NULL || s->p.cache_dir[0] == 0) {
        return false;
    }
    int n = snprintf(out, size, "%s/%016" PRIx64, s->p.cache_dir, hash);
    return n > 0 && (size_t) n < size;
}

static void cache_store(struct srv * s, const uint8_t * p, uint64_t size) {
    char path[4096];
    if (!cache_path(s, rpc_fnv1a64(p, size), path, sizeof(path))) {
        return;
    }
    struct stat st;
    if (stat(path, &st) == 0 && (uint64_t) st.st_size == size) {
        return;
    }
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp%d", path, (int) getpid());
    FILE * f = fopen(tmp, "wb");
    if (f == NULL) {
        return;
    }
    bool ok = fwrite(p, 1, size, f) == size;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
    }
}

// cache_load writes the cached bytes of hash at p (size bytes at most); false when absent
static bool cache_load(struct srv * s, uint64_t hash, uint8_t * p, uint64_t room, bool * out_of_bounds) {
    char path[4096];
    *out_of_bounds = false;
    if (!cache_path(s, hash, path, sizeof(path))) {
        return false;
    }
    FILE * f = fopen(path, "rb");
    if (f == NULL) {
        return false;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size < 0) {
        fclose(f);
        return false;
    }
    if ((uint64_t) st.st_size > room) {
        fclose(f);
        *out_of_bounds = true;
        return false;
    }
    bool ok = fread(p, 1, (size_t) st.st_size, f) == (size_t) st.st_size;
    fclose(f);
    return ok;
}

// --- commands ---

static bool cmd_alloc_buffer(struct srv * s, const uint8_t * req) {
    uint8_t rep[16] = { 0 };
    if (!check_device(s, req)) {
        return false;
    }
    const uint64_t size = rpc_get_u64(req + 4);
    bool room = s->p.max_alloc == 0 || (size <= s->p.max_alloc && s->allocated <= s->p.max_alloc - size);
    ggml_backend_buffer_t b = NULL;
    if (room && size <= (uint64_t) SIZE_MAX / 2) {
        b = ggml_backend_alloc_buffer(s->backend, (size_t) size);
        ggml_x_clear_error();
    }
    if (b != NULL) {
        if (s->n_bufs == s->cap_bufs) {
            size_t cap = s->cap_bufs ? 2 * s->cap_bufs : 16;
            struct srv_buffer * nb = realloc(s->bufs, cap * sizeof(*nb));
            if (nb == NULL) {
                ggml_backend_buffer_free(b);
                return fail(s, "out of memory");
            }
            s->bufs = nb;
            s->cap_bufs = cap;
        }
        struct srv_buffer * sb = &s->bufs[s->n_bufs++];
        sb->handle = s->next_handle;
        s->next_handle += 0x40;
        sb->buf = b;
        sb->base = (uint64_t) (uintptr_t) ggml_backend_buffer_get_base(b);
        sb->size = ggml_backend_buffer_get_size(b);
        s->allocated += sb->size;
        rpc_put_u64(rep, sb->handle);
        rpc_put_u64(rep + 8, sb->size);
    }
    return send_reply(s, rep, 16);
}

static bool cmd_buffer_get_base(struct srv * s, const uint8_t * req) {
    struct srv_buffer * b = find_buffer(s, rpc_get_u64(req));
    if (b == NULL) {
        return fail(s, "BUFFER_GET_BASE: unknown buffer");
    }
    uint8_t rep[8];
    rpc_put_u64(rep, b->base);
    return send_reply(s, rep, 8);
}

static bool cmd_free_buffer(struct srv * s, const uint8_t * req) {
    struct srv_buffer * b = find_buffer(s, rpc_get_u64(req));
    if (b == NULL) {
        return fail(s, "FREE_BUFFER: unknown buffer");
    }
    drop_graph(s); // it may use this buffer
    ggml_backend_buffer_free(b->buf);
    s->allocated -= b->size;
    *b = s->bufs[--s->n_bufs];
    return send_reply(s, NULL, 0);
}

static bool cmd_buffer_clear(struct srv * s, const uint8_t * req) {
    struct srv_buffer * b = find_buffer(s, rpc_get_u64(req));
    if (b == NULL) {
        return fail(s, "BUFFER_CLEAR: unknown buffer");
    }
    ggml_backend_buffer_clear(b->buf, req[8]);
    return send_reply(s, NULL, 0);
}

static bool cmd_set_tensor(struct srv * s, uint64_t size) {
    uint8_t hdr[RPC_TENSOR_SIZE + 8];
    if (size < sizeof(hdr)) {
        return fail(s, "SET_TENSOR: payload of %" PRIu64 " bytes is too short", size);
    }
    if (!recv_payload(s, hdr, sizeof(hdr))) {
        return false;
    }
    struct checked c;
    uint8_t * p = NULL;
    const uint64_t n = size - sizeof(hdr);
    if (!check_tensor(s, hdr, true, &c) || !check_region(s, &c, rpc_get_u64(hdr + RPC_TENSOR_SIZE), n, &p)) {
        return false;
    }
    if (!recv_into(s, c.buf, p, n)) {
        return false;
    }
    if (n > RPC_HASH_THRESHOLD && ggml_backend_buffer_is_host(c.buf->buf)) {
        cache_store(s, p, n);
    }
    return true;
}

static bool cmd_set_tensor_hash(struct srv * s, const uint8_t * req) {
    struct checked c;
    if (!check_tensor(s, req, true, &c)) {
        return false;
    }
    const uint64_t offset = rpc_get_u64(req + RPC_TENSOR_SIZE);
    const uint64_t hash = rpc_get_u64(req + RPC_TENSOR_SIZE + 8);
    uint8_t * p = NULL;
    if (!check_region(s, &c, offset, 0, &p)) {
        return false;
    }
    uint8_t result = 0;
    if (ggml_backend_buffer_is_host(c.buf->buf)) {
        bool oob = false;
        const uint64_t room = c.buf->size - (c.r.data - c.buf->base) - offset;
        result = cache_load(s, hash, p, room, &oob) ? 1 : 0;
        if (oob) {
            return fail(s, "SET_TENSOR_HASH: cached data outside the buffer");
        }
    }
    return send_reply(s, &result, 1);
}

static bool cmd_get_tensor(struct srv * s, const uint8_t * req) {
    struct checked c;
    uint8_t * p = NULL;
    const uint64_t size = rpc_get_u64(req + RPC_TENSOR_SIZE + 8);
    if (!check_tensor(s, req, true, &c) || !check_region(s, &c, rpc_get_u64(req + RPC_TENSOR_SIZE), size, &p)) {
        return false;
    }
    return send_from(s, c.buf, p, size);
}

static bool cmd_memset_tensor(struct srv * s, const uint8_t * req) {
    struct checked c;
    uint8_t * p = NULL;
    const uint64_t size = rpc_get_u64(req + RPC_TENSOR_SIZE + 8);
    if (!check_tensor(s, req, true, &c) || !check_region(s, &c, rpc_get_u64(req + RPC_TENSOR_SIZE), size, &p)) {
        return false;
    }
    if (!fill(s, c.buf, p, size, req[RPC_TENSOR_SIZE + 16])) {
        return false;
    }
    return send_reply(s, NULL, 0);
}

static bool cmd_copy_tensor(struct srv * s, const uint8_t * req) {
    struct checked src, dst;
    uint8_t * p = NULL;
    if (!check_tensor(s, req, true, &src) || !check_tensor(s, req + RPC_TENSOR_SIZE, true, &dst) ||
        !check_region(s, &dst, 0, src.extent, &p)) {
        return false;
    }
    uint8_t result = 0;
    if (ggml_backend_buffer_is_host(src.buf->buf) && ggml_backend_buffer_is_host(dst.buf->buf)) {
        memmove(p, (void *) (uintptr_t) src.r.data, src.extent);
        result = 1;
    } else {
        struct ggml_init_params ip = { .mem_size = 4 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
        struct ggml_context * ctx = ggml_init(ip);
        if (ctx == NULL) {
            return fail(s, "out of memory");
        }
        struct ggml_tensor * a = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, (int64_t) src.extent);
        struct ggml_tensor * b = ggml_new_tensor_1d(ctx, GGML_TYPE_I8, (int64_t) src.extent);
        if (a != NULL && b != NULL) {
            a->data = (void *) (uintptr_t) src.r.data;
            a->buffer = src.buf->buf;
            b->data = p;
            b->buffer = dst.buf->buf;
            result = ggml_backend_buffer_copy_tensor(a, b) ? 1 : 0;
        }
        ggml_free(ctx);
        ggml_x_clear_error();
    }
    return send_reply(s, &result, 1);
}

static bool cmd_init_tensor(struct srv * s, const uint8_t * req) {
    struct checked c;
    if (!check_tensor(s, req, true, &c)) {
        return false;
    }
    // our backends keep no per-tensor state in buffers (no init_tensor work to do), but the
    // buffer's hook is called for backends that do
    if (c.buf->buf->iface.init_tensor != NULL) {
        struct ggml_init_params ip = { .mem_size = 2 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
        struct ggml_context * ctx = ggml_init(ip);
        if (ctx == NULL) {
            return fail(s, "out of memory");
        }
        struct ggml_tensor * t = local_tensor(ctx, &c);
        if (t != NULL) {
            t->data = (void *) (uintptr_t) c.r.data;
            t->buffer = c.buf->buf;
            ggml_backend_buffer_init_tensor(c.buf->buf, t);
        }
        ggml_free(ctx);
        ggml_x_clear_error();
    }
    return send_reply(s, NULL, 0);
}

static bool cmd_get_alloc_size(struct srv * s, const uint8_t * req) {
    if (!check_device(s, req)) {
        return false;
    }
    struct checked c;
    if (!check_tensor(s, req + 4, false, &c)) {
        return false;
    }
    uint64_t size = c.extent;
    struct ggml_init_params ip = { .mem_size = 2 * ggml_tensor_overhead(), .mem_buffer = NULL, .no_alloc = true };
    struct ggml_context * ctx = ggml_init(ip);
    if (ctx != NULL) {
        // a type we hold as raw bytes takes its wire size
        struct ggml_tensor * t = c.type >= 0 ? local_tensor(ctx, &c) : NULL;
        if (t != NULL) {
            size = ggml_backend_buft_get_alloc_size(ggml_backend_get_default_buffer_type(s->backend), t);
        }
        ggml_free(ctx);
    }
    ggml_x_clear_error();
    uint8_t rep[8];
    rpc_put_u64(rep, size);
    return send_reply(s, rep, 8);
}

// --- graphs ---

struct id_map {
    uint64_t * keys;
    int32_t * vals;
    size_t mask;
};

static bool id_map_init(struct id_map * m, size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) {
        cap <<= 1;
    }
    m->keys = calloc(cap, sizeof(uint64_t));
    m->vals = calloc(cap, sizeof(int32_t));
    m->mask = cap - 1;
    return m->keys != NULL && m->vals != NULL;
}

static void id_map_free(struct id_map * m) {
    free(m->keys);
    free(m->vals);
}

static size_t id_slot(const struct id_map * m, uint64_t id) {
    size_t h = (size_t) ((id * 0x9e3779b97f4a7c15ull) >> 17) & m->mask;
    while (m->keys[h] != 0 && m->keys[h] != id) {
        h = (h + 1) & m->mask;
    }
    return h;
}

static bool compute_graph(struct srv * s, struct ggml_cgraph * g, struct rpc_arena * arena) {
    ggml_x_clear_error();
    if (arena->error != NULL) {
        *arena->error = 0;
    }
    if (!ggml_backend_graph_compute(s->backend, g)) {
        const char * e = ggml_x_last_error();
        return fail(s, "graph computation failed: %s", e && e[0] ? e : "backend error");
    }
    if (arena->error != NULL && *arena->error != 0) {
        return fail(s, "graph computation failed: a row index out of range (SET_ROWS)");
    }
    return true;
}

static bool cmd_graph_compute(struct srv * s, uint64_t size) {
    const uint64_t limit = s->p.max_message ? s->p.max_message : ((uint64_t) 1 << 30);
    if (size < 12 || size > limit) {
        return fail(s, "GRAPH_COMPUTE: payload of %" PRIu64 " bytes out of range", size);
    }
    uint8_t * msg = malloc((size_t) size);
    if (msg == NULL) {
        return fail(s, "out of memory for a graph of %" PRIu64 " bytes", size);
    }
    struct id_map ids = { 0 };
    struct ggml_context * ctx = NULL;
    struct rpc_arena arena = { 0 };
    bool ok = false;
    if (!recv_payload(s, msg, (size_t) size) || !check_device(s, msg)) {
        goto done;
    }
    const uint64_t n_nodes = rpc_get_u32(msg + 4);
    const uint32_t max_nodes = s->p.max_graph_nodes ? s->p.max_graph_nodes : (1u << 20);
    if (n_nodes > max_nodes || 12 + 8 * n_nodes > size) {
        fail(s, "GRAPH_COMPUTE: %" PRIu64 " nodes do not fit the message or the limit", n_nodes);
        goto done;
    }
    const uint64_t n_tensors = rpc_get_u32(msg + 8 + 8 * n_nodes);
    if (n_tensors > 2 * (uint64_t) max_nodes + 64 || size != 12 + 8 * n_nodes + RPC_TENSOR_SIZE * n_tensors) {
        fail(s, "GRAPH_COMPUTE: size does not match %" PRIu64 " nodes and %" PRIu64 " tensors", n_nodes, n_tensors);
        goto done;
    }
    const uint8_t * recs = msg + 12 + 8 * n_nodes;
    if (!id_map_init(&ids, n_tensors)) {
        fail(s, "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < n_tensors; i++) {
        const uint64_t id = rpc_get_u64(recs + RPC_TENSOR_SIZE * i);
        size_t h = id_slot(&ids, id);
        if (id == 0 || ids.keys[h] == id) {
            fail(s, "GRAPH_COMPUTE: tensor id 0 or repeated");
            goto done;
        }
        ids.keys[h] = id;
        ids.vals[h] = (int32_t) i;
    }
    // which records are nodes, in which order
    int32_t * node_of = malloc(sizeof(int32_t) * (n_tensors ? n_tensors : 1)); // record -> node index or -1
    struct ggml_tensor ** built = calloc(n_tensors ? n_tensors : 1, sizeof(struct ggml_tensor *));
    if (node_of == NULL || built == NULL) {
        free(node_of);
        free(built);
        fail(s, "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < n_tensors; i++) {
        node_of[i] = -1;
    }
    int32_t * order = malloc(sizeof(int32_t) * (n_nodes ? n_nodes : 1));
    if (order == NULL) {
        free(node_of);
        free(built);
        fail(s, "out of memory");
        goto done;
    }
    for (uint64_t i = 0; i < n_nodes; i++) {
        const uint64_t id = rpc_get_u64(msg + 8 + 8 * i);
        size_t h = id_slot(&ids, id);
        if (id == 0 || ids.keys[h] != id || node_of[ids.vals[h]] >= 0) {
            fail(s, "GRAPH_COMPUTE: node %" PRIu64 " is not in the tensor list, or repeated", i);
            goto free_lists;
        }
        node_of[ids.vals[h]] = (int32_t) i;
        order[i] = ids.vals[h];
    }
    {
        struct ggml_init_params ip = {
            .mem_size = (size_t) (2 * n_tensors + 16) * ggml_tensor_overhead() + ggml_graph_overhead_custom(n_tensors + 1, false),
            .mem_buffer = NULL,
            .no_alloc = true,
        };
        ctx = ggml_init(ip);
    }
    if (ctx == NULL) {
        fail(s, "out of memory");
        goto free_lists;
    }
    // leaves: every record that is not a node, as a plain tensor at its (checked) data
    for (uint64_t i = 0; i < n_tensors; i++) {
        if (node_of[i] >= 0) {
            continue;
        }
        struct checked c;
        if (!check_tensor(s, recs + RPC_TENSOR_SIZE * i, true, &c)) {
            goto free_lists;
        }
        struct ggml_tensor * t = local_tensor(ctx, &c);
        if (t == NULL) {
            const char * e = ggml_x_last_error();
            fail(s, "GRAPH_COMPUTE: leaf '%s': %s", c.r.name, e && e[0] ? e : "a layout this server cannot hold");
            goto free_lists;
        }
        t->data = (void *) (uintptr_t) c.r.data;
        t->buffer = c.buf->buf;
        memcpy(t->name, c.r.name, sizeof(t->name));
        built[i] = t;
    }
    // nodes, in order, each from its sources with our constructors
    for (uint64_t k = 0; k < n_nodes; k++) {
        const int32_t i = order[k];
        struct checked c;
        if (!check_tensor(s, recs + RPC_TENSOR_SIZE * (uint64_t) i, true, &c)) {
            goto free_lists;
        }
        struct rpc_wire_node wn = { .op = c.r.op, .type = c.r.type, .p = c.r.op_params, .ne = c.r.ne, .nb = c.r.nb };
        for (int j = 0; j < RPC_MAX_SRC; j++) {
            if (c.r.src[j] == 0) {
                continue;
            }
            if (c.r.src[j] == c.r.id) {
                wn.self_src |= 1u << j; // a cast: the node is its own destination
                continue;
            }
            size_t h = id_slot(&ids, c.r.src[j]);
            if (ids.keys[h] != c.r.src[j] || built[ids.vals[h]] == NULL) {
                fail(s, "GRAPH_COMPUTE: node '%s': source %d is not in the graph before it", c.r.name, j);
                goto free_lists;
            }
            wn.src[j] = built[ids.vals[h]];
            wn.src_type[j] = rpc_get_u32(recs + RPC_TENSOR_SIZE * (uint64_t) ids.vals[h] + 8); // its record's type
        }
        const char * why = "";
        ggml_x_clear_error();
        struct ggml_tensor * t = rpc_build_node(ctx, &wn, &arena, &why);
        if (t == NULL) {
            const char * e = ggml_x_last_error();
            fail(s, "GRAPH_COMPUTE: node '%s' (wire op %u): %s", c.r.name, c.r.op, e && e[0] ? e : why);
            goto free_lists;
        }
        // the node must come out as the record says, in our layout of its type
        enum ggml_type lt;
        int64_t lne[4];
        size_t lnb[4];
        bool same = rpc_local_layout(c.r.type, c.r.ne, c.r.nb, &lt, lne, lnb) && t->type == lt;
        for (int d = 0; d < 4 && same; d++) {
            same = t->ne[d] == lne[d] && t->nb[d] == lnb[d];
        }
        if (!same) {
            fail(s, "GRAPH_COMPUTE: node '%s': type or shape differs from what its op gives", c.r.name);
            goto free_lists;
        }
        // a backend without this op (or without custom ops, which some translators use) refuses
        // the graph here rather than failing inside the computation
        if (!ggml_backend_supports_op(s->backend, t)) {
            fail(s, "GRAPH_COMPUTE: node '%s' (wire op %u): not supported by backend %s", c.r.name, c.r.op,
                 ggml_backend_name(s->backend));
            goto free_lists;
        }
        if (t->view_src != NULL) {
            if ((uint64_t) (uintptr_t) t->data != c.r.data) {
                fail(s, "GRAPH_COMPUTE: view '%s': data differs from its source's", c.r.name);
                goto free_lists;
            }
        } else {
            t->data = (void *) (uintptr_t) c.r.data;
            t->buffer = c.buf->buf;
        }
        memcpy(t->name, c.r.name, sizeof(t->name));
        built[i] = t;
    }
    {
        struct ggml_cgraph * g = ggml_new_graph_custom(ctx, n_tensors + 1, false);
        if (g == NULL) {
            fail(s, "out of memory");
            goto free_lists;
        }
        for (uint64_t k = 0; k < n_nodes; k++) {
            ggml_build_forward_expand(g, built[order[k]]);
        }
        free(node_of);
        free(built);
        free(order);
        node_of = NULL;
        built = NULL;
        order = NULL;
        if (!compute_graph(s, g, &arena)) {
            goto done;
        }
        drop_graph(s);
        s->graph_ctx = ctx;
        s->graph = g;
        s->graph_arena = arena;
        memset(&arena, 0, sizeof(arena));
        ctx = NULL;
        ok = true;
    }
free_lists:
    free(node_of);
    free(built);
    free(order);
done:
    if (ctx != NULL) {
        ggml_free(ctx);
    }
    rpc_arena_free(&arena);
    id_map_free(&ids);
    free(msg);
    return ok;
}

static bool cmd_graph_recompute(struct srv * s, const uint8_t * req) {
    if (!check_device(s, req)) {
        return false;
    }
    if (s->graph == NULL) {
        return fail(s, "GRAPH_RECOMPUTE: no graph to recompute");
    }
    return compute_graph(s, s->graph, &s->graph_arena);
}

// fixed payload sizes; -1: variable
static const int64_t req_size[RPC_CMD_COUNT] = {
    [RPC_CMD_ALLOC_BUFFER] = 12,
    [RPC_CMD_GET_ALIGNMENT] = 4,
    [RPC_CMD_GET_MAX_SIZE] = 4,
    [RPC_CMD_BUFFER_GET_BASE] = 8,
    [RPC_CMD_FREE_BUFFER] = 8,
    [RPC_CMD_BUFFER_CLEAR] = 9,
    [RPC_CMD_SET_TENSOR] = -1,
    [RPC_CMD_SET_TENSOR_HASH] = RPC_TENSOR_SIZE + 16,
    [RPC_CMD_GET_TENSOR] = RPC_TENSOR_SIZE + 16,
    [RPC_CMD_COPY_TENSOR] = 2 * RPC_TENSOR_SIZE,
    [RPC_CMD_GRAPH_COMPUTE] = -1,
    [RPC_CMD_GET_DEVICE_MEMORY] = 4,
    [RPC_CMD_INIT_TENSOR] = RPC_TENSOR_SIZE,
    [RPC_CMD_GET_ALLOC_SIZE] = 4 + RPC_TENSOR_SIZE * (1 + RPC_MAX_SRC),
    [RPC_CMD_HELLO] = RPC_CONN_CAPS_SIZE,
    [RPC_CMD_DEVICE_COUNT] = 0,
    [RPC_CMD_GRAPH_RECOMPUTE] = 4,
    [RPC_CMD_MEMSET_TENSOR] = RPC_TENSOR_SIZE + 17,
};

static const char * const cmd_names[RPC_CMD_COUNT] = {
    "ALLOC_BUFFER", "GET_ALIGNMENT", "GET_MAX_SIZE", "BUFFER_GET_BASE", "FREE_BUFFER", "BUFFER_CLEAR",
    "SET_TENSOR", "SET_TENSOR_HASH", "GET_TENSOR", "COPY_TENSOR", "GRAPH_COMPUTE", "GET_DEVICE_MEMORY",
    "INIT_TENSOR", "GET_ALLOC_SIZE", "HELLO", "DEVICE_COUNT", "GRAPH_RECOMPUTE", "MEMSET_TENSOR",
};

// serve_one handles one request; false closes the connection (s->why says why; NULL: the
// client closed it between requests)
static bool serve_one(struct srv * s, bool * hello_done) {
    uint8_t hdr[9];
    const char * why = NULL;
    if (!rpc_read_all(s->fd, hdr, 1, s->p.idle_timeout_ms, &why)) {
        if (strcmp(why, "connection closed by the peer") != 0) {
            fail(s, "waiting for a request: %s", why);
        }
        return false;
    }
    if (!recv_payload(s, hdr + 1, 8)) {
        return false;
    }
    const uint8_t cmd = hdr[0];
    const uint64_t size = rpc_get_u64(hdr + 1);
    if (cmd >= RPC_CMD_COUNT) {
        return fail(s, "unknown command %u", cmd);
    }
    if (!*hello_done && cmd != RPC_CMD_HELLO) {
        return fail(s, "%s before HELLO", cmd_names[cmd]);
    }
    if (*hello_done && cmd == RPC_CMD_HELLO) {
        return fail(s, "second HELLO");
    }
    if (req_size[cmd] >= 0 && size != (uint64_t) req_size[cmd]) {
        if (cmd == RPC_CMD_HELLO && size == 0) {
            return fail(s, "HELLO without capabilities: the client needs upgrade to protocol %d.%d.%d", RPC_PROTO_MAJOR,
                        RPC_PROTO_MINOR, RPC_PROTO_PATCH);
        }
        return fail(s, "%s: payload of %" PRIu64 " bytes, expected %" PRId64, cmd_names[cmd], size, req_size[cmd]);
    }
    if (cmd == RPC_CMD_SET_TENSOR) {
        return cmd_set_tensor(s, size);
    }
    if (cmd == RPC_CMD_GRAPH_COMPUTE) {
        return cmd_graph_compute(s, size);
    }
    uint8_t req[4 + RPC_TENSOR_SIZE * (1 + RPC_MAX_SRC)];
    if (size > 0 && !recv_payload(s, req, (size_t) size)) {
        return false;
    }
    uint8_t rep[32] = { 0 };
    switch (cmd) {
        case RPC_CMD_HELLO:
            *hello_done = true;
            rep[0] = RPC_PROTO_MAJOR;
            rep[1] = RPC_PROTO_MINOR;
            rep[2] = RPC_PROTO_PATCH;
            return send_reply(s, rep, 4 + RPC_CONN_CAPS_SIZE); // zero capabilities: plain TCP
        case RPC_CMD_DEVICE_COUNT:
            rpc_put_u32(rep, 1);
            return send_reply(s, rep, 4);
        case RPC_CMD_GET_ALIGNMENT: {
            if (!check_device(s, req)) {
                return false;
            }
            size_t a = s->p.alignment ? s->p.alignment : ggml_backend_get_alignment(s->backend);
            rpc_put_u64(rep, a);
            return send_reply(s, rep, 8);
        }
        case RPC_CMD_GET_MAX_SIZE:
            if (!check_device(s, req)) {
                return false;
            }
            rpc_put_u64(rep, s->p.max_alloc ? s->p.max_alloc : UINT64_MAX);
            return send_reply(s, rep, 8);
        case RPC_CMD_GET_DEVICE_MEMORY:
            if (!check_device(s, req)) {
                return false;
            }
            rpc_put_u64(rep, s->p.free_mem ? s->p.free_mem : machine_memory(true));
            rpc_put_u64(rep + 8, s->p.total_mem ? s->p.total_mem : machine_memory(false));
            return send_reply(s, rep, 16);
        case RPC_CMD_ALLOC_BUFFER: return cmd_alloc_buffer(s, req);
        case RPC_CMD_BUFFER_GET_BASE: return cmd_buffer_get_base(s, req);
        case RPC_CMD_FREE_BUFFER: return cmd_free_buffer(s, req);
        case RPC_CMD_BUFFER_CLEAR: return cmd_buffer_clear(s, req);
        case RPC_CMD_SET_TENSOR_HASH: return cmd_set_tensor_hash(s, req);
        case RPC_CMD_GET_TENSOR: return cmd_get_tensor(s, req);
        case RPC_CMD_COPY_TENSOR: return cmd_copy_tensor(s, req);
        case RPC_CMD_INIT_TENSOR: return cmd_init_tensor(s, req);
        case RPC_CMD_GET_ALLOC_SIZE: return cmd_get_alloc_size(s, req);
        case RPC_CMD_GRAPH_RECOMPUTE: return cmd_graph_recompute(s, req);
        case RPC_CMD_MEMSET_TENSOR: return cmd_memset_tensor(s, req);
        default:
            return fail(s, "unknown command %u", cmd);
    }
}

struct ggml_x_rpc_server_params ggml_x_rpc_server_default_params(void) {
    struct ggml_x_rpc_server_params p;
    memset(&p, 0, sizeof(p));
    p.io_timeout_ms = 60000;
    return p;
}

int ggml_x_rpc_serve_fd(ggml_backend_t backend, int fd, const struct ggml_x_rpc_server_params * params, char * why_out,
                        size_t why_size) {
    struct srv s;
    memset(&s, 0, sizeof(s));
    s.backend = backend;
    s.p = params ? *params : ggml_x_rpc_server_default_params();
    s.fd = fd;
    s.next_handle = 0x5250430000001000ull; // "RPC": handles are opaque to clients
    // this thread reports errors instead of aborting, whatever the process default is
    const bool was_recoverable = ggml_x_get_thread_recoverable();
    ggml_x_set_thread_recoverable(true);
    bool hello = false;
    if (backend == NULL) {
        fail(&s, "no backend to serve");
    } else {
        while (serve_one(&s, &hello)) {
        }
    }
    drop_graph(&s);
    for (size_t i = 0; i < s.n_bufs; i++) {
        ggml_backend_buffer_free(s.bufs[i].buf);
    }
    free(s.bufs);
    if (s.tmp_ctx != NULL) {
        ggml_free(s.tmp_ctx);
    }
    ggml_x_clear_error();
    ggml_x_set_thread_recoverable(was_recoverable);
    if (why_out != NULL && why_size > 0) {
        snprintf(why_out, why_size, "%s", s.why ? s.why : "");
    }
    if (s.why != NULL && s.p.verbose) {
        fprintf(stderr, "ggml-rpc-server: closing the connection: %s\n", s.why);
    }
    return s.why ? -1 : 0;
}
