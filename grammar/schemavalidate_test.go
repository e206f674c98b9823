package grammar

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// validate checks v (decoded with decodeOrdered) against schema s for the subset that
// JSONSchemaGBNF supports; root is the whole schema for $ref. It is written for the tests,
// independently of the converter.
func validate(root, s, v any) error {
	switch s := s.(type) {
	case bool:
		if !s {
			return fmt.Errorf("false schema")
		}
		return nil
	case jsonObject:
		return validateObj(root, s, v)
	}
	return fmt.Errorf("bad schema")
}

var (
	dateRE = regexp.MustCompile(`^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$`)
	timeRE = regexp.MustCompile(`^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$`)
	uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
)

func validateObj(root any, s jsonObject, v any) error {
	if r, ok := s.get("$ref"); ok {
		ref := r.(string)
		target := root
		if ref != "#" {
			parts := strings.SplitN(ref[2:], "/", 2)
			defs, _ := root.(jsonObject).get(parts[0])
			target, _ = defs.(jsonObject).get(parts[1])
		}
		return validate(root, target, v)
	}
	if c, ok := s.get("const"); ok && string(appendJSON(nil, c)) != string(appendJSON(nil, canon(v))) {
		return fmt.Errorf("not the const")
	}
	if e, ok := s.get("enum"); ok {
		found := false
		for _, x := range e.([]any) {
			if string(appendJSON(nil, x)) == string(appendJSON(nil, canon(v))) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("not in enum")
		}
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := s.get(kw); ok {
			n := 0
			for _, sub := range list.([]any) {
				if validate(root, sub, v) == nil {
					n++
				}
			}
			if n == 0 || kw == "allOf" && n != len(list.([]any)) {
				return fmt.Errorf("%s fails", kw)
			}
		}
	}
	if t, ok := s.get("type"); ok {
		var types []any
		if ts, ok := t.(string); ok {
			types = []any{ts}
		} else {
			types = t.([]any)
		}
		okType := false
		for _, t := range types {
			if hasType(t.(string), v) {
				okType = true
			}
		}
		if !okType {
			return fmt.Errorf("wrong type %T for %v", v, types)
		}
	}
	switch v := v.(type) {
	case string:
		n := utf8.RuneCountInString(v)
		if lo, ok := s.get("minLength"); ok && int64(n) < num(lo) {
			return fmt.Errorf("too short")
		}
		if hi, ok := s.get("maxLength"); ok && int64(n) > num(hi) {
			return fmt.Errorf("too long")
		}
		if p, ok := s.get("pattern"); ok && !regexp.MustCompile(p.(string)).MatchString(v) {
			return fmt.Errorf("%q does not match %s", v, p)
		}
		if f, ok := s.get("format"); ok {
			re := map[string]*regexp.Regexp{"date": dateRE, "time": timeRE, "uuid": uuidRE}[f.(string)]
			if f == "date-time" {
				d, t, _ := strings.Cut(v, "T")
				if !dateRE.MatchString(d) || !timeRE.MatchString(t) {
					return fmt.Errorf("bad date-time %q", v)
				}
			} else if !re.MatchString(v) {
				return fmt.Errorf("bad %s %q", f, v)
			}
		}
	case json.Number:
		f, _ := v.Float64()
		for _, b := range []struct {
			key string
			bad func(x, b float64) bool
		}{{"minimum", func(x, b float64) bool { return x < b }}, {"maximum", func(x, b float64) bool { return x > b }},
			{"exclusiveMinimum", func(x, b float64) bool { return x <= b }}, {"exclusiveMaximum", func(x, b float64) bool { return x >= b }}} {
			if lim, ok := s.get(b.key); ok {
				l, _ := lim.(json.Number).Float64()
				if b.bad(f, l) {
					return fmt.Errorf("%v violates %s %v", v, b.key, l)
				}
			}
		}
	case []any:
		if lo, ok := s.get("minItems"); ok && int64(len(v)) < num(lo) {
			return fmt.Errorf("too few items")
		}
		if hi, ok := s.get("maxItems"); ok && int64(len(v)) > num(hi) {
			return fmt.Errorf("too many items")
		}
		if it, ok := s.get("items"); ok {
			for _, x := range v {
				if err := validate(root, it, x); err != nil {
					return fmt.Errorf("item: %w", err)
				}
			}
		}
	case jsonObject:
		props, _ := s.get("properties")
		p, _ := props.(jsonObject)
		seen := map[string]bool{}
		for _, m := range v {
			seen[m.key] = true
			if ps, ok := p.get(m.key); ok {
				if err := validate(root, ps, m.val); err != nil {
					return fmt.Errorf("property %s: %w", m.key, err)
				}
				continue
			}
			addl, has := s.get("additionalProperties")
			if !has && props != nil || addl == false {
				return fmt.Errorf("additional property %q", m.key)
			}
			if has && addl != true {
				if err := validate(root, addl, m.val); err != nil {
					return err
				}
			}
		}
		if r, ok := s.get("required"); ok {
			for _, k := range r.([]any) {
				if !seen[k.(string)] {
					return fmt.Errorf("missing %s", k)
				}
			}
		}
	}
	return nil
}

func num(x any) int64 { n, _ := x.(json.Number).Int64(); return n }

// canon turns numbers into their shortest form so that 1.0 and 1 compare equal... the
// grammar emits the schema's own spelling, so the text is compared as is.
func canon(v any) any { return v }

func hasType(t string, v any) bool {
	switch v := v.(type) {
	case string:
		return t == "string"
	case json.Number:
		if t == "number" {
			return true
		}
		return t == "integer" && !strings.ContainsAny(string(v), ".eE")
	case bool:
		return t == "boolean"
	case nil:
		return t == "null"
	case []any:
		return t == "array"
	case jsonObject:
		return t == "object"
	}
	return false
}
