package grammar

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits on what Parse accepts, so that a hostile grammar text cannot exhaust memory.
const (
	maxGrammarBytes = 1 << 20 // source text
	maxElements     = 1 << 20 // compiled elements, after repetitions are expanded
	maxRepeat       = 1 << 12 // largest m or n in x{m,n}
	maxNesting      = 256     // parentheses
)

// ParseError is a syntax or semantic error in a grammar text, with its 1-based line and
// column (in characters).
type ParseError struct {
	Line, Col int
	Msg       string // what is wrong and what to do
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("grammar: line %d, column %d: %s", e.Line, e.Col, e.Msg)
}

// symbol kinds of the parser's rules
const (
	symChar = iota // match one code point of a set
	symRef         // match a rule
)

type sym struct {
	kind uint8
	arg  int32 // set index or rule index
}

type ruleDef struct {
	name      string
	alts      [][]sym
	defined   bool
	generated bool
	usedAt    int // byte offset of the first reference, for "undefined rule" errors
	defAt     int
}

type parser struct {
	src    string
	pos    int
	rules  []ruleDef
	byName map[string]int32
	sets   []charSet
	setIdx map[string]int32
	nelems int
	depth  int
}

type parseFailure struct{ err *ParseError }

func (p *parser) fail(at int, format string, args ...any) {
	line, col := 1, 1
	for _, r := range p.src[:min(at, len(p.src))] {
		if r == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	panic(parseFailure{&ParseError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}})
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}

// skipSpace skips blanks, newlines and # comments.
func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch c := p.src[p.pos]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			p.pos++
		case c == '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

func (p *parser) word() string {
	start := p.pos
	for p.pos < len(p.src) && isWordByte(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// atRuleStart reports whether a rule definition ("name ::=") starts at the position.
func (p *parser) atRuleStart() bool {
	save := p.pos
	defer func() { p.pos = save }()
	if p.word() == "" {
		return false
	}
	p.skipSpace()
	return strings.HasPrefix(p.src[p.pos:], "::=")
}

func (p *parser) ruleIndex(name string, at int) int32 {
	if i, ok := p.byName[name]; ok {
		return i
	}
	p.rules = append(p.rules, ruleDef{name: name, usedAt: at})
	i := int32(len(p.rules) - 1)
	p.byName[name] = i
	return i
}

func (p *parser) newRule(base string, alts [][]sym) int32 {
	name := fmt.Sprintf("%s-%d", base, len(p.rules))
	p.rules = append(p.rules, ruleDef{name: name, alts: alts, defined: true, generated: true})
	i := int32(len(p.rules) - 1)
	p.byName[name] = i
	p.count(alts)
	return i
}

func (p *parser) count(alts [][]sym) {
	for _, a := range alts {
		p.nelems += len(a) + 1
	}
	if p.nelems > maxElements {
		p.fail(p.pos, "the grammar expands to more than %d elements: use smaller repetition counts or fewer rules", maxElements)
	}
}

func (p *parser) setIndex(c charSet) int32 {
	k := c.key()
	if i, ok := p.setIdx[k]; ok {
		return i
	}
	p.sets = append(p.sets, c)
	i := int32(len(p.sets) - 1)
	p.setIdx[k] = i
	return i
}

func (p *parser) parse() {
	p.skipSpace()
	if p.pos >= len(p.src) {
		p.fail(p.pos, "the grammar is empty: define at least the rule root ::= ...")
	}
	for p.pos < len(p.src) {
		at := p.pos
		name := p.word()
		if name == "" {
			p.fail(at, "expected a rule name (letters, digits, '-' or '_') followed by ::=, found %q", p.peekText())
		}
		p.skipSpace()
		if !strings.HasPrefix(p.src[p.pos:], "::=") {
			p.fail(p.pos, "expected ::= after the rule name %q, found %q", name, p.peekText())
		}
		p.pos += 3
		idx := p.ruleIndex(name, at)
		if p.rules[idx].defined {
			p.fail(at, "rule %q is defined twice (first at offset %d): merge the definitions with |", name, p.rules[idx].defAt)
		}
		p.rules[idx].defined = true
		p.rules[idx].defAt = at
		alts := p.alternates(name, false)
		p.rules[idx].alts = alts
		p.count(alts)
		p.skipSpace()
	}
}

func (p *parser) peekText() string {
	rest := p.src[p.pos:]
	if len(rest) == 0 {
		return "end of text"
	}
	if len(rest) > 12 {
		rest = rest[:12] + "…"
	}
	return rest
}

// alternates parses sequence ('|' sequence)* up to ')' (nested) or the next rule.
func (p *parser) alternates(name string, nested bool) [][]sym {
	var alts [][]sym
	for {
		alts = append(alts, p.sequence(name, nested))
		p.skipSpace()
		if p.pos < len(p.src) && p.src[p.pos] == '|' {
			p.pos++
			continue
		}
		return alts
	}
}

func (p *parser) sequence(name string, nested bool) []sym {
	var seq []sym
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return seq
		}
		c := p.src[p.pos]
		if c == '|' || c == ')' {
			if c == ')' && !nested {
				p.fail(p.pos, "unbalanced ')': remove it or add the matching '('")
			}
			return seq
		}
		if !nested && p.atRuleStart() {
			return seq
		}
		start := len(seq)
		seq = p.primary(name, seq)
		seq = p.postfix(name, seq, start)
	}
}

