package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file checks the hand-written pre-tokenizers against a naive reference: Go regular
// expressions applied one after the other, as llama.cpp applies its list of patterns (every
// match a word, and the text between two matches a word too). \s is the Unicode White_Space
// class; the lookahead of \s+(?!\S) is emulated where it occurs.

// refStep cuts one piece of text into words.
type refStep func(string) []string

// reSteps turns a Go regular expression into a refStep.
func reStep(expr string) refStep {
	re := regexp.MustCompile(strings.ReplaceAll(expr, `\s`, space))
	return func(s string) []string {
		var out []string
		last := 0
		for _, m := range re.FindAllStringIndex(s, -1) {
			if m[0] > last {
				out = append(out, s[last:m[0]])
			}
			out = append(out, s[m[0]:m[1]])
			last = m[1]
		}
		if last < len(s) {
			out = append(out, s[last:])
		}
		return out
	}
}

// wideStep is reStep for the patterns llama.cpp gives std::wregex: non-ASCII whitespace is
// seen as \v.
func wideStep(expr string) refStep {
	step := reStep(expr)
	return func(s string) []string {
		orig := []rune(s)
		wide := make([]rune, len(orig))
		for i, c := range orig {
			wide[i] = c
			if c > 0x7F && isWhitespace(c) {
				wide[i] = '\v'
			}
		}
		var out []string
		at := 0
		for _, w := range step(string(wide)) {
			n := utf8.RuneCountInString(w)
			out = append(out, string(orig[at:at+n]))
			at += n
		}
		return out
	}
}

// refLlama3 is the Llama 3 pattern with \p{N}{1,digits}, alternative by alternative.
func refLlama3(digits string) refStep {
	alts := []*regexp.Regexp{
		regexp.MustCompile(`^(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`),
		regexp.MustCompile(`^[^\r\n\pL\pN]?\pL+`),
		regexp.MustCompile(`^\pN{1,` + digits + `}`),
		regexp.MustCompile(`^ ?[^` + space[1:len(space)-1] + `\pL\pN]+[\r\n]*`),
		regexp.MustCompile(`^` + space + `*[\r\n]+`),
	}
	spaces := regexp.MustCompile(`^` + space + `+`)
	return func(s string) []string {
		var out []string
		for len(s) > 0 {
			n := 0
			for _, re := range alts {
				if m := re.FindString(s); m != "" {
					n = len(m)
					break
				}
			}
			if n == 0 {
				m := spaces.FindString(s)
				require_(m != "", "no alternative matches %q", s)
				n = len(m)
				if _, w := utf8.DecodeLastRuneInString(m); n < len(s) && n-w > 0 {
					n -= w // \s+(?!\S)
				}
			}
			out = append(out, s[:n])
			s = s[n:]
		}
		return out
	}
}

// refTekken is the tekken pattern on collapsed text, alternative by alternative (\s+(?!\S)
// emulated).
func refTekken(contraction, digits string) refStep {
	const L, N, S = `A-Za-z\x{E000}`, `0-9\x{E001}`, `\t\n\v\f\r `
	alt := regexp.MustCompile(`^(?:[^\r\n` + L + N + `]?[A-Z\x{E000}]*[a-z\x{E000}]+` + contraction + `|[^\r\n` + L + N + `]?[A-Z\x{E000}]+[a-z\x{E000}]*` + contraction + `|[` + N + `]{1,` + digits + `}| ?[^` + S + L + N + `]+[\r\n/]*|[` + S + `]*[\r\n]+)`)
	spaces := regexp.MustCompile(`^[` + S + `]+`)
	return func(s string) []string {
		// Match on the collapsed text, cut the original.
		var out []string
		orig := []rune(s)
		cs := collapseString(s)
		for len(cs) > 0 {
			n := len(alt.FindString(cs))
			if n == 0 {
				m := spaces.FindString(cs)
				require_(m != "", "no alternative matches %q", cs)
				n = len(m)
				if n < len(cs) && n > 1 {
					n-- // \s+(?!\S): whitespace here is ASCII, one byte each
				}
			}
			k := utf8.RuneCountInString(cs[:n])
			out = append(out, string(orig[:k]))
			orig, cs = orig[k:], cs[n:]
		}
		return out
	}
}

