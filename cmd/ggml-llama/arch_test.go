//go:build cgo

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// numpyPython returns a Python interpreter with numpy (PYTHON, else python3), or skips.
func numpyPython(t *testing.T) string {
	py := os.Getenv("PYTHON")
	if py == "" {
		py = "python3"
	}
	if exec.Command(py, "-c", "import numpy").Run() != nil {
		t.Skipf("%s has no numpy (set PYTHON)", py)
	}
	return py
}

// TestArchCommandsMatchReference runs the logits and embed commands on one reference of each
// architecture of shared/models/arch, on the reference's own tokens (testPromptTokens, so the
// check does not depend on the tokenizer package), and checks the written files with the
// references' compare.py. GGML_ARCH selects references by file-name prefix.
func TestArchCommandsMatchReference(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "models", "arch")
	if _, err := os.Stat(filepath.Join(dir, "compare.py")); err != nil {
		t.Skip("shared/models/arch not found")
	}
	py := numpyPython(t)
	refs, err := filepath.Glob(filepath.Join(dir, "*.ref.hello.json"))
	require.NoError(t, err)
	defer func() { testPromptTokens = nil }()
	for _, ref := range refs {
		base := strings.TrimSuffix(filepath.Base(ref), ".json")
		if p := os.Getenv("GGML_ARCH"); p != "" && !strings.HasPrefix(base, p) {
			continue
		}
		t.Run(base, func(t *testing.T) {
			b, err := os.ReadFile(ref)
			require.NoError(t, err)
			var r struct {
				Format string  `json:"format"`
				Model  string  `json:"model"`
				Prompt string  `json:"prompt"`
				Tokens []int32 `json:"tokens"`
			}
			require.NoError(t, json.Unmarshal(b, &r))
			testPromptTokens = func(string) []int32 { return r.Tokens }
			out := filepath.Join(t.TempDir(), base+".json")
			args := []string{"logits", "-n", "24"}
			if r.Format == "llama-emb-v1" {
				args = []string{"embed"}
			}
			args = append(args, "-m", filepath.Join(dir, r.Model), "-p", r.Prompt, "-t", "2", "-o", out)
			code, _, errOut := capture(t, args...)
			require.Equal(t, 0, code, errOut)
			rep, err := exec.Command(py, filepath.Join(dir, "compare.py"), ref, out).CombinedOutput()
			require.NoError(t, err, "%s", rep)
			t.Logf("%s", rep)
		})
	}
}
