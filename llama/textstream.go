package llama

import (
	"unicode/utf8"

	"github.com/ggml-go/ggml/sampling"
)

// textStream turns the bytes of generated tokens into text that is safe to show: stop
// strings are cut (the bytes that may begin one are held back until the next token decides),
// and a UTF-8 character split across tokens is held back until it is complete. Bytes that
// can never form a character are replaced by U+FFFD, so every piece is valid UTF-8, unless
// raw is set.
type textStream struct {
	stop    *sampling.StopMatcher
	pending []byte // shown by the stop matcher, held back as an incomplete character
	raw     bool   // keep invalid bytes
}

func newTextStream(stops []string, raw bool) *textStream {
	return &textStream{stop: sampling.NewStopMatcher(stops...), raw: raw}
}

// feed adds the bytes of a token and returns the text that can be shown, and whether a stop
// string completed (the text then ends before it, and everything held back is released).
func (s *textStream) feed(b []byte) (string, bool) {
	shown, stopped := s.stop.Feed(b)
	s.pending = append(s.pending, shown...)
	if stopped {
		return s.release(), true
	}
	n := completeUTF8(s.pending)
	out := s.valid(s.pending[:n])
	s.pending = append(s.pending[:0], s.pending[n:]...)
	return out, false
}

// matched returns the stop string that ended the text, or "".
func (s *textStream) matched() string { return s.stop.Matched() }

// flush returns everything held back, at the end of generation.
func (s *textStream) flush() string {
	s.pending = append(s.pending, s.stop.Flush()...)
	return s.release()
}

func (s *textStream) release() string {
	out := s.valid(s.pending)
	s.pending = s.pending[:0]
	return out
}

func (s *textStream) valid(b []byte) string {
	if s.raw {
		return string(b)
	}
	return validUTF8(b)
}

// completeUTF8 returns the length of the longest prefix of b that does not end inside a
// character that the next bytes could still complete.
func completeUTF8(b []byte) int {
	// a character is at most 4 bytes: look at the last 3 for the start of an incomplete one
	for i := len(b) - 1; i >= 0 && i >= len(b)-3; i-- {
		c := b[i]
		if c < 0x80 {
			return len(b) // ASCII: nothing incomplete after it
		}
		if c >= 0xC0 { // a leading byte
			need := 2
			switch {
			case c >= 0xF0:
				need = 4
			case c >= 0xE0:
				need = 3
			}
			if len(b)-i < need && c < 0xF5 {
				return i // incomplete: hold it back
			}
			return len(b)
		}
	}
	return len(b)
}

// validUTF8 returns b as a string with invalid bytes replaced by U+FFFD.
func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]rune, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		out = append(out, r) // RuneError for an invalid byte
		b = b[n:]
	}
	return string(out)
}
