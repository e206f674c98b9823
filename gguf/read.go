package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
)

// Limits applied while reading (and, where they matter for readability, while writing).
// Besides these absolute caps, every count is checked against the bytes left in the file
// (each key/value pair, array element and tensor description occupies a known minimum number
// of bytes), so the memory a parse allocates stays proportional to the file size.
const (
	// MaxKeyLen is the longest metadata key, in bytes.
	MaxKeyLen = 1 << 16
	// MaxStringLen is the longest metadata string value, in bytes.
	MaxStringLen = 1 << 26
	// MaxArrayLen is the largest number of elements of one metadata array.
	MaxArrayLen = 1 << 26
	// MaxArrayDepth is the deepest nesting of arrays (1 = a flat array).
	MaxArrayDepth = 8
	// MaxKVs is the largest number of metadata key/value pairs.
	MaxKVs = 1 << 20
	// MaxTensors is the largest number of tensors.
	MaxTensors = 1 << 20
	// MaxTensorNameLen is the longest tensor name, in bytes (GGML_MAX_NAME - 1 of the C
	// library, so that every name fits a ggml tensor).
	MaxTensorNameLen = 63
	// MaxDims is the largest number of tensor dimensions (GGML_MAX_DIMS).
	MaxDims = 4
	// DefaultAlignment is the data alignment used when general.alignment is absent.
	DefaultAlignment = 32
	// MaxAlignment is the largest accepted general.alignment (files use 32 to 4096).
	MaxAlignment = 1 << 20
)

// AlignmentKey is the metadata key that sets the data alignment (a u32 power of two).
const AlignmentKey = "general.alignment"

// Magic is the four bytes a GGUF file starts with.
const Magic = "GGUF"

// Version is the GGUF version this package writes.
const Version = 3

const (
	headerSize     = 4 + 4 + 8 + 8     // magic, version, tensor count, kv count
	minKVSize      = 8 + 4 + 1         // key length, value type, smallest value
	minTensorSize  = 8 + 4 + 8 + 4 + 8 // name length, n_dims, ne[0], type, offset
	preallocLimit  = 1 << 16           // elements allocated ahead of the data read
	maxPreallocStr = 1 << 16           // string bytes allocated ahead of the data read
	tablePrealloc  = 1 << 10           // key/value pairs or tensors allocated ahead
)

// Open opens and parses the GGUF file at path. The returned File keeps the file open for
// TensorData and TensorBytes until Close is called.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fd.Stat()
	if err != nil {
		fd.Close()
		return nil, err
	}
	f, err := Read(fd, st.Size())
	if err != nil {
		fd.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.closer = fd
	return f, nil
}

// Read parses a GGUF file of size bytes read from r. Metadata and tensor descriptions are
// read and validated now; tensor contents are read from r later by TensorData and
// TensorBytes, so r must stay usable while the File is in use. A malformed file yields a
// *FormatError; a failing r yields its error, wrapped.
func Read(r io.ReaderAt, size int64) (*File, error) {
	if size < 0 {
		return nil, fmt.Errorf("gguf: negative file size %d", size)
	}
	d := &decoder{
		br:   bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10),
		size: size,
	}
	f, err := d.decode()
	if err != nil {
		return nil, err
	}
	f.r = r
	f.size = size
	return f, nil
}

// decoder reads the little-endian GGUF encoding sequentially, tracking the file offset.
type decoder struct {
	br   *bufio.Reader
	off  int64
	size int64
	buf  [8]byte
}

func (d *decoder) errorf(off int64, format string, args ...any) error {
	return &FormatError{Offset: off, Reason: fmt.Sprintf(format, args...)}
}

func (d *decoder) remaining() int64 { return d.size - d.off }

// readErr converts a failed read of what (starting at d.off) into the error to return.
func (d *decoder) readErr(err error, what string) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return d.errorf(d.off, "file truncated while reading %s", what)
	}
	return wrap(err, "reading %s at offset %d", what, d.off)
}

// fixed reads n <= 8 bytes into d.buf.
func (d *decoder) fixed(n int, what string) ([]byte, error) {
	b := d.buf[:n]
	if _, err := io.ReadFull(d.br, b); err != nil {
		return nil, d.readErr(err, what)
	}
	d.off += int64(n)
	return b, nil
}

