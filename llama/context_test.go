//go:build cgo

package llama

import (
	"errors"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/testbackend"
)

// tinyModel writes a small random model and returns its path.
func tinyModel(t *testing.T, c RandomConfig) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	require.NoError(t, WriteRandomModel(path, c))
	return path
}

// leakCheck asserts at the end of the test that the live native objects are back to their
// count at the start.
func leakCheck(t *testing.T) {
	runtime.GC()
	start := ggml.LiveObjects()
	t.Cleanup(func() {
		assert.Equal(t, start, ggml.LiveObjects(), "live objects: %v", ggml.LiveObjectsByKind())
	})
}

func TestContextLimit(t *testing.T) {
	leakCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{}), Options{Threads: 1})
	require.NoError(t, err)
	defer m.Close()
	c, err := m.NewContext(ContextOptions{NCtx: 32, NBatch: 8})
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, 32, c.NCtx())
	assert.Equal(t, 8, c.NBatch())
	toks := make([]int32, 30)
	for i := range toks {
		toks[i] = int32(10 + i)
	}
	_, err = c.Eval(toks, false)
	require.NoError(t, err)
	assert.Equal(t, 30, c.Pos())
	_, err = c.Eval([]int32{1, 2, 3}, false)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrContextFull))
	assert.Contains(t, err.Error(), "exceed the 32 cells")
	assert.Equal(t, 30, c.Pos(), "nothing evaluated")
	_, err = c.Eval([]int32{1, 2}, false)
	require.NoError(t, err)
	assert.Equal(t, 32, c.Pos())
	_, err = c.Eval([]int32{1}, false)
	assert.True(t, errors.Is(err, ErrContextFull))

	_, err = c.Eval(nil, false)
	assert.Error(t, err)
	c.Reset()
	assert.Equal(t, 0, c.Pos())
	_, err = c.Eval([]int32{300}, false)
	assert.ErrorContains(t, err, "outside the vocabulary")
	_, err = c.Eval([]int32{-1}, false)
	assert.ErrorContains(t, err, "outside the vocabulary")

	c.Close()
	_, err = c.Eval([]int32{1}, false)
	assert.ErrorContains(t, err, "after Close")
}

// The logits do not depend on how the tokens are cut into batches and steps, and Reset gives
// the same results again.
func TestBatchingInvariance(t *testing.T) {
	leakCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{Seed: 7, NHead: 8, NHeadKV: 4}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	toks := make([]int32, 45)
	for i := range toks {
		toks[i] = int32(3 + (i*31)%290)
	}
	nv := m.HP.NVocab
	var ref []float32
	for _, nb := range []int{64, 45, 7, 1} {
		c, err := m.NewContext(ContextOptions{NCtx: 64, NBatch: nb, KVF32: true})
		require.NoError(t, err)
		all, err := c.Eval(toks, true)
		require.NoError(t, err)
		require.Len(t, all, len(toks)*nv)
		if ref == nil {
			ref = all
		} else {
			// equal up to float32 rounding (amplified by the fp16 exp of soft_max)
			assert.InDeltaSlice(t, ref, all, 1e-3, "n_batch %d", nb)
		}
		c.Reset()
		last, err := c.Eval(toks, false)
		require.NoError(t, err)
		// equal up to float32 rounding (one column takes the mat-vec kernel, several the GEMM)
		assert.InDeltaSlice(t, all[len(all)-nv:], last, 1e-4, "last-row logits are the last row of all logits (n_batch %d)", nb)
		c.Close()
	}
}

// Offloading the last layers to another backend (the Test backend, whose memory is not host
// memory) goes through the scheduler and gives the CPU's logits.
func TestOffloadThroughScheduler(t *testing.T) {
	leakCheck(t)
	path := tinyModel(t, RandomConfig{Seed: 11, NLayer: 3, Type: 1 /* f16 */})
	cpuOnly, err := Load(path, Options{Threads: 2})
	require.NoError(t, err)
	defer cpuOnly.Close()
	c0, err := cpuOnly.NewContext(ContextOptions{NCtx: 64})
	require.NoError(t, err)
	defer c0.Close()
	toks := []int32{1, 50, 60, 70, 80}
	want, err := c0.RunGreedy(toks, 6)
	require.NoError(t, err)

	test, err := testbackend.New(1)
	require.NoError(t, err)
	defer test.Close()
	for _, ngl := range []int{1, 3, 4} {
		m, err := Load(path, Options{Threads: 2, Offload: test, GPULayers: ngl})
		require.NoError(t, err)
		offloaded := 0
		for _, l := range m.layers {
			if l.offloaded() {
				offloaded++
			}
		}
		assert.Equal(t, min(ngl, 3), offloaded)
		assert.Equal(t, ngl > 3, m.output.Buffer().Name() != "CPU" && !m.output.Buffer().IsHost(), "output offloaded only when ngl > n_layer")
		c, err := m.NewContext(ContextOptions{NCtx: 64})
		require.NoError(t, err)
		got, err := c.RunGreedy(toks, 6)
		require.NoError(t, err)
		assert.Greater(t, c.sched.NumSplits(), 1, "ngl %d: the graph is split between the backends", ngl)
		assert.Equal(t, want.Generated, got.Generated, "ngl %d", ngl)
		for i := range want.Rows {
			assert.InDeltaSlice(t, want.Rows[i], got.Rows[i], 1e-3, "ngl %d row %d", ngl, i)
		}
		c.Close()
		m.Close()
	}
}

