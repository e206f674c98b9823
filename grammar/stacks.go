package grammar

import "errors"

// ErrTooManyStacks is returned when an ambiguous grammar would make the matcher follow more
// parse stacks at once than Options.MaxStacks allows.
var ErrTooManyStacks = errors.New("grammar: too many simultaneous parse stacks (the grammar is highly ambiguous here): make alternatives start with different characters, or raise Options.MaxStacks")

// empty is the id of the empty stack: the grammar has matched completely.
const empty = -1

// arena holds parse stacks as interned linked lists (a node is a position in the elements
// and the node below it), so that equal stacks have equal ids and a set of stacks is a set
// of ids. It caches, per node whose top is a character element, the stacks that follow once
// that character has matched.
type arena struct {
	g      *Grammar
	pos    []int32 // element index at the top
	below  []int32 // node below, or empty
	set    []int32 // charSet index of the top element (every stored top is elemChar after expansion, or -1)
	index  map[uint64]int32
	succAt []int32 // per node: start in succ, or -1 if not computed
	succN  []int32
	succ   []int32
	stamp  []uint32 // set-membership marks, per node (gen)
	xstamp []uint32 // membership marks of the expansion being built (xgen)
	seen   []uint32 // nodes already expanded in the expansion being built (xgen)
	gen    uint32
	hasEnd uint32 // gen at which empty was added
	xgen   uint32
	xEnd   uint32
	err    error
	sets   setCache // for Mask
	limit  int      // most stacks one expansion may produce (Options.MaxStacks)
	cap    int      // most nodes before expansions fail (a multiple of Options.MaxNodes)
}

func newArena(g *Grammar, opts Options) *arena {
	a := &arena{g: g, index: make(map[uint64]int32), limit: opts.MaxStacks, cap: 4 * opts.MaxNodes}
	a.sets.reset()
	return a
}

func (a *arena) size() int { return len(a.pos) }

func (a *arena) node(pos, below int32) int32 {
	k := uint64(uint32(pos))<<32 | uint64(uint32(below))
	if id, ok := a.index[k]; ok {
		return id
	}
	id := int32(len(a.pos))
	if len(a.pos) >= a.cap {
		a.err = ErrTooManyStacks // a grammar whose expansions explode; stop them
	}
	a.pos = append(a.pos, pos)
	a.below = append(a.below, below)
	s := int32(-1)
	if e := a.g.elems[pos]; e.kind == elemChar {
		s = e.arg
	}
	a.set = append(a.set, s)
	a.succAt = append(a.succAt, -1)
	a.succN = append(a.succN, 0)
	a.stamp = append(a.stamp, 0)
	a.xstamp = append(a.xstamp, 0)
	a.seen = append(a.seen, 0)
	a.index[k] = id
	return id
}

// begin starts a new set of stacks (for add).
func (a *arena) begin() {
	a.gen++
	if a.gen == 0 {
		clear(a.stamp)
		a.hasEnd = 0
		a.gen = 1
	}
}

// beginExpansion starts a new expansion (for expand).
func (a *arena) beginExpansion() {
	a.xgen++
	if a.xgen == 0 {
		clear(a.xstamp)
		clear(a.seen)
		a.xEnd = 0
		a.xgen = 1
	}
}

func (a *arena) xadd(out []int32, id int32) []int32 {
	if id == empty {
		if a.xEnd == a.xgen {
			return out
		}
		a.xEnd = a.xgen
		return append(out, empty)
	}
	if a.xstamp[id] == a.xgen {
		return out
	}
	a.xstamp[id] = a.xgen
	if len(out) >= a.limit {
		a.err = ErrTooManyStacks
	}
	return append(out, id)
}

// add appends stack id to out unless it is already in the current set.
func (a *arena) add(out []int32, id int32) []int32 {
	if id == empty {
		if a.hasEnd == a.gen {
			return out
		}
		a.hasEnd = a.gen
		return append(out, empty)
	}
	if a.stamp[id] == a.gen {
		return out
	}
	a.stamp[id] = a.gen
	return append(out, id)
}

// expand (inside beginExpansion) appends to out the stacks, each with a character element on top (or empty), that
// stack id stands for: rule references are replaced by their alternatives and finished
// alternatives are popped.
func (a *arena) expand(out []int32, id int32, depth int) []int32 {
	for {
		if a.err != nil {
			return out
		}
		if id == empty {
			return a.xadd(out, empty)
		}
		if a.seen[id] == a.xgen {
			return out
		}
		a.seen[id] = a.xgen
		p := a.pos[id]
		e := a.g.elems[p]
		switch e.kind {
		case elemChar:
			return a.xadd(out, id)
		case elemEnd:
			id = a.below[id]
			continue
		}
		if depth > 1<<16 {
			a.err = ErrTooManyStacks
			return out
		}
		below := a.below[id]
		if a.g.elems[p+1].kind != elemEnd {
			below = a.node(p+1, below)
		}
		for _, s := range a.g.alts[e.arg] {
			out = a.expand(out, a.node(s, below), depth+1)
			if a.err != nil {
				break
			}
		}
		return out
	}
}

// next returns the stacks that follow stack id once the character on its top has matched.
func (a *arena) next(id int32) []int32 {
	if at := a.succAt[id]; at >= 0 {
		return a.succ[at : at+a.succN[id]]
	}
	after := a.node(a.pos[id]+1, a.below[id])
	a.beginExpansion()
	start := len(a.succ)
	a.succ = a.expand(a.succ, after, 0)
	a.succAt[id] = int32(start)
	a.succN[id] = int32(len(a.succ) - start)
	return a.succ[start:]
}
