//go:build cgo

package ggml

/*
#include <stdlib.h>
#include "ggml_go.h"
#include "train_trampolines.h"
*/
import "C"

import "runtime/cgo"

// The Go enums (optimizer_types.go) must equal the C ones: each line fails to compile when a
// value differs (a negative constant does not convert to uint).
const (
	_ = uint(int(Adam)-C.GGML_OPT_ADAM) + uint(C.GGML_OPT_ADAM-int(Adam))
	_ = uint(int(LBFGS)-C.GGML_OPT_LBFGS) + uint(C.GGML_OPT_LBFGS-int(LBFGS))
	_ = uint(int(LineSearchArmijo)-C.GGML_LINESEARCH_BACKTRACKING_ARMIJO) + uint(C.GGML_LINESEARCH_BACKTRACKING_ARMIJO-int(LineSearchArmijo))
	_ = uint(int(LineSearchWolfe)-C.GGML_LINESEARCH_BACKTRACKING_WOLFE) + uint(C.GGML_LINESEARCH_BACKTRACKING_WOLFE-int(LineSearchWolfe))
	_ = uint(int(LineSearchStrongWolfe)-C.GGML_LINESEARCH_BACKTRACKING_STRONG_WOLFE) + uint(C.GGML_LINESEARCH_BACKTRACKING_STRONG_WOLFE-int(LineSearchStrongWolfe))
	_ = uint(int(OptOK)-C.GGML_OPT_OK) + uint(C.GGML_OPT_OK-int(OptOK))
	_ = uint(int(OptCancel)-C.GGML_OPT_CANCEL) + uint(C.GGML_OPT_CANCEL-int(OptCancel))
	_ = uint(int(LineSearchFail)-C.GGML_LINESEARCH_FAIL) + uint(C.GGML_LINESEARCH_FAIL-int(LineSearchFail))
	_ = uint(int(LineSearchInvalidParameters)-C.GGML_LINESEARCH_INVALID_PARAMETERS) + uint(C.GGML_LINESEARCH_INVALID_PARAMETERS-int(LineSearchInvalidParameters))
)

// cDefaultOptimizerParams returns the C library's defaults (ggml_opt_default_params) in Go form;
// a test checks that DefaultOptimizerParams agrees.
func cDefaultOptimizerParams(t OptimizerType) OptimizerParams {
	c := C.ggml_opt_default_params(C.enum_ggml_opt_type(t))
	return OptimizerParams{
		Type: t, GraphSize: int(c.graph_size), Threads: int(c.n_threads), Past: int(c.past), Delta: float32(c.delta),
		MaxNoImprovement: int(c.max_no_improvement), GradientAccumulation: int(c.n_gradient_accumulation),
		PrintForwardGraph: bool(c.print_forward_graph), PrintBackwardGraph: bool(c.print_backward_graph),
		Adam: AdamParams{
			Iterations: int(c.adam.n_iter), Sched: float32(c.adam.sched), Decay: float32(c.adam.decay),
			DecayMinDims: int(c.adam.decay_min_ndim), Alpha: float32(c.adam.alpha), Beta1: float32(c.adam.beta1),
			Beta2: float32(c.adam.beta2), Eps: float32(c.adam.eps), EpsF: float32(c.adam.eps_f),
			EpsG: float32(c.adam.eps_g), GradClip: float32(c.adam.gclip),
		},
		LBFGS: LBFGSParams{
			M: int(c.lbfgs.m), Iterations: int(c.lbfgs.n_iter), MaxLineSearch: int(c.lbfgs.max_linesearch),
			Eps: float32(c.lbfgs.eps), FTol: float32(c.lbfgs.ftol), Wolfe: float32(c.lbfgs.wolfe),
			MinStep: float32(c.lbfgs.min_step), MaxStep: float32(c.lbfgs.max_step), LineSearch: LineSearch(c.lbfgs.linesearch),
		},
	}
}

