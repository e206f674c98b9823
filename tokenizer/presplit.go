package tokenizer

import (
	"cmp"
	"slices"
)

// preText is a text decoded into code points for the BPE pre-tokenizers, with the pieces
// cut so far. Positions are code point indices; piece k ends at ends[k].
type preText struct {
	text  string
	cpts  []rune
	flags []uint16
	offs  []int32 // byte offset of code point i; offs[len(cpts)] = len(text)
	ends  []int32
	tmp   []int32
}

// load decodes text (already in canonical UTF-8) and makes it one piece.
func (p *preText) load(text string) {
	p.text = text
	p.cpts, p.flags, p.offs = p.cpts[:0], p.flags[:0], p.offs[:0]
	for i := 0; i < len(text); {
		c, w, _ := decodeCpt(text, i)
		p.cpts = append(p.cpts, c)
		p.flags = append(p.flags, cptFlags(c))
		p.offs = append(p.offs, int32(i))
		i += w
	}
	p.offs = append(p.offs, int32(len(text)))
	p.ends = append(p.ends[:0], int32(len(p.cpts)))
}

// splitter cuts the piece [lo, hi) of p into consecutive pieces, appending their ends
// (the last is hi) to out.
type splitter func(p *preText, lo, hi int, out []int32) []int32

// split applies s to every current piece.
func (p *preText) split(s splitter) {
	out := p.tmp[:0]
	lo := 0
	for _, e := range p.ends {
		out = s(p, lo, int(e), out)
		lo = int(e)
	}
	p.tmp, p.ends = p.ends, out
}

// matcher is one regular expression searched the way std::regex_iterator does: match
// reports the end of the match that starts at pos (end > pos), or ok false and the next
// position worth trying.
type matcher func(p *preText, pos, hi int) (end int, ok bool, next int)

// searchSplitter turns a matcher into a splitter: every match is a piece, and so is the
// text between two matches.
func searchSplitter(m matcher) splitter {
	return func(p *preText, lo, hi int, out []int32) []int32 {
		last := lo
		for pos := lo; pos < hi; {
			end, ok, next := m(p, pos, hi)
			if !ok {
				pos = max(next, pos+1)
				continue
			}
			if pos > last {
				out = append(out, int32(pos))
			}
			out = append(out, int32(end))
			last, pos = end, end
		}
		if last < hi {
			out = append(out, int32(hi))
		}
		return out
	}
}

// class tests one code point (with its flags) for membership in a character class.
type class func(c rune, f uint16) bool

// wide returns c as std::wregex sees it in llama.cpp: non-ASCII whitespace becomes \v.
func wide(c rune, f uint16) rune {
	if c > 0x7F && f&flagWhitespace != 0 {
		return '\v'
	}
	return c
}

func isSpaceClass(_ rune, f uint16) bool { return f&flagWhitespace != 0 }

// runOf matches C+.
func runOf(c class) matcher {
	return func(p *preText, pos, hi int) (int, bool, int) {
		i := pos
		for i < hi && c(p.cpts[i], p.flags[i]) {
			i++
		}
		if i == pos {
			return 0, false, pos + 1
		}
		return i, true, 0
	}
}

// runOfAtMost matches C{1,n}.
func runOfAtMost(c class, n int) matcher {
	return func(p *preText, pos, hi int) (int, bool, int) {
		i := pos
		for i < hi && i-pos < n && c(p.cpts[i], p.flags[i]) {
			i++
		}
		if i == pos {
			return 0, false, pos + 1
		}
		return i, true, 0
	}
}

// oneOf matches C.
func oneOf(c class) matcher {
	return func(p *preText, pos, hi int) (int, bool, int) {
		if c(p.cpts[pos], p.flags[pos]) {
			return pos + 1, true, 0
		}
		return 0, false, pos + 1
	}
}

// spaceThenRun matches \s?C+ (the optional space taken when C+ follows it).
func spaceThenRun(c class) matcher {
	run := runOf(c)
	return func(p *preText, pos, hi int) (int, bool, int) {
		if p.flags[pos]&flagWhitespace != 0 && pos+1 < hi {
			if end, ok, _ := run(p, pos+1, hi); ok {
				return end, true, 0
			}
		}
		return run(p, pos, hi)
	}
}

// spaceCharThenRun matches " ?C+" (a literal space, taken when C+ follows it).
func spaceCharThenRun(c class) matcher {
	run := runOf(c)
	return func(p *preText, pos, hi int) (int, bool, int) {
		if p.cpts[pos] == ' ' && pos+1 < hi {
			if end, ok, _ := run(p, pos+1, hi); ok {
				return end, true, 0
			}
		}
		return run(p, pos, hi)
	}
}

// notClass returns the class of code points that are neither whitespace nor one of chars
// ([^(\s|...)] as std::wregex reads it).
func notClass(chars string) class {
	set := map[rune]bool{}
	for _, c := range chars {
		set[c] = true
	}
	return func(c rune, f uint16) bool { return f&flagWhitespace == 0 && !set[c] }
}

// trailingSpace matches \s+$ (whitespace up to the end of the piece).
func trailingSpace(p *preText, pos, hi int) (int, bool, int) {
	i := pos
	for i < hi && p.flags[i]&flagWhitespace != 0 {
		i++
	}
	if i == hi && i > pos {
		return hi, true, 0
	}
	return 0, false, i + 1
}

// threeDigits matches [0-9][0-9][0-9].
func threeDigits(p *preText, pos, hi int) (int, bool, int) {
	for k := 0; k < 3; k++ {
		if pos+k >= hi || p.cpts[pos+k] < '0' || p.cpts[pos+k] > '9' {
			return 0, false, pos + k + 1
		}
	}
	return pos + 3, true, 0
}

