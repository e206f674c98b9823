package grammar

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// A pattern's grammar accepts the JSON encoding of a string exactly when Go's regexp finds
// the pattern in the string, on random strings over an alphabet with the characters that
// JSON escapes.
func TestPatternMatchesRegexp(t *testing.T) {
	alphabet := []string{"a", "b", "c", "A", "B", "x", "1", "2", "-", " ", `"`, `\`, "\n", "\t", "\x01", "é", "日", "."}
	patterns := []string{`^a+$`, `b`, `^[a-c]{2,3}-\d$`, `(?i)^ab?c$`, `^[^a-z]*$`, `^.{2}$`, `x|"`, `^(a|bc)*\\?$`,
		`^[\x00-\x1f]+$`, `^[\t\n ]*1$`, `é|日{2}`, `^\w+$`, `^\s*$`, `a.c`}
	r := rand.New(rand.NewPCG(7, 7))
	for _, p := range patterns {
		schema, _ := json.Marshal(map[string]any{"type": "string", "pattern": p})
		g, err := FromJSONSchema(schema)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		re := regexp.MustCompile(p)
		matched := 0
		for i := 0; i < 400; i++ {
			var sb strings.Builder
			for n := r.IntN(5); n > 0; n-- {
				sb.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			s := sb.String()
			if i%4 == 0 { // build some matching strings from the regexp's literal parts
				s = strings.NewReplacer(`\d`, "1", `\\`, `\`, "^", "", "$", "", "+", "", "?", "", "(?i)", "", "|", "").Replace(p)
			}
			var buf bytes.Buffer
			e := json.NewEncoder(&buf)
			e.SetEscapeHTML(false)
			_ = e.Encode(s)
			enc := strings.TrimSuffix(buf.String(), "\n")
			want := re.MatchString(s)
			if want {
				matched++
			}
			if got := g.Match(enc); got != want {
				t.Errorf("pattern %q on %q (JSON %s): grammar %v, regexp %v", p, s, enc, got, want)
			}
		}
		if matched == 0 {
			t.Logf("pattern %q: no random string matched", p)
		}
	}
}
