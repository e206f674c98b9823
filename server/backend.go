package server

import (
	"context"
	"errors"

	"github.com/ggml-go/ggml/chat"
	"github.com/ggml-go/ggml/grammar"
	"github.com/ggml-go/ggml/sampling"
)

// Backend is what the server needs from a model. The server calls Generate and Embed from at
// most ModelInfo.Slots goroutines at once (it queues the other requests); every other method
// may be called from any goroutine at any time.
type Backend interface {
	// Info describes the model.
	Info() ModelInfo
	// Tokenize tokenizes text; addSpecial adds the model's BOS (and the like), parseSpecial
	// turns the text of special tokens into those tokens.
	Tokenize(text string, addSpecial, parseSpecial bool) []int32
	// CompletionPrompt returns the tokens of a raw completion prompt.
	CompletionPrompt(text string) []int32
	// ChatPrompt renders the messages (and tools) of r with the model's chat template, with
	// the start of an assistant turn at the end, and returns the tokens.
	ChatPrompt(ctx context.Context, r chat.Request) ([]int32, error)
	// Piece returns the bytes of a token (ok false outside the vocabulary).
	Piece(token int32) (piece []byte, ok bool)
	// Detokenize returns the text of tokens; an error names a token outside the vocabulary.
	Detokenize(tokens []int32) ([]byte, error)
	// Generate evaluates req.Prompt in a free slot and generates, calling emit with every
	// piece of text as it becomes valid UTF-8 (stop strings already removed). It returns
	// when the generation ends (Result.FinishReason) or ctx is done (the error is then
	// ctx.Err()), or emit returns an error (returned as is).
	Generate(ctx context.Context, req GenerateRequest, emit func(Piece) error) (Result, error)
	// Embed returns one embedding vector (L2-normalized) for tokens.
	Embed(ctx context.Context, tokens []int32) ([]float32, error)
}

// ModelInfo describes the model behind a Backend.
type ModelInfo struct {
	ID              string // the model name reported by /v1/models and in responses
	Slots           int    // sequences generated at once (-np)
	ContextLength   int    // tokens one slot holds: prompt plus generated text
	EmbeddingLength int    // length of the vectors of Embed
	VocabSize       int    // tokens in the vocabulary (logit_bias ids are checked against it; 0: not checked)
	Created         int64  // Unix time reported by /v1/models
}

// GenerateRequest is one generation.
type GenerateRequest struct {
	Prompt    []int32
	MaxTokens int // most tokens generated; <= 0: until the context is full
	Sampling  sampling.Params
	Stop      []string         // stop strings (not included in the output)
	Grammar   *grammar.Grammar // constrains the output when set
	// LogitBias is added to the logits of the tokens named before sampling (OpenAI's
	// logit_bias; ids inside the vocabulary, biases in [-100, 100]).
	LogitBias map[int32]float32
	// Logprobs asks for Piece.Logprobs, with TopLogprobs (0 to 20) alternatives per token.
	Logprobs    bool
	TopLogprobs int
}

// TokenLogprob is the log-probability of a generated token under the model (log-softmax of
// its raw logits, before biases, penalties, grammar and temperature) and of the most likely
// alternatives at that step.
type TokenLogprob struct {
	Token   string // the token's text (Bytes as a string)
	Bytes   []byte
	Logprob float64
	Top     []TopLogprob // most likely first
}

// TopLogprob is one alternative of a TokenLogprob.
type TopLogprob struct {
	Token   string
	Bytes   []byte
	Logprob float64
}

// Piece is a part of the generated text.
type Piece struct {
	Text   string // valid UTF-8; may be empty when a token gives no visible text
	Tokens int    // tokens generated so far
	// Logprobs has, when GenerateRequest.Logprobs is set, the tokens whose text this piece
	// completes (tokens that gave no text yet are reported with the next piece, or with a
	// last piece of empty text; the end-of-generation token is not reported).
	Logprobs []TokenLogprob
}

// Finish reasons of Result.
const (
	FinishStop   = "stop"   // an end-of-generation token or a stop string
	FinishLength = "length" // MaxTokens reached, or the context is full
)

// Result is the end of a generation.
type Result struct {
	FinishReason     string
	StopSequence     string // the stop string that ended the generation, if one did
	PromptTokens     int
	CompletionTokens int
}

// ErrPromptTooLong is returned (wrapped) by a Backend for a prompt that does not fit in a
// slot's context; the server checks before calling, so it maps to a 400.
var ErrPromptTooLong = errors.New("the prompt does not fit in the context")

// ErrNoEmbeddings is returned (wrapped) by Embed when the model cannot make embeddings.
var ErrNoEmbeddings = errors.New("this model does not make embeddings")
