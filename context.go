//go:build cgo

package ggml

/*
#include "ggml_go.h"

static ggo_pres ggo_ggml_init(size_t mem_size, bool no_alloc) {
    struct ggml_init_params params = { mem_size, NULL, no_alloc };
    GGO_PCALL(ggml_init(params));
}
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"
	"weak"
)

// Params configures NewContext.
type Params struct {
	// MemSize is the size of the context's arena in bytes: it holds the metadata of every
	// tensor and graph created in the context (TensorOverhead and GraphOverhead bytes each)
	// and, unless NoAlloc is set, the tensors' data. Zero selects DefaultMemSize (plus the
	// metadata of 1024 tensors and one default graph).
	MemSize uint64
	// NoAlloc creates tensors without data: their memory is assigned later, typically by
	// AllocContextTensors in a backend buffer.
	NoAlloc bool
}

// DefaultMemSize is the data part of the arena of a context created with Params.MemSize = 0
// and NoAlloc = false.
const DefaultMemSize = 16 << 20

// Context is an arena holding tensors and graphs (struct ggml_context). Tensors and graphs
// created in a context live until the context is closed; using them afterwards panics with a
// *Error wrapping ErrClosed.
//
// A Context, and the tensors and graphs in it, must be used by one goroutine at a time: an op
// constructor, tensor creation, Compute or Close that overlaps another such call on the same
// context fails (or, for methods without an error result, panics) with a *Error wrapping
// ErrBusy instead of corrupting the arena.
type Context struct {
	busy    inUse
	c       *C.struct_ggml_context
	ref     *nativeRef  // nil for a borrowed context (owned by a C object, see newBorrowedContext)
	dead    atomic.Bool // set by Close / invalidate
	base    uintptr     // arena range, to find the context of a C tensor pointer
	end     uintptr
	cmem    *cAllocs // C memory freed with the context (graph views)
	mu      sync.Mutex
	tensors map[*C.struct_ggml_tensor]*Tensor // one *Tensor per C tensor
	keep    []any                             // Go objects that must live as long as the context
}

// cAllocs holds what is released together with a context: C allocations (graph views) and
// functions registered with onClose (handles of custom ops, ...).
type cAllocs struct {
	mu      sync.Mutex
	ptrs    []unsafe.Pointer
	closers []func()
}

func (a *cAllocs) addCloser(f func()) {
	a.mu.Lock()
	a.closers = append(a.closers, f)
	a.mu.Unlock()
}

func (a *cAllocs) add(p unsafe.Pointer) {
	a.mu.Lock()
	a.ptrs = append(a.ptrs, p)
	a.mu.Unlock()
}

func (a *cAllocs) freeAll() {
	a.mu.Lock()
	closers := a.closers
	a.closers = nil
	for _, p := range a.ptrs {
		C.free(p)
	}
	a.ptrs = nil
	a.mu.Unlock()
	for i := len(closers) - 1; i >= 0; i-- {
		closers[i]()
	}
}

// NewContext creates a context (ggml_init). The arena is allocated by the C library.
func NewContext(p Params) (*Context, error) {
	size := p.MemSize
	if size == 0 {
		size = 1024*TensorOverhead() + GraphOverhead()
		if !p.NoAlloc {
			size += DefaultMemSize
		}
	}
	if size > 1<<62 {
		return nil, newError("NewContext", "", fmt.Sprintf("memory size %d is too large", size))
	}
	r := C.ggo_ggml_init(C.size_t(size), C.bool(p.NoAlloc))
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "ggml_init failed"
		}
		return nil, newError("NewContext", "", msg)
	}
	c := (*C.struct_ggml_context)(r.p)
	ctx := &Context{c: c, cmem: &cAllocs{}}
	base := uintptr(C.ggml_get_mem_buffer(c))
	ctx.base, ctx.end = base, base+uintptr(C.ggml_get_mem_size(c))
	cmem := ctx.cmem
	ctx.ref = newNativeRef(ctx, "context", func() {
		unregisterContext(c)
		cmem.freeAll()
		C.ggml_free(c)
	})
	registerContext(ctx)
	return ctx, nil
}

// newBorrowedContext wraps a context owned by a C object (a graph copy, ...): Close does not
// free it; its owner calls invalidate when the C object is freed.
func newBorrowedContext(c *C.struct_ggml_context) *Context {
	ctx := &Context{c: c, cmem: &cAllocs{}}
	base := uintptr(C.ggml_get_mem_buffer(c))
	ctx.base, ctx.end = base, base+uintptr(C.ggml_get_mem_size(c))
	registerContext(ctx)
	return ctx
}

// invalidate marks a borrowed context as gone: its tensors panic on use from now on.
func (ctx *Context) invalidate() {
	if ctx.dead.CompareAndSwap(false, true) {
		unregisterContext(ctx.c)
		ctx.cmem.freeAll()
	}
}

// Close frees the context and everything in it. Further use of its tensors and graphs panics
// (or, for methods that return an error, returns an error wrapping ErrClosed). Close is
// idempotent; it returns an error wrapping ErrBusy, and frees nothing, while another goroutine
// is inside one of the context's methods.
func (ctx *Context) Close() error {
	if ctx == nil {
		return nil
	}
	if ctx.ref == nil {
		// borrowed: the owner frees it
		return nil
	}
	if err := ctx.busy.enter("Context.Close", "context"); err != nil {
		return err
	}
	defer ctx.busy.leave()
	ctx.dead.Store(true)
	ctx.ref.release()
	ctx.mu.Lock()
	ctx.tensors = nil
	ctx.keep = nil
	ctx.mu.Unlock()
	return nil
}

// Closed reports whether the context was closed.
func (ctx *Context) Closed() bool {
	return ctx == nil || ctx.dead.Load()
}

// cptr returns the C context, panicking with a *Error naming op when it was closed.
func (ctx *Context) cptr(op string) *C.struct_ggml_context {
	if ctx == nil {
		panic(&Error{Op: op, Msg: "nil *Context"})
	}
	if ctx.dead.Load() {
		panic(&Error{Op: op, Msg: "context used after it was closed", Err: ErrClosed})
	}
	return ctx.c
}

// enter is cptr for the methods that create tensors or compute: it also marks the context in
// use (the caller defers ctx.busy.leave()), panicking with a *Error wrapping ErrBusy when
// another goroutine is inside such a method.
func (ctx *Context) enter(op string) *C.struct_ggml_context {
	c := ctx.cptr(op)
	ctx.busy.mustEnter(op, "context")
	return c
}

// enterErr is enter for methods that return an error: nil, closed or busy is returned.
func (ctx *Context) enterErr(op string) (*C.struct_ggml_context, error) {
	if ctx == nil {
		return nil, &Error{Op: op, Msg: "nil *Context"}
	}
	if err := ctx.busy.enter(op, "context"); err != nil {
		return nil, err
	}
	if ctx.dead.Load() {
		ctx.busy.leave()
		return nil, &Error{Op: op, Msg: "context used after it was closed", Err: ErrClosed}
	}
	return ctx.c, nil
}

// onClose registers f to run when the context is closed (or collected, or, for a borrowed
// context, invalidated). f must not reference ctx. Functions run in reverse order of
// registration, before the C context is freed.
func (ctx *Context) onClose(f func()) {
	ctx.cmem.addCloser(f)
}

// keepAlive ties the lifetime of v (a buffer holding this context's tensors, ...) to ctx.
func (ctx *Context) keepAlive(v any) {
	ctx.mu.Lock()
	ctx.keep = append(ctx.keep, v)
	ctx.mu.Unlock()
}

// wrap returns the *Tensor of a C tensor of this context (nil for nil).
func (ctx *Context) wrap(p *C.struct_ggml_tensor) *Tensor {
	if p == nil {
		return nil
	}
	ctx.mu.Lock()
	defer ctx.mu.Unlock()
	if t := ctx.tensors[p]; t != nil {
		return t
	}
	if ctx.tensors == nil {
		ctx.tensors = map[*C.struct_ggml_tensor]*Tensor{}
	}
	t := &Tensor{c: p, ctx: ctx}
	ctx.tensors[p] = t
	return t
}

// UsedMem returns the number of arena bytes in use (ggml_used_mem).
func (ctx *Context) UsedMem() uint64 {
	return uint64(C.ggml_used_mem(ctx.cptr("UsedMem")))
}

// MemSize returns the size of the arena (ggml_get_mem_size).
func (ctx *Context) MemSize() uint64 {
	return uint64(C.ggml_get_mem_size(ctx.cptr("MemSize")))
}

// FreeMem returns the arena bytes still available (MemSize - UsedMem).
func (ctx *Context) FreeMem() uint64 {
	return ctx.MemSize() - ctx.UsedMem()
}

// MaxTensorSize returns the size in bytes of the largest tensor of the context
// (ggml_get_max_tensor_size).
func (ctx *Context) MaxTensorSize() uint64 {
	return uint64(C.ggml_get_max_tensor_size(ctx.cptr("MaxTensorSize")))
}

// NoAlloc reports whether new tensors are created without data (ggml_get_no_alloc).
func (ctx *Context) NoAlloc() bool {
	return bool(C.ggml_get_no_alloc(ctx.cptr("NoAlloc")))
}

// SetNoAlloc sets whether new tensors are created without data (ggml_set_no_alloc).
func (ctx *Context) SetNoAlloc(noAlloc bool) {
	C.ggml_set_no_alloc(ctx.cptr("SetNoAlloc"), C.bool(noAlloc))
}

// Tensor returns the tensor of the context with the given name, or nil (ggml_get_tensor).
func (ctx *Context) Tensor(name string) *Tensor {
	c := ctx.cptr("Tensor")
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return ctx.wrap(C.ggml_get_tensor(c, cname))
}

// Tensors returns every tensor of the context in creation order (ggml_get_first_tensor,
// ggml_get_next_tensor).
func (ctx *Context) Tensors() []*Tensor {
	c := ctx.cptr("Tensors")
	var out []*Tensor
	for p := C.ggml_get_first_tensor(c); p != nil; p = C.ggml_get_next_tensor(c, p) {
		out = append(out, ctx.wrap(p))
	}
	return out
}

// context registry: finds the Go context of a C tensor pointer (graph nodes, callbacks)

type ctxEntry struct {
	c         *C.struct_ggml_context
	base, end uintptr
	ctx       weak.Pointer[Context]
}

var ctxRegistry struct {
	mu      sync.RWMutex
	entries []ctxEntry
}

func registerContext(ctx *Context) {
	ctxRegistry.mu.Lock()
	ctxRegistry.entries = append(ctxRegistry.entries, ctxEntry{c: ctx.c, base: ctx.base, end: ctx.end, ctx: weak.Make(ctx)})
	ctxRegistry.mu.Unlock()
}

func unregisterContext(c *C.struct_ggml_context) {
	ctxRegistry.mu.Lock()
	defer ctxRegistry.mu.Unlock()
	for i, e := range ctxRegistry.entries {
		if e.c == c {
			last := len(ctxRegistry.entries) - 1
			ctxRegistry.entries[i] = ctxRegistry.entries[last]
			ctxRegistry.entries = ctxRegistry.entries[:last]
			return
		}
	}
}

// detachBuffer clears data and buffer of every tensor, in any registered context, that lives in
// the C buffer c. Call it just before c is freed: later use of those tensors then fails with a
// "no data" error instead of reading freed memory. Contexts cannot be freed meanwhile: they
// leave the registry (under its lock) before their C memory is released.
func detachBuffer(c C.ggml_backend_buffer_t) {
	if c == nil {
		return
	}
	ctxRegistry.mu.RLock()
	defer ctxRegistry.mu.RUnlock()
	for _, e := range ctxRegistry.entries {
		C.ggo_detach_buffer(e.c, c)
	}
}

// contextOf returns the live Go context whose arena holds the C tensor p, or nil.
func contextOf(p *C.struct_ggml_tensor) *Context {
	addr := uintptr(unsafe.Pointer(p))
	ctxRegistry.mu.RLock()
	defer ctxRegistry.mu.RUnlock()
	for _, e := range ctxRegistry.entries {
		if addr >= e.base && addr < e.end {
			if ctx := e.ctx.Value(); ctx != nil && !ctx.dead.Load() {
				return ctx
			}
		}
	}
	return nil
}

// tensorFromC returns the *Tensor for a C tensor pointer: the cached one of its context when
// the tensor lives in a known context, otherwise a borrowed *Tensor without liveness checks
// (valid only as long as the C code that handed it out says). nil for nil.
func tensorFromC(p *C.struct_ggml_tensor) *Tensor {
	if p == nil {
		return nil
	}
	if ctx := contextOf(p); ctx != nil {
		return ctx.wrap(p)
	}
	return &Tensor{c: p}
}

// TensorOverhead returns the arena bytes taken by one tensor's metadata (ggml_tensor_overhead).
func TensorOverhead() uint64 {
	return uint64(C.ggml_tensor_overhead())
}

// GraphOverhead returns the arena bytes taken by a graph of the default size
// (ggml_graph_overhead).
func GraphOverhead() uint64 {
	return uint64(C.ggml_graph_overhead())
}

// GraphOverheadCustom returns the arena bytes taken by a graph of the given size
// (ggml_graph_overhead_custom).
func GraphOverheadCustom(size int, grads bool) uint64 {
	if size < 0 {
		size = 0
	}
	return uint64(C.ggml_graph_overhead_custom(C.size_t(size), C.bool(grads)))
}
