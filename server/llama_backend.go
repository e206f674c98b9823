//go:build cgo

package server

// This file is the adapter between the server and the model as package llama offers it
// today: one llama.Context per slot, every evaluation serialized by one mutex (the model
// owns one backend), so the slots interleave token by token. It is meant to be replaced by a
// batching engine; nothing else in the package depends on llama.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ggml-go/ggml/chat"
	"github.com/ggml-go/ggml/grammar"
	"github.com/ggml-go/ggml/llama"
	"github.com/ggml-go/ggml/sampling"
	"github.com/ggml-go/ggml/tokenizer"
)

// LlamaOptions configures NewLlamaBackend.
type LlamaOptions struct {
	ID       string // model name in responses; default: the file's general.name or "default"
	Slots    int    // sequences generated at once; default 1
	CtxSize  int    // total context, split evenly between the slots; default: the training context of the model times Slots, at most 4096 per slot
	Threads  int    // CPU threads; default llama.DefaultThreads()
	NoRepack bool
}

// LlamaBackend is a Backend over a llama.Model, with one llama.Context per slot.
type LlamaBackend struct {
	model   *llama.Model
	tok     *tokenizer.Tokenizer
	tmpl    *chat.Template
	bosText string
	info    ModelInfo
	free    chan *llama.Context
	all     []*llama.Context
	mu      sync.Mutex // serializes evaluations: the model has one backend
	pooling llama.Pooling

	vocabOnce sync.Once
	vocab     *grammar.Vocab
	vocabErr  error
}

// NewLlamaBackend loads the GGUF model at path.
func NewLlamaBackend(path string, opt LlamaOptions) (*LlamaBackend, error) {
	if opt.Slots < 1 {
		opt.Slots = 1
	}
	m, err := llama.Load(path, llama.Options{Threads: opt.Threads, NoRepack: opt.NoRepack})
	if err != nil {
		return nil, err
	}
	b := &LlamaBackend{model: m}
	if err := b.init(opt); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *LlamaBackend) init(opt LlamaOptions) error {
	m := b.model
	var err error
	if b.tok, err = tokenizer.FromGGUF(m.GGUF()); err != nil {
		return err
	}
	perSlot := opt.CtxSize / opt.Slots
	if opt.CtxSize <= 0 {
		perSlot = min(m.HP.ContextLength, 4096)
	}
	if perSlot < 8 {
		return fmt.Errorf("a context of %d tokens for %d slots leaves %d per slot: give -c at least %d", opt.CtxSize, opt.Slots, perSlot, 8*opt.Slots)
	}
	if b.bosText = ""; b.tok.BOS() >= 0 {
		b.bosText = b.tok.Token(b.tok.BOS())
	}
	eos := ""
	if b.tok.EOS() >= 0 {
		eos = b.tok.Token(b.tok.EOS())
	}
	src, _ := m.GGUF().GetString("tokenizer.chat_template")
	if b.tmpl, err = chat.New(src, b.bosText, eos, chat.Limits{}); err != nil {
		return fmt.Errorf("the model's chat template: %w", err)
	}
	b.free = make(chan *llama.Context, opt.Slots)
	for range opt.Slots {
		c, err := m.NewContext(llama.ContextOptions{NCtx: perSlot, NBatch: min(perSlot, 512)})
		if err != nil {
			return err
		}
		b.all = append(b.all, c)
		b.free <- c
	}
	id := opt.ID
	if id == "" {
		if id = m.HP.Name; id == "" {
			id = "default"
		}
	}
	b.pooling = m.HP.Pooling
	if b.pooling == llama.PoolingNone {
		b.pooling = llama.PoolingMean // decoders: the mean of the final hidden states
	}
	b.info = ModelInfo{ID: id, Slots: opt.Slots, ContextLength: perSlot, EmbeddingLength: m.HP.NEmbd, Created: time.Now().Unix()}
	return nil
}

// Close frees the contexts and the model. Call it after the server stopped.
func (b *LlamaBackend) Close() error {
	for _, c := range b.all {
		c.Close()
	}
	b.all = nil
	if b.model != nil {
		b.model.Close()
		b.model = nil
	}
	return nil
}

// Model returns the loaded model.
func (b *LlamaBackend) Model() *llama.Model { return b.model }

// Info implements Backend.
func (b *LlamaBackend) Info() ModelInfo { return b.info }

// Tokenize implements Backend.
func (b *LlamaBackend) Tokenize(text string, addSpecial, parseSpecial bool) []int32 {
	return b.tok.Tokenize(text, addSpecial, parseSpecial)
}

// CompletionPrompt implements Backend: the text with the model's BOS, special tokens parsed.
func (b *LlamaBackend) CompletionPrompt(text string) []int32 {
	return b.tok.Tokenize(text, b.tok.AddBOSDefault(), true)
}

// ChatPrompt implements Backend.
func (b *LlamaBackend) ChatPrompt(ctx context.Context, r chat.Request) ([]int32, error) {
	r.AddGenerationPrompt = true
	text, err := b.tmpl.Render(ctx, r)
	if err != nil {
		return nil, err
	}
	addBOS := b.tok.AddBOSDefault() && !(b.bosText != "" && strings.HasPrefix(text, b.bosText))
	return b.tok.Tokenize(text, addBOS, true), nil
}

// Piece implements Backend.
func (b *LlamaBackend) Piece(t int32) ([]byte, bool) {
	if t < 0 || int(t) >= b.tok.NumTokens() {
		return nil, false
	}
	return b.tok.Piece(t), true
}

