package server

// POST /v1/messages: Anthropic's Messages API, which the Anthropic SDKs and the tools built on
// them call (an API key may come as "x-api-key"). As /v1/responses, the request becomes a chat
// request (system, messages with text, tool_use and tool_result blocks, tools, tool_choice,
// max_tokens, temperature, top_p, top_k, stop_sequences) and runs as /v1/chat/completions
// does; the answer is a message with text and tool_use content blocks and a stop_reason, or,
// streamed, its events from message_start to message_stop. Errors have Anthropic's shape
// ({"type": "error", "error": {"type", "message"}}). POST /v1/messages/count_tokens counts the
// prompt's tokens.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/ggml-go/ggml/chat"
)

// MessagesRequest is the body of POST /v1/messages (the fields used; others are ignored).
type MessagesRequest struct {
	Model         string             `json:"model"`
	MaxTokens     *int64             `json:"max_tokens"`
	System        json.RawMessage    `json:"system"` // a string or text blocks
	Messages      []AnthropicMessage `json:"messages"`
	Temperature   *float64           `json:"temperature"`
	TopP          *float64           `json:"top_p"`
	TopK          *int64             `json:"top_k"`
	StopSequences []string           `json:"stop_sequences"`
	Stream        bool               `json:"stream"`
	Tools         []json.RawMessage  `json:"tools"`
	ToolChoice    json.RawMessage    `json:"tool_choice"`
}

// AnthropicMessage is one message: a role ("user" or "assistant") and a string or blocks.
type AnthropicMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// anthropicBlock is a content block of a request: text, tool_use (assistant), tool_result
// (user); thinking blocks are skipped; others are refused.
type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

// anthropicBlocks reads a content value: a string is one text block.
func anthropicBlocks(raw json.RawMessage) ([]anthropicBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []anthropicBlock{{Type: "text", Text: &s}}, nil
	}
	var blocks []anthropicBlock
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &blocks) != nil {
		return nil, fmt.Errorf("must be a string or an array of content blocks such as {\"type\": \"text\", \"text\": \"...\"}")
	}
	return blocks, nil
}

// blocksText joins the text blocks of a content value (system, tool_result content).
func blocksText(raw json.RawMessage) (string, error) {
	blocks, err := anthropicBlocks(raw)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for i, b := range blocks {
		if b.Type != "text" || b.Text == nil {
			return "", fmt.Errorf("block %d has type %q: only text blocks are supported here", i, b.Type)
		}
		sb.WriteString(*b.Text)
	}
	return sb.String(), nil
}

