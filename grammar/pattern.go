package grammar

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode"
)

// patternGBNF converts a JSON Schema pattern (a regular expression that the decoded
// string must contain, anchored with ^ and $ where it must match all of it) into GBNF for
// the JSON-encoded string, quotes included. It uses the RE2 syntax of Go's regexp/syntax,
// which covers the patterns schemas commonly use (classes, groups, alternation,
// repetition, anchors); other constructs (word boundaries, anchors inside the pattern)
// are errors. Characters that JSON escapes (", \, control characters) are matched in
// their escaped form (a control character as its short escape, if it has one, or \u00XX
// in either case; other characters only as themselves).
func (c *schemaConv) patternGBNF(pattern, path string) (string, error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", schemaErr(path, "pattern %q is not a regular expression this converter reads: %v", pattern, err)
	}
	re = re.Simplify()
	startAnchored, endAnchored := false, false
	if re.Op == syntax.OpConcat && len(re.Sub) > 0 {
		if op := re.Sub[0].Op; op == syntax.OpBeginText || op == syntax.OpBeginLine {
			startAnchored = true
			re.Sub = re.Sub[1:]
		}
		if n := len(re.Sub); n > 0 {
			if op := re.Sub[n-1].Op; op == syntax.OpEndText || op == syntax.OpEndLine {
				endAnchored = true
				re.Sub = re.Sub[:n-1]
			}
		}
	} else if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		re = &syntax.Regexp{Op: syntax.OpEmptyMatch}
	}
	body, err := regexGBNF(re, 0)
	if err != nil {
		return "", schemaErr(path, "pattern %q: %v", pattern, err)
	}
	c.use("string")
	if strings.Contains(body, "char-no-nl") {
		c.use("char-no-nl")
	}
	out := `"\""`
	if !startAnchored {
		out += " char*"
	}
	out += " " + body
	if !endAnchored {
		out += " char*"
	}
	return out + ` "\""`, nil
}

func regexGBNF(re *syntax.Regexp, depth int) (string, error) {
	if depth > 200 {
		return "", fmt.Errorf("nested too deeply")
	}
	sub := func(i int) (string, error) { return regexGBNF(re.Sub[i], depth+1) }
	switch re.Op {
	case syntax.OpEmptyMatch:
		return `""`, nil
	case syntax.OpLiteral:
		var parts []string
		for _, r := range re.Rune {
			if re.Flags&syntax.FoldCase != 0 {
				parts = append(parts, classGBNF(foldRanges(r)))
			} else {
				parts = append(parts, classGBNF([]rune{r, r}))
			}
		}
		return strings.Join(parts, " "), nil
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return "", fmt.Errorf("an empty character class matches nothing")
		}
		return classGBNF(re.Rune), nil
	case syntax.OpAnyChar:
		return "char", nil
	case syntax.OpAnyCharNotNL:
		return "char-no-nl", nil
	case syntax.OpCapture:
		s, err := sub(0)
		return "( " + s + " )", err
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		s, err := sub(0)
		op := map[syntax.Op]string{syntax.OpStar: "*", syntax.OpPlus: "+", syntax.OpQuest: "?"}[re.Op]
		return "( " + s + " )" + op, err
	case syntax.OpRepeat:
		s, err := sub(0)
		if re.Min > maxRepeat || re.Max > maxRepeat {
			return "", fmt.Errorf("repetition {%d,%d} is above the limit %d", re.Min, re.Max, maxRepeat)
		}
		return "( " + s + " )" + repetition(re.Min, re.Max >= 0, re.Max), err
	case syntax.OpConcat, syntax.OpAlternate:
		var parts []string
		for i := range re.Sub {
			s, err := sub(i)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		if re.Op == syntax.OpConcat {
			return strings.Join(parts, " "), nil
		}
		return "( " + strings.Join(parts, " | ") + " )", nil
	}
	return "", fmt.Errorf("%s is not supported in patterns", opName(re))
}

func opName(re *syntax.Regexp) string {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpBeginText:
		return "^ inside the pattern"
	case syntax.OpEndLine, syntax.OpEndText:
		return "$ inside the pattern"
	case syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return `\b and \B`
	}
	return re.String()
}

// foldRanges returns the case variants of r as ranges.
func foldRanges(r rune) []rune {
	out := []rune{r, r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		out = append(out, f, f)
	}
	return out
}

// classGBNF writes a class of code points (pairs lo, hi) as GBNF over JSON-encoded text.
func classGBNF(ranges []rune) string {
	var plain []rune
	quote, backslash := false, false
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		lo = max(lo, 0x20) // control characters are escaped (controlsIn)
		for _, special := range []rune{'"', '\\'} {
			if lo <= special && special <= hi {
				if special == '"' {
					quote = true
				} else {
					backslash = true
				}
			}
		}
		// split around " and \
		for lo <= hi {
			end := hi
			for _, special := range []rune{'"', '\\'} {
				if lo <= special && special <= end {
					end = special - 1
				}
			}
			if end >= lo {
				plain = append(plain, lo, end)
			}
			next := end + 2 // skip the special character
			if end == hi {
				break
			}
			lo = next
		}
	}
	var alts []string
	if len(plain) > 0 {
		cs := newCharSet(plain, false)
		if cp, ok := cs.single(); ok {
			alts = append(alts, `"`+escapeRune(cp, false)+`"`)
		} else {
			alts = append(alts, cs.String())
		}
	}
	if quote {
		alts = append(alts, `"\\\""`)
	}
	if backslash {
		alts = append(alts, `"\\\\"`)
	}
	if controls := controlsIn(ranges); len(controls) > 0 {
		alts = append(alts, controlEscapes(controls))
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return "( " + strings.Join(alts, " | ") + " )"
}

// controlsIn returns the control characters (U+0000..U+001F) in ranges.
func controlsIn(ranges []rune) []rune {
	var out []rune
	for cp := rune(0); cp < 0x20; cp++ {
		for i := 0; i+1 < len(ranges); i += 2 {
			if ranges[i] <= cp && cp <= ranges[i+1] {
				out = append(out, cp)
				break
			}
		}
	}
	return out
}

// controlEscapes returns GBNF for the JSON escapes of the control characters cps.
func controlEscapes(cps []rune) string {
	if len(cps) == 0x20 {
		return `"\\" ( [bfnrt] | "u00" [01] [0-9a-fA-F] )`
	}
	short := map[rune]byte{'\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't'}
	var alts []string
	for _, cp := range cps {
		if b, ok := short[cp]; ok {
			alts = append(alts, `"`+string(b)+`"`)
		}
		hex := fmt.Sprintf("%02x", cp)
		lo := hex[1]
		digit := `"` + string(lo) + `"`
		if lo >= 'a' {
			digit = "[" + string(lo) + strings.ToUpper(string(lo)) + "]"
		}
		alts = append(alts, `"u00`+string(hex[0])+`" `+digit)
	}
	return `"\\" ( ` + strings.Join(alts, " | ") + " )"
}
