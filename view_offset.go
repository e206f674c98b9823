//go:build cgo

package ggml

/*
#include "ggml_go.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// SetViewOffset moves the view t to byte offset off of the tensor it views (its ViewSrc) and,
// when that tensor has memory, points t's data there. It lets a graph that was built and
// allocated once write or read a different part of a long-lived tensor on each compute (a KV
// cache cell, for instance) without being rebuilt: move every view node that refers to the
// part, including the result of a Cpy into a view, which is itself a view of the same tensor.
// It returns an error when t is not a view or the view would reach past the end of its source.
func (t *Tensor) SetViewOffset(off uint64) (err error) {
	defer errOnClosed(&err)
	const op = "Tensor.SetViewOffset"
	c := t.cptr(op)
	src := c.view_src
	if src == nil {
		return &Error{Op: op, Shapes: t.describe(), Msg: "the tensor is not a view"}
	}
	need, have := uint64(C.ggml_nbytes(c)), uint64(C.ggml_nbytes(src))
	if off > have || need > have-off {
		return &Error{Op: op, Shapes: t.describe(),
			Msg: fmt.Sprintf("a view of %d bytes at offset %d reaches past the %d bytes of its source", need, off, have)}
	}
	c.view_offs = C.size_t(off)
	if src.data != nil {
		c.data = unsafe.Add(src.data, off)
	}
	return nil
}
