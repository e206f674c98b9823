package tokenizer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ggml-go/ggml/gguf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file checks the gpt2 (byte-level BPE) tokenizer against a deliberately naive
// reference: a regexp-driven pre-tokenizer, the byte-to-unicode table built the textbook
// way, and a merge loop that rescans every pair after each merge.

const space = `[\t\n\v\f\r \x{85}\p{Z}]`

var refAlternatives = []*regexp.Regexp{
	regexp.MustCompile(`^(?:'s|'t|'re|'ve|'m|'ll|'d)`),
	regexp.MustCompile(`^ ?\pL+`),
	regexp.MustCompile(`^ ?\pN+`),
	regexp.MustCompile(`^ ?[^\t\n\v\f\r \x{85}\p{Z}\pL\pN]+`),
}
var refSpaces = regexp.MustCompile(`^` + space + `+`)

// refPreTokenize applies the GPT-2 pattern alternative by alternative at each position;
// \s+(?!\S) is emulated by giving back the last character of a run that a non-space follows.
func refPreTokenize(text string) []string {
	var words []string
	for len(text) > 0 {
		n := 0
		for _, re := range refAlternatives {
			if m := re.FindString(text); m != "" {
				n = len(m)
				break
			}
		}
		if n == 0 {
			m := refSpaces.FindString(text)
			require_(len(m) > 0, "no alternative matches %q", text)
			n = len(m)
			if n < len(text) {
				_, w := utf8.DecodeLastRuneInString(m)
				if n-w > 0 {
					n -= w
				}
			}
		}
		words = append(words, text[:n])
		text = text[n:]
	}
	return words
}

func require_(ok bool, format string, args ...any) {
	if !ok {
		panic(fmt.Sprintf(format, args...))
	}
}

// refByteTable builds GPT-2's bytes_to_unicode: printable bytes keep their code point, the
// rest get 256, 257, ... in byte order.
func refByteTable() map[byte]rune {
	m := map[byte]rune{}
	var keep []int
	for b := int('!'); b <= '~'; b++ {
		keep = append(keep, b)
	}
	for b := 0xA1; b <= 0xAC; b++ {
		keep = append(keep, b)
	}
	for b := 0xAE; b <= 0xFF; b++ {
		keep = append(keep, b)
	}
	for _, b := range keep {
		m[byte(b)] = rune(b)
	}
	n := 0
	for b := 0; b < 256; b++ {
		if _, ok := m[byte(b)]; !ok {
			m[byte(b)] = rune(256 + n)
			n++
		}
	}
	return m
}

func refByteLevel(word string) []string {
	table := refByteTable()
	var out []string
	for i := 0; i < len(word); i++ {
		out = append(out, string(table[word[i]]))
	}
	return out
}

// refMerge merges the lowest-ranked adjacent pair, leftmost first, rescanning each time.
func refMerge(syms []string, rank map[[2]string]int) []string {
	for {
		best, bestRank := -1, 0
		for i := 0; i+1 < len(syms); i++ {
			if r, ok := rank[[2]string{syms[i], syms[i+1]}]; ok && (best < 0 || r < bestRank) {
				best, bestRank = i, r
			}
		}
		if best < 0 {
			return syms
		}
		syms = slices.Replace(syms, best, best+2, syms[best]+syms[best+1])
	}
}

func refTokenizeBPE(v Vocab, text string) []int32 {
	ids := map[string]int32{}
	for i, s := range v.Tokens {
		ids[s] = int32(i)
	}
	rank := map[[2]string]int{}
	for i, m := range v.Merges {
		l, r, _ := strings.Cut(m, " ")
		if _, dup := rank[[2]string{l, r}]; !dup {
			rank[[2]string{l, r}] = i
		}
	}
	out := []int32{}
	for _, w := range refPreTokenize(text) {
		for _, s := range refMerge(refByteLevel(w), rank) {
			out = append(out, ids[s])
		}
	}
	return out
}

