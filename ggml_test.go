//go:build cgo

package ggml

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAvailable(t *testing.T) {
	require.NoError(t, Available())
}

func TestTypeString(t *testing.T) {
	tests := []struct {
		typ  Type
		want string
	}{
		{TypeF32, "f32"},
		{TypeF16, "f16"},
		{TypeQ4_0, "q4_0"},
		{TypeQ6_K, "q6_K"},
		{TypeI32, "i32"},
		{Type(-1), "Type(-1)"},
		{Type(1000), "Type(1000)"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.typ.String())
	}
}

func TestTensorNbytes(t *testing.T) {
	tests := []struct {
		typ  Type
		ne   []int64
		want uint64
	}{
		{TypeF32, []int64{4}, 16},
		{TypeF32, []int64{3, 5}, 60},
		{TypeF16, []int64{2, 3, 4}, 48},
		{TypeI32, []int64{7, 1, 1, 2}, 56},
		{TypeQ4_0, []int64{64, 2}, 2 * 2 * 18}, // 32-element blocks of 18 bytes
		{TypeQ8_0, []int64{32, 3}, 3 * 34},
	}
	for _, tc := range tests {
		got, err := tensorNbytes(tc.typ, tc.ne...)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "%v %v", tc.typ, tc.ne)
	}
}

func TestSelfCheck(t *testing.T) {
	require.NoError(t, SelfCheck())
}
