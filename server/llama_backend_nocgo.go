//go:build !cgo

package server

import (
	"context"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/chat"
	"github.com/ggml-go/ggml/llama"
)

// LlamaOptions configures NewLlamaBackend.
type LlamaOptions struct {
	ID       string
	Slots    int
	CtxSize  int
	Threads  int
	NoRepack bool
	NoMmap   bool
}

// LlamaBackend is a Backend over a llama.Model; it needs cgo.
type LlamaBackend struct{}

// NewLlamaBackend returns ggml.ErrNoCgo: the model runs through cgo.
func NewLlamaBackend(path string, opt LlamaOptions) (*LlamaBackend, error) { return nil, ggml.ErrNoCgo }

// Close does nothing.
func (b *LlamaBackend) Close() error { return nil }

// Model returns nil without cgo.
func (b *LlamaBackend) Model() *llama.Model { return nil }

// Info implements Backend.
func (b *LlamaBackend) Info() ModelInfo { return ModelInfo{} }

// KVBytes is the size of the KV cache of all the slots.
func (b *LlamaBackend) KVBytes() uint64 { return 0 }

// Tokenize implements Backend.
func (b *LlamaBackend) Tokenize(string, bool, bool) []int32 { return nil }

// CompletionPrompt implements Backend.
func (b *LlamaBackend) CompletionPrompt(string) []int32 { return nil }

// ChatPrompt implements Backend.
func (b *LlamaBackend) ChatPrompt(context.Context, chat.Request) ([]int32, error) {
	return nil, ggml.ErrNoCgo
}

// Piece implements Backend.
func (b *LlamaBackend) Piece(int32) ([]byte, bool) { return nil, false }

// Detokenize implements Backend.
func (b *LlamaBackend) Detokenize([]int32) ([]byte, error) { return nil, ggml.ErrNoCgo }

// Generate implements Backend.
func (b *LlamaBackend) Generate(context.Context, GenerateRequest, func(Piece) error) (Result, error) {
	return Result{}, ggml.ErrNoCgo
}

// Embed implements Backend.
func (b *LlamaBackend) Embed(context.Context, []int32) ([]float32, error) { return nil, ggml.ErrNoCgo }
