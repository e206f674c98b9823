//go:build cgo

package ggml

/*
#include "ggml_go.h"

static ggo_pres ggo_ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts, int n, size_t graph_size) {
    GGO_PCALL(ggml_backend_sched_new(backends, bufts, n, graph_size));
}
static char * ggo_ggml_backend_sched_init_measure(ggml_backend_sched_t s, struct ggml_cgraph * g) {
    GGO_VCALL(ggml_backend_sched_init_measure(s, g));
}
static ggo_ires ggo_ggml_x_backend_sched_graph_compute(ggml_backend_sched_t s, struct ggml_cgraph * g) {
    GGO_ICALL(ggml_x_backend_sched_graph_compute(s, g));
}
static char * ggo_ggml_backend_sched_set_node_backend(ggml_backend_sched_t s, struct ggml_tensor * t, ggml_backend_t b) {
    GGO_VCALL(ggml_backend_sched_set_node_backend(s, t, b));
}
static ggo_pres ggo_ggml_backend_sched_get_tallocr(ggml_backend_sched_t s, ggml_backend_t b) {
    GGO_PCALL(ggml_backend_sched_get_tallocr(s, b));
}
static ggo_pres ggo_ggml_backend_sched_get_buffer(ggml_backend_sched_t s, ggml_backend_t b) {
    GGO_PCALL(ggml_backend_sched_get_buffer(s, b));
}
*/
import "C"

import (
	"fmt"
)

// Scheduler splits graphs between several backends (ggml_backend_sched_t): each node runs on
// one backend, chosen by priority (the order of the backends), by where its memory or its
// weights live (buffers with usage BufferUsageWeights pin the nodes using them) and by what
// each backend supports; inputs living elsewhere are copied at the start of each split. The
// scheduler owns one buffer per backend for the intermediate tensors, sized by InitMeasure (or
// by the first Compute).
//
// A Scheduler must be used by one goroutine at a time. Its backends and buffer types must stay
// open while it is.
type Scheduler struct {
	c        C.ggml_backend_sched_t
	ref      *nativeRef
	backends []*Backend
	bufts    []*BufferType
}

// NewScheduler creates a scheduler over backends, in order of priority (ggml_backend_sched_new).
// bufferTypes gives each backend's buffer type for the scheduler's buffers: nil, or a nil
// element, selects the backend's default buffer type. graphSize is the largest number of nodes
// of the graphs it will compute (<= 0: DefaultGraphSize).
func NewScheduler(backends []*Backend, bufferTypes []*BufferType, graphSize int) (*Scheduler, error) {
	const op = "NewScheduler"
	if len(backends) == 0 {
		return nil, &Error{Op: op, Msg: "no backends"}
	}
	if bufferTypes != nil && len(bufferTypes) != len(backends) {
		return nil, &Error{Op: op, Msg: fmt.Sprintf("%d buffer types for %d backends", len(bufferTypes), len(backends))}
	}
	if graphSize <= 0 {
		graphSize = DefaultGraphSize
	}
	cb := make([]C.ggml_backend_t, len(backends))
	ct := make([]C.ggml_backend_buffer_type_t, len(backends))
	bts := make([]*BufferType, len(backends))
	for i, b := range backends {
		cb[i] = b.cptr(op)
		bt := (*BufferType)(nil)
		if bufferTypes != nil {
			bt = bufferTypes[i]
		}
		if bt == nil {
			bt = b.DefaultBufferType()
		}
		ct[i] = bt.cptr(op)
		bts[i] = bt
	}
	r := C.ggo_ggml_backend_sched_new(&cb[0], &ct[0], C.int(len(backends)), C.size_t(graphSize))
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "ggml_backend_sched_new failed"
		}
		return nil, &Error{Op: op, Msg: msg}
	}
	c := C.ggml_backend_sched_t(r.p)
	s := &Scheduler{c: c, backends: append([]*Backend(nil), backends...), bufts: bts}
	// the closure keeps the backends and buffer types reachable until the scheduler is freed
	keep := []any{s.backends, s.bufts}
	backendPtrs := make([]C.ggml_backend_t, len(backends))
	for i, b := range backends {
		backendPtrs[i] = b.c
	}
	s.ref = newNativeRef(s, "scheduler", func() {
		// the scheduler frees its per-backend buffers: forget the tensors it placed in them
		for _, b := range backendPtrs {
			detachBuffer(C.ggml_backend_sched_get_buffer(c, b))
		}
		C.ggml_backend_sched_free(c)
		_ = keep
	})
	return s, nil
}

// cptr returns the C scheduler, panicking with a *Error naming op when s is nil or closed.
func (s *Scheduler) cptr(op string) C.ggml_backend_sched_t {
	if s == nil || s.c == nil {
		panic(&Error{Op: op, Msg: "nil *Scheduler"})
	}
	if s.ref.released() {
		panic(&Error{Op: op, Msg: "scheduler used after Close", Err: ErrClosed})
	}
	return s.c
}

// Close frees the scheduler and its buffers (ggml_backend_sched_free). It is idempotent and
// returns nil. Tensors the scheduler placed must not be used afterwards.
func (s *Scheduler) Close() error {
	if s != nil {
		s.ref.release()
	}
	return nil
}

