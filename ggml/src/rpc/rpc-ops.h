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

// rpc_build_node builds, with ggml-go's own constructors in ctx (no_alloc), the node a wire
// record describes: wire op number and parameters, sources already built. NULL when the op has
// no peer, its parameters are not expressible here, or the constructor rejects the operands
// (then ggml_x_last_error tells why); *why names the reason in the first two cases.
struct ggml_tensor * rpc_build_node(struct ggml_context * ctx, uint32_t wire_op, const int32_t params[RPC_MAX_OP_PARAMS / 4],
                                    struct ggml_tensor * src[RPC_MAX_SRC], const uint32_t ne[RPC_MAX_DIMS],
                                    const uint32_t nb[RPC_MAX_DIMS], const char ** why);

// the number of ggml-go ops rpc_node_to_wire can express (for reports)
int rpc_supported_op_count(void);

#endif // GGML_RPC_OPS_H
