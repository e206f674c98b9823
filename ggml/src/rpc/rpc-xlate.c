// rpc-xlate.c - the server's translators: one entry per wire op (the server's ggml numbering) in
// the table `xlators`, with the sources it takes and a function that builds the local node.
// A translator uses our peer op when one computes the same thing (re-packing the parameters),
// else a kernel of rpc-kernels.c run as a custom op. Every translator checks the operands'
// types and geometry before it builds anything; our constructors check the rest. A wire op
// with no entry, or a translator that refuses, makes the GRAPH_COMPUTE fail cleanly.

#include "rpc-ops.h"
#include "rpc-kernels.h"
#include "rpc-tables.h"
#include "../ggml-impl.h"

#include <stdlib.h>

// --- wire types and their local layout -----------------------------------------------------------

bool rpc_wire_extent(uint32_t wire_type, const uint32_t ne[RPC_MAX_DIMS], const uint32_t nb[RPC_MAX_DIMS], uint64_t * out) {
    if (wire_type >= RPC_WIRE_TYPE_COUNT || rpc_wire_type_blck[wire_type] <= 0 || rpc_wire_type_size[wire_type] <= 0) {
        return false;
    }
    for (int i = 0; i < RPC_MAX_DIMS; i++) {
        if (ne[i] == 0) {
            *out = 0;
            return true;
        }
    }
    const uint32_t blck = (uint32_t) rpc_wire_type_blck[wire_type];
    if (ne[0] % blck != 0) {
        return false;
    }
    unsigned __int128 e = (unsigned __int128) (ne[0] / blck - 1) * nb[0] + (uint32_t) rpc_wire_type_size[wire_type];
    for (int i = 1; i < RPC_MAX_DIMS; i++) {
        e += (unsigned __int128) (ne[i] - 1) * nb[i];
    }
    if (e > UINT64_MAX) {
        return false;
    }
    *out = (uint64_t) e;
    return true;
}

bool rpc_local_layout(uint32_t wire_type, const uint32_t ne[RPC_MAX_DIMS], const uint32_t nb[RPC_MAX_DIMS],
                      enum ggml_type * type, int64_t lne[RPC_MAX_DIMS], size_t lnb[RPC_MAX_DIMS]) {
    uint64_t extent;
    if (!rpc_wire_extent(wire_type, ne, nb, &extent)) {
        return false;
    }
    for (int i = 0; i < RPC_MAX_DIMS; i++) {
        lne[i] = ne[i];
        lnb[i] = nb[i];
    }
    const int t = rpc_type_from_wire_num(wire_type);
    if (t >= 0) {
        *type = (enum ggml_type) t;
        return true;
    }
    // raw bytes: rows must be dense
    const uint32_t blck = (uint32_t) rpc_wire_type_blck[wire_type];
    const uint32_t size = (uint32_t) rpc_wire_type_size[wire_type];
    if (nb[0] != size) {
        return false;
    }
    *type = GGML_TYPE_I8;
    lne[0] = (int64_t) (ne[0] / blck) * size;
    lnb[0] = 1;
    return true;
}

void rpc_arena_free(struct rpc_arena * a) {
    for (size_t i = 0; i < a->n; i++) {
        free(a->ptrs[i]);
    }
    free(a->ptrs);
    memset(a, 0, sizeof(*a));
}

static void * arena_alloc(struct rpc_arena * a, size_t size) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? 2 * a->cap : 16;
        void ** p = realloc(a->ptrs, cap * sizeof(void *));
        if (p == NULL) {
            return NULL;
        }
        a->ptrs = p;
        a->cap = cap;
    }
    void * p = calloc(1, size);
    if (p != NULL) {
        a->ptrs[a->n++] = p;
    }
    return p;
}

// --- helpers of the translators ------------------------------------------------------------------

struct xl {
    struct ggml_context * ctx;
    const struct rpc_wire_node * n;
    struct ggml_tensor * const * s;
    const int32_t * p;
    struct rpc_arena * arena;
    const char * why;
};

static float f32_of(int32_t v) {
    float f;
    memcpy(&f, &v, 4);
    return f;
}

static bool all_zero(const int32_t * p, int from, int to) {
    for (int i = from; i < to; i++) {
        if (p[i] != 0) {
            return false;
        }
    }
    return true;
}

