//go:build cgo

package llama

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/internal/testbackend"
)

// relDiff returns ||a-b|| / ||a||.
func relDiff(a, b []float32) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(a[i]) * float64(a[i])
	}
	if den == 0 {
		return math.Sqrt(num)
	}
	return math.Sqrt(num / den)
}

// nearTie reports whether the logits of tokens x and y differ by less than tol relative to
// the largest logit.
func nearTie(l []float32, x, y int32, tol float64) bool {
	var m float64
	for _, v := range l {
		m = max(m, math.Abs(float64(v)))
	}
	return math.Abs(float64(l[x])-float64(l[y])) <= tol*m
}

// greedyAlone evaluates prompt in a fresh context and makes n greedy steps, returning the
// tokens and the logits each was chosen from.
func greedyAlone(t *testing.T, m *Model, prompt []int32, n int, opt ContextOptions) ([]int32, [][]float32) {
	t.Helper()
	c, err := m.NewContext(opt)
	require.NoError(t, err)
	defer c.Close()
	logits, err := c.Eval(prompt, false)
	require.NoError(t, err)
	var toks []int32
	var rows [][]float32
	for i := 0; i < n; i++ {
		tok := argmax(logits)
		toks, rows = append(toks, tok), append(rows, logits)
		if logits, err = c.Eval([]int32{tok}, false); err != nil {
			t.Fatal(err)
		}
	}
	return toks, rows
}

// greedyBatched runs every prompt as its own sequence of one context: the prompts in one
// Decode (a mixed batch with the last token of each an output), then n steps of one token
// per sequence, each step one Decode.
func greedyBatched(t *testing.T, c *Context, prompts [][]int32, n int) ([][]int32, [][][]float32) {
	t.Helper()
	var b Batch
	for s, p := range prompts {
		for i, tok := range p {
			b.Add(tok, i, s, i == len(p)-1)
		}
	}
	require.NoError(t, c.Decode(&b))
	toks := make([][]int32, len(prompts))
	rows := make([][][]float32, len(prompts))
	last := make([]int, len(prompts)) // index in b of each sequence's output
	idx := 0
	for s, p := range prompts {
		idx += len(p)
		last[s] = idx - 1
	}
	for step := 0; step < n; step++ {
		next := make([]int32, len(prompts))
		for s := range prompts {
			l := append([]float32(nil), c.Logits(last[s])...)
			require.NotNil(t, l)
			next[s] = argmax(l)
			toks[s], rows[s] = append(toks[s], next[s]), append(rows[s], l)
		}
		b.Clear()
		for s, p := range prompts {
			b.Add(next[s], len(p)+step, s, true)
			last[s] = s
		}
		require.NoError(t, c.Decode(&b))
	}
	return toks, rows
}

// compareRuns checks that a batched run gives the tokens of the run alone, with logits within
// tol relative (L2), or a near tie where the tokens first differ (then the rest is not
// compared). It returns the largest difference.
func compareRuns(t *testing.T, name string, tol float64, alone, batched []int32, aloneRows, batchedRows [][]float32) float64 {
	t.Helper()
	worst := 0.0
	for i := range alone {
		d := relDiff(aloneRows[i], batchedRows[i])
		worst = max(worst, d)
		assert.Less(t, d, tol, "%s step %d: logits differ by %g relative", name, i, d)
		if alone[i] != batched[i] {
			assert.True(t, nearTie(aloneRows[i], alone[i], batched[i], tol), "%s step %d: token %d alone, %d in the batch, not a near tie", name, i, alone[i], batched[i])
			break
		}
	}
	return worst
}

