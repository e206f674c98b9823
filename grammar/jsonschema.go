package grammar

import (
	"encoding/json"
	"fmt"
	"strings"
)

// JSONSchemaGBNF converts a JSON Schema to GBNF text whose sentences are the JSON texts the
// schema accepts (within the supported subset) in this package's whitespace policy: between
// tokens, at most 20 characters of space, tab or newline. Object members come in a fixed
// order: the required properties first, in the order the schema lists them, then the
// optional ones in their order, each present or not, then additional members if allowed.
//
// Supported: type (one or a list) string, number, integer, boolean, null, object, array;
// properties, required, additionalProperties (false when properties are given and it is
// absent, as llama.cpp does; true or a schema allows further members after the listed
// ones, whose keys are not checked against the listed ones); items, minItems, maxItems;
// enum, const; anyOf, oneOf (generated as anyOf: a value may fit several branches); allOf
// with one schema; $ref to "#", "#/$defs/…" and "#/definitions/…" (recursion included);
// minLength and maxLength of strings; pattern (RE2 syntax, see patternGBNF); format
// date, time, date-time and uuid; minimum,
// maximum, exclusiveMinimum and exclusiveMaximum of integers (up to 16 digits). Annotations
// (title, description, default, examples, $schema, $id, $comment, deprecated, readOnly,
// writeOnly) are ignored. Any other keyword is an error that names it, rather than a
// grammar that would silently accept more than the schema.
func JSONSchemaGBNF(schema []byte) (string, error) {
	doc, err := decodeOrdered(schema)
	if err != nil {
		return "", fmt.Errorf("grammar: the JSON schema is not valid JSON: %w", err)
	}
	c := &schemaConv{doc: doc, rules: map[string]string{}, refs: map[string]string{}}
	c.use0("ws")
	expr, err := c.convert(doc, "root-value", "#")
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "root ::= ws %s ws\n", expr)
	for _, name := range c.order {
		fmt.Fprintf(&sb, "%s ::= %s\n", name, c.rules[name])
	}
	return sb.String(), nil
}

// FromJSONSchema compiles the grammar of JSONSchemaGBNF.
func FromJSONSchema(schema []byte) (*Grammar, error) {
	text, err := JSONSchemaGBNF(schema)
	if err != nil {
		return nil, err
	}
	g, err := Parse(text)
	if err != nil {
		return nil, fmt.Errorf("grammar: the schema's grammar does not compile (a $ref cycle that matches nothing first?): %w", err)
	}
	return g, nil
}

// primitive rules, added to a schema's grammar when used
var schemaPrimitives = map[string]string{
	"ws":         `( " " | "\n" [ \t]{0,20} )?`,
	"value":      `object | array | string | number | boolean | null`,
	"object":     `"{" ws ( string ws ":" ws value ( ws "," ws string ws ":" ws value )* ws )? "}"`,
	"array":      `"[" ws ( value ( ws "," ws value )* ws )? "]"`,
	"string":     `"\"" char* "\""`,
	"char":       `[^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )`,
	"char-no-nl": `[^"\\\x00-\x1F] | "\\" ( ["\\/bfrt] | "u" ( [1-9a-fA-F] [0-9a-fA-F]{3} | "0" [1-9a-fA-F] [0-9a-fA-F]{2} | "00" [1-9a-fA-F] [0-9a-fA-F] | "000" [0-9b-fB-F] ) )`,
	"number":     `"-"? ( "0" | [1-9] [0-9]{0,15} ) ( "." [0-9]+ )? ( [eE] [-+]? [0-9]+ )?`,
	"integer":    `"-"? ( "0" | [1-9] [0-9]{0,15} )`,
	"boolean":    `"true" | "false"`,
	"null":       `"null"`,
	"date":       `[0-9]{4} "-" ( "0" [1-9] | "1" [0-2] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] )`,
	"time":       `( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,9} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )`,
	"date-time":  `date "T" time`,
	"uuid":       `[0-9a-fA-F]{8} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{4} "-" [0-9a-fA-F]{12}`,
}

