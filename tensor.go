//go:build cgo

package ggml

/*
#include "ggml_go.h"

static ggo_pres ggo_ggml_new_tensor(struct ggml_context * ctx, enum ggml_type type, int n_dims,
                                       int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    int64_t ne[4] = { ne0, ne1, ne2, ne3 };
    GGO_PCALL(ggml_new_tensor(ctx, type, n_dims, ne));
}
static ggo_pres ggo_ggml_new_i32(struct ggml_context * ctx, int32_t v) { GGO_PCALL(ggml_new_i32(ctx, v)); }
static ggo_pres ggo_ggml_new_f32(struct ggml_context * ctx, float v) { GGO_PCALL(ggml_new_f32(ctx, v)); }
static ggo_pres ggo_ggml_dup_tensor(struct ggml_context * ctx, struct ggml_tensor * t) { GGO_PCALL(ggml_dup_tensor(ctx, t)); }
static ggo_pres ggo_ggml_view_tensor(struct ggml_context * ctx, struct ggml_tensor * t) { GGO_PCALL(ggml_view_tensor(ctx, t)); }
static char * ggo_ggml_mul_mat_set_prec(struct ggml_tensor * t, enum ggml_prec prec) { GGO_VCALL(ggml_mul_mat_set_prec(t, prec)); }
static void ggo_tensor_ne(const struct ggml_tensor * t, int64_t * ne, uint64_t * nb) {
    for (int i = 0; i < GGML_MAX_DIMS; i++) {
        ne[i] = t->ne[i];
        nb[i] = (uint64_t) t->nb[i];
    }
}
static struct ggml_tensor * ggo_tensor_src(const struct ggml_tensor * t, int i) { return t->src[i]; }
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// MaxDims is the number of dimensions of every tensor (GGML_MAX_DIMS); unused dimensions have
// extent 1.
const MaxDims = 4

// MaxSrc is the largest number of operands of a node (GGML_MAX_SRC).
const MaxSrc = 10

// MaxName is the size of a tensor's name buffer including the terminating NUL (GGML_MAX_NAME).
const MaxName = 64

// Tensor is an n-dimensional array (struct ggml_tensor) in a Context: a leaf holding data or a
// graph node recording an operation on other tensors. A *Tensor stays valid as long as its
// context is open; any use after the context was closed panics with a *Error wrapping
// ErrClosed. Each C tensor of a Go context has exactly one *Tensor, so tensors can be compared
// with == (tensors handed out by C code from contexts Go does not know are borrowed copies).
type Tensor struct {
	c   *C.struct_ggml_tensor
	ctx *Context // nil for borrowed tensors (handed out by C code; no liveness check)
}

// cptr returns the C tensor, panicking with a *Error naming op when the tensor is nil or its
// context was closed.
func (t *Tensor) cptr(op string) *C.struct_ggml_tensor {
	if t == nil || t.c == nil {
		panic(&Error{Op: op, Msg: "nil *Tensor"})
	}
	if t.ctx != nil && t.ctx.dead.Load() {
		panic(&Error{Op: op, Msg: "tensor used after its context was closed", Err: ErrClosed})
	}
	return t.c
}

// optPtr is cptr for optional operands: nil stays nil.
func (t *Tensor) optPtr(op string) *C.struct_ggml_tensor {
	if t == nil {
		return nil
	}
	return t.cptr(op)
}

// Context returns the context that holds the tensor (nil for a borrowed tensor).
func (t *Tensor) Context() *Context {
	return t.ctx
}

// Type returns the element type.
func (t *Tensor) Type() Type {
	return Type(t.cptr("Type")._type)
}

// Ne returns the extent of all four dimensions (ne[0] varies fastest).
func (t *Tensor) Ne() [MaxDims]int64 {
	var ne [MaxDims]int64
	var nb [MaxDims]uint64
	C.ggo_tensor_ne(t.cptr("Ne"), (*C.int64_t)(unsafe.Pointer(&ne[0])), (*C.uint64_t)(unsafe.Pointer(&nb[0])))
	return ne
}

// Nb returns the byte strides of all four dimensions.
func (t *Tensor) Nb() [MaxDims]uint64 {
	var ne [MaxDims]int64
	var nb [MaxDims]uint64
	C.ggo_tensor_ne(t.cptr("Nb"), (*C.int64_t)(unsafe.Pointer(&ne[0])), (*C.uint64_t)(unsafe.Pointer(&nb[0])))
	return nb
}

// Shape returns the extents of the first NDims dimensions.
func (t *Tensor) Shape() []int64 {
	ne := t.Ne()
	return append([]int64(nil), ne[:t.NDims()]...)
}

// Strides returns the byte strides of the first NDims dimensions.
func (t *Tensor) Strides() []uint64 {
	nb := t.Nb()
	return append([]uint64(nil), nb[:t.NDims()]...)
}

// NDims returns the number of dimensions, ignoring trailing dimensions of extent 1 (at least
// 1; ggml_n_dims).
func (t *Tensor) NDims() int {
	return int(C.ggml_n_dims(t.cptr("NDims")))
}

// Name returns the tensor's name (ggml_get_name).
func (t *Tensor) Name() string {
	return C.GoString(C.ggml_get_name(t.cptr("Name")))
}

// SetName sets the tensor's name, truncated to MaxName-1 bytes (ggml_set_name), and returns t.
func (t *Tensor) SetName(name string) *Tensor {
	c := t.cptr("SetName")
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	C.ggml_set_name(c, cname)
	return t
}

// Nbytes returns the bytes spanned by the tensor's data (ggml_nbytes).
func (t *Tensor) Nbytes() uint64 {
	return uint64(C.ggml_nbytes(t.cptr("Nbytes")))
}

// NbytesPad returns Nbytes rounded up to the arena alignment (ggml_nbytes_pad).
func (t *Tensor) NbytesPad() uint64 {
	return uint64(C.ggml_nbytes_pad(t.cptr("NbytesPad")))
}

// ElementSize returns the bytes of one block of the tensor's type (ggml_element_size).
func (t *Tensor) ElementSize() uint64 {
	return uint64(C.ggml_element_size(t.cptr("ElementSize")))
}

// NumElements returns the number of elements (ggml_nelements).
func (t *Tensor) NumElements() int64 {
	return int64(C.ggml_nelements(t.cptr("NumElements")))
}

// NumRows returns the number of rows, ne[1]*ne[2]*ne[3] (ggml_nrows).
func (t *Tensor) NumRows() int64 {
	return int64(C.ggml_nrows(t.cptr("NumRows")))
}

// IsContiguous reports whether the elements are stored densely in order (ggml_is_contiguous).
func (t *Tensor) IsContiguous() bool {
	return bool(C.ggml_is_contiguous(t.cptr("IsContiguous")))
}

// IsTransposed reports whether dimensions 0 and 1 are swapped in memory (ggml_is_transposed).
func (t *Tensor) IsTransposed() bool {
	return bool(C.ggml_is_transposed(t.cptr("IsTransposed")))
}

// IsPermuted reports whether the strides are not in increasing order (ggml_is_permuted).
func (t *Tensor) IsPermuted() bool {
	return bool(C.ggml_is_permuted(t.cptr("IsPermuted")))
}

// IsScalar reports whether the tensor has one element (ggml_is_scalar).
func (t *Tensor) IsScalar() bool {
	return bool(C.ggml_is_scalar(t.cptr("IsScalar")))
}

// IsVector reports whether only dimension 0 may exceed 1 (ggml_is_vector).
func (t *Tensor) IsVector() bool {
	return bool(C.ggml_is_vector(t.cptr("IsVector")))
}

// IsMatrix reports whether only dimensions 0 and 1 may exceed 1 (ggml_is_matrix).
func (t *Tensor) IsMatrix() bool {
	return bool(C.ggml_is_matrix(t.cptr("IsMatrix")))
}

// Is3D reports whether dimension 3 has extent 1 (ggml_is_3d).
func (t *Tensor) Is3D() bool {
	return bool(C.ggml_is_3d(t.cptr("Is3D")))
}

// SameShape reports whether t and u have the same extents (ggml_are_same_shape).
func (t *Tensor) SameShape(u *Tensor) bool {
	return bool(C.ggml_are_same_shape(t.cptr("SameShape"), u.cptr("SameShape")))
}

// Op returns the operation that produces the tensor (OpNone for leaves).
func (t *Tensor) Op() Op {
	return Op(t.cptr("Op").op)
}

// UnaryOp returns the function of an OpUnary node (ggml_get_unary_op); meaningless for other ops.
func (t *Tensor) UnaryOp() UnaryOp {
	c := t.cptr("UnaryOp")
	if Op(c.op) != OpUnary {
		return UnaryOp(-1)
	}
	return UnaryOp(C.ggml_get_unary_op(c))
}

// OpDesc returns the op name, or the unary op name for unary nodes (ggml_op_desc).
func (t *Tensor) OpDesc() string {
	return C.GoString(C.ggml_op_desc(t.cptr("OpDesc")))
}

// OpParams returns the raw op parameters (16 int32 words; see ggml-impl.h for their layout).
func (t *Tensor) OpParams() [16]int32 {
	c := t.cptr("OpParams")
	var out [16]int32
	for i := range out {
		out[i] = int32(c.op_params[i])
	}
	return out
}

// Src returns operand i (0 <= i < MaxSrc) of the node, or nil.
func (t *Tensor) Src(i int) *Tensor {
	c := t.cptr("Src")
	if i < 0 || i >= MaxSrc {
		panic(&Error{Op: "Src", Shapes: t.describe(), Msg: fmt.Sprintf("source index %d out of range [0,%d)", i, MaxSrc)})
	}
	return tensorFromC(C.ggo_tensor_src(c, C.int(i)))
}

// ViewSrc returns the tensor whose memory this view aliases, or nil.
func (t *Tensor) ViewSrc() *Tensor {
	return tensorFromC(t.cptr("ViewSrc").view_src)
}

// ViewOffset returns the byte offset of this view into ViewSrc's data.
func (t *Tensor) ViewOffset() uint64 {
	return uint64(t.cptr("ViewOffset").view_offs)
}

// HasData reports whether memory has been assigned to the tensor (data != NULL).
func (t *Tensor) HasData() bool {
	return t.cptr("HasData").data != nil
}

// HasBuffer reports whether the tensor's memory lives in a backend buffer (as opposed to the
// context's arena).
func (t *Tensor) HasBuffer() bool {
	return t.cptr("HasBuffer").buffer != nil
}

// Buffer returns the backend buffer holding the tensor's memory, or nil. The *Buffer is
// borrowed: closing it does nothing; the buffer belongs to whoever allocated it.
func (t *Tensor) Buffer() *Buffer {
	c := t.cptr("Buffer")
	if c.buffer == nil {
		return nil
	}
	return borrowedBuffer(c.buffer)
}

// SetMulMatPrec requests the accumulation precision of a MulMat node (ggml_mul_mat_set_prec).
func (t *Tensor) SetMulMatPrec(p Prec) {
	c := t.cptr("SetMulMatPrec")
	if msg := takeCError(C.ggo_ggml_mul_mat_set_prec(c, C.enum_ggml_prec(p))); msg != "" {
		panic(&Error{Op: "SetMulMatPrec", Shapes: t.describe(), Msg: msg})
	}
}

// String describes the tensor, e.g. `"kq" f32 [64,32,1,1] MUL_MAT`.
func (t *Tensor) String() string {
	if t == nil || t.c == nil {
		return "<nil tensor>"
	}
	if t.ctx != nil && t.ctx.dead.Load() {
		return "<tensor of a closed context>"
	}
	var b strings.Builder
	if name := t.Name(); name != "" {
		fmt.Fprintf(&b, "%q ", name)
	}
	b.WriteString(t.describe())
	if op := t.Op(); op != OpNone {
		b.WriteString(" ")
		b.WriteString(t.OpDesc())
	}
	return b.String()
}

// describe formats the shape and type, e.g. "[64,32,1,1] f32" (safe on nil/closed tensors).
func (t *Tensor) describe() string {
	if t == nil || t.c == nil {
		return "nil"
	}
	if t.ctx != nil && t.ctx.dead.Load() {
		return "closed"
	}
	c := t.c
	return fmt.Sprintf("[%d %d %d %d] %s", int64(c.ne[0]), int64(c.ne[1]), int64(c.ne[2]), int64(c.ne[3]), Type(c._type))
}

// describeOperands formats named operands for error messages: "a=[..] f32, b=[..] f32".
func describeOperands(names []string, ts []*Tensor) string {
	parts := make([]string, 0, len(ts))
	for i, t := range ts {
		if t == nil {
			continue
		}
		parts = append(parts, names[i]+"="+t.describe())
	}
	return strings.Join(parts, ", ")
}

// newTensorResult converts a constructor result to a *Tensor of ctx or panics with a *Error.
func (ctx *Context) newTensorResult(op, shapes string, r C.ggo_pres) *Tensor {
	msg := takeCError(r.err)
	if r.p == nil {
		if msg == "" {
			msg = "the C library returned no tensor"
		}
		panic(&Error{Op: op, Shapes: shapes, Msg: msg})
	}
	return ctx.wrap((*C.struct_ggml_tensor)(r.p))
}

func checkDims(op string, ne []int64) {
	if len(ne) < 1 || len(ne) > MaxDims {
		panic(&Error{Op: op, Shapes: fmt.Sprint(ne), Msg: fmt.Sprintf("need 1 to %d dimensions, got %d", MaxDims, len(ne))})
	}
}

// NewTensor creates a tensor of the given type and shape (1 to 4 extents; ggml_new_tensor).
// Its data is uninitialised (or absent when the context is NoAlloc).
func (ctx *Context) NewTensor(typ Type, ne ...int64) *Tensor {
	const op = "NewTensor"
	c := ctx.enter(op)
	defer ctx.busy.leave()
	checkDims(op, ne)
	var n [MaxDims]int64
	for i := range n {
		n[i] = 1
	}
	copy(n[:], ne)
	shapes := fmt.Sprintf("%v %s", ne, typ)
	r := C.ggo_ggml_new_tensor(c, C.enum_ggml_type(typ), C.int(len(ne)), C.int64_t(n[0]), C.int64_t(n[1]), C.int64_t(n[2]), C.int64_t(n[3]))
	return ctx.newTensorResult(op, shapes, r)
}

// NewTensor1D creates a 1-dimensional tensor (ggml_new_tensor_1d).
func (ctx *Context) NewTensor1D(typ Type, ne0 int64) *Tensor {
	return ctx.NewTensor(typ, ne0)
}

// NewTensor2D creates a 2-dimensional tensor (ggml_new_tensor_2d).
func (ctx *Context) NewTensor2D(typ Type, ne0, ne1 int64) *Tensor {
	return ctx.NewTensor(typ, ne0, ne1)
}

// NewTensor3D creates a 3-dimensional tensor (ggml_new_tensor_3d).
func (ctx *Context) NewTensor3D(typ Type, ne0, ne1, ne2 int64) *Tensor {
	return ctx.NewTensor(typ, ne0, ne1, ne2)
}

// NewTensor4D creates a 4-dimensional tensor (ggml_new_tensor_4d).
func (ctx *Context) NewTensor4D(typ Type, ne0, ne1, ne2, ne3 int64) *Tensor {
	return ctx.NewTensor(typ, ne0, ne1, ne2, ne3)
}

// NewI32 creates a one-element I32 tensor holding v (ggml_new_i32). The context must allocate
// data (not NoAlloc).
func (ctx *Context) NewI32(v int32) *Tensor {
	c := ctx.enter("NewI32")
	defer ctx.busy.leave()
	return ctx.newTensorResult("NewI32", fmt.Sprint(v), C.ggo_ggml_new_i32(c, C.int32_t(v)))
}

// NewF32 creates a one-element F32 tensor holding v (ggml_new_f32). The context must allocate
// data (not NoAlloc).
func (ctx *Context) NewF32(v float32) *Tensor {
	c := ctx.enter("NewF32")
	defer ctx.busy.leave()
	return ctx.newTensorResult("NewF32", fmt.Sprint(v), C.ggo_ggml_new_f32(c, C.float(v)))
}

// DupTensor creates a new tensor of src's type and shape in ctx, without copying data
// (ggml_dup_tensor).
func (ctx *Context) DupTensor(src *Tensor) *Tensor {
	const op = "DupTensor"
	c := ctx.enter(op)
	defer ctx.busy.leave()
	return ctx.newTensorResult(op, src.describe(), C.ggo_ggml_dup_tensor(c, src.cptr(op)))
}

// ViewTensor creates a view of all of src in ctx (ggml_view_tensor).
func (ctx *Context) ViewTensor(src *Tensor) *Tensor {
	const op = "ViewTensor"
	c := ctx.enter(op)
	defer ctx.busy.leave()
	return ctx.newTensorResult(op, src.describe(), C.ggo_ggml_view_tensor(c, src.cptr(op)))
}
