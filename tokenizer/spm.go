package tokenizer

import "strings"

// spmSpace is the character SPM vocabularies write for a space ("▁", U+2581).
const spmSpace = "\u2581"

// state is the scratch space of one Tokenize call.
type state struct {
	seen  pairSet
	pre   preText
	syms  []symbol
	queue pairQueue
	frags []fragment
	buf   []byte
}

// spm appends the SPM tokens of text (already escaped: spaces as "▁") to out. Adjacent
// symbols whose concatenation is a token are merged, highest score first (ties: leftmost);
// each final symbol is its token, or byte tokens for a character the vocabulary lacks.
func (t *Tokenizer) spm(text string, out []int32, st *state) []int32 {
	syms := mergeSymbols(text, st, t.queueSPM)
	for i := int32(0); len(syms) > 0 && i >= 0; i = syms[i].next {
		s := syms[i]
		piece := text[s.start : s.start+s.n]
		if id, ok := t.ids[piece]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(piece); j++ {
			out = append(out, t.byteIDs[piece[j]])
		}
	}
	return out
}

// queueSPM queues the pair (left, right) if their joined text is a token.
func (t *Tokenizer) queueSPM(text string, syms []symbol, left, right int32, q *pairQueue) {
	a, b := syms[left], syms[right]
	joined := text[a.start : b.start+b.n]
	if id, ok := t.ids[joined]; ok {
		q.push(pair{key: spmKey(t.scores[id], left), right: right, size: a.n + b.n})
	}
}

// escapeSPM returns text with a space in front when first is set and every space written
// as "▁", appended to buf.
func escapeSPM(buf []byte, text string, first bool) []byte {
	buf = buf[:0]
	if first {
		buf = append(buf, spmSpace...)
	}
	for {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			break
		}
		buf = append(buf, text[:i]...)
		buf = append(buf, spmSpace...)
		text = text[i+1:]
	}
	return append(buf, text...)
}