// Character classes of the patterns. \p{L}, \p{N} and \p{P} follow the code point flags
// (llama.cpp collapses every non-ASCII code point to its category for std::regex); classes
// written with explicit non-ASCII ranges see non-ASCII whitespace as \v, as std::wregex does.
var (
	classLetterP = func(_ rune, f uint16) bool { return f&flagLetter != 0 }
	classNumberP = func(_ rune, f uint16) bool { return f&flagNumber != 0 }
	classPunctP  = func(_ rune, f uint16) bool { return f&flagPunctuation != 0 }
	classCRLF    = func(c rune, _ uint16) bool { return c == '\r' || c == '\n' }
)

// punctOr returns \p{P} or one of the ASCII characters extra: [\p{P}\$\+...]
func punctOr(extra string) class {
	var set [128]bool
	for _, c := range extra {
		set[c] = true
	}
	return func(c rune, f uint16) bool {
		return f&flagPunctuation != 0 || c < 128 && c >= 0 && set[c]
	}
}

// rangesClass parses a character class body of single characters and ranges "a-z" (no
// escapes) into a class over wregex code points.
func rangesClass(body string) class {
	rs := []rune(body)
	var ranges [][2]rune
	for i := 0; i < len(rs); i++ {
		a, b := rs[i], rs[i]
		if i+2 < len(rs) && rs[i+1] == '-' {
			b = rs[i+2]
			i += 2
		}
		ranges = append(ranges, [2]rune{a, b})
	}
	slices.SortFunc(ranges, func(x, y [2]rune) int { return cmp.Compare(x[0], y[0]) })
	merged := ranges[:0]
	for _, r := range ranges {
		if n := len(merged); n > 0 && r[0] <= merged[n-1][1]+1 {
			merged[n-1][1] = max(merged[n-1][1], r[1])
			continue
		}
		merged = append(merged, r)
	}
	return rangeTable(merged)
}

// rangeTable returns the class of the code points in ranges (sorted, disjoint, inclusive), over
// wregex code points.
func rangeTable(ranges [][2]rune) class {
	return func(c rune, f uint16) bool {
		c = wide(c, f)
		i, j := 0, len(ranges)
		for i < j {
			h := int(uint(i+j) >> 1)
			if ranges[h][1] < c {
				i = h + 1
			} else {
				j = h
			}
		}
		return i < len(ranges) && ranges[i][0] <= c
	}
}

// deepseek3Words matches the third pattern of deepseek-v3
//
//	[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// with the categories as llama.cpp collapses them: among ASCII characters \p{S} is only
// $+<=>^`| (not ~) and \p{M} has none.
func deepseek3Words(p *preText, pos, hi int) (int, bool, int) {
	cp, fl := p.cpts, p.flags
	in := func(i int, c class) bool { return i < hi && c(cp[i], fl[i]) }
	asciiLetter := func(c rune, _ uint16) bool { return c < 128 && (c|0x20) >= 'a' && (c|0x20) <= 'z' }
	letterOrMark := func(c rune, f uint16) bool { return f&flagLetter != 0 || c >= 128 && f&flagMark != 0 }
	punctOrSymbol := func(c rune, f uint16) bool { return collapsedPunct(c, f) || collapsedSymbol(c, f) }
	run := func(i int, c class) int {
		for in(i, c) {
			i++
		}
		return i
	}
	// [!-/:-@[-`{-~][A-Za-z]+
	if c := cp[pos]; c < 128 && c > ' ' && c != 0x7F && !asciiLetter(c, 0) && (c < '0' || c > '9') && in(pos+1, asciiLetter) {
		return run(pos+1, asciiLetter), true, 0
	}
	// [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
	if c, f := cp[pos], fl[pos]; c != '\r' && c != '\n' && f&flagLetter == 0 && !punctOrSymbol(c, f) && in(pos+1, letterOrMark) {
		return run(pos+1, letterOrMark), true, 0
	}
	if in(pos, letterOrMark) {
		return run(pos, letterOrMark), true, 0
	}
	// " ?[\p{P}\p{S}]+[\r\n]*"
	j := pos
	if cp[pos] == ' ' && in(pos+1, punctOrSymbol) {
		j++
	}
	if in(j, punctOrSymbol) {
		return run(run(j, punctOrSymbol), classCRLF), true, 0
	}
	// \s*[\r\n]+ | \s+(?!\S) | \s+
	k, lastCRLF := pos, -1
	for in(k, isSpaceClass) {
		if cp[k] == '\r' || cp[k] == '\n' {
			lastCRLF = k + 1
		}
		k++
	}
	switch {
	case lastCRLF > 0:
		return lastCRLF, true, 0
	case k == pos:
		return 0, false, pos + 1
	case k-pos > 1 && k < hi:
		return k - 1, true, 0
	}
	return k, true, 0
}

// collapsedPunct is \p{P} as llama.cpp collapses it (the ASCII punctuation, or the category).
func collapsedPunct(c rune, f uint16) bool {
	if c < 128 {
		return c >= '!' && c <= '#' || c >= '%' && c <= '*' || c >= ',' && c <= '/' || c == ':' || c == ';' ||
			c == '?' || c == '@' || c >= '[' && c <= ']' || c == '_' || c == '{' || c == '}'
	}
	return f&flagWhitespace == 0 && f&flagPunctuation != 0
}

// collapsedSymbol is \p{S} as llama.cpp collapses it: among ASCII characters only $+<=>^`|.
func collapsedSymbol(c rune, f uint16) bool {
	if c < 128 {
		return c == '$' || c == '+' || c >= '<' && c <= '>' || c == '^' || c == '`' || c == '|'
	}
	return f&flagWhitespace == 0 && f&flagSymbol != 0
}