// Several offload backends (Offload and Offloads, e.g. several RPC servers) share the
// offloaded layers in runs of consecutive layers, each with its weights and KV cache, and the
// logits stay the CPU's.
func TestOffloadSplitsLayers(t *testing.T) {
	leakCheck(t)
	path := tinyModel(t, RandomConfig{Seed: 12, NLayer: 4, Type: 1 /* f16 */})
	cpuOnly, err := Load(path, Options{Threads: 2})
	require.NoError(t, err)
	defer cpuOnly.Close()
	c0, err := cpuOnly.NewContext(ContextOptions{NCtx: 64})
	require.NoError(t, err)
	defer c0.Close()
	toks := []int32{1, 40, 41, 42}
	want, err := c0.RunGreedy(toks, 5)
	require.NoError(t, err)

	b1, err := testbackend.New(1)
	require.NoError(t, err)
	defer b1.Close()
	b2, err := testbackend.New(1)
	require.NoError(t, err)
	defer b2.Close()
	for _, tc := range []struct {
		ngl  int
		devs []int // the backend of each layer
	}{{3, []int{-1, 0, 0, 1}}, {4, []int{0, 0, 1, 1}}, {5, []int{0, 0, 1, 1}}} {
		m, err := Load(path, Options{Threads: 2, Offload: b1, Offloads: []*ggml.Backend{b2}, GPULayers: tc.ngl})
		require.NoError(t, err)
		for i, l := range m.layers {
			assert.Equal(t, tc.devs[i], l.dev, "ngl %d layer %d", tc.ngl, i)
		}
		c, err := m.NewContext(ContextOptions{NCtx: 64})
		require.NoError(t, err)
		got, err := c.RunGreedy(toks, 5)
		require.NoError(t, err)
		assert.Equal(t, want.Generated, got.Generated, "ngl %d", tc.ngl)
		for i := range want.Rows {
			assert.InDeltaSlice(t, want.Rows[i], got.Rows[i], 1e-3, "ngl %d row %d", tc.ngl, i)
		}
		c.Close()
		m.Close()
	}
}

// One-token steps through the reused decode graphs give exactly the logits of graphs rebuilt
// through the scheduler, across n_kv buckets, a Reset and a change of thread count, and the
// graphs are reused (one per bucket).
func TestDecodeGraphReuse(t *testing.T) {
	leakCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{Seed: 5, NHead: 4, NHeadKV: 2}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	var ctxs [2]*Context
	for i := range ctxs {
		ctxs[i], err = m.NewContext(ContextOptions{NCtx: 128})
		require.NoError(t, err)
		defer ctxs[i].Close()
	}
	ctxs[1].noReuse = true
	prompt := []int32{1, 20, 30, 40}
	for round := 0; round < 2; round++ {
		if round == 1 {
			require.NoError(t, m.SetThreads(1))
		}
		var last [2][]float32
		for i, c := range ctxs {
			c.Reset()
			last[i], err = c.Eval(prompt, false)
			require.NoError(t, err)
		}
		for step := 0; step < 70; step++ {
			tok := int32(3 + (step*53)%290)
			for i, c := range ctxs {
				last[i], err = c.Eval([]int32{tok}, false)
				require.NoError(t, err)
			}
			require.Equal(t, last[1], last[0], "round %d step %d", round, step)
		}
		assert.Len(t, ctxs[0].decode, 3, "one graph per n_kv bucket (32, 64, 96)")
		assert.Empty(t, ctxs[1].decode)
	}
}

// StepWeightBytes: every tensor but the tables GET_ROWS reads a row of; token_embd counts when
// the output matrix is tied to it (qwen2 random models leave output.weight out), position_embd
// (gpt2) never.
func TestStepWeightBytes(t *testing.T) {
	leakCheck(t)
	for _, arch := range []string{"llama", "qwen2", "gpt2"} {
		t.Run(arch, func(t *testing.T) {
			path := tinyModel(t, RandomConfig{Arch: arch, Type: gguf.TypeQ8_0, Seed: 1, NHeadKV: 2})
			f, err := gguf.Open(path)
			require.NoError(t, err)
			sizes := map[string]int64{}
			var all int64
			for _, ti := range f.Tensors() {
				sizes[ti.Name] = ti.Size
				all += ti.Size
			}
			require.NoError(t, f.Close())
			m, err := Load(path, Options{Threads: 1})
			require.NoError(t, err)
			defer m.Close()
			want := all - sizes["position_embd.weight"] - sizes["token_types.weight"]
			if _, untied := sizes["output.weight"]; untied {
				want -= sizes["token_embd.weight"]
			}
			assert.Equal(t, all, m.WeightBytes())
			assert.Equal(t, want, m.StepWeightBytes())
			assert.LessOrEqual(t, m.StepWeightBytes(), all)
		})
	}
}
