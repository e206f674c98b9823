package chat_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/ggml-go/ggml/chat"
)

func Example() {
	// A model's tokenizer.chat_template (here a short Gemma-style one) and its BOS/EOS texts.
	src := `{{ bos_token }}{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system role') }}{% endif %}` +
		`<start_of_turn>{{ 'model' if m.role == 'assistant' else m.role }}
{{ m.content | trim }}<end_of_turn>
{% endfor %}{% if add_generation_prompt %}<start_of_turn>model
{% endif %}`
	tmpl, err := chat.New(src, "<bos>", "<eos>", chat.Limits{})
	if err != nil {
		log.Fatal(err)
	}
	prompt, err := tmpl.Render(context.Background(), chat.Request{
		Messages:            []chat.Message{{Role: "user", Content: "Hi!"}, {Role: "assistant", Content: "Hello."}, {Role: "user", Content: "2+2?"}},
		AddGenerationPrompt: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(prompt)
	_, err = tmpl.Render(context.Background(), chat.Request{Messages: []chat.Message{{Role: "system", Content: "x"}}})
	fmt.Println("error:", err)
	// Output:
	// <bos><start_of_turn>user
	// Hi!<end_of_turn>
	// <start_of_turn>model
	// Hello.<end_of_turn>
	// <start_of_turn>user
	// 2+2?<end_of_turn>
	// <start_of_turn>model
	// error: chat template: no system role
}

// The default template (ChatML), for model files without one.
func ExampleDefault() {
	prompt, err := chat.Default().Render(context.Background(), chat.Request{
		Messages:            []chat.Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "Hi"}},
		AddGenerationPrompt: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", prompt)
	// Output: "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
}

// Tools reach templates that read the variable tools, in the order written.
func ExampleRequest_tools() {
	src := `{% for t in tools %}{{ t.function.name }}: {{ t.function.parameters | tojson }}
{% endfor %}{% for m in messages %}{{ m.role }}: {{ m.content }}{% endfor %}`
	tmpl, err := chat.New(src, "", "", chat.Limits{})
	if err != nil {
		log.Fatal(err)
	}
	out, err := tmpl.Render(context.Background(), chat.Request{
		Messages: []chat.Message{{Role: "user", Content: "Weather?"}},
		Tools: []json.RawMessage{json.RawMessage(`{"type": "function", "function": {"name": "get_weather",
			"parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}`)},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output:
	// get_weather: {"type": "object", "properties": {"city": {"type": "string"}}}
	// user: Weather?
}

// Reading a tool call from a model's output (here the Hermes format of Qwen 2.5).
func ExampleParseToolCalls() {
	out := "I will look it up.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"
	content, calls := chat.ParseToolCalls(out, []string{"get_weather"})
	fmt.Printf("%q\n", content)
	for _, c := range calls {
		fmt.Println(c.Name, string(c.Arguments))
	}
	// Output:
	// "I will look it up."
	// get_weather {"city":"Paris"}
}