static struct ggml_tensor * refuse(struct xl * x, const char * why) {
    x->why = why;
    return NULL;
}

// rows of t are dense values of one of the listed types (F32 or F16)
static bool dense_rows(const struct ggml_tensor * t, bool f16_ok) {
    if (t->type == GGML_TYPE_F32) {
        return t->nb[0] == sizeof(float);
    }
    return f16_ok && t->type == GGML_TYPE_F16 && t->nb[0] == sizeof(ggml_fp16_t);
}

// a dimension of 0 (broadcast checks divide by the sources' dimensions)
static bool any_empty(const struct ggml_tensor * a, const struct ggml_tensor * b, const struct ggml_tensor * c,
                      const struct ggml_tensor * d) {
    const struct ggml_tensor * ts[4] = { a, b, c, d };
    for (int i = 0; i < 4; i++) {
        if (ts[i] != NULL && ggml_nelements(ts[i]) == 0) {
            return true;
        }
    }
    return false;
}

static struct rpc_kparams * kparams(struct xl * x, int kind) {
    if (x->arena->error == NULL) {
        x->arena->error = arena_alloc(x->arena, sizeof(int));
        if (x->arena->error == NULL) {
            return NULL;
        }
    }
    struct rpc_kparams * k = arena_alloc(x->arena, sizeof(*k));
    if (k != NULL) {
        memcpy(k->p, x->p, sizeof(k->p));
        k->kind = kind;
        k->error = x->arena->error;
    }
    return k;
}

// custom builds a node computed by kernel fun (custom1/2/3 by n_in) with the given type and shape
// and the strides of the wire record; extra sources (beyond the third) follow in src[3], src[4]
static struct ggml_tensor * custom(struct xl * x, int n_in, void * fun, struct rpc_kparams * k,
                                   struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c,
                                   enum ggml_type type, const int64_t ne[4]) {
    if (k == NULL) {
        return refuse(x, "out of memory");
    }
    for (int i = 0; i < 4; i++) {
        if (ne[i] != (int64_t) x->n->ne[i]) {
            return refuse(x, "the record's shape differs from what its op gives");
        }
    }
    if (x->n->nb[0] != ggml_type_size(type)) {
        return refuse(x, "the record's rows are not dense");
    }
    struct ggml_tensor * t = NULL;
    switch (n_in) {
        case 1: t = ggml_map_custom1(x->ctx, a, (ggml_custom1_op_t) fun, GGML_N_TASKS_MAX, k); break;
        case 2: t = ggml_map_custom2(x->ctx, a, b, (ggml_custom2_op_t) fun, GGML_N_TASKS_MAX, k); break;
        default: t = ggml_map_custom3(x->ctx, a, b, c, (ggml_custom3_op_t) fun, GGML_N_TASKS_MAX, k); break;
    }
    if (t == NULL) {
        return NULL;
    }
    // no_alloc: the node has no memory yet, so its type and geometry may still change
    t->type = type;
    for (int i = 0; i < 4; i++) {
        t->ne[i] = ne[i];
        t->nb[i] = x->n->nb[i];
    }
    return t;
}

#define XL(name) static struct ggml_tensor * name(struct xl * x)
#define A (x->s[0])
#define B (x->s[1])
#define NE(i) ((int64_t) x->n->ne[i])

// --- peers with no parameters, or the same ones ------------------------------------------------------

XL(xl_dup) { return ggml_dup(x->ctx, A); }
// the node's type in our numbering (GGML_TYPE_COUNT when it has none)
static enum ggml_type node_type(const struct xl * x) {
    enum ggml_type t;
    int64_t ne[4];
    size_t nb[4];
    return rpc_local_layout(x->n->type, x->n->ne, x->n->nb, &t, ne, nb) ? t : GGML_TYPE_COUNT;
}

