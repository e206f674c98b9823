//go:build cgo

package ggml

/*
#include "ggml.h"
#include "train_trampolines.h"
*/
import "C"

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// optStateMagic starts a serialized optimizer state (version 1).
const optStateMagic = "GGOPTST1"

// f32s views the data of an optimizer state tensor (nil for nil).
func f32s(t *C.struct_ggml_tensor) []float32 {
	if t == nil || t.data == nil {
		return nil
	}
	n := int(t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3])
	return unsafe.Slice((*float32)(t.data), n)
}

// stateVectors lists the state tensors of the optimizer's method, in serialization order.
func (o *Optimizer) stateVectors() [][]float32 {
	c := o.c
	if o.p.Type == Adam {
		return [][]float32{f32s(c.adam.g), f32s(c.adam.m), f32s(c.adam.v), f32s(c.adam.pf)}
	}
	l := &c.lbfgs
	return [][]float32{f32s(l.x), f32s(l.xp), f32s(l.g), f32s(l.gp), f32s(l.d), f32s(l.pf), f32s(l.lmal),
		f32s(l.lmys), f32s(l.lms), f32s(l.lmy)}
}

// MarshalBinary saves the optimizer's state (iteration count, Adam moments or the L-BFGS memory,
// the convergence bookkeeping), so that training can stop and later resume exactly: restore it
// with UnmarshalBinary into an optimizer with the same parameters, and the params' values
// separately. Before the first Minimize there is no state and it returns an error.
func (o *Optimizer) MarshalBinary() (_ []byte, err error) {
	defer errOnClosed(&err)
	const op = "Optimizer.MarshalBinary"
	c := o.cptr(op)
	if o.nx < 0 || c.ctx == nil {
		return nil, &Error{Op: op, Msg: "the optimizer has no state yet: run Minimize first"}
	}
	var b bytes.Buffer
	b.WriteString(optStateMagic)
	w := func(v any) { _ = binary.Write(&b, binary.LittleEndian, v) }
	w(int32(o.p.Type))
	w(o.nx)
	w(int64(c.iter))
	w(boolByte(bool(c.just_initialized)))
	w(float32(c.loss_before))
	w(float32(c.loss_after))
	if o.p.Type == Adam {
		w(float32(c.adam.fx_best))
		w(float32(c.adam.fx_prev))
		w(int32(c.adam.n_no_improvement))
	} else {
		l := &c.lbfgs
		w(float32(l.fx_best))
		w(float32(l.step))
		w([4]int32{int32(l.j), int32(l.k), int32(l.end), int32(l.n_no_improvement)})
	}
	for _, v := range o.stateVectors() {
		w(int64(len(v)))
		w(v)
	}
	return b.Bytes(), nil
}

func boolByte(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}

// UnmarshalBinary restores a state saved by MarshalBinary. The optimizer must have the same
// method (and Past, and for L-BFGS M) as the one that saved it; the next Minimize continues from
// the saved iteration, given a function of the same number of parameter elements.
func (o *Optimizer) UnmarshalBinary(data []byte) (err error) {
	defer errOnClosed(&err)
	const op = "Optimizer.UnmarshalBinary"
	c := o.cptr(op)
	bad := func(msg string) error { return &Error{Op: op, Msg: msg} }
	if !bytes.HasPrefix(data, []byte(optStateMagic)) {
		return bad("not an optimizer state (bad magic)")
	}
	r := bytes.NewReader(data[len(optStateMagic):])
	var rerr error
	rd := func(v any) {
		if rerr == nil {
			rerr = binary.Read(r, binary.LittleEndian, v)
		}
	}
	var typ int32
	var nx, iter int64
	var justInit uint8
	var lossBefore, lossAfter float32
	rd(&typ)
	rd(&nx)
	rd(&iter)
	rd(&justInit)
	rd(&lossBefore)
	rd(&lossAfter)
	if rerr != nil {
		return bad("truncated state: " + rerr.Error())
	}
	if OptimizerType(typ) != o.p.Type {
		return bad(fmt.Sprintf("the state is for %s, this optimizer is %s", OptimizerType(typ), o.p.Type))
	}
	if nx <= 0 || nx > math.MaxInt32*int64(64) || iter < 0 || iter > math.MaxInt32 {
		return bad(fmt.Sprintf("implausible state (nx %d, iter %d)", nx, iter))
	}
	// fresh state of the right size
	C.ggo_opt_free_state(c)
	o.nx = -1
	if msg := takeCError(C.ggo_ggml_opt_init(c, o.p.toC(), C.int64_t(nx))); msg != "" || c.ctx == nil {
		return bad("could not create the optimizer state: " + msg)
	}
	o.nx = nx
	c.iter = C.int(iter)
	c.just_initialized = C.bool(justInit != 0)
	c.loss_before = C.float(lossBefore)
	c.loss_after = C.float(lossAfter)
	if o.p.Type == Adam {
		var best, prev float32
		var noImp int32
		rd(&best)
		rd(&prev)
		rd(&noImp)
		c.adam.fx_best, c.adam.fx_prev, c.adam.n_no_improvement = C.float(best), C.float(prev), C.int(noImp)
	} else {
		var best, step float32
		var ints [4]int32
		rd(&best)
		rd(&step)
		rd(&ints)
		l := &c.lbfgs
		l.fx_best, l.step = C.float(best), C.float(step)
		l.j, l.k, l.end, l.n_no_improvement = C.int(ints[0]), C.int(ints[1]), C.int(ints[2]), C.int(ints[3])
	}
	for i, v := range o.stateVectors() {
		var n int64
		rd(&n)
		if rerr == nil && n != int64(len(v)) {
			o.nx = -1
			return bad(fmt.Sprintf("state vector %d has %d elements, this optimizer needs %d (same Past and M?)", i, n, len(v)))
		}
		rd(v)
	}
	if rerr != nil {
		o.nx = -1
		if errors.Is(rerr, bytes.ErrTooLarge) {
			return bad(rerr.Error())
		}
		return bad("truncated state: " + rerr.Error())
	}
	if r.Len() != 0 {
		o.nx = -1
		return bad(fmt.Sprintf("%d trailing bytes after the state", r.Len()))
	}
	return nil
}
