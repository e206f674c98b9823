package sampling

import (
	"bytes"
	"testing"
)

// FuzzStopMatcher compares the streaming matcher with the obvious answer on the whole text,
// however it is split into pieces: stop at the first byte where a stop string completes
// (the longest one ending there), show what comes before it.
func FuzzStopMatcher(f *testing.F) {
	f.Add("hello ### world", "###", "\n\n", uint8(3))
	f.Add("aaab", "aab", "b", uint8(1))
	f.Add("xyz", "", "zz", uint8(2))
	f.Fuzz(func(t *testing.T, text, stop1, stop2 string, step uint8) {
		n := int(step%16) + 1
		var stops [][]byte
		for _, s := range []string{stop1, stop2} {
			if s != "" {
				stops = append(stops, []byte(s))
			}
		}
		want, wantStop := []byte(text), false
		at := -1
		for e := 1; e <= len(text) && at < 0; e++ { // the first byte at which a stop completes
			for _, s := range stops {
				if bytes.HasSuffix([]byte(text[:e]), s) && (at < 0 || e-len(s) < at) {
					at = e - len(s)
				}
			}
		}
		if at >= 0 {
			want, wantStop = want[:at], true
		}
		m := NewStopMatcher(stop1, stop2)
		var got []byte
		stopped := false
		for i := 0; i < len(text) && !stopped; i += n {
			out, stop := m.Feed([]byte(text[i:min(i+n, len(text))]))
			got = append(got, out...)
			stopped = stop
			if !stop && m.Pending() > 0 && !pendingIsPrefix(text[:min(i+n, len(text))], m.Pending(), stops) {
				t.Fatalf("holds back %d bytes that start no stop string", m.Pending())
			}
		}
		if !stopped {
			got = append(got, m.Flush()...)
		}
		if stopped != wantStop || !bytes.Equal(got, want) {
			t.Fatalf("text %q stops %q: got %q (stop %v), want %q (stop %v)", text, stops, got, stopped, want, wantStop)
		}
	})
}

func pendingIsPrefix(seen string, n int, stops [][]byte) bool {
	tail := seen[len(seen)-n:]
	for _, s := range stops {
		if len(s) > n && string(s[:n]) == tail {
			return true
		}
	}
	return false
}
