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
