package tokenizer

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// TestRoundTripEveryToken checks, as llama.cpp's test-tokenizer-1-llama does, that the text
// of every token tokenizes back to tokens with the same text.
func TestRoundTripEveryToken(t *testing.T) {
	tok := llamaVocab(t)
	for id := int32(0); id < int32(tok.NumTokens()); id++ {
		s := tok.Decode([]int32{id})
		ids := tok.Tokenize(string(s), false, false)
		require.Equal(t, string(s), string(tok.Decode(ids)), "token %d %q", id, tok.Token(id))
	}
}

// TestRoundTripEveryCodePoint checks that every Unicode scalar value survives tokenize →
// decode (except "▁" itself, which SPM reads as a space). In -short mode and under the race
// detector every 13th.
func TestRoundTripEveryCodePoint(t *testing.T) {
	tok := llamaVocab(t)
	step := rune(1)
	if testing.Short() || raceEnabled {
		step = 13
	}
	var buf [4]byte
	for r := rune(0); r <= utf8.MaxRune; r += step {
		if r >= 0xD800 && r <= 0xDFFF || r == 0x2581 {
			continue
		}
		s := string(buf[:utf8.EncodeRune(buf[:], r)])
		got := tok.Decode(tok.Tokenize(s, false, false))
		if string(got) != s {
			t.Fatalf("U+%04X: %q decodes as %q", r, s, got)
		}
	}
}