// trainBPE learns n merges from corpus the simplest way (most frequent pair, ties by text)
// and returns a gpt2 vocabulary: the 256 byte characters (shuffled), the merged tokens and a
// control token <|endoftext|> used as BOS and EOS.
func trainBPE(t testing.TB, corpus []string, n int) Vocab {
	var words [][]string
	for _, line := range corpus {
		for _, w := range refPreTokenize(line) {
			words = append(words, refByteLevel(w))
		}
	}
	v := NewVocab(ModelBPE)
	for _, r := range refByteTable() {
		v.Tokens = append(v.Tokens, string(r))
	}
	slices.Sort(v.Tokens)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(v.Tokens), func(i, j int) { v.Tokens[i], v.Tokens[j] = v.Tokens[j], v.Tokens[i] })
	for len(v.Merges) < n {
		count := map[[2]string]int{}
		for _, w := range words {
			for i := 0; i+1 < len(w); i++ {
				count[[2]string{w[i], w[i+1]}]++
			}
		}
		var best [2]string
		bestN := 0
		for p, c := range count {
			if c > bestN || c == bestN && p[0]+" "+p[1] < best[0]+" "+best[1] {
				best, bestN = p, c
			}
		}
		if bestN == 0 {
			break
		}
		v.Merges = append(v.Merges, best[0]+" "+best[1])
		v.Tokens = append(v.Tokens, best[0]+best[1])
		for k, w := range words {
			words[k] = refMerge(w, map[[2]string]int{best: 0})
		}
	}
	v.Tokens = append(v.Tokens, "<|endoftext|>")
	v.Types = make([]TokenType, len(v.Tokens))
	v.Scores = make([]float32, len(v.Tokens))
	for i := range v.Types {
		v.Types[i] = TypeNormal
	}
	v.Types[len(v.Types)-1] = TypeControl
	v.BOS = int32(len(v.Tokens) - 1)
	v.EOS = v.BOS
	require.GreaterOrEqual(t, len(v.Merges), n/2)
	return v
}

var bpeCorpus = []string{
	"The quick brown fox jumps over the lazy dog. The dog didn't care; it's lazy.",
	"We'll see what they've done: 1234 apples, 56 pears and 7.5 kg of cheese!!!",
	"  Leading spaces,\ttabs\tand\nnew lines\n\n matter   a lot   for the pattern.",
	"Ünïcödé wörds: café, naïve, 日本語のテキスト, Привет мир, Ελληνικά, ٣٤٥ digits.",
	"Symbols like <html>, {json: true}, a+b=c, and ... ellipses --- dashes ___",
	"I'm sure you're right, and I'd say we'll meet; they'll know. I've said it's done.",
}

func bpeTokenizer(t testing.TB) (*Tokenizer, Vocab) {
	v := trainBPE(t, bpeCorpus, 300)
	v.Pre = "gpt-2"
	// Round trip through a GGUF file, as a trained vocabulary would be stored.
	var b gguf.Builder
	require.NoError(t, v.SetGGUF(&b))
	var buf bytes.Buffer
	_, err := b.WriteTo(&buf)
	require.NoError(t, err)
	f, err := gguf.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	tok, err := FromGGUF(f)
	require.NoError(t, err)
	require.Equal(t, v, tok.Vocab())
	return tok, v
}

func TestPreTokenizeCases(t *testing.T) {
	cases := map[string][]string{
		"Hello world":        {"Hello", " world"},
		"it's  I'll they're": {"it", "'s", " ", " I", "'ll", " they", "'re"},
		"a   b":              {"a", "  ", " b"},
		"a\t\tb":             {"a", "\t", "\t", "b"},
		"a \tb":              {"a", " ", "\t", "b"},
		"end  ":              {"end", "  "},
		"x 123 45.6!!":       {"x", " 123", " 45", ".", "6", "!!"},
		"'sam 'x ?'s":        {"'s", "am", " '", "x", " ?'", "s"},
		"日本語 café":           {"日本語", " café"},
		" ":                  {" "},
		"\n\n hi":            {"\n\n", " hi"},
		"a\xffb":             {"a", "\ufffd", "b"}, // an undecodable byte reads as U+FFFD
	}
	for text, want := range cases {
		assert.Equal(t, want, preSplit(t, "gpt-2", text), "%q", text)
		assert.Equal(t, want, refPreTokenize(canonicalUTF8(text)), "reference on %q", text)
	}
}

