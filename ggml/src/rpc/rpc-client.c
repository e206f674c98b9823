// rpc-client.c - the RPC backend: buffers and graph computations on a remote server speaking
// ggml's RPC protocol 5.1.0 (ggml-rpc.h).
//
// One connection per backend, shared by its buffer type and buffers (reference counted, one
// request in flight at a time under a mutex). Every request has a deadline; the first failure
// marks the connection dead, records an error (ggml_x_last_error) and makes every later call
// fail fast, so a dead, hung or garbling server never blocks or crashes the client.

#define _GNU_SOURCE
#include "ggml-rpc.h"
#include "rpc-proto.h"
#include "rpc-ops.h"
#include "../ggml-backend-impl.h"
#include "../ggml-impl.h"

#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

struct rpc_endpoint;

struct rpc_conn {
    struct rpc_endpoint * ep; // the endpoint whose (weakly) cached connection this is, or NULL
    int fd;
    pthread_mutex_t mu;
    int refs; // under registry_mu
    bool dead;
    char name[160]; // "RPC[endpoint]"
    struct ggml_x_rpc_client_params p;
    uint32_t n_devices;
    uint64_t alignment, max_size;
    struct ggml_backend_buffer_type buft;
    uint8_t * last_graph; // the last GRAPH_COMPUTE payload, for GRAPH_RECOMPUTE
    size_t last_graph_size;
};

struct rpc_buf {
    struct rpc_conn * conn;
    uint64_t handle;
    uint64_t base;
};

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;

static void conn_ref(struct rpc_conn * c) {
    pthread_mutex_lock(&registry_mu);
    c->refs++;
    pthread_mutex_unlock(&registry_mu);
}

static void endpoint_forget(struct rpc_conn * c); // under registry_mu

static void conn_unref(struct rpc_conn * c) {
    pthread_mutex_lock(&registry_mu);
    bool last = --c->refs == 0;
    if (last) {
        endpoint_forget(c);
    }
    pthread_mutex_unlock(&registry_mu);
    if (last) {
        close(c->fd);
        pthread_mutex_destroy(&c->mu);
        free(c->last_graph);
        free(c);
    }
}

// conn_fail marks the connection dead (caller holds c->mu) and records why
static bool conn_fail(struct rpc_conn * c, const char * what, const char * why) {
    if (!c->dead) {
        c->dead = true;
        shutdown(c->fd, SHUT_RDWR);
    }
    ggml_x_error(NULL, "%s: %s: %s (the connection is closed; create a new RPC backend to reconnect)", c->name, what, why);
    return false;
}

static const char * const cmd_name[RPC_CMD_COUNT] = {
    "ALLOC_BUFFER", "GET_ALIGNMENT", "GET_MAX_SIZE", "BUFFER_GET_BASE", "FREE_BUFFER", "BUFFER_CLEAR",
    "SET_TENSOR", "SET_TENSOR_HASH", "GET_TENSOR", "COPY_TENSOR", "GRAPH_COMPUTE", "GET_DEVICE_MEMORY",
    "INIT_TENSOR", "GET_ALLOC_SIZE", "HELLO", "DEVICE_COUNT", "GRAPH_RECOMPUTE", "MEMSET_TENSOR",
};

// send_locked writes one request: header, payload, then extra bytes (SET_TENSOR's data)
static bool send_locked(struct rpc_conn * c, uint8_t cmd, const void * payload, size_t size, const void * extra,
                        size_t extra_size) {
    if (c->dead) {
        ggml_x_error(NULL, "%s: %s: the connection is closed after an earlier failure; create a new RPC backend", c->name,
                     cmd_name[cmd]);
        return false;
    }
    uint8_t hdr[9];
    hdr[0] = cmd;
    rpc_put_u64(hdr + 1, (uint64_t) size + extra_size);
    const char * why = NULL;
    if (!rpc_write_all(c->fd, hdr, 9, c->p.timeout_ms, &why) ||
        (size > 0 && !rpc_write_all(c->fd, payload, size, c->p.timeout_ms, &why)) ||
        (extra_size > 0 && !rpc_write_all(c->fd, extra, extra_size, c->p.timeout_ms, &why))) {
        return conn_fail(c, cmd_name[cmd], why);
    }
    return true;
}

// recv_locked reads one reply of exactly rep_size bytes
static bool recv_locked(struct rpc_conn * c, uint8_t cmd, void * rep, size_t rep_size, int timeout_ms) {
    uint8_t hdr[8];
    const char * why = NULL;
    if (!rpc_read_all(c->fd, hdr, 8, timeout_ms, &why)) {
        return conn_fail(c, cmd_name[cmd], why);
    }
    const uint64_t size = rpc_get_u64(hdr);
    if (size != rep_size) {
        char msg[96];
        snprintf(msg, sizeof(msg), "malformed reply (%" PRIu64 " bytes, expected %zu)", size, rep_size);
        return conn_fail(c, cmd_name[cmd], msg);
    }
    if (rep_size > 0 && !rpc_read_all(c->fd, rep, rep_size, c->p.timeout_ms, &why)) {
        return conn_fail(c, cmd_name[cmd], why);
    }
    return true;
}

static bool call(struct rpc_conn * c, uint8_t cmd, const void * req, size_t req_size, void * rep, size_t rep_size) {
    pthread_mutex_lock(&c->mu);
    bool ok = send_locked(c, cmd, req, req_size, NULL, 0) && recv_locked(c, cmd, rep, rep_size, c->p.timeout_ms);
    pthread_mutex_unlock(&c->mu);
    return ok;
}

