package llama

import (
	"errors"
	"fmt"
	"time"

	"github.com/ggml-go/ggml/sampling"
)

// FinishReason says why a generation ended.
type FinishReason string

const (
	// FinishStop: a stop string was generated (it is not part of the text).
	FinishStop FinishReason = "stop"
	// FinishLength: MaxTokens tokens were generated, or the context had no cell left for
	// the next token.
	FinishLength FinishReason = "length"
	// FinishEOS: the model generated an end-of-generation token (its text is not shown).
	FinishEOS FinishReason = "eos"
	// FinishCancelled: the request's context.Context was cancelled or timed out; the error
	// yielded with the last piece is the context's error.
	FinishCancelled FinishReason = "cancelled"
)

// ErrPromptTooLong is returned (wrapped) when a prompt does not fit in the context; the
// message gives both sizes. A prompt is never truncated silently.
var ErrPromptTooLong = errors.New("llama: the prompt is longer than the context")

// Request is one generation: a prompt, how to sample, and when to stop.
type Request struct {
	// Prompt is the text to continue. It is tokenized with the model's tokenizer, adding
	// BOS/EOS as the vocabulary says (llama.cpp's add_special) and reading special tokens
	// written in the text (such as "<|im_start|>"), as a chat template's output needs. An
	// empty Prompt is BOS alone for vocabularies that add one, else an error.
	Prompt string
	// Tokens is the prompt as token ids; when not empty it is used instead of Prompt.
	Tokens []int32
	// Sampling configures the sampler; the zero value means greedy decoding
	// (sampling.GreedyParams). Ignored when Sampler is set.
	Sampling sampling.Params
	// Constraint, when set, restricts the tokens (a *grammar.Constraint for a GBNF grammar,
	// a JSON schema or JSON mode), applied lazily (sampling.ConstraintLazy). It is Reset at
	// the start. Ignored when Sampler is set. A constraint serves one generation at a time.
	Constraint sampling.Constraint
	// Sampler, when set, is used as is (with its own constraint, if any) instead of
	// Sampling and Constraint. It is not Reset: its penalty history carries over. Like a
	// constraint, a Sampler serves one generation at a time.
	Sampler *sampling.Sampler
	// MaxTokens is the most tokens to generate; 0 or a negative value means no limit: until
	// an end-of-generation token, a stop string, or the end of the context.
	MaxTokens int
	// Stop lists strings that end the generation when the text contains one; the text
	// returned ends before it.
	Stop []string
	// LogitBias adds a bias to the logits of some tokens before sampling (OpenAI's
	// logit_bias: -100 effectively bans a token, 100 effectively forces it), see
	// sampling.Sampler.SetLogitBias. Ids must be inside the vocabulary and biases within
	// [-100, 100]. Ignored when Sampler is set (call its SetLogitBias instead).
	LogitBias map[int32]float32
	// Logprobs asks for the log-probability of every generated token (Piece.Logprobs),
	// with the TopLogprobs (0 to sampling.MaxTopLogprobs) most likely alternatives at each
	// step. They are the log-softmax of the model's raw logits (before logit biases,
	// penalties, constraints and temperature). Nothing is computed when Logprobs is false.
	Logprobs    bool
	TopLogprobs int
	// KeepInvalidUTF8 passes bytes that form no UTF-8 character (a model may generate
	// them) through unchanged, as llama.cpp prints them, instead of replacing them with
	// U+FFFD. Characters split across tokens are held back either way.
	KeepInvalidUTF8 bool
}

// Piece is one step of a generation's stream: the text that became safe to show (whole
// UTF-8 characters; possibly empty while a character or a possible stop string is held
// back) and the token(s) generated in the step. The last piece has Finish set and Usage
// filled.
type Piece struct {
	Text   string
	Tokens []int32
	// Logprobs has, when Request.Logprobs is set, one entry per token of Tokens: its
	// log-probability under the model (log-softmax of the raw logits) and the
	// Request.TopLogprobs most likely alternatives.
	Logprobs []sampling.Logprobs
	Finish   FinishReason // "" except on the last piece
	Stop     string       // with FinishStop: the stop string that ended the generation
	Usage    Usage        // on the last piece
}

// Usage counts the tokens of a generation and the time it took.
type Usage struct {
	PromptTokens    int // tokens of the prompt
	CachedTokens    int // prompt tokens whose cells were reused (a shared prefix), not evaluated
	GeneratedTokens int // tokens sampled, the end-of-generation token included
	PromptTime      time.Duration
	GenerateTime    time.Duration // from the end of the prompt to the last token
}

// samplerFor returns the sampler of a request.
func (r *Request) samplerFor() (*sampling.Sampler, error) {
	if r.Sampler != nil {
		return r.Sampler, nil
	}
	p := r.Sampling
	if p == (sampling.Params{}) {
		p = sampling.GreedyParams()
	}
	s, err := sampling.New(p)
	if err != nil {
		return nil, err
	}
	if err := s.SetLogitBias(r.LogitBias); err != nil {
		return nil, fmt.Errorf("llama: Request.LogitBias: %w", err)
	}
	if r.Constraint != nil {
		s.SetConstraint(r.Constraint, sampling.ConstraintLazy) // SetConstraint then Reset
		s.Reset()
	}
	return s, nil
}

// checkTokens checks the token ids of the request's options against a vocabulary of n
// tokens.
func (r *Request) checkTokens(n int) error {
	for id := range r.LogitBias {
		if id < 0 || int(id) >= n {
			return fmt.Errorf("llama: Request.LogitBias names token %d, outside the vocabulary of %d tokens", id, n)
		}
	}
	if r.TopLogprobs < 0 || r.TopLogprobs > sampling.MaxTopLogprobs {
		return fmt.Errorf("llama: Request.TopLogprobs is %d: give 0 to %d", r.TopLogprobs, sampling.MaxTopLogprobs)
	}
	return nil
}
