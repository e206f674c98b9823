package tokenizer

// bpe appends the byte-level BPE tokens of raw text to out: the text is cut into words by
// the GPT-2 pattern, each word spelled in the byte-to-unicode alphabet, and adjacent symbols
// merged by the lowest merge rank (ties: leftmost). A final symbol that is not a token falls
// back to the tokens of its single bytes, then to the unknown token.
func (t *Tokenizer) bpe(text string, out []int32, st *state) []int32 {
	preTokenize(text, func(start, end int) {
		st.buf = appendByteLevel(st.buf[:0], text[start:end])
		out = t.bpeWord(string(st.buf), out, st)
	})
	return out
}

func (t *Tokenizer) bpeWord(word string, out []int32, st *state) []int32 {
	syms := mergeSymbols(word, st, t.queueBPE)
	for i := int32(0); len(syms) > 0 && i >= 0; i = syms[i].next {
		s := syms[i]
		piece := word[s.start : s.start+s.n]
		if id, ok := t.ids[piece]; ok {
			out = append(out, id)
			continue
		}
		for j := 0; j < len(piece); j += utf8Len(piece[j]) {
			c := piece[j:min(j+utf8Len(piece[j]), len(piece))]
			if id, ok := t.ids[c]; ok {
				out = append(out, id)
			} else if t.vocab.UNK >= 0 {
				out = append(out, t.vocab.UNK)
			}
		}
	}
	return out
}

// queueBPE queues the pair (left, right) if it is a merge.
func (t *Tokenizer) queueBPE(word string, syms []symbol, left, right int32, q *pairQueue) {
	a, b := syms[left], syms[right]
	rank, ok := t.ranks[mergePair{word[a.start : a.start+a.n], word[b.start : b.start+b.n]}]
	if ok {
		q.push(pair{key: bpeKey(rank, left), right: right, size: a.n + b.n})
	}
}
