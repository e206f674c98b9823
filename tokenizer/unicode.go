package tokenizer

import (
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The pre-tokenizers and WPM work on code points decoded the way llama.cpp decodes them:
// a lead byte decides the length, the continuation bytes are checked but overlong forms and
// surrogates are accepted, and a byte that starts no valid sequence becomes U+FFFD.

// replacementChar is what an undecodable byte becomes.
const replacementChar = 0xFFFD

// decodeCpt decodes the code point at s[i:] by llama.cpp's rules; width is at least 1.
// ok is false when the byte at i started no valid sequence (cpt is then U+FFFD, width 1).
func decodeCpt(s string, i int) (cpt rune, width int, ok bool) {
	c := s[i]
	switch {
	case c < 0x80:
		return rune(c), 1, true
	case c < 0xC0:
		return replacementChar, 1, false
	case c < 0xE0:
		if i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
			return rune(c&0x1F)<<6 | rune(s[i+1]&0x3F), 2, true
		}
	case c < 0xF0:
		if i+2 < len(s) && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 {
			return rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3, true
		}
	case c < 0xF8:
		if i+3 < len(s) && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 && s[i+3]&0xC0 == 0x80 {
			return rune(c&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F), 4, true
		}
	}
	return replacementChar, 1, false
}

// appendCpt appends the UTF-8 form of cpt as llama.cpp writes it (surrogates and code
// points up to 0x1FFFFF included, with no check).
func appendCpt(dst []byte, cpt rune) []byte {
	switch {
	case cpt < 0x80:
		return append(dst, byte(cpt))
	case cpt < 0x800:
		return append(dst, 0xC0|byte(cpt>>6), 0x80|byte(cpt&0x3F))
	case cpt < 0x10000:
		return append(dst, 0xE0|byte(cpt>>12), 0x80|byte(cpt>>6&0x3F), 0x80|byte(cpt&0x3F))
	}
	return append(dst, 0xF0|byte(cpt>>18), 0x80|byte(cpt>>12&0x3F), 0x80|byte(cpt>>6&0x3F), 0x80|byte(cpt&0x3F))
}

// canonicalUTF8 returns text as llama.cpp sees it after decoding and re-encoding its code
// points: unchanged for valid UTF-8 (the common case, no copy), otherwise with every
// undecodable byte replaced by U+FFFD and overlong forms written shortest.
func canonicalUTF8(text string) string {
	if utf8.ValidString(text) {
		return text
	}
	buf := make([]byte, 0, len(text)+8)
	for i := 0; i < len(text); {
		cpt, w, _ := decodeCpt(text, i)
		buf = appendCpt(buf, cpt)
		i += w
	}
	return string(buf)
}

// Code point flags, the Unicode categories llama.cpp's tables give each code point.
const (
	flagLetter      uint16 = 1 << iota // \p{L}
	flagNumber                         // \p{N}
	flagPunctuation                    // \p{P}
	flagSymbol                         // \p{S}
	flagMark                           // \p{M}
	flagSeparator                      // \p{Z}
	flagControl                        // Cc, Cf, Co, Cs
	flagWhitespace                     // the White_Space property
)

// asciiFlags holds the flags of the code points below 0x80.
var asciiFlags [128]uint16

func init() {
	for r := rune(0); r < 128; r++ {
		asciiFlags[r] = computeFlags(r)
	}
}

// cptFlags returns the flags of cpt (0 for code points beyond Unicode: undefined).
func cptFlags(cpt rune) uint16 {
	if cpt < 0x80 && cpt >= 0 {
		return asciiFlags[cpt]
	}
	return computeFlags(cpt)
}

func computeFlags(r rune) uint16 {
	if r < 0 || r > unicode.MaxRune {
		return 0
	}
	var f uint16
	switch {
	case unicode.IsLetter(r):
		f = flagLetter
	case unicode.IsNumber(r):
		f = flagNumber
	case unicode.IsPunct(r):
		f = flagPunctuation
	case unicode.IsSymbol(r):
		f = flagSymbol
	case unicode.IsMark(r):
		f = flagMark
	case unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
		f = flagSeparator
	case r >= 0xD800 && r <= 0xDFFF, unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co):
		f = flagControl
	}
	if isWhitespace(r) {
		f |= flagWhitespace
	}
	return f
}

// isWhitespace reports the Unicode White_Space property (as llama.cpp's table has it).
func isWhitespace(r rune) bool {
	if r < 0x80 {
		return r == ' ' || r >= '\t' && r <= '\r'
	}
	return r >= 0 && r <= unicode.MaxRune && unicode.Is(unicode.White_Space, r)
}

// lowerCpt is llama.cpp's unicode_tolower: the simple lower-case mapping of UnicodeData.
func lowerCpt(r rune) rune {
	if r < 0x80 {
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	if r > unicode.MaxRune {
		return r
	}
	return unicode.ToLower(r)
}

var (
	nfdOnce  sync.Once
	nfdFirst map[rune]rune
)

// nfdBase is llama.cpp's unicode_cpts_normalize_nfd for one code point: the first code
// point of its canonical decomposition (so "é" becomes "e" and the accent is dropped), the
// code point itself when it has none.
func nfdBase(r rune) rune {
	if r < 0xC0 {
		return r
	}
	nfdOnce.Do(buildNFD)
	if b, ok := nfdFirst[r]; ok {
		return b
	}
	return r
}

// buildNFD tabulates nfdBase for every code point that decomposes.
func buildNFD() {
	nfdFirst = make(map[rune]rune, 2500+11172)
	var buf [4]byte
	for r := rune(0xC0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if r >= 0xAC00 && r <= 0xD7A3 { // Hangul syllables: the leading jamo
			nfdFirst[r] = 0x1100 + (r-0xAC00)/588
			continue
		}
		s := buf[:utf8.EncodeRune(buf[:], r)]
		if norm.NFD.Properties(s).Decomposition() == nil {
			continue
		}
		first, _ := utf8.DecodeRune(norm.NFD.Bytes(s))
		if first != r {
			nfdFirst[r] = first
		}
	}
}