static bool send_only(struct rpc_conn * c, uint8_t cmd, const void * req, size_t req_size, const void * extra, size_t extra_size) {
    pthread_mutex_lock(&c->mu);
    bool ok = send_locked(c, cmd, req, req_size, extra, extra_size);
    pthread_mutex_unlock(&c->mu);
    return ok;
}

// --- tensors on the wire ---

GGML_CALL static const char * rpc_buffer_get_name(ggml_backend_buffer_t buffer);

static bool is_rpc_buffer(ggml_backend_buffer_t b) {
    return b != NULL && b->iface.get_name == rpc_buffer_get_name;
}

// fill_record describes t; node: it is computed in the graph being sent. False (with an
// error) when the wire cannot express it.
static bool fill_record(struct rpc_conn * c, const struct ggml_tensor * t, bool node, struct rpc_tensor * r) {
    memset(r, 0, sizeof(*r));
    r->id = (uint64_t) (uintptr_t) t;
    const int type = rpc_type_to_wire_num(t->type);
    if (type < 0) {
        ggml_x_error(NULL, "%s: tensor '%s': type %s has no RPC peer", c->name, t->name, ggml_type_name(t->type));
        return false;
    }
    r->type = (uint32_t) type;
    ggml_backend_buffer_t b = t->view_src != NULL && t->buffer == NULL ? t->view_src->buffer : t->buffer;
    if (is_rpc_buffer(b)) {
        struct rpc_buf * rb = b->context;
        r->buffer = rb->handle;
    }
    for (int i = 0; i < RPC_MAX_DIMS; i++) {
        if (t->ne[i] < 0 || (uint64_t) t->ne[i] > UINT32_MAX || (uint64_t) t->nb[i] > UINT32_MAX) {
            ggml_x_error(NULL, "%s: tensor '%s' is too large for the RPC protocol's 32-bit shapes", c->name, t->name);
            return false;
        }
        r->ne[i] = (uint32_t) t->ne[i];
        r->nb[i] = (uint32_t) t->nb[i];
    }
    if (node) {
        if (!rpc_node_to_wire(t, &r->op, r->op_params)) {
            ggml_x_error(NULL, "%s: op %s of '%s' cannot be computed by the server", c->name, ggml_op_name(t->op), t->name);
            return false;
        }
        r->flags = 16; // GGML_TENSOR_FLAG_COMPUTE of the server's ggml
    } else {
        rpc_leaf_op_to_wire(t, &r->op, r->op_params);
    }
    for (int i = 0; i < RPC_MAX_SRC; i++) {
        r->src[i] = (uint64_t) (uintptr_t) t->src[i];
    }
    r->view_src = (uint64_t) (uintptr_t) t->view_src;
    r->view_offs = t->view_offs;
    r->data = (uint64_t) (uintptr_t) t->data;
    snprintf(r->name, sizeof(r->name), "%s", t->name);
    return true;
}

static bool encode_tensor(struct rpc_conn * c, const struct ggml_tensor * t, uint8_t out[RPC_TENSOR_SIZE]) {
    struct rpc_tensor r;
    if (!fill_record(c, t, false, &r)) {
        return false;
    }
    rpc_tensor_encode(&r, out);
    return true;
}

// the server pads quantized rows for some backends (CUDA); upstream asks it only then
static bool needs_server_size(const struct ggml_tensor * t) {
    return ggml_is_quantized(t->type) && t->ne[0] % 512 != 0 && t->view_src == NULL;
}

// --- buffers ---

GGML_CALL static const char * rpc_buffer_get_name(ggml_backend_buffer_t buffer) {
    struct rpc_buf * b = buffer->context;
    return b->conn->name;
}

GGML_CALL static void rpc_buffer_free(ggml_backend_buffer_t buffer) {
    struct rpc_buf * b = buffer->context;
    struct rpc_conn * c = b->conn;
    uint8_t req[8];
    rpc_put_u64(req, b->handle);
    pthread_mutex_lock(&c->mu);
    // the server forgets its stored graph when a buffer goes (ours does; be safe with others)
    free(c->last_graph);
    c->last_graph = NULL;
    c->last_graph_size = 0;
    if (!c->dead) {
        if (send_locked(c, RPC_CMD_FREE_BUFFER, req, 8, NULL, 0)) {
            recv_locked(c, RPC_CMD_FREE_BUFFER, NULL, 0, c->p.timeout_ms);
        }
        ggml_x_clear_error(); // freeing never fails for the caller
    }
    pthread_mutex_unlock(&c->mu);
    free(b);
    conn_unref(c);
}

GGML_CALL static void * rpc_buffer_get_base(ggml_backend_buffer_t buffer) {
    struct rpc_buf * b = buffer->context;
    return (void *) (uintptr_t) b->base;
}

GGML_CALL static void rpc_buffer_init_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor) {
    struct rpc_buf * b = buffer->context;
    if (!needs_server_size(tensor)) {
        return;
    }
    uint8_t req[RPC_TENSOR_SIZE];
    if (encode_tensor(b->conn, tensor, req)) {
        call(b->conn, RPC_CMD_INIT_TENSOR, req, sizeof(req), NULL, 0);
    }
}

