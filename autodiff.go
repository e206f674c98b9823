//go:build cgo

package ggml

/*
#include "ggml_go.h"
#include "train_trampolines.h"

static char * ggo_ggml_x_map_custom_set_grad(struct ggml_tensor * t, uintptr_t h) {
    GGO_VCALL(ggml_x_map_custom_set_grad(t, ggml_go_custom_grad, (void *) h));
}

static char * ggo_ggml_set_param(struct ggml_context * ctx, struct ggml_tensor * t) { GGO_VCALL(ggml_set_param(ctx, t)); }
static char * ggo_ggml_build_backward_expand(struct ggml_context * ctx, struct ggml_cgraph * gf, struct ggml_cgraph * gb, bool keep) {
    GGO_VCALL(ggml_build_backward_expand(ctx, gf, gb, keep));
}
static char * ggo_ggml_build_backward_gradient_checkpointing(struct ggml_context * ctx, struct ggml_cgraph * gf,
        struct ggml_cgraph * gb, struct ggml_cgraph * gb_tmp, struct ggml_tensor ** cps, int n) {
    GGO_VCALL(ggml_build_backward_gradient_checkpointing(ctx, gf, gb, gb_tmp, cps, n));
}
static char * ggo_ggml_graph_reset(struct ggml_cgraph * g) { GGO_VCALL(ggml_graph_reset(g)); }
static ggo_pres ggo_ggml_cross_entropy_loss(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b) {
    GGO_PCALL(ggml_cross_entropy_loss(ctx, a, b));
}
static ggo_pres ggo_ggml_flash_attn(struct ggml_context * ctx, struct ggml_tensor * q, struct ggml_tensor * k,
        struct ggml_tensor * v, bool masked) {
    GGO_PCALL(ggml_flash_attn(ctx, q, k, v, masked));
}
static struct ggml_tensor * ggo_tensor_grad(const struct ggml_tensor * t) { return t->grad; }
static bool ggo_tensor_is_param(const struct ggml_tensor * t) { return t->is_param; }
static bool ggo_graph_has_grads(const struct ggml_cgraph * g) { return g->grads != NULL; }
*/
import "C"

import "fmt"

// SetParam marks t as a trainable parameter and gives it a gradient tensor (ggml_set_param).
// Mark parameters before building the expressions that use them: an op result gets a gradient
// only when one of its operands has one. It returns t.
func (ctx *Context) SetParam(t *Tensor) *Tensor {
	const op = "SetParam"
	if msg := takeCError(C.ggo_ggml_set_param(ctx.cptr(op), t.cptr(op))); msg != "" {
		panic(&Error{Op: op, Shapes: t.describe(), Msg: msg})
	}
	return t
}

// IsParam reports whether t was marked with SetParam.
func (t *Tensor) IsParam() bool {
	return bool(C.ggo_tensor_is_param(t.cptr("IsParam")))
}

// Grad returns t's gradient tensor, or nil when t has none (neither a param nor computed from
// one). After BuildBackward the gradient of a param is the node of the backward graph that
// computes it.
func (t *Tensor) Grad() *Tensor {
	return tensorFromC(C.ggo_tensor_grad(t.cptr("Grad")))
}

// HasGrads reports whether the graph was created with gradient slots (NewGraphCustom(n, true)),
// as BuildBackward needs.
func (g *Graph) HasGrads() bool {
	return bool(C.ggo_graph_has_grads(g.cptr("HasGrads")))
}

// BuildBackwardExpand extends gb (usually gf.Dup) with the backward pass of gf: every param's
// Grad becomes a node of gb (ggml_build_backward_expand). With keep, gf's nodes get fresh
// gradient tensors first, so gf's own gradients are left alone. The gradients of gf's nodes
// start at zero (Graph.Reset) and the loss's gradient must be set to 1 before computing gb (see
// ComputeGradients). It panics with a *Error when a graph has no gradient slots or an op on the
// way from a param to the loss has no backward pass.
func (ctx *Context) BuildBackwardExpand(gf, gb *Graph, keep bool) {
	const op = "BuildBackwardExpand"
	if msg := takeCError(C.ggo_ggml_build_backward_expand(ctx.cptr(op), gf.cptr(op), gb.cptr(op), C.bool(keep))); msg != "" {
		panic(&Error{Op: op, Msg: msg})
	}
}

// BuildBackward returns a new graph: a copy of gf extended by its backward pass (see
// BuildBackwardExpand). gf must have gradient slots (NewGraphCustom(n, true)).
func (ctx *Context) BuildBackward(gf *Graph, keep bool) *Graph {
	const op = "BuildBackward"
	if !gf.HasGrads() {
		panic(&Error{Op: op, Msg: "the forward graph has no gradient slots: create it with NewGraphCustom(size, true)"})
	}
	gb := gf.Dup(ctx)
	ctx.BuildBackwardExpand(gf, gb, keep)
	return gb
}

