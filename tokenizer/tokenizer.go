package tokenizer

import (
	"fmt"
	"slices"
)

// Tokenizer converts between text and token ids of one vocabulary. Build it with FromGGUF
// or New. It is immutable and safe for concurrent use.
type Tokenizer struct {
	vocab   Vocab
	types   []TokenType      // one per token: Vocab.Types (or all normal), end-of-generation texts made control
	scores  []float32        // one per token (Vocab.Scores or all zero)
	ids     map[string]int32 // token text -> id (the last id wins for duplicate texts)
	byteIDs [256]int32       // SPM byte fallback: byte -> id of <0xNN>; BPE: id of the byte's character or NoToken
	ranks   map[mergePair]int32
	pre     preType        // BPE pre-tokenizer
	special []specialToken // control, user-defined and unknown tokens, longest text first
	eot     int32          // end of turn (Vocab.EOT or found by its text)
	eom     int32          // end of message (Vocab.EOM or found by its text)
	fim     [6]int32       // fill-in-the-middle pre, suf, mid, pad, rep, sep (Vocab or found by text)
	eog     []int32        // end-of-generation tokens, sorted
	maxLen  int            // the longest token text in bytes (WPM)
	pieces  []byte         // all pieces, concatenated
	pieceAt []int32        // piece of id i = pieces[pieceAt[i]:pieceAt[i+1]]
}

// mergePair is one BPE merge, the key of Tokenizer.ranks.
type mergePair struct{ left, right string }

// New builds a Tokenizer from v, which it copies. It returns an error that names the first
// problem: an unknown model or pre-tokenizer, lists of the wrong length, special ids outside
// the vocabulary, a malformed merge, or an SPM vocabulary without the byte tokens
// <0x00>…<0xFF>.
//
// As llama.cpp does when it loads a vocabulary, New finds the end-of-turn and
// end-of-message tokens by their text when v does not name them, and treats every token
// whose text marks the end of generation ("<|eot_id|>", "<|im_end|>", "<|end|>",
// "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>") as a control token.
func New(v Vocab) (*Tokenizer, error) {
	if err := v.validate(); err != nil {
		return nil, err
	}
	n := len(v.Tokens)
	t := &Tokenizer{vocab: v}
	t.vocab.Tokens = slices.Clone(v.Tokens)
	t.vocab.Scores = slices.Clone(v.Scores)
	t.vocab.Types = slices.Clone(v.Types)
	t.vocab.Merges = slices.Clone(v.Merges)
	t.types = make([]TokenType, n)
	for i := range t.types {
		t.types[i] = TypeNormal
		if v.Types != nil {
			t.types[i] = v.Types[i]
		}
	}
	t.scores = t.vocab.Scores
	if t.scores == nil {
		t.scores = make([]float32, n)
	}
	t.ids = make(map[string]int32, n)
	for i, s := range t.vocab.Tokens {
		t.ids[s] = int32(i)
		t.maxLen = max(t.maxLen, len(s))
	}
	switch v.Model {
	case ModelSPM:
		for b := 0; b < 256; b++ {
			s := byteTokenText(byte(b))
			id, ok := t.ids[s]
			if !ok {
				return nil, fmt.Errorf("tokenizer: the llama (SPM) vocabulary has no byte token %q: an SPM vocabulary needs all 256 byte tokens <0x00>…<0xFF>", s)
			}
			t.byteIDs[b] = id
		}
	case ModelBPE:
		for b := 0; b < 256; b++ {
			id, ok := t.ids[string(byteToRune[b])]
			if !ok {
				id = NoToken
			}
			t.byteIDs[b] = id
		}
		t.ranks = make(map[mergePair]int32, len(v.Merges))
		for i, m := range t.vocab.Merges {
			l, r, _ := splitMerge(m)
			k := mergePair{l, r}
			if _, dup := t.ranks[k]; !dup {
				t.ranks[k] = int32(i)
			}
		}
		t.pre, _ = lookupPre(v.preName())
	case ModelWPM:
		nfdOnce.Do(buildNFD) // the normalization table, once per process
		for b := range t.byteIDs {
			t.byteIDs[b] = NoToken
		}
		if id, ok := t.ids["\n"]; ok {
			t.byteIDs['\n'] = id
		}
	}
	t.findEndOfGeneration()
	t.special = t.findSpecialTokens()
	t.buildPieces()
	return t, nil
}

// Vocab returns a copy of the vocabulary the Tokenizer was built from.
func (t *Tokenizer) Vocab() Vocab {
	v := t.vocab
	v.Tokens = slices.Clone(v.Tokens)
	v.Scores = slices.Clone(v.Scores)
	v.Types = slices.Clone(v.Types)
	v.Merges = slices.Clone(v.Merges)
	return v
}

// Model returns the vocabulary model: "llama" (SPM), "gpt2" (BPE) or "bert" (WPM).
func (t *Tokenizer) Model() string { return t.vocab.Model }

// NumTokens returns the size of the vocabulary (n_vocab).
func (t *Tokenizer) NumTokens() int { return len(t.vocab.Tokens) }

