//go:build cgo

package ggml

/*
#include "ggml_go.h"
#include "trampolines.h"

static ggo_pres ggo_ggml_map_custom1(struct ggml_context * ctx, struct ggml_tensor * a, int n_tasks, uintptr_t h) {
    GGO_PCALL(ggml_map_custom1(ctx, a, ggml_go_custom1, n_tasks, (void *) h));
}
static ggo_pres ggo_ggml_map_custom1_inplace(struct ggml_context * ctx, struct ggml_tensor * a, int n_tasks, uintptr_t h) {
    GGO_PCALL(ggml_map_custom1_inplace(ctx, a, ggml_go_custom1, n_tasks, (void *) h));
}
static ggo_pres ggo_ggml_map_custom2(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_tasks, uintptr_t h) {
    GGO_PCALL(ggml_map_custom2(ctx, a, b, ggml_go_custom2, n_tasks, (void *) h));
}
static ggo_pres ggo_ggml_map_custom2_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, int n_tasks, uintptr_t h) {
    GGO_PCALL(ggml_map_custom2_inplace(ctx, a, b, ggml_go_custom2, n_tasks, (void *) h));
}
static ggo_pres ggo_ggml_map_custom3(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c, int n_tasks, uintptr_t h) {
    GGO_PCALL(ggml_map_custom3(ctx, a, b, c, ggml_go_custom3, n_tasks, (void *) h));
}
static ggo_pres ggo_ggml_map_custom3_inplace(struct ggml_context * ctx, struct ggml_tensor * a, struct ggml_tensor * b, struct ggml_tensor * c, int n_tasks, uintptr_t h) {
    GGO_PCALL(ggml_map_custom3_inplace(ctx, a, b, c, ggml_go_custom3, n_tasks, (void *) h));
}
static bool ggo_tensor_host_data(const struct ggml_tensor * t) {
    ggml_backend_buffer_t b = t->buffer != NULL ? t->buffer : (t->view_src != NULL ? t->view_src->buffer : NULL);
    return t->data != NULL && (b == NULL || ggml_backend_buffer_is_host(b));
}
*/
import "C"

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// CustomFunc is the body of a custom operation written in Go (MapCustom1/2/3). It computes dst
// from a, b and c (b and c are nil for the operations with fewer operands). The CPU backend
// calls it on nth of its worker threads at once, each with its own ith in [0, nth): the
// function splits the work itself (for instance rows ith, ith+nth, ...). The tensors are in
// host memory; HostFloat32 and HostBytes give direct access to their data. A panic is caught:
// the compute that ran the operation then returns an error.
type CustomFunc func(dst, a, b, c *Tensor, ith, nth int)

// AllTasks as the nTasks argument of MapCustom1/2/3 runs the function on every worker thread
// of the compute (GGML_N_TASKS_MAX).
const AllTasks = -1

// customOp is the Go state of one custom op node; C holds a handle of it in the node's
// op_params.
type customOp struct {
	fn   CustomFunc
	name string

	mu    sync.Mutex
	panic *PanicError // first panic of the current compute, nil when none
}

// pendingPanics counts custom ops holding a panic not yet reported by a compute.
var pendingPanics atomic.Int64

func (op *customOp) recordPanic(r any, ith int, node string) {
	stack := debug.Stack()
	op.mu.Lock()
	defer op.mu.Unlock()
	if op.panic == nil {
		op.panic = &PanicError{Op: op.name, Node: node, Thread: ith, Value: r, Stack: stack}
		pendingPanics.Add(1)
	}
}

// takePanic returns and clears the recorded panic.
func (op *customOp) takePanic() *PanicError {
	op.mu.Lock()
	defer op.mu.Unlock()
	p := op.panic
	if p != nil {
		op.panic = nil
		pendingPanics.Add(-1)
	}
	return p
}