func TestByteLevelTable(t *testing.T) {
	ref := refByteTable()
	for b := 0; b < 256; b++ {
		assert.Equal(t, ref[byte(b)], byteToRune[b], "byte %#x", b)
	}
	assert.Equal(t, 'Ġ', byteToRune[' '])
	assert.Equal(t, "Ġhi", string(appendByteLevel(nil, " hi")))
}

// TestBPEMatchesReference compares the tokenizer with the naive reference on the training
// corpus, on random mixes of its words and symbols, and on random bytes; every result must
// also detokenize back to the input.
func TestBPEMatchesReference(t *testing.T) {
	tok, v := bpeTokenizer(t)
	texts := slices.Clone(bpeCorpus)
	rng := rand.New(rand.NewPCG(3, 4))
	parts := []string{" ", "  ", "\t", "\n", "'s", "'ll", "the", "The", " dog", "12", "3.5", "!!", "é", "日本", "Ω", "\u00a0", "\u3000", "<|endoftext|>", "\xff", "\xe6\x97"}
	for i := 0; i < 300; i++ {
		var sb strings.Builder
		for j := rng.IntN(12); j >= 0; j-- {
			if rng.IntN(3) == 0 {
				w := strings.Fields(bpeCorpus[rng.IntN(len(bpeCorpus))])
				sb.WriteString(w[rng.IntN(len(w))])
			} else {
				sb.WriteString(parts[rng.IntN(len(parts))])
			}
		}
		texts = append(texts, sb.String())
	}
	for i := 0; i < 100; i++ {
		b := make([]byte, rng.IntN(20))
		for k := range b {
			b[k] = byte(rng.IntN(256))
		}
		texts = append(texts, string(b))
	}
	for _, text := range texts {
		// Undecodable bytes read as U+FFFD, as in llama.cpp.
		got := tok.Tokenize(text, false, false)
		canon := canonicalUTF8(text)
		require.Equal(t, refTokenizeBPE(v, canon), got, "%q", text)
		require.Equal(t, canon, string(tok.Detokenize(got)), "round trip of %q", text)
		require.Equal(t, canon, string(tok.Decode(got)), "decode of %q", text)
	}
}

func TestBPEProperties(t *testing.T) {
	tok, v := bpeTokenizer(t)
	assert.Equal(t, "gpt2", tok.Model())
	assert.False(t, tok.AddBOSDefault(), "BPE adds no BOS by default")
	eot := int32(len(v.Tokens) - 1)
	// No leading space is added, and the first merge is applied wherever its pair occurs.
	ids := tok.Tokenize("The dog", false, false)
	assert.Equal(t, "The dog", string(tok.Detokenize(ids)))
	for _, id := range ids {
		assert.NotEqual(t, "Ġ", tok.Token(id), "a space before a word joins the word")
	}
	// Merge priority: with the merges "a b" (rank 0) and "b c" (rank 1), "abc" becomes
	// "ab"+"c"; with the ranks swapped, "a"+"bc".
	for _, swap := range []bool{false, true} {
		w := NewVocab(ModelBPE)
		for b := 0; b < 256; b++ {
			w.Tokens = append(w.Tokens, string(byteToRune[b]))
		}
		w.Tokens = append(w.Tokens, "ab", "bc")
		w.Merges = []string{"a b", "b c"}
		if swap {
			w.Merges = []string{"b c", "a b"}
		}
		small, err := New(w)
		require.NoError(t, err)
		want := []int32{256, 'c'}
		if swap {
			want = []int32{'a', 257}
		}
		assert.Equal(t, want, small.Tokenize("abc", false, false), "swapped %v", swap)
		assert.Equal(t, []int32{256, 256, 'a'}, small.Tokenize("ababa", false, false))
	}
	// Special tokens: matched only with special set; BOS added only when asked.
	assert.Equal(t, []int32{eot}, tok.Tokenize("<|endoftext|>", false, true))
	assert.NotContains(t, tok.Tokenize("<|endoftext|>", false, false), eot)
	assert.NotEqual(t, eot, tok.Tokenize("x", true, false)[0], "add_bos is false")
	assert.Equal(t, []byte("<|endoftext|>"), tok.Piece(eot), "control tokens show their text")
	assert.Empty(t, tok.AppendText(nil, eot), "... but not as plain text")
	assert.True(t, tok.IsEOG(eot))
	assert.Equal(t, []byte(" "), tok.Piece(tok.byteIDs[' ']))
}
