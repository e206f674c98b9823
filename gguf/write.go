package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
)

// Builder assembles a GGUF v3 file from metadata and tensors and writes it. The zero Builder
// is ready to use. Keys and tensors are written in the order they were first added.
type Builder struct {
	kvs     []KV
	kvIndex map[string]int
	tensors []builderTensor
	tIndex  map[string]int
}

type builderTensor struct {
	info TensorInfo
	data []byte
}

// Set stores a metadata value under key, replacing any earlier value of that key in place.
// x is anything ValueOf accepts. general.alignment must be a uint32 power of two no larger
// than MaxAlignment. Values
// beyond the reader's limits (MaxKeyLen, MaxStringLen, MaxArrayLen, MaxArrayDepth) are
// refused so that every written file can be read back.
func (b *Builder) Set(key string, x any) error {
	if len(key) > MaxKeyLen {
		return fmt.Errorf("gguf: metadata key of %d bytes exceeds the limit of %d", len(key), MaxKeyLen)
	}
	v, err := ValueOf(x)
	if err != nil {
		return wrap(err, "metadata key %q", key)
	}
	if err := checkValue(v, 0); err != nil {
		return wrap(err, "metadata key %q", key)
	}
	if key == AlignmentKey {
		a, ok := v.x.(uint32)
		if !ok || a == 0 || a&(a-1) != 0 || a > MaxAlignment {
			return fmt.Errorf("gguf: %s must be a uint32 power of two up to %d, got %s %v",
				AlignmentKey, MaxAlignment, v.TypeName(), v)
		}
	}
	if i, ok := b.kvIndex[key]; ok {
		b.kvs[i].Value = v
		return nil
	}
	if len(b.kvs) >= MaxKVs {
		return fmt.Errorf("gguf: more than %d metadata pairs", MaxKVs)
	}
	if b.kvIndex == nil {
		b.kvIndex = make(map[string]int)
	}
	b.kvIndex[key] = len(b.kvs)
	b.kvs = append(b.kvs, KV{Key: key, Value: v})
	return nil
}

// checkValue checks v against the reading limits; depth is the number of enclosing arrays.
func checkValue(v Value, depth int) error {
	switch a := v.x.(type) {
	case string:
		if len(a) > MaxStringLen {
			return fmt.Errorf("string of %d bytes exceeds the limit of %d", len(a), MaxStringLen)
		}
	case []string:
		for _, s := range a {
			if len(s) > MaxStringLen {
				return fmt.Errorf("string of %d bytes exceeds the limit of %d", len(s), MaxStringLen)
			}
		}
	case []Value:
		for _, e := range a {
			if err := checkValue(e, depth+1); err != nil {
				return err
			}
		}
	}
	if v.typ == TypeArray {
		if depth+1 > MaxArrayDepth {
			return fmt.Errorf("arrays nested deeper than %d levels", MaxArrayDepth)
		}
		if v.Len() > MaxArrayLen {
			return fmt.Errorf("array of %d elements exceeds the limit of %d", v.Len(), MaxArrayLen)
		}
	}
	return nil
}

// AddTensor adds a tensor of the given type and shape (ne[0] first, 1 to MaxDims positive
// sizes, ne[0] a multiple of the type's block size) with its data, which must be exactly
// the tensor's size in bytes. data is not copied and must stay unchanged until the file is
// written.
func (b *Builder) AddTensor(name string, typ TensorType, shape []int64, data []byte) error {
	if len(name) > MaxTensorNameLen {
		return fmt.Errorf("gguf: tensor name %q is longer than %d bytes", name, MaxTensorNameLen)
	}
	if _, dup := b.tIndex[name]; dup {
		return fmt.Errorf("gguf: duplicate tensor name %q", name)
	}
	if len(b.tensors) >= MaxTensors {
		return fmt.Errorf("gguf: more than %d tensors", MaxTensors)
	}
	if !typ.Valid() {
		return fmt.Errorf("gguf: tensor %q: unknown type %s", name, typ)
	}
	if len(shape) < 1 || len(shape) > MaxDims {
		return fmt.Errorf("gguf: tensor %q has %d dimensions (1 to %d allowed)", name, len(shape), MaxDims)
	}
	nel := int64(1)
	for i, ne := range shape {
		if ne <= 0 || ne > maxInt64/nel {
			return fmt.Errorf("gguf: tensor %q has invalid shape %v (dimension %d)", name, shape, i)
		}
		nel *= ne
	}
	if shape[0]%typ.BlockSize() != 0 {
		return fmt.Errorf("gguf: tensor %q: row length %d is not a multiple of the %s block size %d",
			name, shape[0], typ, typ.BlockSize())
	}
	size := typ.RowSize(nel)
	if size < 0 {
		return fmt.Errorf("gguf: tensor %q: data size overflows", name)
	}
	if int64(len(data)) != size {
		return fmt.Errorf("gguf: tensor %q: %s %v needs %d bytes of data, got %d", name, typ, shape, size, len(data))
	}
	if b.tIndex == nil {
		b.tIndex = make(map[string]int)
	}
	b.tIndex[name] = len(b.tensors)
	info := TensorInfo{Name: name, Type: typ, Shape: append([]int64(nil), shape...), Size: size}
	b.tensors = append(b.tensors, builderTensor{info: info, data: data})
	return nil
}

