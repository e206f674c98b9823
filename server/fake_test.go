package server

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ggml-go/ggml/chat"
)

// fakeBackend is a Backend without a model: a token is a byte of the text; Generate emits
// the words of reply one per step (after delay each), then stops.
type fakeBackend struct {
	slots   int
	ctxLen  int
	reply   []string
	delay   time.Duration
	started chan struct{} // receives when a Generate starts (if not nil)
	running atomic.Int64
	maxSeen atomic.Int64
	ended   atomic.Int64 // generations that returned
	lastErr atomic.Value
	lastReq atomic.Value // GenerateRequest
}

func newFake() *fakeBackend {
	return &fakeBackend{slots: 2, ctxLen: 64, reply: []string{"Hello", ",", " wor", "ld", "!"}}
}

func (f *fakeBackend) Info() ModelInfo {
	return ModelInfo{ID: "fake", Slots: f.slots, ContextLength: f.ctxLen, EmbeddingLength: 3, VocabSize: 256}
}

func (f *fakeBackend) Tokenize(text string, addSpecial, _ bool) []int32 {
	var out []int32
	if addSpecial {
		out = append(out, 1)
	}
	for _, c := range []byte(text) {
		out = append(out, int32(c))
	}
	return out
}

func (f *fakeBackend) CompletionPrompt(text string) []int32 { return f.Tokenize(text, true, true) }

func (f *fakeBackend) ChatPrompt(_ context.Context, r chat.Request) ([]int32, error) {
	var sb strings.Builder
	for _, m := range r.Messages {
		fmt.Fprintf(&sb, "%s:%s\n", m.Role, m.Content)
	}
	return f.Tokenize(sb.String(), true, true), nil
}

func (f *fakeBackend) Piece(t int32) ([]byte, bool) {
	if t < 0 || t > 255 {
		return nil, false
	}
	return []byte{byte(t)}, true
}

func (f *fakeBackend) Detokenize(toks []int32) ([]byte, error) {
	var out []byte
	for i, t := range toks {
		p, ok := f.Piece(t)
		if !ok {
			return nil, fmt.Errorf("token %d (at index %d) is outside the vocabulary of 256 tokens", t, i)
		}
		out = append(out, p...)
	}
	return out, nil
}

func (f *fakeBackend) Generate(ctx context.Context, req GenerateRequest, emit func(Piece) error) (res Result, err error) {
	n := f.running.Add(1)
	defer f.running.Add(-1)
	defer f.ended.Add(1)
	for {
		m := f.maxSeen.Load()
		if n <= m || f.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	if f.started != nil {
		f.started <- struct{}{}
	}
	f.lastReq.Store(req)
	res.PromptTokens = len(req.Prompt)
	defer func() {
		if err != nil {
			f.lastErr.Store(err)
		}
	}()
	for i, w := range f.reply {
		if f.delay > 0 {
			select {
			case <-time.After(f.delay):
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if slices.Contains(req.Stop, w) {
			// a whole reply word may be a stop string (the real backend finds them anywhere)
			res.FinishReason, res.StopSequence = FinishStop, w
			return res, nil
		}
		res.CompletionTokens++
		p := Piece{Text: w, Tokens: i + 1}
		if req.Logprobs {
			lp := TokenLogprob{Token: w, Bytes: []byte(w), Logprob: -0.25 * float64(i+1)}
			for j := 0; j < req.TopLogprobs; j++ {
				alt := fmt.Sprintf("alt%d", j)
				if j == 0 {
					alt = w
				}
				lp.Top = append(lp.Top, TopLogprob{Token: alt, Bytes: []byte(alt), Logprob: lp.Logprob - float64(j)})
			}
			p.Logprobs = []TokenLogprob{lp}
		}
		if err := emit(p); err != nil {
			return res, err
		}
		if req.MaxTokens > 0 && res.CompletionTokens >= req.MaxTokens {
			res.FinishReason = FinishLength
			return res, nil
		}
	}
	res.FinishReason = FinishStop
	return res, nil
}

func (f *fakeBackend) Embed(ctx context.Context, toks []int32) ([]float32, error) {
	return []float32{1, 0, 0}, nil
}
