package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzTokenize feeds arbitrary bytes to both tokenizers (the LLaMA SPM vocabulary when the
// shared models are present, and the test's gpt2 vocabulary): no panic, every id inside the
// vocabulary, BOS first when asked, and without special tokens a lossless round trip (BPE
// always; SPM for valid UTF-8 without "▁", which SPM reads as a space: like llama.cpp, SPM
// cuts characters by their lead byte, so a stray lead byte swallows the bytes after it).
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", " ", "Hello world", "  lead\n\ttab", "<s>x</s>", "<0x0A>", "日本語 🦙", "\xff\xe6\x97", "it's 12.5!!", "▁▁a", strings.Repeat("a", 300)} {
		f.Add(s, false, false)
		f.Add(s, true, true)
	}
	toks := []*Tokenizer{}
	if _, err := os.Stat(filepath.Join(modelsDir, "public-f16.gguf")); err == nil {
		toks = append(toks, llamaVocab(f))
	}
	bpe, _ := bpeTokenizer(f)
	toks = append(toks, bpe)
	// The 2025 vocabularies of shared/models/arch: llama-bpe, qwen2, WPM, SPM phi-3.
	var arch []*Tokenizer
	for _, name := range []string{"llama3-f16.gguf", "qwen2-f16.gguf", "bert-f16.gguf", "phi3-f16.gguf"} {
		if path := filepath.Join(archDir, name); fileExists(path) {
			arch = append(arch, fileTokenizer(f, path))
		}
	}
	f.Fuzz(func(t *testing.T, text string, addBOS, special bool) {
		for _, tok := range arch { // no panic, ids in range
			for _, id := range tok.Tokenize(text, addBOS, special) {
				if id < 0 || int(id) >= tok.NumTokens() {
					t.Fatalf("%s: id %d outside the vocabulary for %q", tok.Model(), id, text)
				}
			}
		}
		for _, tok := range toks {
			ids := tok.Tokenize(text, addBOS, special)
			for _, id := range ids {
				if id < 0 || int(id) >= tok.NumTokens() {
					t.Fatalf("%s: id %d outside the vocabulary for %q", tok.Model(), id, text)
				}
			}
			if addBOS && tok.AddBOSDefault() && (len(ids) == 0 || ids[0] != tok.BOS()) {
				t.Fatalf("%s: no BOS first for %q: %v", tok.Model(), text, ids)
			}
			if special {
				continue
			}
			got := string(tok.Decode(ids))
			if tok.Model() == ModelBPE {
				text = canonicalUTF8(text) // undecodable bytes read as U+FFFD
			}
			if tok.Model() == ModelSPM && (strings.Contains(text, spmSpace) || !utf8.ValidString(text)) {
				continue
			}
			if got != text {
				t.Fatalf("%s: %q decodes as %q (ids %v)", tok.Model(), text, got, ids)
			}
		}
	})
}
