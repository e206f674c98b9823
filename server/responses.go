package server

// POST /v1/responses: OpenAI's Responses API, the one the openai packages' responses.create
// and the AI SDK's default OpenAI provider call. This server keeps no state, so a request
// carries the whole conversation in input (previous_response_id and conversation are refused
// with a 400 that says so). The request becomes a chat request (messages, tools, tool_choice,
// response format, limits), which then runs as /v1/chat/completions does; only the response
// differs: a response object with output items (a message with output_text, function calls),
// or, streamed, the Responses API's named events, ending with response.completed (or
// response.incomplete when max_output_tokens cut it) carrying the whole response and usage.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/ggml-go/ggml/chat"
)

// ResponsesRequest is the body of POST /v1/responses (the fields used; others are ignored).
type ResponsesRequest struct {
	Model           string         `json:"model"`
	Input           ResponsesInput `json:"input"`
	Instructions    *string        `json:"instructions"`
	MaxOutputTokens *int64         `json:"max_output_tokens"`
	Temperature     *float64       `json:"temperature"`
	TopP            *float64       `json:"top_p"`
	Seed            *int64         `json:"seed"` // not OpenAI's: the chat completions parameter, for reproducible runs
	Stream          bool           `json:"stream"`
	Text            *struct {
		Format *ResponsesTextFormat `json:"format"`
	} `json:"text"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	ParallelToolCalls  *bool             `json:"parallel_tool_calls"`
	Metadata           map[string]string `json:"metadata"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Conversation       json.RawMessage   `json:"conversation"`
	Background         *bool             `json:"background"`
}

// ResponsesTextFormat is text.format: {"type": "text"}, {"type": "json_object"} or
// {"type": "json_schema", "name", "schema", "strict"}.
type ResponsesTextFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict *bool           `json:"strict,omitempty"`
}

// ResponsesInput is input: a string (one user message) or an array of items.
type ResponsesInput struct {
	Items []ResponsesItem
	Set   bool
}

// UnmarshalJSON accepts a string or an array of items.
func (in *ResponsesInput) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*in = ResponsesInput{}
		return nil
	case len(b) > 0 && b[0] == '"':
		if !json.Valid(b) {
			return errors.New("input is not a valid JSON string")
		}
		// (a copy: b is the decoder's buffer)
		*in = ResponsesInput{Items: []ResponsesItem{{Role: "user", Content: append(json.RawMessage(nil), b...)}}, Set: true}
		return nil
	case len(b) > 0 && b[0] == '[':
		var items []ResponsesItem
		if err := json.Unmarshal(b, &items); err != nil {
			return err
		}
		*in = ResponsesInput{Items: items, Set: true}
		return nil
	}
	return errors.New("input must be a string or an array of items")
}

// ResponsesItem is one item of input: a message ({"role", "content"}, "type" "message" or
// absent), a function call of the assistant ({"type": "function_call", "call_id", "name",
// "arguments"}) or its result ({"type": "function_call_output", "call_id", "output"}).
// Reasoning items are skipped; other types are refused.
type ResponsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // a string or an array of text parts
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"`
}

// responsesText returns the text of a content value or a function output: a string, or an
// array of parts with text (input_text, output_text, text); refusal parts give their refusal.
func responsesText(raw json.RawMessage) (string, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", false, nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err == nil, err
	}
	var parts []struct {
		Type    string  `json:"type"`
		Text    *string `json:"text"`
		Refusal *string `json:"refusal"`
	}
	if raw[0] != '[' || json.Unmarshal(raw, &parts) != nil {
		return "", false, errors.New("must be a string or an array of text parts such as {\"type\": \"input_text\", \"text\": \"...\"}")
	}
	var sb strings.Builder
	for i, p := range parts {
		switch {
		case (p.Type == "input_text" || p.Type == "output_text" || p.Type == "text") && p.Text != nil:
			sb.WriteString(*p.Text)
		case p.Type == "refusal" && p.Refusal != nil:
			sb.WriteString(*p.Refusal)
		default:
			return "", false, fmt.Errorf("part %d has type %q: only text parts (input_text, output_text) are supported", i, p.Type)
		}
	}
	return sb.String(), true, nil
}

