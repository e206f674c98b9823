package grammar

import (
	"slices"
	"unsafe"
)

// setCache interns sets of stacks (with the partial UTF-8 state after them) and caches the
// transitions between them on one byte, so that a Mask walk that meets the same state at
// many trie nodes (inside a JSON string, nearly all of them) computes each transition
// once; the caches live as long as the arena whose node ids they hold, and carry over from
// one token to the next.
type setCache struct {
	index  map[string]int32
	stacks [][]int32
	utf    []utf8State
	trans  map[uint64]int32 // set<<8 | byte → set, or deadSet
	dense  [][]int32        // hot sets: per byte, 0 = unknown, else set+2 (1 = dead)
	uses   []int32
	key    []byte
	nDense int
}

const (
	deadSet          = -1
	maxCachedTrans   = 1 << 18 // transitions and sets kept before the cache is dropped
	maxDenseSets     = 1024    // sets with a 1 KiB table of their transitions
	denseAfterLookup = 32      // lookups of a set before it gets a table
)

func (c *setCache) reset() {
	*c = setCache{index: map[string]int32{}, trans: map[uint64]int32{}, key: c.key[:0]}
}

func (c *setCache) size() int { return len(c.trans) + len(c.stacks) }

// intern returns the id of the set ids (reordered in place) with UTF-8 state u.
func (c *setCache) intern(ids []int32, u utf8State) int32 {
	slices.Sort(ids)
	k := c.key[:0]
	k = append(k, byte(u.need), byte(u.cp), byte(u.cp>>8), byte(u.cp>>16), byte(u.min>>8), byte(u.min>>16))
	if len(ids) > 0 {
		k = append(k, unsafe.Slice((*byte)(unsafe.Pointer(&ids[0])), 4*len(ids))...)
	}
	c.key = k
	if id, ok := c.index[string(k)]; ok {
		return id
	}
	id := int32(len(c.stacks))
	c.index[string(k)] = id
	c.stacks = append(c.stacks, slices.Clone(ids))
	c.utf = append(c.utf, u)
	c.dense = append(c.dense, nil)
	c.uses = append(c.uses, 0)
	return id
}

// lookup returns the cached transition of set s on byte b.
func (c *setCache) lookup(s int32, b byte) (int32, bool) {
	if d := c.dense[s]; d != nil {
		if v := d[b]; v != 0 {
			return v - 2, true
		}
	} else if c.uses[s]++; c.uses[s] >= denseAfterLookup && c.nDense < maxDenseSets {
		c.dense[s] = make([]int32, 256)
		c.nDense++
	}
	v, ok := c.trans[uint64(s)<<8|uint64(b)]
	if ok && c.dense[s] != nil {
		c.dense[s][b] = v + 2
	}
	return v, ok
}

func (c *setCache) store(s int32, b byte, to int32) {
	c.trans[uint64(s)<<8|uint64(b)] = to
	if d := c.dense[s]; d != nil {
		d[b] = to + 2
	}
}
