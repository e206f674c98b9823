//go:build cgo

package ggml

/*
#include "ggml_go.h"

static ggo_pres ggo_ggml_backend_cpu_init(void) { GGO_PCALL(ggml_backend_cpu_init()); }
static ggo_pres ggo_ggml_backend_reg_init_backend_from_str(const char * s) { GGO_PCALL(ggml_backend_reg_init_backend_from_str(s)); }
static ggo_pres ggo_ggml_backend_alloc_buffer(ggml_backend_t b, size_t size) { GGO_PCALL(ggml_backend_alloc_buffer(b, size)); }
static ggo_ires ggo_ggml_backend_graph_compute(ggml_backend_t b, struct ggml_cgraph * g) { GGO_ICALL(ggml_backend_graph_compute(b, g)); }
static char * ggo_ggml_backend_cpu_set_n_threads(ggml_backend_t b, int n) { GGO_VCALL(ggml_backend_cpu_set_n_threads(b, n)); }
static ggo_pres ggo_ggml_backend_graph_plan_create(ggml_backend_t b, struct ggml_cgraph * g) { GGO_PCALL(ggml_backend_graph_plan_create(b, g)); }
static char * ggo_ggml_backend_graph_plan_compute(ggml_backend_t b, ggml_backend_graph_plan_t p) { GGO_VCALL(ggml_backend_graph_plan_compute(b, p)); }
static char * ggo_ggml_backend_tensor_copy(struct ggml_tensor * src, struct ggml_tensor * dst) { GGO_VCALL(ggml_backend_tensor_copy(src, dst)); }
static char * ggo_ggml_backend_tensor_copy_async(ggml_backend_t b, struct ggml_tensor * src, struct ggml_tensor * dst) {
    GGO_VCALL(ggml_backend_tensor_copy_async(b, src, dst));
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Backend is a device that computes graphs (ggml_backend_t): the CPU, or any backend of the
// registry. A Backend must be used by one goroutine at a time; distinct backends are
// independent. A compute (or SetThreads, NewPlan, Close) that overlaps another one on the same
// *Backend, directly or through a Scheduler or GraphPlan using it, fails with an error wrapping
// ErrBusy instead of corrupting the backend.
type Backend struct {
	c    C.ggml_backend_t
	ref  *nativeRef // nil for a borrowed backend (owned elsewhere, e.g. by a scheduler)
	busy inUse

	plansMu sync.Mutex
	plans   map[*nativeRef]struct{} // the live graph plans, freed by Close before the backend
}

// closePlans frees the backend's live graph plans (they need the backend to be freed).
func (b *Backend) closePlans() {
	b.plansMu.Lock()
	refs := make([]*nativeRef, 0, len(b.plans))
	for r := range b.plans {
		refs = append(refs, r)
	}
	b.plans = nil
	b.plansMu.Unlock()
	for _, r := range refs {
		r.release()
	}
}

// enter checks b and marks it in use by op (for methods that return an error); the caller
// defers b.busy.leave().
func (b *Backend) enter(op string) (C.ggml_backend_t, error) {
	if b == nil || b.c == nil {
		return nil, &Error{Op: op, Msg: "nil *Backend"}
	}
	if err := b.busy.enter(op, "backend"); err != nil {
		return nil, err
	}
	if b.ref != nil && b.ref.released() {
		b.busy.leave()
		return nil, &Error{Op: op, Msg: "backend used after Close", Err: ErrClosed}
	}
	return b.c, nil
}

// cptr returns the C backend, panicking with a *Error naming op when b is nil or closed.
func (b *Backend) cptr(op string) C.ggml_backend_t {
	if b == nil || b.c == nil {
		panic(&Error{Op: op, Msg: "nil *Backend"})
	}
	if b.ref != nil && b.ref.released() {
		panic(&Error{Op: op, Msg: "backend used after Close", Err: ErrClosed})
	}
	return b.c
}

// newOwnedBackend wraps a backend this package frees.
func newOwnedBackend(c C.ggml_backend_t) *Backend {
	b := &Backend{c: c}
	b.ref = newNativeRef(b, "backend", func() { C.ggml_backend_free(c) })
	return b
}

// borrowedBackend wraps a backend owned by someone else; Close does nothing.
func borrowedBackend(c C.ggml_backend_t) *Backend {
	if c == nil {
		return nil
	}
	return &Backend{c: c}
}

// CPUOption configures NewCPU.
type CPUOption func(*cpuOptions)

type cpuOptions struct {
	threads int
}

// WithThreads sets the number of worker threads of a CPU backend (default runtime.NumCPU()).
func WithThreads(n int) CPUOption {
	return func(o *cpuOptions) { o.threads = n }
}

// NewCPU creates a CPU backend (ggml_backend_cpu_init) with a persistent pool of worker
// threads.
func NewCPU(opts ...CPUOption) (*Backend, error) {
	o := cpuOptions{threads: runtime.NumCPU()}
	for _, opt := range opts {
		opt(&o)
	}
	if o.threads <= 0 {
		return nil, &Error{Op: "NewCPU", Msg: fmt.Sprintf("thread count must be positive, got %d", o.threads)}
	}
	r := C.ggo_ggml_backend_cpu_init()
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "ggml_backend_cpu_init failed"
		}
		return nil, &Error{Op: "NewCPU", Msg: msg}
	}
	b := newOwnedBackend(C.ggml_backend_t(r.p))
	if err := b.SetThreads(o.threads); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// InitBackend creates a backend of the registry from "name" or "name:params"
// (ggml_backend_reg_init_backend_from_str), e.g. "CPU" or "CPU:threads=2".
func InitBackend(spec string) (*Backend, error) {
	cs := C.CString(spec)
	defer C.free(unsafe.Pointer(cs))
	r := C.ggo_ggml_backend_reg_init_backend_from_str(cs)
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "backend initialisation failed"
		}
		return nil, &Error{Op: "InitBackend", Shapes: fmt.Sprintf("%q", spec), Msg: msg}
	}
	return newOwnedBackend(C.ggml_backend_t(r.p)), nil
}

// Backends returns the names of the registered backends, in registry order
// (ggml_backend_reg_get_count, ggml_backend_reg_get_name).
func Backends() []string {
	n := int(C.ggml_backend_reg_get_count())
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		out = append(out, C.GoString(C.ggml_backend_reg_get_name(C.size_t(i))))
	}
	return out
}

// BackendIndex returns the registry index of the backend with the given name, or -1
// (ggml_backend_reg_find_by_name).
func BackendIndex(name string) int {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	i := C.ggml_backend_reg_find_by_name(cs)
	if int(i) < 0 || uint64(i) >= uint64(C.ggml_backend_reg_get_count()) {
		return -1
	}
	return int(i)
}

// RegistryBufferType returns the default buffer type of registry entry i
// (ggml_backend_reg_get_default_buffer_type), or nil when i is out of range.
func RegistryBufferType(i int) *BufferType {
	if i < 0 || i >= int(C.ggml_backend_reg_get_count()) {
		return nil
	}
	return borrowedBufferType(C.ggml_backend_reg_get_default_buffer_type(C.size_t(i)))
}

// Close frees the backend (ggml_backend_free). It is idempotent; closing a borrowed backend
// does nothing. While another goroutine computes on the backend it frees nothing and returns an
// error wrapping ErrBusy.
func (b *Backend) Close() error {
	if b == nil {
		return nil
	}
	if err := b.busy.enter("Backend.Close", "backend"); err != nil {
		return err
	}
	defer b.busy.leave()
	if b.ref != nil && !b.ref.released() {
		b.closePlans()
	}
	b.ref.release()
	return nil
}

// Name returns the backend's name (ggml_backend_name), e.g. "CPU".
func (b *Backend) Name() string {
	return C.GoString(C.ggml_backend_name(b.cptr("Backend.Name")))
}

// IsCPU reports whether this is a CPU backend (ggml_backend_is_cpu).
func (b *Backend) IsCPU() bool {
	return bool(C.ggml_backend_is_cpu(b.cptr("Backend.IsCPU")))
}

// SetThreads sets the number of worker threads of a CPU backend
// (ggml_backend_cpu_set_n_threads). It returns an error for other backends or n <= 0.
func (b *Backend) SetThreads(n int) error {
	const op = "Backend.SetThreads"
	c, err := b.enter(op)
	if err != nil {
		return err
	}
	defer b.busy.leave()
	if !bool(C.ggml_backend_is_cpu(c)) {
		return &Error{Op: op, Msg: "not a CPU backend: " + b.Name()}
	}
	if n <= 0 {
		return &Error{Op: op, Msg: fmt.Sprintf("thread count must be positive, got %d", n)}
	}
	if msg := takeCError(C.ggo_ggml_backend_cpu_set_n_threads(c, C.int(n))); msg != "" {
		return &Error{Op: op, Msg: msg}
	}
	return nil
}

// DefaultBufferType returns the backend's default buffer type
// (ggml_backend_get_default_buffer_type).
func (b *Backend) DefaultBufferType() *BufferType {
	return borrowedBufferType(C.ggml_backend_get_default_buffer_type(b.cptr("Backend.DefaultBufferType")))
}

// Alignment returns the alignment of the backend's default buffers (ggml_backend_get_alignment).
func (b *Backend) Alignment() uint64 {
	return uint64(C.ggml_backend_get_alignment(b.cptr("Backend.Alignment")))
}

// AllocBuffer allocates a buffer of the default buffer type (ggml_backend_alloc_buffer).
func (b *Backend) AllocBuffer(size uint64) (_ *Buffer, err error) {
	defer errOnClosed(&err)
	const op = "Backend.AllocBuffer"
	c := b.cptr(op)
	r := C.ggo_ggml_backend_alloc_buffer(c, C.size_t(size))
	return bufferResult(op, size, r)
}

// SupportsOp reports whether the backend can compute the node t (ggml_backend_supports_op).
func (b *Backend) SupportsOp(t *Tensor) bool {
	const op = "Backend.SupportsOp"
	return bool(C.ggml_backend_supports_op(b.cptr(op), t.cptr(op)))
}

// Compute computes the graph on the backend (ggml_backend_graph_compute). Every tensor of the
// graph must have memory the backend can use. Failures are returned as a *Error, as are a
// closed backend or graph (wrapping ErrClosed) and a call overlapping another compute on the
// backend (wrapping ErrBusy).
func (b *Backend) Compute(g *Graph) error {
	return b.compute("Backend.Compute", g, nil)
}

func (b *Backend) compute(op string, g *Graph, cancel *cancelFlag) error {
	c, err := b.enter(op)
	if err != nil {
		return err
	}
	defer b.busy.leave()
	gc, err := g.cptrErr(op)
	if err != nil {
		return err
	}
	if cancel != nil {
		if err := cancel.err(); err != nil {
			return &Error{Op: op, Msg: "cancelled: " + err.Error(), Err: err}
		}
		if bool(C.ggml_backend_is_cpu(c)) {
			cancel.attachCPU(c)
			defer cancel.detachCPU(c)
		}
	}
	r := C.ggo_ggml_backend_graph_compute(c, gc)
	msg := takeCError(r.err)
	if r.v == 0 && cancel != nil && cancel.err() != nil {
		customPanicError(op, gc) // clear any recorded panic state
		return &Error{Op: op, Msg: "cancelled: " + cancel.err().Error(), Err: cancel.err()}
	}
	if r.v == 0 && msg == "" {
		msg = "graph computation failed"
	}
	return computeResult(op, gc, msg)
}

// Synchronize waits for the backend's pending asynchronous work (ggml_backend_synchronize).
func (b *Backend) Synchronize() {
	C.ggml_backend_synchronize(b.cptr("Backend.Synchronize"))
}

// CopyTensorAsync copies src into dst (same layout) on the backend's queue, falling back to a
// synchronous copy (ggml_backend_tensor_copy_async). Call Synchronize before reading dst.
func (b *Backend) CopyTensorAsync(src, dst *Tensor) (err error) {
	defer errOnClosed(&err)
	const op = "Backend.CopyTensorAsync"
	c := b.cptr(op)
	if msg := takeCError(C.ggo_ggml_backend_tensor_copy_async(c, src.cptr(op), dst.cptr(op))); msg != "" {
		return &Error{Op: op, Shapes: describeOperands([]string{"src", "dst"}, []*Tensor{src, dst}), Msg: msg}
	}
	return nil
}

// CopyTensor copies the data of src into dst, which must have the same layout; either may live
// in any backend buffer (ggml_backend_tensor_copy).
func CopyTensor(src, dst *Tensor) (err error) {
	defer errOnClosed(&err)
	const op = "CopyTensor"
	if msg := takeCError(C.ggo_ggml_backend_tensor_copy(src.cptr(op), dst.cptr(op))); msg != "" {
		return &Error{Op: op, Shapes: describeOperands([]string{"src", "dst"}, []*Tensor{src, dst}), Msg: msg}
	}
	return nil
}

// GraphPlan is a graph prepared for repeated computation on one backend
// (ggml_backend_graph_plan_t).
//
// A GraphPlan must be used by one goroutine at a time: a Compute overlapping another one on the
// plan, or on its backend, fails with an error wrapping ErrBusy.
type GraphPlan struct {
	c       C.ggml_backend_graph_plan_t
	backend *Backend
	graph   *Graph
	ref     *nativeRef
	busy    inUse
}

// NewPlan prepares g for computation on the backend (ggml_backend_graph_plan_create). The plan
// refers to g: keep g's context open while the plan is used.
func (b *Backend) NewPlan(g *Graph) (*GraphPlan, error) {
	const op = "Backend.NewPlan"
	c, err := b.enter(op)
	if err != nil {
		return nil, err
	}
	defer b.busy.leave()
	gc, err := g.cptrErr(op)
	if err != nil {
		return nil, err
	}
	r := C.ggo_ggml_backend_graph_plan_create(c, gc)
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "this backend does not support graph plans"
		}
		return nil, &Error{Op: op, Msg: msg}
	}
	plan := C.ggml_backend_graph_plan_t(r.p)
	p := &GraphPlan{c: plan, backend: b, graph: g}
	// the closure holds b, so the backend outlives the plan's safety-net cleanup
	var ref *nativeRef
	ref = newNativeRef(p, "graph plan", func() {
		b.plansMu.Lock()
		delete(b.plans, ref)
		b.plansMu.Unlock()
		if !b.ref.released() {
			C.ggml_backend_graph_plan_free(b.c, plan)
		}
	})
	p.ref = ref
	if b.ref != nil {
		b.plansMu.Lock()
		if b.plans == nil {
			b.plans = map[*nativeRef]struct{}{}
		}
		b.plans[ref] = struct{}{}
		b.plansMu.Unlock()
	}
	return p, nil
}

// Compute runs the plan (ggml_backend_graph_plan_compute). A closed plan, backend or graph is
// reported as an error wrapping ErrClosed.
func (p *GraphPlan) Compute() error {
	const op = "GraphPlan.Compute"
	if p == nil {
		return &Error{Op: op, Msg: "nil *GraphPlan"}
	}
	if err := p.busy.enter(op, "graph plan"); err != nil {
		return err
	}
	defer p.busy.leave()
	if p.ref.released() {
		return &Error{Op: op, Msg: "plan used after Close", Err: ErrClosed}
	}
	c, err := p.backend.enter(op)
	if err != nil {
		return err
	}
	defer p.backend.busy.leave()
	gc, err := p.graph.cptrErr(op)
	if err != nil {
		return err
	}
	msg := takeCError(C.ggo_ggml_backend_graph_plan_compute(c, p.c))
	return computeResult(op, gc, msg)
}

// Close frees the plan (ggml_backend_graph_plan_free); idempotent. Close plans before their
// backend. While another goroutine computes the plan it frees nothing and returns an error
// wrapping ErrBusy.
func (p *GraphPlan) Close() error {
	if p == nil {
		return nil
	}
	if err := p.busy.enter("GraphPlan.Close", "graph plan"); err != nil {
		return err
	}
	defer p.busy.leave()
	p.ref.release()
	return nil
}