// A sequence decoded inside a batch of 8 gives the same greedy tokens and logits as alone:
// within 1e-4 relative with an F32 KV cache. With the default F16 cache a key computed in a
// batch (a matrix product of 8 columns, summed in another order than a matrix-vector
// product) can round to the neighbouring F16 value, which moves the logits by up to a few
// 1e-4: there the bound is 1e-3 (tokens equal, or a near tie where they first differ).
func TestBatchOfEightMatchesAlone(t *testing.T) {
	leakCheck(t)
	for _, tc := range []struct {
		typ   gguf.TensorType
		kvF32 bool
		tol   float64
	}{{gguf.TypeF32, true, 1e-4}, {gguf.TypeQ4_0, true, 1e-4}, {gguf.TypeQ4_K, true, 1e-4}, {gguf.TypeF32, false, 1e-3},
		{gguf.TypeQ4_0, false, 1e-3}} {
		typ := tc.typ
		t.Run(fmt.Sprintf("%s/kvF32=%v", typ, tc.kvF32), func(t *testing.T) {
			cfg := RandomConfig{Seed: 21, NHead: 8, NHeadKV: 4, NLayer: 3, Type: typ}
			if typ == gguf.TypeQ4_K { // rows of whole super-blocks (repacked: the 8- and 16-row kernels)
				cfg.NEmbd, cfg.NFF = 256, 512
			}
			m, err := Load(tinyModel(t, cfg), Options{Threads: 2})
			require.NoError(t, err)
			defer m.Close()
			prompts := make([][]int32, 8)
			for s := range prompts {
				for i := 0; i < 3+5*s%11; i++ {
					prompts[s] = append(prompts[s], int32(3+(s*97+i*31)%290))
				}
			}
			const n = 16
			opt := ContextOptions{NCtx: 64, KVF32: tc.kvF32}
			c, err := m.NewContext(ContextOptions{NCtx: 512, KVF32: tc.kvF32})
			require.NoError(t, err)
			defer c.Close()
			toks, rows := greedyBatched(t, c, prompts, n)
			worst := 0.0
			for s, p := range prompts {
				alone, aloneRows := greedyAlone(t, m, p, n, opt)
				worst = max(worst, compareRuns(t, fmt.Sprintf("sequence %d", s), tc.tol, alone, toks[s], aloneRows, rows[s]))
			}
			t.Logf("largest relative difference of the logits: %.3g", worst)
			for s := range prompts {
				assert.Equal(t, len(prompts[s])+n, c.SeqPosMax(s)+1)
			}
		})
	}
}

// Every decoder architecture gives the same logits for a sequence in a batch of 3 as alone
// (sliding windows, soft-caps, experts, learned positions included).
func TestBatchedSequencesEveryArchitecture(t *testing.T) {
	leakCheck(t)
	for _, arch := range Architectures() {
		if IsEncoder(arch) {
			continue
		}
		t.Run(arch, func(t *testing.T) {
			cfg := RandomConfig{Arch: arch, Type: gguf.TypeF32, Seed: 9, NHeadKV: 2}
			if arch == "llama" {
				cfg.NExpert = 4
			}
			m := loadShortWindowModel(t, cfg)
			defer m.Close()
			prompts := [][]int32{{1, 17, 42, 99, 5}, {1, 250, 7}, {1, 8, 9, 10, 11, 12, 13}}
			c, err := m.NewContext(ContextOptions{NCtx: 64, KVF32: true})
			require.NoError(t, err)
			defer c.Close()
			toks, rows := greedyBatched(t, c, prompts, 6)
			for s, p := range prompts {
				alone, aloneRows := greedyAlone(t, m, p, 6, ContextOptions{NCtx: 64, KVF32: true})
				compareRuns(t, fmt.Sprintf("sequence %d", s), 1e-4, alone, toks[s], aloneRows, rows[s])
			}
		})
	}
}

// A prefix evaluated once and copied to other sequences serves them as if each had evaluated
// it; removing a sequence frees only the cells no other sequence holds; SeqKeep keeps one.
func TestSequenceOperations(t *testing.T) {
	leakCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{Seed: 4, NHead: 4, NHeadKV: 2}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	opt := ContextOptions{NCtx: 64, KVF32: true}
	c, err := m.NewContext(opt)
	require.NoError(t, err)
	defer c.Close()
	prefix := []int32{1, 40, 41, 42, 43, 44}
	suffixes := [][]int32{{50, 51}, {60}, {70, 71, 72}}
	var b Batch
	for i, tok := range prefix {
		b.Add(tok, i, 0, false)
	}
	require.NoError(t, c.Decode(&b))
	assert.Nil(t, c.Logits(0), "no outputs asked")
	for s := 1; s < len(suffixes); s++ {
		require.NoError(t, c.SeqCopy(0, s, 0, -1))
	}
	assert.Equal(t, len(prefix), c.Used(), "shared cells are stored once")
	b.Clear()
	var outs []int
	for s, suf := range suffixes {
		for i, tok := range suf {
			b.Add(tok, len(prefix)+i, s, i == len(suf)-1)
		}
		outs = append(outs, b.Len()-1)
	}
	require.NoError(t, c.Decode(&b))
	for s, suf := range suffixes {
		ref, err := m.NewContext(opt)
		require.NoError(t, err)
		want, err := ref.Eval(append(append([]int32(nil), prefix...), suf...), false)
		ref.Close()
		require.NoError(t, err)
		assert.Less(t, relDiff(want, c.Logits(outs[s])), 1e-5, "sequence %d", s)
	}
	used := c.Used()
	require.NoError(t, c.SeqRemove(1, 0, -1))
	assert.Equal(t, used-len(suffixes[1]), c.Used(), "the prefix stays for the other sequences")
	assert.Equal(t, -1, c.SeqPosMax(1))
	require.NoError(t, c.SeqKeep(2))
	assert.Equal(t, len(prefix)+len(suffixes[2]), c.Used())
	assert.Equal(t, -1, c.SeqPosMax(0))
	require.NoError(t, c.SeqRemove(-1, 0, -1))
	assert.Equal(t, 0, c.Used())
	assert.Error(t, c.SeqCopy(0, MaxSequences, 0, -1))
	assert.Error(t, c.SeqRemove(-2, 0, -1))
	b.Clear()
	b.Add(1, 0, MaxSequences, true)
	assert.ErrorContains(t, c.Decode(&b), "sequence id")
}

