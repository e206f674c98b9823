//go:build cgo

package ggml

/*
#include "ggml.h"
*/
import "C"

import "fmt"

func (t Type) valid() bool {
	return t >= 0 && t < TypeCount && t != 4 && t != 5
}

// Size returns the bytes of one block of the type (ggml_type_size); 0 for an invalid type.
func (t Type) Size() uint64 {
	if !t.valid() {
		return 0
	}
	return uint64(C.ggml_type_size(C.enum_ggml_type(t)))
}

// BlockSize returns the number of elements per block (1 for non-quantized types;
// ggml_blck_size); 0 for an invalid type.
func (t Type) BlockSize() int {
	if !t.valid() {
		return 0
	}
	return int(C.ggml_blck_size(C.enum_ggml_type(t)))
}

// IsQuantized reports whether the type is a block-quantized type (ggml_is_quantized).
func (t Type) IsQuantized() bool {
	if !t.valid() {
		return false
	}
	return bool(C.ggml_is_quantized(C.enum_ggml_type(t)))
}

// RowSize returns the bytes of n elements of the type (ggml_row_size). n must be a multiple
// of BlockSize; RowSize returns 0 for an invalid type or n.
func (t Type) RowSize(n int64) uint64 {
	bs := int64(t.BlockSize())
	if bs == 0 || n < 0 || n%bs != 0 {
		return 0
	}
	return uint64(C.ggml_row_size(C.enum_ggml_type(t), C.int64_t(n)))
}

// Valid reports whether t is a tensor type of the C library.
func (t Type) Valid() bool {
	return t.valid()
}

// String returns the C library's name of the op (ggml_op_name), e.g. "MUL_MAT".
func (o Op) String() string {
	if o < 0 || o >= OpCount {
		return fmt.Sprintf("Op(%d)", int32(o))
	}
	return C.GoString(C.ggml_op_name(C.enum_ggml_op(o)))
}

// Symbol returns the op's short symbol (ggml_op_symbol), e.g. "X*Y" for OpMulMat.
func (o Op) Symbol() string {
	if o < 0 || o >= OpCount {
		return fmt.Sprintf("Op(%d)", int32(o))
	}
	return C.GoString(C.ggml_op_symbol(C.enum_ggml_op(o)))
}

// String returns the C library's name of the unary op (ggml_unary_op_name), e.g. "GELU".
func (u UnaryOp) String() string {
	if u < 0 || u >= UnaryCount {
		return fmt.Sprintf("UnaryOp(%d)", int32(u))
	}
	return C.GoString(C.ggml_unary_op_name(C.enum_ggml_unary_op(u)))
}

// String returns the C library's name of the type (ggml_type_name), e.g. "q4_0".
func (t Type) String() string {
	if t < 0 || t >= Type(C.GGML_TYPE_COUNT) {
		return fmt.Sprintf("Type(%d)", int32(t))
	}
	name := C.ggml_type_name(C.enum_ggml_type(t))
	if name == nil {
		return fmt.Sprintf("Type(%d)", int32(t))
	}
	return C.GoString(name)
}

// tensorNbytes creates a context, a tensor of the given type and shape in it, and returns
// ggml_nbytes of the tensor (used by the smoke test).
func tensorNbytes(t Type, ne ...int64) (uint64, error) {
	if len(ne) < 1 || len(ne) > 4 {
		return 0, fmt.Errorf("ggml: tensorNbytes: %d dimensions", len(ne))
	}
	params := C.struct_ggml_init_params{
		mem_size:   C.size_t(C.ggml_tensor_overhead() * 4),
		mem_buffer: nil,
		no_alloc:   C.bool(true),
	}
	ctx := C.ggml_init(params)
	if ctx == nil {
		return 0, fmt.Errorf("ggml: ggml_init failed")
	}
	defer C.ggml_free(ctx)
	var cne [4]C.int64_t
	for i, n := range ne {
		cne[i] = C.int64_t(n)
	}
	tensor := C.ggml_new_tensor(ctx, C.enum_ggml_type(t), C.int(len(ne)), &cne[0])
	if tensor == nil {
		return 0, fmt.Errorf("ggml: ggml_new_tensor failed")
	}
	return uint64(C.ggml_nbytes(tensor)), nil
}
