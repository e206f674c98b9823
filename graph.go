//go:build cgo

package ggml

/*
#include "ggml_go.h"

static ggo_pres ggo_ggml_new_graph_custom(struct ggml_context * ctx, size_t size, bool grads) {
    GGO_PCALL(ggml_new_graph_custom(ctx, size, grads));
}
static ggo_pres ggo_ggml_graph_dup(struct ggml_context * ctx, struct ggml_cgraph * g) {
    GGO_PCALL(ggml_graph_dup(ctx, g));
}
// the view is written into caller-provided C memory
static char * ggo_ggml_graph_view(struct ggml_cgraph * g, int i0, int i1, struct ggml_cgraph * out) {
    GGO_VCALL(*out = ggml_graph_view(g, i0, i1));
}
static char * ggo_ggml_graph_cpy(struct ggml_cgraph * src, struct ggml_cgraph * dst) {
    GGO_VCALL(ggml_graph_cpy(src, dst));
}
static char * ggo_ggml_build_forward_expand(struct ggml_cgraph * g, struct ggml_tensor * t) {
    GGO_VCALL(ggml_build_forward_expand(g, t));
}
static struct ggml_tensor * ggo_graph_node(const struct ggml_cgraph * g, int i) { return g->nodes[i]; }
static struct ggml_tensor * ggo_graph_leaf(const struct ggml_cgraph * g, int i) { return g->leafs[i]; }

// plan, allocate the work memory, compute, free: the work memory is not taken from an arena,
// so computing a graph many times does not fill the context
static char * ggo_ggml_graph_compute(struct ggml_cgraph * g, int n_threads) {
    ggml_x_clear_error();
    struct ggml_cplan plan = ggml_graph_plan(g, n_threads);
    char * err = ggo_take_error();
    if (err != NULL) {
        return err;
    }
    void * work = NULL;
    if (plan.work_size > 0) {
        work = malloc(plan.work_size);
        if (work == NULL) {
            const char * msg = "ggml_graph_compute: out of memory for the work buffer";
            err = (char *) malloc(strlen(msg) + 1);
            if (err != NULL) {
                strcpy(err, msg);
            }
            return err;
        }
        plan.work_data = (uint8_t *) work;
    }
    int rc = ggml_graph_compute(g, &plan);
    err = ggo_take_error();
    free(work);
    if (rc != GGML_EXIT_SUCCESS && err == NULL) {
        const char * msg = "ggml_graph_compute failed";
        err = (char *) malloc(strlen(msg) + 1);
        if (err != NULL) {
            strcpy(err, msg);
        }
    }
    return err;
}
static char * ggo_ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * g, int n_threads) {
    GGO_VCALL(ggml_graph_compute_with_ctx(ctx, g, n_threads));
}
*/
import "C"

import (
	"fmt"
	"io"
	"runtime"
	"unsafe"
)

// DefaultGraphSize is the node capacity of graphs made by NewGraph (GGML_DEFAULT_GRAPH_SIZE).
const DefaultGraphSize = 2048

// Graph is a computation graph (struct ggml_cgraph) stored in a Context: the nodes to compute,
// in order, and the leaves they read. It is valid while its context is open.
type Graph struct {
	c   *C.struct_ggml_cgraph
	ctx *Context
}

// cptr returns the C graph, panicking with a *Error naming op when its context was closed.
func (g *Graph) cptr(op string) *C.struct_ggml_cgraph {
	if g == nil || g.c == nil {
		panic(&Error{Op: op, Msg: "nil *Graph"})
	}
	if g.ctx != nil && g.ctx.dead.Load() {
		panic(&Error{Op: op, Msg: "graph used after its context was closed", Err: ErrClosed})
	}
	return g.c
}

// cptrErr is cptr for methods that return an error: nil or closed is reported, not panicked.
func (g *Graph) cptrErr(op string) (*C.struct_ggml_cgraph, error) {
	if g == nil || g.c == nil {
		return nil, &Error{Op: op, Msg: "nil *Graph"}
	}
	if g.ctx != nil && g.ctx.dead.Load() {
		return nil, &Error{Op: op, Msg: "graph used after its context was closed", Err: ErrClosed}
	}
	return g.c, nil
}

// graphFromC wraps a C graph stored in ctx (nil for nil).
func graphFromC(ctx *Context, p *C.struct_ggml_cgraph) *Graph {
	if p == nil {
		return nil
	}
	return &Graph{c: p, ctx: ctx}
}

// NewGraph creates an empty graph of DefaultGraphSize nodes without gradients (ggml_new_graph).
// It panics with a *Error when the arena is too small (GraphOverhead bytes are needed).
func (ctx *Context) NewGraph() *Graph {
	return ctx.NewGraphCustom(DefaultGraphSize, false)
}

