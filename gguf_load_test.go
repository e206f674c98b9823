//go:build cgo

package ggml_test

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// liveAfter returns a function asserting that the live-object count is back to its value now.
func liveAfter(t *testing.T) func() {
	runtime.GC()
	start := ggml.LiveObjects()
	return func() {
		assert.Equal(t, start, ggml.LiveObjects(), "live native objects: %v", ggml.LiveObjectsByKind())
	}
}

// writeGGUF writes a file with an F32 matrix, an F16 vector and a Q8_0 matrix and returns its
// path and the F32 values of each tensor.
func writeGGUF(t *testing.T) (string, map[string][]float32) {
	t.Helper()
	var b gguf.Builder
	require.NoError(t, b.Set("general.architecture", "test"))
	want := map[string][]float32{}
	a := make([]float32, 6*3)
	for i := range a {
		a[i] = float32(i) - 4.5
	}
	require.NoError(t, b.AddTensor("a", gguf.TypeF32, []int64{6, 3}, ggml.Float32Bytes(a)))
	want["a"] = a
	h := []float32{1, 0.5, -2, 3}
	require.NoError(t, b.AddTensor("h", gguf.TypeF16, []int64{4}, ggml.Float16Bytes(ggml.Float16Slice(h))))
	want["h"] = h
	q := make([]float32, 64)
	for i := range q {
		q[i] = float32(i%9) - 4
	}
	qb, err := ggml.Quantize(ggml.TypeQ8_0, q, 32)
	require.NoError(t, err)
	require.NoError(t, b.AddTensor("q", gguf.TypeQ8_0, []int64{32, 2}, qb))
	want["q"], err = ggml.Dequantize(ggml.TypeQ8_0, qb, 64)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "t.gguf")
	require.NoError(t, b.WriteFile(path))
	return path, want
}

func TestLoadGGUFTensors(t *testing.T) {
	path, want := writeGGUF(t)
	for _, tc := range []struct {
		name   string
		bt     *ggml.BufferType
		mapped bool
	}{{"mapped", nil, true}, {"cpu upload", ggml.CPUBufferType(), false}} {
		t.Run(tc.name, func(t *testing.T) {
			defer liveAfter(t)()
			f, err := gguf.Open(path)
			require.NoError(t, err)
			defer f.Close()
			var calls int
			var last, total int64
			lt, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{BufferType: tc.bt,
				Progress: func(d, n int64) { calls++; last, total = d, n }})
			require.NoError(t, err)
			defer lt.Close()
			assert.Equal(t, tc.mapped, lt.Mapped())
			assert.Equal(t, 3, lt.Len())
			assert.Equal(t, total, last, "progress reaches the total")
			assert.GreaterOrEqual(t, calls, 3)
			assert.Equal(t, ggml.BufferUsageWeights, lt.Buffer().Usage())
			for name, w := range want {
				tn := lt.Tensor(name)
				require.NotNil(t, tn, name)
				info, _ := f.Tensor(name)
				assert.Equal(t, info.Shape, tn.Shape()[:len(info.Shape)], name)
				assert.Equal(t, int32(info.Type), int32(tn.Type()), name)
				var got []float32
				switch tn.Type() {
				case ggml.TypeF32:
					got, err = tn.Float32()
				case ggml.TypeF16:
					var h []ggml.Float16
					h, err = tn.Float16()
					got = ggml.Float32Slice(h)
				default:
					var raw []byte
					raw, err = tn.Bytes()
					require.NoError(t, err)
					got, err = ggml.Dequantize(tn.Type(), raw, int(tn.NumElements()))
				}
				require.NoError(t, err)
				assert.Equal(t, w, got, name)
			}
			// the tensors compute: a·x on the CPU
			cpu, err := ggml.NewCPU(ggml.WithThreads(1))
			require.NoError(t, err)
			defer cpu.Close()
			ctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20})
			require.NoError(t, err)
			defer ctx.Close()
			x := ctx.NewTensor1D(ggml.TypeF32, 6)
			require.NoError(t, x.Fill(1))
			y := ctx.MulMat(lt.Tensor("a"), x)
			require.NoError(t, ctx.Compute(ctx.NewGraph().BuildForwardExpand(y), 1))
			got, err := y.Float32()
			require.NoError(t, err)
			assert.Equal(t, []float32{-12, 24, 60}, got)
		})
	}
}

