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

// Tokenize returns the token ids of text, as llama_tokenize(text, addSpecial, special) of
// llama.cpp c392e5094 (2025-02) does. With addSpecial the vocabulary's own special tokens are
// added: BOS first if AddBOSDefault, EOS last if AddEOSDefault, and [CLS] ... [SEP] for WPM.
// With special, control tokens written literally in the text (such as "<s>" or
// "<|im_end|>") are recognised first and the text between them is tokenized as usual;
// user-defined tokens are recognised in either case. SPM adds a space in front of the text
// and of the text after each special token (unless add_space_prefix is false). Empty text
// gives no tokens (just the added special tokens).
//
// Any byte string of up to MaxTextLen bytes is accepted (a longer one panics with a
// *TextLengthError). SPM keeps invalid UTF-8 as byte tokens, cutting characters by their
// lead byte as llama.cpp does; BPE and WPM read each undecodable byte as U+FFFD, as
// llama.cpp does.
func (t *Tokenizer) Tokenize(text string, addSpecial, special bool) []int32 {
	if len(text) > MaxTextLen {
		panic(&TextLengthError{Len: len(text)})
	}
	out := make([]int32, 0, len(text)/3+3)
	if addSpecial {
		switch {
		case t.vocab.Model == ModelWPM && t.vocab.CLS >= 0:
			out = append(out, t.vocab.CLS)
		case t.vocab.Model == ModelWPM && t.vocab.BOS >= 0, t.vocab.AddBOS && t.vocab.BOS >= 0:
			out = append(out, t.vocab.BOS)
		}
	}
	if text != "" {
		st := statePool.Get().(*state)
		out = t.tokenize(text, special, out, st)
		statePool.Put(st)
	}
	if addSpecial {
		switch {
		case t.vocab.Model == ModelWPM:
			if t.vocab.SEP >= 0 {
				out = append(out, t.vocab.SEP)
			}
		case t.vocab.AddEOS && t.vocab.EOS >= 0:
			out = append(out, t.vocab.EOS)
		}
	}
	return out
}

func (t *Tokenizer) tokenize(text string, special bool, out []int32, st *state) []int32 {
	st.frags = t.partition(text, special, st.frags, &st.seen)
	prevSpecial := true
	for _, f := range st.frags {
		if f.id >= 0 {
			out = append(out, f.id)
			prevSpecial = true
			continue
		}
		raw := text[f.start:f.end]
		switch t.vocab.Model {
		case ModelSPM:
			st.buf = escapeSPM(st.buf, raw, prevSpecial && t.vocab.AddSpacePrefix)
			out = t.spm(string(st.buf), out, st)
		case ModelBPE:
			out = t.bpe(raw, out, st)
		default:
			out = t.wpm(raw, out, st)
		}
		prevSpecial = false
	}
	return out
}
