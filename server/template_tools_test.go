package server

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/ggml-go/ggml/chat"
)

// templateBackend is the fake backend with a real chat template: ChatPrompt renders the
// request and keeps the text.
type templateBackend struct {
	*fakeBackend
	tmpl *chat.Template
	last chan string
}

func (b *templateBackend) ChatPrompt(ctx context.Context, r chat.Request) ([]int32, error) {
	r.AddGenerationPrompt = true
	r.Vars = map[string]any{"date_string": "26 Jul 2024"}
	text, err := b.tmpl.Render(ctx, r)
	if err != nil {
		return nil, err
	}
	b.last <- text
	return b.Tokenize("x", true, true), nil // the fake needs no real prompt
}

// TestToolHistoryTemplates sends a conversation with an assistant tool call and the tool's
// answer, in OpenAI's shape, through the templates of Qwen 2.5, Llama 3.2 and Mistral Nemo,
// and checks that the call and the answer reach the prompt.
func TestToolHistoryTemplates(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"Weather in Paris?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"abc123def","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
		{"role":"tool","tool_call_id":"abc123def","content":"18C"}],` + weatherTools + `}`
	for _, tc := range []struct {
		file, bos, eos string
		want           []string
	}{
		{"qwen-2.5.jinja", "", "<|im_end|>", []string{`<tool_call>` + "\n" + `{"name": "get_weather", "arguments": {"city": "Paris"}}`, "<tool_response>\n18C\n</tool_response>", `"name": "get_weather"`}},
		{"llama-3.2.jinja", "<|begin_of_text|>", "<|eot_id|>", []string{`{"name": "get_weather", "parameters": {"city": "Paris"}}`, "<|start_header_id|>ipython<|end_header_id|>\n\n\"18C\"", `"name": "get_weather"`}},
		{"mistral-nemo.jinja", "<s>", "</s>", []string{`[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "abc123def"}]`, `[TOOL_RESULTS]{"content": 18C, "call_id": "abc123def"}[/TOOL_RESULTS]`, `[AVAILABLE_TOOLS]`}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			src, err := os.ReadFile("../chat/testdata/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			tmpl, err := chat.New(string(src), tc.bos, tc.eos, chat.Limits{})
			if err != nil {
				t.Fatal(err)
			}
			b := &templateBackend{fakeBackend: newFake(), tmpl: tmpl, last: make(chan string, 1)}
			_, ts := startServer(t, b, Config{})
			status, _, resp := post(t, ts.URL+"/v1/chat/completions", body)
			if status != 200 {
				t.Fatalf("%d %s", status, resp)
			}
			text := <-b.last
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("the prompt lacks %q:\n%s", w, text)
				}
			}
		})
	}
}