func (d *decoder) u32(what string) (uint32, error) {
	b, err := d.fixed(4, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	b, err := d.fixed(8, what)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b), nil
}

// str reads a u64-length-prefixed string of at most limit bytes.
func (d *decoder) str(limit int64, what string) (string, error) {
	start := d.off
	n, err := d.u64(what + " length")
	if err != nil {
		return "", err
	}
	if n > uint64(limit) {
		return "", d.errorf(start, "%s length %d exceeds the limit of %d bytes", what, n, limit)
	}
	if int64(n) > d.remaining() {
		return "", d.errorf(start, "%s length %d runs past the end of the file (%d bytes left)", what, n, d.remaining())
	}
	if n <= maxPreallocStr {
		b := make([]byte, n)
		if _, err := io.ReadFull(d.br, b); err != nil {
			return "", d.readErr(err, what)
		}
		d.off += int64(n)
		return string(b), nil
	}
	// Long strings grow with the data actually read, so a lying size cannot force a large
	// allocation up front.
	var sb strings.Builder
	got, err := io.CopyN(&sb, d.br, int64(n))
	if err != nil {
		d.off += got
		return "", d.readErr(err, what)
	}
	d.off += got
	return sb.String(), nil
}

// decode parses the whole header, metadata and tensor table.
func (d *decoder) decode() (*File, error) {
	if d.size < headerSize {
		return nil, d.errorf(0, "file is %d bytes, shorter than the %d-byte GGUF header", d.size, headerSize)
	}
	b, err := d.fixed(4, "magic")
	if err != nil {
		return nil, err
	}
	if string(b) != Magic {
		return nil, d.errorf(0, "bad magic %q: not a GGUF file", b)
	}
	version, err := d.u32("version")
	if err != nil {
		return nil, err
	}
	switch {
	case version == 1:
		return nil, d.errorf(4, "GGUF version 1 is not supported (it used 32-bit lengths); only versions 2 and 3 are")
	case version == 2 || version == 3:
	case version&0xffff == 0 && bitsSwap32(version) <= 3 && bitsSwap32(version) >= 1:
		return nil, d.errorf(4, "big-endian GGUF file (version %d byte-swapped) is not supported", bitsSwap32(version))
	default:
		return nil, d.errorf(4, "unsupported GGUF version %d (only 2 and 3 are supported)", version)
	}
	nTensors, err := d.u64("tensor count")
	if err != nil {
		return nil, err
	}
	nKV, err := d.u64("metadata count")
	if err != nil {
		return nil, err
	}
	if nTensors > MaxTensors {
		return nil, d.errorf(8, "tensor count %d exceeds the limit of %d", nTensors, MaxTensors)
	}
	if nKV > MaxKVs {
		return nil, d.errorf(16, "metadata count %d exceeds the limit of %d", nKV, MaxKVs)
	}
	if need := int64(nKV)*minKVSize + int64(nTensors)*minTensorSize; need > d.remaining() {
		return nil, d.errorf(8, "%d tensors and %d metadata pairs need at least %d bytes, but only %d remain",
			nTensors, nKV, need, d.remaining())
	}

	// Preallocate for at most tablePrealloc entries: the counts were only checked against
	// the declared size, and the tables grow as entries are actually read.
	kvCap, tCap := min(nKV, tablePrealloc), min(nTensors, tablePrealloc)
	f := &File{
		version:   version,
		kvs:       make([]KV, 0, kvCap),
		kvIndex:   make(map[string]int, kvCap),
		tensors:   make([]TensorInfo, 0, tCap),
		tIndex:    make(map[string]int, tCap),
		alignment: DefaultAlignment,
	}
	for i := uint64(0); i < nKV; i++ {
		if err := d.kv(f); err != nil {
			return nil, err
		}
	}
	starts := make([]int64, 0, tCap) // file offset of each tensor description
	for i := uint64(0); i < nTensors; i++ {
		starts = append(starts, d.off)
		if err := d.tensorInfo(f); err != nil {
			return nil, err
		}
	}
	return f, d.layout(f, starts)
}

func bitsSwap32(v uint32) uint32 {
	return v>>24 | (v>>8)&0xff00 | (v<<8)&0xff0000 | v<<24
}