// ADD into another type than its first operand's is ggml_add_cast
XL(xl_add) {
    const enum ggml_type t = node_type(x);
    if (t != GGML_TYPE_COUNT && t != A->type) {
        return ggml_add_cast(x->ctx, A, B, t);
    }
    return ggml_add(x->ctx, A, B);
}
XL(xl_add1) { return ggml_add1(x->ctx, A, B); }
XL(xl_sub) { return ggml_sub(x->ctx, A, B); }
XL(xl_mul) { return ggml_mul(x->ctx, A, B); }
XL(xl_div) { return ggml_div(x->ctx, A, B); }
XL(xl_sqr) { return ggml_sqr(x->ctx, A); }
XL(xl_sqrt) { return ggml_sqrt(x->ctx, A); }
XL(xl_log) { return ggml_log(x->ctx, A); }
XL(xl_sum) { return ggml_sum(x->ctx, A); }
XL(xl_sum_rows) { return ggml_sum_rows(x->ctx, A); }
XL(xl_mean) { return ggml_mean(x->ctx, A); }
XL(xl_argmax) { return ggml_argmax(x->ctx, A); }
XL(xl_norm) { return ggml_norm(x->ctx, A, f32_of(x->p[0])); }
XL(xl_rms_norm) { return ggml_rms_norm(x->ctx, A, f32_of(x->p[0])); }
XL(xl_mul_mat) { return ggml_mul_mat(x->ctx, A, B); } // p[0] (precision) changes nothing on our CPU
XL(xl_out_prod) { return ggml_out_prod(x->ctx, A, B); }
// CPY whose destination is the node itself is ggml_cast (src[1] is the result)
XL(xl_cpy) {
    if (x->n->self_src == 2u) {
        const enum ggml_type t = node_type(x);
        return t == GGML_TYPE_COUNT ? refuse(x, "a cast to a type this server cannot hold") : ggml_cast(x->ctx, A, t);
    }
    return ggml_cpy(x->ctx, A, B);
}
XL(xl_cont) { return ggml_cont_4d(x->ctx, A, NE(0), NE(1), NE(2), NE(3)); } // cont_Nd reshapes too
XL(xl_transpose) { return ggml_transpose(x->ctx, A); }
XL(xl_get_rows) { return ggml_get_rows(x->ctx, A, B); }
XL(xl_diag_mask_inf) { return ggml_diag_mask_inf(x->ctx, A, x->p[0]); }
XL(xl_diag_mask_zero) { return ggml_diag_mask_zero(x->ctx, A, x->p[0]); }
XL(xl_clamp) { return ggml_clamp(x->ctx, A, f32_of(x->p[0]), f32_of(x->p[1])); }
XL(xl_leaky_relu) { return ggml_leaky_relu(x->ctx, A, f32_of(x->p[0]), false); }
XL(xl_cross_entropy_loss) { return ggml_cross_entropy_loss(x->ctx, A, B); }

XL(xl_repeat) {
    struct ggml_tensor * b = B; // ours keeps the shape operand; upstream's may carry only the shape
    if (b == NULL) {
        b = ggml_new_tensor_4d(x->ctx, A->type, NE(0), NE(1), NE(2), NE(3));
        if (b == NULL) {
            return NULL;
        }
    }
    return ggml_repeat(x->ctx, A, b);
}

XL(xl_concat) { return x->p[0] == 2 ? ggml_concat(x->ctx, A, B) : refuse(x, "CONCAT along a dimension other than 2"); }

XL(xl_argsort) {
    if (x->p[0] != GGML_SORT_ASC && x->p[0] != GGML_SORT_DESC) {
        return refuse(x, "unknown sort order");
    }
    return ggml_argsort(x->ctx, A, (enum ggml_sort_order) x->p[0]);
}

XL(xl_acc_set) {
    const int32_t * p = x->p;
    if (p[0] < 0 || p[1] < 0 || p[2] < 0 || p[3] < 0) {
        return refuse(x, "negative stride or offset");
    }
    if (x->n->op == RPC_WIRE_OP_ACC) {
        return ggml_acc(x->ctx, A, B, (size_t) p[0], (size_t) p[1], (size_t) p[2], (size_t) p[3]);
    }
    return ggml_set(x->ctx, A, B, (size_t) p[0], (size_t) p[1], (size_t) p[2], (size_t) p[3]);
}

// --- views: also of raw-byte tensors (I64 indices), in the local layout --------------------------------

