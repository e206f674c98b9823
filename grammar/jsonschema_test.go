package grammar

import (
	"math/rand/v2"
	"strings"
	"testing"
)

var schemaTables = []struct {
	name   string
	schema string
	accept []string
	reject []string
}{
	{"person", `{"type": "object", "properties": {
		"name": {"type": "string", "minLength": 1, "maxLength": 8},
		"age": {"type": "integer"},
		"email": {"type": "string", "format": "uuid"},
		"tags": {"type": "array", "items": {"enum": ["a", "b", 3]}, "minItems": 1, "maxItems": 2}
	}, "required": ["age", "name"]}`,
		[]string{`{"name": "Ann", "age": 3}`, `{"name":"Bob","age":-1,"tags":["a",3]}`, `{"name":"x","age":0,"email":"0123abcd-0000-1111-2222-333344445555"}`},
		[]string{`{"age": 3}`, `{"name": "", "age": 3}`, `{"name": "Ann", "age": 3.5}`, `{"name":"Ann","age":3,"tags":[]}`, `{"name":"Ann","age":3,"tags":["a","b","a"]}`, `{"name":"Ann","age":3,"x":1}`, `{"name":"123456789","age":1}`}},
	{"optional only", `{"properties": {"a": {"type": "boolean"}, "b": {"type": "null"}, "c": {"const": {"k": [1, "x"]}}}}`,
		[]string{`{}`, `{"a": true}`, `{"b": null}`, `{"a": false, "b": null}`, `{"c": {"k":[1,"x"]}}`, `{"a":true,"c":{"k":[1,"x"]}}`},
		[]string{`{"a": 1}`, `{,"b": null}`, `{"b": null, "a": true}`, `{"a":true,}`}},
	{"additional", `{"type": "object", "properties": {"id": {"type": "integer"}}, "additionalProperties": {"type": "number"}}`,
		[]string{`{}`, `{"id": 1}`, `{"id": 1, "x": 2.5, "y": 3}`, `{"x": 1}`},
		[]string{`{"x": "s"}`, `{"id": "s"}`}},
	{"refs", `{"$ref": "#/$defs/node", "$defs": {"node": {"type": "object", "properties": {
		"value": {"type": "number"}, "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["value"]}}}`,
		[]string{`{"value": 1}`, `{"value": 1, "children": [{"value": 2, "children": []}, {"value": 3e5}]}`},
		[]string{`{"children": []}`, `{"value": 1, "children": [{}]}`}},
	{"anyOf and types", `{"anyOf": [{"type": ["string", "null"]}, {"type": "array", "maxItems": 0}, {"oneOf": [{"type": "integer"}]}]}`,
		[]string{`"x"`, `null`, `[]`, `12`},
		[]string{`[1]`, `true`, `1.5`}},
	{"dates", `{"type": "array", "items": {"anyOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}, {"format": "time"}]}}`,
		[]string{`["2024-01-31", "2024-02-01T10:00:00Z", "23:59:59.5+01:00"]`, `[]`},
		[]string{`["2024-13-01"]`, `["10:00"]`}},
	{"definitions and allOf", `{"definitions": {"color": {"enum": ["red", "green"]}}, "type": "object",
		"properties": {"c": {"allOf": [{"$ref": "#/definitions/color"}], "description": "a color"}}, "required": ["c"]}`,
		[]string{`{"c": "red"}`},
		[]string{`{"c": "blue"}`, `{}`}},
	{"bounded integers", `{"type": "array", "items": {"type": "integer", "minimum": -5, "exclusiveMaximum": 120}, "maxItems": 4}`,
		[]string{`[]`, `[-5, 0, 119]`, `[7]`},
		[]string{`[-6]`, `[120]`, `[1.5]`}},
	{"patterns", `{"type": "object", "properties": {
		"id": {"type": "string", "pattern": "^[A-Z]{2}-\\d{3,4}$"},
		"tag": {"type": "string", "pattern": "x|y\"z"},
		"word": {"type": "string", "pattern": "(?i)^ab+c?$"},
		"odd": {"type": "string", "pattern": "^[^a-z]\\\\.$"}}, "required": ["id", "tag", "word"]}`,
		[]string{`{"id": "AB-123", "tag": "..x..", "word": "aBB"}`, `{"id":"QQ-1234","tag":"y\"z","word":"AbbC","odd":"\"\\x"}`, `{"id":"AB-000","tag":"x","word":"ab","odd":"\u0001\\é"}`},
		[]string{`{"id": "AB-12", "tag": "x", "word": "ab"}`, `{"id": "AB-123", "tag": "q", "word": "ab"}`, `{"id": "AB-123", "tag": "x", "word": "abx"}`, `{"id":"AB-123","tag":"x","word":"ab","odd":"a\\b"}`, `{"id":"AB-123","tag":"x","word":"ab","odd":"1\\\n"}`, `{"id":"AB-123","tag":"x","word":"ab","odd":"1\\\u000A"}`}},
	{"any", `{}`, []string{`1`, `{"a": [null]}`}, []string{`{`}},
}

