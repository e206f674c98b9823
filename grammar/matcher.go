package grammar

import (
	"errors"
	"fmt"
)

// Options bound the work and memory of a Matcher.
type Options struct {
	// MaxStacks is the most parse stacks followed at once (after deduplication); an
	// ambiguous grammar that needs more makes Accept and Mask fail with ErrTooManyStacks.
	// 0 means 4096.
	MaxStacks int
	// MaxNodes is the size, in stack nodes, at which the matcher drops its caches and keeps
	// only its live stacks (memory stays bounded over long generations). 0 means 1<<17
	// (with Mask's transition cache, at most about 20 MiB per Matcher; a JSON grammar
	// typically uses well under 1 MiB).
	MaxNodes int
}

func (o Options) withDefaults() Options {
	if o.MaxStacks <= 0 {
		o.MaxStacks = 4096
	}
	if o.MaxNodes <= 0 {
		o.MaxNodes = 1 << 17
	}
	return o
}

// ErrRejected is returned (wrapped) when input cannot continue a parse of the grammar.
var ErrRejected = errors.New("grammar: input rejected")

// utf8State is a partly decoded UTF-8 sequence: the bits so far and the bytes still needed.
type utf8State struct {
	cp   rune
	min  rune // smallest code point of the sequence's length (overlong forms are invalid)
	need uint8
}

// Matcher follows a grammar through input given as bytes: the set of parse stacks that the
// input so far leaves open, and a partial UTF-8 character at the end. It is not safe for
// concurrent use.
type Matcher struct {
	g      *Grammar
	opts   Options
	a      *arena
	stacks []int32
	utf    utf8State
	buf    []int32
}

// NewMatcher returns a Matcher at the start of the grammar.
func (g *Grammar) NewMatcher(opts Options) (*Matcher, error) {
	m := &Matcher{g: g, opts: opts.withDefaults()}
	if err := m.Reset(); err != nil {
		return nil, err
	}
	return m, nil
}

// Reset goes back to the start of the grammar (and frees the caches).
func (m *Matcher) Reset() error {
	m.a = newArena(m.g, m.opts)
	m.utf = utf8State{}
	m.stacks = m.stacks[:0]
	for _, s := range m.g.alts[m.g.root] {
		m.a.beginExpansion()
		m.stacks = m.a.expand(m.stacks, m.a.node(s, empty), 0)
	}
	// merge the per-alternative expansions without duplicates
	m.a.begin()
	out := m.stacks[:0:0]
	for _, s := range m.stacks {
		out = m.a.add(out, s)
	}
	m.stacks = out
	if m.a.err != nil {
		return m.a.err
	}
	if len(m.stacks) > m.opts.MaxStacks {
		return ErrTooManyStacks
	}
	return nil
}

// Complete reports whether the input so far is a full sentence of the grammar (so an
// end-of-generation token may come now).
func (m *Matcher) Complete() bool {
	if m.utf.need != 0 {
		return false
	}
	for _, s := range m.stacks {
		if s == empty {
			return true
		}
	}
	return false
}

// Stacks returns how many parse stacks are open (a measure of ambiguity).
func (m *Matcher) Stacks() int { return len(m.stacks) }