// Dropping tokens of a sequence and shifting the later ones down gives the logits of the
// kept tokens evaluated at the new positions (RoPE keys rotated in place), for both RoPE
// layouts. The model has one layer, whose keys and values depend on the token and its
// position only, so that the cache after the shift is exactly what the kept tokens alone make.
// F16 and quantized keys are rounded once more than in the fresh run (decoded, rotated,
// encoded again), so their bound is that of the type. Head size 32: a q8_0 block per head.
func TestSeqShift(t *testing.T) {
	leakCheck(t)
	for _, arch := range []string{"llama", "qwen2"} {
		t.Run(arch, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), arch+".gguf")
			require.NoError(t, WriteRandomModel(path, RandomConfig{Arch: arch, Type: gguf.TypeF32, Seed: 2, NEmbd: 128, NHead: 4, NHeadKV: 2, NLayer: 1}))
			m, err := Load(path, Options{Threads: 2})
			require.NoError(t, err)
			defer m.Close()
			toks := []int32{1, 30, 31, 32, 33, 34, 35, 36}
			next := int32(90)
			for _, tc := range []struct {
				k   CacheType
				tol float64
			}{{CacheF32, 1e-5}, {CacheF16, 2e-3}, {CacheQ8_0, 1e-2}, {CacheQ4_0, 0.1}} {
				opt := ContextOptions{NCtx: 64, TypeK: tc.k}
				c, err := m.NewContext(opt)
				require.NoError(t, err)
				_, err = c.Eval(toks, false)
				require.NoError(t, err)
				// keep the first token, drop the next 3, shift the rest down by 3
				require.NoError(t, c.SeqRemove(0, 1, 4))
				require.NoError(t, c.SeqShift(0, 4, -1, -3))
				assert.Equal(t, len(toks)-3, c.Pos())
				got, err := c.Eval([]int32{next}, false)
				require.NoError(t, err)
				c.Close()
				ref, err := m.NewContext(opt)
				require.NoError(t, err)
				want, err := ref.Eval(append([]int32{toks[0]}, append(append([]int32(nil), toks[4:]...), next)...), false)
				ref.Close()
				require.NoError(t, err)
				d := relDiff(want, got)
				t.Logf("%s keys: relative difference %.3g", tc.k, d)
				assert.Less(t, d, tc.tol, "%s keys", tc.k)
			}
		})
	}
}

// interleavedFull loads a tiny model and returns it with a context of 32 cells (batches of
// 16) that two interleaved sequences fill: token 5 + i of sequence i % 2 at position i / 2.
// Both are closed when the test ends (the context first).
func interleavedFull(t *testing.T) (*Model, *Context) {
	m, err := Load(tinyModel(t, RandomConfig{Seed: 3}), Options{Threads: 1})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	c, err := m.NewContext(ContextOptions{NCtx: 32, NBatch: 16})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	var b Batch
	for i := 0; i < 32; i++ {
		b.Add(int32(5+i), i/2, i%2, false)
	}
	require.NoError(t, c.Decode(&b))
	return m, c
}

