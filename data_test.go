//go:build cgo

package ggml

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storages returns a context whose tensors live in its arena, and one whose tensors are placed
// in a CPU backend buffer by allocate (called after the tensors were created).
func storages(t *testing.T) map[string]func() (*Context, func()) {
	return map[string]func() (*Context, func()){
		"arena": func() (*Context, func()) {
			return newCtx(t, Params{MemSize: 1 << 20}), func() {}
		},
		"buffer": func() (*Context, func()) {
			ctx := newCtx(t, Params{NoAlloc: true})
			return ctx, func() {
				buf, err := AllocContextTensorsFromBufferType(ctx, CPUBufferType())
				require.NoError(t, err)
				t.Cleanup(func() { buf.Close() })
			}
		},
	}
}

func TestDataRoundTrips(t *testing.T) {
	leakCheck(t)
	for name, mk := range storages(t) {
		t.Run(name, func(t *testing.T) {
			ctx, allocate := mk()
			tf32 := ctx.NewTensor2D(TypeF32, 3, 2)
			tf16 := ctx.NewTensor2D(TypeF16, 3, 2)
			ti32 := ctx.NewTensor1D(TypeI32, 5)
			ti16 := ctx.NewTensor1D(TypeI16, 5)
			ti8 := ctx.NewTensor1D(TypeI8, 5)
			tq := ctx.NewTensor1D(TypeQ8_0, 64)
			allocate()

			f := []float32{1.5, -2, 3.25, 0, 1e-3, 65000}
			require.NoError(t, tf32.SetFloat32(f))
			got, err := tf32.Float32()
			require.NoError(t, err)
			assert.Equal(t, f, got)

			h := Float16Slice(f)
			require.NoError(t, tf16.SetFloat16(h))
			gh, err := tf16.Float16()
			require.NoError(t, err)
			assert.Equal(t, h, gh)
			// float32 accessors convert for F16 tensors
			require.NoError(t, tf16.SetFloat32(f))
			gf, err := tf16.Float32()
			require.NoError(t, err)
			assert.Equal(t, Float32Slice(h), gf)

			i32 := []int32{-1 << 31, -1, 0, 7, 1<<31 - 1}
			require.NoError(t, ti32.SetInt32(i32))
			g32, err := ti32.Int32()
			require.NoError(t, err)
			assert.Equal(t, i32, g32)

			i16 := []int16{-32768, -1, 0, 7, 32767}
			require.NoError(t, ti16.SetInt16(i16))
			g16, err := ti16.Int16()
			require.NoError(t, err)
			assert.Equal(t, i16, g16)

			i8 := []int8{-128, -1, 0, 7, 127}
			require.NoError(t, ti8.SetInt8(i8))
			g8, err := ti8.Int8()
			require.NoError(t, err)
			assert.Equal(t, i8, g8)

			src := make([]float32, 64)
			for i := range src {
				src[i] = float32(i) / 8
			}
			q, err := Quantize(TypeQ8_0, src, 64)
			require.NoError(t, err)
			require.NoError(t, tq.SetBytes(q))
			gq, err := tq.Bytes()
			require.NoError(t, err)
			assert.Equal(t, q, gq)

			// partial raw access
			n, err := tf32.WriteAt([]byte{0, 0, 0x80, 0x3f}, 4) // 1.0 at element 1
			require.NoError(t, err)
			assert.Equal(t, 4, n)
			part := make([]byte, 4)
			_, err = tf32.ReadAt(part, 4)
			require.NoError(t, err)
			assert.Equal(t, []byte{0, 0, 0x80, 0x3f}, part)
			_, err = tf32.ReadAt(part, 22)
			assert.Error(t, err)
			_, err = tf32.WriteAt(part, -1)
			assert.Error(t, err)

			require.NoError(t, ti32.Fill(3))
			g32, _ = ti32.Int32()
			assert.Equal(t, []int32{3, 3, 3, 3, 3}, g32)
			require.NoError(t, ti16.Fill(-2))
			require.NoError(t, ti8.Fill(5))
			require.NoError(t, tf16.Fill(0.5))
			require.NoError(t, tf32.Fill(0.25))
			got, _ = tf32.Float32()
			assert.Equal(t, []float32{0.25, 0.25, 0.25, 0.25, 0.25, 0.25}, got)
			assert.Error(t, tq.Fill(1))
			require.NoError(t, tf32.SetZero())
			got, _ = tf32.Float32()
			assert.Equal(t, make([]float32, 6), got)

			// errors name the tensor and the sizes
			tf32.SetName("w")
			err = tf32.SetFloat32([]float32{1, 2})
			require.Error(t, err)
			assert.Contains(t, err.Error(), `"w"`)
			assert.Contains(t, err.Error(), "2 elements")
			_, err = ti32.Float32()
			assert.Error(t, err)
			assert.Error(t, ti32.SetInt16([]int16{1, 2, 3, 4, 5}))
			assert.Error(t, tf32.SetInt32(make([]int32, 6)))
			_, err = ti8.Int32()
			assert.Error(t, err)
			_, err = ti16.Int8()
			assert.Error(t, err)
			_, err = tq.Float32()
			assert.Error(t, err)
			assert.Error(t, tq.SetBytes(q[:10]))
		})
	}
}

// TestDataStridedViews: the typed accessors read and write views with any strides.
func TestDataStridedViews(t *testing.T) {
	leakCheck(t)
	for name, mk := range storages(t) {
		t.Run(name, func(t *testing.T) {
			ctx, allocate := mk()
			a := ctx.NewTensor2D(TypeF32, 3, 2) // [[0 1 2] [3 4 5]]
			tr := ctx.Transpose(a)              // 2x3, nb0 = 12
			col := ctx.View2D(a, 2, 2, a.Nb()[1], 4)
			allocate()
			require.NoError(t, a.SetFloat32([]float32{0, 1, 2, 3, 4, 5}))
			got, err := tr.Float32()
			require.NoError(t, err)
			assert.Equal(t, []float32{0, 3, 1, 4, 2, 5}, got)
			got, err = col.Float32()
			require.NoError(t, err)
			assert.Equal(t, []float32{1, 2, 4, 5}, got)
			require.NoError(t, tr.SetFloat32([]float32{10, 13, 11, 14, 12, 15}))
			got, err = a.Float32()
			require.NoError(t, err)
			assert.Equal(t, []float32{10, 11, 12, 13, 14, 15}, got)
			_, err = tr.Bytes()
			assert.Error(t, err, "raw bytes need a contiguous tensor")
		})
	}
}

func TestDataNoMemory(t *testing.T) {
	leakCheck(t)
	ctx := newCtx(t, Params{NoAlloc: true})
	a := ctx.NewTensor1D(TypeF32, 4).SetName("x")
	_, err := a.Float32()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no data")
	assert.Error(t, a.SetBytes(make([]byte, 16)))
	assert.Error(t, a.SetZero())
	_, err = a.ReadAt(make([]byte, 4), 0)
	assert.Error(t, err)
	// empty tensors are fine
	e := newCtx(t, Params{MemSize: 1 << 12}).NewTensor1D(TypeF32, 0)
	v, err := e.Float32()
	require.NoError(t, err)
	assert.Empty(t, v)
	require.NoError(t, e.SetFloat32(nil))
}
