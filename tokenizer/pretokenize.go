package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// charClass is the category of one character for the GPT-2 pre-tokenizer.
type charClass uint8

const (
	classOther  charClass = iota // neither letter, number nor space (invalid UTF-8 too)
	classLetter                  // \p{L}
	classNumber                  // \p{N}
	classSpace                   // \s (unicode.IsSpace)
)

func classify(r rune) charClass {
	switch {
	case r < 0x80:
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
			return classLetter
		case r >= '0' && r <= '9':
			return classNumber
		case r == ' ', r >= '\t' && r <= '\r':
			return classSpace
		}
		return classOther
	case unicode.IsLetter(r):
		return classLetter
	case unicode.IsNumber(r):
		return classNumber
	case unicode.IsSpace(r):
		return classSpace
	}
	return classOther
}

// charAt decodes the character at byte offset i: its class and width (invalid UTF-8 is one
// byte of classOther).
func charAt(s string, i int) (charClass, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return classify(rune(c)), 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && w == 1 {
		return classOther, 1
	}
	return classify(r), w
}

// preTokenize cuts text into the words of the GPT-2 pattern
//
//	's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//
// (alternatives tried in order at each position, as a backtracking regex engine does) and
// calls word with the byte range of each. It runs in linear time.
func preTokenize(text string, word func(start, end int)) {
	n := len(text)
	for i := 0; i < n; {
		if end := contraction(text, i); end > 0 {
			word(i, end)
			i = end
			continue
		}
		j := i
		if text[j] == ' ' && j+1 < n {
			j++
		}
		cls, w := charAt(text, j)
		if cls != classSpace {
			// " ?" + a run of letters, numbers or other symbols.
			k := j + w
			for k < n {
				c, w := charAt(text, k)
				if c != cls {
					break
				}
				k += w
			}
			word(i, k)
			i = k
			continue
		}
		// A run of whitespace. Followed by a non-space, it leaves its last character to
		// start the next word (\s+(?!\S)); a single character is a word of its own (\s+).
		k, last := i, i
		for k < n {
			c, w := charAt(text, k)
			if c != classSpace {
				break
			}
			last = k
			k += w
		}
		if k < n && last > i {
			k = last
		}
		word(i, k)
		i = k
	}
}

// contraction returns the end of the English contraction ('s 't 're 've 'm 'll 'd) that
// starts at i, or 0.
func contraction(s string, i int) int {
	if s[i] != '\'' || i+1 >= len(s) {
		return 0
	}
	switch s[i+1] {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2] == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2] == 'l' {
			return i + 3
		}
	}
	return 0
}
