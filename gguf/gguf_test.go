package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allValues holds one value of every metadata type, including nested arrays.
var allValues = []struct {
	key string
	x   any
	typ ValueType
}{
	{"v.u8", uint8(200), TypeUint8},
	{"v.i8", int8(-100), TypeInt8},
	{"v.u16", uint16(60000), TypeUint16},
	{"v.i16", int16(-30000), TypeInt16},
	{"v.u32", uint32(4000000000), TypeUint32},
	{"v.i32", int32(-2000000000), TypeInt32},
	{"v.f32", float32(3.25), TypeFloat32},
	{"v.bool.t", true, TypeBool},
	{"v.bool.f", false, TypeBool},
	{"v.str", "héllo, wörld", TypeString},
	{"v.str.empty", "", TypeString},
	{"v.u64", uint64(math.MaxUint64), TypeUint64},
	{"v.i64", int64(math.MinInt64), TypeInt64},
	{"v.f64", math.Pi, TypeFloat64},
	{"a.u8", []uint8{0, 1, 255}, TypeArray},
	{"a.i8", []int8{-128, 0, 127}, TypeArray},
	{"a.u16", []uint16{1, 65535}, TypeArray},
	{"a.i16", []int16{-32768, 32767}, TypeArray},
	{"a.u32", []uint32{7, 1 << 31}, TypeArray},
	{"a.i32", []int32{-1, 2, -3}, TypeArray},
	{"a.f32", []float32{0.5, float32(math.Inf(-1)), -0}, TypeArray},
	{"a.bool", []bool{true, false, true}, TypeArray},
	{"a.str", []string{"a", "", "tokens ▁x"}, TypeArray},
	{"a.u64", []uint64{math.MaxUint64, 0}, TypeArray},
	{"a.i64", []int64{math.MinInt64, math.MaxInt64}, TypeArray},
	{"a.f64", []float64{1e300, -1e-300}, TypeArray},
	{"a.empty", []int32{}, TypeArray},
	{"a.nested", []Value{mustValue([]int32{1, 2}), mustValue([]string{"x"}),
		mustValue([]Value{mustValue([]uint8{9})})}, TypeArray},
}

func mustValue(x any) Value {
	v, err := ValueOf(x)
	if err != nil {
		panic(err)
	}
	return v
}

func f32bytes(vals ...float32) []byte {
	var r raw
	for _, v := range vals {
		r.u32(math.Float32bits(v))
	}
	return r.Bytes()
}

func TestRoundTripAllTypes(t *testing.T) {
	var b Builder
	for _, c := range allValues {
		require.NoError(t, b.Set(c.key, c.x), c.key)
	}
	w1 := f32bytes(1, 2, 3, 4, 5, 6)
	q := bytes.Repeat([]byte{0xab}, 2*18) // two Q4_0 blocks
	i32 := make([]byte, 4*3)
	require.NoError(t, b.AddTensor("w1", TypeF32, []int64{3, 2}, w1))
	require.NoError(t, b.AddTensor("blk.0.q", TypeQ4_0, []int64{32, 1, 2, 1}, q))
	require.NoError(t, b.AddTensor("ids", TypeI32, []int64{3}, i32))
	data := mustBuild(t, &b)

	f, err := parse(data)
	require.NoError(t, err)
	assert.Equal(t, 3, f.Version())
	assert.Equal(t, int64(32), f.Alignment())
	assert.Equal(t, int64(0), f.DataOffset()%32)
	require.Equal(t, len(allValues), f.NumKV())
	for i, c := range allValues {
		assert.Equal(t, c.key, f.Keys()[i])
		v, ok := f.Get(c.key)
		require.True(t, ok, c.key)
		assert.Equal(t, c.typ, v.Type(), c.key)
		assert.Equal(t, mustValue(c.x), v, c.key)
	}
	nested, err := f.GetArray("a.nested")
	require.NoError(t, err)
	assert.Equal(t, TypeArray, nested.ElemType())
	assert.Equal(t, 3, nested.Len())
	assert.Equal(t, "[[1, 2], [\"x\"], [[9]]]", nested.String())

	ts := f.Tensors()
	require.Len(t, ts, 3)
	assert.Equal(t, TensorInfo{Name: "w1", Type: TypeF32, Shape: []int64{3, 2}, Offset: 0, Size: 24}, ts[0])
	assert.Equal(t, TensorInfo{Name: "blk.0.q", Type: TypeQ4_0, Shape: []int64{32, 1, 2, 1}, Offset: 32, Size: 36}, ts[1])
	assert.Equal(t, TensorInfo{Name: "ids", Type: TypeI32, Shape: []int64{3}, Offset: 96, Size: 12}, ts[2])
	assert.Equal(t, int64(64), ts[1].NumElements())
	for name, want := range map[string][]byte{"w1": w1, "blk.0.q": q, "ids": i32} {
		got, err := f.TensorBytes(name)
		require.NoError(t, err)
		assert.Equal(t, want, got, name)
	}
	// Every tensor, including the last, is padded to the alignment.
	assert.Equal(t, f.DataOffset()+96+32, int64(len(data)))
}

