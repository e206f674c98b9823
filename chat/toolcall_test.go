package chat

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParseToolCalls(t *testing.T) {
	names := []string{"get_weather", "add"}
	type call struct{ name, args string }
	for _, tc := range []struct {
		name, text, content string
		want                []call
	}{
		{"hermes", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>", "",
			[]call{{"get_weather", `{"city":"Paris"}`}}},
		{"hermes with text and two calls", "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2.5}}</tool_call>",
			"Let me check.", []call{{"get_weather", `{"city":"Paris"}`}, {"add", `{"a":1,"b":2.5}`}}},
		{"hermes unclosed at the end", "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1}}", "", []call{{"add", `{"a":1}`}}},
		{"hermes arguments as a string", `<tool_call>{"name": "add", "arguments": "{\"a\": 1}"}</tool_call>`, "", []call{{"add", `{"a":1}`}}},
		{"llama 3.2 bare JSON", `{"name": "get_weather", "parameters": {"city": "Paris"}}`, "", []call{{"get_weather", `{"city":"Paris"}`}}},
		{"llama 3.1 type function", ` {"type": "function", "name": "get_weather", "parameters": {"city": "Oslo"}}`, "", []call{{"get_weather", `{"city":"Oslo"}`}}},
		{"llama python_tag", `<|python_tag|>{"name": "add", "parameters": {"a": 1}}; {"name": "add", "parameters": {"a": 2}}`, "",
			[]call{{"add", `{"a":1}`}, {"add", `{"a":2}`}}},
		{"mistral", `[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abcdef123"}]`, "", []call{{"get_weather", `{"city":"Paris"}`}}},
		{"mistral marker hidden", `[{"name": "add", "arguments": {}}, {"name": "get_weather", "arguments": {"city": "Rome"}}]`, "",
			[]call{{"add", `{}`}, {"get_weather", `{"city":"Rome"}`}}},
		{"openai shape", `{"function": {"name": "add", "arguments": {"a": 3}}}`, "", []call{{"add", `{"a":3}`}}},
		{"no arguments", `{"name": "add"}`, "", []call{{"add", `{}`}}},
		{"plain text", "The weather is fine.", "The weather is fine.", nil},
		{"unknown function", `{"name": "rm_rf", "arguments": {}}`, `{"name": "rm_rf", "arguments": {}}`, nil},
		{"JSON that is no call", `{"city": "Paris"}`, `{"city": "Paris"}`, nil},
		{"JSON then text", `{"name": "add", "arguments": {}} and more`, `{"name": "add", "arguments": {}} and more`, nil},
		{"broken hermes", "<tool_call>{\"name\": \"add\", \"arg", "<tool_call>{\"name\": \"add\", \"arg", nil},
		{"arguments not an object", `{"name": "add", "arguments": [1]}`, `{"name": "add", "arguments": [1]}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content, calls := ParseToolCalls(tc.text, names)
			if content != tc.content || len(calls) != len(tc.want) {
				t.Fatalf("content %q, %d calls %+v; want %q, %d", content, len(calls), calls, tc.content, len(tc.want))
			}
			for i, c := range calls {
				if c.Name != tc.want[i].name || string(c.Arguments) != tc.want[i].args || c.Type != "function" {
					t.Fatalf("call %d: %s %s, want %s %s", i, c.Name, c.Arguments, tc.want[i].name, tc.want[i].args)
				}
			}
		})
	}
	// without names any function is accepted
	if _, calls := ParseToolCalls(`{"name": "rm_rf", "arguments": {}}`, nil); len(calls) != 1 {
		t.Fatal("no call without a list of names")
	}
}

func TestToolCallStart(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{"Hello", -1},
		{"", 0},
		{"  ", 0},
		{"  {\"na", 0},
		{"[TOOL", 0},
		{"Sure <tool_", 5},
		{"Sure <tool_call>{", 5},
		{"Sure <b>", -1},
		{"a < b", -1},
		{"x<|python", 1},
		{"x [TOOL_CALLS] [", 2},
		{"Hi [", 3},
	} {
		if got := ToolCallStart(tc.text); got != tc.want {
			t.Errorf("ToolCallStart(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func FuzzParseToolCalls(f *testing.F) {
	for _, s := range []string{"<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>", `[TOOL_CALLS] [{"name": "a"}]`,
		`<|python_tag|>{"name": "a", "parameters": {"x": [1, {"y": null}]}};`, `{"function": {"name": "a", "arguments": "{}"}}`, "text <tool", "[{}]", `{"name":"a","arguments":"\"x\""}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, names := range [][]string{nil, {"a"}} {
			content, calls := ParseToolCalls(s, names)
			if calls == nil && content != s {
				t.Fatalf("no call, yet the content %q is not the text", content)
			}
			if calls != nil && !strings.HasPrefix(s, content) {
				t.Fatalf("content %q is not a prefix of the text", content)
			}
			for _, c := range calls {
				if c.Name == "" || !json.Valid(c.Arguments) || !strings.HasPrefix(string(c.Arguments), "{") {
					t.Fatalf("bad call %+v from %q", c, s)
				}
				if len(names) > 0 && c.Name != "a" {
					t.Fatalf("unknown name %q", c.Name)
				}
			}
		}
		if at := ToolCallStart(s); at < -1 || at > len(s) {
			t.Fatalf("ToolCallStart = %d for %d bytes", at, len(s))
		}
	})
}
