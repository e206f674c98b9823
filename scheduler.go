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
static char * ggo_ggml_x_backend_sched_reset_measure(ggml_backend_sched_t s) {
    GGO_VCALL(ggml_x_backend_sched_reset_measure(s));
}
static ggo_pres ggo_ggml_backend_sched_get_tallocr(ggml_backend_sched_t s, ggml_backend_t b) {
    GGO_PCALL(ggml_backend_sched_get_tallocr(s, b));
}
static ggo_pres ggo_ggml_backend_sched_get_buffer(ggml_backend_sched_t s, ggml_backend_t b) {
    GGO_PCALL(ggml_backend_sched_get_buffer(s, b));
}
// t loses its placement (data and buffer cleared) when it lives in one of the n buffers bufs,
// whose placements were reset, so that it can be placed again
static void ggo_unplace_tensor(struct ggml_tensor * t, ggml_backend_buffer_t * bufs, int n) {
    for (int i = 0; i < n; i++) {
        if (t->buffer != NULL && t->buffer == bufs[i]) {
            t->data = NULL;
            t->buffer = NULL;
            return;
        }
    }
}
// the same for every leaf and node of g
static void ggo_unplace_graph(struct ggml_cgraph * g, ggml_backend_buffer_t * bufs, int n) {
    for (int i = 0; i < g->n_leafs; i++) {
        ggo_unplace_tensor(g->leafs[i], bufs, n);
    }
    for (int i = 0; i < g->n_nodes; i++) {
        ggo_unplace_tensor(g->nodes[i], bufs, n);
    }
}
*/
import "C"

import (
	"fmt"
	"slices"
)

// Scheduler splits graphs between several backends (ggml_backend_sched_t): each node runs on
// one backend, chosen by priority (the order of the backends), by where its memory or its
// weights live (buffers with usage BufferUsageWeights pin the nodes using them), by
// SetNodeBackend, and by what each backend supports; inputs living elsewhere are copied at the
// start of each split. The scheduler owns one buffer per backend for the intermediate tensors.
//
// Life cycle:
//
//   - NewScheduler creates it, unmeasured: it has no buffers yet.
//   - SetNodeBackend assigns nodes to backends. Assignments persist until changed (or removed
//     with a nil backend, or ClearNodeBackends) and every later Compute honours them, whatever
//     the order of the calls: before or after the first Compute, before or after Reset.
//   - The first Compute (or InitMeasure) measures: it splits the graph with the assignments in
//     force and sizes and allocates the buffers. When the assignments change after that, the
//     next Compute measures again by itself (the old buffers are freed, so tensors placed in
//     them with Allocator must be placed again).
//   - Compute splits the graph, places its intermediate tensors, copies the inputs between
//     backends and computes every split. It may be called any number of times. The split of
//     a graph is kept and reused while the next graphs computed have the same structure (the
//     same nodes, ops, shapes, buffers and assignments), so a graph recomputed with new input
//     data, as a decode loop does, costs little more than the backends' compute; the cost
//     follows the graph's size, not graphSize.
//   - Reset (optional) forgets the placements of the last graph so that inputs can be placed
//     in the scheduler's buffers with Allocator before the next Compute (the tensors placed in
//     those buffers, by Allocator or by Compute, can be placed again); assignments stay.
//   - Close frees the scheduler and its buffers.
//
// A Scheduler must be used by one goroutine at a time: a call that overlaps another one on the
// same scheduler fails with an error wrapping ErrBusy (or panics with it, for methods without
// an error result) instead of corrupting the scheduler. Its backends and buffer types must stay
// open while it is.
type Scheduler struct {
	c        C.ggml_backend_sched_t
	ref      *nativeRef
	backends []*Backend
	bufts    []*BufferType
	busy     inUse

	assign  map[*Tensor]*Backend // SetNodeBackend's assignments
	order   []*Tensor            // the assigned nodes, in the order of their first assignment
	changed bool                 // assignments changed since the last measure
	isReset bool                 // the C scheduler holds no placements of a previous graph
	last    *Graph               // the last graph measured or computed (Reset unplaces its tensors)
	placed  []*Tensor            // the tensors placed with Allocator since the last Reset
}