// Backends returns the scheduler's backends in priority order.
func (s *Scheduler) Backends() []*Backend {
	s.cptr("Scheduler.Backends")
	return append([]*Backend(nil), s.backends...)
}

// InitMeasure splits g and sizes the scheduler's buffers for it, then allocates them
// (ggml_backend_sched_init_measure). Call it once, with the largest graph the scheduler will
// compute; Compute does it with its graph when it was not done.
func (s *Scheduler) InitMeasure(g *Graph) error {
	const op = "Scheduler.InitMeasure"
	if msg := takeCError(C.ggo_ggml_backend_sched_init_measure(s.cptr(op), g.cptr(op))); msg != "" {
		return &Error{Op: op, Msg: msg}
	}
	return nil
}

// Compute splits g between the backends, places its intermediate tensors in the scheduler's
// buffers, copies inputs between backends and computes every split
// (ggml_x_backend_sched_graph_compute). The graph is left as built and can be computed again.
// A failed backend compute, exceeded scheduler limits or a panicking Go custom op is returned
// as a *Error.
func (s *Scheduler) Compute(g *Graph) error {
	const op = "Scheduler.Compute"
	c := s.cptr(op)
	gc := g.cptr(op)
	r := C.ggo_ggml_x_backend_sched_graph_compute(c, gc)
	msg := takeCError(r.err)
	if err := customPanicError(op, gc); err != nil {
		return err
	}
	if r.v == 0 {
		if msg == "" {
			msg = "graph computation failed"
		}
		return &Error{Op: op, Msg: msg}
	}
	return nil
}

// Reset forgets the node assignments and the placements of the last graph
// (ggml_backend_sched_reset): call it before allocating inputs with Allocator.
func (s *Scheduler) Reset() {
	C.ggml_backend_sched_reset(s.cptr("Scheduler.Reset"))
}

// NumSplits returns the number of splits of the last graph (ggml_backend_sched_get_n_splits).
func (s *Scheduler) NumSplits() int {
	return int(C.ggml_backend_sched_get_n_splits(s.cptr("Scheduler.NumSplits")))
}

// SetNodeBackend assigns node to backend b, which must be one of the scheduler's, for the next
// Compute (ggml_backend_sched_set_node_backend). It panics with a *Error otherwise.
func (s *Scheduler) SetNodeBackend(node *Tensor, b *Backend) {
	const op = "Scheduler.SetNodeBackend"
	if msg := takeCError(C.ggo_ggml_backend_sched_set_node_backend(s.cptr(op), node.cptr(op), b.cptr(op))); msg != "" {
		panic(&Error{Op: op, Shapes: node.describe(), Msg: msg})
	}
}

// NodeBackend returns the backend node was assigned to by the last split (or by
// SetNodeBackend), or nil (ggml_backend_sched_get_node_backend).
func (s *Scheduler) NodeBackend(node *Tensor) *Backend {
	const op = "Scheduler.NodeBackend"
	cb := C.ggml_backend_sched_get_node_backend(s.cptr(op), node.cptr(op))
	return s.backendOf(cb)
}

// backendOf returns the scheduler's *Backend for a C backend (nil for nil).
func (s *Scheduler) backendOf(cb C.ggml_backend_t) *Backend {
	if cb == nil {
		return nil
	}
	for _, b := range s.backends {
		if b.c == cb {
			return b
		}
	}
	return borrowedBackend(cb)
}

func (s *Scheduler) backendIndex(op string, b *Backend) C.ggml_backend_t {
	cb := b.cptr(op)
	for _, x := range s.backends {
		if x.c == cb {
			return cb
		}
	}
	panic(&Error{Op: op, Msg: fmt.Sprintf("backend %s is not one of the scheduler's", b.Name())})
}

// Allocator returns the scheduler's tensor allocator for backend b
// (ggml_backend_sched_get_tallocr), owned by the scheduler: after Reset, use it to place input
// tensors in the backend's buffer. It panics with a *Error when b is not one of the
// scheduler's.
func (s *Scheduler) Allocator(b *Backend) *TensorAllocator {
	const op = "Scheduler.Allocator"
	r := C.ggo_ggml_backend_sched_get_tallocr(s.cptr(op), s.backendIndex(op, b))
	if msg := takeCError(r.err); msg != "" || r.p == nil {
		panic(&Error{Op: op, Msg: msg})
	}
	return borrowedTensorAllocator(C.ggml_tallocr_t(r.p))
}

// Buffer returns the scheduler's buffer for backend b (ggml_backend_sched_get_buffer), owned
// by the scheduler, or nil before the buffers are allocated (InitMeasure or Compute).
func (s *Scheduler) Buffer(b *Backend) *Buffer {
	const op = "Scheduler.Buffer"
	r := C.ggo_ggml_backend_sched_get_buffer(s.cptr(op), s.backendIndex(op, b))
	if msg := takeCError(r.err); msg != "" {
		panic(&Error{Op: op, Msg: msg})
	}
	return borrowedBuffer(C.ggml_backend_buffer_t(r.p))
}
