package grammar

import (
	"encoding/json"
	"errors"
	goparser "go/parser"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var matchTables = []struct {
	name   string
	src    string
	accept []string
	reject []string
}{
	{"json", JSONGrammar,
		[]string{`{}`, `[]`, `0`, `-0.5e+10`, `"a\"b\\c\u00E9"`, ` {"a": [1, {"b": null}], "c": true} `, `"日本語 🦙"`, "[\n\t1,\n\t2\n]"},
		[]string{``, `{`, `{"a"}`, `[1,]`, `01`, `"\x"`, `"a` + "\n" + `"`, `tru`, `{"a":1,}`, `[1 2]`, `"\u12G4"`, strings.Repeat(" ", 21) + "1"}},
	{"arith", arithGrammar,
		[]string{`1`, `1 + 2`, `(1+2)*3`, `((0))`, `12 / 4 - 7*(8+9)`},
		[]string{`1 +`, `01`, `(1`, `1  + 2`, `-1`, `1++2`, `()`}},
	{"list", listGrammar,
		[]string{`[]`, `[a]`, `[abc, "x y", z]`, `["", "日本"]`},
		[]string{`[`, `[a,b]`, `[A]`, `[a, ]`, `["a"b]`, "[\"a\nb\"]"}},
	{"clike", cLikeGrammar,
		[]string{"int main() {}", "int f(int a, char b) {\n  return a + 1;\n}\nvoid g() { int x = f(1, 'c'); if (x < 2) { x = 3; } else { } while (x) {} }"},
		[]string{"int main()", "main() {}", "int f(int) {}", "int f() { return 1 }", "int f() { x = ; }"}},
	{"classes and repetition", `root ::= [a-c]{2} [^a-z0-9]? "x"{1,3} .+ ( "y" | "z" ){,2} [\u00e0-\u00ff]*`,
		[]string{"abx.", "ccQxxx日", "aa!xx..yz", "abx#àé"},
		[]string{"ax.", "abyx.", "ab1x.", "abx", "ab"}},
	{"escapes", `root ::= "\x41\u00e9\U0001F999\t\n\\\"" [\]\[\-] [\x00-\x1f]`,
		[]string{"Aé🦙\t\n\\\"]\x01", "Aé🦙\t\n\\\"-\x1f"},
		[]string{"Aé🦙\t\n\\\"]a", "A"}},
}

func TestMatchTables(t *testing.T) {
	for _, tc := range matchTables {
		g, err := Parse(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, s := range tc.accept {
			if !g.Match(s) {
				t.Errorf("%s: rejects %q", tc.name, s)
			}
		}
		for _, s := range tc.reject {
			if g.Match(s) {
				t.Errorf("%s: accepts %q", tc.name, s)
			}
		}
		// byte by byte gives the same answer as all at once
		for _, s := range append(slices.Clone(tc.accept), tc.reject...) {
			m, _ := g.NewMatcher(Options{})
			ok := true
			for i := 0; i < len(s) && ok; i++ {
				ok = m.AcceptBytes([]byte{s[i]}) == nil
			}
			if ok && m.Complete() != g.Match(s) || !ok && g.Match(s) {
				t.Errorf("%s: byte-wise matching of %q differs", tc.name, s)
			}
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range matchTables {
		g := MustParse(tc.src)
		text := g.String()
		g2, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: reparsing String(): %v\n%s", tc.name, err, text)
		}
		if sortedLines(g2.String()) != sortedLines(text) {
			t.Errorf("%s: String is not stable:\n%s\n---\n%s", tc.name, text, g2.String())
		}
		for _, s := range append(slices.Clone(tc.accept), tc.reject...) {
			if g.Match(s) != g2.Match(s) {
				t.Errorf("%s: the reparsed grammar disagrees on %q", tc.name, s)
			}
		}
	}
}

func sortedLines(s string) string {
	l := strings.Split(s, "\n")
	slices.Sort(l)
	return strings.Join(l, "\n")
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		src       string
		line, col int
		contains  string
	}{
		{``, 1, 1, "empty"},
		{`root ::= "a`, 1, 10, "unterminated string"},
		{"root ::= a\n", 1, 10, `"a" is used but not defined`},
		{"x ::= \"a\"", 1, 1, "no rule named root"},
		{"root ::= [a-", 1, 10, "unterminated character class"},
		{"root ::= [z-a]", 1, 10, "reversed"},
		{"root ::= \"a\"\nroot ::= \"b\"", 2, 1, "defined twice"},
		{"root ::= (\"a\"", 1, 10, "unclosed"},
		{"root ::= \"a\")", 1, 13, "unbalanced"},
		{"root ::= *", 1, 10, "unexpected"},
		{"root ::= \"a\"{3,1}", 1, 13, "below its minimum"},
		{"root ::= \"a\"{99999}", 1, 14, "above the limit"},
		{"root ::= \"\\q\"", 1, 11, "unknown escape"},
		{"root = \"a\"", 1, 6, "expected ::="},
		{"root ::= root \"a\" | \"a\"", 1, 1, "left-recursive"},
		{"root ::= x\nx ::= \"b\"? y\ny ::= root \"c\" | \"c\"", 1, 1, "left-recursive"},
		{"root ::= ( \"\" )* \"a\"", 1, 1, "left-recursive"},
		{"# comment only\n", 2, 1, "empty"},
		{"root ::= []", 1, 10, "empty character class"},
	} {
		_, err := Parse(tc.src)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: got %v, want a *ParseError", tc.src, err)
			continue
		}
		if pe.Line != tc.line || pe.Col != tc.col || !strings.Contains(pe.Msg, tc.contains) {
			t.Errorf("%q: got %v, want line %d column %d containing %q", tc.src, err, tc.line, tc.col, tc.contains)
		}
	}
}

func TestTooManyStacks(t *testing.T) {
	// every prefix of a's can be split in exponentially many ways, but deduplication keeps
	// the set small; an enum of many alternatives sharing a prefix needs one stack each.
	g := MustParse(`root ::= ("a" | "a" "a" | "aa")+ "b"`)
	if !g.Match(strings.Repeat("a", 200) + "b") {
		t.Fatal("ambiguous grammar rejects a valid string")
	}
	var alts []string
	for i := 0; i < 100; i++ {
		alts = append(alts, `"x`+strings.Repeat("y", i)+`"`)
	}
	g = MustParse("root ::= " + strings.Join(alts, " | "))
	m, err := g.NewMatcher(Options{MaxStacks: 50})
	if err == nil {
		err = m.AcceptString("x")
	}
	if !errors.Is(err, ErrTooManyStacks) {
		t.Fatalf("got %v, want ErrTooManyStacks", err)
	}
	// nested bounded repetitions whose expansion would make billions of stacks fail fast
	g = MustParse(`root ::= (("a"{0,4096}){0,4096}){0,4096} "b"`)
	if _, err := g.NewMatcher(Options{}); !errors.Is(err, ErrTooManyStacks) {
		t.Fatalf("got %v, want ErrTooManyStacks", err)
	}
}

func TestMemoryBounded(t *testing.T) {
	g := JSON()
	m, _ := g.NewMatcher(Options{MaxNodes: 1000})
	if err := m.AcceptString("["); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		if err := m.AcceptString(`{"k": [1, "s"]}, `); err != nil {
			t.Fatal(err)
		}
		if m.a.size() > 2000 {
			t.Fatalf("arena grew to %d nodes", m.a.size())
		}
	}
	if err := m.AcceptString("2]"); err != nil || !m.Complete() {
		t.Fatal("not complete", err)
	}
}

