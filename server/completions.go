package server

import (
	"net/http"
	"time"

	"github.com/ggml-go/ggml/chat"
)

// completions serves POST /v1/completions.
func (s *Server) completions(w http.ResponseWriter, r *http.Request) {
	var req CompletionRequest
	if e := readJSON(w, r, s.cfg.MaxBodyBytes, &req); e != nil {
		writeError(w, e)
		return
	}
	if !req.Prompt.Set {
		writeError(w, badRequest("prompt", "prompt is missing: send a string"))
		return
	}
	g, e := req.generation(s.info)
	if e != nil {
		writeError(w, e)
		return
	}
	if req.Logprobs != nil {
		if n := *req.Logprobs; n < 0 || n > maxCompletionTopLogprobs {
			writeError(w, badRequest("logprobs", "logprobs is %d: it must be between 0 and %d (alternatives per token), or null", n, maxCompletionTopLogprobs))
			return
		}
		g.Logprobs, g.TopLogprobs = true, int(*req.Logprobs)
	}
	prompt := req.Prompt.Tokens
	if prompt == nil {
		prompt = s.b.CompletionPrompt(req.Prompt.Text)
	} else if _, err := s.b.Detokenize(prompt); err != nil {
		writeError(w, badRequest("prompt", "%v", err))
		return
	}
	if e := checkPrompt(len(prompt), s.info.ContextLength); e != nil {
		e.Param = strp("prompt")
		writeError(w, e)
		return
	}
	g.Prompt = prompt
	f := &completionFormat{id: newID("cmpl-"), created: time.Now().Unix(), model: s.info.ID}
	if req.Echo && req.Prompt.Tokens == nil {
		f.echo = req.Prompt.Text
	}
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	s.generate(w, r, g, req.Stream, includeUsage, f, nil)
}

type completionFormat struct {
	id      string
	created int64
	model   string
	echo    string
	offset  int // text offset of the next token's logprobs (bytes of the choice's text)
}

func (f *completionFormat) resp(choices []completionChoice, u *Usage) completionResponse {
	return completionResponse{ID: f.id, Object: "text_completion", Created: f.created, Model: f.model, SystemFingerprint: fingerprint, Choices: choices, Usage: u}
}

func (f *completionFormat) head() any {
	f.offset = len(f.echo)
	if f.echo == "" {
		return nil
	}
	return f.resp([]completionChoice{{Text: f.echo}}, nil)
}

func (f *completionFormat) piece(text string, lps []TokenLogprob) any {
	return f.resp([]completionChoice{{Text: text, Logprobs: completionLogprobsOf(lps, &f.offset)}}, nil)
}

// toolCalls is never called: completions have no tools.
func (f *completionFormat) toolCalls(calls []chat.ToolCall, lps []TokenLogprob) any {
	return f.piece("", lps)
}

func (f *completionFormat) finish(reason string) any {
	return f.resp([]completionChoice{{FinishReason: &reason}}, nil)
}

func (f *completionFormat) usage(u *Usage) any { return f.resp([]completionChoice{}, u) }

func (f *completionFormat) whole(text string, _ []chat.ToolCall, lps []TokenLogprob, reason string, u *Usage) any {
	f.offset = len(f.echo)
	return f.resp([]completionChoice{{Text: f.echo + text, Logprobs: completionLogprobsOf(lps, &f.offset), FinishReason: &reason}}, u)
}
