package grammar

import (
	"testing"
)

// FuzzParse: Parse never panics or hangs; a grammar it accepts prints as GBNF that parses
// again to the same grammar, and matching any input through it never panics.
func FuzzParse(f *testing.F) {
	for _, tc := range matchTables {
		f.Add(tc.src, "")
		for _, s := range tc.accept {
			f.Add(tc.src, s)
		}
	}
	f.Add("root ::= a\na ::= \"x\" a | \"\"", "xxx")
	f.Add("root ::= [^\\x00-\\x7f]+ # comment", "é日")
	f.Add("root ::= (\"a\"{2,3} | [b-d]{,2})* \"z\"", "aabbz")
	f.Fuzz(func(t *testing.T, src, input string) {
		g, err := Parse(src)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		text := g.String()
		g2, err := Parse(text)
		if err != nil {
			t.Fatalf("String() does not reparse: %v\n%s", err, text)
		}
		if sortedLines(g2.String()) != sortedLines(text) {
			t.Fatalf("String() not stable:\n%s\n---\n%s", text, g2.String())
		}
		if len(input) > 200 {
			input = input[:200]
		}
		m, err := g.NewMatcher(Options{MaxStacks: 256})
		if err != nil {
			return
		}
		// Mask agrees with Allows on a vocabulary cut from the input, token by token
		var pieces []string
		pieces = append(pieces, "")
		for i := 0; i < len(input); i += 1 + i%3 {
			pieces = append(pieces, input[i:min(len(input), i+1+i%3)])
		}
		pieces = append(pieces, "a", " ", "\xc3", "\xa9", "\"")
		v, _ := NewVocab(len(pieces), func(id int32) []byte { return []byte(pieces[id]) }, 0)
		c, err := NewConstraint(g, v, Options{MaxStacks: 256})
		if err == nil {
			allowed := make([]bool, len(pieces))
			for step := 1; step < len(pieces) && step < 20; step++ {
				if c.Mask(allowed) != nil {
					break
				}
				for id, ok := range allowed {
					if ok != c.Allows(int32(id)) {
						t.Fatalf("Mask and Allows disagree on %q", pieces[id])
					}
				}
				if !allowed[step] || c.Accept(int32(step)) != nil {
					break
				}
			}
		}
		whole := m.AcceptString(input) == nil && m.Complete()
		if whole != (g2.Match(input)) {
			// g2.Match uses the default MaxStacks; only compare when neither hit a limit
			m2, err2 := g2.NewMatcher(Options{MaxStacks: 256})
			if err2 == nil && (m2.AcceptString(input) == nil && m2.Complete()) != whole {
				t.Fatalf("grammar and its reparsed text disagree on %q", input)
			}
		}
	})
}
