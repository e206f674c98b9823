//go:build cgo

package ggml

/*
#include "ggml_go.h"
#include "trampolines.h"

static char * ggo_ggml_backend_graph_copy(ggml_backend_t b, struct ggml_cgraph * g, struct ggml_backend_graph_copy * out) {
    GGO_VCALL(*out = ggml_backend_graph_copy(b, g));
}
static ggo_ires ggo_ggml_backend_compare_graph_backend(ggml_backend_t b1, ggml_backend_t b2, struct ggml_cgraph * g, uintptr_t h) {
    GGO_ICALL(ggml_backend_compare_graph_backend(b1, b2, g, ggml_go_eval_callback_ptr(), (void *) h));
}
*/
import "C"

import (
	"runtime"
)

// GraphCopy is a copy of a graph whose tensors live in a buffer of another backend
// (struct ggml_backend_graph_copy): leaves are copied with their data, nodes are placed so
// that the copy can be computed there.
type GraphCopy struct {
	c      C.struct_ggml_backend_graph_copy
	ref    *nativeRef
	graph  *Graph
	buffer *Buffer
}

// NewGraphCopy copies g (whose tensors must have data) to backend b (ggml_backend_graph_copy).
// Close it when done: its graph, tensors and buffer are freed together.
func NewGraphCopy(b *Backend, g *Graph) (_ *GraphCopy, err error) {
	defer errOnClosed(&err)
	const op = "NewGraphCopy"
	cb := b.cptr(op)
	cg := g.cptr(op)
	var c C.struct_ggml_backend_graph_copy
	msg := takeCError(C.ggo_ggml_backend_graph_copy(cb, cg, &c))
	if c.graph == nil {
		if msg == "" {
			msg = "graph copy failed"
		}
		return nil, &Error{Op: op, Msg: msg}
	}
	allocated := newBorrowedContext(c.ctx_allocated)
	unallocated := newBorrowedContext(c.ctx_unallocated)
	gc := &GraphCopy{c: c, graph: graphFromC(allocated, c.graph), buffer: borrowedBuffer(c.buffer)}
	gc.ref = newNativeRef(gc, "graph copy", func() {
		allocated.invalidate()
		unallocated.invalidate()
		C.ggml_backend_graph_copy_free(c)
	})
	return gc, nil
}

// Graph returns the copied graph (valid until Close).
func (gc *GraphCopy) Graph() *Graph {
	gc.check("GraphCopy.Graph")
	return gc.graph
}

// Buffer returns the buffer holding the copy's tensors (owned by the copy).
func (gc *GraphCopy) Buffer() *Buffer {
	gc.check("GraphCopy.Buffer")
	return gc.buffer
}

func (gc *GraphCopy) check(op string) {
	if gc == nil || gc.ref.released() {
		panic(&Error{Op: op, Msg: "graph copy used after Close", Err: ErrClosed})
	}
}

// Close frees the copy: its buffer, contexts and graph (ggml_backend_graph_copy_free). It is
// idempotent and returns nil.
func (gc *GraphCopy) Close() error {
	if gc != nil {
		gc.ref.release()
	}
	return nil
}

// evalState is the Go state of a CompareBackends call; C holds a handle of it.
type evalState struct {
	fn       func(i int, t1, t2 *Tensor) bool
	panicked string
}

// CompareBackends computes g (allocated for b1) on b1 and, through a graph copy, on b2, one
// node at a time, and calls fn with the index and both results of every node that is not a
// view (ggml_backend_compare_graph_backend); t1 is g's node, t2 its copy (valid during the
// call only). Returning false from fn stops the comparison. It returns an error when the copy
// or a compute fails or fn panics.
func CompareBackends(b1, b2 *Backend, g *Graph, fn func(i int, t1, t2 *Tensor) bool) (err error) {
	defer errOnClosed(&err)
	const op = "CompareBackends"
	c1, c2, cg := b1.cptr(op), b2.cptr(op), g.cptr(op)
	if fn == nil {
		panic(&Error{Op: op, Msg: "nil callback"})
	}
	st := &evalState{fn: fn}
	h := newHandle(st)
	defer deleteHandle(h)
	r := C.ggo_ggml_backend_compare_graph_backend(c1, c2, cg, C.uintptr_t(h))
	msg := takeCError(r.err)
	runtime.KeepAlive(st)
	if st.panicked != "" {
		return &Error{Op: op, Msg: st.panicked}
	}
	if err := customPanicError(op, cg); err != nil {
		return err
	}
	if r.v == 0 {
		if msg == "" {
			msg = "graph copy or compute failed"
		}
		return &Error{Op: op, Msg: msg}
	}
	return nil
}
