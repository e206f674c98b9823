package grammar

import (
	"fmt"
	"strings"
)

// element kinds of a compiled grammar
const (
	elemEnd  = iota // end of an alternative
	elemChar        // one code point of sets[arg]
	elemRef         // rule arg
)

type elem struct {
	kind uint8
	arg  int32
}

// Grammar is a compiled GBNF grammar. It is immutable and safe for concurrent use; each
// generated sequence gets its own Matcher (or Constraint) from it.
type Grammar struct {
	elems []elem    // every alternative of every rule, each ended by elemEnd
	alts  [][]int32 // per rule: the start of each alternative in elems
	names []string  // per rule
	gen   []bool    // per rule: made by the parser for a group or repetition
	sets  []charSet // character sets referenced by elemChar
	root  int32
}

// Parse compiles a grammar in llama.cpp's GBNF. The rule named root is the start symbol.
// Errors are *ParseError values with the line and column and what to change; left-recursive
// rules are errors (the matcher is top-down), not hangs.
func Parse(src string) (g *Grammar, err error) {
	if len(src) > maxGrammarBytes {
		return nil, &ParseError{Line: 1, Col: 1, Msg: fmt.Sprintf("the grammar is %d bytes, above the limit of %d", len(src), maxGrammarBytes)}
	}
	p := &parser{src: src, byName: map[string]int32{}, setIdx: map[string]int32{}}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(parseFailure)
			if !ok {
				panic(r)
			}
			g, err = nil, f.err
		}
	}()
	p.parse()
	for _, r := range p.rules {
		if !r.defined {
			p.fail(r.usedAt, "rule %q is used but not defined: add %s ::= ...", r.name, r.name)
		}
	}
	root, ok := p.byName["root"]
	if !ok {
		p.fail(0, "no rule named root: the start symbol must be called root")
	}
	g = &Grammar{sets: p.sets, root: root}
	for _, r := range p.rules {
		var starts []int32
		for _, a := range r.alts {
			starts = append(starts, int32(len(g.elems)))
			for _, s := range a {
				if s.kind == symChar {
					g.elems = append(g.elems, elem{elemChar, s.arg})
				} else {
					g.elems = append(g.elems, elem{elemRef, s.arg})
				}
			}
			g.elems = append(g.elems, elem{elemEnd, 0})
		}
		g.alts = append(g.alts, starts)
		g.names = append(g.names, r.name)
		g.gen = append(g.gen, r.generated)
	}
	if cycle := g.leftRecursion(); cycle != nil {
		at := p.rules[cycle[0]].defAt
		var names []string
		for _, r := range cycle {
			names = append(names, g.names[r])
		}
		p.fail(at, "rule %q is left-recursive (%s): a rule must match a character before it reaches itself again; rewrite x ::= x op y | y as x ::= y (op y)*",
			g.names[cycle[0]], strings.Join(names, " → "))
	}
	return g, nil
}

// MustParse is Parse for grammars known to be valid (package-level variables, tests); it
// panics with the *ParseError otherwise.
func MustParse(src string) *Grammar {
	g, err := Parse(src)
	if err != nil {
		panic(err)
	}
	return g
}

// nullable computes which rules can match the empty string.
func (g *Grammar) nullable() []bool {
	null := make([]bool, len(g.alts))
	for changed := true; changed; {
		changed = false
		for r, starts := range g.alts {
			if null[r] {
				continue
			}
			for _, s := range starts {
				ok := true
				for i := s; g.elems[i].kind != elemEnd; i++ {
					e := g.elems[i]
					if e.kind == elemChar || !null[e.arg] {
						ok = false
						break
					}
				}
				if ok {
					null[r], changed = true, true
					break
				}
			}
		}
	}
	return null
}

// leftRecursion returns a cycle of rules that reach themselves without consuming a
// character, or nil.
func (g *Grammar) leftRecursion() []int32 {
	null := g.nullable()
	edges := make([][]int32, len(g.alts))
	for r, starts := range g.alts {
		for _, s := range starts {
			for i := s; g.elems[i].kind == elemRef; i++ {
				edges[r] = append(edges[r], g.elems[i].arg)
				if !null[g.elems[i].arg] {
					break
				}
			}
		}
	}
	const (
		white = iota
		grey
		black
	)
	color := make([]uint8, len(g.alts))
	var path []int32
	var cycle []int32
	var visit func(r int32) bool
	visit = func(r int32) bool {
		color[r] = grey
		path = append(path, r)
		for _, t := range edges[r] {
			if color[t] == grey {
				for i, x := range path {
					if x == t {
						cycle = append(append([]int32(nil), path[i:]...), t)
						// name a user rule first where there is one
						for j, y := range cycle[:len(cycle)-1] {
							if !g.gen[y] {
								cycle = append(append([]int32(nil), cycle[j:len(cycle)-1]...), cycle[:j+1]...)
								break
							}
						}
						return true
					}
				}
			}
			if color[t] == white && visit(t) {
				return true
			}
		}
		color[r] = black
		path = path[:len(path)-1]
		return false
	}
	for r := range g.alts {
		if color[r] == white && visit(int32(r)) {
			return cycle
		}
	}
	return nil
}

// String writes the compiled grammar back as GBNF, one rule per line, root first. Groups and
// repetitions appear as the helper rules the parser made for them; parsing the text again
// gives an equivalent grammar.
func (g *Grammar) String() string {
	var sb strings.Builder
	order := []int32{g.root}
	for r := range g.alts {
		if int32(r) != g.root {
			order = append(order, int32(r))
		}
	}
	for _, r := range order {
		sb.WriteString(g.names[r])
		sb.WriteString(" ::=")
		for k, s := range g.alts[r] {
			if k > 0 {
				sb.WriteString(" |")
			}
			if g.elems[s].kind == elemEnd {
				sb.WriteString(` ""`)
			}
			for i := s; g.elems[i].kind != elemEnd; {
				e := g.elems[i]
				sb.WriteByte(' ')
				if e.kind == elemRef {
					sb.WriteString(g.names[e.arg])
					i++
					continue
				}
				// runs of single code points print as one literal
				if _, ok := g.sets[e.arg].single(); ok {
					sb.WriteByte('"')
					for ; g.elems[i].kind == elemChar; i++ {
						cp, ok := g.sets[g.elems[i].arg].single()
						if !ok {
							break
						}
						sb.WriteString(escapeRune(cp, false))
					}
					sb.WriteByte('"')
					continue
				}
				sb.WriteString(g.sets[e.arg].String())
				i++
			}
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}