func TestGetters(t *testing.T) {
	var b Builder
	for _, c := range allValues {
		require.NoError(t, b.Set(c.key, c.x))
	}
	f, err := parse(mustBuild(t, &b))
	require.NoError(t, err)

	u8, err := f.GetUint8("v.u8")
	assert.NoError(t, err)
	assert.Equal(t, uint8(200), u8)
	i8, _ := f.GetInt8("v.i8")
	assert.Equal(t, int8(-100), i8)
	u16, _ := f.GetUint16("v.u16")
	assert.Equal(t, uint16(60000), u16)
	i16, _ := f.GetInt16("v.i16")
	assert.Equal(t, int16(-30000), i16)
	u32, _ := f.GetUint32("v.u32")
	assert.Equal(t, uint32(4000000000), u32)
	i32, _ := f.GetInt32("v.i32")
	assert.Equal(t, int32(-2000000000), i32)
	f32, _ := f.GetFloat32("v.f32")
	assert.Equal(t, float32(3.25), f32)
	bl, _ := f.GetBool("v.bool.t")
	assert.True(t, bl)
	s, _ := f.GetString("v.str")
	assert.Equal(t, "héllo, wörld", s)
	u64, _ := f.GetUint64("v.u64")
	assert.Equal(t, uint64(math.MaxUint64), u64)
	i64, _ := f.GetInt64("v.i64")
	assert.Equal(t, int64(math.MinInt64), i64)
	f64, _ := f.GetFloat64("v.f64")
	assert.Equal(t, math.Pi, f64)
	strs, err := f.GetStrings("a.str")
	assert.NoError(t, err)
	assert.Equal(t, []string{"a", "", "tokens ▁x"}, strs)
	ints, _ := f.GetInt32s("a.i32")
	assert.Equal(t, []int32{-1, 2, -3}, ints)
	fl, _ := f.GetFloat32s("a.f32")
	assert.Len(t, fl, 3)
	u64s, err := GetAs[[]uint64](f, "a.u64")
	assert.NoError(t, err)
	assert.Equal(t, []uint64{math.MaxUint64, 0}, u64s)
	v, err := GetAs[Value](f, "v.u8")
	assert.NoError(t, err)
	assert.Equal(t, uint8(200), v.Any())

	n, err := f.GetInt("v.u32")
	assert.NoError(t, err)
	assert.Equal(t, int64(4000000000), n)
	n, _ = f.GetInt("v.i8")
	assert.Equal(t, int64(-100), n)
	_, err = f.GetInt("v.u64") // MaxUint64 does not fit
	assert.Error(t, err)
	_, err = f.GetInt("v.str")
	var te *TypeError
	assert.ErrorAs(t, err, &te)

	_, err = f.GetUint32("missing")
	assert.ErrorIs(t, err, ErrKeyNotFound)
	_, err = f.GetUint32("v.i32")
	require.ErrorAs(t, err, &te)
	assert.Equal(t, &TypeError{Key: "v.i32", Want: "u32", Got: "i32"}, te)
	_, err = f.GetStrings("a.i32")
	require.ErrorAs(t, err, &te)
	assert.Equal(t, "arr[str]", te.Want)
	assert.Equal(t, "arr[i32]", te.Got)
	_, err = f.GetArray("v.str")
	assert.ErrorAs(t, err, &te)
	_, ok := f.Get("missing")
	assert.False(t, ok)
	_, err = f.TensorData("missing")
	assert.ErrorIs(t, err, ErrTensorNotFound)
	_, ok = f.Tensor("missing")
	assert.False(t, ok)
}

