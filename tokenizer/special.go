package tokenizer

import (
	"cmp"
	"slices"
	"strings"
)

// specialToken is a token that Tokenize matches literally in the text before the rest is
// tokenized: control and unknown tokens when its special flag is set, user-defined tokens
// always.
type specialToken struct {
	text    string
	id      int32
	control bool // control or unknown: matched only with special set
	lstrip  bool // whitespace before it is dropped
	rstrip  bool // whitespace after it is dropped
}

// utf8Len is the length of the UTF-8 sequence that starts with byte b, judged by its high
// four bits alone (a stray continuation byte counts as one character), as llama.cpp does.
func utf8Len(b byte) int {
	switch b >> 4 {
	case 0xC, 0xD:
		return 2
	case 0xE:
		return 3
	case 0xF:
		return 4
	}
	return 1
}

// eogTexts are the texts of the tokens llama.cpp treats as end of generation.
var eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>"}

// eotTexts are the texts llama.cpp takes for the end-of-turn token when a file names none.
var eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "<｜end▁of▁sentence｜>"}

// fimTexts are the texts llama.cpp takes for the fill-in-the-middle tokens (prefix, suffix,
// middle, pad, repository, file separator) when a file names none.
var fimTexts = [6][]string{
	{"<|fim_prefix|>", "<fim-prefix>", "<｜fim▁begin｜>", "<PRE>"},
	{"<|fim_suffix|>", "<fim-suffix>", "<｜fim▁hole｜>", "<SUF>"},
	{"<|fim_middle|>", "<fim-middle>", "<｜fim▁end｜>", "<MID>"},
	{"<|fim_pad|>", "<fim-pad>", "<PAD>"},
	{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>"},
	{"<|file_sep|>"},
}

// byText returns the lowest id among the tokens whose text is one of texts, or NoToken.
func (t *Tokenizer) byText(texts []string) int32 {
	found := NoToken
	for _, s := range texts {
		if id, ok := t.ids[s]; ok && (found < 0 || id < found) {
			found = id
		}
	}
	return found
}

// findEndOfGeneration sets eot, eom, fim and eog, as llama.cpp does: special tokens a file
// does not name are found by their text (and become control tokens), every token whose text
// marks the end of generation is a control token, and the end-of-generation set holds those,
// EOS, EOT, EOM and the fill-in-the-middle pad, repository and separator tokens. Where
// several tokens have such texts (llama.cpp takes whichever its hash map yields first), the
// lowest id is taken.
func (t *Tokenizer) findEndOfGeneration() {
	v := &t.vocab
	t.eot, t.eom = v.EOT, v.EOM
	t.fim = [6]int32{v.FIMPre, v.FIMSuf, v.FIMMid, v.FIMPad, v.FIMRep, v.FIMSep}
	found := func(id *int32, texts []string) {
		if *id < 0 {
			if *id = t.byText(texts); *id >= 0 {
				t.types[*id] = TypeControl
			}
		}
	}
	found(&t.eot, eotTexts)
	found(&t.eom, []string{"<|eom_id|>"})
	for i := range t.fim {
		found(&t.fim[i], fimTexts[i])
	}
	t.eog = t.eog[:0]
	for _, s := range eogTexts {
		if id, ok := t.ids[s]; ok {
			t.eog = append(t.eog, id)
			t.types[id] = TypeControl
		}
	}
	for _, id := range []int32{t.vocab.EOS, t.eot, t.eom, t.fim[3], t.fim[4], t.fim[5]} {
		if id >= 0 {
			t.eog = append(t.eog, id)
		}
	}
	slices.Sort(t.eog)
	t.eog = slices.Compact(t.eog)
}

// findSpecialTokens lists the tokens matched in raw text, by the rule of llama.cpp
// c392e5094: the control, user-defined and unknown tokens, longest text first (then by id).
// Models whose general.name contains "phi-3" or "phi3" drop the whitespace after each of
// them (except <unk>, <s> and <|endoftext|>), and the jina-v2 pre-tokenizers the
// whitespace before "<mask>", as llama.cpp does.
func (t *Tokenizer) findSpecialTokens() []specialToken {
	name := strings.ToLower(t.vocab.Name)
	phi3 := strings.Contains(name, "phi-3") || strings.Contains(name, "phi3")
	jina := t.vocab.Model == ModelBPE && (strings.Contains(t.vocab.Pre, "jina-v2-de") ||
		strings.Contains(t.vocab.Pre, "jina-v2-es") || strings.Contains(t.vocab.Pre, "jina-v2-code"))
	var out []specialToken
	for i, s := range t.vocab.Tokens {
		typ := t.types[i]
		if s == "" || (typ != TypeControl && typ != TypeUserDefined && typ != TypeUnknown) {
			continue
		}
		st := specialToken{text: s, id: int32(i), control: typ != TypeUserDefined}
		if phi3 {
			st.rstrip = s != "<unk>" && s != "<s>" && s != "<|endoftext|>"
		}
		if jina && s == "<mask>" {
			st.lstrip = true
		}
		out = append(out, st)
	}
	slices.SortStableFunc(out, func(a, b specialToken) int {
		return cmp.Compare(len(b.text), len(a.text))
	})
	return out
}

// fragment is a piece of the text to tokenize: raw text [start, end) when id < 0, else a
// special token already recognised.
type fragment struct {
	start, end int
	id         int32
}

// isCSpace is C's isspace: the ASCII whitespace that the strip attributes drop.
func isCSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }

