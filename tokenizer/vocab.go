package tokenizer

import (
	"fmt"
	"strings"
)

// Model names, as stored under the GGUF key tokenizer.ggml.model.
const (
	// ModelSPM is the SentencePiece-style vocabulary of LLaMA ("llama").
	ModelSPM = "llama"
	// ModelBPE is the byte-level BPE vocabulary of GPT-2 ("gpt2").
	ModelBPE = "gpt2"
	// ModelWPM is the WordPiece vocabulary of BERT ("bert"): word-initial pieces are
	// stored with a leading "▁", continuation pieces without BERT's "##".
	ModelWPM = "bert"
)

// TokenType is the kind of a vocabulary entry (enum llama_token_type; GGUF key
// tokenizer.ggml.token_type).
type TokenType int32

// Token types. TypeUndefined (0) is accepted and treated like TypeUnused.
const (
	TypeUndefined   TokenType = 0
	TypeNormal      TokenType = 1
	TypeUnknown     TokenType = 2
	TypeControl     TokenType = 3
	TypeUserDefined TokenType = 4
	TypeUnused      TokenType = 5
	TypeByte        TokenType = 6
)

// String returns the lower-case name of the token type ("normal", "byte", ...).
func (t TokenType) String() string {
	switch t {
	case TypeUndefined:
		return "undefined"
	case TypeNormal:
		return "normal"
	case TypeUnknown:
		return "unknown"
	case TypeControl:
		return "control"
	case TypeUserDefined:
		return "user-defined"
	case TypeUnused:
		return "unused"
	case TypeByte:
		return "byte"
	}
	return fmt.Sprintf("TokenType(%d)", int32(t))
}

// NoToken marks an absent special token id in a Vocab.
const NoToken int32 = -1

// Vocab is everything a Tokenizer is built from: the contents of the tokenizer.ggml.* keys
// of a GGUF file. NewVocab fills in the defaults of a model; New validates a Vocab.
type Vocab struct {
	// Model is ModelSPM ("llama") or ModelBPE ("gpt2").
	Model string
	// Tokens holds the text of every token; the id of a token is its index.
	// SPM texts write spaces as "▁"; BPE texts use the GPT-2 byte-to-unicode alphabet.
	Tokens []string
	// Scores holds one merge priority per token (SPM: higher merges first).
	// Nil means all zero.
	Scores []float32
	// Types holds one TokenType per token. Nil means all TypeNormal.
	Types []TokenType
	// Merges lists the BPE merges "left right", highest priority first (required for BPE,
	// ignored otherwise).
	Merges []string
	// Pre names the BPE pre-tokenizer (tokenizer.ggml.pre, see PreTokenizers). Empty means
	// "gpt-2" here; FromGGUF reads a file without the key as "default", as llama.cpp does.
	// Ignored for SPM and WPM.
	Pre string
	// BOS, EOS, UNK, SEP and PAD are the special token ids, NoToken when absent.
	BOS, EOS, UNK, SEP, PAD int32
	// EOT (end of turn), EOM (end of message), CLS and MASK are further special token
	// ids, NoToken when absent. NewVocab leaves EOT and EOM absent; FromGGUF finds them
	// by their text when the file does not name them, as llama.cpp does.
	EOT, EOM, CLS, MASK int32
	// FIMPre, FIMSuf, FIMMid, FIMPad, FIMRep and FIMSep are the fill-in-the-middle tokens
	// (prefix, suffix, middle, pad, repository, file separator), NoToken when absent; New
	// finds them by their text when absent, as llama.cpp does.
	FIMPre, FIMSuf, FIMMid, FIMPad, FIMRep, FIMSep int32
	// AddBOS says whether Tokenize with addSpecial puts the BOS token first
	// (tokenizer.ggml.add_bos_token), AddEOS whether it puts EOS last (add_eos_token).
	AddBOS, AddEOS bool
	// AddSpacePrefix says whether SPM puts a space in front of the text and of the text
	// after each special token (tokenizer.ggml.add_space_prefix; default true).
	AddSpacePrefix bool
	// Name is the model's general.name: llama.cpp gives the special tokens of models named
	// like Phi-3 the right-strip attribute (spaces after them are dropped), so this package
	// does too.
	Name string
}