// chatRequest turns the request into the chat completions request it runs as.
func (req *MessagesRequest) chatRequest(needMax bool) (*ChatCompletionRequest, *APIError) {
	if needMax && req.MaxTokens == nil {
		return nil, badRequest("max_tokens", "max_tokens is required")
	}
	c := &ChatCompletionRequest{}
	c.Model, c.Temperature, c.TopP, c.Stream = req.Model, req.Temperature, req.TopP, req.Stream
	c.MaxCompletionTokens = req.MaxTokens
	if req.Temperature != nil && *req.Temperature > 1 {
		return nil, badRequest("temperature", "temperature is %v: it must be between 0 and 1", *req.Temperature)
	}
	c.Stop = req.StopSequences
	if len(bytes.TrimSpace(req.System)) > 0 && string(bytes.TrimSpace(req.System)) != "null" {
		text, err := blocksText(req.System)
		if err != nil {
			return nil, badRequest("system", "system %v", err)
		}
		c.Messages = append(c.Messages, ChatMessage{Role: "system", Content: MessageContent{Text: text, Set: true}})
	}
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, badRequest("messages", "messages[%d] has role %q: use \"user\" or \"assistant\" (the system prompt goes in system)", i, m.Role)
		}
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return nil, badRequest("messages", "messages[%d].content %v", i, err)
		}
		var text strings.Builder
		hasText := false
		var calls []map[string]any
		flush := func() {
			if hasText || (m.Role == "assistant" && calls != nil) {
				cm := ChatMessage{Role: m.Role, Content: MessageContent{Text: text.String(), Set: hasText}}
				if calls != nil {
					cm.ToolCalls, _ = json.Marshal(calls)
				}
				c.Messages = append(c.Messages, cm)
			}
			text.Reset()
			hasText, calls = false, nil
		}
		for j, b := range blocks {
			switch {
			case b.Type == "text" && b.Text != nil:
				text.WriteString(*b.Text)
				hasText = true
			case b.Type == "tool_use" && m.Role == "assistant":
				if b.Name == "" {
					return nil, badRequest("messages", "messages[%d].content[%d] (tool_use) has no name", i, j)
				}
				input := b.Input
				if len(bytes.TrimSpace(input)) == 0 {
					input = json.RawMessage("{}")
				}
				calls = append(calls, map[string]any{"id": b.ID, "type": "function",
					"function": map[string]string{"name": b.Name, "arguments": string(input)}})
			case b.Type == "tool_result" && m.Role == "user":
				flush()
				out := ""
				if len(bytes.TrimSpace(b.Content)) > 0 && string(bytes.TrimSpace(b.Content)) != "null" {
					if out, err = blocksText(b.Content); err != nil {
						return nil, badRequest("messages", "messages[%d].content[%d] (tool_result) content %v", i, j, err)
					}
				}
				c.Messages = append(c.Messages, ChatMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: MessageContent{Text: out, Set: true}})
			case b.Type == "thinking" || b.Type == "redacted_thinking":
				// a thinking model's blocks sent back: nothing to continue here
			default:
				return nil, badRequest("messages", "messages[%d].content[%d] has type %q: use text blocks (and tool_use in assistant, tool_result in user messages)", i, j, b.Type)
			}
		}
		flush()
	}
	for i, raw := range req.Tools {
		var t struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		if err := json.Unmarshal(raw, &t); err != nil || (t.Type != "" && t.Type != "custom") || t.Name == "" {
			return nil, badRequest("tools", "tools[%d] must be {\"name\": ..., \"input_schema\": {...}}: this server runs client tools only", i)
		}
		c.Tools = append(c.Tools, chatTool(t.Name, t.Description, t.InputSchema))
	}
	if tc := bytes.TrimSpace(req.ToolChoice); len(tc) > 0 && string(tc) != "null" {
		var choice struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		json.Unmarshal(tc, &choice)
		switch choice.Type {
		case "auto", "none":
			c.ToolChoice, _ = json.Marshal(choice.Type)
		case "any":
			c.ToolChoice = json.RawMessage(`"required"`)
		case "tool":
			c.ToolChoice = namedToolChoice(choice.Name)
		default:
			return nil, badRequest("tool_choice", "tool_choice must be {\"type\": \"auto\"}, {\"type\": \"any\"}, {\"type\": \"tool\", \"name\": ...} or {\"type\": \"none\"}")
		}
	}
	return c, nil
}

// anthropicAuth checks the API key (Anthropic's clients send it as x-api-key) and answers a
// missing or wrong one in Anthropic's shape; the routes are registered without the shared check.
func (s *Server) anthropicAuth(aw *anthropicWriter, r *http.Request) bool {
	if s.cfg.APIKey == "" || s.authorized(r) {
		return true
	}
	writeError(aw, &APIError{Status: http.StatusUnauthorized, Type: "authentication_error",
		Message: "missing or wrong API key: send the header \"x-api-key: <key>\" (or \"Authorization: Bearer <key>\") with the server's --api-key"})
	return false
}

// asMessagesError renames the chat parameters an error names to the Messages API's names.
func asMessagesError(e *APIError) *APIError {
	return renamed(e, "max_completion_tokens", "max_tokens", "stop strings", "stop_sequences")
}

// readMessages starts a Messages API request: the writer that gives errors Anthropic's shape
// (finish it when done), the key check and the body; ok is false when an error was answered.
func (s *Server) readMessages(w http.ResponseWriter, r *http.Request) (aw *anthropicWriter, req *MessagesRequest, ok bool) {
	aw = newAnthropicWriter(w)
	if !s.anthropicAuth(aw, r) {
		return aw, nil, false
	}
	req = &MessagesRequest{}
	if e := readJSON(aw, r, s.cfg.MaxBodyBytes, req); e != nil {
		writeError(aw, e)
		return aw, nil, false
	}
	return aw, req, true
}

