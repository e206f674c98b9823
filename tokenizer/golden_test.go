package tokenizer

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ggml-go/ggml/gguf"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// archDir holds the multi-architecture models and llama.cpp c392e5094 (2025-02) references.
var archDir = filepath.Join(modelsDir, "arch")

var (
	fileTokMu sync.Mutex
	fileToks  = map[string]*Tokenizer{}
)

// fileTokenizer returns the tokenizer of the GGUF file at path (cached), or skips the test
// when the shared files are absent.
func fileTokenizer(t testing.TB, path string) *Tokenizer {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("the shared models are not here (%s): check out ../shared next to the repository to run this test", path)
	}
	fileTokMu.Lock()
	defer fileTokMu.Unlock()
	if tok, ok := fileToks[path]; ok {
		return tok
	}
	f, err := gguf.Open(path)
	require.NoError(t, err)
	defer f.Close()
	tok, err := FromGGUF(f)
	require.NoError(t, err, path)
	fileToks[path] = tok
	return tok
}

// upstreamPairs reads a llama.cpp tokenizer test pair: the .inp file holds the strings, each
// followed by "\n__ggml_vocab_test__\n"; the .out file one line per string with its ids.
func upstreamPairs(t *testing.T, vocab string) ([]string, [][]int32) {
	inp, err := os.ReadFile(vocab + ".inp")
	require.NoError(t, err)
	out, err := os.ReadFile(vocab + ".out")
	require.NoError(t, err)
	texts := strings.Split(string(inp), "\n__ggml_vocab_test__\n")
	require.Equal(t, "", texts[len(texts)-1], "the .inp file ends with a separator")
	texts = texts[:len(texts)-1]
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(texts))
	ids := make([][]int32, len(lines))
	for i, l := range lines {
		ids[i] = []int32{}
		for _, f := range strings.Fields(l) {
			n, err := strconv.Atoi(f)
			require.NoError(t, err)
			ids[i] = append(ids[i], int32(n))
		}
	}
	return texts, ids
}

// TestUpstreamVocabPairs reproduces every upstream test pair of llama.cpp's vocab files
// exactly (add_special false, parse_special false, as test-tokenizer-0 does).
func TestUpstreamVocabPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: make test-slow runs it")
	}
	files, _ := filepath.Glob(filepath.Join(archDir, "vocab", "ggml-vocab-*.gguf"))
	if len(files) == 0 {
		t.Skipf("the shared vocab files are not here (%s)", archDir)
	}
	for _, path := range files {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".gguf"), func(t *testing.T) {
			tok := fileTokenizer(t, path)
			texts, want := upstreamPairs(t, path)
			exact := 0
			for i, s := range texts {
				if assert.Equal(t, want[i], tok.Tokenize(s, false, false), "%q", s) {
					exact++
				}
			}
			t.Logf("%s: %d/%d exact", filepath.Base(path), exact, len(texts))
		})
	}
}

// tokRef is a "llama-tok-v1" reference file.
type tokRef struct {
	Format  string `json:"format"`
	Model   string `json:"model"`
	Model_  string `json:"tokenizer_model"`
	Pre     string `json:"tokenizer_pre"`
	NVocab  int    `json:"n_vocab"`
	AddBOS  bool   `json:"add_bos"`
	AddEOS  bool   `json:"add_eos"`
	Special bool   `json:"special"`
	Items   []struct {
		TextHex   string  `json:"text_hex"`
		IDsBOS    []int32 `json:"ids_bos"`
		IDsNoBOS  []int32 `json:"ids_nobos"`
		PiecesHex string  `json:"pieces_hex"`
	} `json:"items"`
}

// TestTokenizeReferences reproduces every tokenization reference of shared/models/arch (the
// 30 strings with and without the added special tokens, and their pieces) exactly.
func TestTokenizeReferences(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(archDir, "*-tokenize.ref.json"))
	more, _ := filepath.Glob(filepath.Join(archDir, "vocab", "*.tokenize.ref.json"))
	files = append(files, more...)
	if len(files) == 0 {
		t.Skipf("the shared references are not here (%s)", archDir)
	}
	for _, name := range files {
		t.Run(strings.TrimSuffix(filepath.Base(name), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(name)
			require.NoError(t, err)
			var ref tokRef
			require.NoError(t, json.Unmarshal(data, &ref))
			require.Equal(t, "llama-tok-v1", ref.Format)
			tok := fileTokenizer(t, filepath.Join(filepath.Dir(name), ref.Model))
			assert.Equal(t, ref.NVocab, tok.NumTokens())
			assert.Equal(t, ref.Model_, tok.Model())
			assert.Equal(t, ref.AddBOS, tok.AddBOSDefault())
			assert.Equal(t, ref.AddEOS, tok.AddEOSDefault())
			exact, pieces := 0, 0
			for _, it := range ref.Items {
				text, err := hex.DecodeString(it.TextHex)
				require.NoError(t, err)
				a := assert.Equal(t, it.IDsBOS, tok.Tokenize(string(text), true, ref.Special), "with special: %q", text)
				b := assert.Equal(t, it.IDsNoBOS, tok.Tokenize(string(text), false, ref.Special), "without: %q", text)
				if a && b {
					exact++
				}
				if assert.Equal(t, it.PiecesHex, hex.EncodeToString(tok.Detokenize(it.IDsNoBOS)), "pieces of %q", text) {
					pieces++
				}
			}
			t.Logf("%s: ids %d/%d exact, pieces %d/%d", filepath.Base(name), exact, len(ref.Items), pieces, len(ref.Items))
		})
	}
}

// preSplit returns the words the BPE pre-tokenizer name cuts text into.
func preSplit(t testing.TB, name, text string) []string {
	t.Helper()
	p, err := lookupPre(name)
	require.NoError(t, err)
	var pt preText
	pt.load(canonicalUTF8(text))
	for _, s := range p.splits {
		pt.split(s)
	}
	var words []string
	lo := 0
	for _, e := range pt.ends {
		words = append(words, pt.text[pt.offs[lo]:pt.offs[e]])
		lo = int(e)
	}
	return words
}