// alignment returns the alignment the file will use.
func (b *Builder) alignment() int64 {
	if i, ok := b.kvIndex[AlignmentKey]; ok {
		return int64(b.kvs[i].Value.x.(uint32))
	}
	return DefaultAlignment
}

func padding(n, align int64) int64 { return (align - n%align) % align }

// WriteTo writes the GGUF v3 file to w: header, metadata, tensor descriptions, zero padding
// to the alignment, then each tensor's data padded to the alignment. It returns the number
// of bytes written.
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	bw := bufio.NewWriterSize(cw, 64<<10)
	e := encoder{w: bw}
	align := b.alignment()

	e.raw([]byte(Magic))
	e.u32(Version)
	e.u64(uint64(len(b.tensors)))
	e.u64(uint64(len(b.kvs)))
	for _, kv := range b.kvs {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.typ))
		e.value(kv.Value)
	}
	var off int64
	for _, t := range b.tensors {
		e.str(t.info.Name)
		e.u32(uint32(len(t.info.Shape)))
		for _, ne := range t.info.Shape {
			e.u64(uint64(ne))
		}
		e.u32(t.info.Type.FileID())
		e.u64(uint64(off))
		off += t.info.Size + padding(t.info.Size, align)
	}
	e.zeros(padding(e.n, align))
	for _, t := range b.tensors {
		e.raw(t.data)
		e.zeros(padding(t.info.Size, align))
	}
	if e.err == nil {
		e.err = bw.Flush()
	}
	return cw.n, e.err
}

// WriteFile writes the GGUF v3 file to path (created or truncated).
func (b *Builder) WriteFile(path string) error {
	fd, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := b.WriteTo(fd); err != nil {
		fd.Close()
		return err
	}
	return fd.Close()
}

type countingWriter struct {
	w io.Writer
	n int64
}

// Write passes p on to the underlying writer and counts the bytes written.
func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// encoder writes the little-endian GGUF encoding, remembering the first error and counting
// the bytes handed to w.
type encoder struct {
	w   *bufio.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) raw(p []byte) {
	if e.err != nil {
		return
	}
	var n int
	n, e.err = e.w.Write(p)
	e.n += int64(n)
}

func (e *encoder) zeros(n int64) {
	var z [64]byte
	for n > 0 && e.err == nil {
		k := min(n, int64(len(z)))
		e.raw(z[:k])
		n -= k
	}
}

func (e *encoder) u8(v uint8) { e.buf[0] = v; e.raw(e.buf[:1]) }

func (e *encoder) u16(v uint16) {
	binary.LittleEndian.PutUint16(e.buf[:], v)
	e.raw(e.buf[:2])
}

func (e *encoder) u32(v uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], v)
	e.raw(e.buf[:4])
}

func (e *encoder) u64(v uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], v)
	e.raw(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		var n int
		n, e.err = e.w.WriteString(s)
		e.n += int64(n)
	}
}

func (e *encoder) bool(v bool) {
	if v {
		e.u8(1)
	} else {
		e.u8(0)
	}
}

// value writes the encoding of v without its type tag.
func (e *encoder) value(v Value) {
	switch x := v.x.(type) {
	case uint8:
		e.u8(x)
	case int8:
		e.u8(uint8(x))
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		e.bool(x)
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	default:
		e.array(v)
	}
}

func (e *encoder) array(v Value) {
	e.u32(uint32(v.elem))
	e.u64(uint64(v.Len()))
	switch a := v.x.(type) {
	case []uint8:
		e.raw(a)
	case []int8:
		for _, x := range a {
			e.u8(uint8(x))
		}
	case []uint16:
		for _, x := range a {
			e.u16(x)
		}
	case []int16:
		for _, x := range a {
			e.u16(uint16(x))
		}
	case []uint32:
		for _, x := range a {
			e.u32(x)
		}
	case []int32:
		for _, x := range a {
			e.u32(uint32(x))
		}
	case []float32:
		for _, x := range a {
			e.u32(math.Float32bits(x))
		}
	case []bool:
		for _, x := range a {
			e.bool(x)
		}
	case []string:
		for _, x := range a {
			e.str(x)
		}
	case []uint64:
		for _, x := range a {
			e.u64(x)
		}
	case []int64:
		for _, x := range a {
			e.u64(uint64(x))
		}
	case []float64:
		for _, x := range a {
			e.u64(math.Float64bits(x))
		}
	case []Value:
		for _, x := range a {
			e.array(x)
		}
	}
}
