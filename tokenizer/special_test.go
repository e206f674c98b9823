package tokenizer

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPhi3StripsAfterSpecialTokens: models named like Phi-3 drop the whitespace after their
// special tokens (but not after <s>, <unk> and <|endoftext|>), and SPM puts a space in front
// of the text after each special token. llama.cpp c392e5094 gives these ids for this chat
// turn with ggml-vocab-phi-3.gguf.
func TestPhi3StripsAfterSpecialTokens(t *testing.T) {
	tok := fileTokenizer(t, filepath.Join(archDir, "vocab", "ggml-vocab-phi-3.gguf"))
	assert.Equal(t, []int32{1, 32010, 317, 21554, 13, 17628, 32007, 32001},
		tok.Tokenize("<|user|>\nSYS\nHI<|end|>\n<|assistant|>\n", true, true))
	// </s> is user-defined: matched even without special, and it strips too.
	s, ok := tok.ID("</s>")
	require.True(t, ok)
	assert.Equal(t, TypeUserDefined, tok.Type(s))
	ids := tok.Tokenize("a</s>  b", false, false)
	assert.Contains(t, ids, s)
	assert.Equal(t, append(tok.Tokenize("a", false, false), append([]int32{s}, tok.Tokenize("b", false, false)...)...), ids)
	// Without special, control tokens are text.
	assert.NotContains(t, tok.Tokenize("<|end|>", false, false), int32(32007))
	// End of generation: eos <|endoftext|> and <|end|>.
	assert.True(t, tok.IsEOG(32000))
	assert.True(t, tok.IsEOG(32007))
	assert.False(t, tok.IsEOG(32001))
	assert.Equal(t, []int32{32000, 32007}, tok.EOGTokens())
	assert.Equal(t, []byte("<|end|>"), tok.Piece(32007))
	assert.Empty(t, tok.AppendText(nil, 32007))
}

// TestOtherModelsKeepSpaces: the same vocabulary under another name keeps the whitespace.
func TestOtherModelsKeepSpaces(t *testing.T) {
	tok := fileTokenizer(t, filepath.Join(archDir, "vocab", "ggml-vocab-phi-3.gguf"))
	v := tok.Vocab()
	v.Name = "my-model"
	other, err := New(v)
	require.NoError(t, err)
	withStrip := tok.Tokenize("<|user|>\nHI", false, true)
	without := other.Tokenize("<|user|>\nHI", false, true)
	assert.NotEqual(t, withStrip, without)
	assert.Equal(t, []int32{32010, 29871, 13}, without[:3], "<|user|> ▁ \\n ...")
}

func TestSpecialIDsAndFlags(t *testing.T) {
	llama3 := fileTokenizer(t, filepath.Join(archDir, "llama3-f16.gguf"))
	assert.Equal(t, "llama-bpe", llama3.Pre())
	assert.True(t, llama3.AddBOSDefault(), "llama-bpe sets add_bos")
	assert.Equal(t, []int32{1024}, llama3.EOGTokens())
	assert.Equal(t, int32(1024), llama3.EOT(), "<|endoftext|> found by its text")
	qwen := fileTokenizer(t, filepath.Join(archDir, "qwen2-f16.gguf"))
	assert.False(t, qwen.AddBOSDefault())
	assert.Equal(t, []int32{39, 695, 78, 995}, qwen.Tokenize("Hello world", true, true), "no BOS")
	bert := fileTokenizer(t, filepath.Join(archDir, "vocab", "ggml-vocab-bert-bge.gguf"))
	assert.Equal(t, "bert", bert.Model())
	assert.Equal(t, "", bert.Pre())
	assert.Equal(t, int32(101), bert.CLS())
	assert.Equal(t, int32(102), bert.SEP())
	assert.Equal(t, int32(103), bert.MASK())
	assert.Equal(t, int32(0), bert.PAD())
	assert.Equal(t, int32(100), bert.UNK())
	assert.Equal(t, []int32{101, 7592, 2088, 102}, bert.Tokenize("Hello world", true, false))
	assert.Equal(t, []int32{101, 103, 102}, bert.Tokenize("[MASK]", true, true), "control tokens with special")
	assert.Equal(t, "hello world", string(bert.Decode(bert.Tokenize("Hello world", true, false))))
	assert.Equal(t, " hello", string(bert.Piece(7592)), "a word-initial piece starts with a space")
	// Normalization: accents dropped, lower case, punctuation and CJK split, controls dropped.
	assert.Equal(t, bert.Tokenize("cafe naive", false, false), bert.Tokenize("CAFÉ\u0000 NAÏVE\u200b", false, false))
	assert.Equal(t, bert.Tokenize("a , b", false, false), bert.Tokenize("a,b", false, false))
	assert.Equal(t, bert.Tokenize("日 本", false, false), bert.Tokenize("日本", false, false))
}