// kv reads one metadata key/value pair into f.
func (d *decoder) kv(f *File) error {
	start := d.off
	key, err := d.str(MaxKeyLen, "metadata key")
	if err != nil {
		return err
	}
	if _, dup := f.kvIndex[key]; dup {
		return d.errorf(start, "duplicate metadata key %q", key)
	}
	typeOff := d.off
	t, err := d.u32("value type of " + key)
	if err != nil {
		return err
	}
	if !ValueType(t).Valid() {
		return d.errorf(typeOff, "metadata key %q has unknown value type %d", key, t)
	}
	v, err := d.value(ValueType(t), 0, key)
	if err != nil {
		return err
	}
	if key == AlignmentKey {
		a, ok := v.x.(uint32)
		if !ok {
			return d.errorf(typeOff, "%s must be a u32, not %s", AlignmentKey, v.TypeName())
		}
		if a == 0 || a&(a-1) != 0 {
			return d.errorf(typeOff, "%s = %d is not a power of two", AlignmentKey, a)
		}
		if a > MaxAlignment {
			return d.errorf(typeOff, "%s = %d exceeds the limit of %d", AlignmentKey, a, MaxAlignment)
		}
		f.alignment = int64(a)
	}
	f.kvIndex[key] = len(f.kvs)
	f.kvs = append(f.kvs, KV{Key: key, Value: v})
	return nil
}

// value reads one value of type t; depth is the number of arrays enclosing it.
func (d *decoder) value(t ValueType, depth int, key string) (Value, error) {
	switch t {
	case TypeString:
		s, err := d.str(MaxStringLen, "string value of "+key)
		return Value{typ: t, x: s}, err
	case TypeArray:
		return d.array(depth+1, key)
	}
	b, err := d.fixed(int(t.scalarSize()), "value of "+key)
	if err != nil {
		return Value{}, err
	}
	x, err := d.scalar(t, b, key)
	return Value{typ: t, x: x}, err
}

// scalar decodes a fixed-size value of type t from b.
func (d *decoder) scalar(t ValueType, b []byte, key string) (any, error) {
	le := binary.LittleEndian
	switch t {
	case TypeUint8:
		return b[0], nil
	case TypeInt8:
		return int8(b[0]), nil
	case TypeUint16:
		return le.Uint16(b), nil
	case TypeInt16:
		return int16(le.Uint16(b)), nil
	case TypeUint32:
		return le.Uint32(b), nil
	case TypeInt32:
		return int32(le.Uint32(b)), nil
	case TypeFloat32:
		return math.Float32frombits(le.Uint32(b)), nil
	case TypeBool:
		if b[0] > 1 {
			return nil, d.errorf(d.off-1, "bool value of %q is %d, not 0 or 1", key, b[0])
		}
		return b[0] == 1, nil
	case TypeUint64:
		return le.Uint64(b), nil
	case TypeInt64:
		return int64(le.Uint64(b)), nil
	case TypeFloat64:
		return math.Float64frombits(le.Uint64(b)), nil
	}
	return nil, d.errorf(d.off, "internal: %s is not a scalar type", t)
}

