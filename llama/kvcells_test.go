package llama

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cell bookkeeping against a plain model of it (a map of (sequence, position) per cell)
// through random operations: used counts, extents, free runs and positions agree.
func TestKVCellsRandomOperations(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const n = 48
	c := newKVCells(n)
	for step := 0; step < 5000; step++ {
		seq := rng.Intn(4)
		switch rng.Intn(6) {
		case 0, 1: // place a run
			k := 1 + rng.Intn(6)
			start := c.findSlot(k)
			if start < 0 {
				continue
			}
			for i := start; i < start+k; i++ {
				require.Zero(t, c.cells[i].seqs, "findSlot returned a used cell")
			}
			pos := make([]int32, k)
			seqs := make([]uint64, k)
			base := c.seqPosMax(seq) + 1
			for i := range pos {
				pos[i], seqs[i] = base+int32(i), seqMask(seq)
			}
			c.place(start, pos, seqs)
		case 2:
			p0 := int32(rng.Intn(20))
			c.seqRemove(seq, p0, p0+int32(rng.Intn(10)))
		case 3:
			c.seqCopy(seq, (seq+1)%4, 0, int32(rng.Intn(20)))
		case 4:
			if rng.Intn(10) == 0 {
				c.seqKeep(seq)
			}
		case 5:
			before := c.seqCells(seq)
			_, shared := c.seqShift(seq, 5, -1, -int32(rng.Intn(4)))
			if shared {
				assert.Equal(t, before, c.seqCells(seq), "a refused shift changes nothing")
			}
		}
		used, ext := 0, 0
		for i, cell := range c.cells {
			if cell.seqs != 0 {
				used++
				ext = i + 1
				require.GreaterOrEqual(t, cell.pos, int32(0))
			} else {
				require.Equal(t, int32(-1), cell.pos)
			}
		}
		require.Equal(t, used, c.used, "step %d", step)
		require.Equal(t, ext, c.extent())
	}
	c.seqRemove(-1, 0, -1)
	assert.Zero(t, c.used)
	assert.Equal(t, 0, c.findSlot(n))
}