GGML_CALL static void rpc_buffer_set_tensor(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, const void * data,
                                  size_t offset, size_t size) {
    struct rpc_buf * b = buffer->context;
    struct rpc_conn * c = b->conn;
    uint8_t req[RPC_TENSOR_SIZE + 16];
    if (!encode_tensor(c, tensor, req)) {
        return;
    }
    rpc_put_u64(req + RPC_TENSOR_SIZE, offset);
    if (size > RPC_HASH_THRESHOLD) {
        rpc_put_u64(req + RPC_TENSOR_SIZE + 8, rpc_fnv1a64(data, size));
        uint8_t result = 0;
        if (!call(c, RPC_CMD_SET_TENSOR_HASH, req, sizeof(req), &result, 1)) {
            return;
        }
        if (result == 1) {
            return;
        }
    }
    send_only(c, RPC_CMD_SET_TENSOR, req, RPC_TENSOR_SIZE + 8, data, size);
}

GGML_CALL static void rpc_buffer_get_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor, void * data,
                                  size_t offset, size_t size) {
    struct rpc_buf * b = buffer->context;
    uint8_t req[RPC_TENSOR_SIZE + 16];
    if (!encode_tensor(b->conn, tensor, req)) {
        memset(data, 0, size);
        return;
    }
    rpc_put_u64(req + RPC_TENSOR_SIZE, offset);
    rpc_put_u64(req + RPC_TENSOR_SIZE + 8, size);
    if (!call(b->conn, RPC_CMD_GET_TENSOR, req, sizeof(req), data, size)) {
        memset(data, 0, size);
    }
}

GGML_CALL static bool rpc_buffer_cpy_tensor(ggml_backend_buffer_t buffer, const struct ggml_tensor * src, struct ggml_tensor * dst) {
    struct rpc_buf * b = buffer->context;
    if (!is_rpc_buffer(src->buffer) || ((struct rpc_buf *) src->buffer->context)->conn != b->conn) {
        return false;
    }
    uint8_t req[2 * RPC_TENSOR_SIZE];
    if (!encode_tensor(b->conn, src, req) || !encode_tensor(b->conn, dst, req + RPC_TENSOR_SIZE)) {
        return false;
    }
    uint8_t result = 0;
    return call(b->conn, RPC_CMD_COPY_TENSOR, req, sizeof(req), &result, 1) && result == 1;
}

GGML_CALL static void rpc_buffer_clear(ggml_backend_buffer_t buffer, uint8_t value) {
    struct rpc_buf * b = buffer->context;
    uint8_t req[9];
    rpc_put_u64(req, b->handle);
    req[8] = value;
    call(b->conn, RPC_CMD_BUFFER_CLEAR, req, sizeof(req), NULL, 0);
}

static const struct ggml_backend_buffer_i rpc_buffer_iface = {
    /* .get_name    = */ rpc_buffer_get_name,
    /* .free_buffer = */ rpc_buffer_free,
    /* .get_base    = */ rpc_buffer_get_base,
    /* .init_tensor = */ rpc_buffer_init_tensor,
    /* .set_tensor  = */ rpc_buffer_set_tensor,
    /* .get_tensor  = */ rpc_buffer_get_tensor,
    /* .cpy_tensor  = */ rpc_buffer_cpy_tensor,
    /* .clear       = */ rpc_buffer_clear,
    /* .reset       = */ NULL,
};

// --- buffer type ---

GGML_CALL static const char * rpc_buft_get_name(ggml_backend_buffer_type_t buft) {
    struct rpc_conn * c = buft->context;
    return c->name;
}

static ggml_backend_buffer_t alloc_on(struct rpc_conn * c, ggml_backend_buffer_type_t buft, size_t size) {
    uint8_t req[12], rep[16];
    rpc_put_u32(req, c->p.device);
    rpc_put_u64(req + 4, size);
    if (!call(c, RPC_CMD_ALLOC_BUFFER, req, sizeof(req), rep, sizeof(rep))) {
        return NULL;
    }
    const uint64_t handle = rpc_get_u64(rep), rsize = rpc_get_u64(rep + 8);
    if (handle == 0) {
        ggml_x_error(NULL, "%s: the server could not allocate a buffer of %zu bytes", c->name, size);
        return NULL;
    }
    uint8_t base[8];
    if (!call(c, RPC_CMD_BUFFER_GET_BASE, rep, 8, base, 8)) {
        return NULL;
    }
    if (rsize < size || rpc_get_u64(base) == 0) {
        call(c, RPC_CMD_FREE_BUFFER, rep, 8, NULL, 0);
        ggml_x_error(NULL, "%s: the server gave a buffer of %" PRIu64 " bytes at 0x%" PRIx64 " for %zu bytes", c->name,
                     rsize, rpc_get_u64(base), size);
        return NULL;
    }
    struct rpc_buf * b = calloc(1, sizeof(*b));
    if (b == NULL) {
        ggml_x_error(NULL, "%s: out of memory", c->name);
        return NULL;
    }
    b->conn = c;
    b->handle = handle;
    b->base = rpc_get_u64(base);
    conn_ref(c);
    ggml_backend_buffer_t buf = ggml_backend_buffer_init(buft, rpc_buffer_iface, b, (size_t) rsize);
    if (buf == NULL) {
        free(b);
        conn_unref(c);
    }
    return buf;
}

GGML_CALL static ggml_backend_buffer_t rpc_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    return alloc_on(buft->context, buft, size);
}

