//go:build cgo

package llama

import (
	"flag"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/internal/testbackend"
)

func TestParseCacheType(t *testing.T) {
	for _, name := range []string{"f32", "f16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1"} {
		ct, err := ParseCacheType(name)
		require.NoError(t, err)
		assert.Equal(t, name, ct.String())
		up, err := ParseCacheType(strings.ToUpper(name))
		require.NoError(t, err)
		assert.Equal(t, ct, up)
	}
	ct, err := ParseCacheType("Q8_0")
	require.NoError(t, err)
	assert.Equal(t, CacheQ8_0, ct)
	ct, err = ParseCacheType("")
	require.NoError(t, err)
	assert.Equal(t, CacheDefault, ct)
	assert.Equal(t, "f16", CacheDefault.String())
	_, err = ParseCacheType("q2_K")
	assert.ErrorContains(t, err, "q8_0")
	assert.Equal(t, "CacheType(200)", CacheType(200).String())

	// a flag.Value: -ctk q8_0
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var k CacheType
	fs.Var(&k, "ctk", "K cache type")
	require.NoError(t, fs.Parse([]string{"-ctk", "q8_0"}))
	assert.Equal(t, CacheQ8_0, k)
	fs.SetOutput(nopWriter{})
	assert.Error(t, fs.Parse([]string{"-ctk", "bf17"}))
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }

// A quantized cache gives logits close to the F16 cache's (q8_0 within 2 %, the 4- and 5-bit
// types within 15 % relative; keys, values or both), whether the fused attention decodes the
// cache or MUL_MAT reads it (which quantizes the queries as well: the two agree within 3 %);
// its memory is what the types say; a sequence in a batch of 4 gets its tokens alone.
func TestQuantizedCache(t *testing.T) {
	leakCheck(t)
	// head size 32: one block per head
	m, err := Load(tinyModel(t, RandomConfig{Seed: 31, NEmbd: 128, NHead: 4, NHeadKV: 2, NLayer: 2}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	prompt := []int32{1, 40, 41, 42, 43, 44, 45, 46, 47}
	const n = 8
	f16, f16Rows := greedyAlone(t, m, prompt, n, ContextOptions{NCtx: 64})
	f16Ctx, err := m.NewContext(ContextOptions{NCtx: 64})
	require.NoError(t, err)
	f16Bytes := f16Ctx.KVBytes()
	f16Ctx.Close()
	for _, tc := range []struct {
		k, v CacheType
		tol  float64
	}{
		{CacheQ8_0, CacheDefault, 0.02}, {CacheQ4_0, CacheDefault, 0.15}, {CacheQ4_1, CacheDefault, 0.15},
		{CacheQ5_0, CacheDefault, 0.15}, {CacheQ5_1, CacheDefault, 0.15},
		{CacheDefault, CacheQ8_0, 0.02}, {CacheQ8_0, CacheQ8_0, 0.02}, {CacheQ4_0, CacheQ4_0, 0.15},
		{CacheF32, CacheQ5_1, 0.15},
	} {
		t.Run(tc.k.String()+"/"+tc.v.String(), func(t *testing.T) {
			opt := ContextOptions{NCtx: 64, TypeK: tc.k, TypeV: tc.v}
			toks, rows := greedyAlone(t, m, prompt, n, opt)
			worst := compareRuns(t, "against F16", tc.tol, f16, toks, f16Rows, rows)
			t.Logf("largest relative difference from the F16 cache: %.3g", worst)

			defer func(old bool) { fusedAttention = old }(fusedAttention)
			fusedAttention = false
			utoks, urows := greedyAlone(t, m, prompt, n, opt)
			fusedAttention = true
			worst = compareRuns(t, "MUL_MAT against the fused attention", 0.03, toks, utoks, rows, urows)
			t.Logf("largest relative difference, MUL_MAT against fused: %.3g", worst)

			c, err := m.NewContext(opt)
			require.NoError(t, err)
			defer c.Close()
			// 2 layers x 64 cells x (K: 64 values, V: 64 values)
			typK, _ := tc.k.ggmlType(false)
			typV, _ := tc.v.ggmlType(false)
			assert.Equal(t, uint64(2*64)*(typK.RowSize(64)+typV.RowSize(64)), c.KVBytes())
			assert.Less(t, c.KVBytes(), f16Bytes*2)

			prompts := [][]int32{prompt, {1, 7, 8}, {1, 200, 201, 202, 203}, {1, 90}}
			btoks, brows := greedyBatched(t, c, prompts, 4)
			compareRuns(t, "sequence 0 in a batch of 4", tc.tol/2, toks[:4], btoks[0], rows[:4], brows[0])
		})
	}
}

// Choices a model cannot take are errors that say what to use instead.
func TestCacheTypeErrors(t *testing.T) {
	leakCheck(t)
	path := tinyModel(t, RandomConfig{Seed: 11, NEmbd: 128, NLayer: 2, NHead: 4})
	m, err := Load(path, Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	_, err = m.NewContext(ContextOptions{NCtx: 32, TypeK: CacheType(99)})
	assert.ErrorContains(t, err, "unknown KV cache type")
	c, err := m.NewContext(ContextOptions{NCtx: 32, TypeK: CacheF32, TypeV: CacheF16})
	require.NoError(t, err)
	c.Close()

	odd, err := Load(tinyModel(t, RandomConfig{Seed: 11, NLayer: 1, NEmbd: 96, NHead: 2}), Options{Threads: 2}) // head size 48
	require.NoError(t, err)
	defer odd.Close()
	_, err = odd.NewContext(ContextOptions{NCtx: 32, TypeK: CacheQ8_0})
	assert.ErrorContains(t, err, "multiple of 32")
	_, err = odd.NewContext(ContextOptions{NCtx: 32, TypeV: CacheQ8_0})
	assert.ErrorContains(t, err, "q8_0 V cache needs a head size")

	test, err := testbackend.New(1)
	require.NoError(t, err)
	defer test.Close()
	off, err := Load(path, Options{Threads: 2, Offload: test, GPULayers: 1})
	require.NoError(t, err)
	defer off.Close()
	_, err = off.NewContext(ContextOptions{NCtx: 32, TypeK: CacheQ8_0})
	assert.ErrorContains(t, err, "offloads layers")
	_, err = off.NewContext(ContextOptions{NCtx: 32, TypeV: CacheQ4_0})
	assert.ErrorContains(t, err, "q4_0 V cache")
	c, err = off.NewContext(ContextOptions{NCtx: 32, TypeK: CacheF16})
	require.NoError(t, err)
	c.Close()
}
