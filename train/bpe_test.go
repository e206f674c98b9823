package train

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/tokenizer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goText is a bit of Go source with some non-ASCII, for the tokenizer tests.
var goText = []string{
	"package main\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n// Hello greets — café, naïve.\nfunc Hello(name string) string {\n\treturn \"hello, \" + strings.ToUpper(name)\n}\n",
	"func main() {\n\tfor i := 0; i < 10; i++ {\n\t\tfmt.Println(Hello(\"world\"), i)\n\t}\n\tif err != nil {\n\t\treturn err\n\t}\n}\n",
	"type Point struct {\n\tX, Y int\n}\n\nfunc (p Point) String() string {\n\treturn fmt.Sprintf(\"(%d, %d)\", p.X, p.Y)\n}\n",
}

func trainedTokenizer(t *testing.T, size int) (tokenizer.Vocab, *tokenizer.Tokenizer) {
	t.Helper()
	var texts []string
	for i := 0; i < 20; i++ {
		texts = append(texts, goText...)
	}
	v, err := TrainTokenizer(texts, TokenizerOptions{VocabSize: size, MinCharCount: 3})
	require.NoError(t, err)
	tok, err := tokenizer.New(v)
	require.NoError(t, err)
	return v, tok
}

func TestTokenizerVocabSize(t *testing.T) {
	for _, size := range []int{260, 300, 400} {
		v, tok := trainedTokenizer(t, size)
		assert.Len(t, v.Tokens, size, "vocabulary size %d", size)
		assert.Equal(t, size, tok.NumTokens())
		assert.Equal(t, "<unk>", v.Tokens[0])
		assert.Equal(t, "<0x0A>", v.Tokens[3+10])
		// scores fall in merge order, so that SPM applies earlier merges first
		for i := 260; i < size; i++ {
			assert.Less(t, v.Scores[i], v.Scores[i-1])
		}
	}
	// a tiny corpus runs out of pairs before a large vocabulary is full
	v, err := TrainTokenizer([]string{"ab"}, TokenizerOptions{VocabSize: 4096, MinCharCount: 1})
	require.NoError(t, err)
	assert.LessOrEqual(t, len(v.Tokens), 4096)
	assert.Contains(t, v.Tokens, "▁ab")

	_, err = TrainTokenizer(goText, TokenizerOptions{VocabSize: 100})
	assert.Error(t, err)
	_, err = TrainTokenizer(nil, TokenizerOptions{})
	assert.Error(t, err)
}

// Every byte string round-trips through the byte tokens, with the one exception the SPM
// tokenizer of llama.cpp has (tokenizer.Tokenize): in invalid UTF-8 a stray lead byte takes
// the following bytes with it, and a space among them comes back as "▁". So the random
// strings are either arbitrary bytes without spaces or valid UTF-8 with spaces.
func TestTokenizerRoundTrip(t *testing.T) {
	_, tok := trainedTokenizer(t, 400)
	rng := rand.New(rand.NewPCG(1, 2))
	texts := append([]string{"", " ", "\x00\xff", "日本語 🦙", "<s> </s> <0x0A>", "  two  spaces  "}, goText...)
	for b := 0; b < 256; b++ {
		texts = append(texts, string([]byte{byte(b)}), "x"+string([]byte{byte(b)})+"y")
	}
	const alpha = "func(){}\n\tx:=ab"
	for i := 0; i < 300; i++ {
		b := make([]byte, rng.IntN(40))
		for j := range b {
			if rng.IntN(3) == 0 {
				b[j] = byte(rng.IntN(256)) // arbitrary bytes, often invalid UTF-8
				if b[j] == ' ' {
					b[j] = '_'
				}
			} else {
				b[j] = alpha[rng.IntN(len(alpha))]
			}
		}
		texts = append(texts, string(b), strings.ToValidUTF8(string(b), "é ")+" z")
	}
	for _, s := range texts {
		ids := tok.Tokenize(s, false, false)
		for _, id := range ids {
			require.True(t, id >= 0 && int(id) < tok.NumTokens())
		}
		// SPM adds a leading space, which Detokenize keeps
		want := s
		if s != "" {
			want = " " + s
		}
		if got := tok.Detokenize(ids); !bytes.Equal([]byte(want), got) {
			t.Errorf("round trip of %q: got %q", s, got)
		}
	}
	// merges make the text shorter than its characters
	ids := tok.Tokenize(goText[1], false, false)
	assert.Less(t, len(ids), utf8.RuneCountInString(goText[1])/2)
}

func TestTokenizerGGUF(t *testing.T) {
	v, tok := trainedTokenizer(t, 380)
	var b gguf.Builder
	require.NoError(t, b.Set("general.architecture", "llama"))
	require.NoError(t, v.SetGGUF(&b))
	var buf bytes.Buffer
	_, err := b.WriteTo(&buf)
	require.NoError(t, err)
	f, err := gguf.Read(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	model, err := f.GetString("tokenizer.ggml.model")
	require.NoError(t, err)
	assert.Equal(t, "llama", model)
	loaded, err := tokenizer.FromGGUF(f)
	require.NoError(t, err)
	assert.Equal(t, tok.NumTokens(), loaded.NumTokens())
	for _, s := range append(goText, "x := y\n\t\tz", strings.Repeat("ab ", 20)) {
		assert.Equal(t, tok.Tokenize(s, true, true), loaded.Tokenize(s, true, true))
	}
	assert.Equal(t, int32(1), loaded.BOS())
	assert.Equal(t, int32(2), loaded.EOS())
}

func TestSplitWords(t *testing.T) {
	var got []string
	splitWords(chars(spmText("func main() {\n\tx := 1")), func(w []string) { got = append(got, strings.Join(w, "")) })
	assert.Equal(t, []string{"▁func", "▁main", "()", "▁{", "\n\t", "x", "▁:=", "▁1"}, got)
}

func TestSchedule(t *testing.T) {
	s := Schedule{Warmup: 10, Total: 110, MinFactor: 0.1}
	assert.InDelta(t, 0.1, s.At(0), 1e-6)
	assert.InDelta(t, 1, s.At(9), 1e-6)
	assert.InDelta(t, 1, s.At(10), 1e-6)
	assert.InDelta(t, 0.55, s.At(60), 1e-6)
	assert.InDelta(t, 0.1, s.At(110), 1e-6)
	assert.InDelta(t, 0.1, s.At(500), 1e-6)
	for i := 11; i < 110; i++ {
		assert.LessOrEqual(t, s.At(i), s.At(i-1))
	}
}

func TestLossSVG(t *testing.T) {
	var b bytes.Buffer
	losses := make([]float32, 300)
	for i := range losses {
		losses[i] = 7 - float32(i)/100
	}
	require.NoError(t, WriteLossSVG(&b, LossCurve{Title: "a < b", Train: losses, Eval: []EvalPoint{{100, 6}, {200, 5.5}},
		Reference: 7.6, RefLabel: "uniform"}))
	s := b.String()
	assert.True(t, strings.HasPrefix(s, "<svg "))
	assert.True(t, strings.HasSuffix(s, "</svg>\n"))
	assert.Contains(t, s, "a &lt; b")
	assert.Equal(t, 2, strings.Count(s, "<polyline"))
	assert.Equal(t, 3, strings.Count(s, "<circle")) // two points and the legend
	// an empty curve is still a valid image
	b.Reset()
	require.NoError(t, WriteLossSVG(&b, LossCurve{}))
	assert.Contains(t, b.String(), "</svg>")
}
