package tokenizer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countOps tokenizes text without special tokens and returns the number of priority-queue
// operations the merge loops made and the number of tokens.
func countOps(tok *Tokenizer, text string) (ops, tokens int) {
	st := new(state)
	ids := tok.tokenize(text, true, nil, st)
	return st.queue.ops, len(ids)
}

// TestLinearOnRepeats checks that long repeats (1 MiB of "a" and of spaces; 256 KiB of
// newlines, of a character that needs byte fallback and of a short word) cost a number of
// merge-queue operations proportional to the length: each merge queues at most two new
// pairs, so there are at most about 3n pushes and as many pops. An O(n²) rescan would fail
// the ratio check.
func TestLinearOnRepeats(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test-slow runs it")
	}
	spm := llamaVocab(t)
	bpe, _ := bpeTokenizer(t)
	const small = 1 << 14
	for _, tok := range []*Tokenizer{spm, bpe} {
		for _, unit := range []string{"a", " ", "\n", "🦙", "ab "} {
			large := 1 << 20 // 1 MiB of "a" and of spaces; the other cases 256 KiB
			if unit != "a" && unit != " " {
				large = 1 << 18
			}
			opsSmall, nSmall := countOps(tok, strings.Repeat(unit, small/len(unit)))
			opsLarge, nLarge := countOps(tok, strings.Repeat(unit, large/len(unit)))
			chars := large / len(unit) * len([]rune(unit))
			assert.LessOrEqual(t, opsLarge, 6*chars+6, "%s %q: queue operations", tok.Model(), unit)
			scale := float64(large) / float64(small)
			if opsSmall > 0 {
				assert.Less(t, float64(opsLarge)/float64(opsSmall), 1.2*scale, "%s %q: operations grow faster than the length", tok.Model(), unit)
			}
			require.Positive(t, nSmall)
			assert.Less(t, float64(nLarge)/float64(nSmall), 1.2*scale, "%s %q: token count", tok.Model(), unit)
		}
	}
}
