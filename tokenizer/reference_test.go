package tokenizer

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReferenceStrings reproduces llama.cpp's tokenization of every string of
// public-tokenize.ref.json exactly, with and without BOS, and its pieces.
func TestReferenceStrings(t *testing.T) {
	tok := llamaVocab(t)
	data, err := os.ReadFile(filepath.Join(modelsDir, "public-tokenize.ref.json"))
	require.NoError(t, err)
	var ref struct {
		Format  string `json:"format"`
		Special bool   `json:"special"`
		Items   []struct {
			Text      string  `json:"text"`
			TextHex   string  `json:"text_hex"`
			IDsBOS    []int32 `json:"ids_bos"`
			IDsNoBOS  []int32 `json:"ids_nobos"`
			PiecesHex string  `json:"pieces_hex"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal(data, &ref))
	require.Equal(t, "llama-tok-v1", ref.Format)
	require.NotEmpty(t, ref.Items)
	for _, it := range ref.Items {
		text, err := hex.DecodeString(it.TextHex)
		require.NoError(t, err)
		assert.Equal(t, it.IDsBOS, tok.Tokenize(string(text), true, ref.Special), "with BOS: %q", text)
		assert.Equal(t, it.IDsNoBOS, tok.Tokenize(string(text), false, ref.Special), "without BOS: %q", text)
		assert.Equal(t, it.PiecesHex, hex.EncodeToString(tok.Detokenize(it.IDsNoBOS)), "pieces of %q", text)
		assert.Equal(t, string(text), string(tok.Decode(it.IDsBOS)), "decode of %q", text)
	}
}

// TestReferencePrompts reproduces the prompt tokens of every public-*.ref.*.json run.
func TestReferencePrompts(t *testing.T) {
	tok := llamaVocab(t)
	files, err := filepath.Glob(filepath.Join(modelsDir, "public-*.ref.*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		var ref struct {
			PromptHex    string  `json:"prompt_hex"`
			AddBOS       bool    `json:"add_bos"`
			Special      bool    `json:"special"`
			Tokens       []int32 `json:"tokens"`
			Generated    []int32 `json:"generated"`
			GeneratedHex string  `json:"generated_text_hex"`
		}
		require.NoError(t, json.Unmarshal(data, &ref), name)
		prompt, err := hex.DecodeString(ref.PromptHex)
		require.NoError(t, err)
		assert.Equal(t, ref.Tokens, tok.Tokenize(string(prompt), ref.AddBOS, ref.Special), name)
		assert.Equal(t, ref.GeneratedHex, hex.EncodeToString(tok.Detokenize(ref.Generated)), name)
	}
}

func TestLLaMAVocabFacts(t *testing.T) {
	tok := llamaVocab(t)
	assert.Equal(t, 32000, tok.NumTokens())
	assert.Equal(t, "llama", tok.Model())
	assert.Equal(t, int32(1), tok.BOS())
	assert.Equal(t, int32(2), tok.EOS())
	assert.Equal(t, int32(0), tok.UNK())
	assert.True(t, tok.AddBOSDefault())
	assert.Len(t, tok.special, 3, "special tokens: <unk> <s> </s>")
	for _, st := range tok.special {
		assert.NotEqual(t, TypeNormal, tok.Type(st.id), st.text)
	}
	id, ok := tok.ID("<0x0A>")
	require.True(t, ok)
	assert.Equal(t, []byte("\n"), tok.Piece(id))
	assert.Equal(t, []byte("<s>"), tok.Piece(1), "control token: its text")
	assert.Empty(t, tok.AppendText(nil, 1), "control token as text: nothing")
	assert.Equal(t, []byte("<unk>"), tok.Piece(0), "unknown token")
	assert.Equal(t, []int32{15043, 3186}, tok.Tokenize("Hello world", false, false))
	assert.Equal(t, []int32{29871, 15043}, tok.Tokenize(" Hello", false, false))
	assert.Equal(t, []int32{259, 15043}, tok.Tokenize("  Hello", false, false))
	assert.Equal(t, []int32{29871, 13}, tok.Tokenize("\n", false, false))
	// Special tokens in the text: recognised only with special set, and no space is added
	// before text that starts with one.
	assert.Equal(t, []int32{1, 15043}, tok.Tokenize("<s>Hello", false, true))
	assert.NotContains(t, tok.Tokenize("<s>Hello", false, false), int32(1))
	assert.Equal(t, []int32{15043, 2}, tok.Tokenize("Hello</s>", false, true))
}

func TestNewlineAndLimits(t *testing.T) {
	tok := llamaVocab(t)
	assert.Equal(t, int32(13), tok.Newline())
	bpe, _ := bpeTokenizer(t)
	assert.Equal(t, "Ċ", bpe.Token(bpe.Newline()))
	assert.Equal(t, []int32{tok.BOS()}, tok.Tokenize("", true, true))
	assert.Equal(t, []int32{}, tok.Tokenize("", false, true))
	// Special tokens in the middle: the text after one gets a space in front again.
	world, ok := tok.ID("▁world")
	require.True(t, ok)
	assert.Equal(t, append(tok.Tokenize("Hello", false, false), 1, world), tok.Tokenize("Hello<s>world", false, true))
	assert.Contains(t, (&TextLengthError{Len: MaxTextLen + 1}).Error(), "tokenize it in parts")
}

func TestSpecialByteTokensAndConcurrency(t *testing.T) {
	tok := llamaVocab(t)
	// Byte tokens written literally are text (llama.cpp 2025), not the byte.
	assert.NotContains(t, tok.Tokenize("a<0x0A>b", false, true), int32(13))
	// A Tokenizer is safe for concurrent use (run with -race).
	texts := []string{"Hello world", "  leading spaces and\nnewlines\tand tabs", "日本語 🦙", "<s>x</s>"}
	want := make([][]int32, len(texts))
	for i, s := range texts {
		want[i] = tok.Tokenize(s, true, true)
	}
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			ok := true
			for k := 0; k < 50; k++ {
				i := (g + k) % len(texts)
				ok = ok && assert.ObjectsAreEqual(want[i], tok.Tokenize(texts[i], true, true))
			}
			done <- ok
		}()
	}
	for g := 0; g < 4; g++ {
		assert.True(t, <-done)
	}
}
