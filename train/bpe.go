package train

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/ggml-go/ggml/tokenizer"
)

// spmSpace is the SentencePiece word marker that stands for a space in SPM token texts.
const spmSpace = "▁"

// TokenizerOptions configures TrainTokenizer. Zero fields take the defaults.
type TokenizerOptions struct {
	// VocabSize is the total number of tokens: the 3 special tokens, the 256 byte tokens,
	// the alphabet and the learned merges (default 2048; at least 259 + 1).
	VocabSize int
	// MinCharCount is how often a character must occur to be a token of its own and take
	// part in merges (default 32); rarer characters are written as byte tokens.
	MinCharCount int
	// MaxAlphabet caps the number of single-character tokens (default 192), the most
	// frequent first.
	MaxAlphabet int
}

func (o *TokenizerOptions) defaults() {
	if o.VocabSize == 0 {
		o.VocabSize = 2048
	}
	if o.MinCharCount == 0 {
		o.MinCharCount = 32
	}
	if o.MaxAlphabet == 0 {
		o.MaxAlphabet = 192
	}
}

// charLen returns the length of the character that starts with lead byte b, judged by the
// lead byte alone as the SPM tokenizer does (a stray continuation byte is one character).
func charLen(b byte) int {
	switch {
	case b < 0x80:
		return 1
	case b>>5 == 6:
		return 2
	case b>>4 == 14:
		return 3
	case b>>3 == 30:
		return 4
	}
	return 1
}

// chars splits s into the characters the SPM tokenizer sees.
func chars(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		n := min(charLen(s[i]), len(s)-i)
		out = append(out, s[i:i+n])
		i += n
	}
	return out
}

// spmText returns text the way the SPM tokenizer sees it: a space in front, every space
// replaced by the word marker.
func spmText(text string) string {
	return spmSpace + strings.ReplaceAll(text, " ", spmSpace)
}

// charClass sorts characters for the pre-split of the training text into words: 1 for
// letters, digits and '_', 2 for white space (the word marker, tab, newline), 3 otherwise.
func charClass(c string) int {
	if c == spmSpace || c == "\t" || c == "\n" || c == "\r" {
		return 2
	}
	if len(c) > 1 {
		return 1
	}
	b := c[0]
	if b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' {
		return 1
	}
	return 3
}

// splitWords cuts a text (in SPM form) into the words whose inner pairs BPE may merge: a
// run of characters of one class, where a word marker right before a letter or symbol run
// joins that run (as in "▁func"). Pieces therefore never span two words, which keeps
// training fast; the tokenizer itself applies the pieces to any text.
func splitWords(cs []string, emit func(word []string)) {
	leadsRun := func(i int) bool { // a marker that starts the following non-space run
		return cs[i] == spmSpace && i+1 < len(cs) && charClass(cs[i+1]) != 2
	}
	for i := 0; i < len(cs); {
		start := i
		if leadsRun(i) {
			i++
		}
		cls := charClass(cs[i])
		i++
		for i < len(cs) && charClass(cs[i]) == cls && !(cls == 2 && leadsRun(i)) {
			i++
		}
		emit(cs[start:i])
	}
}

// bpeWord is one distinct word of the training text: its symbols and how often it occurs.
type bpeWord struct {
	syms  []int32
	count int64
}

type symPair [2]int32

