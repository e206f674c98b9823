package chat

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The templates in testdata are the tokenizer.chat_template of the models' files (data):
// Llama 3.2 3B Instruct, Qwen 2.5 7B Instruct, Gemma 2 2B it, Phi-3.5 mini instruct,
// Phi-3 mini 128k instruct, Mistral Nemo Instruct 2407.
// The expected texts below were written by reading each template.

const weatherTool = `{"type": "function", "function": {"name": "get_weather", "description": "Get the weather",
	"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}`

const weatherToolCompact = `{"type": "function", "function": {"name": "get_weather", "description": "Get the weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}`

const weatherToolIndent4 = `{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {
                    "type": "string"
                }
            },
            "required": [
                "city"
            ]
        }
    }
}`

var (
	plainChat = []Message{{Role: "system", Content: "You are terse."}, {Role: "user", Content: "Hi!"},
		{Role: "assistant", Content: "Hello."}, {Role: "user", Content: "2+2?"}}
	toolChat = []Message{{Role: "user", Content: "Weather in Paris?"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "call12345", Name: "get_weather", Arguments: json.RawMessage(`{"city": "Paris"}`)}}},
		{Role: "tool", Content: "18C", ToolCallID: "call12345"}}
)

func loadTemplate(t *testing.T, name, bos, eos string) *Template {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := New(string(src), bos, eos, Limits{})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return tmpl
}