// stepByte appends to out the stacks that follow stacks after byte b, given the UTF-8 state
// u, and returns them with the new state. ok is false for invalid UTF-8.
func (m *Matcher) stepByte(out, stacks []int32, u utf8State, b byte) ([]int32, utf8State, bool) {
	a := m.a
	if u.need == 0 {
		switch {
		case b < 0x80:
			return m.stepRune(out, stacks, rune(b)), u, true
		case b >= 0xC2 && b < 0xE0:
			u = utf8State{cp: rune(b & 0x1F), min: 0x80, need: 1}
		case b >= 0xE0 && b < 0xF0:
			u = utf8State{cp: rune(b & 0x0F), min: 0x800, need: 2}
		case b >= 0xF0 && b < 0xF5:
			u = utf8State{cp: rune(b & 0x07), min: 0x10000, need: 3}
		default:
			return out, u, false
		}
	} else {
		if b&0xC0 != 0x80 {
			return out, u, false
		}
		u.cp = u.cp<<6 | rune(b&0x3F)
		u.need--
		if u.need == 0 {
			cp := u.cp
			if cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) {
				return out, u, false
			}
			return m.stepRune(out, stacks, cp), utf8State{}, true
		}
	}
	// partial character: keep the stacks whose next character may start this way
	shift := 6 * uint(u.need)
	lo := max(u.cp<<shift, u.min)
	hi := min(u.cp<<shift|(1<<shift-1), 0x10FFFF)
	if lo > hi || lo >= 0xD800 && hi <= 0xDFFF {
		return out, u, false // overlong, beyond U+10FFFF, or a surrogate
	}
	for _, s := range stacks {
		if s == empty {
			continue
		}
		if cs := a.set[s]; cs >= 0 && m.g.sets[cs].mayHave(lo, hi) {
			out = append(out, s)
		}
	}
	return out, u, true
}

// stepRune appends the stacks that follow stacks once code point cp has matched.
func (m *Matcher) stepRune(out, stacks []int32, cp rune) []int32 {
	a := m.a
	sets := m.g.sets
	first, matched := int32(-1), 0
	for _, s := range stacks {
		if s == empty {
			continue
		}
		if cs := a.set[s]; cs >= 0 && sets[cs].has(cp) {
			if matched == 0 {
				first = s
			}
			matched++
		}
	}
	switch matched {
	case 0:
		return out
	case 1: // the common case: one stack's successors, already without duplicates
		return append(out, a.next(first)...)
	}
	a.begin()
	for _, s := range stacks {
		if s == empty {
			continue
		}
		if cs := a.set[s]; cs < 0 || !sets[cs].has(cp) {
			continue
		}
		for _, t := range a.next(s) {
			out = a.add(out, t)
		}
	}
	return out
}

// AcceptBytes advances the matcher over b. If b cannot continue the parse it returns an
// error wrapping ErrRejected and leaves the matcher unchanged.
func (m *Matcher) AcceptBytes(b []byte) error {
	cur := m.stacks
	u := m.utf
	var scratch [2][]int32
	scratch[0], scratch[1] = m.buf[:0], nil
	for i, c := range b {
		next := scratch[i&1][:0]
		var ok bool
		next, u, ok = m.stepByte(next, cur, u, c)
		scratch[i&1] = next
		if m.a.err != nil {
			return m.a.err
		}
		if !ok || len(next) == 0 {
			return fmt.Errorf("%w: byte %d (%q) of %q cannot continue the grammar here", ErrRejected, i, c, b)
		}
		if len(next) > m.opts.MaxStacks {
			return ErrTooManyStacks
		}
		cur = next
	}
	if len(b) == 0 {
		return nil
	}
	m.stacks = append(m.stacks[:0:0], cur...)
	m.buf = scratch[0]
	m.utf = u
	if m.a.size() > m.opts.MaxNodes {
		m.compact()
	}
	return nil
}

// AcceptString is AcceptBytes for a string.
func (m *Matcher) AcceptString(s string) error { return m.AcceptBytes([]byte(s)) }

// compact rebuilds the arena with only the live stacks, dropping the caches.
func (m *Matcher) compact() {
	old := m.a
	a := newArena(m.g, m.opts)
	var copyNode func(id int32) int32
	copyNode = func(id int32) int32 {
		if id == empty {
			return empty
		}
		return a.node(old.pos[id], copyNode(old.below[id]))
	}
	for i, s := range m.stacks {
		m.stacks[i] = copyNode(s)
	}
	m.a = a
}

// Match reports whether s is a complete sentence of the grammar. It is false too when the
// grammar is too ambiguous to follow s within the default Options (ErrTooManyStacks).
func (g *Grammar) Match(s string) bool {
	m, err := g.NewMatcher(Options{})
	if err != nil {
		return false
	}
	if m.AcceptString(s) != nil {
		return false
	}
	return m.Complete()
}