// Detokenize implements Backend.
func (b *LlamaBackend) Detokenize(toks []int32) ([]byte, error) {
	for i, t := range toks {
		if t < 0 || int(t) >= b.tok.NumTokens() {
			return nil, fmt.Errorf("token %d (at index %d) is outside the vocabulary of %d tokens", t, i, b.tok.NumTokens())
		}
	}
	return b.tok.Decode(toks), nil
}

// slot takes a free context (the server admits at most Slots requests, so this waits only
// for a slot that is being given back).
func (b *LlamaBackend) slot(ctx context.Context) (*llama.Context, error) {
	select {
	case c := <-b.free:
		return c, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// eval evaluates tokens under the model's lock.
func (b *LlamaBackend) eval(c *llama.Context, toks []int32) ([]float32, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return c.Eval(toks, false)
}

func (b *LlamaBackend) grammarVocab() (*grammar.Vocab, error) {
	b.vocabOnce.Do(func() {
		b.vocab, b.vocabErr = grammar.NewVocab(b.tok.NumTokens(), b.tok.Piece, b.tok.EOGTokens()...)
	})
	return b.vocab, b.vocabErr
}

// promptChunk is how many prompt tokens are evaluated between checks of the context (and
// turns of the other slots).
const promptChunk = 64

// Generate implements Backend.
func (b *LlamaBackend) Generate(ctx context.Context, req GenerateRequest, emit func(Piece) error) (Result, error) {
	res := Result{PromptTokens: len(req.Prompt)}
	if len(req.Prompt) == 0 {
		return res, errors.New("empty prompt")
	}
	if len(req.Prompt) >= b.info.ContextLength {
		return res, fmt.Errorf("%w: %d tokens, and a slot holds %d", ErrPromptTooLong, len(req.Prompt), b.info.ContextLength)
	}
	smp, err := sampling.New(req.Sampling)
	if err != nil {
		return res, &APIError{Status: 400, Type: "invalid_request_error", Message: err.Error()}
	}
	if req.Grammar != nil {
		v, err := b.grammarVocab()
		if err != nil {
			return res, err
		}
		con, err := grammar.NewConstraint(req.Grammar, v, grammar.Options{})
		if err != nil {
			return res, err
		}
		smp.SetConstraint(con, sampling.ConstraintLazy)
	}
	c, err := b.slot(ctx)
	if err != nil {
		return res, err
	}
	defer func() { b.free <- c }()
	c.Reset()
	for _, t := range req.Prompt {
		smp.Accept(t)
	}
	var logits []float32
	for start := 0; start < len(req.Prompt); start += promptChunk {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if logits, err = b.eval(c, req.Prompt[start:min(len(req.Prompt), start+promptChunk)]); err != nil {
			return res, err
		}
	}
	stop := sampling.NewStopMatcher(req.Stop...)
	var pending, piece []byte // pending: text held back until it is complete UTF-8
	flush := func(final bool) error {
		n := completeUTF8(pending)
		if final {
			n = len(pending)
		}
		if n == 0 && len(pending) > 0 && !final {
			return nil
		}
		text := strings.ToValidUTF8(string(pending[:n]), "\uFFFD")
		pending = append(pending[:0], pending[n:]...)
		return emit(Piece{Text: text, Tokens: res.CompletionTokens})
	}
	byString := false
	for {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		tok, err := smp.TrySample(logits)
		if err != nil {
			return res, err
		}
		if b.tok.IsEOG(tok) {
			res.FinishReason = FinishStop
			break
		}
		if err := smp.Advance(tok); err != nil {
			return res, err
		}
		res.CompletionTokens++
		piece = b.tok.AppendText(piece[:0], tok)
		shown, stopped := stop.Feed(piece)
		pending = append(pending, shown...)
		if err := flush(false); err != nil {
			return res, err
		}
		if stopped {
			res.FinishReason = FinishStop
			byString = true
			break
		}
		if req.MaxTokens > 0 && res.CompletionTokens >= req.MaxTokens || c.Pos() >= c.NCtx() {
			res.FinishReason = FinishLength
			break
		}
		if logits, err = b.eval(c, []int32{tok}); err != nil {
			return res, err
		}
	}
	if !byString {
		pending = append(pending, stop.Flush()...)
	}
	if len(pending) > 0 {
		if err := flush(true); err != nil {
			return res, err
		}
	}
	return res, nil
}

// completeUTF8 returns the length of the longest prefix of b that does not end inside a
// UTF-8 sequence that more bytes could complete.
func completeUTF8(b []byte) int {
	for back := 1; back <= 3 && back <= len(b); back++ {
		i := len(b) - back
		c := b[i]
		if c < 0x80 {
			return len(b)
		}
		if c >= 0xC0 { // a lead byte: complete if its sequence fits
			if utf8.FullRune(b[i:]) {
				return len(b)
			}
			return i
		}
	}
	return len(b)
}

// Embed implements Backend: the model's pooling (decoders: the mean of the final hidden
// states), L2-normalized.
func (b *LlamaBackend) Embed(ctx context.Context, toks []int32) ([]float32, error) {
	if len(toks) > b.info.ContextLength {
		return nil, fmt.Errorf("%w: %d tokens, and a slot holds %d", ErrPromptTooLong, len(toks), b.info.ContextLength)
	}
	c, err := b.slot(ctx)
	if err != nil {
		return nil, err
	}
	defer func() { b.free <- c }()
	b.mu.Lock()
	v, err := c.Embed(toks, llama.EmbedOptions{Pooling: b.pooling, Normalize: true})
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return v[0], nil
}
