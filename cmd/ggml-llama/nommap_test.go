//go:build cgo

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNoMmapFlag: --no-mmap reads the model into memory (llama.cpp's flag): the output is the
// same as with the mapped file.
func TestNoMmapFlag(t *testing.T) {
	path := randomModel(t)
	args := []string{"generate", "-m", path, "-p", "hello", "-n", "8", "--temp", "0", "-t", "1"}
	code, mapped, errOut := capture(t, args...)
	require.Equal(t, 0, code, errOut)
	code, read, errOut := capture(t, append(args, "--no-mmap")...)
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, mapped, read)
	code, out, _ := capture(t, "generate", "--help")
	require.Equal(t, 0, code)
	assert.Contains(t, out, "no-mmap")
}
