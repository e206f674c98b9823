package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
)

// format makes the response objects of one endpoint (chat or completions).
type format interface {
	head() any                               // first stream event, or nil
	piece(text string) any                   // a stream event with text
	finish(reason string) any                // the stream event with the finish reason
	usage(u *Usage) any                      // the stream event with the usage
	whole(text, reason string, u *Usage) any // the non-streaming response
}

// generate runs g for the request r and writes the response (streamed when stream).
func (s *Server) generate(w http.ResponseWriter, r *http.Request, g GenerateRequest, stream, includeUsage bool, f format) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.RequestTimeout)
	defer cancel()
	release, ok := s.admit(w, ctx)
	if !ok {
		return
	}
	defer release()
	var sse *sseWriter
	var text strings.Builder
	first, writeFailed := true, false
	emit := func(p Piece) error {
		if p.Text == "" {
			return nil
		}
		if first {
			first = false
			s.met.ttft.Observe(time.Since(start).Seconds())
		}
		if sse == nil {
			text.WriteString(p.Text)
			return nil
		}
		if err := sse.send(f.piece(p.Text)); err != nil {
			writeFailed = true
			return err
		}
		return nil
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
			sse.send(map[string]any{"error": apiErr}) // the status is sent: the error goes in the stream
		} else {
			writeError(w, apiErr)
		}
		return
	}
	u := usageOf(res)
	if sse == nil {
		writeJSON(w, f.whole(text.String(), res.FinishReason, u))
		return
	}
	if sse.send(f.finish(res.FinishReason)) != nil {
		return
	}
	if includeUsage {
		if sse.send(f.usage(u)) != nil {
			return
		}
	}
	sse.done()
}