// NewVocab returns a Vocab for model with the defaults llama.cpp applies when a file does
// not set them: SPM bos 1, eos 2, unk 0, add_bos and add_space_prefix true; BPE bos 11,
// eos 11, no unk and add_bos false; WPM [CLS] 101 (also bos), [SEP] 102, [UNK] 100,
// [PAD] 0, [MASK] 103 and add_bos true. The token lists are left empty for the caller.
func NewVocab(model string) Vocab {
	v := Vocab{Model: model, BOS: NoToken, EOS: NoToken, UNK: NoToken, SEP: NoToken, PAD: NoToken,
		EOT: NoToken, EOM: NoToken, CLS: NoToken, MASK: NoToken, FIMPre: NoToken, FIMSuf: NoToken,
		FIMMid: NoToken, FIMPad: NoToken, FIMRep: NoToken, FIMSep: NoToken}
	switch model {
	case ModelSPM:
		v.BOS, v.EOS, v.UNK, v.AddBOS, v.AddSpacePrefix = 1, 2, 0, true, true
	case ModelBPE:
		v.BOS, v.EOS = 11, 11
	case ModelWPM:
		v.BOS, v.CLS, v.SEP, v.UNK, v.PAD, v.MASK, v.AddBOS = 101, 101, 102, 100, 0, 103, true
	}
	return v
}

// byteTokenText returns the SPM text of the byte token for b, "<0xNN>" in upper-case hex.
func byteTokenText(b byte) string {
	const hex = "0123456789ABCDEF"
	return string([]byte{'<', '0', 'x', hex[b>>4], hex[b&15], '>'})
}

// parseByteToken returns the byte an SPM byte token "<0xNN>" stands for.
func parseByteToken(s string) (byte, bool) {
	if len(s) != 6 || !strings.HasPrefix(s, "<0x") || s[5] != '>' {
		return 0, false
	}
	var b byte
	for _, c := range []byte(s[3:5]) {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		default:
			return 0, false
		}
		b = b<<4 | d
	}
	return b, true
}

// validate checks a Vocab and reports the first problem in words a user can act on.
func (v *Vocab) validate() error {
	if v.Model != ModelSPM && v.Model != ModelBPE && v.Model != ModelWPM {
		return fmt.Errorf("tokenizer: unsupported model %q (tokenizer.ggml.model): this package reads %q (SentencePiece), %q (byte-level BPE) and %q (WordPiece); llama.cpp's t5 (UGM) and rwkv vocabularies are not supported", v.Model, ModelSPM, ModelBPE, ModelWPM)
	}
	n := len(v.Tokens)
	if n == 0 {
		return fmt.Errorf("tokenizer: the vocabulary has no tokens (tokenizer.ggml.tokens is empty)")
	}
	if n > 1<<31-1 {
		return fmt.Errorf("tokenizer: %d tokens is more than an int32 id can address", n)
	}
	if v.Scores != nil && len(v.Scores) != n {
		return fmt.Errorf("tokenizer: tokenizer.ggml.scores has %d entries for %d tokens: give one score per token", len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) != n {
		return fmt.Errorf("tokenizer: tokenizer.ggml.token_type has %d entries for %d tokens: give one type per token", len(v.Types), n)
	}
	for i, t := range v.Types {
		if t < TypeUndefined || t > TypeByte {
			return fmt.Errorf("tokenizer: tokenizer.ggml.token_type[%d] = %d: a token type is 0 to 6", i, int32(t))
		}
	}
	for _, s := range []struct {
		name string
		id   int32
	}{{"bos", v.BOS}, {"eos", v.EOS}, {"unknown", v.UNK}, {"seperator", v.SEP}, {"padding", v.PAD},
		{"eot", v.EOT}, {"eom", v.EOM}, {"cls", v.CLS}, {"mask", v.MASK}, {"fim_pre", v.FIMPre},
		{"fim_suf", v.FIMSuf}, {"fim_mid", v.FIMMid}, {"fim_pad", v.FIMPad}, {"fim_rep", v.FIMRep},
		{"fim_sep", v.FIMSep}} {
		if s.id < NoToken || s.id >= int32(n) {
			return fmt.Errorf("tokenizer: %s token id %d is outside the vocabulary of %d tokens: use NoToken (-1) for none", s.name, s.id, n)
		}
	}
	if v.Model == ModelBPE {
		if len(v.Merges) == 0 {
			return fmt.Errorf("tokenizer: a gpt2 (BPE) vocabulary needs merges (tokenizer.ggml.merges is missing or empty)")
		}
		for i, m := range v.Merges {
			if _, _, ok := splitMerge(m); !ok {
				return fmt.Errorf("tokenizer: tokenizer.ggml.merges[%d] = %q is not of the form \"left right\"", i, m)
			}
		}
		if _, err := lookupPre(v.preName()); err != nil {
			return err
		}
	}
	return nil
}

// splitMerge splits a BPE merge "left right" at its first space after the first byte.
func splitMerge(m string) (left, right string, ok bool) {
	if len(m) < 3 {
		return "", "", false
	}
	i := strings.IndexByte(m[1:], ' ')
	if i < 0 || i+2 >= len(m) {
		return "", "", false
	}
	return m[:i+1], m[i+2:], true
}

// preName is the BPE pre-tokenizer's name, "gpt-2" when Pre is empty.
func (v *Vocab) preName() string {
	if v.Pre == "" {
		return "gpt-2"
	}
	return v.Pre
}