// Random constrained generation over a fake vocabulary always yields sentences of the
// grammar, which an independent parser accepts too.
func TestConstrainedGenerationProperty(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test-slow runs it")
	}
	v, _ := fakeVocab(t, 3000, 7)
	listRE := regexp.MustCompile(`^\[((([a-z]+)|("[^"\n]*"))(, (([a-z]+)|("[^"\n]*")))*)?\]$`)
	for _, tc := range []struct {
		name  string
		g     *Grammar
		check func(string) error
	}{
		{"json", JSON(), func(s string) error {
			var x any
			return decodeJSON(s, &x)
		}},
		{"json-object", JSONObject(), func(s string) error {
			var x map[string]any
			return decodeJSON(s, &x)
		}},
		{"arith", MustParse(arithGrammar), func(s string) error {
			_, err := goparser.ParseExpr(s)
			return err
		}},
		{"list", MustParse(listGrammar), func(s string) error {
			if !listRE.MatchString(s) {
				return errors.New("no regexp match")
			}
			return nil
		}},
		{"clike", MustParse(cLikeGrammar), nil},
	} {
		r := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
		done := 0
		for run := 0; run < 30; run++ {
			s, ended := generate(t, tc.g, v, r, 200, 0.5)
			if !utf8.ValidString(s) && ended {
				t.Errorf("%s: invalid UTF-8 %q", tc.name, s)
			}
			if !ended {
				continue
			}
			done++
			if !tc.g.Match(s) {
				t.Errorf("%s: generated %q, which the grammar rejects", tc.name, s)
			}
			if tc.check != nil {
				if err := tc.check(s); err != nil {
					t.Errorf("%s: generated %q: %v", tc.name, s, err)
				}
			}
		}
		t.Logf("%s: %d of 30 runs ended with EOS", tc.name, done)
		if done < 15 {
			t.Errorf("%s: only %d of 30 runs completed", tc.name, done)
		}
	}
}

// decodeJSON decodes exactly one JSON value (numbers kept as text, so exponents beyond
// float64 are fine).
func decodeJSON(s string, x any) error {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(x); err != nil {
		return err
	}
	if d.More() {
		return errors.New("text after the value")
	}
	return nil
}