// partition splits text into raw fragments and special tokens, as llama.cpp's
// tokenizer_st_partition: each special token in turn (longest first) is cut out of the raw
// fragments left, dropping whitespace next to it where its strip attributes say so. Control
// and unknown tokens are matched only with special set. Empty raw fragments are never
// produced.
func (t *Tokenizer) partition(text string, special bool, frags []fragment, seen *pairSet) []fragment {
	frags = append(frags[:0], fragment{0, len(text), -1})
	if len(t.special) == 0 {
		return frags
	}
	// With many special tokens (some vocabularies have thousands of user-defined ones),
	// first rule out those whose first two bytes never occur together in the text.
	filter := len(t.special) > 16 && len(text) >= 2
	if filter {
		seen.fill(text)
		defer seen.clear(text)
	}
	var next []fragment
	for _, st := range t.special {
		if st.control && !special || filter && !seen.has(st.text) || !strings.Contains(text, st.text) {
			continue
		}
		next = next[:0]
		for _, f := range frags {
			if f.id >= 0 {
				next = append(next, f)
				continue
			}
			pos := f.start
			for pos < f.end {
				i := strings.Index(text[pos:f.end], st.text)
				if i < 0 {
					break
				}
				left := pos + i
				if st.lstrip {
					for left > pos && isCSpace(text[left-1]) {
						left--
					}
				}
				if left > pos {
					next = append(next, fragment{pos, left, -1})
				}
				next = append(next, fragment{id: st.id})
				pos += i + len(st.text)
				if st.rstrip {
					for pos < f.end && isCSpace(text[pos]) {
						pos++
					}
				}
			}
			if pos < f.end {
				next = append(next, fragment{pos, f.end, -1})
			}
		}
		frags, next = next, frags
	}
	return frags
}

// pairSet records which byte pairs (and single bytes) occur in a text: a 65,536-bit set,
// cleared again after use by walking the same text.
type pairSet struct {
	pairs [1 << 16 / 64]uint64
	bytes [4]uint64
}

func (p *pairSet) fill(text string) {
	for i := 0; i < len(text); i++ {
		p.bytes[text[i]>>6] |= 1 << (text[i] & 63)
		if i+1 < len(text) {
			k := uint(text[i])<<8 | uint(text[i+1])
			p.pairs[k>>6] |= 1 << (k & 63)
		}
	}
}

func (p *pairSet) clear(text string) {
	p.bytes = [4]uint64{}
	for i := 0; i+1 < len(text); i++ {
		k := uint(text[i])<<8 | uint(text[i+1])
		p.pairs[k>>6] = 0
	}
}

// has reports whether the start of s (its first two bytes, or its only byte) occurs.
func (p *pairSet) has(s string) bool {
	if len(s) == 1 {
		return p.bytes[s[0]>>6]&(1<<(s[0]&63)) != 0
	}
	k := uint(s[0])<<8 | uint(s[1])
	return p.pairs[k>>6]&(1<<(k&63)) != 0
}