GGML_CALL static size_t rpc_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    struct rpc_conn * c = buft->context;
    return (size_t) c->alignment;
}

static size_t alloc_size_on(struct rpc_conn * c, const struct ggml_tensor * tensor) {
    if (!needs_server_size(tensor)) {
        return ggml_nbytes(tensor);
    }
    uint8_t req[4 + RPC_TENSOR_SIZE * (1 + RPC_MAX_SRC)];
    memset(req, 0, sizeof(req));
    rpc_put_u32(req, c->p.device);
    if (!encode_tensor(c, tensor, req + 4)) {
        return ggml_nbytes(tensor);
    }
    for (int i = 0; i < RPC_MAX_SRC; i++) {
        if (tensor->src[i] != NULL && !encode_tensor(c, tensor->src[i], req + 4 + RPC_TENSOR_SIZE * (1 + i))) {
            return ggml_nbytes(tensor);
        }
    }
    uint8_t rep[8];
    if (!call(c, RPC_CMD_GET_ALLOC_SIZE, req, sizeof(req), rep, 8)) {
        return ggml_nbytes(tensor);
    }
    return (size_t) rpc_get_u64(rep);
}

GGML_CALL static size_t rpc_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor) {
    return alloc_size_on(buft->context, tensor);
}

GGML_CALL static bool rpc_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend);

GGML_CALL static bool rpc_buft_is_host(ggml_backend_buffer_type_t buft) {
    (void) buft;
    return false;
}

static const struct ggml_backend_buffer_type_i rpc_buft_iface = {
    /* .get_name         = */ rpc_buft_get_name,
    /* .alloc_buffer     = */ rpc_buft_alloc_buffer,
    /* .get_alignment    = */ rpc_buft_get_alignment,
    /* .get_alloc_size   = */ rpc_buft_get_alloc_size,
    /* .supports_backend = */ rpc_buft_supports_backend,
    /* .is_host          = */ rpc_buft_is_host,
};

// --- backend ---

GGML_CALL static const char * rpc_backend_get_name(ggml_backend_t backend) {
    struct rpc_conn * c = backend->context;
    return c->name;
}

GGML_CALL static void rpc_backend_free(ggml_backend_t backend) {
    struct rpc_conn * c = backend->context;
    free(backend);
    conn_unref(c);
}

static ggml_backend_buffer_type_t endpoint_buft(struct rpc_endpoint * ep);

GGML_CALL static ggml_backend_buffer_type_t rpc_backend_get_default_buffer_type(ggml_backend_t backend) {
    struct rpc_conn * c = backend->context;
    return c->ep != NULL ? endpoint_buft(c->ep) : &c->buft;
}

bool ggml_backend_is_rpc(ggml_backend_t backend) {
    return backend != NULL && backend->iface.get_name == rpc_backend_get_name;
}

GGML_CALL static bool rpc_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    return ggml_backend_is_rpc(backend) && backend->context == buft->context;
}

// --- graph serialisation ---

struct ptr_set {
    const void ** keys;
    int32_t * vals;
    size_t mask;
};

static bool ptr_set_init(struct ptr_set * s, size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) {
        cap <<= 1;
    }
    s->keys = calloc(cap, sizeof(void *));
    s->vals = calloc(cap, sizeof(int32_t));
    s->mask = cap - 1;
    return s->keys != NULL && s->vals != NULL;
}

static void ptr_set_free(struct ptr_set * s) {
    free(s->keys);
    free(s->vals);
}

static size_t ptr_slot(const struct ptr_set * s, const void * p) {
    size_t h = (size_t) (((uint64_t) (uintptr_t) p * 0x9e3779b97f4a7c15ull) >> 20) & s->mask;
    while (s->keys[h] != NULL && s->keys[h] != p) {
        h = (h + 1) & s->mask;
    }
    return h;
}

struct graph_writer {
    struct rpc_conn * c;
    struct ptr_set nodes;  // node -> index
    struct ptr_set seen;   // tensors already in the list -> list index
    const struct ggml_tensor ** list;
    size_t n_list, cap_list;
};

// on_server: t's memory is in one of c's buffers
static bool on_server(const struct rpc_conn * c, const struct ggml_tensor * t) {
    ggml_backend_buffer_t b = t->view_src != NULL && t->buffer == NULL ? t->view_src->buffer : t->buffer;
    return is_rpc_buffer(b) && ((struct rpc_buf *) b->context)->conn == c && t->data != NULL;
}

// add_tensor lists t after its sources and view source, depth first, as upstream's client
// does. The sources of a tensor that is not a node are followed only when they are on this
// server too (a scheduler's input copy names the tensor it copies, which lives elsewhere).
static bool add_tensor(struct graph_writer * w, const struct ggml_tensor * t, int depth) {
    if (t == NULL) {
        return true;
    }
    const bool is_node = w->nodes.keys[ptr_slot(&w->nodes, t)] != NULL;
    if (!is_node && depth > 0 && !on_server(w->c, t)) {
        return true;
    }
    size_t h = ptr_slot(&w->seen, t);
    if (w->seen.keys[h] != NULL) {
        return true;
    }
    if (depth > 20000) { // bounded recursion (graphs are far shallower)
        ggml_x_error(NULL, "%s: graph too deep", w->c->name);
        return false;
    }
    for (int i = 0; i < RPC_MAX_SRC; i++) {
        if (t->src[i] == t) {
            continue; // ggml_cast: the node is its own destination
        }
        if (!add_tensor(w, t->src[i], depth + 1)) {
            return false;
        }
    }
    if (!add_tensor(w, t->view_src, depth + 1)) {
        return false;
    }
    h = ptr_slot(&w->seen, t);
    if (w->n_list == w->cap_list) {
        ggml_x_error(NULL, "%s: graph has more tensors than expected", w->c->name);
        return false;
    }
    w->seen.keys[h] = t;
    w->seen.vals[h] = (int32_t) w->n_list;
    w->list[w->n_list++] = t;
    return true;
}

