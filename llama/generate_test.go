//go:build cgo

package llama

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml/grammar"
	"github.com/ggml-go/ggml/sampling"
)

// collect runs a generation and returns its pieces and the error that ended it.
func collect(c *Context, ctx context.Context, req Request) ([]Piece, error) {
	var ps []Piece
	for p, err := range c.Generate(ctx, req) {
		if err != nil {
			return append(ps, p), err
		}
		ps = append(ps, p)
	}
	return ps, nil
}

func joined(ps []Piece) (string, []int32) {
	var sb strings.Builder
	var toks []int32
	for _, p := range ps {
		sb.WriteString(p.Text)
		toks = append(toks, p.Tokens...)
	}
	return sb.String(), toks
}

func TestGenerate(t *testing.T) {
	leakCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{Seed: 13}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	tok, err := m.Tokenizer()
	require.NoError(t, err)
	c, err := m.NewContext(ContextOptions{NCtx: 64})
	require.NoError(t, err)
	defer c.Close()
	prompt := tok.Tokenize("Once upon", true, true)

	// greedy: the tokens of RunGreedy, the text of the tokens, the usage counted
	ps, err := collect(c, context.Background(), Request{Prompt: "Once upon", MaxTokens: 10})
	require.NoError(t, err)
	require.Len(t, ps, 10)
	last := ps[len(ps)-1]
	assert.Equal(t, FinishLength, last.Finish)
	assert.Equal(t, len(prompt), last.Usage.PromptTokens)
	assert.Equal(t, 10, last.Usage.GeneratedTokens)
	for _, p := range ps[:9] {
		assert.Empty(t, p.Finish)
	}
	text, toks := joined(ps)
	assert.True(t, utf8.ValidString(text))
	ref, err := m.NewContext(ContextOptions{NCtx: 64})
	require.NoError(t, err)
	run, err := ref.RunGreedy(prompt, 10)
	ref.Close()
	require.NoError(t, err)
	assert.Equal(t, run.Generated, toks)
	var raw []byte
	for _, id := range toks {
		raw = tok.AppendText(raw, id)
	}
	assert.Equal(t, validUTF8(raw), text)

	// the same again (sequence 0 is cleared first), and from tokens
	ps2, err := collect(c, context.Background(), Request{Tokens: prompt, MaxTokens: 10})
	require.NoError(t, err)
	text2, toks2 := joined(ps2)
	assert.Equal(t, toks, toks2)
	assert.Equal(t, text, text2)

	// a stop string cuts the text before it
	runes := []rune(text)
	for i := 1; i+2 <= len(runes); i++ {
		stop := string(runes[i : i+2])
		if strings.ContainsRune(stop, utf8.RuneError) {
			continue
		}
		ps, err := collect(c, context.Background(), Request{Prompt: "Once upon", MaxTokens: 10, Stop: []string{stop}})
		require.NoError(t, err)
		got, _ := joined(ps)
		assert.Equal(t, text[:strings.Index(text, stop)], got)
		assert.Equal(t, FinishStop, ps[len(ps)-1].Finish)
		assert.Equal(t, stop, ps[len(ps)-1].Stop, "the last piece names the stop string")
		break
	}

	// no limit: until the context is full
	ps, err = collect(c, context.Background(), Request{Tokens: prompt, MaxTokens: -1})
	require.NoError(t, err)
	assert.Equal(t, FinishLength, ps[len(ps)-1].Finish)
	assert.Equal(t, 64-len(prompt)+1, ps[len(ps)-1].Usage.GeneratedTokens, "every cell used, and the last token sampled")

	// a prompt longer than the context is an error, not a truncation
	long := make([]int32, 65)
	for i := range long {
		long[i] = 5
	}
	_, err = collect(c, context.Background(), Request{Tokens: long})
	assert.True(t, errors.Is(err, ErrPromptTooLong), "%v", err)
	assert.ErrorContains(t, err, "65 tokens")
	_, err = collect(c, context.Background(), Request{Tokens: []int32{int32(m.HP.NVocab)}})
	assert.ErrorContains(t, err, "outside the vocabulary")
	ps, err = collect(c, context.Background(), Request{MaxTokens: 2}) // the prompt is BOS alone
	require.NoError(t, err)
	assert.Equal(t, 1, ps[len(ps)-1].Usage.PromptTokens)
	_, err = collect(c, context.Background(), Request{Prompt: "x", Sampling: sampling.Params{RepeatPenalty: -1, RepeatLastN: 4}})
	assert.Error(t, err)

	// cancellation: before the prompt, and during generation
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ps, err = collect(c, ctx, Request{Prompt: "Once"})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, FinishCancelled, ps[len(ps)-1].Finish)
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	n := 0
	var finish FinishReason
	for p, err := range c.Generate(ctx, Request{Prompt: "Once", MaxTokens: 50}) {
		n++
		if n == 3 {
			cancel()
		}
		if err != nil {
			assert.ErrorIs(t, err, context.Canceled)
			finish = p.Finish
			assert.Equal(t, 3, p.Usage.GeneratedTokens)
		}
	}
	assert.Equal(t, 4, n)
	assert.Equal(t, FinishCancelled, finish)

	// breaking out early is fine, and the context is usable after it
	for range c.Generate(context.Background(), Request{Prompt: "Once"}) {
		break
	}
	ps, err = collect(c, context.Background(), Request{Prompt: "Once upon", MaxTokens: 10})
	require.NoError(t, err)
	text3, _ := joined(ps)
	assert.Equal(t, text, text3)
}