// messages serves POST /v1/messages.
func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	aw, req, ok := s.readMessages(w, r)
	defer aw.finish()
	if !ok {
		return
	}
	c, e := req.chatRequest(true)
	if e != nil {
		writeError(aw, e)
		return
	}
	g, plan, e := s.prepareChat(r.Context(), c)
	if e != nil {
		writeError(aw, asMessagesError(e))
		return
	}
	if req.TopK != nil {
		if *req.TopK < 0 {
			writeError(aw, badRequest("top_k", "top_k is %d: it must be at least 0", *req.TopK))
			return
		}
		g.Sampling.TopK = int(min(*req.TopK, int64(s.info.VocabSize)))
	}
	f := &messagesFormat{id: newID("msg_"), model: s.info.ID, promptTokens: len(g.Prompt)}
	s.generate(aw, r, g, req.Stream, true, f, &plan)
}

// countTokens serves POST /v1/messages/count_tokens: the prompt's tokens, {"input_tokens": n}.
func (s *Server) countTokens(w http.ResponseWriter, r *http.Request) {
	aw, req, ok := s.readMessages(w, r)
	defer aw.finish()
	if !ok {
		return
	}
	c, e := req.chatRequest(false)
	if e == nil {
		_, _, e = s.prepareChat(r.Context(), c)
	}
	if e != nil && !(e.Code != nil && *e.Code == "context_length_exceeded") {
		writeError(aw, asMessagesError(e))
		return
	}
	tokens, err := s.countPrompt(r, c)
	if err != nil {
		writeError(aw, err)
		return
	}
	writeJSON(aw, map[string]int{"input_tokens": tokens})
}

// countPrompt renders the chat request's prompt and returns its length (also when it does not
// fit in a slot's context).
func (s *Server) countPrompt(r *http.Request, c *ChatCompletionRequest) (int, *APIError) {
	msgs := make([]chat.Message, len(c.Messages))
	for i, m := range c.Messages {
		calls, e := toolCalls(i, m.ToolCalls)
		if e != nil {
			return 0, e
		}
		msgs[i] = chat.Message{Role: m.Role, Content: m.Content.Text, ToolCallID: m.ToolCallID, ToolCalls: calls}
	}
	prompt, err := s.b.ChatPrompt(r.Context(), chat.Request{Messages: msgs, Tools: c.Tools})
	if err != nil {
		return 0, badRequest("messages", "the chat template cannot render these messages: %v", err)
	}
	return len(prompt), nil
}

// messagesFormat makes the message objects and stream events of one /v1/messages request.
type messagesFormat struct {
	id           string
	model        string
	promptTokens int
	blocks       int    // content blocks started so far (the index of the next)
	textOpen     bool   // a text block is open
	stopSeq      string // the stop string that ended the generation (stopReporter)
}

func (f *messagesFormat) setStopSequence(s string) { f.stopSeq = s }

// stopSequence is the message's stop_sequence: the stop string, or null.
func (f *messagesFormat) stopSequence() any {
	if f.stopSeq == "" {
		return nil
	}
	return f.stopSeq
}

func (f *messagesFormat) ev(name string, fields map[string]any) namedEvent {
	fields["type"] = name
	return namedEvent{name: name, data: fields}
}

func (f *messagesFormat) message(content []any, stop any, u *Usage) map[string]any {
	usage := map[string]int{"input_tokens": f.promptTokens, "output_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if u != nil {
		usage["input_tokens"], usage["output_tokens"] = u.PromptTokens, u.CompletionTokens
	}
	return map[string]any{"id": f.id, "type": "message", "role": "assistant", "model": f.model, "content": content,
		"stop_reason": stop, "stop_sequence": f.stopSequence(), "usage": usage}
}

// stopReason is Anthropic's stop_reason of a finish reason.
func (f *messagesFormat) stopReason(reason string) string {
	switch {
	case reason == FinishLength:
		return "max_tokens"
	case reason == FinishToolCalls:
		return "tool_use"
	case f.stopSeq != "":
		return "stop_sequence"
	}
	return "end_turn"
}

func toolUse(c chat.ToolCall) map[string]any {
	input := json.RawMessage(c.Arguments)
	if !json.Valid(input) {
		input = json.RawMessage("{}")
	}
	return map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": input}
}

func (f *messagesFormat) head() any {
	return sseBatch{
		f.ev("message_start", map[string]any{"message": f.message([]any{}, nil, nil)}),
		f.ev("ping", map[string]any{}),
	}
}

