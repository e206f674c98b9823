package ggml

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ggml-go/ggml/gguf"
)

// GGUFType returns the gguf tensor type with the same id as t. The two enums share their
// values (both are enum ggml_type), so the conversion never changes the number; ok is false
// when t is not a type of this library.
func GGUFType(t Type) (tt gguf.TensorType, ok bool) {
	if t < 0 || t >= TypeCount {
		return 0, false
	}
	tt = gguf.TensorType(t)
	return tt, tt.Valid()
}

// TypeFromGGUF returns the ggml type with the same id as the gguf tensor type tt; ok is false
// when tt is not one of the types of this library (an unknown or retired id).
func TypeFromGGUF(tt gguf.TensorType) (t Type, ok bool) {
	if !tt.Valid() || uint64(tt) >= uint64(TypeCount) {
		return 0, false
	}
	return Type(tt), true
}

// Float32Bytes returns the little-endian bytes of v (4 per element), the layout of an F32
// tensor in a GGUF file or a backend buffer.
func Float32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// BytesFloat32 decodes little-endian F32 bytes (as Float32Bytes writes them). It returns an
// error when len(b) is not a multiple of 4.
func BytesFloat32(b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("ggml: %d bytes are not a whole number of float32 values (4 bytes each)", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// Float16Bytes returns the little-endian bytes of v (2 per element), the layout of an F16
// tensor.
func Float16Bytes(v []Float16) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(x))
	}
	return b
}