func (p OptimizerParams) toC() C.struct_ggml_opt_params {
	c := C.ggml_opt_default_params(C.enum_ggml_opt_type(p.Type))
	c.graph_size = C.size_t(p.GraphSize)
	c.n_threads = C.int(p.Threads)
	c.past = C.int(p.Past)
	c.delta = C.float(p.Delta)
	c.max_no_improvement = C.int(p.MaxNoImprovement)
	c.print_forward_graph = C.bool(p.PrintForwardGraph)
	c.print_backward_graph = C.bool(p.PrintBackwardGraph)
	c.n_gradient_accumulation = C.int(p.GradientAccumulation)
	c.adam.n_iter = C.int(p.Adam.Iterations)
	c.adam.sched = C.float(p.Adam.Sched)
	c.adam.decay = C.float(p.Adam.Decay)
	c.adam.decay_min_ndim = C.int(p.Adam.DecayMinDims)
	c.adam.alpha = C.float(p.Adam.Alpha)
	c.adam.beta1 = C.float(p.Adam.Beta1)
	c.adam.beta2 = C.float(p.Adam.Beta2)
	c.adam.eps = C.float(p.Adam.Eps)
	c.adam.eps_f = C.float(p.Adam.EpsF)
	c.adam.eps_g = C.float(p.Adam.EpsG)
	c.adam.gclip = C.float(p.Adam.GradClip)
	c.lbfgs.m = C.int(p.LBFGS.M)
	c.lbfgs.n_iter = C.int(p.LBFGS.Iterations)
	c.lbfgs.max_linesearch = C.int(p.LBFGS.MaxLineSearch)
	c.lbfgs.eps = C.float(p.LBFGS.Eps)
	c.lbfgs.ftol = C.float(p.LBFGS.FTol)
	c.lbfgs.wolfe = C.float(p.LBFGS.Wolfe)
	c.lbfgs.min_step = C.float(p.LBFGS.MinStep)
	c.lbfgs.max_step = C.float(p.LBFGS.MaxStep)
	c.lbfgs.linesearch = C.enum_ggml_linesearch(p.LBFGS.LineSearch)
	return c
}

// Optimizer minimizes a scalar function of the params (tensors marked with SetParam) with Adam
// or L-BFGS (ggml_opt_init / ggml_opt_resume_g). Its state (moments, L-BFGS memory, iteration
// count) lives in C memory owned by the Optimizer and carries over between Minimize calls, so
// training can proceed in steps. Close it when done.
type Optimizer struct {
	p   OptimizerParams
	c   *C.struct_ggml_opt_context
	ref *nativeRef
	cb  OptimizerCallback
	nx  int64 // parameter count the state was made for (-1: none yet)

	// graphs Minimize built for f
	f      *Tensor
	gf, gb *Graph
}

// NewOptimizer returns an optimizer with the given parameters. It panics with a *Error when
// the parameters are invalid.
func NewOptimizer(p OptimizerParams) (*Optimizer, error) {
	p.validate("NewOptimizer")
	c := C.ggo_opt_new()
	if c == nil {
		return nil, &Error{Op: "NewOptimizer", Msg: "out of memory"}
	}
	o := &Optimizer{p: p, c: c, nx: -1}
	o.ref = newNativeRef(o, "optimizer", func() { C.ggo_opt_free(c) })
	return o, nil
}

// Params returns the optimizer's parameters.
func (o *Optimizer) Params() OptimizerParams { return o.p }

// SetCallback sets the function called before every gradient evaluation (nil: none).
func (o *Optimizer) SetCallback(cb OptimizerCallback) { o.cb = cb }

func (o *Optimizer) cptr(op string) *C.struct_ggml_opt_context {
	if o == nil || o.ref.released() {
		panic(&Error{Op: op, Msg: "optimizer used after Close", Err: ErrClosed})
	}
	return o.c
}

// Iter returns the number of iterations done over all Minimize calls.
func (o *Optimizer) Iter() int { return int(o.cptr("Optimizer.Iter").iter) }

// LossBefore returns f at the start of the last Minimize call.
func (o *Optimizer) LossBefore() float32 { return float32(o.cptr("Optimizer.LossBefore").loss_before) }

