//go:build cgo

package ggml

/*
#include "ggml_go.h"

static ggo_ires ggo_ggml_quantize_chunk(enum ggml_type type, const float * src, void * dst, int nrows, int n_per_row, int64_t * hist) {
    GGO_ICALL(ggml_quantize_chunk(type, src, dst, 0, nrows, n_per_row, hist, NULL));
}
// dequantize through the type's to_float trait; returns 0 when the type has none
static int ggo_dequantize(enum ggml_type type, const void * src, float * dst, int k) {
    ggml_type_traits_t tt = ggml_internal_get_type_traits(type);
    if (tt.to_float == NULL) {
        return 0;
    }
    tt.to_float(src, dst, k);
    return 1;
}
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"
)

// Quantize converts rows of nPerRow float32 values to type typ (ggml_quantize_chunk): Q4_0,
// Q4_1, Q5_0, Q5_1, Q8_0, Q2_K..Q6_K, F16 or F32. len(src) must be a multiple of nPerRow and
// nPerRow a multiple of typ.BlockSize(). The result has typ.RowSize(nPerRow) bytes per row,
// ready for Tensor.SetBytes.
func Quantize(typ Type, src []float32, nPerRow int) ([]byte, error) {
	const op = "Quantize"
	shapes := fmt.Sprintf("type=%s, n=%d, nPerRow=%d", typ, len(src), nPerRow)
	if !typ.valid() {
		return nil, &Error{Op: op, Shapes: shapes, Msg: "invalid type"}
	}
	if nPerRow <= 0 || len(src)%nPerRow != 0 {
		return nil, &Error{Op: op, Shapes: shapes, Msg: "the values do not form whole rows of nPerRow"}
	}
	if nPerRow%typ.BlockSize() != 0 {
		return nil, &Error{Op: op, Shapes: shapes, Msg: fmt.Sprintf("nPerRow is not a multiple of the block size %d", typ.BlockSize())}
	}
	if len(src) > math.MaxInt32 {
		return nil, &Error{Op: op, Shapes: shapes, Msg: "too many values for one call"}
	}
	nrows := len(src) / nPerRow
	out := make([]byte, uint64(nrows)*typ.RowSize(int64(nPerRow)))
	if len(src) == 0 {
		return out, nil
	}
	var hist [16]int64
	r := C.ggo_ggml_quantize_chunk(C.enum_ggml_type(typ), (*C.float)(sliceData(src)), sliceData(out), C.int(nrows), C.int(nPerRow), (*C.int64_t)(sliceData(hist[:])))
	if msg := takeCError(r.err); msg != "" {
		return nil, &Error{Op: op, Shapes: shapes, Msg: msg}
	}
	if uint64(r.v) != uint64(len(out)) {
		return nil, &Error{Op: op, Shapes: shapes, Msg: fmt.Sprintf("wrote %d bytes, expected %d", int64(r.v), len(out))}
	}
	return out, nil
}

// Dequantize converts n values of type typ stored in data back to float32 (the type's
// to_float trait, ggml_internal_get_type_traits). n must be a multiple of typ.BlockSize() and
// data must hold exactly typ.RowSize(n) bytes.
func Dequantize(typ Type, data []byte, n int) ([]float32, error) {
	const op = "Dequantize"
	shapes := fmt.Sprintf("type=%s, bytes=%d, n=%d", typ, len(data), n)
	if !typ.valid() {
		return nil, &Error{Op: op, Shapes: shapes, Msg: "invalid type"}
	}
	if n < 0 || n > math.MaxInt32 || n%typ.BlockSize() != 0 {
		return nil, &Error{Op: op, Shapes: shapes, Msg: fmt.Sprintf("n must be a non-negative multiple of the block size %d", typ.BlockSize())}
	}
	if want := typ.RowSize(int64(n)); uint64(len(data)) != want {
		return nil, &Error{Op: op, Shapes: shapes, Msg: fmt.Sprintf("data has %d bytes, %d values of %s need %d", len(data), n, typ, want)}
	}
	out := make([]float32, n)
	if n == 0 {
		return out, nil
	}
	if typ == TypeF32 { // no to_float trait: the bytes are the values
		copy(unsafe.Slice((*byte)(sliceData(out)), len(data)), data)
		return out, nil
	}
	if C.ggo_dequantize(C.enum_ggml_type(typ), sliceData(data), (*C.float)(sliceData(out)), C.int(n)) == 0 {
		return nil, &Error{Op: op, Shapes: shapes, Msg: "the type has no conversion to float"}
	}
	return out, nil
}

// TypeTraits describes a tensor type (ggml_internal_get_type_traits).
type TypeTraits struct {
	Name        string
	BlockSize   int
	TypeSize    uint64 // bytes per block
	IsQuantized bool
	CanDequant  bool // has a to_float conversion
	CanQuant    bool // has a from_float conversion
	VecDotType  Type // the type the other operand of a dot product is converted to
}

// Traits returns the type's traits (ggml_internal_get_type_traits); the zero value for an
// invalid type.
func (t Type) Traits() TypeTraits {
	if !t.valid() {
		return TypeTraits{}
	}
	tt := C.ggml_internal_get_type_traits(C.enum_ggml_type(t))
	out := TypeTraits{
		BlockSize:   int(tt.blck_size),
		TypeSize:    uint64(tt.type_size),
		IsQuantized: bool(tt.is_quantized),
		CanDequant:  tt.to_float != nil,
		CanQuant:    tt.from_float != nil,
		VecDotType:  Type(tt.vec_dot_type),
	}
	if tt.type_name != nil {
		out.Name = C.GoString(tt.type_name)
	}
	return out
}

// FP16ToFP32 converts a half-precision value with the C library (ggml_fp16_to_fp32); it agrees
// with Float16.Float32.
func FP16ToFP32(h Float16) float32 {
	return float32(C.ggml_fp16_to_fp32(C.ggml_fp16_t(h)))
}

// FP32ToFP16 converts to half precision with the C library (ggml_fp32_to_fp16); it agrees with
// NewFloat16.
func FP32ToFP16(f float32) Float16 {
	return Float16(C.ggml_fp32_to_fp16(C.float(f)))
}

// FP16ToFP32Row converts a row of half-precision values with the C library
// (ggml_fp16_to_fp32_row).
func FP16ToFP32Row(src []Float16) []float32 {
	out := make([]float32, len(src))
	for len(src) > 0 {
		n := min(len(src), math.MaxInt32)
		C.ggml_fp16_to_fp32_row((*C.ggml_fp16_t)(sliceData(src)), (*C.float)(sliceData(out[len(out)-len(src):])), C.int(n))
		src = src[n:]
	}
	return out
}

// FP32ToFP16Row converts a row of float32 values to half precision with the C library
// (ggml_fp32_to_fp16_row).
func FP32ToFP16Row(src []float32) []Float16 {
	out := make([]Float16, len(src))
	for len(src) > 0 {
		n := min(len(src), math.MaxInt32)
		C.ggml_fp32_to_fp16_row((*C.float)(sliceData(src)), (*C.ggml_fp16_t)(sliceData(out[len(out)-len(src):])), C.int(n))
		src = src[n:]
	}
	return out
}