func TestModelTemplates(t *testing.T) {
	date := map[string]any{"date_string": "26 Jul 2024"}
	tools := []json.RawMessage{json.RawMessage(weatherTool)}
	for _, tc := range []struct {
		name, file, bos, eos string
		req                  Request
		want                 string
	}{
		{"llama 3.2 chat", "llama-3.2.jinja", "<|begin_of_text|>", "<|eot_id|>",
			Request{Messages: plainChat, AddGenerationPrompt: true, Vars: date},
			"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou are terse.<|eot_id|>" +
				"<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>" +
				"<|start_header_id|>user<|end_header_id|>\n\n2+2?<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
		{"llama 3.2 tools", "llama-3.2.jinja", "<|begin_of_text|>", "<|eot_id|>",
			Request{Messages: toolChat, Tools: tools, AddGenerationPrompt: true, Vars: date},
			"<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nEnvironment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>" +
				"<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n" +
				`Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.` + "\n\n" +
				weatherToolIndent4 + "\n\nWeather in Paris?<|eot_id|>" +
				"<|start_header_id|>assistant<|end_header_id|>\n\n" + `{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>` +
				"<|start_header_id|>ipython<|end_header_id|>\n\n\"18C\"<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
		{"qwen 2.5 chat", "qwen-2.5.jinja", "", "<|im_end|>",
			Request{Messages: plainChat, AddGenerationPrompt: true},
			"<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n" +
				"<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n"},
		{"qwen 2.5 default system", "qwen-2.5.jinja", "", "<|im_end|>",
			Request{Messages: plainChat[1:2]},
			"<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n"},
		{"qwen 2.5 tools", "qwen-2.5.jinja", "", "<|im_end|>",
			Request{Messages: toolChat, Tools: tools, AddGenerationPrompt: true},
			"<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
				"You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" + weatherToolCompact +
				"\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n" +
				`{"name": <function-name>, "arguments": <args-json-object>}` + "\n</tool_call><|im_end|>\n" +
				"<|im_start|>user\nWeather in Paris?<|im_end|>\n" +
				"<|im_start|>assistant\n<tool_call>\n" + `{"name": "get_weather", "arguments": {"city": "Paris"}}` + "\n</tool_call><|im_end|>\n" +
				"<|im_start|>user\n<tool_response>\n18C\n</tool_response><|im_end|>\n<|im_start|>assistant\n"},
		{"gemma 2", "gemma-2.jinja", "<bos>", "<eos>",
			Request{Messages: plainChat[1:], AddGenerationPrompt: true},
			"<bos><start_of_turn>user\nHi!<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n<start_of_turn>user\n2+2?<end_of_turn>\n<start_of_turn>model\n"},
		{"phi 3.5", "phi-3.5.jinja", "<s>", "<|endoftext|>",
			Request{Messages: plainChat, AddGenerationPrompt: true},
			"<|system|>\nYou are terse.<|end|>\n<|user|>\nHi!<|end|>\n<|assistant|>\nHello.<|end|>\n<|user|>\n2+2?<|end|>\n<|assistant|>\n"},
		{"phi 3.5 no prompt", "phi-3.5.jinja", "<s>", "<|endoftext|>",
			Request{Messages: plainChat[1:3]},
			"<|user|>\nHi!<|end|>\n<|assistant|>\nHello.<|end|>\n<|endoftext|>"},
		{"phi 3 mini", "phi-3-mini.jinja", "<s>", "<|endoftext|>",
			Request{Messages: plainChat, AddGenerationPrompt: true},
			"<s><|user|>\nHi!<|end|>\n<|assistant|>\nHello.<|end|>\n<|user|>\n2+2?<|end|>\n<|assistant|>\n"},
		{"mistral chat", "mistral-nemo.jinja", "<s>", "</s>",
			Request{Messages: plainChat, AddGenerationPrompt: true},
			"<s>[INST]Hi![/INST]Hello.</s>[INST]You are terse.\n\n2+2?[/INST]"},
		{"mistral tools", "mistral-nemo.jinja", "<s>", "</s>",
			Request{Messages: toolChat, Tools: tools},
			`<s>[AVAILABLE_TOOLS][{"type": "function", "function": {"name": "get_weather", "description": "Get the weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}][/AVAILABLE_TOOLS]` +
				`[INST]Weather in Paris?[/INST][TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call12345"}]</s>` +
				`[TOOL_RESULTS]{"content": 18C, "call_id": "call12345"}[/TOOL_RESULTS]`},
		{"default chatml", "", "", "",
			Request{Messages: plainChat[:2], AddGenerationPrompt: true},
			"<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n<|im_start|>assistant\n"},
	} {
		var tmpl *Template
		if tc.file == "" {
			tmpl = Default()
		} else {
			tmpl = loadTemplate(t, tc.file, tc.bos, tc.eos)
		}
		got, err := tmpl.Render(context.Background(), tc.req)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestTemplateExceptions(t *testing.T) {
	for _, tc := range []struct {
		file     string
		msgs     []Message
		contains string
	}{
		{"gemma-2.jinja", plainChat, "System role not supported"},
		{"gemma-2.jinja", []Message{{Role: "user", Content: "a"}, {Role: "user", Content: "b"}}, "must alternate"},
		{"mistral-nemo.jinja", []Message{{Role: "assistant", Content: "a"}}, "must alternate"},
		{"mistral-nemo.jinja", []Message{{Role: "user", Content: "a"}, {Role: "assistant", ToolCalls: []ToolCall{{ID: "short", Name: "f", Arguments: json.RawMessage(`{}`)}}}}, "length 9"},
		{"llama-3.2.jinja", []Message{{Role: "user", Content: "a"}, {Role: "assistant", ToolCalls: []ToolCall{{Name: "f"}, {Name: "g"}}}}, "single tool-calls"},
	} {
		tmpl := loadTemplate(t, tc.file, "", "")
		_, err := tmpl.Render(context.Background(), Request{Messages: tc.msgs, Vars: map[string]any{"date_string": "x"}})
		if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), tc.contains) {
			t.Errorf("%s: got %v, want an ErrTemplate containing %q", tc.file, err, tc.contains)
		}
	}
}

func TestSupportsTools(t *testing.T) {
	if Default().SupportsTools() {
		t.Error("ChatML default claims tool support")
	}
	if !loadTemplate(t, "qwen-2.5.jinja", "", "").SupportsTools() {
		t.Error("Qwen template does not claim tool support")
	}
}