var primitiveDeps = map[string][]string{
	"value":     {"object", "array", "string", "number", "boolean", "null"},
	"object":    {"string", "ws", "value"},
	"array":     {"value", "ws"},
	"string":    {"char"},
	"date-time": {"date", "time"},
}

var schemaAnnotations = map[string]bool{"title": true, "description": true, "default": true, "examples": true,
	"$schema": true, "$id": true, "$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
	"$defs": true, "definitions": true}

var schemaKeywords = map[string]bool{"type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "minItems": true, "maxItems": true, "enum": true, "const": true, "anyOf": true, "oneOf": true,
	"allOf": true, "$ref": true, "minLength": true, "maxLength": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "pattern": true}

type schemaConv struct {
	doc   any
	rules map[string]string
	order []string
	refs  map[string]string // $ref → rule name
}

func (c *schemaConv) use(name string) string {
	if _, ok := c.rules[name]; !ok {
		c.rules[name] = schemaPrimitives[name]
		c.order = append(c.order, name)
		for _, d := range primitiveDeps[name] {
			c.use(d)
		}
	}
	return name
}

func (c *schemaConv) use0(name string) {
	if _, ok := c.rules[name]; !ok {
		c.rules[name] = schemaPrimitives[name]
		c.order = append(c.order, name)
	}
}

// rule adds a rule with a name derived from hint and returns the name.
func (c *schemaConv) rule(hint, body string) string {
	name := c.freshName(hint)
	c.rules[name] = body
	c.order = append(c.order, name)
	return name
}

