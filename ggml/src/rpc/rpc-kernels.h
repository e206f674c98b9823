// rpc-kernels.h - CPU kernels of the server's translators for wire ops that have no peer in
// ggml-go's op set (GLU, SET_ROWS, FLASH_ATTN_EXT, SOFT_MAX with sinks/ALiBi/F16 masks, SCALE
// with a bias, the newer unary ops). Each runs as a MAP_CUSTOM1/2/3 node of our ggml, so it
// needs a CPU server (a backend without custom ops reports the graph unsupported).
//
// The translator (rpc-ops.c) checks every operand's type and geometry before it builds a node;
// the kernels trust those checks and check only what lives in tensor data (row indices), which
// they never follow out of range: such a row is skipped and *error is set, which makes the
// server fail that GRAPH_COMPUTE.

#ifndef GGML_RPC_KERNELS_H
#define GGML_RPC_KERNELS_H

#include "ggml.h"

#include <stdint.h>

// the largest head size FLASH_ATTN_EXT accepts (per-thread accumulators live on the stack)
#define RPC_FA_MAX_D 1024

// what a kernel needs beyond its operands; lives as long as the graph (rpc_arena)
struct rpc_kparams {
    int32_t p[16];  // the wire op's parameters
    int kind;       // GLU: wire glu op; UNARY: wire unary op
    int elt_bytes;  // SET_ROWS: bytes of one index (4: I32, 8: I64)
    int * error;    // set to 1 when tensor data is out of range (an index)
};

// dst = GLU(a[, b]); p[0] glu op, p[1] swapped, p[2]/p[3] alpha/limit of SWIGLU_OAI
void rpc_k_glu1(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * ud);
void rpc_k_glu2(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * b, int ith, int nth,
                void * ud);
// dst (a view of dest) rows idx[i] = rows i of src, converted to dst's type (F32 or F16)
void rpc_k_set_rows(struct ggml_tensor * dst, const struct ggml_tensor * dest, const struct ggml_tensor * src,
                    const struct ggml_tensor * idx, int ith, int nth, void * ud);
// dst = softmax(a * scale + slope * mask) with optional sinks (dst->src[3]); p: f32 scale, max_bias
void rpc_k_soft_max(struct ggml_tensor * dst, const struct ggml_tensor * a, const struct ggml_tensor * mask,
                    const struct ggml_tensor * unused, int ith, int nth, void * ud);
// dst = a * p[0] + p[1] (f32 scale and bias)
void rpc_k_scale(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * ud);
// dst = unary op kind of a (F32)
void rpc_k_unary(struct ggml_tensor * dst, const struct ggml_tensor * a, int ith, int nth, void * ud);
// dst [Dv, n_head, n_q, n_seq] = attention of q, k, v with dst->src[3] mask, dst->src[4] sinks;
// p: f32 scale, max_bias, logit_softcap
void rpc_k_flash_attn_ext(struct ggml_tensor * dst, const struct ggml_tensor * q, const struct ggml_tensor * k,
                          const struct ggml_tensor * v, int ith, int nth, void * ud);

// the ALiBi slope of head h of n_head (1 when max_bias is 0), as ggml computes it
float rpc_alibi_slope(float max_bias, int h, int n_head);

#endif // GGML_RPC_KERNELS_H