// serialize_graph builds the GRAPH_COMPUTE payload of g (malloc'd)
static uint8_t * serialize_graph(struct rpc_conn * c, const struct ggml_cgraph * g, size_t * out_size) {
    struct graph_writer w = { .c = c };
    const int n_nodes = g->n_nodes;
    // every tensor reachable is a node, a leaf or a source/view of those; bound the list by
    // the graph's size plus sources and views
    size_t cap = (size_t) (g->n_nodes + g->n_leafs) * (RPC_MAX_SRC + 2) + 16;
    uint8_t * msg = NULL;
    int32_t * uses = NULL;
    w.list = malloc(cap * sizeof(*w.list));
    w.cap_list = cap;
    if (w.list == NULL || !ptr_set_init(&w.nodes, (size_t) n_nodes) || !ptr_set_init(&w.seen, cap)) {
        ggml_x_error(NULL, "%s: out of memory", c->name);
        goto fail;
    }
    for (int i = 0; i < n_nodes; i++) {
        size_t h = ptr_slot(&w.nodes, g->nodes[i]);
        w.nodes.keys[h] = g->nodes[i];
        w.nodes.vals[h] = i;
    }
    for (int i = 0; i < n_nodes; i++) {
        if (!add_tensor(&w, g->nodes[i], 0)) {
            goto fail;
        }
    }
    uses = calloc(w.n_list + 1, sizeof(int32_t));
    if (uses == NULL) {
        ggml_x_error(NULL, "%s: out of memory", c->name);
        goto fail;
    }
    for (int i = 0; i < n_nodes; i++) {
        for (int j = 0; j < RPC_MAX_SRC; j++) {
            const struct ggml_tensor * s = g->nodes[i]->src[j];
            if (s == NULL) {
                continue;
            }
            const size_t h = ptr_slot(&w.seen, s);
            if (w.seen.keys[h] == NULL) {
                ggml_x_error(NULL, "%s: source '%s' of node '%s' is not in this server's memory", c->name, s->name,
                             g->nodes[i]->name);
                goto fail;
            }
            uses[w.seen.vals[h]]++;
        }
    }
    const size_t size = 12 + 8 * (size_t) n_nodes + RPC_TENSOR_SIZE * w.n_list;
    msg = malloc(size);
    if (msg == NULL) {
        ggml_x_error(NULL, "%s: out of memory", c->name);
        goto fail;
    }
    rpc_put_u32(msg, c->p.device);
    rpc_put_u32(msg + 4, (uint32_t) n_nodes);
    for (int i = 0; i < n_nodes; i++) {
        rpc_put_u64(msg + 8 + 8 * (size_t) i, (uint64_t) (uintptr_t) g->nodes[i]);
    }
    rpc_put_u32(msg + 8 + 8 * (size_t) n_nodes, (uint32_t) w.n_list);
    uint8_t * recs = msg + 12 + 8 * (size_t) n_nodes;
    for (size_t i = 0; i < w.n_list; i++) {
        const struct ggml_tensor * t = w.list[i];
        const bool is_node = w.nodes.keys[ptr_slot(&w.nodes, t)] != NULL;
        if (!on_server(c, t)) {
            ggml_x_error(NULL, "%s: tensor '%s' of the graph is not in this server's memory", c->name, t->name);
            goto fail;
        }
        struct rpc_tensor r;
        if (!fill_record(c, t, is_node, &r)) {
            goto fail;
        }
        r.use_count = uses[i];
        // sources not in the list (not on this server) are not the server's business
        for (int j = 0; j < RPC_MAX_SRC; j++) {
            if (t->src[j] != NULL && w.seen.keys[ptr_slot(&w.seen, t->src[j])] == NULL) {
                r.src[j] = 0;
            }
        }
        if (t->view_src != NULL && w.seen.keys[ptr_slot(&w.seen, t->view_src)] == NULL) {
            r.view_src = 0;
        }
        rpc_tensor_encode(&r, recs + RPC_TENSOR_SIZE * i);
    }
    *out_size = size;
    free(uses);
    free(w.list);
    ptr_set_free(&w.nodes);
    ptr_set_free(&w.seen);
    return msg;
fail:
    free(msg);
    free(uses);
    free(w.list);
    ptr_set_free(&w.nodes);
    ptr_set_free(&w.seen);
    return NULL;
}