func (f *messagesFormat) closeText() sseBatch {
	if !f.textOpen {
		return nil
	}
	f.textOpen = false
	return sseBatch{f.ev("content_block_stop", map[string]any{"index": f.blocks - 1})}
}

func (f *messagesFormat) piece(text string, _ []TokenLogprob) any {
	if text == "" {
		return nil
	}
	var ev sseBatch
	if !f.textOpen {
		f.textOpen = true
		f.blocks++
		ev = append(ev, f.ev("content_block_start", map[string]any{"index": f.blocks - 1, "content_block": map[string]any{"type": "text", "text": ""}}))
	}
	return append(ev, f.ev("content_block_delta", map[string]any{"index": f.blocks - 1, "delta": map[string]any{"type": "text_delta", "text": text}}))
}

func (f *messagesFormat) toolCalls(calls []chat.ToolCall, _ []TokenLogprob) any {
	ev := f.closeText()
	for _, c := range calls {
		at := f.blocks
		f.blocks++
		use := toolUse(c)
		args, _ := json.Marshal(use["input"])
		use["input"] = map[string]any{}
		ev = append(ev,
			f.ev("content_block_start", map[string]any{"index": at, "content_block": use}),
			f.ev("content_block_delta", map[string]any{"index": at, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(args)}}),
			f.ev("content_block_stop", map[string]any{"index": at}))
	}
	return ev
}

// finish and usage are not used: end closes the stream (streamEnder).
func (f *messagesFormat) finish(string) any { return nil }
func (f *messagesFormat) usage(*Usage) any  { return nil }

func (f *messagesFormat) end(reason string, u *Usage) any {
	ev := f.closeText()
	out := 0
	if u != nil {
		out = u.CompletionTokens
	}
	return append(ev,
		f.ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": f.stopReason(reason), "stop_sequence": f.stopSequence()},
			"usage": map[string]int{"output_tokens": out}}),
		f.ev("message_stop", map[string]any{}))
}

func (f *messagesFormat) streamError(e *APIError) any {
	return sseBatch{f.ev("error", map[string]any{"error": map[string]string{"type": anthropicErrorType(e.Status), "message": e.Message}})}
}

func (f *messagesFormat) whole(text string, calls []chat.ToolCall, _ []TokenLogprob, reason string, u *Usage) any {
	content := []any{}
	if text != "" {
		content = append(content, map[string]any{"type": "text", "text": text})
	}
	for _, c := range calls {
		content = append(content, toolUse(c))
	}
	return f.message(content, f.stopReason(reason), u)
}

// anthropicErrorType is Anthropic's error type for an HTTP status.
func anthropicErrorType(status int) string {
	switch status {
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable:
		return "overloaded_error"
	case http.StatusGatewayTimeout:
		return "timeout_error"
	}
	return "api_error"
}

// anthropicWriter turns the OpenAI error bodies that the shared code writes (status >= 400)
// into Anthropic's shape, {"type": "error", "error": {"type", "message"}}, when the handler
// returns (finish); other responses pass through.
type anthropicWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func newAnthropicWriter(w http.ResponseWriter) *anthropicWriter {
	return &anthropicWriter{ResponseWriter: w}
}

func (a *anthropicWriter) WriteHeader(code int) {
	if a.status != 0 {
		return
	}
	a.status = code
	if code < 400 {
		a.ResponseWriter.WriteHeader(code)
	}
}

func (a *anthropicWriter) Write(b []byte) (int, error) {
	if a.status == 0 {
		a.WriteHeader(http.StatusOK)
	}
	if a.status >= 400 {
		return a.body.Write(b)
	}
	return a.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and the deadlines.
func (a *anthropicWriter) Unwrap() http.ResponseWriter { return a.ResponseWriter }

func (a *anthropicWriter) finish() {
	if a.status < 400 {
		return
	}
	var e struct {
		Error APIError `json:"error"`
	}
	msg := strings.TrimSpace(a.body.String())
	if json.Unmarshal(a.body.Bytes(), &e) == nil && e.Error.Message != "" {
		msg = e.Error.Message
	}
	a.ResponseWriter.Header().Set("Content-Type", "application/json")
	a.ResponseWriter.WriteHeader(a.status)
	json.NewEncoder(a.ResponseWriter).Encode(map[string]any{"type": "error",
		"error": map[string]string{"type": anthropicErrorType(a.status), "message": msg}})
}
