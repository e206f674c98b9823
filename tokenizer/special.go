package tokenizer

import (
	"cmp"
	"slices"
	"strings"
)

// specialToken is a token that Tokenize matches literally in the text when its special flag
// is set.
type specialToken struct {
	text string
	id   int32
}

// utf8Len is the length of the UTF-8 sequence that starts with byte b, judged by its high
// four bits alone (a stray continuation byte counts as one character), as llama.cpp does.
func utf8Len(b byte) int {
	switch b >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// findSpecialTokens picks the tokens that special tokenization matches in raw text, by the
// rule of llama.cpp b1882: a token is special if its text has more than one character and
// cannot be cut at a character boundary into two texts that are both tokens. For the LLaMA
// vocabulary these are exactly its 259 non-normal tokens (<unk>, <s>, </s> and the byte
// tokens). They are tried longest first (then by id), so a special token that contains
// another wins over it.
func findSpecialTokens(tokens []string, ids map[string]int32) []specialToken {
	var out []specialToken
	for _, s := range tokens {
		if len(s) <= 1 || splittable(s, ids) {
			continue
		}
		chars := 0
		for i := 0; i < len(s); i += utf8Len(s[i]) {
			chars++
		}
		if chars > 1 {
			out = append(out, specialToken{text: s, id: ids[s]})
		}
	}
	slices.SortFunc(out, func(a, b specialToken) int {
		if c := cmp.Compare(len(b.text), len(a.text)); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	return slices.CompactFunc(out, func(a, b specialToken) bool { return a.text == b.text })
}

// splittable reports whether s can be cut after some character into two token texts.
func splittable(s string, ids map[string]int32) bool {
	for i := 1; i < len(s); {
		if n := utf8Len(s[i-1]); n > 1 {
			i += n - 1 // the cut would fall inside a multi-byte character
			continue
		}
		if _, ok := ids[s[:i]]; ok {
			if _, ok := ids[s[i:]]; ok {
				return true
			}
		}
		i++
	}
	return false
}

// fragment is a piece of the text to tokenize: raw text [start, end) when id < 0, else a
// special token already recognised.
type fragment struct {
	start, end int
	id         int32
}

// partition splits text into raw fragments and special tokens. Without special tokens (or
// with special off) the result is one raw fragment. Empty raw fragments are never produced.
func (t *Tokenizer) partition(text string, special bool, frags []fragment) []fragment {
	frags = append(frags[:0], fragment{0, len(text), -1})
	if !special {
		return frags
	}
	var next []fragment
	for _, st := range t.special {
		if !strings.Contains(text, st.text) {
			continue
		}
		next = next[:0]
		for _, f := range frags {
			if f.id >= 0 {
				next = append(next, f)
				continue
			}
			pos := f.start
			for pos < f.end {
				i := strings.Index(text[pos:f.end], st.text)
				if i < 0 {
					break
				}
				if i > 0 {
					next = append(next, fragment{pos, pos + i, -1})
				}
				next = append(next, fragment{id: st.id})
				pos += i + len(st.text)
			}
			if pos < f.end {
				next = append(next, fragment{pos, f.end, -1})
			}
		}
		frags, next = next, frags
	}
	return frags
}