// A grammar constraint shapes the output; when the grammar is complete only an
// end-of-generation token may follow, and the generation ends with FinishEOS.
func TestGenerateWithGrammar(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test-slow runs it")
	}
	leakCheck(t)
	m, err := Load(tinyModel(t, RandomConfig{Seed: 17}), Options{Threads: 2})
	require.NoError(t, err)
	defer m.Close()
	tok, err := m.Tokenizer()
	require.NoError(t, err)
	_ = tok
	g := grammar.MustParse(`root ::= "ab" [0-9] [0-9] "!"`)
	cons, err := m.NewConstraint(g)
	require.NoError(t, err)
	c, err := m.NewContext(ContextOptions{NCtx: 64})
	require.NoError(t, err)
	defer c.Close()
	for _, temp := range []float32{0, 1.2} {
		p := sampling.DefaultParams()
		p.Temp, p.Seed = temp, 3
		ps, err := collect(c, context.Background(), Request{Prompt: "Once", Sampling: p, Constraint: cons, MaxTokens: 30})
		require.NoError(t, err)
		text, _ := joined(ps)
		assert.True(t, g.Match(text), "%q", text)
		assert.Equal(t, FinishEOS, ps[len(ps)-1].Finish)
	}
	// JSON mode through the engine: every output parses
	e, err := NewEngine(m, EngineOptions{Parallel: 2, ContextSize: 64})
	require.NoError(t, err)
	defer e.Close()
	for seed := uint64(0); seed < 3; seed++ {
		cons, err := m.NewConstraint(grammar.JSONObject())
		require.NoError(t, err)
		p := sampling.DefaultParams()
		p.Temp, p.Seed = 0.9, seed
		r := runStream(e.Generate(context.Background(), Request{Prompt: "Once", Sampling: p, Constraint: cons, MaxTokens: 40}))
		require.NoError(t, r.err)
		if r.last.Finish == FinishEOS {
			assert.True(t, json.Valid([]byte(r.text)), "%q", r.text)
		} else {
			assert.True(t, strings.HasPrefix(strings.TrimSpace(r.text), "{"), "%q", r.text) // cut by MaxTokens
		}
	}
}

func TestTextStream(t *testing.T) {
	// a character split over three tokens is held back until complete
	s := newTextStream(nil, false)
	euro := []byte("€") // e2 82 ac
	out, _ := s.feed([]byte{'a', euro[0]})
	assert.Equal(t, "a", out)
	out, _ = s.feed(euro[1:2])
	assert.Equal(t, "", out)
	out, _ = s.feed(euro[2:])
	assert.Equal(t, "€", out)
	// bytes that are no character become U+FFFD (or stay, raw)
	out, _ = s.feed([]byte{0xff, 'b'})
	assert.Equal(t, "\uFFFDb", out)
	out, _ = s.feed([]byte{0xe2})
	assert.Equal(t, "", out)
	assert.Equal(t, "\uFFFD", s.flush())
	raw := newTextStream(nil, true)
	out, _ = raw.feed([]byte{0xd5, ' '})
	assert.Equal(t, "\xd5 ", out)
	// a stop string across pieces
	st := newTextStream([]string{"END"}, false)
	out, stopped := st.feed([]byte("abE"))
	assert.Equal(t, "ab", out)
	assert.False(t, stopped)
	out, stopped = st.feed([]byte("Nx"))
	assert.Equal(t, "ENx", out)
	assert.False(t, stopped)
	out, stopped = st.feed([]byte("yEND tail"))
	assert.Equal(t, "y", out)
	assert.True(t, stopped)
}
