package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/ggml-go/ggml/chat"
)

// format makes the response objects of one endpoint (chat or completions).
type format interface {
	head() any                                                                                 // first stream event, or nil
	piece(text string, lps []TokenLogprob) any                                                 // a stream event with text (and its tokens' logprobs)
	toolCalls(calls []chat.ToolCall, lps []TokenLogprob) any                                   // the stream event with the tool calls (chat)
	finish(reason string) any                                                                  // the stream event with the finish reason
	usage(u *Usage) any                                                                        // the stream event with the usage
	whole(text string, calls []chat.ToolCall, lps []TokenLogprob, reason string, u *Usage) any // the non-streaming response
}

// streamEnder is a format whose stream ends its own way: the Responses API closes its output
// items and sends the whole response with the usage, and no "data: [DONE]".
type streamEnder interface {
	end(reason string, u *Usage) any
}

// stopReporter is a format that says which stop string ended a generation (the Messages
// API's stop_sequence); generate tells it before the response or the last events.
type stopReporter interface {
	setStopSequence(s string)
}

// streamErrorer is a format with its own event for an error after the stream started.
type streamErrorer interface {
	streamError(e *APIError) any
}

// FinishToolCalls is the finish reason of a chat completion that ends with tool calls.
const FinishToolCalls = "tool_calls"

// generate runs g for the request r and writes the response (streamed when stream). When
// tools is not nil and says so, the output is parsed for tool calls: a stream holds back
// the text from where a call may begin (chat.ToolCallStart) and sends the calls at the end.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, g GenerateRequest, stream, includeUsage bool, f format, tools *toolPlan) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	release, ok := s.admit(w, ctx)
	if !ok {
		return
	}
	defer release()
	parse := tools != nil && tools.parse
	var sse *sseWriter
	var full strings.Builder
	var lps []TokenLogprob // logprobs not yet sent (all of them when not streaming)
	if g.Logprobs {
		lps = []TokenLogprob{}
	}
	resetLPs := func() {
		if lps != nil {
			lps = []TokenLogprob{}
		}
	}
	sent := 0 // bytes of full sent in the stream
	first, writeFailed := true, false
	send := func(v any) error {
		if err := sse.send(v); err != nil {
			writeFailed = true
			return err
		}
		return nil
	}
	emit := func(p Piece) error {
		if p.Text == "" && len(p.Logprobs) == 0 {
			return nil
		}
		if first && p.Text != "" {
			first = false
			s.met.ttft.Observe(time.Since(start).Seconds())
		}
		full.WriteString(p.Text)
		lps = appendLogprobs(lps, p.Logprobs)
		if sse == nil {
			return nil
		}
		upto := full.Len()
		if parse {
			if at := chat.ToolCallStart(full.String()); at >= 0 {
				if at <= sent {
					return nil // held back until the end decides
				}
				upto = at
			}
		}
		text := full.String()[sent:upto]
		sent = upto
		err := send(f.piece(text, lps))
		resetLPs()
		return err
	}
	if stream {
		sse = newSSE(w)
		if h := f.head(); h != nil {
			if err := sse.send(h); err != nil {
				return
			}
		}
	}
	res, err := s.b.Generate(ctx, g, emit)
	s.met.promptTokens.Add(float64(res.PromptTokens))
	s.met.genTokens.Add(float64(res.CompletionTokens))
	if err != nil {
		var apiErr *APIError
		switch {
		case writeFailed:
			return // the client cannot be written to any more
		case ctx.Err() != nil:
			if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return // the client went away: nobody to answer
			}
			apiErr = &APIError{Status: http.StatusGatewayTimeout, Type: "timeout_error", Code: strp("timeout"),
				Message: "the request took longer than the server's limit of " + s.cfg.RequestTimeout.String()}
		case errors.As(err, &apiErr):
		case errors.Is(err, ErrPromptTooLong):
			apiErr = badRequest("messages", "%v", err).withCode("context_length_exceeded")
		default:
			s.cfg.Logger.Error("generation failed", "err", err)
			apiErr = serverError("generation failed: %v", err)
		}
		if sse != nil && sse.started {
			// the status is sent: the error goes in the stream
			if fe, ok := f.(streamErrorer); ok {
				sse.send(fe.streamError(apiErr))
			} else {
				sse.send(map[string]any{"error": apiErr})
			}
		} else {
			writeError(w, apiErr)
		}
		return
	}
	u := usageOf(res)
	text, reason := full.String(), res.FinishReason
	var calls []chat.ToolCall
	if parse {
		if content, cs := chat.ParseToolCalls(text, tools.names); cs != nil {
			text, calls, reason = content, cs, FinishToolCalls
			for i := range calls {
				if !isToolCallID(calls[i].ID) {
					calls[i].ID = newToolCallID()
				}
			}
		}
	}
	if sr, ok := f.(stopReporter); ok && reason == FinishStop {
		sr.setStopSequence(res.StopSequence)
	}
	if sse == nil {
		writeJSON(w, f.whole(text, calls, lps, reason, u))
		return
	}
	if calls != nil {
		if len(text) > sent && send(f.piece(text[sent:], nil)) != nil {
			return
		}
		if send(f.toolCalls(calls, lps)) != nil {
			return
		}
	} else if len(text) > sent || len(lps) > 0 {
		if send(f.piece(text[sent:], lps)) != nil {
			return
		}
	}
	if fe, ok := f.(streamEnder); ok {
		send(fe.end(reason, u))
		return
	}
	if send(f.finish(reason)) != nil {
		return
	}
	if includeUsage {
		if send(f.usage(u)) != nil {
			return
		}
	}
	sse.done()
}

// newToolCallID returns an id for a tool call: 9 alphanumeric characters, the form the
// Mistral templates require of the ids of earlier calls (a client sends them back).
func newToolCallID() string {
	var b [5]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])[:9]
}

// isToolCallID reports whether id (from the model's output) is usable as is.
func isToolCallID(id string) bool {
	if len(id) != 9 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