// array reads an array header and its elements; depth counts this array.
func (d *decoder) array(depth int, key string) (Value, error) {
	start := d.off
	if depth > MaxArrayDepth {
		return Value{}, d.errorf(start, "arrays in %q nested deeper than %d levels", key, MaxArrayDepth)
	}
	et, err := d.u32("array element type of " + key)
	if err != nil {
		return Value{}, err
	}
	elem := ValueType(et)
	if !elem.Valid() {
		return Value{}, d.errorf(start, "array %q has unknown element type %d", key, et)
	}
	n, err := d.u64("array length of " + key)
	if err != nil {
		return Value{}, err
	}
	if n > MaxArrayLen {
		return Value{}, d.errorf(start+4, "array %q has %d elements, more than the limit of %d", key, n, MaxArrayLen)
	}
	if need := int64(n) * elem.minSize(); need > d.remaining() {
		return Value{}, d.errorf(start+4, "array %q of %d %s elements needs at least %d bytes, but only %d remain",
			key, n, elem, need, d.remaining())
	}
	count := int(n)
	switch elem {
	case TypeUint8:
		return readArray(d, elem, count, key, func(b []byte) uint8 { return b[0] })
	case TypeInt8:
		return readArray(d, elem, count, key, func(b []byte) int8 { return int8(b[0]) })
	case TypeUint16:
		return readArray(d, elem, count, key, binary.LittleEndian.Uint16)
	case TypeInt16:
		return readArray(d, elem, count, key, func(b []byte) int16 { return int16(binary.LittleEndian.Uint16(b)) })
	case TypeUint32:
		return readArray(d, elem, count, key, binary.LittleEndian.Uint32)
	case TypeInt32:
		return readArray(d, elem, count, key, func(b []byte) int32 { return int32(binary.LittleEndian.Uint32(b)) })
	case TypeFloat32:
		return readArray(d, elem, count, key, func(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) })
	case TypeUint64:
		return readArray(d, elem, count, key, binary.LittleEndian.Uint64)
	case TypeInt64:
		return readArray(d, elem, count, key, func(b []byte) int64 { return int64(binary.LittleEndian.Uint64(b)) })
	case TypeFloat64:
		return readArray(d, elem, count, key, func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) })
	case TypeBool:
		out := make([]bool, 0, min(count, preallocLimit))
		for range count {
			b, err := d.fixed(1, "array element of "+key)
			if err != nil {
				return Value{}, err
			}
			if b[0] > 1 {
				return Value{}, d.errorf(d.off-1, "bool element of %q is %d, not 0 or 1", key, b[0])
			}
			out = append(out, b[0] == 1)
		}
		return arrayValue(elem, out), nil
	case TypeString:
		out := make([]string, 0, min(count, preallocLimit))
		for range count {
			s, err := d.str(MaxStringLen, "string element of "+key)
			if err != nil {
				return Value{}, err
			}
			out = append(out, s)
		}
		return arrayValue(elem, out), nil
	default: // TypeArray
		out := make([]Value, 0, min(count, preallocLimit))
		for range count {
			v, err := d.array(depth+1, key)
			if err != nil {
				return Value{}, err
			}
			out = append(out, v)
		}
		return arrayValue(elem, out), nil
	}
}

// readArray reads count fixed-size elements, growing the slice as data arrives.
func readArray[E any](d *decoder, elem ValueType, count int, key string, conv func([]byte) E) (Value, error) {
	size := int(elem.scalarSize())
	out := make([]E, 0, min(count, preallocLimit))
	for range count {
		b, err := d.fixed(size, "array element of "+key)
		if err != nil {
			return Value{}, err
		}
		out = append(out, conv(b))
	}
	return arrayValue(elem, out), nil
}

// tensorInfo reads and checks one tensor description (everything but its data range).
func (d *decoder) tensorInfo(f *File) error {
	start := d.off
	name, err := d.str(MaxTensorNameLen, "tensor name")
	if err != nil {
		return err
	}
	if _, dup := f.tIndex[name]; dup {
		return d.errorf(start, "duplicate tensor name %q", name)
	}
	nDims, err := d.u32("dimension count of tensor " + name)
	if err != nil {
		return err
	}
	if nDims < 1 || nDims > MaxDims {
		return d.errorf(d.off-4, "tensor %q has %d dimensions (1 to %d allowed)", name, nDims, MaxDims)
	}
	shape := make([]int64, nDims)
	nel := int64(1)
	for i := range shape {
		ne, err := d.u64("shape of tensor " + name)
		if err != nil {
			return err
		}
		if ne == 0 || ne > uint64(maxInt64) {
			return d.errorf(d.off-8, "tensor %q has invalid size %d in dimension %d", name, ne, i)
		}
		if int64(ne) > maxInt64/nel {
			return d.errorf(d.off-8, "tensor %q has too many elements (overflow at dimension %d)", name, i)
		}
		shape[i] = int64(ne)
		nel *= int64(ne)
	}
	tt, err := d.u32("type of tensor " + name)
	if err != nil {
		return err
	}
	typ := TensorType(tt)
	if !typ.Valid() {
		return d.errorf(d.off-4, "tensor %q has unknown type id %d", name, tt)
	}
	if shape[0]%typ.BlockSize() != 0 {
		return d.errorf(d.off-4, "tensor %q: row length %d is not a multiple of the %s block size %d",
			name, shape[0], typ, typ.BlockSize())
	}
	size := typ.RowSize(nel)
	if size < 0 {
		return d.errorf(d.off-4, "tensor %q: data size overflows", name)
	}
	off, err := d.u64("data offset of tensor " + name)
	if err != nil {
		return err
	}
	if off > uint64(maxInt64) {
		return d.errorf(d.off-8, "tensor %q has data offset %d out of range", name, off)
	}
	if int64(off)%f.alignment != 0 {
		return d.errorf(d.off-8, "tensor %q data offset %d is not a multiple of the alignment %d", name, off, f.alignment)
	}
	f.tIndex[name] = len(f.tensors)
	f.tensors = append(f.tensors, TensorInfo{Name: name, Type: typ, Shape: shape, Offset: int64(off), Size: size})
	return nil
}

