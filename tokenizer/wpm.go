package tokenizer

// wpm appends the WordPiece tokens of raw text to out, as llama.cpp's WPM tokenizer: the
// text is normalized (each code point replaced by the first code point of its canonical
// decomposition, then lower-cased; control characters, NUL and U+FFFD dropped) and cut into
// words at whitespace, and every punctuation character, ASCII symbol and CJK ideograph is a
// word of its own. Each word, with "▁" in front, is matched greedily from the left against
// the longest token at each position; a word that cannot be covered becomes the unknown
// token.
func (t *Tokenizer) wpm(text string, out []int32, st *state) []int32 {
	word := append(st.buf[:0], spmSpace...)
	flush := func() {
		if len(word) > len(spmSpace) {
			out = t.wpmWord(string(word), out)
		}
		word = append(word[:0], spmSpace...)
	}
	for i := 0; i < len(text); {
		c, w, _ := decodeCpt(text, i)
		i += w
		c = nfdBase(c)
		f := cptFlags(c)
		if f&flagWhitespace != 0 {
			flush()
			continue
		}
		if c == 0 || c == replacementChar || f&flagControl != 0 {
			continue
		}
		lower := lowerCpt(c)
		if f&flagPunctuation != 0 || c < 0x7F && f&flagSymbol != 0 || isChineseChar(c) {
			flush()
			word = appendCpt(word, lower)
			flush()
			continue
		}
		word = appendCpt(word, lower)
	}
	flush()
	st.buf = word[:0]
	return out
}

// wpmWord appends the tokens of one word ("▁" + text): at each byte position the longest
// token that starts there, or the unknown token for the whole word if some position has
// none.
func (t *Tokenizer) wpmWord(word string, out []int32) []int32 {
	start := len(out)
	for i := 0; i < len(word); {
		j := min(len(word), i+t.maxLen)
		for ; j > i; j-- {
			if id, ok := t.ids[word[i:j]]; ok {
				out = append(out, id)
				break
			}
		}
		if j == i {
			out = out[:start]
			break
		}
		i = j
	}
	if len(out) == start && t.vocab.UNK >= 0 {
		out = append(out, t.vocab.UNK)
	}
	return out
}

// isChineseChar reports whether c is in one of the CJK blocks that BERT splits into single
// characters (the ranges of llama.cpp's WPM tokenizer, as in BERT's reference code).
func isChineseChar(c rune) bool {
	return c >= 0x4E00 && c <= 0x9FFF ||
		c >= 0x3400 && c <= 0x4DBF ||
		c >= 0x20000 && c <= 0x2A6DF ||
		c >= 0x2A700 && c <= 0x2B73F ||
		c >= 0x2B740 && c <= 0x2B81F ||
		c >= 0x2B920 && c <= 0x2CEAF ||
		c >= 0xF900 && c <= 0xFAFF ||
		c >= 0x2F800 && c <= 0x2FA1F
}