XL(xl_view) {
    enum ggml_type t;
    int64_t ne[4];
    size_t nb[4];
    if (!rpc_local_layout(x->n->type, x->n->ne, x->n->nb, &t, ne, nb)) {
        return refuse(x, "view of a type or layout this server cannot hold");
    }
    const uint64_t offs = (uint64_t) (uint32_t) x->p[0] | ((uint64_t) (uint32_t) x->p[1] << 32);
    return ggml_view_4d(x->ctx, A, ne[0], ne[1], ne[2], ne[3], nb[1], nb[2], nb[3], (size_t) offs);
}

XL(xl_reshape) {
    enum ggml_type t;
    int64_t ne[4];
    size_t nb[4];
    if (!rpc_local_layout(x->n->type, x->n->ne, x->n->nb, &t, ne, nb)) {
        return refuse(x, "reshape of a type or layout this server cannot hold");
    }
    return ggml_reshape_4d(x->ctx, A, ne[0], ne[1], ne[2], ne[3]);
}

XL(xl_permute) {
    for (int i = 0; i < 4; i++) {
        if (x->p[i] < 0 || x->p[i] > 3) {
            return refuse(x, "permutation axis out of range");
        }
    }
    return ggml_permute(x->ctx, A, x->p[0], x->p[1], x->p[2], x->p[3]);
}

// --- ops whose newer parameters need a kernel of ours ------------------------------------------------

XL(xl_scale) {
    if (x->p[1] == 0) {
        return ggml_scale(x->ctx, A, f32_of(x->p[0]));
    }
    if (!dense_rows(A, false)) {
        return refuse(x, "SCALE with a bias: F32 rows only");
    }
    return custom(x, 1, (void *) rpc_k_scale, kparams(x, 0), A, NULL, NULL, GGML_TYPE_F32, A->ne);
}

XL(xl_soft_max) {
    struct ggml_tensor * a = A;
    struct ggml_tensor * mask = B;
    struct ggml_tensor * sinks = x->s[2];
    const bool plain_mask = mask == NULL || (mask->type == GGML_TYPE_F32 && ggml_is_contiguous(mask) && mask->ne[2] == 1 &&
                                             mask->ne[3] == 1 && mask->ne[1] == a->ne[1]);
    if (x->p[1] == 0 && sinks == NULL && plain_mask && ggml_is_contiguous(a)) {
        return ggml_soft_max_ext(x->ctx, a, mask, f32_of(x->p[0]));
    }
    // ALiBi slopes, attention sinks, F16 or padded or broadcast masks: our kernel
    if (any_empty(a, mask, sinks, NULL)) {
        return refuse(x, "SOFT_MAX: an empty operand");
    }
    if (!dense_rows(a, false)) {
        return refuse(x, "SOFT_MAX: F32 rows only");
    }
    if (mask != NULL && (!dense_rows(mask, true) || mask->ne[0] != a->ne[0] || mask->ne[1] < a->ne[1] ||
                         a->ne[2] % mask->ne[2] != 0 || a->ne[3] % mask->ne[3] != 0)) {
        return refuse(x, "SOFT_MAX: the mask does not fit the scores");
    }
    if (sinks != NULL && (sinks->type != GGML_TYPE_F32 || !ggml_is_contiguous(sinks) || ggml_nelements(sinks) < a->ne[2])) {
        return refuse(x, "SOFT_MAX: sinks must be F32 with one value per head");
    }
    if (f32_of(x->p[1]) > 0.0f && mask == NULL) {
        return refuse(x, "SOFT_MAX: ALiBi needs a mask");
    }
    struct ggml_tensor * t = custom(x, 3, (void *) rpc_k_soft_max, kparams(x, 0), a, mask ? mask : a, a, GGML_TYPE_F32, a->ne);
    if (t != NULL) {
        t->src[1] = mask;
        t->src[2] = NULL;
        t->src[3] = sinks;
    }
    return t;
}

XL(xl_rope) {
    const int32_t * p = x->p;
    const int32_t mode = p[2];
    if ((mode != 0 && mode != 2) || !all_zero(p, 11, 15)) {
        return refuse(x, "ROPE: only modes 0 (normal) and 2 (NeoX), without sections");
    }
    // the wire's ROPE is ggml's of 2025/2026, which ggml_x_rope_ext computes
    return ggml_x_rope_ext(x->ctx, A, B, x->s[2], p[1], mode, p[4], f32_of(p[5]), f32_of(p[6]), f32_of(p[7]),
                           f32_of(p[8]), f32_of(p[9]), f32_of(p[10]));
}

