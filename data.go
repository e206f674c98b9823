//go:build cgo

package ggml

/*
#include "ggml_go.h"

static char * ggo_ggml_backend_tensor_set(struct ggml_tensor * t, const void * data, size_t offset, size_t size) {
    GGO_VCALL(ggml_backend_tensor_set(t, data, offset, size));
}
static char * ggo_ggml_backend_tensor_get(const struct ggml_tensor * t, void * data, size_t offset, size_t size) {
    GGO_VCALL(ggml_backend_tensor_get(t, data, offset, size));
}
// copy into / out of a tensor whose memory is in a context arena (no buffer)
static void ggo_arena_set(struct ggml_tensor * t, const void * data, size_t offset, size_t size) {
    memcpy((char *) t->data + offset, data, size);
}
static void ggo_arena_get(const struct ggml_tensor * t, void * data, size_t offset, size_t size) {
    memcpy(data, (const char *) t->data + offset, size);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Data in and out of tensors.
//
// The typed accessors copy the tensor's elements in logical order (dimension 0 fastest) from or
// into Go slices. They work for tensors in a context arena and for tensors in any backend
// buffer (through ggml_backend_tensor_set/get, so device memory works too). Views with any
// strides are supported for non-quantized types; quantized tensors can only be read and
// written as raw bytes, and only when contiguous. A length or type mismatch is an error naming
// the tensor and the sizes.

// storage checks that t has memory and returns the C tensor and whether it is in a buffer.
func (t *Tensor) storage(op string) (*C.struct_ggml_tensor, bool, error) {
	if t == nil || t.c == nil {
		return nil, false, &Error{Op: op, Msg: "nil *Tensor"}
	}
	if t.ctx != nil && t.ctx.dead.Load() {
		return nil, false, &Error{Op: op, Msg: "tensor used after its context was closed", Err: ErrClosed}
	}
	c := t.c
	if c.data == nil {
		if c.padding[0] == C.GGO_DETACHED {
			return nil, false, &Error{Op: op, Shapes: t.label(), Err: ErrClosed,
				Msg: "the buffer holding the tensor was closed: keep the buffer open while its tensors are used, or place the tensor in another buffer"}
		}
		return nil, false, &Error{Op: op, Shapes: t.label(), Msg: "tensor has no data: allocate it first (a context without NoAlloc, AllocContextTensors, a TensorAllocator, ...)"}
	}
	return c, c.buffer != nil, nil
}

// label names the tensor for error messages: `"name" [..] type` or `[..] type`.
func (t *Tensor) label() string {
	if t == nil || t.c == nil {
		return "nil"
	}
	if t.ctx != nil && t.ctx.dead.Load() {
		return "closed"
	}
	if name := C.GoString(&t.c.name[0]); name != "" {
		return fmt.Sprintf("%q %s", name, t.describe())
	}
	return t.describe()
}

// rawCopy moves size bytes between p and the tensor's memory at offset off.
func rawCopy(op string, c *C.struct_ggml_tensor, inBuffer, write bool, off uint64, p unsafe.Pointer, size uint64) error {
	if size == 0 {
		return nil
	}
	if inBuffer {
		var msg string
		if write {
			msg = takeCError(C.ggo_ggml_backend_tensor_set(c, p, C.size_t(off), C.size_t(size)))
		} else {
			msg = takeCError(C.ggo_ggml_backend_tensor_get(c, p, C.size_t(off), C.size_t(size)))
		}
		if msg != "" {
			return &Error{Op: op, Msg: msg}
		}
		return nil
	}
	if write {
		C.ggo_arena_set(c, p, C.size_t(off), C.size_t(size))
	} else {
		C.ggo_arena_get(c, p, C.size_t(off), C.size_t(size))
	}
	return nil
}

// transfer copies n elements of elemSize bytes between the Go memory at p (dense, logical
// order) and the tensor, honouring the tensor's strides.
func (t *Tensor) transfer(op string, write bool, want Type, p unsafe.Pointer, n int, elemSize uint64) error {
	c, inBuffer, err := t.storage(op)
	if err != nil {
		return err
	}
	if typ := Type(c._type); typ != want {
		return &Error{Op: op, Shapes: t.label(), Msg: fmt.Sprintf("tensor type is %s, %s needs %s", typ, op, want)}
	}
	if total := int64(C.ggml_nelements(c)); int64(n) != total {
		return &Error{Op: op, Shapes: t.label(), Msg: fmt.Sprintf("slice has %d elements, tensor has %d", n, total)}
	}
	if n == 0 {
		return nil
	}
	if bool(C.ggml_is_contiguous(c)) {
		return rawCopy(op, c, inBuffer, write, 0, p, uint64(n)*elemSize)
	}
	var ne [4]int64
	var nb [4]uint64
	for i := 0; i < 4; i++ {
		ne[i], nb[i] = int64(c.ne[i]), uint64(c.nb[i])
	}
	rowBytes := uint64(ne[0]) * elemSize
	var dst uint64 // byte offset in the Go memory
	for i3 := int64(0); i3 < ne[3]; i3++ {
		for i2 := int64(0); i2 < ne[2]; i2++ {
			for i1 := int64(0); i1 < ne[1]; i1++ {
				off := uint64(i1)*nb[1] + uint64(i2)*nb[2] + uint64(i3)*nb[3]
				if nb[0] == elemSize {
					if err := rawCopy(op, c, inBuffer, write, off, unsafe.Add(p, dst), rowBytes); err != nil {
						return err
					}
					dst += rowBytes
					continue
				}
				for i0 := int64(0); i0 < ne[0]; i0++ {
					if err := rawCopy(op, c, inBuffer, write, off+uint64(i0)*nb[0], unsafe.Add(p, dst), elemSize); err != nil {
						return err
					}
					dst += elemSize
				}
			}
		}
	}
	return nil
}

// SetFloat32 writes v into the tensor. The tensor must be F32, or F16 (values are converted),
// and have len(v) elements.
func (t *Tensor) SetFloat32(v []float32) error {
	const op = "SetFloat32"
	if _, _, err := t.storage(op); err != nil {
		return err
	}
	if t.Type() == TypeF16 {
		return t.SetFloat16(Float16Slice(v))
	}
	return t.transfer(op, true, TypeF32, sliceData(v), len(v), 4)
}

// Float32 reads the tensor's elements. The tensor must be F32, or F16 (values are converted).
func (t *Tensor) Float32() ([]float32, error) {
	const op = "Float32"
	if _, _, err := t.storage(op); err != nil {
		return nil, err
	}
	if t.Type() == TypeF16 {
		h, err := t.Float16()
		if err != nil {
			return nil, err
		}
		return Float32Slice(h), nil
	}
	out := make([]float32, t.NumElements())
	if err := t.transfer(op, false, TypeF32, sliceData(out), len(out), 4); err != nil {
		return nil, err
	}
	return out, nil
}

// SetFloat16 writes v into an F16 tensor of len(v) elements.
func (t *Tensor) SetFloat16(v []Float16) error {
	return t.transfer("SetFloat16", true, TypeF16, sliceData(v), len(v), 2)
}

// Float16 reads the elements of an F16 tensor.
func (t *Tensor) Float16() ([]Float16, error) {
	if _, _, err := t.storage("Float16"); err != nil {
		return nil, err
	}
	out := make([]Float16, t.NumElements())
	if err := t.transfer("Float16", false, TypeF16, sliceData(out), len(out), 2); err != nil {
		return nil, err
	}
	return out, nil
}

// SetInt32 writes v into an I32 tensor of len(v) elements.
func (t *Tensor) SetInt32(v []int32) error {
	return t.transfer("SetInt32", true, TypeI32, sliceData(v), len(v), 4)
}

// Int32 reads the elements of an I32 tensor.
func (t *Tensor) Int32() ([]int32, error) {
	if _, _, err := t.storage("Int32"); err != nil {
		return nil, err
	}
	out := make([]int32, t.NumElements())
	if err := t.transfer("Int32", false, TypeI32, sliceData(out), len(out), 4); err != nil {
		return nil, err
	}
	return out, nil
}

// SetInt16 writes v into an I16 tensor of len(v) elements.
func (t *Tensor) SetInt16(v []int16) error {
	return t.transfer("SetInt16", true, TypeI16, sliceData(v), len(v), 2)
}

// Int16 reads the elements of an I16 tensor.
func (t *Tensor) Int16() ([]int16, error) {
	if _, _, err := t.storage("Int16"); err != nil {
		return nil, err
	}
	out := make([]int16, t.NumElements())
	if err := t.transfer("Int16", false, TypeI16, sliceData(out), len(out), 2); err != nil {
		return nil, err
	}
	return out, nil
}

// SetInt8 writes v into an I8 tensor of len(v) elements.
func (t *Tensor) SetInt8(v []int8) error {
	return t.transfer("SetInt8", true, TypeI8, sliceData(v), len(v), 1)
}

// Int8 reads the elements of an I8 tensor.
func (t *Tensor) Int8() ([]int8, error) {
	if _, _, err := t.storage("Int8"); err != nil {
		return nil, err
	}
	out := make([]int8, t.NumElements())
	if err := t.transfer("Int8", false, TypeI8, sliceData(out), len(out), 1); err != nil {
		return nil, err
	}
	return out, nil
}

// SetBytes writes the tensor's raw memory: len(b) must equal Nbytes and the tensor must be
// contiguous. This is how quantized data is loaded.
func (t *Tensor) SetBytes(b []byte) error {
	return t.rawBytes("SetBytes", true, b)
}

// Bytes returns a copy of the tensor's raw memory (Nbytes bytes; the tensor must be
// contiguous).
func (t *Tensor) Bytes() ([]byte, error) {
	if _, _, err := t.storage("Bytes"); err != nil {
		return nil, err
	}
	out := make([]byte, t.Nbytes())
	if err := t.rawBytes("Bytes", false, out); err != nil {
		return nil, err
	}
	return out, nil
}

// WriteAt writes b at byte offset off of a contiguous tensor's memory (a partial SetBytes).
func (t *Tensor) WriteAt(b []byte, off int64) (int, error) {
	return t.rawRange("WriteAt", true, b, off)
}

// ReadAt reads len(b) bytes at byte offset off of a contiguous tensor's memory.
func (t *Tensor) ReadAt(b []byte, off int64) (int, error) {
	return t.rawRange("ReadAt", false, b, off)
}

func (t *Tensor) rawBytes(op string, write bool, b []byte) error {
	c, inBuffer, err := t.storage(op)
	if err != nil {
		return err
	}
	if !bool(C.ggml_is_contiguous(c)) {
		return &Error{Op: op, Shapes: t.label(), Msg: "tensor is not contiguous (use Cont, or the typed accessors)"}
	}
	if n := uint64(C.ggml_nbytes(c)); uint64(len(b)) != n {
		return &Error{Op: op, Shapes: t.label(), Msg: fmt.Sprintf("slice has %d bytes, tensor has %d", len(b), n)}
	}
	return rawCopy(op, c, inBuffer, write, 0, sliceData(b), uint64(len(b)))
}

func (t *Tensor) rawRange(op string, write bool, b []byte, off int64) (int, error) {
	c, inBuffer, err := t.storage(op)
	if err != nil {
		return 0, err
	}
	if !bool(C.ggml_is_contiguous(c)) {
		return 0, &Error{Op: op, Shapes: t.label(), Msg: "tensor is not contiguous"}
	}
	n := uint64(C.ggml_nbytes(c))
	if off < 0 || uint64(off) > n || uint64(len(b)) > n-uint64(off) {
		return 0, &Error{Op: op, Shapes: t.label(), Msg: fmt.Sprintf("range [%d,%d) outside the tensor's %d bytes", off, off+int64(len(b)), n)}
	}
	if err := rawCopy(op, c, inBuffer, write, uint64(off), sliceData(b), uint64(len(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// SetZero sets every byte of the tensor's memory to zero.
func (t *Tensor) SetZero() error {
	const op = "SetZero"
	c, inBuffer, err := t.storage(op)
	if err != nil {
		return err
	}
	if !inBuffer {
		C.ggml_set_zero(c)
		return nil
	}
	zero := make([]byte, uint64(C.ggml_nbytes(c)))
	return rawCopy(op, c, inBuffer, true, 0, sliceData(zero), uint64(len(zero)))
}

// Fill sets every element of an F32, F16, I32, I16 or I8 tensor to v (converted to the type).
func (t *Tensor) Fill(v float32) error {
	if _, _, err := t.storage("Fill"); err != nil {
		return err
	}
	n := t.NumElements()
	switch typ := t.Type(); typ {
	case TypeF32, TypeF16:
		s := make([]float32, n)
		for i := range s {
			s[i] = v
		}
		return t.SetFloat32(s)
	case TypeI32:
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(v)
		}
		return t.SetInt32(s)
	case TypeI16:
		s := make([]int16, n)
		for i := range s {
			s[i] = int16(v)
		}
		return t.SetInt16(s)
	case TypeI8:
		s := make([]int8, n)
		for i := range s {
			s[i] = int8(v)
		}
		return t.SetInt8(s)
	default:
		return &Error{Op: "Fill", Shapes: t.label(), Msg: fmt.Sprintf("cannot fill a %s tensor", typ)}
	}
}

// sliceData returns the address of a slice's first element (nil for an empty slice).
func sliceData[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}