func (c *schemaConv) freshName(hint string) string {
	var sb strings.Builder
	for _, r := range hint {
		if r < 128 && isWordByte(byte(r)) {
			sb.WriteRune(r)
		} else {
			sb.WriteByte('-')
		}
	}
	base := sb.String()
	if base == "" || base == "root" {
		base = "r"
	}
	name := base
	for i := 1; ; i++ {
		if _, taken := c.rules[name]; !taken {
			if _, prim := schemaPrimitives[name]; !prim {
				return name
			}
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

func schemaErr(path, format string, args ...any) error {
	return fmt.Errorf("grammar: JSON schema at %s: %s", path, fmt.Sprintf(format, args...))
}

// literal returns a GBNF literal for text.
func literal(text string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range text {
		sb.WriteString(escapeRune(r, false))
	}
	sb.WriteByte('"')
	return sb.String()
}

func (c *schemaConv) convert(s any, hint, path string) (string, error) {
	switch s := s.(type) {
	case bool:
		if s {
			return c.use("value"), nil
		}
		return "", schemaErr(path, "the schema false allows no value")
	case jsonObject:
		return c.convertObject(s, hint, path)
	}
	return "", schemaErr(path, "a schema must be an object or a boolean, not %s", appendJSON(nil, s))
}

func (c *schemaConv) convertObject(s jsonObject, hint, path string) (string, error) {
	for _, m := range s {
		if !schemaKeywords[m.key] && !schemaAnnotations[m.key] {
			return "", schemaErr(path, "keyword %q is not supported: remove it (the grammar would not enforce it) or check the spelling", m.key)
		}
	}
	if ref, ok := s.get("$ref"); ok {
		r, ok := ref.(string)
		if !ok {
			return "", schemaErr(path, "$ref must be a string")
		}
		return c.ref(r, path)
	}
	if v, ok := s.get("const"); ok {
		return literal(string(appendJSON(nil, v))), nil
	}
	if v, ok := s.get("enum"); ok {
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return "", schemaErr(path, "enum must be a non-empty array")
		}
		var alts []string
		for _, x := range list {
			alts = append(alts, literal(string(appendJSON(nil, x))))
		}
		return c.rule(hint, strings.Join(alts, " | ")), nil
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		v, ok := s.get(kw)
		if !ok {
			continue
		}
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return "", schemaErr(path, "%s must be a non-empty array of schemas", kw)
		}
		if kw == "allOf" {
			if len(list) != 1 {
				return "", schemaErr(path, "allOf with %d schemas is not supported (only one): merge them into one schema", len(list))
			}
			return c.convert(list[0], hint, path+"/allOf/0")
		}
		var alts []string
		for i, x := range list {
			e, err := c.convert(x, fmt.Sprintf("%s-%d", hint, i), fmt.Sprintf("%s/%s/%d", path, kw, i))
			if err != nil {
				return "", err
			}
			alts = append(alts, e)
		}
		return c.rule(hint, strings.Join(alts, " | ")), nil
	}
	var types []string
	switch t, _ := s.get("type"); t := t.(type) {
	case nil:
		_, props := s.get("properties")
		_, addl := s.get("additionalProperties")
		_, items := s.get("items")
		switch {
		case props || addl:
			types = []string{"object"}
		case items:
			types = []string{"array"}
		default:
			if _, f := s.get("format"); f {
				types = []string{"string"}
			} else {
				return c.use("value"), nil
			}
		}
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			n, ok := x.(string)
			if !ok {
				return "", schemaErr(path, "type must be a string or an array of strings")
			}
			types = append(types, n)
		}
	default:
		return "", schemaErr(path, "type must be a string or an array of strings")
	}
	var alts []string
	for _, t := range types {
		e, err := c.typed(s, t, hint, path)
		if err != nil {
			return "", err
		}
		alts = append(alts, e)
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return c.rule(hint, strings.Join(alts, " | ")), nil
}

func (c *schemaConv) ref(r, path string) (string, error) {
	if name, ok := c.refs[r]; ok {
		return name, nil
	}
	var target any
	var hint string
	switch {
	case r == "#":
		target, hint = c.doc, "schema"
	case strings.HasPrefix(r, "#/$defs/") || strings.HasPrefix(r, "#/definitions/"):
		parts := strings.SplitN(r[2:], "/", 2)
		name := strings.NewReplacer("~1", "/", "~0", "~").Replace(parts[1])
		root, _ := c.doc.(jsonObject)
		defs, _ := root.get(parts[0])
		defsObj, _ := defs.(jsonObject)
		t, ok := defsObj.get(name)
		if !ok {
			return "", schemaErr(path, "$ref %q: no such definition in %s", r, parts[0])
		}
		target, hint = t, name
	default:
		return "", schemaErr(path, "$ref %q is not supported: only references within the schema to #, #/$defs/NAME or #/definitions/NAME", r)
	}
	name := c.freshName(hint)
	c.refs[r] = name
	c.rules[name] = "" // reserved: recursive references resolve to it
	c.order = append(c.order, name)
	e, err := c.convert(target, name+"-x", r)
	if err != nil {
		return "", err
	}
	c.rules[name] = e
	return name, nil
}

func intKeyword(s jsonObject, key, path string) (int, bool, error) {
	v, ok := s.get(key)
	if !ok {
		return 0, false, nil
	}
	n, isNum := v.(json.Number)
	i, err := n.Int64()
	if !isNum || err != nil || i < 0 || i > maxRepeat {
		return 0, false, schemaErr(path, "%s must be an integer from 0 to %d", key, maxRepeat)
	}
	return int(i), true, nil
}

func repetition(lo int, hasHi bool, hi int) string {
	switch {
	case !hasHi && lo == 0:
		return "*"
	case !hasHi && lo == 1:
		return "+"
	case !hasHi:
		return fmt.Sprintf("{%d,}", lo)
	case lo == hi:
		return fmt.Sprintf("{%d}", lo)
	}
	return fmt.Sprintf("{%d,%d}", lo, hi)
}

func (c *schemaConv) typed(s jsonObject, t, hint, path string) (string, error) {
	_, b1 := s.get("minimum")
	_, b2 := s.get("maximum")
	_, b3 := s.get("exclusiveMinimum")
	_, b4 := s.get("exclusiveMaximum")
	bounded := b1 || b2 || b3 || b4
	switch t {
	case "integer":
		if !bounded {
			return c.use(t), nil
		}
		lo, hasLo, err := intBound(s, path, true)
		if err != nil {
			return "", err
		}
		hi, hasHi, err := intBound(s, path, false)
		if err != nil {
			return "", err
		}
		e, err := intRangeGBNF(lo, hasLo, hi, hasHi)
		if err != nil {
			return "", schemaErr(path, "%v", err)
		}
		return c.rule(hint, e), nil
	case "number":
		if bounded {
			return "", schemaErr(path, "minimum/maximum are supported for integers only: use type integer, or remove the bounds")
		}
		return c.use(t), nil
	case "boolean", "null":
		return c.use(t), nil
	case "string":
		if f, ok := s.get("format"); ok {
			name, _ := f.(string)
			switch name {
			case "date", "time", "date-time", "uuid":
				c.use(name)
				return c.rule(hint, `"\"" `+name+` "\""`), nil
			}
			return "", schemaErr(path, "string format %s is not supported (date, time, date-time and uuid are): remove it", appendJSON(nil, f))
		}
		if p, ok := s.get("pattern"); ok {
			ps, isStr := p.(string)
			if !isStr {
				return "", schemaErr(path, "pattern must be a string")
			}
			if _, l1 := s.get("minLength"); l1 {
				return "", schemaErr(path, "pattern together with minLength/maxLength is not supported: put the length into the pattern")
			}
			if _, l2 := s.get("maxLength"); l2 {
				return "", schemaErr(path, "pattern together with minLength/maxLength is not supported: put the length into the pattern")
			}
			e, err := c.patternGBNF(ps, path)
			if err != nil {
				return "", err
			}
			return c.rule(hint, e), nil
		}
		lo, _, err := intKeyword(s, "minLength", path)
		if err != nil {
			return "", err
		}
		hi, hasHi, err := intKeyword(s, "maxLength", path)
		if err != nil {
			return "", err
		}
		if hasHi && hi < lo {
			return "", schemaErr(path, "maxLength %d is below minLength %d", hi, lo)
		}
		if lo == 0 && !hasHi {
			return c.use("string"), nil
		}
		c.use("string")
		return c.rule(hint, `"\"" char`+repetition(lo, hasHi, hi)+` "\""`), nil
	case "array":
		item := c.use("value")
		if it, ok := s.get("items"); ok {
			if _, isList := it.([]any); isList {
				return "", schemaErr(path, "items as an array (tuple validation) is not supported: use prefixItems-free schemas with one items schema")
			}
			var err error
			if item, err = c.convert(it, hint+"-item", path+"/items"); err != nil {
				return "", err
			}
		}
		lo, _, err := intKeyword(s, "minItems", path)
		if err != nil {
			return "", err
		}
		hi, hasHi, err := intKeyword(s, "maxItems", path)
		if err != nil {
			return "", err
		}
		if hasHi && hi < lo {
			return "", schemaErr(path, "maxItems %d is below minItems %d", hi, lo)
		}
		c.use("ws")
		if hasHi && hi == 0 {
			return c.rule(hint, `"[" ws "]"`), nil
		}
		rest := repetition(max(lo-1, 0), hasHi, max(hi-1, 0))
		body := fmt.Sprintf(`%s ( ws "," ws %s )%s`, item, item, rest)
		if lo == 0 {
			body = "( " + body + " ws )?"
		} else {
			body += " ws"
		}
		return c.rule(hint, `"[" ws `+body+` "]"`), nil
	case "object":
		return c.object(s, hint, path)
	}
	return "", schemaErr(path, "unknown type %q: use string, number, integer, boolean, null, object or array", t)
}