// A batch split over a fragmented cache whose every token wants logits (each half on the reused
// decode graphs, whose logits buffer the next evaluation overwrites) returns each token's own
// logits.
func TestDecodeSplitAllLogits(t *testing.T) {
	leakCheck(t)
	m, c := interleavedFull(t)
	ref, err := m.NewContext(ContextOptions{NCtx: 32})
	require.NoError(t, err)
	defer ref.Close()
	require.NoError(t, c.SeqRemove(1, 0, -1)) // every other cell is free: no run of 2
	var b Batch
	for i := 0; i < 32; i += 2 {
		b.Add(int32(5+i), i/2, 0, false)
	}
	require.NoError(t, ref.Decode(&b))
	b.Clear()
	b.Add(9, 16, 0, true)
	b.Add(4, 17, 0, true)
	require.NoError(t, c.Decode(&b))
	require.NoError(t, ref.Decode(&b))
	for i := 0; i < 2; i++ {
		assert.Less(t, relDiff(ref.Logits(i), c.Logits(i)), 1e-3, "token %d", i)
	}
	assert.Greater(t, relDiff(c.Logits(0), c.Logits(1)), 1e-3, "the two tokens' logits are the same")
}

// Decode refuses a batch larger than the free cells before evaluating anything, and reports a
// cache too fragmented for a batch.
func TestDecodeContextFull(t *testing.T) {
	leakCheck(t)
	m, c := interleavedFull(t)
	var b Batch
	b.Add(5, 16, 0, true)
	err := c.Decode(&b)
	assert.True(t, errors.Is(err, ErrContextFull), "%v", err)
	require.NoError(t, c.SeqRemove(1, 0, -1)) // every other cell is free: no run of 2
	assert.Equal(t, 16, c.Used())
	// the batch is split where no run is long enough, and gives the logits of one piece
	b.Clear()
	b.Add(5, 16, 0, false)
	b.Add(6, 17, 0, true)
	b.Add(7, 18, 0, true)
	require.NoError(t, c.Decode(&b))
	split := []float32(nil)
	split = append(split, c.Logits(2)...)
	assert.Nil(t, c.Logits(0))
	assert.NotNil(t, c.Logits(1))
	assert.Equal(t, 19, c.Used())
	require.NoError(t, c.SeqRemove(0, 16, -1))
	ref, err := m.NewContext(ContextOptions{NCtx: 32})
	require.NoError(t, err)
	defer ref.Close()
	b.Clear()
	for i := 0; i < 32; i += 2 {
		b.Add(int32(5+i), i/2, 0, false)
	}
	b.Add(5, 16, 0, false)
	b.Add(6, 17, 0, false)
	b.Add(7, 18, 0, true)
	require.NoError(t, ref.Decode(&b))
	assert.Less(t, relDiff(ref.Logits(b.Len()-1), split), 1e-3)

	// a batch larger than the free cells is refused before anything is evaluated
	b.Clear()
	for i := 0; i < 17; i++ {
		b.Add(5, 16+i, 0, true)
	}
	err = c.Decode(&b)
	assert.True(t, errors.Is(err, ErrContextFull), "%v", err)
	assert.Equal(t, 16, c.Used(), "a failed batch leaves no cells behind")
	b.Clear()
	b.Add(5, 16, 0, true)
	require.NoError(t, c.Decode(&b))
	assert.NotNil(t, c.Logits(0))
	assert.Equal(t, 16, c.SeqPosMax(0))
}

// The state of a sequence saved from one context and restored into another sequence of
// another context continues as the original does, for F32, F16, q8_0 keys and q4_0 values; a context whose
// cache has other types refuses it, naming them.
func TestSeqStateRoundTrip(t *testing.T) {
	leakCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{Seed: 6, NEmbd: 128, NHead: 4, NHeadKV: 2}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	opts := []ContextOptions{{NCtx: 64, KVF32: true}, {NCtx: 64}, {NCtx: 64, TypeK: CacheQ8_0}, {NCtx: 64, TypeK: CacheQ8_0, TypeV: CacheQ4_0}}
	for o, opt := range opts {
		a, err := m.NewContext(opt)
		require.NoError(t, err)
		prompt := []int32{1, 20, 21, 22, 23, 24, 25}
		_, err = a.Eval(prompt, false)
		require.NoError(t, err)
		state, err := a.SeqState(0)
		require.NoError(t, err)
		want, err := a.Eval([]int32{99}, false)
		require.NoError(t, err)
		a.Close()

		b, err := m.NewContext(opt)
		require.NoError(t, err)
		var batch Batch
		for i := 0; i < 5; i++ { // another sequence first, so the cells land elsewhere
			batch.Add(int32(40+i), i, 1, false)
		}
		require.NoError(t, b.Decode(&batch))
		require.NoError(t, b.SetSeqState(3, state))
		assert.Equal(t, len(prompt)-1, b.SeqPosMax(3))
		batch.Clear()
		batch.Add(99, len(prompt), 3, true)
		require.NoError(t, b.Decode(&batch))
		assert.Equal(t, want, b.Logits(0), "%+v", opt)

		// damaged or foreign states are refused without changing anything
		used := b.Used()
		for _, bad := range [][]byte{nil, []byte("GGKVSEQ1"), state[:len(state)-1], append([]byte("XXXXXXXX"), state[8:]...)} {
			assert.Error(t, b.SetSeqState(4, bad))
		}
		assert.Equal(t, used, b.Used())
		other, err := m.NewContext(opts[(o+1)%len(opts)])
		require.NoError(t, err)
		assert.ErrorContains(t, other.SetSeqState(0, state), "another cache")
		if opt.TypeK == CacheQ8_0 && opt.TypeV == CacheDefault {
			assert.ErrorContains(t, other.SetSeqState(0, state), "K q8_0, V f16")
		}
		other.Close()
		b.Close()
	}
}

