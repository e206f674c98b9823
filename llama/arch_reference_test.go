//go:build cgo

package llama_test

import (
	"encoding/binary"
	"encoding/json"
	"math"
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
	if testing.Short() {
		t.Skip("slow: make test-slow runs it")
	}
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

// embRef is the part of an "llama-emb-v1" reference the tests read.
type embRef struct {
	Model  string  `json:"model"`
	Tokens []int32 `json:"tokens"`
	NEmbd  int     `json:"n_embd"`
	Pooled map[string]struct {
		Embedding []float64 `json:"embedding"`
	} `json:"pooled"`
	TokenEmbdFile string `json:"token_embd_file"`
}

func cosine(a []float32, b []float64) float64 {
	var ab, aa, bb float64
	for i := range b {
		ab += float64(a[i]) * b[i]
		aa += float64(a[i]) * float64(a[i])
		bb += b[i] * b[i]
	}
	return ab / math.Sqrt(aa*bb)
}

// TestArchReferenceEmbeddings runs the encoder models of shared/models/arch on the tokens of
// each "llama-emb-v1" reference and checks the mean and CLS pooled vectors (cosine) and the
// per-token hidden states (NMSE) by the README's thresholds.
func TestArchReferenceEmbeddings(t *testing.T) {
	dir := archDir(t)
	refs, err := filepath.Glob(filepath.Join(dir, "*.ref.*.json"))
	require.NoError(t, err)
	for _, rp := range refs {
		if refFormat(t, rp) != "llama-emb-v1" {
			continue
		}
		base := filepath.Base(rp)
		if p := os.Getenv("GGML_ARCH"); p != "" && !strings.HasPrefix(base, p) {
			continue
		}
		t.Run(base, func(t *testing.T) {
			b, err := os.ReadFile(rp)
			require.NoError(t, err)
			var ref embRef
			require.NoError(t, json.Unmarshal(b, &ref))
			cosMin, tokMax, tokMean := 0.99999, 1e-5, 3e-6
			if strings.Contains(ref.Model, "q8_0") {
				cosMin, tokMax, tokMean = 0.999, 3e-3, 1e-3
			}
			m, err := llama.Load(filepath.Join(dir, ref.Model), llama.Options{Threads: 2})
			require.NoError(t, err)
			defer m.Close()
			c, err := m.NewContext(llama.ContextOptions{NCtx: 512})
			require.NoError(t, err)
			defer c.Close()
			for _, pool := range []struct {
				name string
				p    llama.Pooling
			}{{"mean", llama.PoolingMean}, {"cls", llama.PoolingCLS}} {
				v, err := c.Embed(ref.Tokens, llama.EmbedOptions{Pooling: pool.p, Normalize: true})
				require.NoError(t, err)
				cs := cosine(v[0], ref.Pooled[pool.name].Embedding)
				t.Logf("%s %s: 1-cos %.3g", base, pool.name, 1-cs)
				assert.GreaterOrEqual(t, cs, cosMin, pool.name)
			}
			rows, err := c.Embed(ref.Tokens, llama.EmbedOptions{Pooling: llama.PoolingNone})
			require.NoError(t, err)
			raw, err := os.ReadFile(filepath.Join(dir, ref.TokenEmbdFile))
			require.NoError(t, err)
			require.Equal(t, len(ref.Tokens)*ref.NEmbd*4, len(raw))
			var worst, sum float64
			for i, row := range rows {
				var num, den float64
				for j, x := range row {
					o := 4 * (i*ref.NEmbd + j)
					r := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[o:])))
					num += (float64(x) - r) * (float64(x) - r)
					den += r * r
				}
				worst = max(worst, num/den)
				sum += num / den
			}
			t.Logf("%s tokens: NMSE max %.3g mean %.3g", base, worst, sum/float64(len(rows)))
			assert.LessOrEqual(t, worst, tokMax)
			assert.LessOrEqual(t, sum/float64(len(rows)), tokMean)
		})
	}
}
