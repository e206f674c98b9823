package chat

import (
	"bytes"
	"encoding/json"
	"strings"
)

// The markers of the tool-call formats that ParseToolCalls reads.
const (
	// HermesOpen and HermesClose enclose a call in the Hermes format, which Qwen 2.5 and
	// Hermes templates ask for: <tool_call>{"name": ..., "arguments": {...}}</tool_call>.
	HermesOpen  = "<tool_call>"
	HermesClose = "</tool_call>"
	// PythonTag may precede a Llama 3.1/3.2 call: {"name": ..., "parameters": {...}}.
	PythonTag = "<|python_tag|>"
	// MistralCalls precedes a Mistral array of calls: [{"name": ..., "arguments": {...}}].
	MistralCalls = "[TOOL_CALLS]"
)

var toolMarkers = []string{HermesOpen, PythonTag, MistralCalls}

// ParseToolCalls finds the tool calls in a model's output, in the formats the chat templates
// of the supported families ask for:
//
//   - Hermes / Qwen 2.5: one or more <tool_call>{"name": N, "arguments": {...}}</tool_call>
//     (the closing tag may be missing at the end of the text);
//   - Llama 3.1 / 3.2: {"name": N, "parameters": {...}}, optionally after <|python_tag|>,
//     several separated by ";";
//   - Mistral: [TOOL_CALLS] [{"name": N, "arguments": {...}}, ...];
//   - a bare JSON object or array of such objects as the whole text (what the markers
//     above leave when they are control tokens a detokenizer hides, and what a grammar
//     that forces a call produces).
//
// Either "arguments" or "parameters" is read in every format; an absent value is {}, a
// string holding JSON is used as that JSON. When names is not empty, a call to a function
// not in it is not a call (the text is then plain content). It returns the text before the
// first call (trailing white space removed) and the calls, or the whole text and nil when
// there is none. It never panics, whatever the text.
func ParseToolCalls(text string, names []string) (content string, calls []ToolCall) {
	known := func(n string) bool {
		if n == "" {
			return false
		}
		if len(names) == 0 {
			return true
		}
		for _, x := range names {
			if x == n {
				return true
			}
		}
		return false
	}
	if i := strings.Index(text, HermesOpen); i >= 0 {
		if calls := parseHermes(text[i:], known); calls != nil {
			return strings.TrimRight(text[:i], " \t\r\n"), calls
		}
	}
	for _, m := range []string{MistralCalls, PythonTag} {
		if i := strings.Index(text, m); i >= 0 {
			if calls := parseJSONCalls(text[i+len(m):], known); calls != nil {
				return strings.TrimRight(text[:i], " \t\r\n"), calls
			}
		}
	}
	if calls := parseJSONCalls(text, known); calls != nil {
		return "", calls
	}
	return text, nil
}

// ToolCallStart returns the offset in text where a tool call begins or may yet begin as more
// text comes: a marker, the beginning of a marker at the very end of text, or a JSON object
// or array that starts the text (after white space); -1 when there is none. A stream shows
// text before this offset as content and holds back the rest until ParseToolCalls decides.
func ToolCallStart(text string) int {
	at := -1
	for _, m := range toolMarkers {
		if i := strings.Index(text, m); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at >= 0 {
		return at
	}
	if t := strings.TrimLeft(text, " \t\r\n"); t == "" || t[0] == '{' || t[0] == '[' {
		return 0 // nothing visible yet, or JSON at the start
	}
	// a marker may be forming at the end
	for i := max(0, len(text)-len(MistralCalls)); i < len(text); i++ {
		if text[i] != '<' && text[i] != '[' {
			continue
		}
		for _, m := range toolMarkers {
			if strings.HasPrefix(m, text[i:]) {
				return i
			}
		}
	}
	return -1
}

// parseHermes reads <tool_call>JSON</tool_call> blocks from the start of s.
func parseHermes(s string, known func(string) bool) []ToolCall {
	var calls []ToolCall
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		if !strings.HasPrefix(s, HermesOpen) {
			break
		}
		s = s[len(HermesOpen):]
		body := s
		if j := strings.Index(s, HermesClose); j >= 0 {
			body, s = s[:j], s[j+len(HermesClose):]
		} else {
			s = ""
		}
		c, ok := callFromJSON([]byte(strings.TrimSpace(body)), known)
		if !ok {
			return nil
		}
		calls = append(calls, c)
	}
	return calls
}

// parseJSONCalls reads s as a JSON object or array of call objects (several objects may be
// separated by ";" or white space); anything else after them makes it no call.
func parseJSONCalls(s string, known func(string) bool) []ToolCall {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var calls []ToolCall
	for {
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return nil
		}
		raw = bytes.TrimSpace(raw)
		switch {
		case len(raw) > 0 && raw[0] == '[':
			var items []json.RawMessage
			if json.Unmarshal(raw, &items) != nil || len(items) == 0 {
				return nil
			}
			for _, it := range items {
				c, ok := callFromJSON(it, known)
				if !ok {
					return nil
				}
				calls = append(calls, c)
			}
		default:
			c, ok := callFromJSON(raw, known)
			if !ok {
				return nil
			}
			calls = append(calls, c)
		}
		rest := strings.TrimLeft(s[d.InputOffset():], " \t\r\n;")
		if rest == "" {
			return calls
		}
		s = rest
		d = json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
	}
}

// callFromJSON reads one call object: {"name", "arguments" or "parameters"}, possibly
// nested as {"function": {...}} and with an "id".
func callFromJSON(b []byte, known func(string) bool) (ToolCall, bool) {
	var o struct {
		ID         string          `json:"id"`
		Name       *string         `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Parameters json.RawMessage `json:"parameters"`
		Function   *struct {
			Name      *string         `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	}
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &o) != nil {
		return ToolCall{}, false
	}
	name, args := o.Name, o.Arguments
	if args == nil {
		args = o.Parameters
	}
	if name == nil && o.Function != nil {
		name, args = o.Function.Name, o.Function.Arguments
	}
	if name == nil || !known(*name) {
		return ToolCall{}, false
	}
	args = bytes.TrimSpace(args)
	switch {
	case len(args) == 0 || string(args) == "null":
		args = json.RawMessage("{}")
	case args[0] == '"':
		var s string
		if json.Unmarshal(args, &s) != nil {
			return ToolCall{}, false
		}
		if t := strings.TrimSpace(s); json.Valid([]byte(t)) && strings.HasPrefix(t, "{") {
			args = json.RawMessage(t)
		} else {
			return ToolCall{}, false
		}
	case args[0] != '{':
		return ToolCall{}, false
	}
	var buf bytes.Buffer
	if json.Compact(&buf, args) != nil {
		return ToolCall{}, false
	}
	return ToolCall{ID: o.ID, Type: "function", Name: *name, Arguments: json.RawMessage(buf.String())}, true
}
