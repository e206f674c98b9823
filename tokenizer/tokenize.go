package tokenizer

import (
	"fmt"
	"sync"
)

// MaxTextLen is the longest text Tokenize accepts, in bytes (positions are 32-bit, and
// escaping may triple the size); longer text should be tokenized in parts.
const MaxTextLen = 1 << 29

// TextLengthError is the panic value of Tokenize for a text longer than MaxTextLen.
type TextLengthError struct{ Len int }

// Error implements the error interface.
func (e *TextLengthError) Error() string {
	return fmt.Sprintf("tokenizer: a text of %d bytes is longer than MaxTextLen (%d): tokenize it in parts", e.Len, MaxTextLen)
}

var statePool = sync.Pool{New: func() any { return new(state) }}

// Tokenize returns the token ids of text, as llama_tokenize(text, addBOS, special) of
// llama.cpp b1882 does. With addBOS the BOS token comes first (if the vocabulary has one).
// With special, special tokens written literally in the text (for the LLaMA vocabulary:
// <s>, </s>, <unk> and the byte tokens such as <0x0A>) are recognised first and the text
// between them is tokenized as usual. SPM adds a space in front of the text unless it
// starts with a special token. Empty text gives no tokens (just BOS with addBOS).
//
// Any byte string of up to MaxTextLen bytes is accepted (a longer one panics with a
// *TextLengthError): bytes that form no token become byte tokens. As in llama.cpp, SPM cuts
// characters by their lead byte alone, so in invalid UTF-8 a stray lead byte takes the
// following bytes with it (and a space right after it comes back as "▁").
func (t *Tokenizer) Tokenize(text string, addBOS, special bool) []int32 {
	if len(text) > MaxTextLen {
		panic(&TextLengthError{Len: len(text)})
	}
	out := make([]int32, 0, len(text)/3+2)
	if addBOS && t.vocab.BOS >= 0 {
		out = append(out, t.vocab.BOS)
	}
	if text == "" {
		return out
	}
	st := statePool.Get().(*state)
	defer statePool.Put(st)
	return t.tokenize(text, special, out, st)
}

func (t *Tokenizer) tokenize(text string, special bool, out []int32, st *state) []int32 {
	st.frags = t.partition(text, special, st.frags)
	for k, f := range st.frags {
		if f.id >= 0 {
			out = append(out, f.id)
			continue
		}
		raw := text[f.start:f.end]
		if t.vocab.Model == ModelSPM {
			st.buf = escapeSPM(st.buf, raw, k == 0)
			out = t.spm(string(st.buf), out, st)
		} else {
			out = t.bpe(raw, out, st)
		}
	}
	return out
}