// TrainTokenizer learns an SPM-style (llama) vocabulary from texts by byte-pair encoding:
// starting from the characters, it repeatedly joins the most frequent adjacent pair of
// symbols (ties: the pair whose texts sort first) until the vocabulary has VocabSize tokens.
// The result holds <unk>, <s>, </s>, the byte tokens <0x00>..<0xFF>, the frequent
// characters and the merged pieces with scores in merge order, so that llama.cpp's SPM
// tokenizer (and tokenizer.New) reproduce the merges; every text, valid UTF-8 or not,
// tokenizes and detokenizes back to itself through the byte tokens.
func TrainTokenizer(texts []string, opt TokenizerOptions) (tokenizer.Vocab, error) {
	opt.defaults()
	if opt.VocabSize < 260 {
		return tokenizer.Vocab{}, fmt.Errorf("train: a vocabulary needs at least 260 tokens (3 special, 256 bytes, 1 more), not %d", opt.VocabSize)
	}
	if len(texts) == 0 {
		return tokenizer.Vocab{}, errors.New("train: no text to train the tokenizer on")
	}
	// words and character counts
	wordIndex := map[string]int{}
	var wordList [][]string
	var wordCount []int64
	charCount := map[string]int64{}
	for _, text := range texts {
		cs := chars(spmText(text))
		for _, c := range cs {
			charCount[c]++
		}
		splitWords(cs, func(w []string) {
			key := strings.Join(w, "")
			i, ok := wordIndex[key]
			if !ok {
				i = len(wordList)
				wordIndex[key] = i
				wordList = append(wordList, w)
				wordCount = append(wordCount, 0)
			}
			wordCount[i]++
		})
	}
	// the alphabet: frequent characters, most frequent first
	var alphabet []string
	for c, n := range charCount {
		if n >= int64(opt.MinCharCount) {
			alphabet = append(alphabet, c)
		}
	}
	sort.Slice(alphabet, func(i, j int) bool {
		a, b := alphabet[i], alphabet[j]
		if charCount[a] != charCount[b] {
			return charCount[a] > charCount[b]
		}
		return a < b
	})
	reserved := map[string]bool{"<unk>": true, "<s>": true, "</s>": true}
	for b := 0; b < 256; b++ {
		reserved[fmt.Sprintf("<0x%02X>", b)] = true
	}
	budget := opt.VocabSize - 259
	if len(alphabet) > opt.MaxAlphabet {
		alphabet = alphabet[:opt.MaxAlphabet]
	}
	if len(alphabet) > budget {
		alphabet = alphabet[:budget]
	}
	// symbols: the alphabet, then merged pieces; -1 marks a character outside the alphabet
	symText := append([]string(nil), alphabet...)
	symID := map[string]int32{}
	for i, c := range alphabet {
		symID[c] = int32(i)
	}
	words := make([]bpeWord, len(wordList))
	for i, w := range wordList {
		syms := make([]int32, len(w))
		for j, c := range w {
			id, ok := symID[c]
			if !ok {
				id = -1
			}
			syms[j] = id
		}
		words[i] = bpeWord{syms: syms, count: wordCount[i]}
	}
	pieces := append([]string(nil), alphabet...)

	// pair counts and the words each pair occurs in
	counts := map[symPair]int64{}
	where := map[symPair]map[int32]struct{}{}
	addPairs := func(wi int32, sign int64) {
		w := &words[wi]
		for j := 0; j+1 < len(w.syms); j++ {
			a, b := w.syms[j], w.syms[j+1]
			if a < 0 || b < 0 {
				continue
			}
			p := symPair{a, b}
			counts[p] += sign * w.count
			if counts[p] <= 0 {
				delete(counts, p)
			}
			if sign > 0 {
				s := where[p]
				if s == nil {
					s = map[int32]struct{}{}
					where[p] = s
				}
				s[wi] = struct{}{}
			}
		}
	}
	for i := range words {
		addPairs(int32(i), 1)
	}
	for len(pieces) < budget && len(counts) > 0 {
		var best symPair
		var bestN int64 = -1
		for p, n := range counts {
			if n > bestN || n == bestN && pairLess(symText, p, best) {
				best, bestN = p, n
			}
		}
		text := symText[best[0]] + symText[best[1]]
		id, ok := symID[text]
		if !ok {
			id = int32(len(symText))
			symText = append(symText, text)
			symID[text] = id
			if !reserved[text] {
				pieces = append(pieces, text)
			}
		}
		affected := make([]int32, 0, len(where[best]))
		for wi := range where[best] {
			affected = append(affected, wi)
		}
		delete(where, best)
		sort.Slice(affected, func(i, j int) bool { return affected[i] < affected[j] })
		for _, wi := range affected {
			addPairs(wi, -1)
			w := &words[wi]
			out := w.syms[:0]
			for j := 0; j < len(w.syms); j++ {
				if j+1 < len(w.syms) && w.syms[j] == best[0] && w.syms[j+1] == best[1] {
					out = append(out, id)
					j++
					continue
				}
				out = append(out, w.syms[j])
			}
			w.syms = out
			addPairs(wi, 1)
		}
		delete(counts, best)
	}
	return tokenizer.NewSPMVocab(pieces)
}

// pairLess orders pairs of equal count by their texts, so that training is deterministic.
func pairLess(symText []string, p, q symPair) bool {
	if a, b := symText[p[0]], symText[q[0]]; a != b {
		return a < b
	}
	return symText[p[1]] < symText[q[1]]
}
