//go:build cgo

package server

// This file is the adapter between the server and the model: a llama.Engine, whose batching
// loop evaluates one token of every active slot in one graph (continuous batching: requests
// join and leave between steps) and reuses the KV cells of a shared prefix such as a system
// prompt. Nothing else in the package depends on llama.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ggml-go/ggml"
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
	NoMmap   bool // read the model into memory instead of mapping it (llama.Options.NoMmap)
	// CacheTypeK and CacheTypeV are the KV cache's types (llama.EngineOptions.TypeK, TypeV;
	// -ctk and -ctv): q8_0 for both holds a slot in about half the memory.
	CacheTypeK, CacheTypeV llama.CacheType
}

// LlamaBackend is a Backend over a llama.Model served by a llama.Engine with one sequence
// per slot.
type LlamaBackend struct {
	model   *llama.Model
	engine  *llama.Engine
	tok     *tokenizer.Tokenizer
	tmpl    *chat.Template
	bosText string
	info    ModelInfo
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
	m, err := llama.Load(path, llama.Options{Threads: opt.Threads, NoRepack: opt.NoRepack, NoMmap: opt.NoMmap})
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
	// the server admits at most Slots requests at once (its limiter queues the others), so the
	// engine's own queue only holds requests whose slot is being given back
	if b.engine, err = llama.NewEngine(m, llama.EngineOptions{Parallel: opt.Slots, ContextSize: perSlot,
		BatchSize: min(perSlot, 512), Threads: opt.Threads, QueueSize: 4 * opt.Slots,
		TypeK: opt.CacheTypeK, TypeV: opt.CacheTypeV}); err != nil {
		return err
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
	b.info = ModelInfo{ID: id, Slots: opt.Slots, ContextLength: perSlot, EmbeddingLength: m.HP.NEmbd, VocabSize: b.tok.NumTokens(), Created: time.Now().Unix()}
	return nil
}

// Close stops the engine and frees the model. Call it after the server stopped.
func (b *LlamaBackend) Close() error {
	if b.engine != nil {
		b.engine.Close()
		b.engine = nil
	}
	if b.model != nil {
		b.model.Close()
		b.model = nil
	}
	return nil
}

// checkOpen returns an error wrapping ggml.ErrClosed after Close.
func (b *LlamaBackend) checkOpen(op string) error {
	if b == nil || b.engine == nil {
		return fmt.Errorf("LlamaBackend.%s: the backend is closed: %w", op, ggml.ErrClosed)
	}
	return nil
}

// Model returns the loaded model.
func (b *LlamaBackend) Model() *llama.Model { return b.model }

// Info implements Backend.
func (b *LlamaBackend) Info() ModelInfo { return b.info }

// KVBytes is the size of the KV cache of all the slots (llama.Engine.KVBytes).
func (b *LlamaBackend) KVBytes() uint64 { return b.engine.KVBytes() }

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

func (b *LlamaBackend) grammarVocab() (*grammar.Vocab, error) {
	b.vocabOnce.Do(func() {
		b.vocab, b.vocabErr = grammar.NewVocab(b.tok.NumTokens(), b.tok.Piece, b.tok.EOGTokens()...)
	})
	return b.vocab, b.vocabErr
}

// Generate implements Backend.
func (b *LlamaBackend) Generate(ctx context.Context, req GenerateRequest, emit func(Piece) error) (Result, error) {
	res := Result{PromptTokens: len(req.Prompt)}
	if err := b.checkOpen("Generate"); err != nil {
		return res, err
	}
	if len(req.Prompt) == 0 {
		return res, errors.New("empty prompt")
	}
	if len(req.Prompt) >= b.info.ContextLength {
		return res, fmt.Errorf("%w: %d tokens, and a slot holds %d", ErrPromptTooLong, len(req.Prompt), b.info.ContextLength)
	}
	if _, err := sampling.New(req.Sampling); err != nil {
		return res, &APIError{Status: 400, Type: "invalid_request_error", Message: err.Error()}
	}
	lr := llama.Request{Tokens: req.Prompt, Sampling: req.Sampling, MaxTokens: req.MaxTokens, Stop: req.Stop,
		LogitBias: req.LogitBias, Logprobs: req.Logprobs, TopLogprobs: req.TopLogprobs}
	var pending []TokenLogprob // logprobs of tokens whose text has not come yet
	if req.Grammar != nil {
		v, err := b.grammarVocab()
		if err != nil {
			return res, err
		}
		con, err := grammar.NewConstraint(req.Grammar, v, grammar.Options{})
		if err != nil {
			return res, err
		}
		lr.Constraint = con
	}
	for p, err := range b.engine.Generate(ctx, lr) {
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return res, ctx.Err()
			case errors.Is(err, llama.ErrPromptTooLong):
				return res, fmt.Errorf("%w: %v", ErrPromptTooLong, err)
			case errors.Is(err, llama.ErrQueueFull):
				return res, &APIError{Status: 429, Type: "rate_limit_exceeded", Message: "the server is busy: retry shortly"}
			}
			return res, err
		}
		res.CompletionTokens += len(p.Tokens)
		lps := p.Logprobs
		if p.Finish == llama.FinishEOS && len(lps) > 0 {
			lps = lps[:len(lps)-1] // the end-of-generation token is no content
		}
		for _, lp := range lps {
			pending = append(pending, b.tokenLogprob(lp))
		}
		if p.Finish != "" {
			switch p.Finish {
			case llama.FinishLength:
				res.FinishReason = FinishLength
			case llama.FinishEOS:
				res.FinishReason = FinishStop
				res.CompletionTokens-- // the end-of-generation token is no content
			default:
				res.FinishReason, res.StopSequence = FinishStop, p.Stop
			}
		}
		if p.Text != "" || p.Finish != "" && len(pending) > 0 {
			if err := emit(Piece{Text: p.Text, Tokens: res.CompletionTokens, Logprobs: pending}); err != nil {
				return res, err
			}
			pending = nil
		}
	}
	if res.FinishReason == "" {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		res.FinishReason = FinishStop
	}
	return res, nil
}

// tokenLogprob converts the log-probabilities of a token with the texts of the tokens.
func (b *LlamaBackend) tokenLogprob(lp sampling.Logprobs) TokenLogprob {
	piece := b.tok.Piece(lp.ID)
	out := TokenLogprob{Token: string(piece), Bytes: piece, Logprob: float64(lp.Logprob), Top: make([]TopLogprob, len(lp.Top))}
	for i, t := range lp.Top {
		p := b.tok.Piece(t.ID)
		out.Top[i] = TopLogprob{Token: string(p), Bytes: p, Logprob: float64(t.Logprob)}
	}
	return out
}

// Embed implements Backend: the model's pooling (decoders: the mean of the final hidden
// states), L2-normalized, computed by the engine between its steps.
func (b *LlamaBackend) Embed(ctx context.Context, toks []int32) ([]float32, error) {
	if err := b.checkOpen("Embed"); err != nil {
		return nil, err
	}
	if len(toks) > b.info.ContextLength {
		return nil, fmt.Errorf("%w: %d tokens, and a slot holds %d", ErrPromptTooLong, len(toks), b.info.ContextLength)
	}
	v, err := b.engine.EmbedTokens(ctx, toks, llama.EmbedOptions{Pooling: b.pooling, Normalize: true})
	if err != nil {
		return nil, err
	}
	return v[0], nil
}
