package gguf

import (
	"fmt"
	"io"
)

// File is a parsed GGUF file: its metadata, its tensor descriptions, and access to the tensor
// data. A File is safe for concurrent reads by several goroutines.
type File struct {
	version    uint32
	kvs        []KV
	kvIndex    map[string]int
	tensors    []TensorInfo
	tIndex     map[string]int
	alignment  int64
	dataOffset int64
	size       int64
	r          io.ReaderAt
	closer     io.Closer
}

// KV is one metadata key/value pair.
type KV struct {
	Key   string // the metadata key, unique within a file
	Value Value  // its value
}

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	Name   string     // unique name, at most MaxTensorNameLen bytes
	Type   TensorType // element type (ggml type id)
	Shape  []int64    // ne[0..n_dims-1]: ne[0] is the row length (innermost dimension)
	Offset int64      // data offset relative to the data section (File.DataOffset)
	Size   int64      // data size in bytes
}

// NumElements returns the number of elements of the tensor (the product of Shape).
func (t TensorInfo) NumElements() int64 {
	n := int64(1)
	for _, ne := range t.Shape {
		n *= ne
	}
	return n
}

// Close closes the underlying file when the File came from Open; otherwise it does nothing.
// Tensor data cannot be read after Close.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	c := f.closer
	f.closer = nil
	return c.Close()
}

// Version returns the GGUF version of the file (2 or 3).
func (f *File) Version() int { return int(f.version) }

// Alignment returns the data alignment in bytes (general.alignment, or DefaultAlignment).
func (f *File) Alignment() int64 { return f.alignment }

// DataOffset returns the file offset of the data section; tensor offsets are relative to it.
func (f *File) DataOffset() int64 { return f.dataOffset }

// Size returns the size of the file in bytes.
func (f *File) Size() int64 { return f.size }

// NumKV returns the number of metadata key/value pairs.
func (f *File) NumKV() int { return len(f.kvs) }

// Keys returns the metadata keys in file order.
func (f *File) Keys() []string {
	keys := make([]string, len(f.kvs))
	for i, kv := range f.kvs {
		keys[i] = kv.Key
	}
	return keys
}

// KVs returns the metadata key/value pairs in file order. The slice is a copy; the values
// share their arrays with the File and must not be modified.
func (f *File) KVs() []KV { return append([]KV(nil), f.kvs...) }

// Get returns the value stored under key and whether the key exists.
func (f *File) Get(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.kvs[i].Value, true
}

// GetAs returns the value stored under key as a T, one of the Go types listed for Value
// (for example GetAs[uint32] or GetAs[[]string]). A missing key yields an error wrapping
// ErrKeyNotFound; a value of another type yields a *TypeError.
func GetAs[T any](f *File, key string) (T, error) {
	var zero T
	v, ok := f.Get(key)
	if !ok {
		return zero, fmt.Errorf("%w: %q", ErrKeyNotFound, key)
	}
	t, ok := As[T](v)
	if !ok {
		return zero, &TypeError{Key: key, Want: typeNameOf[T](), Got: v.TypeName()}
	}
	return t, nil
}

// typeNameOf names the GGUF type that the Go type T stands for, for error messages.
func typeNameOf[T any]() string {
	var zero T
	if v, err := ValueOf(zero); err == nil {
		return v.TypeName()
	}
	return fmt.Sprintf("%T", zero)
}

// GetUint8 returns the u8 value of key (see GetAs for the errors).
func (f *File) GetUint8(key string) (uint8, error) { return GetAs[uint8](f, key) }

// GetInt8 returns the i8 value of key (see GetAs for the errors).
func (f *File) GetInt8(key string) (int8, error) { return GetAs[int8](f, key) }

// GetUint16 returns the u16 value of key (see GetAs for the errors).
func (f *File) GetUint16(key string) (uint16, error) { return GetAs[uint16](f, key) }

// GetInt16 returns the i16 value of key (see GetAs for the errors).
func (f *File) GetInt16(key string) (int16, error) { return GetAs[int16](f, key) }

// GetUint32 returns the u32 value of key (see GetAs for the errors).
func (f *File) GetUint32(key string) (uint32, error) { return GetAs[uint32](f, key) }

// GetInt32 returns the i32 value of key (see GetAs for the errors).
func (f *File) GetInt32(key string) (int32, error) { return GetAs[int32](f, key) }