// TestExactLayout compares the Builder's output with a file assembled byte by byte.
func TestExactLayout(t *testing.T) {
	var b Builder
	require.NoError(t, b.Set("general.architecture", "llama"))
	require.NoError(t, b.Set("n", uint32(7)))
	require.NoError(t, b.Set("ids", []int16{1, -2}))
	require.NoError(t, b.AddTensor("a", TypeF16, []int64{2}, []byte{1, 2, 3, 4}))
	require.NoError(t, b.AddTensor("bb", TypeI8, []int64{5, 1}, []byte{5, 6, 7, 8, 9}))
	got := mustBuild(t, &b)

	var want raw
	want.header(3, 2, 3)
	want.str("general.architecture").u32(uint32(TypeString)).str("llama")
	want.str("n").u32(uint32(TypeUint32)).u32(7)
	want.str("ids").u32(uint32(TypeArray)).u32(uint32(TypeInt16)).u64(2).u16(1).u16(0xfffe)
	want.tensor("a", TypeF16, []uint64{2}, 0)
	want.tensor("bb", TypeI8, []uint64{5, 1}, 32)
	want.pad(32)
	want.Write([]byte{1, 2, 3, 4})
	want.pad(32)
	want.Write([]byte{5, 6, 7, 8, 9})
	want.pad(32)
	require.Equal(t, want.Bytes(), got)

	// Spot-check the little-endian header fields directly.
	assert.Equal(t, []byte("GGUF"), got[0:4])
	assert.Equal(t, []byte{3, 0, 0, 0}, got[4:8])
	assert.Equal(t, []byte{2, 0, 0, 0, 0, 0, 0, 0}, got[8:16])
	assert.Equal(t, []byte{3, 0, 0, 0, 0, 0, 0, 0}, got[16:24])
	assert.Equal(t, []byte{20, 0, 0, 0, 0, 0, 0, 0}, got[24:32]) // u64 key length
}

func TestHandBuiltVersion2(t *testing.T) {
	var r raw
	r.header(2, 1, 2)
	r.str("general.alignment").u32(uint32(TypeUint32)).u32(64)
	r.str("flag").u32(uint32(TypeBool)).u8(1)
	r.tensor("t", TypeQ8_0, []uint64{32, 2}, 0)
	r.pad(64)
	dataOff := r.Len()
	r.Write(bytes.Repeat([]byte{7}, 68))
	f, err := parse(r.Bytes())
	require.NoError(t, err)
	assert.Equal(t, 2, f.Version())
	assert.Equal(t, int64(64), f.Alignment())
	assert.Equal(t, int64(dataOff), f.DataOffset())
	ti, ok := f.Tensor("t")
	require.True(t, ok)
	assert.Equal(t, int64(68), ti.Size)
	sr, err := f.TensorData("t")
	require.NoError(t, err)
	assert.Equal(t, int64(68), sr.Size())
}

func TestMetadataOnly(t *testing.T) {
	// No tensors: the trailing padding may be missing.
	var r raw
	r.header(3, 0, 1).str("k").u32(uint32(TypeInt64)).u64(5)
	f, err := parse(r.Bytes())
	require.NoError(t, err)
	assert.Equal(t, 0, f.NumTensors())
	assert.Equal(t, int64(64), f.DataOffset())

	var b Builder
	require.NoError(t, b.Set("k", int64(5)))
	out := mustBuild(t, &b)
	assert.Equal(t, 64, len(out)) // padded, as the reference writer does
	assert.Equal(t, r.Bytes(), out[:r.Len()])
}

