package tokenizer

// bpe appends the byte-level BPE tokens of raw text to out: the text is cut into words by
// the vocabulary's pre-tokenizer, each word spelled in the byte-to-unicode alphabet and,
// unless the pre-tokenizer takes words that are tokens whole, its adjacent symbols merged by
// the lowest merge rank (ties: leftmost). A final symbol that is not a token falls back to
// the tokens of its single bytes, and bytes without a token are dropped, as in llama.cpp.
func (t *Tokenizer) bpe(text string, out []int32, st *state) []int32 {
	p := &st.pre
	p.load(canonicalUTF8(text))
	for _, s := range t.pre.splits {
		p.split(s)
	}
	lo := 0
	for _, e := range p.ends {
		st.buf = appendByteLevel(st.buf[:0], p.text[p.offs[lo]:p.offs[e]])
		lo = int(e)
		if t.pre.ignoreMerges {
			if id, ok := t.ids[string(st.buf)]; ok {
				out = append(out, id)
				continue
			}
		}
		out = t.bpeWord(string(st.buf), out, st)
	}
	p.text = ""
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
		for j := 0; j < len(piece); j++ {
			if id, ok := t.ids[piece[j:j+1]]; ok {
				out = append(out, id)
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