// NewScheduler creates a scheduler over backends, in order of priority (ggml_backend_sched_new).
// bufferTypes gives each backend's buffer type for the scheduler's buffers: nil, or a nil
// element, selects the backend's default buffer type. graphSize is the largest number of nodes
// of the graphs it will compute (<= 0: DefaultGraphSize).
func NewScheduler(backends []*Backend, bufferTypes []*BufferType, graphSize int) (_ *Scheduler, err error) {
	defer errOnClosed(&err)
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
	s := &Scheduler{c: c, backends: append([]*Backend(nil), backends...), bufts: bts,
		assign: map[*Tensor]*Backend{}, isReset: true}
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

// Close frees the scheduler and its buffers (ggml_backend_sched_free). It is idempotent; it
// returns an error wrapping ErrBusy, and frees nothing, while another goroutine is inside one of
// the scheduler's methods. Tensors the scheduler placed must not be used afterwards.
func (s *Scheduler) Close() error {
	if s == nil {
		return nil
	}
	if err := s.busy.enter("Scheduler.Close", "scheduler"); err != nil {
		return err
	}
	defer s.busy.leave()
	s.ref.release()
	return nil
}

// Backends returns the scheduler's backends in priority order.
func (s *Scheduler) Backends() []*Backend {
	s.cptr("Scheduler.Backends")
	return append([]*Backend(nil), s.backends...)
}

// enter checks s and marks it in use by op; the caller defers s.busy.leave().
func (s *Scheduler) enter(op string) (C.ggml_backend_sched_t, error) {
	if s == nil || s.c == nil {
		return nil, &Error{Op: op, Msg: "nil *Scheduler"}
	}
	if err := s.busy.enter(op, "scheduler"); err != nil {
		return nil, err
	}
	if s.ref.released() {
		s.busy.leave()
		return nil, &Error{Op: op, Msg: "scheduler used after Close", Err: ErrClosed}
	}
	return s.c, nil
}

// apply hands the assignments to the C scheduler (which keeps them until its next reset).
// Nodes whose context was closed are forgotten.
func (s *Scheduler) apply(op string, c C.ggml_backend_sched_t) error {
	kept := s.order[:0]
	for _, t := range s.order {
		b, ok := s.assign[t]
		if !ok {
			continue
		}
		if t.ctx != nil && t.ctx.dead.Load() {
			delete(s.assign, t)
			continue
		}
		kept = append(kept, t)
		if msg := takeCError(C.ggo_ggml_backend_sched_set_node_backend(c, t.c, b.c)); msg != "" {
			return &Error{Op: op, Shapes: t.describe(), Msg: msg}
		}
	}
	clear(s.order[len(kept):])
	s.order = kept
	return nil
}

// detachBuffers makes the tensors placed in the scheduler's buffers forget them (before the
// buffers are freed).
func (s *Scheduler) detachBuffers(c C.ggml_backend_sched_t) {
	for _, b := range s.backends {
		detachBuffer(C.ggml_backend_sched_get_buffer(c, b.c))
	}
}

// measure (re)sizes the scheduler's buffers for g with the assignments in force.
func (s *Scheduler) measure(op string, c C.ggml_backend_sched_t, gc *C.struct_ggml_cgraph) error {
	if bool(C.ggml_x_backend_sched_is_measured(c)) {
		s.detachBuffers(c)
		if msg := takeCError(C.ggo_ggml_x_backend_sched_reset_measure(c)); msg != "" {
			return &Error{Op: op, Msg: msg}
		}
		s.isReset = true
	}
	if !s.isReset {
		C.ggml_backend_sched_reset(c)
		s.isReset = true
	}
	if err := s.apply(op, c); err != nil {
		return err
	}
	msg := takeCError(C.ggo_ggml_backend_sched_init_measure(c, gc))
	// the measure ends with a reset of the C scheduler: the assignments go back in
	if err := s.apply(op, c); err != nil {
		return err
	}
	if msg != "" {
		return &Error{Op: op, Msg: msg}
	}
	s.changed = false
	return nil
}

// InitMeasure splits g with the assignments in force and sizes and allocates the scheduler's
// buffers for it (ggml_backend_sched_init_measure). Optional: Compute measures by itself when
// needed. Calling it again measures again (the old buffers are freed, and tensors placed in
// them with Allocator lose their memory); use the largest graph the scheduler will compute.
func (s *Scheduler) InitMeasure(g *Graph) error {
	const op = "Scheduler.InitMeasure"
	c, err := s.enter(op)
	if err != nil {
		return err
	}
	defer s.busy.leave()
	gc, err := g.cptrErr(op)
	if err != nil {
		return err
	}
	if bool(C.ggml_x_backend_sched_is_measured(c)) {
		s.changed = true // measure again
	}
	s.last = g
	return s.measure(op, c, gc)
}

// Compute splits g between the backends, places its intermediate tensors in the scheduler's
// buffers, copies inputs between backends and computes every split
// (ggml_x_backend_sched_graph_compute), honouring the SetNodeBackend assignments. The first
// call, and the first after the assignments changed, measures first (see the type's life
// cycle). The graph is left as built and can be computed again. A failed backend compute,
// exceeded scheduler limits or a panicking Go custom op is returned as a *Error; so is a call
// that overlaps another one on the same scheduler (wrapping ErrBusy) or a closed scheduler
// (wrapping ErrClosed).
func (s *Scheduler) Compute(g *Graph) error {
	return s.compute("Scheduler.Compute", g, nil)
}

func (s *Scheduler) compute(op string, g *Graph, cancel *cancelFlag) error {
	c, err := s.enter(op)
	if err != nil {
		return err
	}
	defer s.busy.leave()
	// the scheduler computes on its backends: they must not be computing elsewhere meanwhile
	var entered []*Backend
	defer func() {
		for _, b := range entered {
			b.busy.leave()
		}
	}()
	for _, b := range s.backends {
		if slices.Contains(entered, b) {
			continue
		}
		if _, err := b.enter(op); err != nil {
			return err
		}
		entered = append(entered, b)
	}
	gc, err := g.cptrErr(op)
	if err != nil {
		return err
	}
	if s.changed || !bool(C.ggml_x_backend_sched_is_measured(c)) {
		if err := s.measure(op, c, gc); err != nil {
			return err
		}
	}
	if !s.isReset {
		C.ggml_backend_sched_reset(c)
		s.isReset = true
		if err := s.apply(op, c); err != nil {
			return err
		}
	}
	if cancel != nil {
		s.setAbort(c, cancel)
		defer s.setAbort(c, nil)
	}
	s.isReset = false
	s.last = g
	r := C.ggo_ggml_x_backend_sched_graph_compute(c, gc)
	msg := takeCError(r.err)
	if err := customPanicError(op, gc); err != nil {
		return err
	}
	if r.v == 0 {
		if cancel != nil && cancel.err() != nil {
			return &Error{Op: op, Msg: "cancelled: " + cancel.err().Error(), Err: cancel.err()}
		}
		if msg == "" {
			msg = "graph computation failed"
		}
		return &Error{Op: op, Msg: msg}
	}
	return nil
}

// Reset forgets the placements of the last graph (ggml_backend_sched_reset), so that inputs
// can be placed in the scheduler's buffers with Allocator before the next Compute. The tensors
// placed in the scheduler's buffers, with Allocator since the last Reset or by the last
// Compute or InitMeasure, lose their memory and can be placed again: the same graph can be
// reset, have its inputs placed and be computed any number of times. The SetNodeBackend
// assignments persist.
func (s *Scheduler) Reset() {
	const op = "Scheduler.Reset"
	c, err := s.enter(op)
	if err != nil {
		panic(err)
	}
	defer s.busy.leave()
	C.ggml_backend_sched_reset(c)
	s.isReset = true
	if bool(C.ggml_x_backend_sched_is_measured(c)) {
		s.unplaceAll(c)
	}
	if err := s.apply(op, c); err != nil {
		panic(err)
	}
}

// unplaceAll makes the tensors placed in the scheduler's buffers unplaced (no data, no
// buffer), as they were before they were placed: those of the last graph measured or computed
// and those placed with Allocator since the last Reset (tensors of closed contexts are skipped).
func (s *Scheduler) unplaceAll(c C.ggml_backend_sched_t) {
	bufs := make([]C.ggml_backend_buffer_t, 0, len(s.backends))
	for _, b := range s.backends {
		if buf := C.ggml_backend_sched_get_buffer(c, b.c); buf != nil {
			bufs = append(bufs, buf)
		}
	}
	if len(bufs) > 0 {
		if s.last != nil && (s.last.ctx == nil || !s.last.ctx.dead.Load()) {
			C.ggo_unplace_graph(s.last.c, &bufs[0], C.int(len(bufs)))
		}
		for _, t := range s.placed {
			if t.ctx == nil || !t.ctx.dead.Load() {
				C.ggo_unplace_tensor(t.c, &bufs[0], C.int(len(bufs)))
			}
		}
	}
	clear(s.placed)
	s.placed = s.placed[:0]
	s.last = nil
}

// NumSplits returns the number of splits of the last graph (ggml_backend_sched_get_n_splits).
func (s *Scheduler) NumSplits() int {
	return int(C.ggml_backend_sched_get_n_splits(s.cptr("Scheduler.NumSplits")))
}

// SetNodeBackend assigns node to backend b, which must be one of the scheduler's, for every
// later Compute until it is changed; a nil b removes the assignment. Assignments may be made
// before or after the first Compute and before or after Reset (see the type's life cycle). It
// panics with a *Error when b is not one of the scheduler's, or when node is nil or its
// context closed.
func (s *Scheduler) SetNodeBackend(node *Tensor, b *Backend) {
	const op = "Scheduler.SetNodeBackend"
	node.cptr(op)
	if b != nil {
		s.backendIndex(op, b)
	}
	_, err := s.enter(op)
	if err != nil {
		panic(err)
	}
	defer s.busy.leave()
	old, had := s.assign[node]
	switch {
	case b == nil && had:
		delete(s.assign, node)
		s.changed = true
	case b != nil && (!had || old.c != b.c):
		if !had {
			s.order = append(s.order, node)
		}
		s.assign[node] = b
		s.changed = true
	}
}

// ClearNodeBackends removes every SetNodeBackend assignment.
func (s *Scheduler) ClearNodeBackends() {
	_, err := s.enter("Scheduler.ClearNodeBackends")
	if err != nil {
		panic(err)
	}
	defer s.busy.leave()
	if len(s.assign) > 0 {
		s.changed = true
	}
	clear(s.assign)
	s.order = s.order[:0]
}

// NodeBackend returns the backend node is assigned to by SetNodeBackend, else the one the last
// split chose for it (ggml_backend_sched_get_node_backend; the split made by the last Compute
// or InitMeasure, also after Reset), or nil when that split did not see node.
func (s *Scheduler) NodeBackend(node *Tensor) *Backend {
	const op = "Scheduler.NodeBackend"
	nc := node.cptr(op)
	if b, ok := s.assign[node]; ok {
		return b
	}
	c := s.cptr(op)
	if cb := C.ggml_backend_sched_get_node_backend(c, nc); cb != nil {
		return s.backendOf(cb)
	}
	// after InitMeasure or Reset, the C scheduler forgets the split's choices, which it keeps
	// for this call
	return s.backendOf(C.ggml_x_backend_sched_get_split_backend(c, nc))
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
	a := borrowedTensorAllocator(C.ggml_tallocr_t(r.p))
	a.placed = func(t *Tensor) { s.placed = append(s.placed, t) }
	return a
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
