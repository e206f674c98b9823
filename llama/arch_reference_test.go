//go:build cgo

package llama_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/llama"
	"github.com/ggml-go/ggml/llama/internal/refcmp"
)

// archDir is shared/models/arch, or skips the test when absent.
func archDir(t *testing.T) string {
	d := filepath.Join("..", "..", "shared", "models", "arch")
	if env := os.Getenv("GGML_MODELS_DIR"); env != "" {
		d = filepath.Join(env, "arch")
	}
	if _, err := os.Stat(filepath.Join(d, "compare.py")); err != nil {
		t.Skipf("multi-architecture reference models not found in %s (set GGML_MODELS_DIR)", d)
	}
	return d
}

// refFormat returns the "format" of a reference JSON.
func refFormat(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var h struct {
		Format string `json:"format"`
	}
	require.NoError(t, json.Unmarshal(b, &h))
	return h.Format
}

// TestArchReferenceLogits runs every decoder model of shared/models/arch on the tokens of
// each reference (so that it does not depend on the tokenizer) and checks the logits and
// the greedy continuation against llama.cpp c392e5094 by the README's rules. GGML_ARCH
// selects models by file-name prefix (e.g. GGML_ARCH=gemma2).
func TestArchReferenceLogits(t *testing.T) {
	dir := archDir(t)
	refs, err := filepath.Glob(filepath.Join(dir, "*.ref.*.json"))
	require.NoError(t, err)
	byModel := map[string][]string{}
	for _, r := range refs {
		base := filepath.Base(r)
		if refFormat(t, r) != "llama-ref-v1" {
			continue
		}
		name := base[:strings.Index(base, ".ref.")]
		if p := os.Getenv("GGML_ARCH"); p != "" && !strings.HasPrefix(name, p) {
			continue
		}
		byModel[name] = append(byModel[name], r)
	}
	models := make([]string, 0, len(byModel))
	for m := range byModel {
		models = append(models, m)
	}
	sort.Strings(models)
	for _, name := range models {
		t.Run(name, func(t *testing.T) {
			m, err := llama.Load(filepath.Join(dir, name+".gguf"), llama.Options{Threads: 2})
			require.NoError(t, err)
			defer m.Close()
			worst := 0.0
			for _, rp := range byModel[name] {
				ref, err := refcmp.LoadRef(rp)
				require.NoError(t, err)
				c, err := m.NewContext(llama.ContextOptions{NCtx: 512})
				require.NoError(t, err)
				run, err := c.RunGreedy(ref.Tokens, len(ref.Generated))
				c.Close()
				require.NoError(t, err)
				rep := refcmp.Compare(ref, ref.Tokens, run.Generated, run.Rows, ref.ArchProfile())
				worst = max(worst, rep.NMSEMax)
				t.Logf("%s: %s", filepath.Base(rp), rep)
				assert.True(t, rep.Pass(), "%s: %s", filepath.Base(rp), rep)
			}
			t.Logf("%s: worst NMSE %.3g", name, worst)
		})
	}
}
