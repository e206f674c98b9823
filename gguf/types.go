package gguf

import "fmt"

// ValueType is the type of a metadata value (enum gguf_type); the values are those stored in
// the file.
type ValueType uint32

// Metadata value types.
const (
	TypeUint8   ValueType = 0
	TypeInt8    ValueType = 1
	TypeUint16  ValueType = 2
	TypeInt16   ValueType = 3
	TypeUint32  ValueType = 4
	TypeInt32   ValueType = 5
	TypeFloat32 ValueType = 6
	TypeBool    ValueType = 7
	TypeString  ValueType = 8
	TypeArray   ValueType = 9
	TypeUint64  ValueType = 10
	TypeInt64   ValueType = 11
	TypeFloat64 ValueType = 12
)

var valueTypeNames = [...]string{
	TypeUint8: "u8", TypeInt8: "i8", TypeUint16: "u16", TypeInt16: "i16",
	TypeUint32: "u32", TypeInt32: "i32", TypeFloat32: "f32", TypeBool: "bool",
	TypeString: "str", TypeArray: "arr", TypeUint64: "u64", TypeInt64: "i64", TypeFloat64: "f64",
}

// String returns the short name of the value type ("u8", "str", "arr", ...).
func (t ValueType) String() string {
	if int64(t) < int64(len(valueTypeNames)) {
		return valueTypeNames[t]
	}
	return fmt.Sprintf("gguf_type(%d)", uint32(t))
}

// Valid reports whether t is one of the defined value types.
func (t ValueType) Valid() bool { return t <= TypeFloat64 }

// scalarSize returns the encoded size of a fixed-size value type, or 0 for strings and arrays.
func (t ValueType) scalarSize() int64 {
	switch t {
	case TypeUint8, TypeInt8, TypeBool:
		return 1
	case TypeUint16, TypeInt16:
		return 2
	case TypeUint32, TypeInt32, TypeFloat32:
		return 4
	case TypeUint64, TypeInt64, TypeFloat64:
		return 8
	}
	return 0
}

// minSize returns the smallest number of bytes one encoded value of type t occupies.
func (t ValueType) minSize() int64 {
	switch t {
	case TypeString:
		return 8 // u64 length
	case TypeArray:
		return 12 // u32 element type + u64 count
	}
	return t.scalarSize()
}

// TensorType is a tensor element type id (enum ggml_type of the C library).
type TensorType uint32

// Tensor element types; the ids match enum ggml_type (4 and 5 are retired and invalid).
// Ids 0 to 20 are those of the ggml this module implements (its C library, FORMATS); the types
// ggml added after it are listed below them, for reading today's files.
const (
	TypeF32     TensorType = 0
	TypeF16     TensorType = 1
	TypeQ4_0    TensorType = 2
	TypeQ4_1    TensorType = 3
	TypeQ5_0    TensorType = 6
	TypeQ5_1    TensorType = 7
	TypeQ8_0    TensorType = 8
	TypeQ8_1    TensorType = 9
	TypeQ2_K    TensorType = 10
	TypeQ3_K    TensorType = 11
	TypeQ4_K    TensorType = 12
	TypeQ5_K    TensorType = 13
	TypeQ6_K    TensorType = 14
	TypeQ8_K    TensorType = 15
	TypeIQ2_XXS TensorType = 16
	TypeIQ2_XS  TensorType = 17
	TypeI8      TensorType = 18
	TypeI16     TensorType = 19
	TypeI32     TensorType = 20
)

// Types that ggml added after the version this module implements (February 2024 on), with
// the ids files written since then store. The C library does not compute on them; the ggml
// package converts some when it loads them (ggml.GGUFLoadType).
//
// Ids 18 to 20 changed meaning then: ggml gave them to IQ3_XXS, IQ1_S and IQ4_NL and moved
// the integer types to 24 to 26. A reader cannot tell the two meanings apart from the id, so
// the three new types have values of their own, the id plus Redefined (FileID returns the id
// stored in the file), and Read decides by the file's layout: it keeps the old meaning unless
// the tensors' data only fit the new one (see Read). The integer types at 24 to 26 are not
// listed: files with them are reported as having an unknown type id.
const (
	// Redefined marks a type whose file id meant another type in the ggml this module
	// implements; FileID strips it.
	Redefined TensorType = 1 << 8

	TypeIQ3_XXS TensorType = Redefined | 18
	TypeIQ1_S   TensorType = Redefined | 19
	TypeIQ4_NL  TensorType = Redefined | 20
	TypeIQ3_S   TensorType = 21
	TypeIQ2_S   TensorType = 22
	TypeIQ4_XS  TensorType = 23
	TypeI64     TensorType = 27
	TypeF64     TensorType = 28
	TypeIQ1_M   TensorType = 29
	TypeBF16    TensorType = 30
	TypeTQ1_0   TensorType = 34
	TypeTQ2_0   TensorType = 35
)