// layout places the data section and checks that every tensor lies inside the file and that
// no two tensors share bytes. starts holds the file offset of each tensor description.
//
// When that fails and tensors have ids 18 to 20 (I8, I16, I32 here; IQ3_XXS, IQ1_S, IQ4_NL
// in files written since February 2024, types.go), it checks the file again with the newer
// meaning and keeps it if the data fit that way. The newer types take 2.6 to 7 times fewer
// bytes than the integer types of the same shape, and writers place tensor data one after
// the other, so a file of the newer kind never fits the older meaning (its tensors overlap or
// run past the end), and one of the older kind keeps its meaning.
func (d *decoder) layout(f *File, starts []int64) error {
	pad := (f.alignment - d.off%f.alignment) % f.alignment
	if d.off > maxInt64-pad {
		return d.errorf(d.off, "data section offset overflows")
	}
	f.dataOffset = d.off + pad
	if len(f.tensors) == 0 {
		return nil // a metadata-only file may omit the final padding
	}
	if f.dataOffset > d.size {
		return d.errorf(d.off, "file ends before its data section (at %d, %d bytes long)", f.dataOffset, d.size)
	}
	err := d.placeTensors(f.tensors, f.dataOffset, starts)
	if err == nil {
		return nil
	}
	if alt, ok := redefinedTensors(f.tensors); ok && d.placeTensors(alt, f.dataOffset, starts) == nil {
		f.tensors = alt
		return nil
	}
	return err
}

// placeTensors checks that tensors lie inside the data section at dataOffset and share no bytes.
func (d *decoder) placeTensors(tensors []TensorInfo, dataOffset int64, starts []int64) error {
	avail := d.size - dataOffset
	for i, t := range tensors {
		if t.Offset > avail || t.Size > avail-t.Offset {
			return d.errorf(starts[i], "tensor %q data [%d, +%d) lies outside the %d-byte data section",
				t.Name, t.Offset, t.Size, avail)
		}
	}
	order := make([]int, len(tensors))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return tensors[order[a]].Offset < tensors[order[b]].Offset })
	for k := 1; k < len(order); k++ {
		prev, cur := tensors[order[k-1]], tensors[order[k]]
		if cur.Offset < prev.Offset+prev.Size {
			return d.errorf(starts[order[k]], "tensor %q data overlaps tensor %q", cur.Name, prev.Name)
		}
	}
	return nil
}

// redefinedTensors returns a copy of tensors with ids 18 to 20 read with their February-2024
// meaning (TypeIQ3_XXS, TypeIQ1_S, TypeIQ4_NL) and their sizes computed again; ok is false
// when no tensor has such an id or a row length does not fit the newer block size.
func redefinedTensors(tensors []TensorInfo) ([]TensorInfo, bool) {
	var alt []TensorInfo
	for i, t := range tensors {
		nt, ok := t.Type.redefinedAs()
		if !ok {
			continue
		}
		if alt == nil {
			alt = slices.Clone(tensors)
		}
		nel := int64(1)
		for _, ne := range t.Shape {
			nel *= ne // no overflow: the shape passed the checks at parse time
		}
		if t.Shape[0]%nt.BlockSize() != 0 {
			return nil, false
		}
		alt[i].Type, alt[i].Size = nt, nt.RowSize(nel)
	}
	return alt, alt != nil
}