GGML_CALL static bool rpc_backend_graph_compute(ggml_backend_t backend, struct ggml_cgraph * cgraph) {
    struct rpc_conn * c = backend->context;
    size_t size = 0;
    uint8_t * msg = serialize_graph(c, cgraph, &size);
    if (msg == NULL) {
        return false;
    }
    pthread_mutex_lock(&c->mu);
    bool ok;
    if (!c->p.no_recompute && c->last_graph != NULL && c->last_graph_size == size && memcmp(c->last_graph, msg, size) == 0) {
        uint8_t req[4];
        rpc_put_u32(req, c->p.device);
        ok = send_locked(c, RPC_CMD_GRAPH_RECOMPUTE, req, 4, NULL, 0);
        free(msg);
    } else {
        ok = send_locked(c, RPC_CMD_GRAPH_COMPUTE, msg, size, NULL, 0);
        free(c->last_graph);
        c->last_graph = ok && !c->p.no_recompute ? msg : NULL;
        c->last_graph_size = ok && !c->p.no_recompute ? size : 0;
        if (c->last_graph == NULL) {
            free(msg);
        }
    }
    if (ok && !c->p.no_sync) {
        // no reply comes for a graph: the reply to a small request after it says it ran
        uint8_t req[4], rep[8];
        rpc_put_u32(req, c->p.device);
        ok = send_locked(c, RPC_CMD_GET_ALIGNMENT, req, 4, NULL, 0) &&
             recv_locked(c, RPC_CMD_GRAPH_COMPUTE, rep, 8, c->p.compute_timeout_ms);
    }
    pthread_mutex_unlock(&c->mu);
    return ok;
}

static bool tensor_expressible(const struct ggml_tensor * t) {
    if (rpc_type_to_wire_num(t->type) < 0) {
        return false;
    }
    for (int i = 0; i < RPC_MAX_DIMS; i++) {
        if (t->ne[i] < 0 || (uint64_t) t->ne[i] > UINT32_MAX || (uint64_t) t->nb[i] > UINT32_MAX) {
            return false;
        }
    }
    return true;
}

GGML_CALL static bool rpc_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor * op) {
    (void) backend;
    uint32_t wop;
    int32_t params[RPC_MAX_OP_PARAMS / 4];
    if (!rpc_node_to_wire(op, &wop, params) || !tensor_expressible(op)) {
        return false;
    }
    for (int i = 0; i < RPC_MAX_SRC; i++) {
        if (op->src[i] != NULL && !tensor_expressible(op->src[i])) {
            return false;
        }
    }
    return true;
}

static const struct ggml_backend_i rpc_backend_iface = {
    /* .get_name                = */ rpc_backend_get_name,
    /* .free                    = */ rpc_backend_free,
    /* .get_default_buffer_type = */ rpc_backend_get_default_buffer_type,
    /* .set_tensor_async        = */ NULL,
    /* .get_tensor_async        = */ NULL,
    /* .cpy_tensor_async        = */ NULL,
    /* .synchronize             = */ NULL,
    /* .graph_plan_create       = */ NULL,
    /* .graph_plan_free         = */ NULL,
    /* .graph_plan_compute      = */ NULL,
    /* .graph_compute           = */ rpc_backend_graph_compute,
    /* .supports_op             = */ rpc_backend_supports_op,
};

// --- connections ---

struct ggml_x_rpc_client_params ggml_x_rpc_client_default_params(void) {
    struct ggml_x_rpc_client_params p;
    memset(&p, 0, sizeof(p));
    p.timeout_ms = 30000;
    p.compute_timeout_ms = 600000;
    return p;
}

// conn_open performs HELLO and reads the device facts; the descriptor is the connection's
// from now on (closed here on failure)
static struct rpc_conn * conn_open(int fd, const char * endpoint, const struct ggml_x_rpc_client_params * params) {
    struct rpc_conn * c = calloc(1, sizeof(*c));
    if (c == NULL) {
        close(fd);
        ggml_x_error(NULL, "RPC[%s]: out of memory", endpoint);
        return NULL;
    }
    c->fd = fd;
    c->refs = 1;
    c->p = params ? *params : ggml_x_rpc_client_default_params();
    pthread_mutex_init(&c->mu, NULL);
    snprintf(c->name, sizeof(c->name), "%s[%s]", GGML_RPC_NAME, endpoint ? endpoint : "fd");
    c->buft.iface = rpc_buft_iface;
    c->buft.context = c;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); // fails harmlessly on a socket pair

    uint8_t caps[RPC_CONN_CAPS_SIZE] = { 0 };
    uint8_t hello[4 + RPC_CONN_CAPS_SIZE];
    uint8_t rep[8];
    if (!call(c, RPC_CMD_HELLO, caps, sizeof(caps), hello, sizeof(hello))) {
        goto fail;
    }
    if (hello[0] != RPC_PROTO_MAJOR || hello[1] > RPC_PROTO_MINOR) {
        ggml_x_error(NULL, "%s: the server speaks RPC protocol %u.%u.%u; this client needs %d.x.x with x <= %d", c->name,
                     hello[0], hello[1], hello[2], RPC_PROTO_MAJOR, RPC_PROTO_MINOR);
        goto fail;
    }
    uint8_t req[4];
    rpc_put_u32(req, c->p.device);
    if (!call(c, RPC_CMD_DEVICE_COUNT, NULL, 0, req, 4)) {
        goto fail;
    }
    c->n_devices = rpc_get_u32(req);
    if (c->p.device >= c->n_devices) {
        ggml_x_error(NULL, "%s: the server has %u devices, no device %u", c->name, c->n_devices, c->p.device);
        goto fail;
    }
    rpc_put_u32(req, c->p.device);
    if (!call(c, RPC_CMD_GET_ALIGNMENT, req, 4, rep, 8)) {
        goto fail;
    }
    c->alignment = rpc_get_u64(rep);
    if (c->alignment == 0 || (c->alignment & (c->alignment - 1)) != 0 || c->alignment > 4096) {
        ggml_x_error(NULL, "%s: the server reports an impossible alignment %" PRIu64, c->name, c->alignment);
        goto fail;
    }
    if (!call(c, RPC_CMD_GET_MAX_SIZE, req, 4, rep, 8)) {
        goto fail;
    }
    c->max_size = rpc_get_u64(rep);
    return c;
