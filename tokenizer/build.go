package tokenizer

import "fmt"

// NewSPMVocab lays out an SPM vocabulary the way LLaMA's is: <unk> (0), <s> (1), </s> (2),
// the byte tokens <0x00>…<0xFF> (3–258), then pieces in order of merge priority, the first
// highest (score −i for the i-th piece, 0 for the special and byte tokens). Pieces write
// spaces as "▁". It is meant for vocabularies trained by BPE: SPM tokenization only reaches
// a piece through pairs of shorter tokens, so every piece longer than one character should
// be the concatenation of two earlier tokens (as each merge of BPE training is). Empty
// pieces, duplicates and pieces that clash with the special or byte tokens are an error.
func NewSPMVocab(pieces []string) (Vocab, error) {
	v := NewVocab(ModelSPM)
	v.Tokens = []string{"<unk>", "<s>", "</s>"}
	v.Types = []TokenType{TypeUnknown, TypeControl, TypeControl}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, byteTokenText(byte(b)))
		v.Types = append(v.Types, TypeByte)
	}
	seen := make(map[string]bool, len(v.Tokens)+len(pieces))
	for _, s := range v.Tokens {
		seen[s] = true
	}
	v.Scores = make([]float32, len(v.Tokens), len(v.Tokens)+len(pieces))
	for i, p := range pieces {
		if p == "" {
			return Vocab{}, fmt.Errorf("tokenizer: piece %d is empty", i)
		}
		if seen[p] {
			return Vocab{}, fmt.Errorf("tokenizer: piece %d (%q) is already in the vocabulary: give each piece once", i, p)
		}
		seen[p] = true
		v.Tokens = append(v.Tokens, p)
		v.Types = append(v.Types, TypeNormal)
		v.Scores = append(v.Scores, -float32(i))
	}
	return v, nil
}
