package tokenizer

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewSPMVocab(t *testing.T) {
	// Pieces as BPE training would emit them: characters first, then merges in order.
	v, err := NewSPMVocab([]string{"▁", "t", "h", "e", "th", "▁th", "▁the", "r", "er", "e▁"})
	require.NoError(t, err)
	tok, err := New(v)
	require.NoError(t, err)
	assert.Equal(t, 259+10, tok.NumTokens())
	assert.Equal(t, TypeByte, tok.Type(3+'A'))
	assert.Equal(t, "<0x41>", tok.Token(3+'A'))
	the, _ := tok.ID("▁the")
	r, _ := tok.ID("r")
	// "▁the" (score −6) beats "er" (−8) for the second "e".
	assert.Equal(t, []int32{1, the, the, r}, tok.Tokenize("the ther", true, false))
	assert.Equal(t, []int32{the, 3 + 'X'}, tok.Tokenize("theX", false, false), "byte fallback")
	for _, s := range []string{"the there", "other", "ÄÖ x"} {
		assert.Equal(t, s, string(tok.Decode(tok.Tokenize(s, true, false))))
	}
	_, err = NewSPMVocab([]string{"a", "a"})
	assert.ErrorContains(t, err, "already")
	_, err = NewSPMVocab([]string{"<s>"})
	assert.ErrorContains(t, err, "already")
	_, err = NewSPMVocab([]string{""})
	assert.ErrorContains(t, err, "empty")
}
