package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ardanlabs/jinja"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string // "system", "user", "assistant", "tool" (or any role the template knows)
	Content string
	// Name, ToolCalls and ToolCallID are passed to the template only when set, since
	// templates test whether they are defined.
	Name       string
	ToolCalls  []ToolCall
	ToolCallID string // for role "tool": the call this message answers
}

// ToolCall is a function call made by the assistant, in OpenAI's shape.
type ToolCall struct {
	ID   string
	Type string // "function" if empty
	Name string
	// Arguments is the call's arguments as JSON. An object is given to the template as a
	// mapping (as Hugging Face's apply_chat_template does); anything else as a string.
	Arguments json.RawMessage
}

// Request is what a template renders.
type Request struct {
	Messages []Message
	// Tools are the tool (function) definitions, each a JSON object as in OpenAI's
	// "tools" array ({"type": "function", "function": {"name", "description",
	// "parameters"}}), given to the template as the variable tools in the order written.
	// Templates that do not use tools ignore them (see Template.SupportsTools).
	Tools []json.RawMessage
	// AddGenerationPrompt ends the text with the start of an assistant turn.
	AddGenerationPrompt bool
	// Vars are further template variables (for example date_string for Llama 3 templates,
	// which otherwise print today's date); they override the ones above.
	Vars map[string]any
}

// Limits bound the work of rendering, so that a hostile template cannot hang or crash
// the program. The zero value means the defaults.
type Limits struct {
	Timeout     time.Duration // per Render; default 2 s
	MaxOutput   int           // bytes of rendered text; default 4 MiB
	MaxRange    int           // items of one range() call; default 100,000
	MaxRangeAll int           // items of all range() calls of one Render; default 1,000,000
}

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = 2 * time.Second
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = 4 << 20
	}
	if l.MaxRange <= 0 {
		l.MaxRange = 100_000
	}
	if l.MaxRangeAll <= 0 {
		l.MaxRangeAll = 1_000_000
	}
	return l
}

// MaxSourceBytes is the largest template source New accepts (real chat templates are
// under 20 KB).
const MaxSourceBytes = 256 << 10

// ErrTemplate is wrapped by every error of rendering a template: the template raised an
// exception (raise_exception), used something the Jinja engine lacks, or hit a limit.
var ErrTemplate = errors.New("chat template")

// Template is a compiled chat template. It is safe for concurrent use.
type Template struct {
	src    string
	t      *jinja.Template
	bos    string
	eos    string
	limits Limits
}

// New compiles a chat template (a model's tokenizer.chat_template, Jinja as in Hugging
// Face's apply_chat_template). bos and eos are the texts of the model's begin- and
// end-of-sequence tokens, given to the template as bos_token and eos_token. It rejects
// templates over MaxSourceBytes and templates that could recurse without end (see
// checkRecursion); an empty source gives the Default template.
func New(source, bos, eos string, limits Limits) (*Template, error) {
	if strings.TrimSpace(source) == "" {
		source = ChatML
	}
	if len(source) > MaxSourceBytes {
		return nil, fmt.Errorf("%w: the template is %d bytes, above the limit of %d", ErrTemplate, len(source), MaxSourceBytes)
	}
	if err := checkRecursion(source); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTemplate, err)
	}
	t, err := compile(rewriteTojsonIndent(source))
	if err != nil {
		return nil, fmt.Errorf("%w: %v: the template uses Jinja this engine does not parse", ErrTemplate, err)
	}
	return &Template{src: source, t: t, bos: bos, eos: eos, limits: limits.withDefaults()}, nil
}

// compile calls the Jinja compiler, turning a panic into an error.
func compile(src string) (t *jinja.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("the Jinja compiler failed: %v", r)
		}
	}()
	return jinja.Compile(src)
}

// ChatML is the default template, used for a model file without tokenizer.chat_template
// (llama.cpp falls back to the same format): each message as
// "<|im_start|>ROLE\nCONTENT<|im_end|>\n", and "<|im_start|>assistant\n" as the
// generation prompt. It ignores tools.
const ChatML = `{%- for message in messages -%}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
{{- '<|im_start|>assistant\n' -}}
{%- endif -%}`

// Default returns the ChatML template.
func Default() *Template {
	t, err := New(ChatML, "", "", Limits{})
	if err != nil {
		panic(err)
	}
	return t
}

// Source returns the template text.
func (t *Template) Source() string { return t.src }

// SupportsTools reports whether the template reads the variable tools (so tool
// definitions reach the model).
func (t *Template) SupportsTools() bool {
	return strings.Contains(t.src, "tools")
}