// BOS returns the beginning-of-sequence token id, or NoToken.
func (t *Tokenizer) BOS() int32 { return t.vocab.BOS }

// EOS returns the end-of-sequence token id, or NoToken.
func (t *Tokenizer) EOS() int32 { return t.vocab.EOS }

// UNK returns the unknown token id, or NoToken.
func (t *Tokenizer) UNK() int32 { return t.vocab.UNK }

// Newline returns the id of the newline token: the byte token <0x0A> for SPM, the token
// "Ċ" (the byte-level newline) for BPE; NoToken if a BPE vocabulary lacks it.
func (t *Tokenizer) Newline() int32 { return t.byteIDs['\n'] }

// AddBOSDefault reports whether Tokenize with addSpecial puts a BOS token first
// (tokenizer.ggml.add_bos_token; absent: true for SPM and WPM, false for BPE except the
// pre-tokenizers for which llama.cpp sets it, such as llama-bpe).
func (t *Tokenizer) AddBOSDefault() bool { return t.vocab.AddBOS }

// AddEOSDefault reports whether Tokenize with addSpecial puts an EOS token last
// (tokenizer.ggml.add_eos_token; absent: false).
func (t *Tokenizer) AddEOSDefault() bool { return t.vocab.AddEOS }

// Pre returns the BPE pre-tokenizer's name (tokenizer.ggml.pre), "" for SPM and WPM.
func (t *Tokenizer) Pre() string {
	if t.vocab.Model != ModelBPE {
		return ""
	}
	return t.vocab.preName()
}

// SEP returns the separator token id ([SEP] of BERT), or NoToken.
func (t *Tokenizer) SEP() int32 { return t.vocab.SEP }

// PAD returns the padding token id, or NoToken.
func (t *Tokenizer) PAD() int32 { return t.vocab.PAD }

// CLS returns the classification token id ([CLS] of BERT), or NoToken.
func (t *Tokenizer) CLS() int32 { return t.vocab.CLS }

// MASK returns the mask token id, or NoToken.
func (t *Tokenizer) MASK() int32 { return t.vocab.MASK }

// EOT returns the end-of-turn token id (tokenizer.ggml.eot_token_id, or a token such as
// "<|eot_id|>" or "<|im_end|>" found by its text), or NoToken.
func (t *Tokenizer) EOT() int32 { return t.eot }

// EOM returns the end-of-message token id ("<|eom_id|>"), or NoToken.
func (t *Tokenizer) EOM() int32 { return t.eom }

// FIM returns the fill-in-the-middle token ids (prefix, suffix, middle, pad, repository,
// file separator; tokenizer.ggml.fim_*_token_id or found by their text such as
// "<|fim_prefix|>"), NoToken for those the vocabulary lacks.
func (t *Tokenizer) FIM() (pre, suf, mid, pad, rep, sep int32) {
	f := t.fim
	return f[0], f[1], f[2], f[3], f[4], f[5]
}

// IsEOG reports whether id ends generation: EOS, EOT, EOM, the fill-in-the-middle pad,
// repository and file separator tokens, or any token whose text llama.cpp treats so
// ("<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>",
// "<EOT>"). An id outside the vocabulary is not.
func (t *Tokenizer) IsEOG(id int32) bool {
	_, found := slices.BinarySearch(t.eog, id)
	return found
}

// EOGTokens returns the sorted ids of every end-of-generation token.
func (t *Tokenizer) EOGTokens() []int32 { return slices.Clone(t.eog) }

// Token returns the vocabulary text of id. It panics with a *TokenIDError if id is outside
// the vocabulary.
func (t *Tokenizer) Token(id int32) string {
	t.checkID(id)
	return t.vocab.Tokens[id]
}

// Type returns the TokenType of id, as the tokenizer uses it: the file's type, except that
// end-of-generation tokens found by their text are control tokens (see New). It panics
// with a *TokenIDError if id is outside the vocabulary.
func (t *Tokenizer) Type(id int32) TokenType {
	t.checkID(id)
	return t.types[id]
}

// Score returns the score of id. It panics with a *TokenIDError if id is outside the
// vocabulary.
func (t *Tokenizer) Score(id int32) float32 {
	t.checkID(id)
	return t.scores[id]
}

// ID returns the id of the token whose vocabulary text is s, and whether there is one.
func (t *Tokenizer) ID(s string) (int32, bool) {
	id, ok := t.ids[s]
	return id, ok
}

// TokenIDError is the panic value of the methods that take a token id outside the
// vocabulary: a programming error, since every id a model produces is in range.
type TokenIDError struct {
	ID        int32 // the offending id
	NumTokens int   // the vocabulary size
}

// Error implements the error interface.
func (e *TokenIDError) Error() string {
	return fmt.Sprintf("tokenizer: token id %d is outside the vocabulary (0 to %d)", e.ID, e.NumTokens-1)
}

func (t *Tokenizer) checkID(id int32) {
	if id < 0 || int(id) >= len(t.vocab.Tokens) {
		panic(&TokenIDError{ID: id, NumTokens: len(t.vocab.Tokens)})
	}
}
