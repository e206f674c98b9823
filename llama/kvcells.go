package llama

// MaxSequences is the number of sequences a Context can hold at once (ids 0 .. 63): each KV
// cell records the sequences that share it in a 64-bit set.
const MaxSequences = 64

// kvCell is one cell of the KV cache: the position of the token stored there and the set of
// sequences that contain it (bit s for sequence s; 0: the cell is free). A cell shared by
// several sequences (a common prefix copied with SeqCopy) is stored once.
type kvCell struct {
	pos  int32
	seqs uint64
}

// kvCells is the bookkeeping of the KV cache: which cells hold which positions of which
// sequences. Batches are stored in a run of free cells (findSlot); attention masks are built
// from the cells (a token sees the cells of its sequence at positions up to its own).
type kvCells struct {
	cells []kvCell
	used  int // cells that are not free
	head  int // where the search for free cells starts
}

func newKVCells(n int) kvCells {
	c := kvCells{cells: make([]kvCell, n)}
	c.clear()
	return c
}

// clear frees every cell.
func (c *kvCells) clear() {
	for i := range c.cells {
		c.cells[i] = kvCell{pos: -1}
	}
	c.used, c.head = 0, 0
}

// free returns the number of free cells.
func (c *kvCells) free() int { return len(c.cells) - c.used }

// extent returns the index after the last cell in use (0 when all are free): attention reads
// the cells below it.
func (c *kvCells) extent() int {
	for i := len(c.cells) - 1; i >= 0; i-- {
		if c.cells[i].seqs != 0 {
			return i + 1
		}
	}
	return 0
}

// findSlot returns the first cell of a run of n free cells, searching from head and then
// from the start, or -1 when there is none.
func (c *kvCells) findSlot(n int) int {
	if n <= 0 || n > c.free() {
		return -1
	}
	search := func(from int) int {
		run := 0
		for i := from; i < len(c.cells); i++ {
			if c.cells[i].seqs != 0 {
				run = 0
				continue
			}
			run++
			if run == n {
				return i - n + 1
			}
		}
		return -1
	}
	if s := search(min(c.head, len(c.cells))); s >= 0 {
		return s
	}
	return search(0)
}

// place records tokens at positions pos of the sequence sets seqs in the cells from start,
// which must be free, and moves head after them.
func (c *kvCells) place(start int, pos []int32, seqs []uint64) {
	for i := range pos {
		c.cells[start+i] = kvCell{pos: pos[i], seqs: seqs[i]}
	}
	c.used += len(pos)
	c.head = start + len(pos)
}

// unplace frees cells [start, start+n) again (a batch that failed).
func (c *kvCells) unplace(start, n int) {
	for i := start; i < start+n; i++ {
		if c.cells[i].seqs != 0 {
			c.used--
		}
		c.cells[i] = kvCell{pos: -1}
	}
	c.head = min(c.head, start)
}

// seqMask returns the set of seq (every sequence for seq < 0).
func seqMask(seq int) uint64 {
	if seq < 0 {
		return ^uint64(0)
	}
	return 1 << uint(seq)
}

// inRange reports whether p is in [p0, p1), where p1 < 0 means no upper bound.
func inRange(p, p0, p1 int32) bool { return p >= p0 && (p1 < 0 || p < p1) }

// dropSeqs removes the sequences of mask from cell i, freeing it when none is left.
func (c *kvCells) dropSeqs(i int, mask uint64) {
	cell := &c.cells[i]
	if cell.seqs == 0 || cell.seqs&mask == 0 {
		return
	}
	cell.seqs &^= mask
	if cell.seqs == 0 {
		cell.pos = -1
		c.used--
		c.head = min(c.head, i)
	}
}

// seqRemove removes sequence seq (every sequence for seq < 0) from the cells at positions
// [p0, p1) (p1 < 0: to the end).
func (c *kvCells) seqRemove(seq int, p0, p1 int32) {
	mask := seqMask(seq)
	for i := range c.cells {
		if inRange(c.cells[i].pos, p0, p1) {
			c.dropSeqs(i, mask)
		}
	}
}

// seqCopy adds sequence dst to the cells of sequence src at positions [p0, p1).
func (c *kvCells) seqCopy(src, dst int, p0, p1 int32) {
	s, d := seqMask(src), seqMask(dst)
	for i := range c.cells {
		if cell := &c.cells[i]; cell.seqs&s != 0 && inRange(cell.pos, p0, p1) {
			cell.seqs |= d
		}
	}
}

// seqKeep removes every sequence but seq from all cells.
func (c *kvCells) seqKeep(seq int) {
	other := ^seqMask(seq)
	for i := range c.cells {
		c.dropSeqs(i, other)
	}
}

// seqShift adds delta to the positions of the cells of seq at [p0, p1) and returns, per
// cell, the delta applied (nil when no cell moved). Cells that are shared with another
// sequence cannot move for one of them: seqShift reports them in shared (the caller
// refuses the shift). Cells whose position would become negative are removed from seq.
func (c *kvCells) seqShift(seq int, p0, p1, delta int32) (deltas []int32, shared bool) {
	mask := seqMask(seq)
	for i := range c.cells {
		cell := &c.cells[i]
		if cell.seqs&mask == 0 || !inRange(cell.pos, p0, p1) {
			continue
		}
		if cell.seqs != mask {
			return nil, true
		}
	}
	for i := range c.cells {
		cell := &c.cells[i]
		if cell.seqs&mask == 0 || !inRange(cell.pos, p0, p1) || delta == 0 {
			continue
		}
		if cell.pos+delta < 0 {
			c.dropSeqs(i, mask)
			continue
		}
		if deltas == nil {
			deltas = make([]int32, len(c.cells))
		}
		cell.pos += delta
		deltas[i] = delta
	}
	return deltas, false
}

// seqPosMax returns the largest position of seq, or -1 when it has no cell.
func (c *kvCells) seqPosMax(seq int) int32 {
	mask, best := seqMask(seq), int32(-1)
	for _, cell := range c.cells {
		if cell.seqs&mask != 0 && cell.pos > best {
			best = cell.pos
		}
	}
	return best
}

// seqCells returns the number of cells of seq.
func (c *kvCells) seqCells(seq int) int {
	mask, n := seqMask(seq), 0
	for _, cell := range c.cells {
		if cell.seqs&mask != 0 {
			n++
		}
	}
	return n
}