// GetFloat32 returns the f32 value of key (see GetAs for the errors).
func (f *File) GetFloat32(key string) (float32, error) { return GetAs[float32](f, key) }

// GetBool returns the bool value of key (see GetAs for the errors).
func (f *File) GetBool(key string) (bool, error) { return GetAs[bool](f, key) }

// GetString returns the string value of key (see GetAs for the errors).
func (f *File) GetString(key string) (string, error) { return GetAs[string](f, key) }

// GetUint64 returns the u64 value of key (see GetAs for the errors).
func (f *File) GetUint64(key string) (uint64, error) { return GetAs[uint64](f, key) }

// GetInt64 returns the i64 value of key (see GetAs for the errors).
func (f *File) GetInt64(key string) (int64, error) { return GetAs[int64](f, key) }

// GetFloat64 returns the f64 value of key (see GetAs for the errors).
func (f *File) GetFloat64(key string) (float64, error) { return GetAs[float64](f, key) }

// GetStrings returns the string array stored under key (see GetAs for the errors).
func (f *File) GetStrings(key string) ([]string, error) { return GetAs[[]string](f, key) }

// GetInt32s returns the i32 array stored under key (see GetAs for the errors).
func (f *File) GetInt32s(key string) ([]int32, error) { return GetAs[[]int32](f, key) }

// GetFloat32s returns the f32 array stored under key (see GetAs for the errors).
func (f *File) GetFloat32s(key string) ([]float32, error) { return GetAs[[]float32](f, key) }

// GetArray returns the array value stored under key, of any element type.
func (f *File) GetArray(key string) (Value, error) {
	v, ok := f.Get(key)
	if !ok {
		return Value{}, fmt.Errorf("%w: %q", ErrKeyNotFound, key)
	}
	if v.typ != TypeArray {
		return Value{}, &TypeError{Key: key, Want: "arr", Got: v.TypeName()}
	}
	return v, nil
}

// GetInt returns the value of key if it is of any integer type (u8 to u64, i8 to i64) and
// fits an int64. Writers disagree on integer widths (a context length may be a u32 or a
// u64), so this is usually the right getter for counts and sizes.
func (f *File) GetInt(key string) (int64, error) {
	v, ok := f.Get(key)
	if !ok {
		return 0, fmt.Errorf("%w: %q", ErrKeyNotFound, key)
	}
	switch x := v.x.(type) {
	case uint8:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case uint64:
		if x <= uint64(maxInt64) {
			return int64(x), nil
		}
		return 0, fmt.Errorf("gguf: metadata key %q: u64 value %d does not fit an int64", key, x)
	}
	return 0, &TypeError{Key: key, Want: "integer", Got: v.TypeName()}
}

// NumTensors returns the number of tensors.
func (f *File) NumTensors() int { return len(f.tensors) }

// Tensors returns the tensor descriptions in file order (a copy).
func (f *File) Tensors() []TensorInfo {
	out := make([]TensorInfo, len(f.tensors))
	for i, t := range f.tensors {
		out[i] = t
		out[i].Shape = append([]int64(nil), t.Shape...)
	}
	return out
}

// Tensor returns the description of the tensor called name and whether it exists.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.tIndex[name]
	if !ok {
		return TensorInfo{}, false
	}
	t := f.tensors[i]
	t.Shape = append([]int64(nil), t.Shape...)
	return t, true
}

// TensorData returns a reader over exactly the data bytes of the tensor called name. The
// range was checked to lie inside the file when the File was read.
func (f *File) TensorData(name string) (*io.SectionReader, error) {
	i, ok := f.tIndex[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrTensorNotFound, name)
	}
	t := f.tensors[i]
	return io.NewSectionReader(f.r, f.dataOffset+t.Offset, t.Size), nil
}

// TensorBytes reads and returns the data bytes of the tensor called name.
func (f *File) TensorBytes(name string) ([]byte, error) {
	sr, err := f.TensorData(name)
	if err != nil {
		return nil, err
	}
	b := make([]byte, sr.Size())
	if n, err := sr.ReadAt(b, 0); err != nil && !(err == io.EOF && n == len(b)) {
		return nil, wrap(err, "reading data of tensor %q", name)
	}
	return b, nil
}