XL(xl_unary) {
    const int32_t u = x->p[0];
    if (u >= 0 && u < RPC_WIRE_UNARY_OP_COUNT && rpc_unary_from_wire[u] >= 0) {
        return ggml_unary(x->ctx, A, (enum ggml_unary_op) rpc_unary_from_wire[u]);
    }
    switch (u) {
        case RPC_WIRE_UNARY_OP_SIGMOID: case RPC_WIRE_UNARY_OP_HARDSWISH: case RPC_WIRE_UNARY_OP_HARDSIGMOID:
        case RPC_WIRE_UNARY_OP_EXP: case RPC_WIRE_UNARY_OP_EXPM1: case RPC_WIRE_UNARY_OP_SOFTPLUS:
        case RPC_WIRE_UNARY_OP_GELU_ERF: case RPC_WIRE_UNARY_OP_FLOOR: case RPC_WIRE_UNARY_OP_CEIL:
        case RPC_WIRE_UNARY_OP_ROUND: case RPC_WIRE_UNARY_OP_TRUNC:
            break;
        default:
            return refuse(x, "unary op not available on this server");
    }
    if (!dense_rows(A, false)) {
        return refuse(x, "UNARY: F32 rows only for this unary op");
    }
    return custom(x, 1, (void *) rpc_k_unary, kparams(x, u), A, NULL, NULL, GGML_TYPE_F32, A->ne);
}

XL(xl_glu) {
    const int32_t op = x->p[0];
    if (op < 0 || op >= RPC_WIRE_GLU_OP_COUNT) {
        return refuse(x, "unknown GLU op");
    }
    struct ggml_tensor * a = A;
    struct ggml_tensor * b = B;
    if (!dense_rows(a, false) || (b != NULL && !dense_rows(b, false))) {
        return refuse(x, "GLU: F32 rows only");
    }
    if (b == NULL) {
        if (a->ne[0] % 2 != 0) {
            return refuse(x, "GLU: a row of odd length cannot be split in halves");
        }
        const int64_t ne[4] = { a->ne[0] / 2, a->ne[1], a->ne[2], a->ne[3] };
        return custom(x, 1, (void *) rpc_k_glu1, kparams(x, op), a, NULL, NULL, GGML_TYPE_F32, ne);
    }
    if (!ggml_are_same_shape(a, b)) {
        return refuse(x, "GLU: both halves must have the same shape");
    }
    return custom(x, 2, (void *) rpc_k_glu2, kparams(x, op), a, b, NULL, GGML_TYPE_F32, a->ne);
}

XL(xl_set_rows) {
    struct ggml_tensor * src = A;     // rows to write (F32)
    struct ggml_tensor * idx = B;     // row indices: I32, or I64 held as bytes
    struct ggml_tensor * dest = x->s[2];
    const uint32_t idx_type = x->n->src_type[1];
    if (any_empty(src, idx, dest, NULL)) {
        return refuse(x, "SET_ROWS: an empty operand");
    }
    int elt = 0;
    if (idx_type == RPC_WIRE_TYPE_I64 && idx->type == GGML_TYPE_I8 && idx->ne[0] % 8 == 0) {
        elt = 8;
    } else if (idx->type == GGML_TYPE_I32) {
        elt = 4;
    } else {
        return refuse(x, "SET_ROWS: indices must be I64 or I32");
    }
    const int64_t n_idx = idx->ne[0] / (elt == 8 ? 8 : 1);
    if (!dense_rows(src, false) || !dense_rows(dest, true)) {
        return refuse(x, "SET_ROWS: F32 rows into an F32 or F16 tensor only");
    }
    if (dest->ne[0] != src->ne[0] || dest->ne[2] != src->ne[2] || dest->ne[3] != src->ne[3] || src->ne[1] != n_idx ||
        idx->ne[1] == 0 || idx->ne[2] == 0 || src->ne[2] % idx->ne[1] != 0 || src->ne[3] % idx->ne[2] != 0 ||
        idx->ne[3] != 1) {
        return refuse(x, "SET_ROWS: shapes of destination, rows and indices do not fit");
    }
    struct rpc_kparams * k = kparams(x, 0);
    if (k != NULL) {
        k->elt_bytes = elt;
    }
    // the result is the destination, written in place
    return custom(x, 3, (void *) rpc_k_set_rows, k, dest, src, idx, dest->type, dest->ne);
}

