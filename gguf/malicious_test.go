package gguf

import (
	"bytes"
	"errors"
	"io"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const u64max = math.MaxUint64

// kvFile returns a file with one key/value pair whose type tag and value bytes come from fill.
func kvFile(fill func(r *raw)) []byte {
	var r raw
	r.header(3, 0, 1)
	fill(&r)
	return r.Bytes()
}

func withHeader(nTensors uint64, body []byte) []byte {
	var r raw
	r.header(3, nTensors, 0)
	r.Write(body)
	return r.Bytes()
}

// tensors builds a file from whole tensor descriptions plus dataLen data bytes.
func tensors(nTensors uint64, dataLen int, descs func(r *raw)) []byte {
	var r raw
	r.header(3, nTensors, 0)
	descs(&r)
	r.pad(32)
	r.Write(make([]byte, dataLen))
	return r.Bytes()
}

func nest(r *raw, levels int) {
	for range levels - 1 {
		r.u32(uint32(TypeArray)).u64(1)
	}
	r.u32(uint32(TypeUint8)).u64(1).u8(1)
}

func TestMaliciousInputs(t *testing.T) {
	cases := []struct {
		name   string
		data   []byte
		reason string
	}{
		{"empty", nil, "shorter than"},
		{"short header", []byte("GGUF\x03\x00\x00\x00"), "shorter than"},
		{"bad magic", append([]byte("GGML"), make([]byte, 20)...), "bad magic"},
		{"version 0", (&raw{}).header(0, 0, 0).Bytes(), "unsupported GGUF version 0"},
		{"version 1", (&raw{}).header(1, 0, 0).Bytes(), "version 1 is not supported"},
		{"version 4", (&raw{}).header(4, 0, 0).Bytes(), "unsupported GGUF version 4"},
		{"big endian", (&raw{}).header(0x03000000, 0, 0).Bytes(), "big-endian"},
		{"huge tensor count", (&raw{}).header(3, u64max, 0).Bytes(), "tensor count"},
		{"huge kv count", (&raw{}).header(3, 0, 1<<62).Bytes(), "metadata count"},
		{"counts past EOF", (&raw{}).header(3, 1000, 1000).Bytes(), "only 0 remain"},
		{"key length huge", kvFile(func(r *raw) { r.u64(u64max).u32(0).u8(0) }), "exceeds the limit"},
		{"key length past EOF", kvFile(func(r *raw) { r.u64(100).u32(0).u8(0) }), "runs past the end"},
		{"unknown value type", kvFile(func(r *raw) { r.str("k").u32(13).u8(0) }), "unknown value type 13"},
		{"string value huge", kvFile(func(r *raw) { r.str("k").u32(uint32(TypeString)).u64(1 << 40) }), "exceeds the limit"},
		{"string value past EOF", kvFile(func(r *raw) { r.str("k").u32(uint32(TypeString)).u64(1000) }), "runs past the end"},
		{"array count huge", kvFile(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint8)).u64(u64max) }), "more than the limit"},
		{"array count past EOF", kvFile(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint64)).u64(1 << 20) }), "needs at least"},
		{"string array past EOF", kvFile(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(100).u64(0) }), "needs at least"},
		{"array elem type bad", kvFile(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(99).u64(0) }), "unknown element type 99"},
		{"deep nesting", kvFile(func(r *raw) { r.str("k").u32(uint32(TypeArray)); nest(r, MaxArrayDepth+1) }), "nested deeper"},
		{"bool value 2", kvFile(func(r *raw) { r.str("k").u32(uint32(TypeBool)).u8(2) }), "not 0 or 1"},
		{"bool array 7", kvFile(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeBool)).u64(2).u8(1).u8(7) }), "not 0 or 1"},
		{"truncated value", kvFile(func(r *raw) { r.str("k").u32(uint32(TypeUint64)).u32(0) }), "truncated"},
		{"duplicate key", func() []byte {
			var r raw
			r.header(3, 0, 2).str("k").u32(uint32(TypeUint8)).u8(1).str("k").u32(uint32(TypeUint8)).u8(2)
			return r.Bytes()
		}(), "duplicate metadata key"},
		{"alignment type", kvFile(func(r *raw) { r.str(AlignmentKey).u32(uint32(TypeUint64)).u64(32) }), "must be a u32"},
		{"alignment zero", kvFile(func(r *raw) { r.str(AlignmentKey).u32(uint32(TypeUint32)).u32(0) }), "not a power of two"},
		{"alignment huge", kvFile(func(r *raw) { r.str(AlignmentKey).u32(uint32(TypeUint32)).u32(1 << 31) }), "exceeds the limit"},
		{"alignment 48", kvFile(func(r *raw) { r.str(AlignmentKey).u32(uint32(TypeUint32)).u32(48) }), "not a power of two"},
		{"tensor name too long", tensors(1, 0, func(r *raw) { r.tensor(string(make([]byte, 64)), TypeF32, []uint64{1}, 0) }), "exceeds the limit of 63"},
		{"tensor 0 dims", tensors(1, 32, func(r *raw) { r.str("t").u32(0).u32(0).u64(0) }), "0 dimensions"},
		{"tensor 5 dims", tensors(1, 32, func(r *raw) { r.tensor("t", TypeF32, []uint64{1, 1, 1, 1, 1}, 0) }), "5 dimensions"},
		{"tensor ne 0", tensors(1, 32, func(r *raw) { r.tensor("t", TypeF32, []uint64{0}, 0) }), "invalid size 0"},
		{"tensor ne huge", tensors(1, 32, func(r *raw) { r.tensor("t", TypeF32, []uint64{u64max}, 0) }), "invalid size"},
		{"tensor elements overflow", tensors(1, 32, func(r *raw) { r.tensor("t", TypeF32, []uint64{1 << 32, 1 << 32}, 0) }), "overflow"},
		{"tensor size overflow", tensors(1, 32, func(r *raw) { r.tensor("t", TypeF32, []uint64{1 << 62}, 0) }), "overflows"},
		{"tensor retired type", tensors(1, 32, func(r *raw) { r.tensor("t", TensorType(4), []uint64{32}, 0) }), "unknown type id 4"},
		{"tensor unknown type", tensors(1, 32, func(r *raw) { r.tensor("t", TensorType(99), []uint64{32}, 0) }), "unknown type id 99"},
		{"tensor partial block", tensors(1, 64, func(r *raw) { r.tensor("t", TypeQ4_K, []uint64{255}, 0) }), "not a multiple of the q4_K block size"},
		{"tensor misaligned", tensors(1, 64, func(r *raw) { r.tensor("t", TypeF32, []uint64{1}, 4) }), "not a multiple of the alignment"},
		{"tensor offset huge", tensors(1, 64, func(r *raw) { r.tensor("t", TypeF32, []uint64{1}, u64max) }), "out of range"},
		{"tensor offset past EOF", tensors(1, 32, func(r *raw) { r.tensor("t", TypeF32, []uint64{1}, 1<<40) }), "outside"},
		{"tensor data past EOF", tensors(1, 32, func(r *raw) { r.tensor("t", TypeF32, []uint64{9}, 0) }), "outside"},
		{"no data section", withHeader(1, (&raw{}).tensor("t", TypeF32, []uint64{1}, 0).Bytes()), "ends before its data section"},
		{"duplicate tensor", tensors(2, 64, func(r *raw) {
			r.tensor("t", TypeF32, []uint64{1}, 0).tensor("t", TypeF32, []uint64{1}, 32)
		}), "duplicate tensor name"},
		{"overlapping tensors", tensors(2, 96, func(r *raw) {
			r.tensor("a", TypeF32, []uint64{16}, 32).tensor("b", TypeF32, []uint64{9}, 0)
		}), "overlaps"},
		{"truncated tensor info", withHeader(1, (&raw{}).str("abcdefghijklmnopqrst").u32(2).u64(4).Bytes()), "truncated"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := parse(c.data)
			require.Error(t, err)
			assert.Nil(t, f)
			var fe *FormatError
			require.ErrorAs(t, err, &fe, "%v", err)
			assert.Contains(t, fe.Reason, c.reason)
			assert.GreaterOrEqual(t, fe.Offset, int64(0))
			assert.LessOrEqual(t, fe.Offset, int64(len(c.data)))
		})
	}
}

