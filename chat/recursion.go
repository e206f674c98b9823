package chat

import (
	"fmt"
	"regexp"
	"strings"
)

var (
	tagRE       = regexp.MustCompile(`(?s)\{%-?\s*(.*?)\s*-?%\}`)
	macroRE     = regexp.MustCompile(`^macro\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(([^)]*)\)`)
	setRE       = regexp.MustCompile(`^set\s+([A-Za-z_][A-Za-z0-9_]*)`)
	forRE       = regexp.MustCompile(`^for\s+([A-Za-z_][A-Za-z0-9_,\s]*?)\s+in\s`)
	callRE      = regexp.MustCompile(`([.|]?)\s*\b([A-Za-z_][A-Za-z0-9_]*)\s*\(`)
	stringRE    = regexp.MustCompile(`(?s)"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	identRE     = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	recursiveRE = regexp.MustCompile(`^for\b.*\brecursive\s*$`)
	exprRE      = regexp.MustCompile(`(?s)\{\{-?(.*?)-?\}\}|\{%-?(.*?)-?%\}`)
	testRE      = regexp.MustCompile(`\bis\s+(not\s+)?[A-Za-z_][A-Za-z0-9_]*`)
)

// names that may be called inside a macro: the engine's global functions, and keywords
// that may stand before a parenthesis.
var callable = map[string]bool{"range": true, "namespace": true, "raise_exception": true, "joiner": true,
	"dict": true, "cycler": true, "strftime_now": true,
	"if": true, "elif": true, "and": true, "or": true, "not": true, "in": true, "is": true, "else": true,
	"return": true, "for": true, "set": true}

// checkRecursion rejects templates that could call a macro from within itself, directly
// or not, and recursive for loops: the Jinja engine has no depth limit, and a Go stack
// overflow ends the process. It is conservative: inside a macro, only the engine's
// functions and macros defined earlier may be called (no caller()), and no name of a macro
// may be assigned, looped over or used as a parameter anywhere.
func checkRecursion(src string) error {
	type macro struct {
		name       string
		start, end int // body, in src
	}
	var macros []macro
	var open []int
	tags := tagRE.FindAllStringSubmatchIndex(src, -1)
	names := map[string]int{}
	for _, tg := range tags {
		body := src[tg[2]:tg[3]]
		if recursiveRE.MatchString(body) {
			return fmt.Errorf("recursive for loops are not supported (they could recurse without end)")
		}
		if m := macroRE.FindStringSubmatch(body); m != nil {
			if _, dup := names[m[1]]; dup {
				return fmt.Errorf("macro %q is defined twice", m[1])
			}
			names[m[1]] = len(macros)
			macros = append(macros, macro{name: m[1], start: tg[1]})
			open = append(open, len(macros)-1)
			continue
		}
		if strings.HasPrefix(body, "endmacro") && len(open) > 0 {
			macros[open[len(open)-1]].end = tg[0]
			open = open[:len(open)-1]
		}
	}
	if len(macros) == 0 {
		return nil
	}
	for _, tg := range tags {
		body := src[tg[2]:tg[3]]
		var bound []string
		if m := setRE.FindStringSubmatch(body); m != nil {
			bound = append(bound, m[1])
		}
		if m := forRE.FindStringSubmatch(body); m != nil {
			bound = append(bound, identRE.FindAllString(m[1], -1)...)
		}
		if m := macroRE.FindStringSubmatch(body); m != nil {
			for _, p := range strings.Split(m[2], ",") {
				if id := identRE.FindString(p); id != "" {
					bound = append(bound, id)
				}
			}
		}
		for _, b := range bound {
			if _, ok := names[b]; ok {
				return fmt.Errorf("the name of macro %q is reassigned or reused as a variable: rename one of them", b)
			}
		}
	}
	for i, m := range macros {
		if m.end == 0 {
			return fmt.Errorf("macro %q has no endmacro", m.name)
		}
		var code strings.Builder
		for _, e := range exprRE.FindAllStringSubmatch(src[m.start:m.end], -1) {
			code.WriteString(e[1] + e[2] + "\n")
		}
		text := testRE.ReplaceAllString(stringRE.ReplaceAllString(code.String(), `""`), "is test")
		for _, c := range callRE.FindAllStringSubmatch(text, -1) {
			if c[1] != "" || callable[c[2]] {
				continue // a method, a filter, or an engine function
			}
			if j, ok := names[c[2]]; ok && j < i {
				continue // an earlier macro
			}
			return fmt.Errorf("macro %q calls %s(): only the engine's functions and macros defined before it may be called from a macro (recursion is not supported)", m.name, c[2])
		}
	}
	return nil
}