XL(xl_flash_attn_ext) {
    struct ggml_tensor * q = x->s[0];
    struct ggml_tensor * k = x->s[1];
    struct ggml_tensor * v = x->s[2];
    struct ggml_tensor * mask = x->s[3];
    struct ggml_tensor * sinks = x->s[4];
    if (any_empty(q, k, v, mask)) {
        return refuse(x, "FLASH_ATTN_EXT: an empty operand");
    }
    if (!dense_rows(q, false) || !dense_rows(k, true) || !dense_rows(v, true)) {
        return refuse(x, "FLASH_ATTN_EXT: q must be F32, k and v F32 or F16");
    }
    if (k->ne[0] != q->ne[0] || v->ne[1] != k->ne[1] || v->ne[0] > RPC_FA_MAX_D || k->ne[2] == 0 || v->ne[2] == 0 ||
        q->ne[2] % k->ne[2] != 0 || q->ne[2] % v->ne[2] != 0 || q->ne[3] % k->ne[3] != 0 || q->ne[3] % v->ne[3] != 0) {
        return refuse(x, "FLASH_ATTN_EXT: shapes of q, k and v do not fit");
    }
    if (mask != NULL && (!dense_rows(mask, true) || mask->ne[0] < k->ne[1] || mask->ne[1] < q->ne[1] ||
                         q->ne[2] % mask->ne[2] != 0 || q->ne[3] % mask->ne[3] != 0)) {
        return refuse(x, "FLASH_ATTN_EXT: the mask does not fit");
    }
    if (sinks != NULL && (sinks->type != GGML_TYPE_F32 || !ggml_is_contiguous(sinks) || ggml_nelements(sinks) < q->ne[2])) {
        return refuse(x, "FLASH_ATTN_EXT: sinks must be F32 with one value per head");
    }
    if (f32_of(x->p[1]) > 0.0f && mask == NULL) {
        return refuse(x, "FLASH_ATTN_EXT: ALiBi needs a mask");
    }
    const int64_t ne[4] = { v->ne[0], q->ne[2], q->ne[1], q->ne[3] };
    struct ggml_tensor * t = custom(x, 3, (void *) rpc_k_flash_attn_ext, kparams(x, 0), q, k, v, GGML_TYPE_F32, ne);
    if (t != NULL) {
        t->src[3] = mask;
        t->src[4] = sinks;
    }
    return t;
}

// --- the table ------------------------------------------------------------------------------------

typedef struct ggml_tensor * (*xl_fn)(struct xl * x);

struct xlator {
    uint16_t need;  // sources that must be present (bit i: src[i])
    uint16_t allow; // sources that may be present
    xl_fn fn;
};

#define S0 0x1
#define S01 0x3
#define S012 0x7