func TestMaxDepthAccepted(t *testing.T) {
	f, err := parse(kvFile(func(r *raw) { r.str("k").u32(uint32(TypeArray)); nest(r, MaxArrayDepth) }))
	require.NoError(t, err)
	v, _ := f.Get("k")
	assert.Equal(t, MaxArrayDepth, v.depth())
	// And the same value round-trips through the Builder.
	var b Builder
	require.NoError(t, b.Set("k", v))
	_, err = parse(mustBuild(t, &b))
	require.NoError(t, err)
}

// TestEveryTruncation cuts a valid file at every length: the result is either an error of
// type *FormatError, or (only inside the final padding) a file that still holds all data.
func TestEveryTruncation(t *testing.T) {
	var b Builder
	for _, c := range allValues {
		require.NoError(t, b.Set(c.key, c.x))
	}
	require.NoError(t, b.AddTensor("a", TypeF32, []int64{3}, f32bytes(1, 2, 3)))
	require.NoError(t, b.AddTensor("b", TypeQ8_0, []int64{32}, make([]byte, 34)))
	full := mustBuild(t, &b)
	ref, err := parse(full)
	require.NoError(t, err)
	last, _ := ref.Tensor("b")
	end := ref.DataOffset() + last.Offset + last.Size
	for n := 0; n < len(full); n++ {
		f, err := parse(full[:n])
		if int64(n) >= end {
			assert.NoError(t, err, "cut at %d", n)
			continue
		}
		var fe *FormatError
		require.ErrorAs(t, err, &fe, "cut at %d", n)
		assert.Nil(t, f)
	}
}