// chatRequest turns the request into the chat completions request it runs as.
func (req *ResponsesRequest) chatRequest() (*ChatCompletionRequest, *APIError) {
	switch {
	case req.PreviousResponseID != nil && *req.PreviousResponseID != "":
		return nil, badRequest("previous_response_id", "this server stores no responses: send the whole conversation in input instead of previous_response_id")
	case len(req.Conversation) > 0 && string(req.Conversation) != "null":
		return nil, badRequest("conversation", "this server stores no conversations: send the whole conversation in input")
	case req.Background != nil && *req.Background:
		return nil, badRequest("background", "this server answers in the foreground only: leave background unset or false")
	case !req.Input.Set:
		return nil, badRequest("input", "input is missing: send a string or an array of messages")
	}
	c := &ChatCompletionRequest{}
	c.Model, c.Temperature, c.TopP, c.Seed, c.Stream = req.Model, req.Temperature, req.TopP, req.Seed, req.Stream
	c.MaxCompletionTokens = req.MaxOutputTokens
	if req.Instructions != nil && *req.Instructions != "" {
		c.Messages = append(c.Messages, ChatMessage{Role: "system", Content: MessageContent{Text: *req.Instructions, Set: true}})
	}
	for i, it := range req.Input.Items {
		switch it.Type {
		case "", "message":
			text, set, err := responsesText(it.Content)
			if err != nil {
				return nil, badRequest("input", "input[%d].content %v", i, err)
			}
			c.Messages = append(c.Messages, ChatMessage{Role: it.Role, Content: MessageContent{Text: text, Set: set}})
		case "function_call":
			if it.Name == "" {
				return nil, badRequest("input", "input[%d] (function_call) has no name", i)
			}
			call, _ := json.Marshal([]map[string]any{{"id": it.CallID, "type": "function",
				"function": map[string]string{"name": it.Name, "arguments": it.Arguments}}})
			// consecutive calls join the assistant message before them
			if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == "assistant" {
				last := &c.Messages[n-1]
				var calls []json.RawMessage
				if len(last.ToolCalls) > 0 {
					json.Unmarshal(last.ToolCalls, &calls)
				}
				var one []json.RawMessage
				json.Unmarshal(call, &one)
				last.ToolCalls, _ = json.Marshal(append(calls, one...))
			} else {
				c.Messages = append(c.Messages, ChatMessage{Role: "assistant", ToolCalls: call})
			}
		case "function_call_output":
			text, _, err := responsesText(it.Output)
			if err != nil {
				text = string(it.Output) // structured output: passed on as its JSON
			}
			c.Messages = append(c.Messages, ChatMessage{Role: "tool", ToolCallID: it.CallID, Content: MessageContent{Text: text, Set: true}})
		case "reasoning":
			// a reasoning model's item sent back: this server has none to continue
		default:
			return nil, badRequest("input", "input[%d] has type %q: use messages, function_call and function_call_output items", i, it.Type)
		}
	}
	if req.Text != nil && req.Text.Format != nil {
		f := req.Text.Format
		c.ResponseFormat = &ResponseFormat{Type: f.Type}
		if f.Type == "json_schema" {
			b, _ := json.Marshal(map[string]any{"name": f.Name, "schema": f.Schema, "strict": f.Strict})
			var rf ResponseFormat
			json.Unmarshal([]byte(`{"type":"json_schema","json_schema":`+string(b)+`}`), &rf)
			c.ResponseFormat = &rf
		}
	}
	for i, raw := range req.Tools {
		var t struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		}
		if err := json.Unmarshal(raw, &t); err != nil || t.Type != "function" || t.Name == "" {
			return nil, badRequest("tools", "tools[%d] must be {\"type\": \"function\", \"name\": ..., \"parameters\": {...}}: this server runs function tools only", i)
		}
		c.Tools = append(c.Tools, chatTool(t.Name, t.Description, t.Parameters))
	}
	if tc := bytes.TrimSpace(req.ToolChoice); len(tc) > 0 && tc[0] == '{' {
		var named struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		if json.Unmarshal(tc, &named) != nil || named.Type != "function" || named.Name == "" {
			return nil, badRequest("tool_choice", "tool_choice must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"name\": ...}")
		}
		c.ToolChoice = namedToolChoice(named.Name)
	} else {
		c.ToolChoice = req.ToolChoice
	}
	return c, nil
}

// UnmarshalJSON reads an item, its content as a string or parts.
func (it *ResponsesItem) UnmarshalJSON(b []byte) error {
	type plain ResponsesItem
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return errors.New("an input item must be an object such as {\"role\": \"user\", \"content\": \"...\"}")
	}
	*it = ResponsesItem(p)
	return nil
}

