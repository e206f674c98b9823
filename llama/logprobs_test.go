//go:build cgo

package llama

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/sampling"
)

// logSoftmax64 is the reference: log-softmax of the logits in float64.
func logSoftmax64(logits []float32) []float64 {
	m := math.Inf(-1)
	for _, l := range logits {
		m = math.Max(m, float64(l))
	}
	var sum float64
	for _, l := range logits {
		sum += math.Exp(float64(l) - m)
	}
	out := make([]float64, len(logits))
	for i, l := range logits {
		out[i] = float64(l) - m - math.Log(sum)
	}
	return out
}

// TestGenerateLogprobs checks Piece.Logprobs against a float64 log-softmax of the logits the
// model gives for the same tokens, in a Context and through the Engine; and that a logit
// bias of -100 bans the token greedy decoding would pick.
func TestGenerateLogprobs(t *testing.T) {
	leakCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{Seed: 13}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	tok, err := m.Tokenizer()
	require.NoError(t, err)
	prompt := tok.Tokenize("Once upon", true, true)
	c, err := m.NewContext(ContextOptions{NCtx: 64})
	require.NoError(t, err)
	defer c.Close()
	const n, top = 6, 5
	ps, err := collect(c, context.Background(), Request{Tokens: prompt, MaxTokens: n, Logprobs: true, TopLogprobs: top})
	require.NoError(t, err)
	_, toks := joined(ps)
	require.Len(t, toks, n)

	// the reference: evaluate the prompt and the generated tokens, read every row's logits
	ref, err := m.NewContext(ContextOptions{NCtx: 64})
	require.NoError(t, err)
	defer ref.Close()
	all := append(append([]int32{}, prompt...), toks...)
	var b Batch
	for i, t := range all {
		b.Add(t, i, 0, true)
	}
	require.NoError(t, ref.Decode(&b))
	k := 0
	for _, p := range ps {
		require.Len(t, p.Logprobs, len(p.Tokens))
		for j, lp := range p.Logprobs {
			want := logSoftmax64(ref.Logits(len(prompt) - 1 + k))
			require.Equal(t, p.Tokens[j], lp.ID)
			require.InDelta(t, want[lp.ID], float64(lp.Logprob), 1e-3, "token %d", k)
			require.Len(t, lp.Top, top)
			require.Equal(t, lp.ID, lp.Top[0].ID, "greedy picks the most likely token")
			for i, e := range lp.Top {
				require.InDelta(t, want[e.ID], float64(e.Logprob), 1e-3)
				if i > 0 {
					require.LessOrEqual(t, e.Logprob, lp.Top[i-1].Logprob)
				}
			}
			k++
		}
	}

	// without Logprobs nothing is computed
	ps, err = collect(c, context.Background(), Request{Tokens: prompt, MaxTokens: 2})
	require.NoError(t, err)
	for _, p := range ps {
		require.Nil(t, p.Logprobs)
	}

	// the engine gives the same
	e, err := NewEngine(m, EngineOptions{Parallel: 2, ContextSize: 64})
	require.NoError(t, err)
	defer e.Close()
	var got []sampling.Logprobs
	for p, err := range e.Generate(context.Background(), Request{Tokens: prompt, MaxTokens: n, Logprobs: true, TopLogprobs: 2}) {
		require.NoError(t, err)
		got = append(got, p.Logprobs...)
	}
	require.Len(t, got, n)
	for i, lp := range got {
		require.Equal(t, toks[i], lp.ID)
		require.InDelta(t, logSoftmax64(ref.Logits(len(prompt) - 1 + i))[lp.ID], float64(lp.Logprob), 1e-3)
		require.Len(t, lp.Top, 2)
	}

	// a bias of -100 bans the greedy token; the logprobs stay the model's
	var first []Piece
	for p, err := range e.Generate(context.Background(), Request{Tokens: prompt, MaxTokens: 1, Logprobs: true, LogitBias: map[int32]float32{toks[0]: -100}}) {
		require.NoError(t, err)
		first = append(first, p)
	}
	require.NotEqual(t, toks[0], first[0].Tokens[0])
	require.InDelta(t, logSoftmax64(ref.Logits(len(prompt) - 1))[first[0].Tokens[0]], float64(first[0].Logprobs[0].Logprob), 1e-3)

	// bad options are errors before anything runs
	for _, r := range []Request{
		{Tokens: prompt, LogitBias: map[int32]float32{int32(m.HP.NVocab): 1}},
		{Tokens: prompt, LogitBias: map[int32]float32{1: 200}},
		{Tokens: prompt, Logprobs: true, TopLogprobs: 21},
	} {
		for _, err := range e.Generate(context.Background(), r) {
			require.Error(t, err)
		}
	}
}

// BenchmarkGenerateLogprobs measures a generation step with and without Request.Logprobs
// (off, nothing is computed: the step is the same as before logprobs existed).
func BenchmarkGenerateLogprobs(b *testing.B) {
	path := filepath.Join(b.TempDir(), "tiny.gguf")
	require.NoError(b, WriteRandomModel(path, RandomConfig{Seed: 13}))
	m, err := Load(path, Options{Threads: 2})
	require.NoError(b, err)
	defer m.Close()
	c, err := m.NewContext(ContextOptions{NCtx: 64})
	require.NoError(b, err)
	defer c.Close()
	for _, bc := range []struct {
		name string
		req  Request
	}{{"off", Request{Prompt: "Once upon", MaxTokens: 16}}, {"on-top5", Request{Prompt: "Once upon", MaxTokens: 16, Logprobs: true, TopLogprobs: 5}}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				for _, err := range c.Generate(context.Background(), bc.req) {
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*16), "ns/token")
		})
	}
}
