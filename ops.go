//go:build cgo

package ggml

// The graph-operation constructors are generated from ggml/include/ggml.h into ops_gen.go:
//
//go:generate go run ./tools/genops

/*
#include "ggml_go.h"

static ggo_pres ggo_ggml_mul_mat_id(struct ggml_context * ctx, struct ggml_tensor ** as, int n_as,
                                    struct ggml_tensor * ids, int id, struct ggml_tensor * b) {
    GGO_PCALL(ggml_mul_mat_id(ctx, as, n_as, ids, id, b));
}
*/
import "C"

import (
	"fmt"
	"math"
	"strconv"
)

// opResult converts the result of a generated constructor shim to the new *Tensor, or panics
// with a *Error carrying the C message and the operands (described only on failure).
func (ctx *Context) opResult(op string, r C.ggo_pres, describe func() string) *Tensor {
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "the C library returned no tensor"
		}
		panic(&Error{Op: op, Shapes: describe(), Msg: msg})
	}
	return ctx.wrap((*C.struct_ggml_tensor)(r.p))
}

// cInt converts an int parameter to C int, panicking with a *Error when it does not fit.
func cInt(op, name string, v int) C.int {
	if v < math.MinInt32 || v > math.MaxInt32 {
		panic(&Error{Op: op, Msg: name + " = " + strconv.Itoa(v) + " does not fit in a C int"})
	}
	return C.int(v)
}

// joinDesc joins an operand description and a parameter description.
func joinDesc(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ", " + b
}

// MulMatID multiplies each column of b by the matrix as[ids[id, column]] (mixture of experts;
// ggml_mul_mat_id). All matrices of as must have the same shape and type.
func (ctx *Context) MulMatID(as []*Tensor, ids *Tensor, id int, b *Tensor) *Tensor {
	const op = "MulMatID"
	c := ctx.cptr(op)
	describe := func() string {
		names := []string{}
		ts := []*Tensor{}
		for i, a := range as {
			names = append(names, fmt.Sprintf("as[%d]", i))
			ts = append(ts, a)
		}
		names = append(names, "ids", "b")
		ts = append(ts, ids, b)
		return joinDesc(describeOperands(names, ts), fmt.Sprintf("id=%d", id))
	}
	if len(as) == 0 {
		panic(&Error{Op: op, Shapes: describe(), Msg: "no matrices"})
	}
	cas := make([]*C.struct_ggml_tensor, len(as))
	for i, a := range as {
		cas[i] = a.cptr(op)
	}
	r := C.ggo_ggml_mul_mat_id(c, &cas[0], cInt(op, "len(as)", len(as)), ids.cptr(op), cInt(op, "id", id), b.cptr(op))
	return ctx.opResult(op, r, describe)
}
