package grammar

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// maxIntDigits is how many digits the integer rules allow (as JSONGrammar).
const maxIntDigits = 16

// intBound reads an integer bound of a schema: minimum/maximum (inclusive) or
// exclusiveMinimum/exclusiveMaximum, rounded inward. ok is false when absent.
func intBound(s jsonObject, path string, lower bool) (v int64, ok bool, err error) {
	incl, excl := "maximum", "exclusiveMaximum"
	if lower {
		incl, excl = "minimum", "exclusiveMinimum"
	}
	limit := math.Pow10(maxIntDigits)
	read := func(key string) (*big.Float, bool, error) {
		x, has := s.get(key)
		if !has {
			return nil, false, nil
		}
		n, isNum := x.(json.Number)
		f, _, perr := big.ParseFloat(string(n), 10, 128, big.ToNearestEven)
		if !isNum || perr != nil {
			return nil, false, schemaErr(path, "%s must be a number (the boolean form of draft 4 is not supported)", key)
		}
		if fv, _ := f.Float64(); math.Abs(fv) >= limit {
			return nil, false, schemaErr(path, "%s %s has more than %d digits", key, n, maxIntDigits)
		}
		return f, true, nil
	}
	for _, k := range []struct {
		key       string
		exclusive bool
	}{{incl, false}, {excl, true}} {
		f, has, err := read(k.key)
		if err != nil {
			return 0, false, err
		}
		if !has {
			continue
		}
		var r int64
		i, acc := f.Int64() // truncates toward zero
		switch {
		case lower && (acc == big.Below || k.exclusive && acc == big.Exact):
			r = i + 1 // f > i (or exclusive of an integer)
		case !lower && (acc == big.Above || k.exclusive && acc == big.Exact):
			r = i - 1
		default:
			r = i
		}
		if !ok || lower && r > v || !lower && r < v {
			v, ok = r, true
		}
	}
	return v, ok, nil
}

// intRangeGBNF returns a GBNF expression for the JSON integers in [lo, hi] (hasLo/hasHi
// false: unbounded on that side), at most maxIntDigits digits.
func intRangeGBNF(lo int64, hasLo bool, hi int64, hasHi bool) (string, error) {
	maxAbs := int64(math.Pow10(maxIntDigits)) - 1
	if !hasLo {
		lo = -maxAbs
	}
	if !hasHi {
		hi = maxAbs
	}
	if lo > hi {
		return "", fmt.Errorf("the range [%d, %d] is empty", lo, hi)
	}
	var alts []string
	if lo < 0 { // negative part: "-" then magnitudes in [max(1,-hi), -lo]
		a, b := max(1, -min(hi, -1)), -lo
		for _, p := range magnitudes(a, b) {
			alts = append(alts, `"-" `+p)
		}
	}
	if hi >= 0 {
		alts = append(alts, magnitudes(max(lo, 0), hi)...)
	}
	return "( " + strings.Join(alts, " | ") + " )", nil
}

// magnitudes returns sequences matching the decimal numbers in [a, b] (0 ≤ a ≤ b), without
// leading zeros.
func magnitudes(a, b int64) []string {
	var out []string
	sa, sb := strconv.FormatInt(a, 10), strconv.FormatInt(b, 10)
	for l := len(sa); l <= len(sb); l++ {
		lo, hi := sa, sb
		if l > len(sa) {
			lo = "1" + strings.Repeat("0", l-1)
		}
		if l < len(sb) {
			hi = strings.Repeat("9", l)
		}
		out = append(out, sameLength(lo, hi)...)
	}
	return out
}

// sameLength returns sequences of character classes matching the numbers from lo to hi,
// both with the same number of digits.
func sameLength(lo, hi string) []string {
	if lo == hi {
		return []string{`"` + lo + `"`}
	}
	digit := func(x, y byte) string {
		if x == y {
			return `"` + string(x) + `"`
		}
		if x == '0' && y == '9' {
			return "[0-9]"
		}
		return "[" + string(x) + "-" + string(y) + "]"
	}
	if len(lo) == 1 {
		return []string{digit(lo[0], hi[0])}
	}
	rest := len(lo) - 1
	any := func() string {
		if rest == 1 {
			return " [0-9]"
		}
		return fmt.Sprintf(" [0-9]{%d}", rest)
	}
	if lo[0] == hi[0] {
		var out []string
		for _, s := range sameLength(lo[1:], hi[1:]) {
			out = append(out, digit(lo[0], lo[0])+" "+s)
		}
		return out
	}
	var out []string
	first, last := lo[0], hi[0]
	if strings.Trim(lo[1:], "0") != "" {
		for _, s := range sameLength(lo[1:], strings.Repeat("9", rest)) {
			out = append(out, digit(lo[0], lo[0])+" "+s)
		}
		first++
	}
	tail := strings.Trim(hi[1:], "9") != ""
	if tail {
		last--
	}
	if first <= last {
		out = append(out, digit(first, last)+any())
	}
	if tail {
		for _, s := range sameLength(strings.Repeat("0", rest), hi[1:]) {
			out = append(out, digit(hi[0], hi[0])+" "+s)
		}
	}
	return out
}