// TestEveryByteFlip flips each byte of a small valid file: parsing must never panic.
func TestEveryByteFlip(t *testing.T) {
	var b Builder
	require.NoError(t, b.Set("s", []string{"x", "yy"}))
	require.NoError(t, b.Set("n", []Value{mustValue([]int8{1})}))
	require.NoError(t, b.AddTensor("a", TypeF16, []int64{2, 2}, make([]byte, 8)))
	full := mustBuild(t, &b)
	for i := range full {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			mut := bytes.Clone(full)
			mut[i] ^= x
			if f, err := parse(mut); err == nil {
				exercise(t, f)
			}
		}
	}
}

// lyingReader claims a huge size but holds only a short prefix.
type lyingReader struct{ data []byte }

func (l lyingReader) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(l.data).ReadAt(p, off)
}

// TestNoAbsurdAllocation declares large arrays and strings that the (lying) file size
// would allow, but whose bytes are absent: the parse must fail after allocating only a
// small amount, because allocations follow the data actually read.
func TestNoAbsurdAllocation(t *testing.T) {
	inputs := [][]byte{
		kvFile(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint64)).u64(MaxArrayLen) }),
		kvFile(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(MaxArrayLen) }),
		kvFile(func(r *raw) { r.str("k").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(MaxArrayLen) }),
		kvFile(func(r *raw) { r.str("k").u32(uint32(TypeString)).u64(MaxStringLen) }),
		(&raw{}).header(3, MaxTensors, MaxKVs).Bytes(),
	}
	for i, in := range inputs {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Read(lyingReader{in}, 1<<40)
		runtime.ReadMemStats(&after)
		var fe *FormatError
		require.ErrorAs(t, err, &fe, "input %d", i)
		assert.Contains(t, fe.Reason, "truncated", "input %d", i)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("input %d: allocated %d bytes", i, alloc)
		assert.Less(t, alloc, uint64(4<<20), "input %d allocated %d bytes", i, alloc)
	}
}

// failingReader fails every read with a non-EOF error.
type failingReader struct{}

var errDisk = errors.New("disk on fire")

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, errDisk }

func TestReaderErrorIsWrapped(t *testing.T) {
	_, err := Read(failingReader{}, 100)
	require.ErrorIs(t, err, errDisk)
	var fe *FormatError
	assert.False(t, errors.As(err, &fe))
	_, err = Read(bytes.NewReader(nil), -1)
	assert.Error(t, err)
}

// exercise calls every accessor of a successfully parsed File, as a fuzz target would.
func exercise(t testing.TB, f *File) {
	for _, k := range f.Keys() {
		v, ok := f.Get(k)
		if !ok {
			t.Fatalf("key %q listed but not found", k)
		}
		_ = v.String()
		_, _ = f.GetInt(k)
		_, _ = f.GetString(k)
	}
	for _, ti := range f.Tensors() {
		b, err := f.TensorBytes(ti.Name)
		if err != nil || int64(len(b)) != ti.Size {
			t.Fatalf("tensor %q: %d bytes, err %v", ti.Name, len(b), err)
		}
		sr, _ := f.TensorData(ti.Name)
		if _, err := io.Copy(io.Discard, sr); err != nil {
			t.Fatal(err)
		}
	}
}