// customPanicError returns the panics recorded by the Go custom ops of graph g since they were
// last reported, as one *Error naming op (nil when none: one atomic load in the common case).
// Every function that computes a graph calls it afterwards.
func customPanicError(op string, g *C.struct_ggml_cgraph) error {
	if pendingPanics.Load() == 0 || g == nil {
		return nil
	}
	n := int(C.ggml_go_graph_custom_handles(g, nil, 0))
	if n == 0 {
		return nil
	}
	hs := make([]C.uintptr_t, n)
	C.ggml_go_graph_custom_handles(g, &hs[0], C.int(n))
	var msgs []string
	var first *PanicError
	seen := map[C.uintptr_t]bool{}
	for _, h := range hs {
		if seen[h] {
			continue
		}
		seen[h] = true
		if p := customOpOf(h).takePanic(); p != nil {
			msgs = append(msgs, strings.TrimPrefix(p.Error(), "ggml: "))
			if first == nil {
				first = p
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return &Error{Op: op, Msg: strings.Join(msgs, "; "), Err: first}
}

// customOps maps live custom op handles to their state (a handle of a closed context is gone).
var customOps sync.Map // C.uintptr_t -> *customOp

func customOpOf(h C.uintptr_t) *customOp {
	if v, ok := customOps.Load(h); ok {
		return v.(*customOp)
	}
	return &customOp{}
}

// mapCustom creates the node through call and ties the handle of fn to the context.
func (ctx *Context) mapCustom(op string, fn CustomFunc, nTasks int, operands []*Tensor, call func(c *C.struct_ggml_context, n C.int, h C.uintptr_t) C.ggo_pres) *Tensor {
	c := ctx.enter(op)
	defer ctx.busy.leave()
	names := []string{"a", "b", "c"}[:len(operands)]
	for _, t := range operands {
		t.cptr(op)
	}
	if fn == nil {
		panic(&Error{Op: op, Shapes: describeOperands(names, operands), Msg: "nil CustomFunc"})
	}
	if nTasks != AllTasks && nTasks < 1 {
		panic(&Error{Op: op, Shapes: describeOperands(names, operands), Msg: fmt.Sprintf("nTasks must be AllTasks or >= 1, got %d", nTasks)})
	}
	st := &customOp{fn: fn, name: op}
	h := newHandle(st)
	ch := C.uintptr_t(h)
	customOps.Store(ch, st)
	r := call(c, cInt(op, "nTasks", nTasks), ch)
	if r.p == nil {
		customOps.Delete(ch)
		deleteHandle(h)
	} else {
		ctx.onClose(func() {
			st.takePanic()
			customOps.Delete(ch)
			deleteHandle(h)
		})
	}
	return ctx.opResult(op, r, func() string { return describeOperands(names, operands) })
}

// MapCustom1 returns a new tensor shaped like a whose value fn computes from a
// (ggml_map_custom1). nTasks is the number of threads fn runs on (AllTasks: every thread of
// the compute). The function is held by the context until it is closed.
func (ctx *Context) MapCustom1(a *Tensor, fn CustomFunc, nTasks int) *Tensor {
	const op = "MapCustom1"
	return ctx.mapCustom(op, fn, nTasks, []*Tensor{a}, func(c *C.struct_ggml_context, n C.int, h C.uintptr_t) C.ggo_pres {
		return C.ggo_ggml_map_custom1(c, a.cptr(op), n, h)
	})
}

// MapCustom1Inplace is MapCustom1 writing into a view of a (ggml_map_custom1_inplace).
func (ctx *Context) MapCustom1Inplace(a *Tensor, fn CustomFunc, nTasks int) *Tensor {
	const op = "MapCustom1Inplace"
	return ctx.mapCustom(op, fn, nTasks, []*Tensor{a}, func(c *C.struct_ggml_context, n C.int, h C.uintptr_t) C.ggo_pres {
		return C.ggo_ggml_map_custom1_inplace(c, a.cptr(op), n, h)
	})
}

// MapCustom2 returns a new tensor shaped like a whose value fn computes from a and b
// (ggml_map_custom2).
func (ctx *Context) MapCustom2(a, b *Tensor, fn CustomFunc, nTasks int) *Tensor {
	const op = "MapCustom2"
	return ctx.mapCustom(op, fn, nTasks, []*Tensor{a, b}, func(c *C.struct_ggml_context, n C.int, h C.uintptr_t) C.ggo_pres {
		return C.ggo_ggml_map_custom2(c, a.cptr(op), b.cptr(op), n, h)
	})
}

// MapCustom2Inplace is MapCustom2 writing into a view of a (ggml_map_custom2_inplace).
func (ctx *Context) MapCustom2Inplace(a, b *Tensor, fn CustomFunc, nTasks int) *Tensor {
	const op = "MapCustom2Inplace"
	return ctx.mapCustom(op, fn, nTasks, []*Tensor{a, b}, func(c *C.struct_ggml_context, n C.int, h C.uintptr_t) C.ggo_pres {
		return C.ggo_ggml_map_custom2_inplace(c, a.cptr(op), b.cptr(op), n, h)
	})
}

// MapCustom3 returns a new tensor shaped like a whose value fn computes from a, b and c
// (ggml_map_custom3).
func (ctx *Context) MapCustom3(a, b, c *Tensor, fn CustomFunc, nTasks int) *Tensor {
	const op = "MapCustom3"
	return ctx.mapCustom(op, fn, nTasks, []*Tensor{a, b, c}, func(cc *C.struct_ggml_context, n C.int, h C.uintptr_t) C.ggo_pres {
		return C.ggo_ggml_map_custom3(cc, a.cptr(op), b.cptr(op), c.cptr(op), n, h)
	})
}

// MapCustom3Inplace is MapCustom3 writing into a view of a (ggml_map_custom3_inplace).
func (ctx *Context) MapCustom3Inplace(a, b, c *Tensor, fn CustomFunc, nTasks int) *Tensor {
	const op = "MapCustom3Inplace"
	return ctx.mapCustom(op, fn, nTasks, []*Tensor{a, b, c}, func(cc *C.struct_ggml_context, n C.int, h C.uintptr_t) C.ggo_pres {
		return C.ggo_ggml_map_custom3_inplace(cc, a.cptr(op), b.cptr(op), c.cptr(op), n, h)
	})
}

// HostBytes returns the tensor's memory as a byte slice (Nbytes long, from its data address),
// for code running inside a custom op or a Go buffer: it is valid while the memory is. It
// panics with a *Error when the tensor has no data or its memory is not host memory.
func (t *Tensor) HostBytes() []byte {
	const op = "HostBytes"
	c := t.cptr(op)
	if !bool(C.ggo_tensor_host_data(c)) {
		panic(&Error{Op: op, Shapes: t.describe(), Msg: "tensor has no data in host memory"})
	}
	n := uint64(C.ggml_nbytes(c))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(c.data), int(n))
}

// HostFloat32 returns the elements of a contiguous F32 tensor in host memory as a slice that
// aliases the tensor's memory (see HostBytes). It panics with a *Error for other tensors.
func (t *Tensor) HostFloat32() []float32 {
	const op = "HostFloat32"
	c := t.cptr(op)
	if Type(c._type) != TypeF32 || !bool(C.ggml_is_contiguous(c)) {
		panic(&Error{Op: op, Shapes: t.describe(), Msg: "tensor is not a contiguous F32 tensor"})
	}
	if !bool(C.ggo_tensor_host_data(c)) {
		panic(&Error{Op: op, Shapes: t.describe(), Msg: "tensor has no data in host memory"})
	}
	n := int(C.ggml_nelements(c))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*float32)(c.data), n)
}
