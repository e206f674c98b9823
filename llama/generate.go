//go:build cgo

package llama

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/ggml-go/ggml/sampling"
	"github.com/ggml-go/ggml/tokenizer"
)

// Tokenizer returns the model's tokenizer, read from its GGUF metadata on the first call
// (safe for concurrent use; the Tokenizer is immutable).
func (m *Model) Tokenizer() (*tokenizer.Tokenizer, error) {
	m.tokOnce.Do(func() { m.tok, m.tokErr = tokenizer.FromGGUF(m.file) })
	return m.tok, m.tokErr
}

// promptTokens returns the tokens of a request's prompt.
func (m *Model) promptTokens(r *Request) ([]int32, error) {
	if len(r.Tokens) > 0 {
		for i, t := range r.Tokens {
			if t < 0 || int(t) >= m.HP.NVocab {
				return nil, fmt.Errorf("llama: prompt token %d (at index %d) is outside the vocabulary of %d tokens", t, i, m.HP.NVocab)
			}
		}
		return r.Tokens, nil
	}
	tok, err := m.Tokenizer()
	if err != nil {
		return nil, err
	}
	toks := tok.Tokenize(r.Prompt, true, true)
	if len(toks) == 0 {
		return nil, errors.New("llama: the prompt is empty (give Prompt or Tokens)")
	}
	return toks, nil
}

// genSeq is the sampling side of one generation: sampler, stop strings, the text stream,
// the limit and the counts. Context.Generate and the Engine drive it with logits.
type genSeq struct {
	tok      *tokenizer.Tokenizer
	smp      *sampling.Sampler
	text     *textStream
	max      int
	usage    Usage
	genStart time.Time
	buf      []byte
	logprobs bool // compute Piece.Logprobs
	top      int  // alternatives per token
}

func newGenSeq(m *Model, r *Request, prompt []int32) (*genSeq, error) {
	tok, err := m.Tokenizer()
	if err != nil {
		return nil, err
	}
	if err := r.checkTokens(m.HP.NVocab); err != nil {
		return nil, err
	}
	smp, err := r.samplerFor()
	if err != nil {
		return nil, err
	}
	for _, t := range prompt {
		smp.Accept(t) // the penalties look at the prompt too, as llama.cpp's main does
	}
	return &genSeq{tok: tok, smp: smp, text: newTextStream(r.Stop, r.KeepInvalidUTF8), max: r.MaxTokens,
		usage: Usage{PromptTokens: len(prompt)}, logprobs: r.Logprobs, top: r.TopLogprobs}, nil
}

// step samples the next token from logits. It returns the piece to yield and whether the
// generation is finished (then the piece is the last one and the token needs no evaluation).
func (g *genSeq) step(logits []float32) (Piece, bool, error) {
	if g.usage.GeneratedTokens == 0 {
		g.genStart = time.Now()
	}
	tok, err := g.smp.TrySample(logits)
	if err != nil {
		return Piece{}, true, err
	}
	if err := g.smp.Advance(tok); err != nil {
		return Piece{}, true, err
	}
	g.usage.GeneratedTokens++
	p := Piece{Tokens: []int32{tok}}
	if g.logprobs {
		p.Logprobs = []sampling.Logprobs{sampling.TokenLogprobs(logits, tok, g.top)}
	}
	if g.tok.IsEOG(tok) {
		return g.finish(p, FinishEOS), true, nil
	}
	g.buf = g.tok.AppendText(g.buf[:0], tok)
	text, stopped := g.text.feed(g.buf)
	p.Text = text
	if stopped {
		return g.finish(p, FinishStop), true, nil
	}
	if g.max > 0 && g.usage.GeneratedTokens >= g.max {
		return g.finish(p, FinishLength), true, nil
	}
	return p, false, nil
}

// finish completes p as the last piece.
func (g *genSeq) finish(p Piece, why FinishReason) Piece {
	if why != FinishStop {
		p.Text += g.text.flush()
	} else {
		p.Stop = g.text.matched()
	}
	p.Finish = why
	if !g.genStart.IsZero() {
		g.usage.GenerateTime = time.Since(g.genStart)
	}
	p.Usage = g.usage
	return p
}

// Generate returns a stream of the pieces of a generation from req in sequence 0 of the
// context (whose previous cells are removed first; other sequences are left alone). The
// prompt is evaluated in batches of NBatch tokens; then each step samples a token and
// evaluates it. ctx is checked between batches and before every step: when it is done the
// stream ends with a piece whose Finish is FinishCancelled, yielded with ctx.Err().
//
// A prompt longer than the free cells is an error wrapping ErrPromptTooLong (nothing is
// truncated). MaxTokens <= 0 generates until an end-of-generation token, a stop string or
// the end of the context (FinishLength). An error (a constraint that allows no token, a
// failed evaluation) is yielded with an empty piece and ends the stream. Breaking out of the
// loop early is fine. The Context must not be used by anything else while the stream runs.
func (c *Context) Generate(ctx context.Context, req Request) iter.Seq2[Piece, error] {
	return func(yield func(Piece, error) bool) {
		if err := c.checkOpen("Context.Generate"); err != nil {
			yield(Piece{}, err)
			return
		}
		prompt, err := c.m.promptTokens(&req)
		if err != nil {
			yield(Piece{}, err)
			return
		}
		g, err := newGenSeq(c.m, &req, prompt)
		if err != nil {
			yield(Piece{}, err)
			return
		}
		c.kv.seqRemove(0, 0, -1)
		if free := c.kv.free(); len(prompt) > free {
			yield(Piece{}, fmt.Errorf("%w: it has %d tokens and the context has %d free cells (of %d): shorten the prompt or use a larger context",
				ErrPromptTooLong, len(prompt), free, c.kv.nCtx))
			return
		}
		cancelled := func() bool {
			if ctx.Err() == nil {
				return false
			}
			yield(g.finish(Piece{}, FinishCancelled), ctx.Err())
			return true
		}
		start := time.Now()
		var b Batch
		for i := 0; i < len(prompt); i += c.nBatch {
			if cancelled() {
				return
			}
			b.Clear()
			end := min(len(prompt), i+c.nBatch)
			for j := i; j < end; j++ {
				b.Add(prompt[j], j, 0, j == len(prompt)-1)
			}
			if err := c.Decode(&b); err != nil {
				yield(Piece{}, err)
				return
			}
		}
		g.usage.PromptTime = time.Since(start)
		logits := c.Logits(b.Len() - 1)
		pos := len(prompt)
		for {
			if cancelled() {
				return
			}
			p, done, err := g.step(logits)
			if err != nil {
				yield(Piece{}, err)
				return
			}
			if done {
				yield(p, nil)
				return
			}
			if c.kv.free() == 0 {
				yield(g.finish(p, FinishLength), nil)
				return
			}
			if !yield(p, nil) {
				return
			}
			b.Clear()
			b.Add(p.Tokens[0], pos, 0, true)
			pos++
			if err := c.Decode(&b); err != nil {
				yield(Piece{}, err)
				return
			}
			logits = c.Logits(0)
		}
	}
}