// asResponsesError renames the chat parameters an error names to their Responses API names.
func asResponsesError(e *APIError) *APIError {
	return renamed(e, "max_completion_tokens", "max_output_tokens", "response_format", "text.format", "messages", "input")
}

// responses serves POST /v1/responses.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	var req ResponsesRequest
	if e := readJSON(w, r, s.cfg.MaxBodyBytes, &req); e != nil {
		writeError(w, e)
		return
	}
	c, e := req.chatRequest()
	if e != nil {
		writeError(w, e)
		return
	}
	g, plan, e := s.prepareChat(r.Context(), c)
	if e != nil {
		writeError(w, asResponsesError(e))
		return
	}
	f := &responsesFormat{id: newID("resp_"), msgID: newID("msg_"), created: time.Now().Unix(), model: s.info.ID, req: &req}
	s.generate(w, r, g, req.Stream, true, f, &plan)
}

// responsesFormat makes the response objects and stream events of one /v1/responses request.
// Streaming, it keeps the state of the output items: the message is opened at the first text
// and closed before function calls or at the end.
type responsesFormat struct {
	id, msgID string
	created   int64
	model     string
	req       *ResponsesRequest
	seq       int    // sequence_number of the next event
	text      string // the message's text so far
	msgOpen   bool
	output    []any // the finished output items
}

type responsesUsage struct {
	InputTokens        int            `json:"input_tokens"`
	InputTokensDetails map[string]int `json:"input_tokens_details"`
	OutputTokens       int            `json:"output_tokens"`
	OutputTokensDetail map[string]int `json:"output_tokens_details"`
	TotalTokens        int            `json:"total_tokens"`
}

func responsesUsageOf(u *Usage) *responsesUsage {
	if u == nil {
		return nil
	}
	return &responsesUsage{InputTokens: u.PromptTokens, InputTokensDetails: map[string]int{"cached_tokens": 0},
		OutputTokens: u.CompletionTokens, OutputTokensDetail: map[string]int{"reasoning_tokens": 0}, TotalTokens: u.TotalTokens}
}

func outputText(text string) map[string]any {
	return map[string]any{"type": "output_text", "text": text, "annotations": []any{}, "logprobs": []any{}}
}

func (f *responsesFormat) message(text, status string) map[string]any {
	content := []any{}
	if status == "completed" {
		content = append(content, outputText(text))
	}
	return map[string]any{"type": "message", "id": f.msgID, "status": status, "role": "assistant", "content": content}
}

func functionCall(c chat.ToolCall, status string) map[string]any {
	args := string(c.Arguments)
	if status != "completed" {
		args = ""
	}
	return map[string]any{"type": "function_call", "id": "fc_" + c.ID, "call_id": c.ID, "name": c.Name, "arguments": args, "status": status}
}

// response is the response object with the given status, output items and usage.
func (f *responsesFormat) response(status string, output []any, u *Usage) map[string]any {
	var incomplete any
	if status == "incomplete" {
		incomplete = map[string]string{"reason": "max_output_tokens"}
	}
	text := map[string]any{"format": map[string]string{"type": "text"}}
	if f.req.Text != nil && f.req.Text.Format != nil {
		text = map[string]any{"format": f.req.Text.Format}
	}
	tools := f.req.Tools
	if tools == nil {
		tools = []json.RawMessage{}
	}
	var toolChoice any = "auto"
	if len(f.req.ToolChoice) > 0 {
		toolChoice = f.req.ToolChoice
	}
	metadata := f.req.Metadata
	if metadata == nil {
		metadata = map[string]string{}
	}
	parallel := f.req.ParallelToolCalls == nil || *f.req.ParallelToolCalls
	temp, topP := 1.0, 1.0
	if f.req.Temperature != nil {
		temp = *f.req.Temperature
	}
	if f.req.TopP != nil {
		topP = *f.req.TopP
	}
	return map[string]any{
		"id": f.id, "object": "response", "created_at": f.created, "status": status,
		"error": nil, "incomplete_details": incomplete, "instructions": f.req.Instructions,
		"max_output_tokens": f.req.MaxOutputTokens, "model": f.model, "output": output,
		"parallel_tool_calls": parallel, "previous_response_id": nil,
		"reasoning": map[string]any{"effort": nil, "summary": nil}, "store": false,
		"temperature": temp, "text": text, "tool_choice": toolChoice, "tools": tools, "top_p": topP,
		"truncation": "disabled", "usage": responsesUsageOf(u), "user": nil, "metadata": metadata,
	}
}