func TestLoadGGUFTensorsSelectAndErrors(t *testing.T) {
	defer liveAfter(t)()
	path, _ := writeGGUF(t)
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	lt, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{Select: func(i gguf.TensorInfo) bool { return i.Name == "h" }})
	require.NoError(t, err)
	assert.Equal(t, 1, lt.Len())
	assert.Nil(t, lt.Tensor("a"))
	lt.Close()
	lt.Close()

	_, err = ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{Select: func(gguf.TensorInfo) bool { return false }})
	assert.ErrorContains(t, err, "no tensors selected")
	_, err = ggml.LoadGGUFTensors(filepath.Join(t.TempDir(), "missing.gguf"), f, ggml.GGUFLoadOptions{})
	assert.ErrorContains(t, err, "No such file")
	_, err = ggml.LoadGGUFTensors(path, nil, ggml.GGUFLoadOptions{})
	assert.Error(t, err)
}

// writeGGUFParts writes Q8_0 matrices p0 [64, 8], p1 [64, 16], p2 [64, 8], an F32 matrix f [64, 8]
// and a Q8_0 matrix w [32, 8] (another row length), and returns the path and each one's
// dequantized values.
func writeGGUFParts(t *testing.T) (string, map[string][]float32) {
	t.Helper()
	var b gguf.Builder
	require.NoError(t, b.Set("general.architecture", "test"))
	want := map[string][]float32{}
	add := func(name string, typ ggml.Type, ne0, ne1 int64, seed int) {
		v := make([]float32, ne0*ne1)
		for i := range v {
			v[i] = float32((i*7+seed*13)%23) - 11
		}
		if typ == ggml.TypeF32 {
			require.NoError(t, b.AddTensor(name, gguf.TypeF32, []int64{ne0, ne1}, ggml.Float32Bytes(v)))
			want[name] = v
			return
		}
		qb, err := ggml.Quantize(typ, v, int(ne0))
		require.NoError(t, err)
		require.NoError(t, b.AddTensor(name, gguf.TypeQ8_0, []int64{ne0, ne1}, qb))
		want[name], err = ggml.Dequantize(typ, qb, len(v))
		require.NoError(t, err)
	}
	add("p0", ggml.TypeQ8_0, 64, 8, 1)
	add("p1", ggml.TypeQ8_0, 64, 16, 2)
	add("p2", ggml.TypeQ8_0, 64, 8, 3)
	add("f", ggml.TypeF32, 64, 8, 4)
	add("w", ggml.TypeQ8_0, 32, 8, 5)
	path := filepath.Join(t.TempDir(), "parts.gguf")
	require.NoError(t, b.WriteFile(path))
	return path, want
}

