package tokenizer

import (
	"fmt"
	"slices"
)

// Tokenizer converts between text and token ids of one vocabulary. Build it with FromGGUF
// or New. It is immutable and safe for concurrent use.
type Tokenizer struct {
	vocab   Vocab
	types   []TokenType      // one per token (Vocab.Types or all normal)
	scores  []float32        // one per token (Vocab.Scores or all zero)
	ids     map[string]int32 // token text -> id (the last id wins for duplicate texts)
	byteIDs [256]int32       // SPM byte fallback: byte -> id of <0xNN>; BPE: id of the byte's character or NoToken
	ranks   map[mergePair]int32
	special []specialToken // tokens matched literally when Tokenize's special flag is set
	pieces  []byte         // all pieces, concatenated
	pieceAt []int32        // piece of id i = pieces[pieceAt[i]:pieceAt[i+1]]
}

// mergePair is one BPE merge, the key of Tokenizer.ranks.
type mergePair struct{ left, right string }

// New builds a Tokenizer from v, which it copies. It returns an error that names the first
// problem: an unknown model, lists of the wrong length, special ids outside the vocabulary,
// a malformed merge, or an SPM vocabulary without the byte tokens <0x00>…<0xFF>.
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
	t.types = t.vocab.Types
	if t.types == nil {
		t.types = make([]TokenType, n)
		for i := range t.types {
			t.types[i] = TypeNormal
		}
	}
	t.scores = t.vocab.Scores
	if t.scores == nil {
		t.scores = make([]float32, n)
	}
	t.ids = make(map[string]int32, n)
	for i, s := range t.vocab.Tokens {
		t.ids[s] = int32(i)
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
	}
	t.special = findSpecialTokens(t.vocab.Tokens, t.ids)
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

// Model returns the vocabulary model: "llama" (SPM) or "gpt2" (BPE).
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

// AddBOSDefault reports whether a BOS token should be added to a prompt by default
// (tokenizer.ggml.add_bos_token; absent: true for SPM, false for BPE).
func (t *Tokenizer) AddBOSDefault() bool { return t.vocab.AddBOS }

// Token returns the vocabulary text of id. It panics with a *TokenIDError if id is outside
// the vocabulary.
func (t *Tokenizer) Token(id int32) string {
	t.checkID(id)
	return t.vocab.Tokens[id]
}

// Type returns the TokenType of id. It panics with a *TokenIDError if id is outside the
// vocabulary.
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