// statusOf is the response status of a finish reason.
func statusOf(reason string) string {
	if reason == "length" {
		return "incomplete"
	}
	return "completed"
}

func (f *responsesFormat) event(name string, fields map[string]any) namedEvent {
	fields["type"] = name
	fields["sequence_number"] = f.seq
	f.seq++
	return namedEvent{name: name, data: fields}
}

func (f *responsesFormat) head() any {
	r := f.response("in_progress", []any{}, nil)
	return sseBatch{
		f.event("response.created", map[string]any{"response": r}),
		f.event("response.in_progress", map[string]any{"response": r}),
	}
}

// openMessage returns the events that open the message item (none when it is open).
func (f *responsesFormat) openMessage() sseBatch {
	if f.msgOpen {
		return nil
	}
	f.msgOpen = true
	at := len(f.output)
	return sseBatch{
		f.event("response.output_item.added", map[string]any{"output_index": at, "item": f.message("", "in_progress")}),
		f.event("response.content_part.added", map[string]any{"item_id": f.msgID, "output_index": at, "content_index": 0,
			"part": outputText("")}),
	}
}

// closeMessage returns the events that close the message item (none when it is not open).
func (f *responsesFormat) closeMessage() sseBatch {
	if !f.msgOpen {
		return nil
	}
	f.msgOpen = false
	at := len(f.output)
	item := f.message(f.text, "completed")
	f.output = append(f.output, item)
	return sseBatch{
		f.event("response.output_text.done", map[string]any{"item_id": f.msgID, "output_index": at, "content_index": 0,
			"text": f.text, "logprobs": []any{}}),
		f.event("response.content_part.done", map[string]any{"item_id": f.msgID, "output_index": at, "content_index": 0,
			"part": outputText(f.text)}),
		f.event("response.output_item.done", map[string]any{"output_index": at, "item": item}),
	}
}

func (f *responsesFormat) piece(text string, _ []TokenLogprob) any {
	if text == "" {
		return nil
	}
	ev := f.openMessage()
	f.text += text
	return append(ev, f.event("response.output_text.delta", map[string]any{"item_id": f.msgID, "output_index": len(f.output),
		"content_index": 0, "delta": text, "logprobs": []any{}}))
}

func (f *responsesFormat) toolCalls(calls []chat.ToolCall, _ []TokenLogprob) any {
	ev := f.closeMessage()
	for _, c := range calls {
		at := len(f.output)
		done := functionCall(c, "completed")
		ev = append(ev,
			f.event("response.output_item.added", map[string]any{"output_index": at, "item": functionCall(c, "in_progress")}),
			f.event("response.function_call_arguments.delta", map[string]any{"item_id": done["id"], "output_index": at, "delta": string(c.Arguments)}),
			f.event("response.function_call_arguments.done", map[string]any{"item_id": done["id"], "output_index": at, "arguments": string(c.Arguments)}),
			f.event("response.output_item.done", map[string]any{"output_index": at, "item": done}))
		f.output = append(f.output, done)
	}
	return ev
}

// finish and usage are not used: end closes the stream (streamEnder).
func (f *responsesFormat) finish(string) any { return nil }
func (f *responsesFormat) usage(*Usage) any  { return nil }

func (f *responsesFormat) end(reason string, u *Usage) any {
	var ev sseBatch
	if len(f.output) == 0 && !f.msgOpen {
		ev = f.openMessage() // an empty reply still has its message
	}
	ev = append(ev, f.closeMessage()...)
	status := statusOf(reason)
	name := "response.completed"
	if status == "incomplete" {
		name = "response.incomplete"
	}
	return append(ev, f.event(name, map[string]any{"response": f.response(status, f.output, u)}))
}

func (f *responsesFormat) streamError(e *APIError) any {
	ev := f.event("error", map[string]any{"code": e.Code, "message": e.Message, "param": e.Param})
	failed := f.response("failed", f.output, nil)
	failed["error"] = map[string]any{"code": e.Code, "message": e.Message}
	return sseBatch{ev, f.event("response.failed", map[string]any{"response": failed})}
}

func (f *responsesFormat) whole(text string, calls []chat.ToolCall, _ []TokenLogprob, reason string, u *Usage) any {
	output := []any{}
	if text != "" || calls == nil {
		output = append(output, f.message(text, "completed"))
	}
	for _, c := range calls {
		output = append(output, functionCall(c, "completed"))
	}
	return f.response(statusOf(reason), output, u)
}