// NewGraphCustom creates an empty graph with room for size nodes (and size leaves), with
// gradient slots when grads is set (ggml_new_graph_custom).
func (ctx *Context) NewGraphCustom(size int, grads bool) *Graph {
	const op = "NewGraphCustom"
	c := ctx.enter(op)
	defer ctx.busy.leave()
	if size < 0 {
		panic(&Error{Op: op, Msg: fmt.Sprintf("negative graph size %d", size)})
	}
	r := C.ggo_ggml_new_graph_custom(c, C.size_t(size), C.bool(grads))
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "ggml_new_graph_custom failed"
		}
		panic(&Error{Op: op, Shapes: fmt.Sprintf("size=%d", size), Msg: msg})
	}
	return graphFromC(ctx, (*C.struct_ggml_cgraph)(r.p))
}

// Context returns the context that stores the graph.
func (g *Graph) Context() *Context {
	return g.ctx
}

// BuildForwardExpand adds t and every node it depends on that is not yet in the graph, in
// dependency order (ggml_build_forward_expand). It returns g. It panics with a *Error when the
// graph is full.
func (g *Graph) BuildForwardExpand(t *Tensor) *Graph {
	const op = "BuildForwardExpand"
	c := g.cptr(op)
	if msg := takeCError(C.ggo_ggml_build_forward_expand(c, t.cptr(op))); msg != "" {
		panic(&Error{Op: op, Shapes: t.describe(), Msg: msg})
	}
	return g
}

// Len returns the number of nodes (n_nodes).
func (g *Graph) Len() int {
	return int(g.cptr("Len").n_nodes)
}

// NumLeafs returns the number of leaves (n_leafs).
func (g *Graph) NumLeafs() int {
	return int(g.cptr("NumLeafs").n_leafs)
}

// Size returns the node capacity of the graph.
func (g *Graph) Size() int {
	return int(g.cptr("Size").size)
}

// Node returns node i; a negative i counts from the end (-1 is the last node). It panics with
// a *Error when i is out of range.
func (g *Graph) Node(i int) *Tensor {
	c := g.cptr("Node")
	n := int(c.n_nodes)
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		panic(&Error{Op: "Node", Msg: fmt.Sprintf("node index %d out of range (graph has %d nodes)", i, n)})
	}
	return tensorFromC(C.ggo_graph_node(c, C.int(i)))
}

// Leaf returns leaf i; a negative i counts from the end.
func (g *Graph) Leaf(i int) *Tensor {
	c := g.cptr("Leaf")
	n := int(c.n_leafs)
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		panic(&Error{Op: "Leaf", Msg: fmt.Sprintf("leaf index %d out of range (graph has %d leaves)", i, n)})
	}
	return tensorFromC(C.ggo_graph_leaf(c, C.int(i)))
}

// Nodes returns the nodes in computation order.
func (g *Graph) Nodes() []*Tensor {
	c := g.cptr("Nodes")
	out := make([]*Tensor, int(c.n_nodes))
	for i := range out {
		out[i] = tensorFromC(C.ggo_graph_node(c, C.int(i)))
	}
	return out
}

// Leafs returns the leaves (inputs and constants the nodes read).
func (g *Graph) Leafs() []*Tensor {
	c := g.cptr("Leafs")
	out := make([]*Tensor, int(c.n_leafs))
	for i := range out {
		out[i] = tensorFromC(C.ggo_graph_leaf(c, C.int(i)))
	}
	return out
}

// Tensor returns the node or leaf with the given name, or nil (ggml_graph_get_tensor).
func (g *Graph) Tensor(name string) *Tensor {
	c := g.cptr("Tensor")
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return tensorFromC(C.ggml_graph_get_tensor(c, cname))
}

// Clear removes every node and leaf (ggml_graph_clear).
func (g *Graph) Clear() {
	C.ggml_graph_clear(g.cptr("Clear"))
}

// Dup returns a copy of the graph stored in ctx (ggml_graph_dup); nil ctx means g's context.
func (g *Graph) Dup(ctx *Context) *Graph {
	const op = "Graph.Dup"
	c := g.cptr(op)
	if ctx == nil {
		ctx = g.ctx
	}
	r := C.ggo_ggml_graph_dup(ctx.cptr(op), c)
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "ggml_graph_dup failed"
		}
		panic(&Error{Op: op, Msg: msg})
	}
	return graphFromC(ctx, (*C.struct_ggml_cgraph)(r.p))
}

