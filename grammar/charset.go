package grammar

import (
	"fmt"
	"strings"
)

// charSet is a set of code points: sorted, merged inclusive ranges, possibly negated, with a
// bitmap for the first 256 code points so that ASCII and Latin-1 tests are one load.
type charSet struct {
	ranges  []rune // pairs lo, hi (inclusive), sorted and merged
	negated bool
	low     [4]uint64 // membership of code points 0..255 (negation applied)
}

func newCharSet(ranges []rune, negated bool) charSet {
	n := len(ranges) / 2
	pairs := make([][2]rune, 0, n)
	for i := 0; i < n; i++ {
		lo, hi := ranges[2*i], ranges[2*i+1]
		if lo > hi {
			lo, hi = hi, lo
		}
		pairs = append(pairs, [2]rune{lo, hi})
	}
	// insertion sort: classes are short
	for i := 1; i < len(pairs); i++ {
		for j := i; j > 0 && pairs[j][0] < pairs[j-1][0]; j-- {
			pairs[j], pairs[j-1] = pairs[j-1], pairs[j]
		}
	}
	var merged []rune
	for _, p := range pairs {
		if k := len(merged); k > 0 && p[0] <= merged[k-1]+1 {
			merged[k-1] = max(merged[k-1], p[1])
			continue
		}
		merged = append(merged, p[0], p[1])
	}
	c := charSet{ranges: merged, negated: negated}
	for cp := rune(0); cp < 256; cp++ {
		if c.slowHas(cp) {
			c.low[cp>>6] |= 1 << (cp & 63)
		}
	}
	return c
}

func (c *charSet) slowHas(cp rune) bool {
	in := false
	for i := 0; i < len(c.ranges); i += 2 {
		if cp < c.ranges[i] {
			break
		}
		if cp <= c.ranges[i+1] {
			in = true
			break
		}
	}
	return in != c.negated
}

// has reports whether cp is in the set.
func (c *charSet) has(cp rune) bool {
	if cp < 256 {
		return c.low[cp>>6]&(1<<(cp&63)) != 0
	}
	return c.slowHas(cp)
}

// mayHave reports whether some code point in [lo, hi] may be in the set (exact for plain
// sets; for negated ones it is false only when one range covers [lo, hi]).
func (c *charSet) mayHave(lo, hi rune) bool {
	for i := 0; i < len(c.ranges); i += 2 {
		a, b := c.ranges[i], c.ranges[i+1]
		if c.negated {
			if a <= lo && hi <= b {
				return false
			}
			continue
		}
		if a <= hi && lo <= b {
			return true
		}
	}
	return c.negated
}

func (c *charSet) key() string {
	var sb strings.Builder
	if c.negated {
		sb.WriteByte('^')
	}
	for _, r := range c.ranges {
		fmt.Fprintf(&sb, "%x,", r)
	}
	return sb.String()
}

// single reports whether the set is exactly one code point, and which.
func (c *charSet) single() (rune, bool) {
	if !c.negated && len(c.ranges) == 2 && c.ranges[0] == c.ranges[1] {
		return c.ranges[0], true
	}
	return 0, false
}

// String writes the set in GBNF: a class like [a-z], or [^...]; "." for any character.
func (c *charSet) String() string {
	if c.negated && len(c.ranges) == 0 {
		return "."
	}
	var sb strings.Builder
	sb.WriteByte('[')
	if c.negated {
		sb.WriteByte('^')
	}
	for i := 0; i < len(c.ranges); i += 2 {
		sb.WriteString(escapeRune(c.ranges[i], true))
		if c.ranges[i+1] != c.ranges[i] {
			sb.WriteByte('-')
			sb.WriteString(escapeRune(c.ranges[i+1], true))
		}
	}
	sb.WriteByte(']')
	return sb.String()
}

// escapeRune writes r as it may appear in a GBNF literal (inClass false) or class.
func escapeRune(r rune, inClass bool) string {
	switch r {
	case '\n':
		return `\n`
	case '\r':
		return `\r`
	case '\t':
		return `\t`
	case '\\':
		return `\\`
	case '"':
		if !inClass {
			return `\"`
		}
	case ']', '[', '-', '^':
		if inClass {
			return `\` + string(r)
		}
	}
	switch {
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02X`, r)
	case r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF):
		return fmt.Sprintf(`\U%08X`, r)
	}
	return string(r)
}
