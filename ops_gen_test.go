//go:build cgo

package ggml

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOpsGenUpToDate fails when ops_gen.go differs from what tools/genops generates from
// ggml/include/ggml.h (run `go generate .` after changing the header).
func TestOpsGenUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	out := filepath.Join(t.TempDir(), "ops_gen.go")
	cmd := exec.Command(goTool, "run", "./tools/genops", "-out", out)
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", msg)
	want, err := os.ReadFile(out)
	require.NoError(t, err)
	have, err := os.ReadFile("ops_gen.go")
	require.NoError(t, err)
	require.True(t, string(want) == string(have), "ops_gen.go is out of date: run `go generate .`")
}