func (p *parser) primary(name string, seq []sym) []sym {
	at := p.pos
	switch c := p.src[p.pos]; {
	case c == '"':
		p.pos++
		for {
			if p.pos >= len(p.src) {
				p.fail(at, "unterminated string literal: close it with \"")
			}
			if p.src[p.pos] == '"' {
				p.pos++
				break
			}
			r := p.char(at, false)
			seq = append(seq, sym{symChar, p.setIndex(newCharSet([]rune{r, r}, false))})
		}
		return seq
	case c == '[':
		p.pos++
		neg := false
		if p.pos < len(p.src) && p.src[p.pos] == '^' {
			neg = true
			p.pos++
		}
		var ranges []rune
		for {
			if p.pos >= len(p.src) {
				p.fail(at, "unterminated character class: close it with ]")
			}
			if p.src[p.pos] == ']' {
				p.pos++
				break
			}
			lo := p.char(at, true)
			hi := lo
			if p.pos+1 < len(p.src) && p.src[p.pos] == '-' && p.src[p.pos+1] != ']' {
				p.pos++
				hi = p.char(at, true)
				if hi < lo {
					p.fail(at, "character range %q-%q is reversed: write the smaller code point first", lo, hi)
				}
			}
			ranges = append(ranges, lo, hi)
		}
		if len(ranges) == 0 && !neg {
			p.fail(at, "empty character class [] matches nothing: add characters, or use . for any character")
		}
		return append(seq, sym{symChar, p.setIndex(newCharSet(ranges, neg))})
	case c == '.':
		p.pos++
		return append(seq, sym{symChar, p.setIndex(newCharSet(nil, true))})
	case c == '(':
		p.pos++
		p.depth++
		if p.depth > maxNesting {
			p.fail(at, "parentheses nested deeper than %d: split the rule into named rules", maxNesting)
		}
		alts := p.alternates(name, true)
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			p.fail(at, "unclosed '(': add the matching ')'")
		}
		p.pos++
		p.depth--
		if len(alts) == 1 {
			return append(seq, alts[0]...)
		}
		return append(seq, sym{symRef, p.newRule(name, alts)})
	case isWordByte(c):
		w := p.word()
		return append(seq, sym{symRef, p.ruleIndex(w, at)})
	default:
		r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
		p.fail(at, "unexpected %q: expected a \"literal\", a [class], '.', a rule name or '('", r)
	}
	return seq
}

// char reads one character (or escape) of a literal or class.
func (p *parser) char(start int, inClass bool) rune {
	at := p.pos
	if p.src[p.pos] != '\\' {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		if r == utf8.RuneError && n == 1 {
			p.fail(at, "invalid UTF-8 in the grammar text: save it as UTF-8")
		}
		p.pos += n
		return r
	}
	p.pos++
	if p.pos >= len(p.src) {
		p.fail(at, "backslash at the end of the text: escape it as \\\\")
	}
	e := p.src[p.pos]
	p.pos++
	hex := func(n int) rune {
		if p.pos+n > len(p.src) {
			p.fail(at, "\\%c needs %d hex digits", e, n)
		}
		v, err := strconv.ParseUint(p.src[p.pos:p.pos+n], 16, 32)
		if err != nil {
			p.fail(at, "\\%c needs %d hex digits, found %q", e, n, p.src[p.pos:p.pos+n])
		}
		p.pos += n
		if v > utf8.MaxRune {
			p.fail(at, "code point U+%X is beyond U+10FFFF", v)
		}
		return rune(v)
	}
	switch e {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case '\\', '"', '[', ']', '-', '^', '/', '\'':
		return rune(e)
	case 'x':
		return hex(2)
	case 'u':
		return hex(4)
	case 'U':
		return hex(8)
	}
	p.fail(at, "unknown escape \\%c: use one of \\n \\r \\t \\\\ \\\" \\[ \\] \\- \\xHH \\uHHHH \\UHHHHHHHH", e)
	return 0
}

