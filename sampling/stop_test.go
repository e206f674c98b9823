package sampling

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// feedAll feeds the pieces one by one and returns the text shown, whether it stopped, and
// the bytes still held back.
func feedAll(m *StopMatcher, pieces ...string) (shown string, stopped bool) {
	var sb strings.Builder
	for _, p := range pieces {
		out, stop := m.Feed([]byte(p))
		sb.Write(out)
		if stop {
			return sb.String(), true
		}
	}
	return sb.String(), false
}

func TestStopMatcher(t *testing.T) {
	cases := []struct {
		stops   []string
		pieces  []string
		shown   string
		stopped bool
		pending int
	}{
		{nil, []string{"abc", "def"}, "abcdef", false, 0},
		{[]string{"\n\n"}, []string{"Hello", "\n", "world"}, "Hello\nworld", false, 0},
		{[]string{"\n\n"}, []string{"Hello", "\n", "\n", "more"}, "Hello", true, 0},
		{[]string{"User:"}, []string{"ok. Us", "er", ": hi"}, "ok. ", true, 0},
		{[]string{"User:"}, []string{"ok. Us", "ed it"}, "ok. Used it", false, 0},
		{[]string{"User:"}, []string{"ok. Use"}, "ok. ", false, 3},
		{[]string{"abc", "bcd"}, []string{"xabcd"}, "x", true, 0},
		{[]string{"bcd", "abc"}, []string{"xab", "cd"}, "x", true, 0},
		{[]string{"ab", "abcd"}, []string{"zabcd"}, "z", true, 0},
		{[]string{"aab"}, []string{"a", "a", "a", "b"}, "a", true, 0},
		{[]string{"aab"}, []string{"a", "a", "a"}, "a", false, 2},
		{[]string{"", "END"}, []string{"the END"}, "the ", true, 0},
	}
	for _, c := range cases {
		m := NewStopMatcher(c.stops...)
		shown, stopped := feedAll(m, c.pieces...)
		assert.Equal(t, c.shown, shown, "%q %q", c.stops, c.pieces)
		assert.Equal(t, c.stopped, stopped, "%q %q", c.stops, c.pieces)
		if !stopped {
			assert.Equal(t, c.pending, m.Pending(), "%q %q", c.stops, c.pieces)
		}
	}
}

func TestStopMatcherStateAndFlush(t *testing.T) {
	m := NewStopMatcher("</s>", "###")
	out, stop := m.Feed([]byte("answer #"))
	assert.Equal(t, "answer ", string(out))
	assert.False(t, stop)
	assert.Equal(t, 1, m.Pending())
	stopped, which := m.Stopped()
	assert.False(t, stopped)
	assert.Equal(t, -1, which)
	assert.Empty(t, m.Matched())
	assert.Equal(t, "#", string(m.Flush()))
	assert.Zero(t, m.Pending())

	out, stop = m.Feed([]byte("x##"))
	assert.False(t, stop)
	assert.Equal(t, "x", string(out))
	out, stop = m.Feed([]byte("#tail"))
	assert.True(t, stop)
	assert.Empty(t, out)
	stopped, which = m.Stopped()
	assert.True(t, stopped)
	assert.Equal(t, 1, which)
	assert.Equal(t, "###", m.Matched())
	out, stop = m.Feed([]byte("more"))
	assert.True(t, stop)
	assert.Empty(t, out, "nothing after a stop")

	m.Reset()
	assert.Empty(t, m.Matched())
	out, stop = m.Feed([]byte("again"))
	assert.False(t, stop)
	assert.Equal(t, "again", string(out))

	var zero StopMatcher
	out, stop = zero.Feed([]byte("anything"))
	assert.Equal(t, "anything", string(out))
	assert.False(t, stop)
}

// TestStopMatcherAnySplit: however the text is cut into pieces, the shown text and the
// stop decision are the same as for the text in one piece.
func TestStopMatcherAnySplit(t *testing.T) {
	text := "one two\n\nthree ### four"
	for _, stops := range [][]string{{"###"}, {"\n\n"}, {"two\n", "#"}, {"zzz"}} {
		m := NewStopMatcher(stops...)
		want, wantStop := feedAll(m, text)
		if !wantStop {
			want += string(m.Flush())
		}
		for cut1 := 0; cut1 <= len(text); cut1++ {
			for cut2 := cut1; cut2 <= len(text); cut2 += 3 {
				m := NewStopMatcher(stops...)
				got, stop := feedAll(m, text[:cut1], text[cut1:cut2], text[cut2:])
				if !stop {
					got += string(m.Flush())
				}
				assert.Equal(t, want, got, "%q cut at %d %d", stops, cut1, cut2)
				assert.Equal(t, wantStop, stop)
			}
		}
	}
}
