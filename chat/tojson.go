package chat

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
)

// The Jinja engine (v1.8.0) prints tojson(indent=N) with its keys sorted and <, >, &
// escaped, where Hugging Face's tojson (Python's json.dumps(ensure_ascii=False,
// indent=N)) keeps the order and the characters. Llama 3.x templates print tool
// definitions that way, so New rewrites the common form {{ EXPR | tojson(indent=N) }}
// (EXPR without a filter) into a call of our own encoder, __tojson_indent(EXPR, N).
var tojsonIndentRE = regexp.MustCompile(`\{\{(-?)([^{}|]*?)\|\s*tojson\(\s*indent\s*=\s*(\d+)\s*\)\s*(-?)\}\}`)

func rewriteTojsonIndent(src string) string {
	return tojsonIndentRE.ReplaceAllString(src, "{{$1 __tojson_indent($2, $3) $4}}")
}

var tojsonIndent = jinja.NewCallable("__tojson_indent", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) != 2 || !args[1].IsInt() {
		return jinja.Undefined(), fmt.Errorf("tojson: expected a value and an indent")
	}
	var sb strings.Builder
	if err := writeJSONIndent(&sb, args[0], strings.Repeat(" ", int(min(max(args[1].AsInt(), 0), 16))), "", 0); err != nil {
		return jinja.Undefined(), err
	}
	return jinja.NewString(sb.String()), nil
})

// writeJSONIndent writes v as Python's json.dumps(v, ensure_ascii=False, indent=...)
// does.
func writeJSONIndent(sb *strings.Builder, v jinja.Value, indent, prefix string, depth int) error {
	if depth > 256 {
		return fmt.Errorf("tojson: value nested deeper than 256 levels")
	}
	inner := prefix + indent
	switch {
	case v.IsDict():
		d := v.AsDict()
		keys := d.OrderedKeys()
		if len(keys) == 0 {
			sb.WriteString("{}")
			return nil
		}
		sb.WriteString("{")
		for i, k := range keys {
			if i > 0 {
				sb.WriteString(",")
			}
			sb.WriteString("\n" + inner)
			writePyString(sb, k)
			sb.WriteString(": ")
			x, _ := d.Get(k)
			if err := writeJSONIndent(sb, x, indent, inner, depth+1); err != nil {
				return err
			}
		}
		sb.WriteString("\n" + prefix + "}")
	case v.IsList():
		items := v.AsList().Items
		if len(items) == 0 {
			sb.WriteString("[]")
			return nil
		}
		sb.WriteString("[")
		for i, x := range items {
			if i > 0 {
				sb.WriteString(",")
			}
			sb.WriteString("\n" + inner)
			if err := writeJSONIndent(sb, x, indent, inner, depth+1); err != nil {
				return err
			}
		}
		sb.WriteString("\n" + prefix + "]")
	case v.IsString():
		writePyString(sb, v.AsString())
	case v.IsBool():
		sb.WriteString(strconv.FormatBool(v.AsBool()))
	case v.IsInt():
		sb.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		f := v.AsFloat()
		switch {
		case math.IsNaN(f):
			sb.WriteString("NaN")
		case math.IsInf(f, 1):
			sb.WriteString("Infinity")
		case math.IsInf(f, -1):
			sb.WriteString("-Infinity")
		default:
			s := strconv.FormatFloat(f, 'g', -1, 64)
			if !strings.ContainsAny(s, ".eEn") {
				s += ".0" // Python writes 1.0
			}
			sb.WriteString(s)
		}
	default:
		sb.WriteString("null")
	}
	return nil
}

// writePyString writes s as a JSON string the way Python does with ensure_ascii=False.
func writePyString(sb *strings.Builder, s string) {
	sb.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch r {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		case '\b':
			sb.WriteString(`\b`)
		case '\f':
			sb.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(sb, `\u%04x`, r)
			} else {
				sb.WriteRune(r)
			}
		}
	}
	sb.WriteByte('"')
}