fail:
    conn_unref(c);
    return NULL;
}

static ggml_backend_t backend_of(struct rpc_conn * c) {
    ggml_backend_t b = calloc(1, sizeof(*b));
    if (b == NULL) {
        ggml_x_error(NULL, "%s: out of memory", c->name);
        return NULL;
    }
    b->iface = rpc_backend_iface;
    b->context = c;
    conn_ref(c);
    return b;
}

ggml_backend_t ggml_x_backend_rpc_init_fd(int fd, const char * name, const struct ggml_x_rpc_client_params * params) {
    if (fd < 0) {
        ggml_x_error(NULL, "ggml_x_backend_rpc_init_fd: bad descriptor");
        return NULL;
    }
    struct rpc_conn * c = conn_open(fd, name, params);
    if (c == NULL) {
        return NULL;
    }
    ggml_backend_t b = backend_of(c);
    conn_unref(c); // the backend holds it now
    return b;
}

bool ggml_x_backend_rpc_alive(ggml_backend_t backend) {
    if (!ggml_backend_is_rpc(backend)) {
        return false;
    }
    struct rpc_conn * c = backend->context;
    pthread_mutex_lock(&c->mu);
    bool alive = !c->dead;
    pthread_mutex_unlock(&c->mu);
    return alive;
}

static bool device_memory(struct rpc_conn * c, size_t * free_mem, size_t * total) {
    uint8_t req[4], rep[16];
    rpc_put_u32(req, c->p.device);
    if (!call(c, RPC_CMD_GET_DEVICE_MEMORY, req, 4, rep, 16)) {
        return false;
    }
    *free_mem = (size_t) rpc_get_u64(rep);
    *total = (size_t) rpc_get_u64(rep + 8);
    return true;
}

bool ggml_x_backend_rpc_device_memory(ggml_backend_t backend, size_t * free_mem, size_t * total) {
    *free_mem = *total = 0;
    if (!ggml_backend_is_rpc(backend)) {
        ggml_x_error(NULL, "ggml_x_backend_rpc_device_memory: not an RPC backend");
        return false;
    }
    return device_memory(backend->context, free_mem, total);
}

int ggml_x_rpc_supported_op_count(void) {
    return rpc_supported_op_count();
}

// --- endpoints (upstream-like API) ---

static int dial(const char * endpoint, int timeout_ms) {
    char host[256];
    const char * colon = strrchr(endpoint, ':');
    if (colon == NULL || colon == endpoint || (size_t) (colon - endpoint) >= sizeof(host)) {
        ggml_x_error(NULL, "RPC: endpoint '%s' is not host:port", endpoint);
        return -1;
    }
    memcpy(host, endpoint, (size_t) (colon - endpoint));
    host[colon - endpoint] = 0;
    if (host[0] == '[' && host[strlen(host) - 1] == ']') { // [v6]:port
        memmove(host, host + 1, strlen(host));
        host[strlen(host) - 1] = 0;
    }
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
    struct addrinfo * res = NULL;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || res == NULL) {
        ggml_x_error(NULL, "RPC: cannot resolve '%s'", endpoint);
        return -1;
    }
    int fd = -1;
    for (struct addrinfo * a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            continue;
        }
        struct timeval tv = { .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000 };
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)); // bounds connect()
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        ggml_x_error(NULL, "RPC: cannot connect to %s (is ggml-rpc-server running there?)", endpoint);
    }
    return fd;
}

// Endpoints, as upstream's registry keeps them: one per "host:port", for the life of the process,
// with a buffer type of its own. The connection is cached weakly: it lives while a backend or a
// buffer uses it and closes with the last of them (a server serves one connection at a time), and
// the next use opens a new one.

#define MAX_ENDPOINTS 64

struct rpc_endpoint {
    char name[128];
    struct rpc_conn * conn; // weak, under registry_mu
    struct ggml_backend_buffer_type buft;
    uint64_t alignment;
};

static struct rpc_endpoint endpoints[MAX_ENDPOINTS];
static int n_endpoints;
static pthread_mutex_t endpoints_mu = PTHREAD_MUTEX_INITIALIZER;

static void endpoint_forget(struct rpc_conn * c) {
    if (c->ep != NULL && c->ep->conn == c) {
        c->ep->conn = NULL;
    }
}

static ggml_backend_buffer_type_t endpoint_buft(struct rpc_endpoint * ep) {
    return &ep->buft;
}

// endpoint_conn returns a referenced live connection to ep, opening one if needed
static struct rpc_conn * endpoint_conn(struct rpc_endpoint * ep) {
    pthread_mutex_lock(&registry_mu);
    struct rpc_conn * c = ep->conn;
    if (c != NULL && !c->dead) {
        c->refs++;
        pthread_mutex_unlock(&registry_mu);
        return c;
    }
    pthread_mutex_unlock(&registry_mu);
    const struct ggml_x_rpc_client_params p = ggml_x_rpc_client_default_params();
    int fd = dial(ep->name, p.timeout_ms);
    c = fd >= 0 ? conn_open(fd, ep->name, &p) : NULL;
    if (c != NULL) {
        pthread_mutex_lock(&registry_mu);
        c->ep = ep;
        ep->conn = c;
        ep->alignment = c->alignment;
        pthread_mutex_unlock(&registry_mu);
    }
    return c;
}

