package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/ggml-go/ggml/chat"
)

// chatCompletions serves POST /v1/chat/completions.
func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req ChatCompletionRequest
	if e := readJSON(w, r, s.cfg.MaxBodyBytes, &req); e != nil {
		writeError(w, e)
		return
	}
	g, plan, e := s.prepareChat(r.Context(), &req)
	if e != nil {
		writeError(w, e)
		return
	}
	f := &chatFormat{id: newID("chatcmpl-"), created: time.Now().Unix(), model: s.info.ID}
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	s.generate(w, r, g, req.Stream, includeUsage, f, &plan)
}

// prepareChat checks a chat request and renders its prompt: the generation to run and what to
// do with tool calls (shared by /v1/chat/completions and /v1/responses).
func (s *Server) prepareChat(ctx context.Context, req *ChatCompletionRequest) (GenerateRequest, toolPlan, *APIError) {
	if e := checkMessages(req.Messages); e != nil {
		return GenerateRequest{}, toolPlan{}, e
	}
	g, e := req.generation(s.info)
	if e != nil {
		return g, toolPlan{}, e
	}
	if req.TopLogprobs != nil {
		if n := *req.TopLogprobs; n < 0 || n > maxChatTopLogprobs {
			return g, toolPlan{}, badRequest("top_logprobs", "top_logprobs is %d: it must be between 0 and %d", n, maxChatTopLogprobs)
		}
		if !req.Logprobs && *req.TopLogprobs > 0 {
			return g, toolPlan{}, badRequest("top_logprobs", "top_logprobs needs logprobs: true")
		}
		g.TopLogprobs = int(*req.TopLogprobs)
	}
	g.Logprobs = req.Logprobs
	plan, e := planTools(req.Tools, req.ToolChoice)
	if e != nil {
		return g, plan, e
	}
	if plan.grammar != nil {
		if g.Grammar != nil {
			return g, plan, badRequest("tool_choice", "tool_choice %s and response_format both constrain the output: send one of them", string(req.ToolChoice))
		}
		g.Grammar = plan.grammar
	}
	msgs := make([]chat.Message, len(req.Messages))
	for i, m := range req.Messages {
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		msgs[i] = chat.Message{Role: role, Content: m.Content.Text, Name: m.Name, ToolCallID: m.ToolCallID}
		calls, e := toolCalls(i, m.ToolCalls)
		if e != nil {
			return g, plan, e
		}
		msgs[i].ToolCalls = calls
	}
	tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	prompt, err := s.b.ChatPrompt(tctx, chat.Request{Messages: msgs, Tools: req.Tools})
	cancel()
	if err != nil {
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			return g, plan, apiErr
		}
		return g, plan, badRequest("messages", "the chat template cannot render these messages: %v", err)
	}
	if e := checkPrompt(len(prompt), s.info.ContextLength); e != nil {
		return g, plan, e
	}
	g.Prompt = prompt
	return g, plan, nil
}

// toolCalls converts the tool_calls of message i (OpenAI's shape: id, type, function with
// name and arguments as a JSON string) for the chat template.
func toolCalls(i int, raw json.RawMessage) ([]chat.ToolCall, *APIError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var in []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, badRequest("messages", "messages[%d].tool_calls must be an array of {\"id\", \"type\": \"function\", \"function\": {\"name\", \"arguments\"}}", i)
	}
	out := make([]chat.ToolCall, len(in))
	for j, c := range in {
		args := json.RawMessage(c.Function.Arguments)
		if !json.Valid(args) {
			b, _ := json.Marshal(c.Function.Arguments)
			args = b
		}
		out[j] = chat.ToolCall{ID: c.ID, Type: c.Type, Name: c.Function.Name, Arguments: args}
	}
	return out, nil
}

// fingerprint is the system_fingerprint of responses.
const fingerprint = "ggml-go"

type chatFormat struct {
	id      string
	created int64
	model   string
}

func (f *chatFormat) chunk(choices []chatChoice, u *Usage) chatResponse {
	return chatResponse{ID: f.id, Object: "chat.completion.chunk", Created: f.created, Model: f.model, SystemFingerprint: fingerprint, Choices: choices, Usage: u}
}

func (f *chatFormat) head() any {
	empty := ""
	return f.chunk([]chatChoice{{Delta: &responseMessage{Role: "assistant", Content: &empty}}}, nil)
}

func (f *chatFormat) piece(text string, lps []TokenLogprob) any {
	return f.chunk([]chatChoice{{Delta: &responseMessage{Content: &text}, Logprobs: chatLogprobsOf(lps)}}, nil)
}

func (f *chatFormat) toolCalls(calls []chat.ToolCall, lps []TokenLogprob) any {
	return f.chunk([]chatChoice{{Delta: &responseMessage{ToolCalls: toolCallsJSON(calls, true)}, Logprobs: chatLogprobsOf(lps)}}, nil)
}

func (f *chatFormat) finish(reason string) any {
	return f.chunk([]chatChoice{{Delta: &responseMessage{}, FinishReason: &reason}}, nil)
}

func (f *chatFormat) usage(u *Usage) any { return f.chunk([]chatChoice{}, u) }

func (f *chatFormat) whole(text string, calls []chat.ToolCall, lps []TokenLogprob, reason string, u *Usage) any {
	m := &wholeMessage{Role: "assistant", Content: &text, ToolCalls: toolCallsJSON(calls, false)}
	if calls != nil && text == "" {
		m.Content = nil
	}
	return chatResponse{ID: f.id, Object: "chat.completion", Created: f.created, Model: f.model, SystemFingerprint: fingerprint,
		Choices: []chatChoice{{Message: m, Logprobs: chatLogprobsOf(lps), FinishReason: &reason}}, Usage: u}
}

// toolCallsJSON converts calls to OpenAI's shape (with their index in stream deltas).
func toolCallsJSON(calls []chat.ToolCall, indexed bool) []toolCallJSON {
	if calls == nil {
		return nil
	}
	out := make([]toolCallJSON, len(calls))
	for i, c := range calls {
		out[i].ID, out[i].Type = c.ID, "function"
		out[i].Function.Name, out[i].Function.Arguments = c.Name, string(c.Arguments)
		if indexed {
			out[i].Index = &i
		}
	}
	return out
}