func TestJSONSchemaTables(t *testing.T) {
	for _, tc := range schemaTables {
		g, err := FromJSONSchema([]byte(tc.schema))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		doc, _ := decodeOrdered([]byte(tc.schema))
		for _, s := range tc.accept {
			if !g.Match(s) {
				text, _ := JSONSchemaGBNF([]byte(tc.schema))
				t.Errorf("%s: rejects %s\n%s", tc.name, s, text)
			}
			v, err := decodeOrdered([]byte(s))
			if err != nil || validate(doc, doc, v) != nil {
				t.Errorf("%s: test validator rejects %s: %v", tc.name, s, validate(doc, doc, v))
			}
		}
		for _, s := range tc.reject {
			if g.Match(s) {
				t.Errorf("%s: accepts %s", tc.name, s)
			}
		}
	}
}

func TestJSONSchemaErrors(t *testing.T) {
	for _, tc := range []struct{ schema, contains string }{
		{`{"type": "number", "multipleOf": 2}`, `keyword "multipleOf"`},
		{`{"type": "string", "pattern": "a\\bc"}`, `not supported in patterns`},
		{`{"type": "string", "pattern": "a^b"}`, `not supported in patterns`},
		{`{"type": "string", "pattern": "(a"}`, `not a regular expression`},
		{`{"type": "string", "pattern": "a", "maxLength": 3}`, `together with minLength`},
		{`{"type": "number", "minimum": 0}`, `integers only`},
		{`{"$ref": "https://example.com/s.json"}`, "only references within the schema"},
		{`{"$ref": "#/$defs/missing"}`, "no such definition"},
		{`{"type": "object", "properties": {"a": {}}, "required": ["b"]}`, `required property "b"`},
		{`{"type": "string", "format": "email"}`, "format"},
		{`{"type": "thing"}`, "unknown type"},
		{`false`, "allows no value"},
		{`{"allOf": [{}, {}]}`, "allOf with 2"},
		{`{"$ref": "#"}`, "left-recursive"},
		{`{"type": "array", "items": [{}]}`, "tuple"},
		{`{"type": "array", "minItems": 3, "maxItems": 2}`, "below"},
		{`[1`, "not valid JSON"},
	} {
		_, err := FromJSONSchema([]byte(tc.schema))
		if err == nil || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%s: got %v, want an error containing %q", tc.schema, err, tc.contains)
		}
	}
}

// Outputs generated under a schema's grammar validate against the schema.
func TestJSONSchemaGenerationValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test-slow runs it")
	}
	v, _ := fakeVocab(t, 3000, 11)
	for _, tc := range schemaTables {
		g := MustParse(mustGBNF(tc.schema))
		doc, _ := decodeOrdered([]byte(tc.schema))
		r := rand.New(rand.NewPCG(3, uint64(len(tc.name))))
		done := 0
		for run := 0; run < 30; run++ {
			s, ended := generate(t, g, v, r, 160, 0.7)
			if !ended {
				continue
			}
			done++
			val, err := decodeOrdered([]byte(s))
			if err != nil {
				t.Errorf("%s: generated %q, not JSON: %v", tc.name, s, err)
				continue
			}
			if err := validate(doc, doc, val); err != nil {
				t.Errorf("%s: generated %q, invalid: %v", tc.name, s, err)
			}
		}
		t.Logf("%s: %d of 30 runs ended", tc.name, done)
		if done < 15 {
			t.Errorf("%s: only %d of 30 runs ended", tc.name, done)
		}
	}
}

func mustGBNF(schema string) string {
	s, err := JSONSchemaGBNF([]byte(schema))
	if err != nil {
		panic(err)
	}
	return s
}
