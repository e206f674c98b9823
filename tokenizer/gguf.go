package tokenizer

import (
	"errors"
	"fmt"

	"github.com/ggml-go/ggml/gguf"
)

// GGUF metadata keys of a vocabulary.
const (
	KeyModel     = "tokenizer.ggml.model"
	KeyTokens    = "tokenizer.ggml.tokens"
	KeyScores    = "tokenizer.ggml.scores"
	KeyTypes     = "tokenizer.ggml.token_type"
	KeyMerges    = "tokenizer.ggml.merges"
	KeyBOS       = "tokenizer.ggml.bos_token_id"
	KeyEOS       = "tokenizer.ggml.eos_token_id"
	KeyUNK       = "tokenizer.ggml.unknown_token_id"
	KeySEP       = "tokenizer.ggml.seperator_token_id" // sic, as llama.cpp spells it
	KeyPAD       = "tokenizer.ggml.padding_token_id"
	KeyAddBOS    = "tokenizer.ggml.add_bos_token"
	KeyPre       = "tokenizer.ggml.pre"
	KeyEOT       = "tokenizer.ggml.eot_token_id"
	KeyEOM       = "tokenizer.ggml.eom_token_id"
	KeyCLS       = "tokenizer.ggml.cls_token_id"
	KeyMASK      = "tokenizer.ggml.mask_token_id"
	KeyFIMPre    = "tokenizer.ggml.fim_pre_token_id"
	KeyFIMSuf    = "tokenizer.ggml.fim_suf_token_id"
	KeyFIMMid    = "tokenizer.ggml.fim_mid_token_id"
	KeyFIMPad    = "tokenizer.ggml.fim_pad_token_id"
	KeyFIMRep    = "tokenizer.ggml.fim_rep_token_id"
	KeyFIMSep    = "tokenizer.ggml.fim_sep_token_id"
	KeyAddEOS    = "tokenizer.ggml.add_eos_token"
	KeyAddPrefix = "tokenizer.ggml.add_space_prefix"
	keyName      = "general.name"
	idNoneInFile = 4294967295
)

// FromGGUF builds the Tokenizer of a GGUF file from its tokenizer.ggml.* metadata, with the
// rules of llama.cpp c392e5094 (2025-02): value types are checked strictly; model and tokens
// are required, merges too for gpt2; scores default to 0, token types to normal; special
// token ids default per model (see NewVocab), 4294967295 means none and another id outside
// the vocabulary keeps the default. For gpt2 the pre-tokenizer is tokenizer.ggml.pre
// ("default" when the key is absent; a name this package does not know is an error that
// names it) and sets add_bos as llama.cpp does (llama-bpe: true); add_bos_token,
// add_eos_token and add_space_prefix then override the defaults. Errors name the key at
// fault.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	model, err := f.GetString(KeyModel)
	if err != nil {
		return nil, keyError(KeyModel, "a string, \"llama\", \"gpt2\" or \"bert\"", err)
	}
	v := NewVocab(model)
	if model != ModelSPM && model != ModelBPE && model != ModelWPM {
		return nil, v.validate()
	}
	if v.Name, err = f.GetString(keyName); err != nil && !errors.Is(err, gguf.ErrKeyNotFound) {
		return nil, keyError(keyName, "a string", err)
	}
	if model == ModelBPE {
		v.Pre, err = f.GetString(KeyPre)
		switch {
		case errors.Is(err, gguf.ErrKeyNotFound), err == nil && v.Pre == "":
			v.Pre = "default" // llama.cpp's choice for a file without a pre-tokenizer
		case err != nil:
			return nil, keyError(KeyPre, "a string naming the pre-tokenizer", err)
		}
		p, err := lookupPre(v.Pre)
		if err != nil {
			return nil, err
		}
		v.AddBOS = p.addBOS
		if p.noBOS {
			v.BOS = NoToken
		}
	}
	if v.Tokens, err = f.GetStrings(KeyTokens); err != nil {
		return nil, keyError(KeyTokens, "an array of strings", err)
	}
	if v.Scores, err = optional(f.GetFloat32s(KeyScores)); err != nil {
		return nil, keyError(KeyScores, "an array of f32", err)
	}
	types, err := optional(f.GetInt32s(KeyTypes))
	if err != nil {
		return nil, keyError(KeyTypes, "an array of i32", err)
	}
	if types != nil {
		v.Types = make([]TokenType, len(types))
		for i, x := range types {
			v.Types[i] = TokenType(x)
		}
	}
	if model == ModelBPE {
		if v.Merges, err = f.GetStrings(KeyMerges); err != nil {
			return nil, keyError(KeyMerges, "an array of strings \"left right\" (required for gpt2)", err)
		}
	}
	for _, s := range []struct {
		key string
		id  *int32
	}{{KeyBOS, &v.BOS}, {KeyEOS, &v.EOS}, {KeyUNK, &v.UNK}, {KeySEP, &v.SEP}, {KeyPAD, &v.PAD},
		{KeyEOT, &v.EOT}, {KeyEOM, &v.EOM}, {KeyCLS, &v.CLS}, {KeyMASK, &v.MASK},
		{KeyFIMPre, &v.FIMPre}, {KeyFIMSuf, &v.FIMSuf}, {KeyFIMMid, &v.FIMMid},
		{KeyFIMPad, &v.FIMPad}, {KeyFIMRep, &v.FIMRep}, {KeyFIMSep, &v.FIMSep},
		// deprecated names of the first three
		{"tokenizer.ggml.prefix_token_id", &v.FIMPre}, {"tokenizer.ggml.suffix_token_id", &v.FIMSuf},
		{"tokenizer.ggml.middle_token_id", &v.FIMMid}} {
		if int(*s.id) >= len(v.Tokens) {
			*s.id = NoToken // a default that this (tiny) vocabulary does not have
		}
		id, err := f.GetUint32(s.key)
		switch {
		case errors.Is(err, gguf.ErrKeyNotFound):
		case err != nil:
			return nil, keyError(s.key, "a u32 token id", err)
		case id == idNoneInFile:
			*s.id = NoToken
		case int64(id) < int64(len(v.Tokens)):
			*s.id = int32(id)
		}
	}
	for _, s := range []struct {
		key string
		val *bool
	}{{KeyAddBOS, &v.AddBOS}, {KeyAddEOS, &v.AddEOS}, {KeyAddPrefix, &v.AddSpacePrefix}} {
		if b, err := f.GetBool(s.key); err == nil {
			*s.val = b
		} else if !errors.Is(err, gguf.ErrKeyNotFound) {
			return nil, keyError(s.key, "a bool", err)
		}
	}
	return New(v)
}

