package server

// This file reads the tools and tool_choice of a chat request: which functions exist,
// whether the output is parsed for a call, and, for tool_choice "required" or a named
// function, the grammar that makes the model write a call.

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ggml-go/ggml/grammar"
)

// toolPlan says what to do with tool calls for one request.
type toolPlan struct {
	names   []string         // the functions of tools
	parse   bool             // look for a call in the output (tools given, tool_choice not "none")
	grammar *grammar.Grammar // forces a call (tool_choice "required" or a named function)
}

type toolDef struct {
	Type     string `json:"type"`
	Function *struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// planTools checks tools and tool_choice and returns the plan.
func planTools(tools []json.RawMessage, choice json.RawMessage) (toolPlan, *APIError) {
	var p toolPlan
	params := map[string]json.RawMessage{}
	for i, raw := range tools {
		var t toolDef
		if err := json.Unmarshal(raw, &t); err != nil || t.Function == nil || t.Function.Name == "" || (t.Type != "" && t.Type != "function") {
			return p, badRequest("tools", "tools[%d] must be {\"type\": \"function\", \"function\": {\"name\": ..., \"parameters\": {...}}}", i)
		}
		if _, dup := params[t.Function.Name]; dup {
			return p, badRequest("tools", "tools[%d]: function %q is defined twice", i, t.Function.Name)
		}
		p.names = append(p.names, t.Function.Name)
		params[t.Function.Name] = t.Function.Parameters
	}
	mode, forced := "auto", ""
	switch c := bytes.TrimSpace(choice); {
	case len(c) == 0 || string(c) == "null":
		if len(tools) == 0 {
			mode = "none"
		}
	case c[0] == '"':
		json.Unmarshal(c, &mode)
		if mode != "none" && mode != "auto" && mode != "required" {
			return p, badRequest("tool_choice", "tool_choice %q: use \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}", mode)
		}
	default:
		var named struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if err := json.Unmarshal(c, &named); err != nil || named.Function.Name == "" {
			return p, badRequest("tool_choice", "tool_choice must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}")
		}
		if _, ok := params[named.Function.Name]; !ok {
			return p, badRequest("tool_choice", "tool_choice names function %q, which is not in tools", named.Function.Name)
		}
		mode, forced = "named", named.Function.Name
	}
	if len(tools) == 0 {
		if mode == "required" || mode == "named" {
			return p, badRequest("tool_choice", "tool_choice is %s but the request has no tools", string(bytes.TrimSpace(choice)))
		}
		return p, nil // "auto" or "none" without tools: plain text
	}
	p.parse = mode != "none"
	if mode != "required" && mode != "named" {
		return p, nil
	}
	names := p.names
	if forced != "" {
		names = []string{forced}
	}
	schema, err := callSchema(names, params)
	if err != nil {
		return p, badRequest("tools", "%v", err)
	}
	g, err := compactJSONGrammar(schema)
	if err != nil {
		return p, badRequest("tools", "the parameters of the tools cannot be enforced for tool_choice %s: %v", string(bytes.TrimSpace(choice)), err)
	}
	p.grammar = g
	return p, nil
}

// compactJSONGrammar is the grammar of schema with at most one space between JSON tokens
// (the schema grammar allows up to 20 characters of space, tab or newline): a call's JSON
// needs no layout, and a weak model would otherwise spend its token budget on white space.
func compactJSONGrammar(schema []byte) (*grammar.Grammar, error) {
	src, err := grammar.JSONSchemaGBNF(schema)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "ws ::=") {
			lines[i] = `ws ::= " "?`
		}
	}
	return grammar.Parse(strings.Join(lines, "\n"))
}

// callSchema is the JSON schema of a call to one of names: {"name": N, "arguments": {...}}.
func callSchema(names []string, params map[string]json.RawMessage) ([]byte, error) {
	alts := make([]any, 0, len(names))
	for _, n := range names {
		var args any = map[string]any{"type": "object"}
		if ps := bytes.TrimSpace(params[n]); len(ps) > 0 && string(ps) != "null" {
			args = json.RawMessage(ps)
		}
		alts = append(alts, map[string]any{
			"type":                 "object",
			"properties":           orderedProps{{"name", map[string]any{"const": n}}, {"arguments", args}},
			"required":             []string{"name", "arguments"},
			"additionalProperties": false,
		})
	}
	if len(alts) == 1 {
		return json.Marshal(alts[0])
	}
	return json.Marshal(map[string]any{"anyOf": alts})
}

// orderedProps marshals as a JSON object with the keys in order (name before arguments).
type orderedProps []struct {
	k string
	v any
}

func (o orderedProps) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.k)
		v, err := json.Marshal(kv.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
