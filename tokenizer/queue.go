package tokenizer

import "math"

// symbol is one node of the doubly linked list of symbols that the SPM and BPE merge loops
// work on: bytes [start, start+n) of the text, n == 0 once merged into its left neighbour.
type symbol struct {
	start, n   int32
	prev, next int32 // neighbour indices, -1 at the ends
}

// pair is a candidate merge of the adjacent symbols left and right (whose joined text had
// size bytes when the pair was queued). Pairs are ordered by key: SPM merges the highest
// token score first, BPE the lowest merge rank; ties go to the leftmost pair. The key packs
// that order into one integer (priority in the high 32 bits, the left index in the low).
type pair struct {
	key   uint64
	right int32
	size  int32
}

func (p pair) left() int32 { return int32(uint32(p.key)) }

// spmKey orders by score, highest first: the float's bits made monotonic, then inverted.
func spmKey(score float32, left int32) uint64 {
	b := math.Float32bits(score)
	if b&0x80000000 != 0 {
		b = ^b
	} else {
		b |= 0x80000000
	}
	return uint64(^b)<<32 | uint64(uint32(left))
}

// bpeKey orders by merge rank, lowest first.
func bpeKey(rank, left int32) uint64 {
	return uint64(uint32(rank))<<32 | uint64(uint32(left))
}

// pairQueue is a binary min-heap of pairs by key: the pair to merge next is at the top.
// Each merge queues at most two new pairs, so a text of n symbols costs O(n log n).
type pairQueue struct {
	items []pair
	ops   int // pushes + pops, for the tests of the complexity
}

func (q *pairQueue) reset() {
	q.items = q.items[:0]
}

func (q *pairQueue) push(p pair) {
	q.ops++
	q.items = append(q.items, p)
	h := q.items
	i := len(h) - 1
	for i > 0 {
		up := (i - 1) / 2
		if h[up].key <= p.key {
			break
		}
		h[i] = h[up]
		i = up
	}
	h[i] = p
}

func (q *pairQueue) pop() (pair, bool) {
	h := q.items
	if len(h) == 0 {
		return pair{}, false
	}
	q.ops++
	top := h[0]
	last := len(h) - 1
	x := h[last]
	h = h[:last]
	q.items = h
	if last == 0 {
		return top, true
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= last {
			break
		}
		if c+1 < last && h[c+1].key < h[c].key {
			c++
		}
		if x.key <= h[c].key {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = x
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
	left := p.left()
	l, r := &syms[left], &syms[p.right]
	if l.n == 0 || r.n == 0 || l.n+r.n != p.size {
		return false
	}
	l.n += r.n
	r.n = 0
	l.next = r.next
	if r.next >= 0 {
		syms[r.next].prev = left
	}
	return true
}

// mergeSymbols splits text into symbols (st.syms) and merges adjacent ones, best pair first,
// until no queued pair is left. queue decides whether a pair (left, right) is a candidate and
// pushes it with its priority: the SPM and BPE tokenizers differ only there. The surviving
// symbols form a linked list from index 0 (next < 0 ends it).
func mergeSymbols(text string, st *state, queue func(text string, syms []symbol, left, right int32, q *pairQueue)) []symbol {
	st.syms = splitSymbols(text, st.syms)
	syms := st.syms
	q := &st.queue
	q.reset()
	for i := 1; i < len(syms); i++ {
		queue(text, syms, int32(i-1), int32(i), q)
	}
	for {
		p, ok := q.pop()
		if !ok {
			return syms
		}
		if !merge(syms, p) {
			continue
		}
		left := p.left()
		l := &syms[left]
		if l.prev >= 0 {
			queue(text, syms, l.prev, left, q)
		}
		if l.next >= 0 {
			queue(text, syms, left, l.next, q)
		}
	}
}