// CopyTo copies g's nodes and leaves into dst, which must be large enough (ggml_graph_cpy).
func (g *Graph) CopyTo(dst *Graph) {
	const op = "Graph.CopyTo"
	if msg := takeCError(C.ggo_ggml_graph_cpy(g.cptr(op), dst.cptr(op))); msg != "" {
		panic(&Error{Op: op, Msg: msg})
	}
}

// View returns a graph of the nodes [i0, i1) of g, without leaves (ggml_graph_view). The view
// shares g's node array and is valid while g's context is open.
func (g *Graph) View(i0, i1 int) *Graph {
	const op = "Graph.View"
	c := g.cptr(op)
	if i0 < 0 || i1 < i0 || i1 > int(c.n_nodes) {
		panic(&Error{Op: op, Msg: fmt.Sprintf("range [%d,%d) is not inside the graph's %d nodes", i0, i1, int(c.n_nodes))})
	}
	mem := C.calloc(1, C.size_t(unsafe.Sizeof(C.struct_ggml_cgraph{})))
	if mem == nil {
		panic(&Error{Op: op, Msg: "out of memory"})
	}
	view := (*C.struct_ggml_cgraph)(mem)
	if msg := takeCError(C.ggo_ggml_graph_view(c, C.int(i0), C.int(i1), view)); msg != "" {
		C.free(mem)
		panic(&Error{Op: op, Msg: msg})
	}
	g.ctx.cmem.add(mem)
	return graphFromC(g.ctx, view)
}

// Print writes the graph's nodes and leaves, one per line, to w (the information of
// ggml_graph_print).
func (g *Graph) Print(w io.Writer) (err error) {
	defer errOnClosed(&err)
	c := g.cptr("Print")
	if _, err := fmt.Fprintf(w, "graph: %d nodes, %d leaves\n", int(c.n_nodes), int(c.n_leafs)); err != nil {
		return err
	}
	for i, t := range g.Nodes() {
		ne := t.Ne()
		if _, err := fmt.Fprintf(w, "  node %3d: [%5d,%5d,%5d,%5d] %-16s %-6s %s\n", i, ne[0], ne[1], ne[2], ne[3], t.OpDesc(), t.Type(), t.Name()); err != nil {
			return err
		}
	}
	for i, t := range g.Leafs() {
		ne := t.Ne()
		if _, err := fmt.Fprintf(w, "  leaf %3d: [%5d,%5d,%5d,%5d] %-16s %-6s %s\n", i, ne[0], ne[1], ne[2], ne[3], t.OpDesc(), t.Type(), t.Name()); err != nil {
			return err
		}
	}
	return nil
}

// Compute computes the graph on the CPU with nThreads threads (nThreads <= 0 selects
// runtime.NumCPU()), using ggml_graph_plan and ggml_graph_compute with work memory allocated
// for the call. The graph's tensors must have data (a context that allocates, or buffers).
// Failures (an unsupported op, missing data) are returned as a *Error.
func (ctx *Context) Compute(g *Graph, nThreads int) error {
	const op = "Compute"
	if _, err := ctx.enterErr(op); err != nil {
		return err
	}
	defer ctx.busy.leave()
	c, err := g.cptrErr(op)
	if err != nil {
		return err
	}
	if nThreads <= 0 {
		nThreads = runtime.NumCPU()
	}
	msg := takeCError(C.ggo_ggml_graph_compute(c, C.int(nThreads)))
	return computeResult(op, c, msg)
}

// ComputeWithContext computes the graph like Compute but takes the work memory from the
// context's arena (ggml_graph_compute_with_ctx): each call uses more of the arena.
func (ctx *Context) ComputeWithContext(g *Graph, nThreads int) error {
	const op = "ComputeWithContext"
	cc, err := ctx.enterErr(op)
	if err != nil {
		return err
	}
	defer ctx.busy.leave()
	c, err := g.cptrErr(op)
	if err != nil {
		return err
	}
	if nThreads <= 0 {
		nThreads = runtime.NumCPU()
	}
	msg := takeCError(C.ggo_ggml_graph_compute_with_ctx(cc, c, C.int(nThreads)))
	return computeResult(op, c, msg)
}

// computeResult turns the outcome of a graph computation into an error: the C library's message
// (msg, "" on success) and any panic of a Go custom op of the graph (custom.go).
func computeResult(op string, g *C.struct_ggml_cgraph, msg string) error {
	perr := customPanicError(op, g)
	switch {
	case msg != "" && perr != nil:
		return &Error{Op: op, Msg: msg + "; " + perr.(*Error).Msg, Err: perr.(*Error).Err}
	case msg != "":
		return &Error{Op: op, Msg: msg}
	}
	return perr
}