// Concat joins the rows of its parts in order, in a plain and in the repacked buffer type, and
// a product by the joined matrix equals the products by the parts, row for row.
func TestLoadGGUFTensorsConcat(t *testing.T) {
	path, want := writeGGUFParts(t)
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	for _, bt := range []*ggml.BufferType{ggml.CPUBufferType(), ggml.CPURepackBufferType()} {
		t.Run(bt.Name(), func(t *testing.T) {
			defer liveAfter(t)()
			var last, total int64
			lt, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{BufferType: bt,
				Select:   func(ti gguf.TensorInfo) bool { return ti.Name == "p1" },
				Concat:   []ggml.GGUFConcat{{Name: "joined", Parts: []string{"p0", "p1", "p2"}}},
				Progress: func(d, n int64) { last, total = d, n }})
			require.NoError(t, err)
			defer lt.Close()
			assert.Equal(t, 2, lt.Len(), "p1 and joined")
			assert.Nil(t, lt.Tensor("p0"))
			assert.Equal(t, total, last)
			j := lt.Tensor("joined")
			require.NotNil(t, j)
			assert.Equal(t, []int64{64, 32}, j.Shape()[:2])
			assert.Equal(t, ggml.TypeQ8_0, j.Type())
			raw, err := j.Bytes()
			require.NoError(t, err)
			got, err := ggml.Dequantize(j.Type(), raw, int(j.NumElements()))
			require.NoError(t, err)
			all := append(append(append([]float32{}, want["p0"]...), want["p1"]...), want["p2"]...)
			assert.Equal(t, all, got)

			cpu, err := ggml.NewCPU(ggml.WithThreads(2))
			require.NoError(t, err)
			defer cpu.Close()
			ctx, err := ggml.NewContext(ggml.Params{MemSize: 1 << 20})
			require.NoError(t, err)
			defer ctx.Close()
			x := ctx.NewTensor2D(ggml.TypeF32, 64, 3)
			xs := make([]float32, 64*3)
			for i := range xs {
				xs[i] = float32(i%11)*0.25 - 1
			}
			require.NoError(t, x.SetFloat32(xs))
			y := ctx.MulMat(j, x)
			yp := ctx.MulMat(lt.Tensor("p1"), x)
			g := ctx.NewGraph()
			g.BuildForwardExpand(y)
			g.BuildForwardExpand(yp)
			require.NoError(t, cpu.Compute(g))
			gy, err := y.Float32()
			require.NoError(t, err)
			gp, err := yp.Float32()
			require.NoError(t, err)
			for c := 0; c < 3; c++ {
				assert.Equal(t, gp[c*16:(c+1)*16], gy[c*32+8:c*32+24], "column %d: the rows of p1 within joined", c)
			}
		})
	}
}

func TestLoadGGUFTensorsConcatErrors(t *testing.T) {
	defer liveAfter(t)()
	path, _ := writeGGUFParts(t)
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	cpu := ggml.CPUBufferType()
	for _, tc := range []struct {
		opt  ggml.GGUFLoadOptions
		want string
	}{
		{ggml.GGUFLoadOptions{Concat: []ggml.GGUFConcat{{Name: "j", Parts: []string{"p0", "p1"}}}}, "needs a BufferType or NoMmap"},
		{ggml.GGUFLoadOptions{BufferType: cpu, Concat: []ggml.GGUFConcat{{Name: "j"}}}, "no parts"},
		{ggml.GGUFLoadOptions{BufferType: cpu, Concat: []ggml.GGUFConcat{{Name: "j", Parts: []string{"p0", "nope"}}}}, `no tensor "nope"`},
		{ggml.GGUFLoadOptions{BufferType: cpu, Concat: []ggml.GGUFConcat{{Name: "j", Parts: []string{"p0", "f"}}}}, "differs from"},
		{ggml.GGUFLoadOptions{BufferType: cpu, Concat: []ggml.GGUFConcat{{Name: "j", Parts: []string{"p0", "w"}}}}, "differs from"},
		{ggml.GGUFLoadOptions{BufferType: cpu, Concat: []ggml.GGUFConcat{{Name: "p0", Parts: []string{"p1"}}}}, "loaded already"},
		{ggml.GGUFLoadOptions{BufferType: cpu, Concat: []ggml.GGUFConcat{{Name: "j", Parts: []string{"p0"}}, {Name: "j", Parts: []string{"p1"}}}}, "loaded already"},
	} {
		_, err := ggml.LoadGGUFTensors(path, f, tc.opt)
		assert.ErrorContains(t, err, tc.want)
	}
	// NoMmap (a CPU buffer) joins too
	lt, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{NoMmap: true, Select: func(gguf.TensorInfo) bool { return false },
		Concat: []ggml.GGUFConcat{{Name: "j", Parts: []string{"p2", "p0"}}}})
	require.NoError(t, err)
	assert.Equal(t, []int64{64, 16}, lt.Tensor("j").Shape()[:2])
	lt.Close()
}
