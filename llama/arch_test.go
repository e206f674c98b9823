//go:build cgo

package llama

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/testbackend"
	"github.com/ggml-go/ggml/llama/internal/refcmp"
)

// TestRandomArchitectures writes a random model of every architecture, loads it and checks
// that a batch evaluation and a token-by-token one agree (the KV cache, positions and masks,
// including sliding windows shorter than the input) and that encoders make embeddings.
func TestRandomArchitectures(t *testing.T) {
	start := ggml.LiveObjects()
	for _, name := range append(Architectures(), "llama+headdim", "qwen2+headdim", "llama+experts12") {
		t.Run(name, func(t *testing.T) {
			arch, variant, _ := strings.Cut(name, "+")
			path := filepath.Join(t.TempDir(), arch+".gguf")
			cfg := RandomConfig{Arch: arch, Type: gguf.TypeF32, Seed: 3, NHeadKV: 2}
			switch {
			case variant == "experts12":
				cfg.NExpert = 12 // more than one MUL_MAT_ID node takes: grouped
			case variant != "":
				cfg.HeadDim = 24 // not n_embd/n_head (Mistral Nemo-style)
			case arch == "llama":
				cfg.NExpert = 4
			}
			require.NoError(t, WriteRandomModel(path, cfg))
			m, err := Load(path, Options{Threads: 2})
			require.NoError(t, err)
			defer m.Close()
			assert.Equal(t, arch, m.HP.Arch)
			assert.True(t, strings.HasPrefix(m.Description(), arch+" "), m.Description())
			if m.HP.SlidingWindow > 0 {
				m.HP.SlidingWindow = 3 // shorter than the input, to exercise the window
			}
			toks := []int32{1, 17, 42, 99, 5, 250, 7, 8}
			c, err := m.NewContext(ContextOptions{NCtx: 64})
			require.NoError(t, err)
			defer c.Close()
			if IsEncoder(arch) {
				v, err := c.Embed(toks, EmbedOptions{Pooling: PoolingMean, Normalize: true})
				require.NoError(t, err)
				require.Len(t, v, 1)
				var s float64
				for _, x := range v[0] {
					s += float64(x) * float64(x)
				}
				assert.InDelta(t, 1, s, 1e-4)
				_, err = c.Eval(toks, false)
				assert.ErrorContains(t, err, "encoder")
				return
			}
			batch, err := c.Eval(toks, true)
			require.NoError(t, err)
			c.Reset()
			nv := m.HP.NVocab
			for i, tok := range toks {
				row, err := c.Eval([]int32{tok}, false)
				require.NoError(t, err)
				var num, den float64
				for j, x := range row {
					d := float64(x - batch[i*nv+j])
					num += d * d
					den += float64(x) * float64(x)
				}
				require.False(t, math.IsNaN(num))
				assert.Less(t, num/den, 1e-9, "token %d: one-by-one and batch logits differ", i)
			}
			hidden, err := c.Embed(toks[:3], EmbedOptions{Pooling: PoolingLast})
			require.NoError(t, err)
			assert.Len(t, hidden[0], m.HP.NEmbd)
		})
	}
	assert.Equal(t, start, ggml.LiveObjects())
}

// TestUnsupportedArchitecture checks the error names the architecture and the supported ones.
func TestUnsupportedArchitecture(t *testing.T) {
	_, err := lookupArch("mamba")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"mamba"`)
	for _, a := range []string{"llama", "qwen2", "qwen2moe", "phi3", "gemma2", "gpt2", "bert", "nomic-bert"} {
		assert.Contains(t, err.Error(), a)
	}
}

// Offloading every layer of a model of each architecture to another backend (the Test
// backend) through the scheduler gives the CPU's logits (RoPE with factors, sliding-window
// masks, experts, soft-caps and tied outputs included).
func TestArchOffloadThroughScheduler(t *testing.T) {
	start := ggml.LiveObjects()
	test, err := testbackend.New(1)
	require.NoError(t, err)
	for _, arch := range Architectures() {
		if IsEncoder(arch) {
			continue
		}
		t.Run(arch, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), arch+".gguf")
			cfg := RandomConfig{Arch: arch, Type: gguf.TypeF16, Seed: 5, NHeadKV: 2}
			if arch == "llama" {
				cfg.NExpert = 4
			}
			require.NoError(t, WriteRandomModel(path, cfg))
			toks := []int32{1, 50, 60, 70, 80}
			var runs [2]*GreedyRun
			for i, opt := range []Options{{Threads: 2}, {Threads: 2, Offload: test, GPULayers: 99}} {
				m, err := Load(path, opt)
				require.NoError(t, err)
				c, err := m.NewContext(ContextOptions{NCtx: 64})
				require.NoError(t, err)
				runs[i], err = c.RunGreedy(toks, 4)
				c.Close()
				m.Close()
				require.NoError(t, err)
			}
			assert.Equal(t, runs[0].Generated, runs[1].Generated)
			for r := range runs[0].Rows {
				assert.InDeltaSlice(t, runs[0].Rows[r], runs[1].Rows[r], 1e-3, "row %d", r)
			}
		})
	}
	test.Close()
	assert.Equal(t, start, ggml.LiveObjects())
}

// The grouped expert path (layers with more experts than one MUL_MAT_ID node takes) must
// compute what the single-node path computes: with groups of 2 and 3, the MoE references of
// shared/models/arch (4 experts, top 2, renormalized or not) still pass.
func TestMoEGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test-slow runs it")
	}
	dir := filepath.Join("..", "..", "shared", "models", "arch")
	if _, err := os.Stat(filepath.Join(dir, "mixtral-f16.gguf")); err != nil {
		t.Skip("shared/models/arch not found")
	}
	defer func(g int) { moeGroupSize = g }(moeGroupSize)
	for _, g := range []int{2, 3} {
		moeGroupSize = g
		for _, name := range []string{"mixtral-f16", "qwen2moe-f16", "mixtral-q8_0"} {
			m, err := Load(filepath.Join(dir, name+".gguf"), Options{Threads: 2})
			require.NoError(t, err)
			for _, prompt := range []string{"fox", "long"} {
				ref, err := refcmp.LoadRef(filepath.Join(dir, name+".ref."+prompt+".json"))
				require.NoError(t, err)
				c, err := m.NewContext(ContextOptions{NCtx: 512})
				require.NoError(t, err)
				run, err := c.RunGreedy(ref.Tokens, len(ref.Generated))
				c.Close()
				require.NoError(t, err)
				rep := refcmp.Compare(ref, ref.Tokens, run.Generated, run.Rows, ref.ArchProfile())
				t.Logf("groups of %d, %s %s: %s", g, name, prompt, rep)
				assert.True(t, rep.Pass(), "groups of %d, %s %s: %s", g, name, prompt, rep)
			}
			m.Close()
		}
	}
}
