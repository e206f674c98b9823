package tokenizer

// symbol is one node of the doubly linked list of symbols that the SPM and BPE merge loops
// work on: bytes [start, start+n) of the text, n == 0 once merged into its left neighbour.
type symbol struct {
	start, n   int32
	prev, next int32 // neighbour indices, -1 at the ends
}

// pair is a candidate merge of the adjacent symbols left and right (whose joined text had
// size bytes when the pair was queued). SPM ranks pairs by score, higher first; BPE by
// rank, lower first; ties go to the leftmost pair.
type pair struct {
	left, right int32
	size        int32
	score       float32 // SPM: token score
	rank        int32   // BPE: merge index
}

// pairQueue is a binary heap of pairs: the pair to merge next is at the top. Each merge
// queues at most two new pairs, so a text of n symbols costs O(n log n).
type pairQueue struct {
	items []pair
	bpe   bool // order by rank (BPE) instead of score (SPM)
	ops   int  // pushes + pops, for the tests of the complexity
}

// before reports whether a must be merged before b.
func (q *pairQueue) before(a, b pair) bool {
	if q.bpe {
		if a.rank != b.rank {
			return a.rank < b.rank
		}
	} else if a.score != b.score {
		return a.score > b.score
	}
	return a.left < b.left
}

func (q *pairQueue) reset(bpe bool) {
	q.items = q.items[:0]
	q.bpe = bpe
}

func (q *pairQueue) push(p pair) {
	q.ops++
	q.items = append(q.items, p)
	i := len(q.items) - 1
	for i > 0 {
		up := (i - 1) / 2
		if !q.before(q.items[i], q.items[up]) {
			break
		}
		q.items[i], q.items[up] = q.items[up], q.items[i]
		i = up
	}
}

func (q *pairQueue) pop() (pair, bool) {
	if len(q.items) == 0 {
		return pair{}, false
	}
	q.ops++
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && q.before(q.items[l], q.items[m]) {
			m = l
		}
		if r < last && q.before(q.items[r], q.items[m]) {
			m = r
		}
		if m == i {
			break
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
	return top, true
}

// splitSymbols cuts text into one symbol per character (by utf8Len, clipped at the end).
func splitSymbols(text string, syms []symbol) []symbol {
	syms = syms[:0]
	for i := 0; i < len(text); {
		n := min(utf8Len(text[i]), len(text)-i)
		k := int32(len(syms))
		syms = append(syms, symbol{start: int32(i), n: int32(n), prev: k - 1, next: k + 1})
		i += n
	}
	if len(syms) > 0 {
		syms[len(syms)-1].next = -1
	}
	return syms
}

// merge joins symbol p.right into p.left if the pair is still current, and reports whether
// it did. A pair is stale when either side was merged away or has grown since it was queued.
func merge(syms []symbol, p pair) bool {
	l, r := &syms[p.left], &syms[p.right]
	if l.n == 0 || r.n == 0 || l.n+r.n != p.size {
		return false
	}
	l.n += r.n
	r.n = 0
	l.next = r.next
	if r.next >= 0 {
		syms[r.next].prev = p.left
	}
	return true
}
