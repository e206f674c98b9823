package server

import (
	"encoding/json"
	"net/http"
)

// sseWriter writes server-sent events: "data: JSON\n\n", flushed after each.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func newSSE(w http.ResponseWriter) *sseWriter {
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

func (s *sseWriter) start() {
	if s.started {
		return
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

// namedEvent is an event with a name ("event: name" before its data), as the Responses API
// sends them; sseBatch are several, written together.
type namedEvent struct {
	name string
	data any
}

type sseBatch []namedEvent

// send writes one event with v as JSON (nothing for nil), or the named events of sseBatch
// together.
func (s *sseWriter) send(v any) error {
	var buf []byte
	switch v := v.(type) {
	case nil:
		return nil
	case sseBatch:
		for _, e := range v {
			b, err := json.Marshal(e.data)
			if err != nil {
				return err
			}
			buf = appendEvent(buf, e.name, b)
		}
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf = appendEvent(buf, "", b)
	}
	return s.write(buf)
}

// appendEvent appends one event: "event: name" (when named), "data: data", a blank line.
func appendEvent(buf []byte, name string, data []byte) []byte {
	if name != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, name...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "data: "...)
	buf = append(buf, data...)
	return append(buf, "\n\n"...)
}

// write sends buf (whole events) and flushes; nothing for an empty buf.
func (s *sseWriter) write(buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	s.start()
	if _, err := s.w.Write(buf); err != nil {
		return err
	}
	return s.rc.Flush()
}

// done writes the final "data: [DONE]".
func (s *sseWriter) done() error { return s.write(appendEvent(nil, "", []byte("[DONE]"))) }