static const struct xlator xlators[RPC_WIRE_OP_COUNT] = {
    [RPC_WIRE_OP_DUP] = { S0, S0, xl_dup },
    [RPC_WIRE_OP_ADD] = { S01, S01, xl_add },
    [RPC_WIRE_OP_ADD1] = { S01, S01, xl_add1 },
    [RPC_WIRE_OP_ACC] = { S01, S01, xl_acc_set },
    [RPC_WIRE_OP_SUB] = { S01, S01, xl_sub },
    [RPC_WIRE_OP_MUL] = { S01, S01, xl_mul },
    [RPC_WIRE_OP_DIV] = { S01, S01, xl_div },
    [RPC_WIRE_OP_SQR] = { S0, S0, xl_sqr },
    [RPC_WIRE_OP_SQRT] = { S0, S0, xl_sqrt },
    [RPC_WIRE_OP_LOG] = { S0, S0, xl_log },
    [RPC_WIRE_OP_SUM] = { S0, S0, xl_sum },
    [RPC_WIRE_OP_SUM_ROWS] = { S0, S0, xl_sum_rows },
    [RPC_WIRE_OP_MEAN] = { S0, S0, xl_mean },
    [RPC_WIRE_OP_ARGMAX] = { S0, S0, xl_argmax },
    [RPC_WIRE_OP_REPEAT] = { S0, S01, xl_repeat },
    [RPC_WIRE_OP_CONCAT] = { S01, S01, xl_concat },
    [RPC_WIRE_OP_NORM] = { S0, S0, xl_norm },
    [RPC_WIRE_OP_RMS_NORM] = { S0, S0, xl_rms_norm },
    [RPC_WIRE_OP_MUL_MAT] = { S01, S01, xl_mul_mat },
    [RPC_WIRE_OP_OUT_PROD] = { S01, S01, xl_out_prod },
    [RPC_WIRE_OP_SCALE] = { S0, S0, xl_scale },
    [RPC_WIRE_OP_SET] = { S01, S01, xl_acc_set },
    [RPC_WIRE_OP_CPY] = { S01, S01, xl_cpy },
    [RPC_WIRE_OP_CONT] = { S0, S0, xl_cont },
    [RPC_WIRE_OP_RESHAPE] = { S0, S0, xl_reshape },
    [RPC_WIRE_OP_VIEW] = { S0, S0, xl_view },
    [RPC_WIRE_OP_PERMUTE] = { S0, S0, xl_permute },
    [RPC_WIRE_OP_TRANSPOSE] = { S0, S0, xl_transpose },
    [RPC_WIRE_OP_GET_ROWS] = { S01, S01, xl_get_rows },
    [RPC_WIRE_OP_SET_ROWS] = { S012, S012, xl_set_rows },
    [RPC_WIRE_OP_DIAG_MASK_INF] = { S0, S0, xl_diag_mask_inf },
    [RPC_WIRE_OP_DIAG_MASK_ZERO] = { S0, S0, xl_diag_mask_zero },
    [RPC_WIRE_OP_SOFT_MAX] = { S0, S012, xl_soft_max },
    [RPC_WIRE_OP_ROPE] = { S01, S012, xl_rope },
    [RPC_WIRE_OP_CLAMP] = { S0, S0, xl_clamp },
    [RPC_WIRE_OP_ARGSORT] = { S0, S0, xl_argsort },
    [RPC_WIRE_OP_LEAKY_RELU] = { S0, S0, xl_leaky_relu },
    [RPC_WIRE_OP_FLASH_ATTN_EXT] = { S012, 0x1f, xl_flash_attn_ext },
    [RPC_WIRE_OP_UNARY] = { S0, S0, xl_unary },
    [RPC_WIRE_OP_CROSS_ENTROPY_LOSS] = { S01, S01, xl_cross_entropy_loss },
    [RPC_WIRE_OP_GLU] = { S0, S01, xl_glu },
};

int rpc_translated_op_count(void) {
    int n = 0;
    for (int i = 0; i < RPC_WIRE_OP_COUNT; i++) {
        n += xlators[i].fn != NULL;
    }
    return n;
}

struct ggml_tensor * rpc_build_node(struct ggml_context * ctx, const struct rpc_wire_node * n, struct rpc_arena * arena,
                                    const char ** why) {
    if (n->op >= RPC_WIRE_OP_COUNT || xlators[n->op].fn == NULL) {
        *why = "op not available on this server";
        return NULL;
    }
    const struct xlator * xt = &xlators[n->op];
    unsigned present = n->self_src;
    for (int i = 0; i < RPC_MAX_SRC; i++) {
        present |= n->src[i] != NULL ? 1u << i : 0u;
    }
    if (n->self_src != 0 && (n->op != RPC_WIRE_OP_CPY || n->self_src != 2u)) {
        *why = "a source that is the node itself (only a cast's destination may be)";
        return NULL;
    }
    if ((present & xt->need) != xt->need || (present & ~(unsigned) xt->allow) != 0) {
        *why = "unexpected operands for this op";
        return NULL;
    }
    struct xl x = { .ctx = ctx, .n = n, .s = n->src, .p = n->p, .arena = arena, .why = NULL };
    struct ggml_tensor * t = xt->fn(&x);
    if (t == NULL) {
        *why = x.why ? x.why : "parameters or operands not supported by this server";
    }
    return t;
}