// A batch of several sequences through the scheduler with the last layers offloaded (the
// Test backend) gives the CPU's logits, output rows picked by index included.
func TestBatchedSequencesOffloaded(t *testing.T) {
	leakCheck(t)
	test, err := testbackend.New(1)
	require.NoError(t, err)
	defer test.Close()
	path := tinyModel(t, RandomConfig{Seed: 19, NLayer: 3, Type: gguf.TypeF16, NHead: 4, NHeadKV: 2})
	prompts := [][]int32{{1, 17, 42, 99, 5}, {1, 250, 7}, {1, 8, 9, 10}}
	var runs [2][][]int32
	var rows [2][][][]float32
	for i, opt := range []Options{{Threads: 2}, {Threads: 2, Offload: test, GPULayers: 2}} {
		m, err := Load(path, opt)
		require.NoError(t, err)
		c, err := m.NewContext(ContextOptions{NCtx: 64})
		require.NoError(t, err)
		runs[i], rows[i] = greedyBatched(t, c, prompts, 4)
		c.Close()
		m.Close()
	}
	assert.Equal(t, runs[0], runs[1])
	for s := range prompts {
		for j := range rows[0][s] {
			assert.InDeltaSlice(t, rows[0][s][j], rows[1][s][j], 1e-3, "sequence %d step %d", s, j)
		}
	}
}

// Attention by one AttnMasked node per layer (the default) gives the logits of the
// MulMat/SoftMaxExt graph it replaces, for every decoder architecture (sliding windows,
// soft-caps, grouped-query heads), with F32 and F16 caches, in a batch of three sequences.
func TestFusedAttentionMatchesMulMat(t *testing.T) {
	leakCheck(t)
	defer func(old bool) { fusedAttention = old }(fusedAttention)
	for _, arch := range Architectures() {
		if IsEncoder(arch) {
			continue
		}
		for _, kvF32 := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/kvF32=%v", arch, kvF32), func(t *testing.T) {
				m := loadShortWindowModel(t, RandomConfig{Arch: arch, Type: gguf.TypeF32, Seed: 5, NHeadKV: 2})
				defer m.Close()
				prompts := [][]int32{{1, 17, 42, 99, 5}, {1, 250, 7}, {1, 8, 9, 10, 11, 12, 13}}
				run := func(fused bool) ([][]int32, [][][]float32) {
					fusedAttention = fused
					c, err := m.NewContext(ContextOptions{NCtx: 64, KVF32: kvF32})
					require.NoError(t, err)
					defer c.Close()
					return greedyBatched(t, c, prompts, 6)
				}
				refToks, refRows := run(false)
				toks, rows := run(true)
				tol := 1e-4
				if !kvF32 {
					tol = 1e-3 // q and p are rounded to F16 on both paths; a last-bit difference can move one
				}
				for s := range prompts {
					compareRuns(t, fmt.Sprintf("sequence %d", s), tol, refToks[s], toks[s], refRows[s], rows[s])
				}
			})
		}
	}
}

// loadShortWindowModel writes a random model of cfg and loads it at 2 threads; a sliding window
// is shortened to 3 so that the tests' short prompts reach past it.
func loadShortWindowModel(t *testing.T, cfg RandomConfig) *Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), cfg.Arch+".gguf")
	require.NoError(t, WriteRandomModel(path, cfg))
	m, err := Load(path, Options{Threads: 2})
	require.NoError(t, err)
	if m.HP.SlidingWindow > 0 {
		m.HP.SlidingWindow = 3
	}
	return m
}

