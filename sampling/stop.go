package sampling

import "bytes"

// StopMatcher finds stop strings in generated text that arrives a few bytes at a time (a
// token's piece may end inside a stop string, or inside a UTF-8 character). Feed it every
// piece; it returns the bytes that are safe to show and holds back a tail that might be the
// start of a stop string until the next piece decides. The zero value, or a matcher without
// stop strings, passes everything through.
type StopMatcher struct {
	stops   [][]byte
	pending []byte
	stopped bool
	which   int
}

// NewStopMatcher returns a StopMatcher for the given stop strings (empty ones are ignored).
func NewStopMatcher(stops ...string) *StopMatcher {
	m := &StopMatcher{}
	for _, s := range stops {
		if s != "" {
			m.stops = append(m.stops, []byte(s))
		}
	}
	return m
}

// Feed adds the bytes b of generated text. It returns the bytes that can be shown now, and
// stopped = true once a stop string is complete: out then ends just before it, and the
// matcher ignores further input. The stop string that completes first wins (the one that
// ends at the earliest byte, the longer one if two end there), so the result does not
// depend on how the text is cut into pieces.
func (m *StopMatcher) Feed(b []byte) (out []byte, stopped bool) {
	if m.stopped {
		return nil, true
	}
	buf := append(m.pending, b...)
	at, end, which := -1, -1, -1
	for k, s := range m.stops {
		i := bytes.Index(buf, s)
		if i < 0 {
			continue
		}
		if e := i + len(s); end < 0 || e < end || e == end && i < at {
			at, end, which = i, e, k
		}
	}
	if at >= 0 {
		m.stopped, m.which = true, which
		out = bytes.Clone(buf[:at])
		m.pending = buf[:0]
		return out, true
	}
	hold := m.holdBack(buf)
	out = bytes.Clone(buf[:len(buf)-hold])
	m.pending = append(buf[:0], buf[len(buf)-hold:]...)
	return out, false
}

// holdBack returns the length of the longest tail of buf that is a proper prefix of a stop
// string.
func (m *StopMatcher) holdBack(buf []byte) int {
	best := 0
	for _, s := range m.stops {
		for n := min(len(s)-1, len(buf)); n > best; n-- {
			if bytes.Equal(buf[len(buf)-n:], s[:n]) {
				best = n
				break
			}
		}
	}
	return best
}

// Pending returns how many bytes are held back because they may start a stop string.
func (m *StopMatcher) Pending() int { return len(m.pending) }

// Stopped reports whether a stop string was found, and which one (an index into the
// strings given to NewStopMatcher, counting only the non-empty ones), or -1.
func (m *StopMatcher) Stopped() (bool, int) {
	if !m.stopped {
		return false, -1
	}
	return true, m.which
}

// Matched returns the stop string that was found, or "" before one is.
func (m *StopMatcher) Matched() string {
	if !m.stopped {
		return ""
	}
	return string(m.stops[m.which])
}

// Flush returns the held-back bytes, for the end of generation without a stop string, and
// empties the buffer.
func (m *StopMatcher) Flush() []byte {
	out := bytes.Clone(m.pending)
	m.pending = m.pending[:0]
	return out
}

// Reset forgets the pending bytes and a found stop string.
func (m *StopMatcher) Reset() {
	m.pending = m.pending[:0]
	m.stopped, m.which = false, 0
}
