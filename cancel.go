//go:build cgo

package ggml

// Cancellation of long computes by a context.Context: the C library calls an abort callback
// between the nodes of a CPU compute (ggml_x_backend_cpu_set_abort_callback) and between the
// splits of a scheduler compute (ggml_x_backend_sched_set_abort_callback). The callback reads
// a flag in C memory that context.AfterFunc sets when the context is done, so no Go code runs
// on the C worker threads.

/*
#include "ggml_go.h"

static bool ggo_cancel_cb(void * data) {
    return __atomic_load_n((const int *) data, __ATOMIC_ACQUIRE) != 0;
}
static void ggo_cancel_set(int * p) {
    __atomic_store_n(p, 1, __ATOMIC_RELEASE);
}
static void ggo_cpu_set_abort(ggml_backend_t b, int * flag) {
    ggml_x_backend_cpu_set_abort_callback(b, flag != NULL ? ggo_cancel_cb : NULL, flag);
}
static void ggo_sched_set_abort(ggml_backend_sched_t s, int * flag) {
    ggml_x_backend_sched_set_abort_callback(s, flag != NULL ? ggo_cancel_cb : NULL, flag);
}
*/
import "C"

import (
	"context"
	"unsafe"
)

// cancelFlag is the C-side flag of a context.Context during one compute.
type cancelFlag struct {
	ctx  context.Context
	p    *C.int
	stop func() bool
	done chan struct{}
}

// newCancelFlag returns nil for a context that can never be cancelled.
func newCancelFlag(ctx context.Context) *cancelFlag {
	if ctx == nil || ctx.Done() == nil {
		return nil
	}
	p := (*C.int)(C.calloc(1, C.size_t(unsafe.Sizeof(C.int(0)))))
	if p == nil {
		panic(&Error{Op: "ComputeContext", Msg: "out of memory"})
	}
	f := &cancelFlag{ctx: ctx, p: p, done: make(chan struct{})}
	f.stop = context.AfterFunc(ctx, func() {
		C.ggo_cancel_set(p)
		close(f.done)
	})
	return f
}

// err returns the context's error (nil while it is not done).
func (f *cancelFlag) err() error {
	return f.ctx.Err()
}

// release stops watching the context and frees the flag.
func (f *cancelFlag) release() {
	if f == nil {
		return
	}
	if !f.stop() {
		<-f.done // the AfterFunc ran or is running: let it finish writing the flag
	}
	C.free(unsafe.Pointer(f.p))
}

func (f *cancelFlag) attachCPU(b C.ggml_backend_t) { C.ggo_cpu_set_abort(b, f.p) }
func (f *cancelFlag) detachCPU(b C.ggml_backend_t) { C.ggo_cpu_set_abort(b, nil) }

// ComputeContext is Compute, cancelled when ctx is done: the CPU backend checks ctx between the
// nodes of the graph, other backends only before they start. A cancelled compute returns a
// *Error wrapping ctx.Err() (context.Canceled or context.DeadlineExceeded); the graph's
// results are then incomplete.
func (b *Backend) ComputeContext(ctx context.Context, g *Graph) error {
	f := newCancelFlag(ctx)
	defer f.release()
	return b.compute("Backend.ComputeContext", g, f)
}

// ComputeContext is Compute, cancelled when ctx is done: checked before each split and, on
// CPU backends, between the nodes. A cancelled compute returns a *Error wrapping ctx.Err()
// (context.Canceled or context.DeadlineExceeded); the graph's results are then incomplete.
func (s *Scheduler) ComputeContext(ctx context.Context, g *Graph) error {
	f := newCancelFlag(ctx)
	defer f.release()
	if f != nil {
		if err := f.err(); err != nil {
			return &Error{Op: "Scheduler.ComputeContext", Msg: "cancelled: " + err.Error(), Err: err}
		}
	}
	return s.compute("Scheduler.ComputeContext", g, f)
}

// setAbort installs (f != nil) or removes the cancellation flag on the C scheduler and on its
// CPU backends.
func (s *Scheduler) setAbort(c C.ggml_backend_sched_t, f *cancelFlag) {
	var p *C.int
	if f != nil {
		p = f.p
	}
	C.ggo_sched_set_abort(c, p)
	for _, b := range s.backends {
		if bool(C.ggml_backend_is_cpu(b.c)) {
			C.ggo_cpu_set_abort(b.c, p)
		}
	}
}
