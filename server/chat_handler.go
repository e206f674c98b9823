package server

import (
	"context"
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
	if e := checkMessages(req.Messages); e != nil {
		writeError(w, e)
		return
	}
	g, e := req.generation(s.info.ContextLength)
	if e != nil {
		writeError(w, e)
		return
	}
	msgs := make([]chat.Message, len(req.Messages))
	for i, m := range req.Messages {
		role := m.Role
		if role == "developer" {
			role = "system"
		}
		msgs[i] = chat.Message{Role: role, Content: m.Content.Text, Name: m.Name, ToolCallID: m.ToolCallID}
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	prompt, err := s.b.ChatPrompt(ctx, msgs)
	cancel()
	if err != nil {
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			writeError(w, apiErr)
		} else {
			writeError(w, badRequest("messages", "the chat template cannot render these messages: %v", err))
		}
		return
	}
	if e := checkPrompt(len(prompt), s.info.ContextLength); e != nil {
		writeError(w, e)
		return
	}
	g.Prompt = prompt
	f := &chatFormat{id: newID("chatcmpl-"), created: time.Now().Unix(), model: s.info.ID}
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	s.generate(w, r, g, req.Stream, includeUsage, f)
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

func (f *chatFormat) piece(text string) any {
	return f.chunk([]chatChoice{{Delta: &responseMessage{Content: &text}}}, nil)
}

func (f *chatFormat) finish(reason string) any {
	return f.chunk([]chatChoice{{Delta: &responseMessage{}, FinishReason: &reason}}, nil)
}

func (f *chatFormat) usage(u *Usage) any { return f.chunk([]chatChoice{}, u) }

func (f *chatFormat) whole(text, reason string, u *Usage) any {
	return chatResponse{ID: f.id, Object: "chat.completion", Created: f.created, Model: f.model, SystemFingerprint: fingerprint,
		Choices: []chatChoice{{Message: &responseMessage{Role: "assistant", Content: &text}, FinishReason: &reason}}, Usage: u}
}