// FileID returns the type id stored in a file for t (t without Redefined).
func (t TensorType) FileID() uint32 { return uint32(t &^ Redefined) }

// redefinedAs returns the February-2024 meaning of file id t (18, 19 or 20), or ok false.
func (t TensorType) redefinedAs() (TensorType, bool) {
	if t >= TypeI8 && t <= TypeI32 {
		return t | Redefined, true
	}
	return 0, false
}

// tensorTypeInfo describes the storage of one tensor type: blockElems elements occupy
// blockBytes bytes. A zero entry marks an unknown id.
type tensorTypeInfo struct {
	name       string
	blockElems int64
	blockBytes int64
}

var tensorTypes = [...]tensorTypeInfo{
	TypeF32:     {"f32", 1, 4},
	TypeF16:     {"f16", 1, 2},
	TypeQ4_0:    {"q4_0", 32, 18},
	TypeQ4_1:    {"q4_1", 32, 20},
	TypeQ5_0:    {"q5_0", 32, 22},
	TypeQ5_1:    {"q5_1", 32, 24},
	TypeQ8_0:    {"q8_0", 32, 34},
	TypeQ8_1:    {"q8_1", 32, 40}, // float d, float s, 32 x int8 at this ggml version
	TypeQ2_K:    {"q2_K", 256, 84},
	TypeQ3_K:    {"q3_K", 256, 110},
	TypeQ4_K:    {"q4_K", 256, 144},
	TypeQ5_K:    {"q5_K", 256, 176},
	TypeQ6_K:    {"q6_K", 256, 210},
	TypeQ8_K:    {"q8_K", 256, 292},
	TypeIQ2_XXS: {"iq2_xxs", 256, 66},
	TypeIQ2_XS:  {"iq2_xs", 256, 74},
	TypeI8:      {"i8", 1, 1},
	TypeI16:     {"i16", 1, 2},
	TypeI32:     {"i32", 1, 4},
	TypeIQ3_S:   {"iq3_s", 256, 110},
	TypeIQ2_S:   {"iq2_s", 256, 82},
	TypeIQ4_XS:  {"iq4_xs", 256, 136},
	TypeI64:     {"i64", 1, 8},
	TypeF64:     {"f64", 1, 8},
	TypeIQ1_M:   {"iq1_m", 256, 56},
	TypeBF16:    {"bf16", 1, 2},
	TypeTQ1_0:   {"tq1_0", 256, 54},
	TypeTQ2_0:   {"tq2_0", 256, 66},
}

// the types of the redefined ids (Redefined | 18 ...)
var redefinedTypes = [...]tensorTypeInfo{
	{"iq3_xxs", 256, 98},
	{"iq1_s", 256, 50},
	{"iq4_nl", 32, 18},
}

func (t TensorType) info() (tensorTypeInfo, bool) {
	if t >= TypeIQ3_XXS && t <= TypeIQ4_NL {
		return redefinedTypes[t-TypeIQ3_XXS], true
	}
	if int64(t) < int64(len(tensorTypes)) && tensorTypes[t].blockElems != 0 {
		return tensorTypes[t], true
	}
	return tensorTypeInfo{}, false
}

// Valid reports whether t is a tensor type this package knows the storage layout of.
func (t TensorType) Valid() bool {
	_, ok := t.info()
	return ok
}

// String returns the ggml name of the type ("f32", "q4_K", ...).
func (t TensorType) String() string {
	if ti, ok := t.info(); ok {
		return ti.name
	}
	return fmt.Sprintf("ggml_type(%d)", uint32(t))
}

// BlockSize returns the number of elements in one storage block of t (1 for plain types,
// 32 or 256 for quantized types), or 0 if t is unknown.
func (t TensorType) BlockSize() int64 {
	ti, _ := t.info()
	return ti.blockElems
}

// TypeSize returns the number of bytes of one storage block of t, or 0 if t is unknown.
func (t TensorType) TypeSize() int64 {
	ti, _ := t.info()
	return ti.blockBytes
}

// RowSize returns the number of bytes n elements of type t occupy. It returns -1 if t is
// unknown, n is negative or not a multiple of the block size, or the size overflows int64.
func (t TensorType) RowSize(n int64) int64 {
	ti, ok := t.info()
	if !ok || n < 0 || n%ti.blockElems != 0 {
		return -1
	}
	blocks := n / ti.blockElems
	if blocks > maxInt64/ti.blockBytes {
		return -1
	}
	return blocks * ti.blockBytes
}

const maxInt64 = int64(^uint64(0) >> 1)
