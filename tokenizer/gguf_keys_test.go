package tokenizer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallBPE is a valid BPE vocabulary: the 256 byte-level characters, "ab" and "<|eot_id|>".
func smallBPE() Vocab {
	v := NewVocab(ModelBPE)
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, string(byteToRune[b]))
	}
	v.Tokens = append(v.Tokens, "ab", "<|eot_id|>")
	v.Merges = []string{"a b"}
	v.BOS, v.EOS = 256, 256
	return v
}

func bpeKVs(v Vocab) []keyValue {
	return []keyValue{{KeyModel, v.Model}, {KeyTokens, v.Tokens}, {KeyMerges, v.Merges}}
}

func TestFromGGUFPreAndFlags(t *testing.T) {
	// No pre key, or an empty one: llama.cpp's "default".
	for _, kvs := range [][]keyValue{bpeKVs(smallBPE()), append(bpeKVs(smallBPE()), keyValue{KeyPre, ""})} {
		tok, err := FromGGUF(readBack(t, kvs))
		require.NoError(t, err)
		assert.Equal(t, "default", tok.Pre())
		assert.False(t, tok.AddBOSDefault())
	}
	// An unknown name is an error that names it.
	_, err := FromGGUF(readBack(t, append(bpeKVs(smallBPE()), keyValue{KeyPre, "my-own-pre"})))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"my-own-pre"`)
	assert.Contains(t, err.Error(), KeyPre)
	// llama-bpe sets add_bos; the file's add_bos_token wins.
	kvs := append(bpeKVs(smallBPE()), keyValue{KeyPre, "llama-bpe"}, keyValue{KeyBOS, uint32(257)})
	tok, err := FromGGUF(readBack(t, kvs))
	require.NoError(t, err)
	assert.True(t, tok.AddBOSDefault())
	assert.Equal(t, []int32{257, 256}, tok.Tokenize("ab", true, false))
	tok, err = FromGGUF(readBack(t, append(kvs, keyValue{KeyAddBOS, false}, keyValue{KeyAddEOS, true}, keyValue{KeyEOS, uint32(257)})))
	require.NoError(t, err)
	assert.False(t, tok.AddBOSDefault())
	assert.True(t, tok.AddEOSDefault())
	assert.Equal(t, []int32{256, 257}, tok.Tokenize("ab", true, false))
	// <|eot_id|> is found by its text: end of turn, end of generation, a control token.
	assert.Equal(t, int32(257), tok.EOT())
	assert.True(t, tok.IsEOG(257))
	assert.Equal(t, TypeControl, tok.Type(257))
	assert.Equal(t, []int32{'a', 257}, tok.Tokenize("a<|eot_id|>", false, true))
	// SPM: add_space_prefix false leaves the text as it is.
	spm := spmKVs(smallSPM())
	tok, err = FromGGUF(readBack(t, spm))
	require.NoError(t, err)
	assert.Equal(t, []int32{263}, tok.Tokenize("ab", false, false), "▁ab")
	tok, err = FromGGUF(readBack(t, append(spm, keyValue{KeyAddPrefix, false})))
	require.NoError(t, err)
	assert.Equal(t, []int32{262}, tok.Tokenize("ab", false, false), "ab")
}

func TestSetGGUFRoundTripBPEAndWPM(t *testing.T) {
	v := smallBPE()
	v.Pre, v.AddEOS, v.EOT = "qwen2", true, 257
	fillScoresTypes(&v) // SetGGUF always writes them
	tok, err := FromGGUF(readBack(t, vocabKVs(t, v)))
	require.NoError(t, err)
	assert.Equal(t, v, tok.Vocab())

	w := NewVocab(ModelWPM)
	for i := 0; i < 104; i++ {
		w.Tokens = append(w.Tokens, string(rune('a'+i%26))+string(rune('0'+i/26)))
	}
	w.Tokens = append(w.Tokens, "▁hi")
	fillScoresTypes(&w)
	tok, err = FromGGUF(readBack(t, vocabKVs(t, w)))
	require.NoError(t, err)
	assert.Equal(t, w, tok.Vocab())
	assert.Equal(t, []int32{101, 104, 102}, tok.Tokenize("HI", true, false))
}

// vocabKVs returns what SetGGUF writes for v.
func vocabKVs(t *testing.T, v Vocab) []keyValue {
	var got []keyValue
	require.NoError(t, v.setKVs(func(key string, val any) error {
		got = append(got, keyValue{key, val})
		return nil
	}))
	return got
}

func fillScoresTypes(v *Vocab) {
	v.Scores = make([]float32, len(v.Tokens))
	v.Types = make([]TokenType, len(v.Tokens))
	for i := range v.Types {
		v.Types[i] = TypeNormal
	}
}

func TestFIMTokensFoundByText(t *testing.T) {
	v := smallBPE()
	base := int32(len(v.Tokens))
	v.Tokens = append(v.Tokens, "<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>", "<|repo_name|>", "<|file_sep|>")
	tok, err := New(v)
	require.NoError(t, err)
	pre, suf, mid, pad, rep, sep := tok.FIM()
	assert.Equal(t, []int32{base, base + 1, base + 2, base + 3, base + 4, base + 5}, []int32{pre, suf, mid, pad, rep, sep})
	for id := base; id < base+6; id++ {
		assert.Equal(t, TypeControl, tok.Type(id), tok.Token(id))
		assert.Equal(t, id >= base+3, tok.IsEOG(id), "pad, repo and file separator end generation: %s", tok.Token(id))
	}
	// A file's key wins over the text.
	kvs := append(bpeKVs(v), keyValue{KeyFIMPad, uint32(base + 5)})
	tok, err = FromGGUF(readBack(t, kvs))
	require.NoError(t, err)
	_, _, _, pad, _, _ = tok.FIM()
	assert.Equal(t, base+5, pad)
	assert.False(t, tok.IsEOG(base+3), "<|fim_pad|> is no longer the pad token")
}