// refDeepseek3 is the third deepseek-v3 pattern on collapsed text: a search (text no
// alternative matches stays a piece), alternative by alternative, \s+(?!\S) emulated.
func refDeepseek3(s string) []string {
	const L, P, S, M = `A-Za-z\x{E000}`, `!-#%-*,-/:;?@\[-\]_{}\x{E002}`, "$+<=>^`|\\x{E005}", `\x{E004}`
	alt := regexp.MustCompile("^(?:[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n" + L + P + S + "]?[" + L + M + "]+| ?[" + P + S + "]+[\\r\\n]*|[\\t\\n\\v\\f\\r ]*[\\r\\n]+)")
	spaces := regexp.MustCompile(`^[\t\n\v\f\r ]+`)
	var out []string
	orig := []rune(s)
	cs := collapseString(s)
	gap := 0 // code points of unmatched text before cs
	for len(cs) > 0 {
		n := len(alt.FindString(cs))
		if n == 0 {
			if m := spaces.FindString(cs); m != "" {
				n = len(m)
				if n < len(cs) && n > 1 {
					n--
				}
			}
		}
		if n == 0 {
			_, w := utf8.DecodeRuneInString(cs)
			cs = cs[w:]
			gap++
			continue
		}
		if gap > 0 {
			out = append(out, string(orig[:gap]))
			orig = orig[gap:]
			gap = 0
		}
		k := utf8.RuneCountInString(cs[:n])
		out = append(out, string(orig[:k]))
		orig, cs = orig[k:], cs[n:]
	}
	if gap > 0 {
		out = append(out, string(orig))
	}
	return out
}

// collapseString collapses s as llama.cpp does before std::regex: every non-ASCII code point
// becomes a placeholder of its class (letter U+E000, number U+E001, punctuation U+E002,
// mark U+E004, symbol U+E005, whitespace \v, other U+E003), so that patterns can name classes with ASCII ranges.
func collapseString(s string) string {
	var sb strings.Builder
	for _, c := range s {
		f := cptFlags(c)
		switch {
		case c < 0x80:
			sb.WriteRune(c)
		case f&flagWhitespace != 0:
			sb.WriteRune('\v')
		case f&flagLetter != 0:
			sb.WriteRune(0xE000)
		case f&flagNumber != 0:
			sb.WriteRune(0xE001)
		case f&flagPunctuation != 0:
			sb.WriteRune(0xE002)
		case f&flagMark != 0:
			sb.WriteRune(0xE004)
		case f&flagSymbol != 0:
			sb.WriteRune(0xE005)
		default:
			sb.WriteRune(0xE003)
		}
	}
	return sb.String()
}

// refPre lists, per pre-tokenizer, the reference steps.
var refPre = map[string][]refStep{
	"gpt-2":     {refPreTokenize},
	"llama-bpe": {refLlama3("3")},
	"qwen2":     {refLlama3("1")},
	"starcoder": {reStep(`\pN`), refPreTokenize},
	"default":   {reStep(`[\pP$+<=>^~|]+`), refPreTokenize, reStep(`\pN+`), reStep(`[0-9][0-9][0-9]`)},
	"falcon":    {reStep("[\\pP$+<=>^~|`]+"), refPreTokenize, reStep(`[0-9][0-9][0-9]`)},
	"deepseek-coder": {reStep(`[\r\n]`), reStep(`\s?\pL+`), reStep(`\s?\pP+`),
		wideStep(`[一-龥ࠀ-一가-퟿]+`), reStep(`\pN`)},
	"deepseek-llm": {wideStep(`[\r\n]`), wideStep(`\s?[` + rangesRegexp(deepseekLetters) + `]+`),
		wideStep(`\s?[!-/:-~！-／：-～‘-‟　-。]+`), wideStep(`\s+$`), wideStep(`[一-龥ࠀ-一가-퟿]+`), reStep(`\pN+`)},
	"tekken":      {refTekken("", "1")},
	"deepseek-v3": {reStep(`\pN{1,3}`), reStep(`[一-龥぀-ゟ゠-ヿ]+`), refDeepseek3},
	"gpt-4o":      {refTekken(`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?`, "3")},
	"bloom":       {wideStep(bloomRE)},
	"viking":      {wideStep(bloomRE), reStep(`\pN`)},
}

