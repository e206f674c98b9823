//go:build cgo

package llama_test

import (
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

// modelsDir is the shared reference models directory, or "" when absent.
func modelsDir(t *testing.T) string {
	d := filepath.Join("..", "..", "shared", "models")
	if env := os.Getenv("GGML_MODELS_DIR"); env != "" {
		d = env
	}
	if _, err := os.Stat(filepath.Join(d, "public-f16.gguf")); err != nil {
		t.Skipf("reference models not found in %s (set GGML_MODELS_DIR)", d)
	}
	return d
}

// TestReferenceLogits runs every public model on every reference prompt and checks the
// logits and the greedy continuation against llama.cpp's by the README's rules.
func TestReferenceLogits(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test-slow runs it")
	}
	dir := modelsDir(t)
	refs, err := filepath.Glob(filepath.Join(dir, "public-*.ref.*.json"))
	require.NoError(t, err)
	byModel := map[string][]string{}
	for _, r := range refs {
		base := filepath.Base(r)
		byModel[base[:strings.Index(base, ".ref.")]] = append(byModel[base[:strings.Index(base, ".ref.")]], r)
	}
	models := make([]string, 0, len(byModel))
	for m := range byModel {
		models = append(models, m)
	}
	sort.Strings(models)
	require.NotEmpty(t, models)
	for _, name := range models {
		t.Run(name, func(t *testing.T) {
			m, err := llama.Load(filepath.Join(dir, name+".gguf"), llama.Options{Threads: 2})
			require.NoError(t, err)
			defer m.Close()
			for _, rp := range byModel[name] {
				ref, err := refcmp.LoadRef(rp)
				require.NoError(t, err)
				c, err := m.NewContext(llama.ContextOptions{NCtx: 512})
				require.NoError(t, err)
				run, err := c.RunGreedy(ref.Tokens, len(ref.Generated))
				c.Close()
				require.NoError(t, err)
				rep := refcmp.Compare(ref, ref.Tokens, run.Generated, run.Rows, refcmp.Profiles[ref.Class()])
				t.Logf("%s: %s", filepath.Base(rp), rep)
				assert.True(t, rep.Pass(), "%s: %s", filepath.Base(rp), rep)
			}
		})
	}
}