// postfix applies the repetition operators after the item that starts at seq[start].
func (p *parser) postfix(name string, seq []sym, start int) []sym {
	for p.pos < len(p.src) {
		at := p.pos
		c := p.src[p.pos]
		var lo, hi int // hi < 0: unbounded
		switch c {
		case '*':
			lo, hi = 0, -1
			p.pos++
		case '+':
			lo, hi = 1, -1
			p.pos++
		case '?':
			lo, hi = 0, 1
			p.pos++
		case '{':
			p.pos++
			lo, hi = p.bounds(at)
		default:
			return seq
		}
		if len(seq) == start { // an empty item ("" or a group matching only "")
			seq = append(seq, sym{symRef, p.newRule(name, [][]sym{{}})})
		}
		item := seq[start:]
		var unit sym
		if len(item) == 1 {
			unit = item[0]
		} else {
			unit = sym{symRef, p.newRule(name, [][]sym{append([]sym(nil), item...)})}
		}
		seq = append(seq[:start], p.repeat(name, unit, lo, hi)...)
		if len(seq) == start {
			// x{0} matches the empty string; later operators would have nothing to act on.
			seq = append(seq, sym{symRef, p.newRule(name, [][]sym{{}})})
		}
	}
	return seq
}

func (p *parser) bounds(at int) (int, int) {
	num := func() (int, bool) {
		p.skipSpace()
		s := p.pos
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
		if s == p.pos {
			return 0, false
		}
		v, err := strconv.Atoi(p.src[s:p.pos])
		if err != nil || v > maxRepeat {
			p.fail(s, "repetition count %s is above the limit %d: use * or + for long runs", p.src[s:p.pos], maxRepeat)
		}
		p.skipSpace()
		return v, true
	}
	lo, okLo := num()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		if !okLo {
			p.fail(at, "empty repetition {}: write {m}, {m,}, {m,n} or {,n}")
		}
		p.pos++
		return lo, lo
	}
	if p.pos >= len(p.src) || p.src[p.pos] != ',' {
		p.fail(at, "malformed repetition: write {m}, {m,}, {m,n} or {,n}")
	}
	p.pos++
	hi, okHi := num()
	if p.pos >= len(p.src) || p.src[p.pos] != '}' {
		p.fail(at, "malformed repetition: write {m}, {m,}, {m,n} or {,n}")
	}
	p.pos++
	if !okHi {
		return lo, -1
	}
	if hi < lo {
		p.fail(at, "repetition {%d,%d} has its maximum below its minimum", lo, hi)
	}
	return lo, hi
}

// repeat returns symbols matching unit between lo and hi times (hi < 0: unbounded), with
// helper rules that are right-recursive so that the matcher's stacks stay shallow.
func (p *parser) repeat(name string, unit sym, lo, hi int) []sym {
	var out []sym
	for i := 0; i < lo; i++ {
		out = append(out, unit)
	}
	if hi < 0 {
		// star ::= unit star | ε
		r := p.newRule(name, nil)
		p.rules[r].alts = [][]sym{{unit, {symRef, r}}, {}}
		p.count(p.rules[r].alts)
		return append(out, sym{symRef, r})
	}
	// opt_k ::= unit opt_{k-1} | ε, opt_1 ::= unit | ε
	var prev int32 = -1
	for k := 0; k < hi-lo; k++ {
		alt := []sym{unit}
		if prev >= 0 {
			alt = append(alt, sym{symRef, prev})
		}
		prev = p.newRule(name, [][]sym{alt, {}})
	}
	if prev >= 0 {
		out = append(out, sym{symRef, prev})
	}
	if len(out) > maxElements {
		p.fail(p.pos, "repetition too large")
	}
	p.nelems += len(out)
	return out
}