func TestBuilderSetReplacesInPlace(t *testing.T) {
	var b Builder
	require.NoError(t, b.Set("a", uint32(1)))
	require.NoError(t, b.Set("b", "x"))
	require.NoError(t, b.Set("a", "now a string"))
	f, err := parse(mustBuild(t, &b))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, f.Keys())
	s, err := f.GetString("a")
	assert.NoError(t, err)
	assert.Equal(t, "now a string", s)
}

func TestBuilderCustomAlignment(t *testing.T) {
	var b Builder
	require.NoError(t, b.Set(AlignmentKey, uint32(128)))
	require.NoError(t, b.AddTensor("x", TypeF32, []int64{1}, f32bytes(1)))
	require.NoError(t, b.AddTensor("y", TypeF32, []int64{2}, f32bytes(2, 3)))
	data := mustBuild(t, &b)
	f, err := parse(data)
	require.NoError(t, err)
	assert.Equal(t, int64(128), f.Alignment())
	assert.Equal(t, int64(0), f.DataOffset()%128)
	y, _ := f.Tensor("y")
	assert.Equal(t, int64(128), y.Offset)
	assert.Equal(t, f.DataOffset()+256, int64(len(data)))
}

func TestBuilderErrors(t *testing.T) {
	var b Builder
	assert.Error(t, b.Set("x", 5))          // plain int: ambiguous width
	assert.Error(t, b.Set("x", []int{1}))   // unsupported slice
	assert.Error(t, b.Set("x", struct{}{})) // unsupported type
	assert.Error(t, b.Set("x", Value{}))
	assert.Error(t, b.Set("x", []Value{mustValue(uint8(1))})) // nested non-array
	assert.Error(t, b.Set(AlignmentKey, uint32(48)))
	assert.Error(t, b.Set(AlignmentKey, uint32(0)))
	assert.Error(t, b.Set(AlignmentKey, uint32(MaxAlignment*2)))
	assert.Error(t, b.Set(AlignmentKey, uint64(32)))
	deep := mustValue([]uint8{1})
	for range MaxArrayDepth {
		deep = mustValue([]Value{deep})
	}
	assert.Error(t, b.Set("deep", deep))

	f4 := f32bytes(1, 2, 3, 4)
	assert.NoError(t, b.AddTensor("ok", TypeF32, []int64{4}, f4))
	assert.Error(t, b.AddTensor("ok", TypeF32, []int64{4}, f4))                     // duplicate
	assert.Error(t, b.AddTensor(string(make([]byte, 64)), TypeF32, []int64{4}, f4)) // long name
	assert.Error(t, b.AddTensor("t", TensorType(4), []int64{4}, f4))                // retired type
	assert.Error(t, b.AddTensor("t", TypeF32, []int64{}, nil))
	assert.Error(t, b.AddTensor("t", TypeF32, []int64{1, 1, 1, 1, 1}, f4[:4]))
	assert.Error(t, b.AddTensor("t", TypeF32, []int64{0}, nil))
	assert.Error(t, b.AddTensor("t", TypeF32, []int64{-4}, f4))
	assert.Error(t, b.AddTensor("t", TypeF32, []int64{1 << 40, 1 << 40}, f4))
	assert.Error(t, b.AddTensor("t", TypeQ4_0, []int64{16, 2}, make([]byte, 18)))
	assert.Error(t, b.AddTensor("t", TypeF32, []int64{3}, f4)) // wrong data size
}

func TestOpenAndWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	var b Builder
	require.NoError(t, b.Set("general.name", "tiny"))
	require.NoError(t, b.AddTensor("w", TypeF32, []int64{2, 2}, f32bytes(1, 2, 3, 4)))
	require.NoError(t, b.WriteFile(path))

	f, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, st.Size(), f.Size())
	got, err := f.TensorBytes("w")
	require.NoError(t, err)
	assert.Equal(t, f32bytes(1, 2, 3, 4), got)
	require.NoError(t, f.Close())
	require.NoError(t, f.Close()) // idempotent
	_, err = f.TensorBytes("w")
	assert.Error(t, err)

	_, err = Open(filepath.Join(t.TempDir(), "absent.gguf"))
	assert.ErrorIs(t, err, os.ErrNotExist)
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	require.NoError(t, os.WriteFile(bad, []byte("not a gguf file at all, no no no"), 0o644))
	_, err = Open(bad)
	var fe *FormatError
	assert.ErrorAs(t, err, &fe)
}

func TestTypeTables(t *testing.T) {
	cases := []struct {
		typ          TensorType
		name         string
		block, bytes int64
	}{
		{TypeF32, "f32", 1, 4}, {TypeF16, "f16", 1, 2},
		{TypeQ4_0, "q4_0", 32, 18}, {TypeQ4_1, "q4_1", 32, 20},
		{TypeQ5_0, "q5_0", 32, 22}, {TypeQ5_1, "q5_1", 32, 24},
		{TypeQ8_0, "q8_0", 32, 34}, {TypeQ8_1, "q8_1", 32, 40},
		{TypeQ2_K, "q2_K", 256, 84}, {TypeQ3_K, "q3_K", 256, 110},
		{TypeQ4_K, "q4_K", 256, 144}, {TypeQ5_K, "q5_K", 256, 176},
		{TypeQ6_K, "q6_K", 256, 210}, {TypeQ8_K, "q8_K", 256, 292},
		{TypeIQ2_XXS, "iq2_xxs", 256, 66}, {TypeIQ2_XS, "iq2_xs", 256, 74},
		{TypeI8, "i8", 1, 1}, {TypeI16, "i16", 1, 2}, {TypeI32, "i32", 1, 4},
		// ggml's later types
		{TypeIQ3_XXS, "iq3_xxs", 256, 98}, {TypeIQ1_S, "iq1_s", 256, 50}, {TypeIQ4_NL, "iq4_nl", 32, 18},
		{TypeIQ3_S, "iq3_s", 256, 110}, {TypeIQ2_S, "iq2_s", 256, 82}, {TypeIQ4_XS, "iq4_xs", 256, 136},
		{TypeI64, "i64", 1, 8}, {TypeF64, "f64", 1, 8}, {TypeIQ1_M, "iq1_m", 256, 56},
		{TypeBF16, "bf16", 1, 2}, {TypeTQ1_0, "tq1_0", 256, 54}, {TypeTQ2_0, "tq2_0", 256, 66},
	}
	for _, c := range cases {
		assert.True(t, c.typ.Valid())
		assert.Equal(t, c.name, c.typ.String())
		assert.Equal(t, c.block, c.typ.BlockSize(), c.name)
		assert.Equal(t, c.bytes, c.typ.TypeSize(), c.name)
		assert.Equal(t, 3*c.bytes, c.typ.RowSize(3*c.block), c.name)
	}
	for _, bad := range []TensorType{4, 5, 24, 25, 26, 31, 36, Redefined, Redefined | 17, Redefined | 21, math.MaxUint32} {
		assert.False(t, bad.Valid())
		assert.Equal(t, int64(-1), bad.RowSize(32))
		assert.Equal(t, int64(0), bad.BlockSize())
	}
	assert.Equal(t, int64(-1), TypeQ4_0.RowSize(33))
	assert.Equal(t, int64(-1), TypeF32.RowSize(math.MaxInt64))
	assert.Equal(t, "ggml_type(4)", TensorType(4).String())
	assert.Equal(t, "str", TypeString.String())
	assert.Equal(t, "gguf_type(13)", ValueType(13).String())
	assert.False(t, ValueType(13).Valid())
}