// Render renders the conversation. It returns an error wrapping ErrTemplate when the
// template raises an exception (its message included), fails, exceeds a Limit, or when
// ctx ends first.
func (t *Template) Render(ctx context.Context, r Request) (string, error) {
	data, err := t.variables(r)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, t.limits.Timeout)
	defer cancel()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{"", fmt.Errorf("the Jinja engine panicked: %v\n%s", p, debug.Stack())}
			}
		}()
		out, err := t.t.RenderValues(data)
		done <- result{out, err}
	}()
	select {
	case res := <-done:
		if res.err != nil {
			return "", fmt.Errorf("%w: %v", ErrTemplate, res.err)
		}
		if len(res.out) > t.limits.MaxOutput {
			return "", fmt.Errorf("%w: the rendered text is %d bytes, above the limit of %d", ErrTemplate, len(res.out), t.limits.MaxOutput)
		}
		return res.out, nil
	case <-ctx.Done():
		// The evaluation cannot be interrupted; it goes on in the background until it
		// ends (range() budgets bound most loops).
		return "", fmt.Errorf("%w: rendering did not finish: %v", ErrTemplate, ctx.Err())
	}
}

// variables builds the template's variables.
func (t *Template) variables(r Request) (map[string]jinja.Value, error) {
	msgs := make([]jinja.Value, 0, len(r.Messages))
	for i, m := range r.Messages {
		v, err := messageValue(m)
		if err != nil {
			return nil, fmt.Errorf("chat: message %d: %w", i, err)
		}
		msgs = append(msgs, v)
	}
	data := map[string]jinja.Value{
		"messages":              jinja.NewList(msgs),
		"add_generation_prompt": jinja.NewBool(r.AddGenerationPrompt),
		"bos_token":             jinja.NewString(t.bos),
		"eos_token":             jinja.NewString(t.eos),
		"range":                 t.boundedRange(),
		"__tojson_indent":       tojsonIndent,
	}
	if len(r.Tools) > 0 {
		tools := make([]jinja.Value, 0, len(r.Tools))
		for i, raw := range r.Tools {
			v, err := jsonValue(raw)
			if err != nil {
				return nil, fmt.Errorf("chat: tool %d is not valid JSON: %w", i, err)
			}
			tools = append(tools, v)
		}
		data["tools"] = jinja.NewList(tools)
	}
	for k, v := range r.Vars {
		data[k] = jinja.FromGoValue(v)
	}
	return data, nil
}

func messageValue(m Message) (jinja.Value, error) {
	d := jinja.NewDict()
	dict := d.AsDict()
	dict.Set("role", jinja.NewString(m.Role))
	dict.Set("content", jinja.NewString(m.Content))
	if m.Name != "" {
		dict.Set("name", jinja.NewString(m.Name))
	}
	if m.ToolCallID != "" {
		dict.Set("tool_call_id", jinja.NewString(m.ToolCallID))
	}
	if len(m.ToolCalls) > 0 {
		calls := make([]jinja.Value, 0, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			typ := c.Type
			if typ == "" {
				typ = "function"
			}
			var args jinja.Value
			if trimmed := strings.TrimSpace(string(c.Arguments)); strings.HasPrefix(trimmed, "{") {
				var err error
				if args, err = jsonValue(c.Arguments); err != nil {
					return jinja.Value{}, fmt.Errorf("tool call %d: arguments are not valid JSON: %w", i, err)
				}
			} else {
				args = jinja.NewString(string(c.Arguments))
			}
			fn := jinja.NewDict()
			fn.AsDict().Set("name", jinja.NewString(c.Name))
			fn.AsDict().Set("arguments", args)
			call := jinja.NewDict()
			if c.ID != "" {
				call.AsDict().Set("id", jinja.NewString(c.ID))
			}
			call.AsDict().Set("type", jinja.NewString(typ))
			call.AsDict().Set("function", fn)
			calls = append(calls, call)
		}
		dict.Set("tool_calls", jinja.NewList(calls))
	}
	return d, nil
}

// boundedRange is the range() of Jinja with limits on the items made.
func (t *Template) boundedRange() jinja.Value {
	total := 0
	lim := t.limits
	return jinja.NewCallable("range", func(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
		var n [3]int64
		n[2] = 1
		for i, a := range args {
			if i > 2 || !a.IsInt() {
				return jinja.Undefined(), errors.New("range: expected 1 to 3 integer arguments")
			}
		}
		switch len(args) {
		case 1:
			n[1] = args[0].AsInt()
		case 2, 3:
			for i, a := range args {
				n[i] = a.AsInt()
			}
		default:
			return jinja.Undefined(), errors.New("range: expected 1 to 3 integer arguments")
		}
		start, stop, step := n[0], n[1], n[2]
		if step == 0 {
			return jinja.Undefined(), errors.New("range: step must not be zero")
		}
		var count int64
		if step > 0 && stop > start {
			count = (stop - start + step - 1) / step
		} else if step < 0 && stop < start {
			count = (start - stop - step - 1) / -step
		}
		if count > int64(lim.MaxRange) || total+int(count) > lim.MaxRangeAll {
			return jinja.Undefined(), fmt.Errorf("range: %d items are above the template limit (%d per call, %d per render)", count, lim.MaxRange, lim.MaxRangeAll)
		}
		total += int(count)
		items := make([]jinja.Value, 0, count)
		for i, v := int64(0), start; i < count; i, v = i+1, v+step {
			items = append(items, jinja.NewInt(v))
		}
		return jinja.NewList(items), nil
	})
}