// bloomRE is " ?[^(\s|.,!?…。，、।۔،)]+".
var bloomRE = `[ ]?[^(` + space[1:len(space)-1] + `|.,!?…。，、।۔،)]+`

func refSplit(name, text string) []string {
	words := []string{text}
	for _, step := range refPre[name] {
		var next []string
		for _, w := range words {
			next = append(next, step(w)...)
		}
		words = next
	}
	return words
}

// pretokAlphabet mixes every character class the patterns distinguish.
var pretokAlphabet = []string{
	"a", "Z", "é", "ß", "Ω", "Ж", "日", "本", "가", "ｱ", "ǅ", "ª", "\u0301", "\u0903",
	"0", "7", "٣", "²", "½", "Ⅻ", "𝟘",
	".", ",", "!", "?", "'", "\"", "(", ")", "-", "_", "/", "#", "%", "…", "。", "，", "、", "‘", "«", "।", "،",
	"$", "+", "<", "=", ">", "^", "~", "|", "`", "©", "€", "🦙", "😀",
	" ", " ", " ", "\t", "\n", "\r", "\v", "\f", "\u00a0", "\u3000", "\u2028", "\u0085", "\u200b",
	"'s", "'S", "'ll", "'LL", "'re", "'Ve", "'d", "'m", "'t", "\x00", "\u00ad", "\ufeff", "\U000E0001",
}

func randomPretokText(rng *rand.Rand) string {
	var sb strings.Builder
	for j := rng.IntN(16); j >= 0; j-- {
		sb.WriteString(pretokAlphabet[rng.IntN(len(pretokAlphabet))])
	}
	return sb.String()
}

func TestPreTokenizersMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 3000
	if testing.Short() || raceEnabled {
		n = 300
	}
	for name := range refPre {
		for i := 0; i < n; i++ {
			text := randomPretokText(rng)
			require.Equal(t, refSplit(name, text), preSplit(t, name, text), "%s: %q", name, text)
		}
	}
}

func TestPreTokenizerCases(t *testing.T) {
	cases := []struct{ pre, text string }{
		{"llama-bpe", "Hello world 12345 it's IT'S\n\n  x  \r\ny"},
		{"qwen2", "2024-01-16 3.14159"},
		{"deepseek-llm", "naïve café 日本語 가나다 Ελληνικά   "},
		{"deepseek-coder", "def f(x):\n\treturn x**2 # 平方"},
		{"falcon", "a+b<=c 1234567 ==> `x`"},
		{"default", "a+b<=c 1234567 ==> `x`"},
		{"tekken", "HelloWorld ABCdef ÀbcDÉF x/y\n//z"},
	}
	for _, c := range cases {
		words := preSplit(t, c.pre, c.text)
		assert.Equal(t, c.text, strings.Join(words, ""), "%s cuts %q without losing text", c.pre, c.text)
		assert.Equal(t, refSplit(c.pre, c.text), words, "%s: %q", c.pre, c.text)
	}
	_, err := lookupPre("no-such-pre")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"no-such-pre"`)
	_, err = lookupPre("chameleon")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not implemented")
}

// rangesRegexp writes code point ranges as the body of a regexp character class.
func rangesRegexp(ranges [][2]rune) string {
	var sb strings.Builder
	for _, r := range ranges {
		fmt.Fprintf(&sb, `\x{%X}-\x{%X}`, r[0], r[1])
	}
	return sb.String()
}
