package tokenizer

import (
	"bytes"
	"testing"

	"github.com/ggml-go/ggml/gguf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// smallSPM is a valid SPM vocabulary: <unk> <s> </s>, the 256 byte tokens, and a few words.
func smallSPM() Vocab {
	v := NewVocab(ModelSPM)
	v.Tokens = []string{"<unk>", "<s>", "</s>"}
	v.Types = []TokenType{TypeUnknown, TypeControl, TypeControl}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, byteTokenText(byte(b)))
		v.Types = append(v.Types, TypeByte)
	}
	for _, w := range []string{"▁", "a", "b", "ab", "▁ab", "▁a"} {
		v.Tokens = append(v.Tokens, w)
		v.Types = append(v.Types, TypeNormal)
	}
	v.Scores = make([]float32, len(v.Tokens))
	for i := range v.Scores {
		v.Scores[i] = float32(-i)
	}
	return v
}

// readBack writes the key/values with a Builder and parses the file again.
func readBack(t *testing.T, kvs []keyValue) *gguf.File {
	t.Helper()
	var b gguf.Builder
	for _, kv := range kvs {
		require.NoError(t, b.Set(kv.key, kv.val))
	}
	var buf bytes.Buffer
	_, err := b.WriteTo(&buf)
	require.NoError(t, err)
	f, err := gguf.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	return f
}

func spmKVs(v Vocab) []keyValue {
	types := make([]int32, len(v.Types))
	for i, x := range v.Types {
		types[i] = int32(x)
	}
	return []keyValue{{KeyModel, v.Model}, {KeyTokens, v.Tokens}, {KeyScores, v.Scores}, {KeyTypes, types}}
}

func without(kvs []keyValue, key string) []keyValue {
	var out []keyValue
	for _, kv := range kvs {
		if kv.key != key {
			out = append(out, kv)
		}
	}
	return out
}

func replace(kvs []keyValue, key string, val any) []keyValue {
	return append(without(kvs, key), keyValue{key, val})
}

func TestFromGGUFDefaultsAndRoundTrip(t *testing.T) {
	v := smallSPM()
	tok, err := FromGGUF(readBack(t, spmKVs(v)))
	require.NoError(t, err)
	assert.Equal(t, v, tok.Vocab(), "SPM defaults: bos 1, eos 2, unk 0, add_bos true, no sep/pad")
	assert.Equal(t, []int32{1, 263}, tok.Tokenize("ab", true, false), "▁ab is one token")
	assert.Equal(t, "ab", string(tok.Decode(tok.Tokenize("ab", true, false))))

	// Every field written by SetGGUF comes back, including "none" ids.
	v.BOS, v.UNK, v.PAD, v.AddBOS = 2, NoToken, 0, false
	var b gguf.Builder
	require.NoError(t, v.SetGGUF(&b))
	var buf bytes.Buffer
	_, err = b.WriteTo(&buf)
	require.NoError(t, err)
	f, err := gguf.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	tok, err = FromGGUF(f)
	require.NoError(t, err)
	assert.Equal(t, v, tok.Vocab())

	// Scores and types are optional; an out-of-range id keeps the default.
	kvs := replace(without(without(spmKVs(smallSPM()), KeyScores), KeyTypes), KeyBOS, uint32(100000))
	tok, err = FromGGUF(readBack(t, kvs))
	require.NoError(t, err)
	assert.Equal(t, int32(1), tok.BOS())
	assert.Equal(t, TypeNormal, tok.Type(1))
	assert.Equal(t, float32(0), tok.Score(5))
}

func TestFromGGUFErrors(t *testing.T) {
	base := spmKVs(smallSPM())
	cases := []struct {
		name string
		kvs  []keyValue
		want string
	}{
		{"no model", without(base, KeyModel), KeyModel},
		{"model not a string", replace(base, KeyModel, uint32(1)), KeyModel},
		{"unknown model", replace(base, KeyModel, "t5"), `"t5"`},
		{"no tokens", without(base, KeyTokens), KeyTokens},
		{"tokens not strings", replace(base, KeyTokens, []int32{1, 2}), KeyTokens},
		{"empty tokens", replace(base, KeyTokens, []string{}), KeyTokens},
		{"scores of the wrong type", replace(base, KeyScores, []float64{1}), KeyScores},
		{"scores of the wrong length", replace(base, KeyScores, []float32{1}), KeyScores},
		{"types of the wrong type", replace(base, KeyTypes, []uint32{1}), KeyTypes},
		{"types of the wrong length", replace(base, KeyTypes, []int32{1}), KeyTypes},
		{"bad type value", replace(base, KeyTypes, make([]int32, len(smallSPM().Tokens))[:0]), KeyTypes},
		{"bos of the wrong type", replace(base, KeyBOS, int32(1)), KeyBOS},
		{"add_bos of the wrong type", replace(base, KeyAddBOS, uint8(1)), KeyAddBOS},
		{"no byte tokens", replace(without(without(base, KeyTypes), KeyScores), KeyTokens, []string{"<unk>", "a"}), "<0x00>"},
		{"gpt2 without merges", replace(base, KeyModel, "gpt2"), KeyMerges},
		{"bad merge", append(replace(base, KeyModel, "gpt2"), keyValue{KeyMerges, []string{"ab"}}), KeyMerges},
	}
	types := make([]int32, len(smallSPM().Tokens))
	types[3] = 9
	cases[10].kvs = replace(base, KeyTypes, types)
	for _, c := range cases {
		_, err := FromGGUF(readBack(t, c.kvs))
		if assert.Error(t, err, c.name) {
			assert.Contains(t, err.Error(), c.want, c.name)
		}
	}
}

func TestNewValidates(t *testing.T) {
	v := smallSPM()
	v.EOS = int32(len(v.Tokens))
	_, err := New(v)
	assert.ErrorContains(t, err, "eos token id")
	_, err = New(Vocab{Model: ModelSPM})
	assert.ErrorContains(t, err, "no tokens")
	tok, err := New(smallSPM())
	require.NoError(t, err)
	assert.PanicsWithError(t, (&TokenIDError{ID: -1, NumTokens: tok.NumTokens()}).Error(), func() { tok.Piece(-1) })
	assert.Panics(t, func() { tok.Detokenize([]int32{int32(tok.NumTokens())}) })
	assert.Equal(t, "byte", TypeByte.String())
}