func TestValueString(t *testing.T) {
	assert.Equal(t, `"abc"`, mustValue("abc").String())
	assert.Equal(t, "[1, 2, 3, 4, 5, 6, 7, 8, ... (10 elements)]",
		mustValue([]int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}).String())
	assert.Equal(t, "arr[f64]", mustValue([]float64(nil)).TypeName())
	assert.Equal(t, 0, mustValue(uint8(1)).Len())
	assert.Equal(t, []bool{}, mustValue([]bool(nil)).Any())
	x, ok := As[string](mustValue("s"))
	assert.True(t, ok)
	assert.Equal(t, "s", x)
	_, ok = As[int32](mustValue("s"))
	assert.False(t, ok)
}

func TestErrorsAreTyped(t *testing.T) {
	_, err := parse([]byte("GGUF\x01\x00\x00\x00" + string(make([]byte, 16))))
	var fe *FormatError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, int64(4), fe.Offset)
	assert.Contains(t, fe.Error(), "version 1 is not supported")
	assert.False(t, errors.Is(err, ErrKeyNotFound))
}

// TestErrorPrefixOnce: a wrapped error of this package says "gguf:" once, and errors.Is/As
// still reach the cause.
func TestErrorPrefixOnce(t *testing.T) {
	var b Builder
	err := b.Set("general.n", 5) // int has no fixed GGUF width
	if err == nil {
		t.Fatal("Set(int) succeeded")
	}
	if n := strings.Count(err.Error(), "gguf:"); n != 1 {
		t.Fatalf("%q says gguf: %d times", err.Error(), n)
	}
	if !strings.Contains(err.Error(), `metadata key "general.n"`) || !strings.Contains(err.Error(), "no fixed GGUF width") {
		t.Fatalf("unexpected message %q", err.Error())
	}
	if errors.Unwrap(err) == nil {
		t.Fatal("the cause is not wrapped")
	}
}

// Ids 18 to 20 mean I8, I16 and I32 here, and IQ3_XXS, IQ1_S and IQ4_NL in files written since
// February 2024: Read keeps the first meaning unless only the second fits the file's layout.
func TestRedefinedTypeIDs(t *testing.T) {
	write := func(t *testing.T, typ TensorType, shapes ...[]int64) *File {
		t.Helper()
		var b Builder
		for i, sh := range shapes {
			n := int64(1)
			for _, d := range sh {
				n *= d
			}
			require.NoError(t, b.AddTensor(fmt.Sprintf("t%d", i), typ, sh, make([]byte, typ.RowSize(n))))
		}
		var buf bytes.Buffer
		_, err := b.WriteTo(&buf)
		require.NoError(t, err)
		f, err := Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		require.NoError(t, err)
		return f
	}
	for _, c := range []struct{ old, now TensorType }{{TypeI8, TypeIQ3_XXS}, {TypeI16, TypeIQ1_S}, {TypeI32, TypeIQ4_NL}} {
		// the integer types keep their meaning
		f := write(t, c.old, []int64{256, 2}, []int64{512})
		for _, ti := range f.Tensors() {
			assert.Equal(t, c.old, ti.Type, ti.Name)
		}
		// the newer types are written with their file id and read back as themselves
		assert.Equal(t, c.old.FileID(), c.now.FileID())
		f = write(t, c.now, []int64{256, 2}, []int64{512}, []int64{256, 3})
		for _, ti := range f.Tensors() {
			assert.Equal(t, c.now, ti.Type, ti.Name)
			n := int64(1)
			for _, d := range ti.Shape {
				n *= d
			}
			assert.Equal(t, c.now.RowSize(n), ti.Size, ti.Name)
		}
		// one tensor alone, too: the older meaning runs past the end of the file
		f = write(t, c.now, []int64{256})
		assert.Equal(t, c.now, f.Tensors()[0].Type)
	}
	// a file that fits neither meaning still fails
	var b Builder
	require.NoError(t, b.AddTensor("a", TypeIQ4_NL, []int64{32}, make([]byte, 18)))
	var buf bytes.Buffer
	_, err := b.WriteTo(&buf)
	require.NoError(t, err)
	_, err = Read(bytes.NewReader(buf.Bytes()[:buf.Len()-16]), int64(buf.Len()-16))
	require.Error(t, err)
}