// optional turns a missing key into a nil value without error.
func optional[T any](x []T, err error) ([]T, error) {
	if errors.Is(err, gguf.ErrKeyNotFound) {
		return nil, nil
	}
	return x, err
}

// keyError explains what is wrong with key and what it must hold.
func keyError(key, want string, err error) error {
	if errors.Is(err, gguf.ErrKeyNotFound) {
		return fmt.Errorf("tokenizer: the file has no %s key (it must hold %s): not a llama.cpp vocabulary", key, want)
	}
	return fmt.Errorf("tokenizer: key %s must hold %s: %w", key, want, err)
}

// SetGGUF stores the vocabulary under the tokenizer.ggml.* keys of b, in the types
// llama.cpp reads, so that FromGGUF (and llama.cpp) load it back. Absent special ids are
// written as 4294967295 (none) and the scores and types always; merges only for BPE.
func (v *Vocab) SetGGUF(b *gguf.Builder) error {
	return v.setKVs(b.Set)
}

// setKVs calls set for every key/value SetGGUF writes.
func (v *Vocab) setKVs(set func(key string, val any) error) error {
	if err := v.validate(); err != nil {
		return err
	}
	n := len(v.Tokens)
	scores := v.Scores
	if scores == nil {
		scores = make([]float32, n)
	}
	types := make([]int32, n)
	for i := range types {
		types[i] = int32(TypeNormal)
		if v.Types != nil {
			types[i] = int32(v.Types[i])
		}
	}
	kvs := []keyValue{{KeyModel, v.Model}, {KeyTokens, v.Tokens}, {KeyScores, scores}, {KeyTypes, types}}
	if v.Model == ModelBPE {
		kvs = append(kvs, keyValue{KeyMerges, v.Merges}, keyValue{KeyPre, v.preName()})
	}
	for _, s := range []struct {
		key string
		id  int32
	}{{KeyBOS, v.BOS}, {KeyEOS, v.EOS}, {KeyUNK, v.UNK}, {KeySEP, v.SEP}, {KeyPAD, v.PAD},
		{KeyEOT, v.EOT}, {KeyEOM, v.EOM}, {KeyCLS, v.CLS}, {KeyMASK, v.MASK},
		{KeyFIMPre, v.FIMPre}, {KeyFIMSuf, v.FIMSuf}, {KeyFIMMid, v.FIMMid},
		{KeyFIMPad, v.FIMPad}, {KeyFIMRep, v.FIMRep}, {KeyFIMSep, v.FIMSep}} {
		if s.id < 0 && s.key != KeyBOS && s.key != KeyEOS && s.key != KeyUNK && s.key != KeySEP && s.key != KeyPAD {
			continue // the newer keys are written only when set
		}
		id := uint32(idNoneInFile)
		if s.id >= 0 {
			id = uint32(s.id)
		}
		kvs = append(kvs, keyValue{s.key, id})
	}
	kvs = append(kvs, keyValue{KeyAddBOS, v.AddBOS}, keyValue{KeyAddEOS, v.AddEOS})
	if v.Model == ModelSPM {
		kvs = append(kvs, keyValue{KeyAddPrefix, v.AddSpacePrefix})
	}
	for _, s := range kvs {
		if err := set(s.key, s.val); err != nil {
			return fmt.Errorf("tokenizer: writing %s: %w", s.key, err)
		}
	}
	return nil
}

// keyValue is one metadata entry to write.
type keyValue struct {
	key string
	val any
}
