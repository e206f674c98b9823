// rpc-ops.h - translation of ops, their parameters and types between ggml-go's numbering
// (ggml b3bcd556) and the RPC wire's (the server's ggml, 2026-08).

#ifndef GGML_RPC_OPS_H
#define GGML_RPC_OPS_H

#include "rpc-proto.h"

// our type -> wire type, or -1
int rpc_type_to_wire_num(enum ggml_type type);
// wire type -> our type, or -1 (also for removed and out-of-range numbers)
int rpc_type_from_wire_num(uint32_t type);

// rpc_node_to_wire expresses node's op and parameters in the wire's numbering and layout. False
// when the server's ggml has no such op or cannot express these parameters (the op then stays
// on another backend). For a tensor that is not computed in the graph (a leaf, or an operand
// computed earlier) use rpc_leaf_op_to_wire: its op is informative only.
bool rpc_node_to_wire(const struct ggml_tensor * node, uint32_t * op, int32_t params[RPC_MAX_OP_PARAMS / 4]);
void rpc_leaf_op_to_wire(const struct ggml_tensor * t, uint32_t * op, int32_t params[RPC_MAX_OP_PARAMS / 4]);

// --- the server's side (rpc-xlate.c) ---

// rpc_wire_extent: the bytes [data, data + extent) a tensor of this wire type and geometry
// touches; false for an unknown or removed type or an impossible geometry.
bool rpc_wire_extent(uint32_t wire_type, const uint32_t ne[RPC_MAX_DIMS], const uint32_t nb[RPC_MAX_DIMS], uint64_t * out);

// rpc_local_layout: how the server holds a tensor of this wire type and geometry: our type with
// the same shape and strides, or, for a type we lack (I64, BF16, ...), raw bytes: I8 with ne[0]
// counting the bytes of a row (then its rows must be dense: nb[0] = the type's block size).
bool rpc_local_layout(uint32_t wire_type, const uint32_t ne[RPC_MAX_DIMS], const uint32_t nb[RPC_MAX_DIMS],
                      enum ggml_type * type, int64_t lne[RPC_MAX_DIMS], size_t lnb[RPC_MAX_DIMS]);

// per-graph memory of the translators (kernel parameters), freed with the graph; *error (NULL
// until a kernel needs it; heap memory, so the struct may be moved) is set by a kernel that met
// out-of-range data, which makes the computation fail
struct rpc_arena {
    void ** ptrs;
    size_t n, cap;
    int * error;
};
void rpc_arena_free(struct rpc_arena * a);

// a wire node, decoded: op, type, parameters and geometry in the wire's numbering; sources
// already built (NULL where the record has none) with their wire types
struct rpc_wire_node {
    uint32_t op;
    uint32_t type;
    const int32_t * p;
    const uint32_t * ne;
    const uint32_t * nb;
    struct ggml_tensor * src[RPC_MAX_SRC];
    uint32_t src_type[RPC_MAX_SRC];
    uint32_t self_src; // bit j: src[j] is the node itself (ggml_cast: CPY whose destination is its result)
};

// rpc_build_node builds in ctx (no_alloc) the local node that computes a wire node: our peer op
// with its parameters re-packed, or a kernel of rpc-kernels.c as a custom op. NULL when the op or
// these parameters or operands are not supported here; *why (or ggml_x_last_error, when one of
// our constructors refused) says why.
struct ggml_tensor * rpc_build_node(struct ggml_context * ctx, const struct rpc_wire_node * n, struct rpc_arena * arena,
                                    const char ** why);

// the number of wire ops the server translates (for reports)
int rpc_translated_op_count(void);

// the number of ggml-go ops rpc_node_to_wire can express (for reports)
int rpc_supported_op_count(void);

#endif // GGML_RPC_OPS_H