// Matrix weights in the repack buffer type (the default for Q4_0, Q8_0, Q4_K and Q6_K) give the logits
// of the same weights mapped plainly: the repacked kernels compute the same integer dot products
// and differ only in the rounding of the float sums.
func TestRepackedMatchesPlain(t *testing.T) {
	leakCheck(t)
	for _, typ := range []gguf.TensorType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		t.Run(typ.String(), func(t *testing.T) {
			path := tinyModel(t, RandomConfig{Seed: 5, NEmbd: 256, NFF: 512, NHead: 8, NHeadKV: 4, NLayer: 2, Type: typ})
			prompt := []int32{5, 77, 150, 23, 299, 8, 64, 120, 33}
			var logits [2][]float32
			for i, noRepack := range []bool{true, false} {
				m, err := Load(path, Options{Threads: 2, NoRepack: noRepack})
				require.NoError(t, err)
				c, err := m.NewContext(ContextOptions{NCtx: 64, KVF32: true})
				require.NoError(t, err)
				logits[i], err = c.Eval(prompt, true)
				require.NoError(t, err)
				require.NoError(t, c.Close())
				require.NoError(t, m.Close())
			}
			require.Equal(t, len(logits[0]), len(logits[1]))
			n := len(logits[0]) / len(prompt)
			for p := range prompt {
				d := relDiff(logits[0][p*n:(p+1)*n], logits[1][p*n:(p+1)*n])
				assert.Less(t, d, 1e-4, "position %d: repacked logits differ from plain by %g relative", p, d)
			}
		})
	}
}

// Joined matrices (joinPlans: attn_q, attn_k, attn_v into attn_qkv; ffn_gate and ffn_up into
// one) compute every row with the kernels the parts use alone: the logits of a prompt and of
// single-token steps are identical to those of the separate matrices, for the architectures
// that have separate matrices (with and without attention biases) and those whose files join
// them already (phi3: nothing more to join).
func TestJoinedMatchesSeparate(t *testing.T) {
	leakCheck(t)
	for _, tc := range []struct {
		name        string
		c           RandomConfig
		qkv, gateUp bool // joined by the loader
		fileQKV     bool // attn_qkv in the file
	}{
		{"llama Q4_0", RandomConfig{Type: gguf.TypeQ4_0}, true, true, false},
		{"llama Q4_K biases", RandomConfig{Type: gguf.TypeQ4_K, Biases: true}, true, true, false},
		{"llama Q6_K", RandomConfig{Type: gguf.TypeQ6_K}, true, true, false},
		{"qwen2 Q8_0", RandomConfig{Type: gguf.TypeQ8_0, Arch: "qwen2"}, true, true, false},
		{"gemma2 Q4_0", RandomConfig{Type: gguf.TypeQ4_0, Arch: "gemma2"}, true, true, false},
		{"phi3 Q4_0", RandomConfig{Type: gguf.TypeQ4_0, Arch: "phi3"}, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			c.Seed, c.NEmbd, c.NFF, c.NHead, c.NHeadKV, c.NLayer = 9, 256, 512, 8, 4, 2
			path := tinyModel(t, c)
			prompt := []int32{5, 77, 150, 23, 299, 8, 64, 120, 33}
			var logits [2][][]float32
			for i, noJoin := range []string{"1", "0"} {
				t.Setenv("GGML_GO_NO_JOIN", noJoin)
				m, err := Load(path, Options{Threads: 2})
				require.NoError(t, err)
				for il, l := range m.layers {
					joined := noJoin == "0"
					assert.Equal(t, tc.fileQKV || joined && tc.qkv, l.wqkv != nil && l.wq == nil, "layer %d: q, k, v joined", il)
					assert.Equal(t, joined && tc.gateUp, l.gateUp != nil, "layer %d: gate and up joined", il)
				}
				ctx, err := m.NewContext(ContextOptions{NCtx: 64, KVF32: true})
				require.NoError(t, err)
				lg, err := ctx.Eval(prompt, true)
				require.NoError(t, err)
				logits[i] = append(logits[i], lg)
				for _, tok := range []int32{42, 7, 250} {
					lg, err = ctx.Eval([]int32{tok}, true)
					require.NoError(t, err)
					logits[i] = append(logits[i], lg)
				}
				require.NoError(t, ctx.Close())
				require.NoError(t, m.Close())
			}
			for s := range logits[0] {
				assert.Equal(t, logits[0][s], logits[1][s], "step %d: joined logits differ from separate", s)
			}
		})
	}
}
