package gguf

import (
	"fmt"
	"strings"
)

// Value is one metadata value: a scalar, a string, or an array of values of one type.
//
// The Go representation returned by Any is, by type: uint8, int8, uint16, int16, uint32,
// int32, float32, bool, string, uint64, int64, float64; arrays are the matching slices
// ([]uint8 ... []string), and an array of arrays is a []Value whose elements are arrays.
// The zero Value is invalid.
type Value struct {
	typ  ValueType
	elem ValueType // element type, when typ == TypeArray
	x    any
}

// Type returns the type of the value.
func (v Value) Type() ValueType { return v.typ }

// ElemType returns the element type of an array value (meaningless for other values).
func (v Value) ElemType() ValueType { return v.elem }

// Any returns the value as a plain Go value (see the type documentation for the mapping).
// The returned slices are shared with the Value and must not be modified.
func (v Value) Any() any { return v.x }

// Len returns the number of elements of an array value, and 0 for other values.
func (v Value) Len() int {
	if v.typ != TypeArray {
		return 0
	}
	switch a := v.x.(type) {
	case []uint8:
		return len(a)
	case []int8:
		return len(a)
	case []uint16:
		return len(a)
	case []int16:
		return len(a)
	case []uint32:
		return len(a)
	case []int32:
		return len(a)
	case []float32:
		return len(a)
	case []bool:
		return len(a)
	case []string:
		return len(a)
	case []uint64:
		return len(a)
	case []int64:
		return len(a)
	case []float64:
		return len(a)
	case []Value:
		return len(a)
	}
	return 0
}

// TypeName describes the type of the value: the scalar name ("u32", "str") or "arr[ELEM]".
func (v Value) TypeName() string {
	if v.typ == TypeArray {
		return "arr[" + v.elem.String() + "]"
	}
	return v.typ.String()
}

// String formats the value for display; long arrays and strings are shortened.
func (v Value) String() string {
	const maxShown = 8
	switch v.typ {
	case TypeString:
		s := v.x.(string)
		if len(s) > 64 {
			return fmt.Sprintf("%q...(%d bytes)", s[:64], len(s))
		}
		return fmt.Sprintf("%q", s)
	case TypeArray:
		n := v.Len()
		var sb strings.Builder
		sb.WriteByte('[')
		for i := 0; i < n && i < maxShown; i++ {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(v.index(i).String())
		}
		if n > maxShown {
			fmt.Fprintf(&sb, ", ... (%d elements)", n)
		}
		sb.WriteByte(']')
		return sb.String()
	}
	return fmt.Sprint(v.x)
}

// index returns element i of an array value as a Value.
func (v Value) index(i int) Value {
	switch a := v.x.(type) {
	case []Value:
		return a[i]
	case []uint8:
		return Value{typ: v.elem, x: a[i]}
	case []int8:
		return Value{typ: v.elem, x: a[i]}
	case []uint16:
		return Value{typ: v.elem, x: a[i]}
	case []int16:
		return Value{typ: v.elem, x: a[i]}
	case []uint32:
		return Value{typ: v.elem, x: a[i]}
	case []int32:
		return Value{typ: v.elem, x: a[i]}
	case []float32:
		return Value{typ: v.elem, x: a[i]}
	case []bool:
		return Value{typ: v.elem, x: a[i]}
	case []string:
		return Value{typ: v.elem, x: a[i]}
	case []uint64:
		return Value{typ: v.elem, x: a[i]}
	case []int64:
		return Value{typ: v.elem, x: a[i]}
	case []float64:
		return Value{typ: v.elem, x: a[i]}
	}
	return Value{}
}

// depth returns the array nesting depth of v: 0 for scalars, 1 for flat arrays, ...
func (v Value) depth() int {
	if v.typ != TypeArray {
		return 0
	}
	d := 0
	if a, ok := v.x.([]Value); ok {
		for _, e := range a {
			d = max(d, e.depth())
		}
	}
	return d + 1
}

// ValueOf converts a Go value to a metadata Value. Accepted are uint8, int8, uint16, int16,
// uint32, int32, float32, bool, string, uint64, int64, float64, slices of those (arrays),
// []Value whose elements are all arrays (an array of arrays), and Value itself. Plain int
// and uint are refused because their GGUF width would be ambiguous.
func ValueOf(x any) (Value, error) {
	switch a := x.(type) {
	case Value:
		if !a.typ.Valid() || a.x == nil {
			return Value{}, fmt.Errorf("gguf: invalid (zero) Value")
		}
		return a, nil
	case uint8:
		return Value{typ: TypeUint8, x: a}, nil
	case int8:
		return Value{typ: TypeInt8, x: a}, nil
	case uint16:
		return Value{typ: TypeUint16, x: a}, nil
	case int16:
		return Value{typ: TypeInt16, x: a}, nil
	case uint32:
		return Value{typ: TypeUint32, x: a}, nil
	case int32:
		return Value{typ: TypeInt32, x: a}, nil
	case float32:
		return Value{typ: TypeFloat32, x: a}, nil
	case bool:
		return Value{typ: TypeBool, x: a}, nil
	case string:
		return Value{typ: TypeString, x: a}, nil
	case uint64:
		return Value{typ: TypeUint64, x: a}, nil
	case int64:
		return Value{typ: TypeInt64, x: a}, nil
	case float64:
		return Value{typ: TypeFloat64, x: a}, nil
	case []uint8:
		return arrayValue(TypeUint8, a), nil
	case []int8:
		return arrayValue(TypeInt8, a), nil
	case []uint16:
		return arrayValue(TypeUint16, a), nil
	case []int16:
		return arrayValue(TypeInt16, a), nil
	case []uint32:
		return arrayValue(TypeUint32, a), nil
	case []int32:
		return arrayValue(TypeInt32, a), nil
	case []float32:
		return arrayValue(TypeFloat32, a), nil
	case []bool:
		return arrayValue(TypeBool, a), nil
	case []string:
		return arrayValue(TypeString, a), nil
	case []uint64:
		return arrayValue(TypeUint64, a), nil
	case []int64:
		return arrayValue(TypeInt64, a), nil
	case []float64:
		return arrayValue(TypeFloat64, a), nil
	case []Value:
		for i, e := range a {
			if e.typ != TypeArray || e.x == nil {
				return Value{}, fmt.Errorf("gguf: element %d of a []Value is %s; only arrays can be nested", i, e.TypeName())
			}
		}
		return arrayValue(TypeArray, a), nil
	case int, uint:
		return Value{}, fmt.Errorf("gguf: %T has no fixed GGUF width; use int32, int64, uint32 or uint64", x)
	}
	return Value{}, fmt.Errorf("gguf: cannot store a %T as a metadata value", x)
}

// arrayValue wraps a slice; a nil slice is stored as an empty one so that Any never
// returns a typed nil.
func arrayValue[S ~[]E, E any](elem ValueType, a S) Value {
	if a == nil {
		a = S{}
	}
	return Value{typ: TypeArray, elem: elem, x: a}
}

// As returns the value as a T (one of the Go types listed for Value) and whether it has
// that type. As[Value] always succeeds.
func As[T any](v Value) (T, bool) {
	if vv, ok := any(v).(T); ok {
		return vv, true
	}
	t, ok := v.x.(T)
	return t, ok
}
