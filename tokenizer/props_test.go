package tokenizer

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// vocabFiles are the vocab-only files of shared/models/arch/vocab plus the arch models'
// truncated vocabularies, by short name.
func vocabFiles() map[string]string {
	m := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(archDir, "vocab", "ggml-vocab-*.gguf"))
	for _, f := range files {
		m[strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "ggml-vocab-"), ".gguf")] = f
	}
	for _, a := range []string{"llama3", "qwen2", "phi3", "gpt2", "bert"} {
		m[a+"-f16"] = filepath.Join(archDir, a+"-f16.gguf")
	}
	return m
}

// randomText mixes the pre-tokenizer alphabet, special token texts and random bytes.
func randomText(rng *rand.Rand, specials []string) string {
	var sb strings.Builder
	for j := rng.IntN(24); j >= 0; j-- {
		switch k := rng.IntN(20); {
		case k == 0 && len(specials) > 0:
			sb.WriteString(specials[rng.IntN(len(specials))])
		case k == 1:
			sb.WriteByte(byte(rng.IntN(256)))
		default:
			sb.WriteString(pretokAlphabet[rng.IntN(len(pretokAlphabet))])
		}
	}
	return sb.String()
}

// TestVocabProperties tokenizes random text with every shared vocabulary: no panic, every
// id inside the vocabulary, the added special tokens where the vocabulary says, and a
// lossless round trip where the model allows one (BPE: always, up to U+FFFD for
// undecodable bytes; SPM: valid UTF-8 without "▁" or special token texts; WPM: its own
// normalized output tokenizes to the same ids).
func TestVocabProperties(t *testing.T) {
	files := vocabFiles()
	if _, err := filepathStat(archDir); err != nil {
		t.Skipf("the shared vocab files are not here (%s)", archDir)
	}
	n := 400
	if testing.Short() || raceEnabled {
		n = 60
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tok := fileTokenizer(t, files[name])
			var specials []string
			for _, st := range tok.special {
				specials = append(specials, st.text)
			}
			rng := rand.New(rand.NewPCG(7, uint64(len(name))))
			for i := 0; i < n; i++ {
				text := randomText(rng, specials)
				for _, flags := range [][2]bool{{false, false}, {true, true}} {
					ids := tok.Tokenize(text, flags[0], flags[1])
					for _, id := range ids {
						require.True(t, id >= 0 && int(id) < tok.NumTokens(), "%q: id %d", text, id)
					}
					if flags[0] && tok.AddBOSDefault() && tok.Model() != ModelWPM {
						require.Equal(t, tok.BOS(), ids[0], "%q", text)
					}
					if flags[0] && tok.Model() == ModelWPM {
						require.Equal(t, tok.CLS(), ids[0])
						require.Equal(t, tok.SEP(), ids[len(ids)-1])
					}
				}
				ids := tok.Tokenize(text, false, false)
				hasSpecial := slices.ContainsFunc(specials, func(s string) bool { return strings.Contains(text, s) })
				_, hasSpace := tok.ID(spmSpace)
				switch tok.Model() {
				case ModelBPE:
					if !slices.Contains(tok.byteIDs[:], NoToken) { // bytes without a token are dropped
						require.Equal(t, canonicalUTF8(text), string(tok.Detokenize(ids)), "%q", text)
					}
				case ModelSPM:
					// A vocabulary without "▁" spells the added space as bytes.
					if hasSpace && !hasSpecial && utf8.ValidString(text) && !strings.Contains(text, spmSpace) {
						require.Equal(t, text, string(tok.Decode(ids)), "%q", text)
					}
				case ModelWPM:
					if !slices.Contains(ids, tok.UNK()) && !hasSpecial {
						again := tok.Tokenize(string(tok.Decode(ids)), false, false)
						require.Equal(t, ids, again, "%q decodes as %q", text, tok.Decode(ids))
					}
				}
			}
		})
	}
}