// BuildBackwardCheckpointing builds into gb a backward pass of gf that keeps only the
// checkpoints' forward values and recomputes the nodes between them when it needs them
// (ggml_build_backward_gradient_checkpointing): less memory for a little more compute, once a
// graph allocator (GraphAllocator) places gb and reuses the memory of values no later node
// reads; gb finishes one segment (its params' gradients included) before it recomputes the
// next. gbTmp is scratch of gb's size. With no checkpoints gb is the plain backward graph.
func (ctx *Context) BuildBackwardCheckpointing(gf, gb, gbTmp *Graph, checkpoints ...*Tensor) {
	const op = "BuildBackwardCheckpointing"
	cps := make([]*C.struct_ggml_tensor, len(checkpoints)+1)
	for i, t := range checkpoints {
		cps[i] = t.cptr(op)
	}
	msg := takeCError(C.ggo_ggml_build_backward_gradient_checkpointing(ctx.cptr(op), gf.cptr(op), gb.cptr(op),
		gbTmp.cptr(op), &cps[0], C.int(len(checkpoints))))
	if msg != "" {
		panic(&Error{Op: op, Msg: msg})
	}
}

// Reset sets the gradients of every node of the graph to zero (ggml_graph_reset). The graph
// needs gradient slots and its gradients CPU-accessible data.
func (g *Graph) Reset() {
	const op = "Graph.Reset"
	if msg := takeCError(C.ggo_ggml_graph_reset(g.cptr(op))); msg != "" {
		panic(&Error{Op: op, Msg: msg})
	}
}

// ComputeGradients runs the backward graph gb of gf (from BuildBackward) on the CPU: it zeroes
// gf's gradients, sets loss's gradient to 1 and computes gb with nThreads threads. Afterwards
// every param's Grad holds d loss / d param (and loss its value).
func (ctx *Context) ComputeGradients(gf, gb *Graph, loss *Tensor, nThreads int) (err error) {
	defer errOnClosed(&err)
	const op = "ComputeGradients"
	g := loss.Grad()
	if g == nil {
		panic(&Error{Op: op, Shapes: loss.describe(), Msg: "the loss has no gradient: mark params with SetParam before building it"})
	}
	if loss.NumElements() != 1 {
		panic(&Error{Op: op, Shapes: loss.describe(), Msg: fmt.Sprintf("the loss must be a scalar (has %d elements)", loss.NumElements())})
	}
	gf.Reset()
	if err := g.Fill(1); err != nil {
		return err
	}
	return ctx.Compute(gb, nThreads)
}

// CrossEntropyLoss returns the mean over the rows of -sum(b * log(softmax(a))) as a one-element
// tensor: a holds logits, b target probabilities of a's shape (ggml_cross_entropy_loss).
func (ctx *Context) CrossEntropyLoss(a, b *Tensor) *Tensor {
	const opName = "CrossEntropyLoss"
	r := C.ggo_ggml_cross_entropy_loss(ctx.cptr(opName), a.cptr(opName), b.cptr(opName))
	return ctx.opResult(opName, r, func() string { return describeOperands([]string{"a", "b"}, []*Tensor{a, b}) })
}

// FlashAttn returns softmax(kᵀq / sqrt(D)) applied to v for q [D,N,H,B], k [D,M,Hk,B] and the
// transposed v [M,D,Hk,B] (H a multiple of Hk); masked hides key m from query n when
// m > M - N + n (ggml_flash_attn).
func (ctx *Context) FlashAttn(q, k, v *Tensor, masked bool) *Tensor {
	const opName = "FlashAttn"
	r := C.ggo_ggml_flash_attn(ctx.cptr(opName), q.cptr(opName), k.cptr(opName), v.cptr(opName), C.bool(masked))
	return ctx.opResult(opName, r, func() string {
		return describeOperands([]string{"q", "k", "v"}, []*Tensor{q, k, v})
	})
}

// CustomGrad builds the gradients of a custom op node's operands: given the node and its
// gradient grad, it returns one tensor per operand (in operand order; nil for an operand that
// needs none), built in ctx with ordinary ops. It runs while BuildBackward builds the graph, not
// when it is computed.
type CustomGrad func(ctx *Context, node, grad *Tensor) []*Tensor

// SetCustomGrad gives a custom op node (MapCustom1/2/3) a gradient, so that BuildBackward can
// differentiate through it (ggml_x_map_custom_set_grad). A panic in fn (for example an op's
// *Error) makes BuildBackward panic with a *Error. fn is kept until t's context is closed.
func (t *Tensor) SetCustomGrad(fn CustomGrad) {
	const op = "SetCustomGrad"
	c := t.cptr(op)
	if fn == nil || t.ctx == nil {
		panic(&Error{Op: op, Msg: "need a gradient function and a tensor of a Go context"})
	}
	h := newHandle(fn)
	if msg := takeCError(C.ggo_ggml_x_map_custom_set_grad(c, C.uintptr_t(h))); msg != "" {
		deleteHandle(h)
		panic(&Error{Op: op, Shapes: t.describe(), Msg: msg})
	}
	t.ctx.onClose(func() { deleteHandle(h) })
}

// contextByC returns the live Go context of a C context, or nil.
func contextByC(c *C.struct_ggml_context) *Context {
	ctxRegistry.mu.RLock()
	defer ctxRegistry.mu.RUnlock()
	for _, e := range ctxRegistry.entries {
		if e.c == c {
			if ctx := e.ctx.Value(); ctx != nil && !ctx.dead.Load() {
				return ctx
			}
		}
	}
	return nil
}