// LossAfter returns f after the last update of the last Minimize call.
func (o *Optimizer) LossAfter() float32 { return float32(o.cptr("Optimizer.LossAfter").loss_after) }

func (o *Optimizer) state() OptimizerState {
	return OptimizerState{Iter: int(o.c.iter), LossBefore: float32(o.c.loss_before), LossAfter: float32(o.c.loss_after)}
}

// Minimize runs the optimizer on f, a scalar F32 function of the params, for up to the
// configured number of iterations. The first call for a given f builds the forward and backward
// graphs in f's context (it needs room for two graphs and the backward tensors; see
// MinimizeGraphs to bring your own). The params are updated in place.
func (o *Optimizer) Minimize(f *Tensor) (_ OptResult, err error) {
	defer errOnClosed(&err)
	const op = "Optimizer.Minimize"
	o.cptr(op)
	if o.f != f {
		ctx := f.Context()
		if ctx == nil {
			panic(&Error{Op: op, Msg: "f must belong to a Go context"})
		}
		gf := ctx.NewGraphCustom(o.p.GraphSize, true)
		gf.BuildForwardExpand(f)
		gb := ctx.BuildBackward(gf, true)
		o.f, o.gf, o.gb = f, gf, gb
	}
	return o.MinimizeGraphs(f, o.gf, o.gb)
}

// optRun is the Go state of one MinimizeGraphs call that the callback trampoline reaches
// through a cgo.Handle.
type optRun struct {
	opt      *Optimizer
	cb       OptimizerCallback
	panicked error
}

// MinimizeGraphs is Minimize with graphs built by the caller: gf computes f, gb is gf extended
// by BuildBackwardExpand (keep = true). Runtime failures return an error; OptDidNotConverge,
// OptCancel and the line search results are outcomes, not errors.
func (o *Optimizer) MinimizeGraphs(f *Tensor, gf, gb *Graph) (_ OptResult, err error) {
	defer errOnClosed(&err)
	const op = "Optimizer.MinimizeGraphs"
	c := o.cptr(op)
	ctx := f.Context()
	if ctx == nil {
		panic(&Error{Op: op, Msg: "f must belong to a Go context"})
	}
	cctx, cf, cgf, cgb := ctx.cptr(op), f.cptr(op), gf.cptr(op), gb.cptr(op)
	var nx int64
	for _, t := range gf.Nodes() {
		if t.IsParam() {
			nx += t.NumElements()
		}
	}
	if nx == 0 {
		panic(&Error{Op: op, Msg: "f depends on no params: mark them with SetParam before building f"})
	}
	if nx != o.nx {
		// (re)create the state for this parameter count, keeping the iteration count
		iter := c.iter
		C.ggo_opt_free_state(c)
		if msg := takeCError(C.ggo_ggml_opt_init(c, o.p.toC(), C.int64_t(nx))); msg != "" || c.ctx == nil {
			return OptNoContext, &Error{Op: op, Msg: "could not create the optimizer state: " + msg}
		}
		c.iter = iter
		o.nx = nx
	}
	run := &optRun{opt: o, cb: o.cb}
	var h cgo.Handle
	if run.cb != nil {
		h = newHandle(run)
		defer deleteHandle(h)
	}
	var cerr *C.char
	r := OptResult(C.ggml_go_opt_resume_g(cctx, c, cf, cgf, cgb, C.uintptr_t(h), &cerr))
	msg := takeCError(cerr)
	if run.panicked != nil {
		return r, &Error{Op: op, Msg: run.panicked.Error()}
	}
	switch r {
	case OptFail, OptNoContext, OptInvalidWolfe:
		if msg == "" {
			msg = "the optimizer failed (" + r.String() + ")"
		}
		return r, &Error{Op: op, Msg: msg}
	}
	return r, nil
}

// Close frees the optimizer's state. It is safe to call more than once.
func (o *Optimizer) Close() error {
	if o != nil {
		o.ref.release()
	}
	return nil
}