GGML_CALL static const char * ep_buft_get_name(ggml_backend_buffer_type_t buft) {
    return ((struct rpc_endpoint *) buft->context)->name + sizeof(((struct rpc_endpoint *) 0)->name) / 2;
}

GGML_CALL static ggml_backend_buffer_t ep_buft_alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
    struct rpc_conn * c = endpoint_conn(buft->context);
    if (c == NULL) {
        return NULL;
    }
    ggml_backend_buffer_t b = alloc_on(c, buft, size); // the buffer holds its own reference
    conn_unref(c);
    return b;
}

GGML_CALL static size_t ep_buft_get_alignment(ggml_backend_buffer_type_t buft) {
    return (size_t) ((struct rpc_endpoint *) buft->context)->alignment;
}

GGML_CALL static size_t ep_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor) {
    if (!needs_server_size(tensor)) {
        return ggml_nbytes(tensor);
    }
    struct rpc_conn * c = endpoint_conn(buft->context);
    if (c == NULL) {
        return ggml_nbytes(tensor);
    }
    size_t n = alloc_size_on(c, tensor);
    conn_unref(c);
    return n;
}

GGML_CALL static bool ep_buft_supports_backend(ggml_backend_buffer_type_t buft, ggml_backend_t backend) {
    return ggml_backend_is_rpc(backend) && ((struct rpc_conn *) backend->context)->ep == buft->context;
}

static const struct ggml_backend_buffer_type_i ep_buft_iface = {
    /* .get_name         = */ ep_buft_get_name,
    /* .alloc_buffer     = */ ep_buft_alloc_buffer,
    /* .get_alignment    = */ ep_buft_get_alignment,
    /* .get_alloc_size   = */ ep_buft_get_alloc_size,
    /* .supports_backend = */ ep_buft_supports_backend,
    /* .is_host          = */ rpc_buft_is_host,
};

GGML_CALL static ggml_backend_t reg_init(const char * params, void * user_data) {
    (void) params;
    return ggml_backend_rpc_init(((struct rpc_endpoint *) user_data)->name);
}

// find_endpoint returns endpoint's entry, creating (and registering) it on first use, after
// checking that a server answers there
static struct rpc_endpoint * find_endpoint(const char * endpoint) {
    // name holds "host:port" in its first half and "RPC[host:port]" in its second
    if (endpoint == NULL || strlen(endpoint) + 6 >= sizeof(endpoints[0].name) / 2) {
        ggml_x_error(NULL, "RPC: bad endpoint");
        return NULL;
    }
    pthread_mutex_lock(&endpoints_mu);
    struct rpc_endpoint * ep = NULL;
    for (int i = 0; i < n_endpoints && ep == NULL; i++) {
        if (strcmp(endpoints[i].name, endpoint) == 0) {
            ep = &endpoints[i];
        }
    }
    if (ep == NULL && n_endpoints < MAX_ENDPOINTS) {
        struct rpc_endpoint * e = &endpoints[n_endpoints];
        memset(e, 0, sizeof(*e));
        snprintf(e->name, sizeof(e->name) / 2, "%s", endpoint);
        snprintf(e->name + sizeof(e->name) / 2, sizeof(e->name) / 2, "%s[%s]", GGML_RPC_NAME, endpoint);
        e->buft.iface = ep_buft_iface;
        e->buft.context = e;
        struct rpc_conn * c = endpoint_conn(e); // learns the alignment; fails for no server
        if (c != NULL) {
            conn_unref(c);
            n_endpoints++;
            ep = e;
            ggml_backend_register(e->name + sizeof(e->name) / 2, reg_init, &e->buft, e);
            ggml_x_clear_error(); // a full registry is not an error for the caller
        }
    } else if (ep == NULL) {
        ggml_x_error(NULL, "RPC: more than %d endpoints", MAX_ENDPOINTS);
    }
    pthread_mutex_unlock(&endpoints_mu);
    return ep;
}

ggml_backend_t ggml_backend_rpc_init(const char * endpoint) {
    struct rpc_endpoint * ep = find_endpoint(endpoint);
    struct rpc_conn * c = ep != NULL ? endpoint_conn(ep) : NULL;
    if (c == NULL) {
        return NULL;
    }
    ggml_backend_t b = backend_of(c);
    conn_unref(c);
    return b;
}

ggml_backend_buffer_type_t ggml_backend_rpc_buffer_type(const char * endpoint) {
    struct rpc_endpoint * ep = find_endpoint(endpoint);
    return ep != NULL ? &ep->buft : NULL;
}

void ggml_backend_rpc_get_device_memory(const char * endpoint, size_t * free_mem, size_t * total) {
    *free_mem = *total = 0;
    struct rpc_endpoint * ep = find_endpoint(endpoint);
    struct rpc_conn * c = ep != NULL ? endpoint_conn(ep) : NULL;
    if (c != NULL) {
        device_memory(c, free_mem, total);
        conn_unref(c);
    }
}
