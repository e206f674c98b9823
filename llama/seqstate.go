//go:build cgo

package llama

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/ggml-go/ggml"
)

// seqStateMagic starts a saved sequence state (version 1).
const seqStateMagic = "GGKVSEQ1"

// seqStateHeader describes the cache a state was saved from; a state restores only into a
// cache of the same shape and types (Type: kvTypeCode).
type seqStateHeader struct {
	NLayer, KWidth, VWidth, Type, NCells uint32
}

// kvTypeCode is the header's Type: the ggml type of K and V when they share one (as every
// cache did before -ctk), else 1<<31 | K's type<<16 | V's type.
func kvTypeCode(k, v ggml.Type) uint32 {
	if k == v {
		return uint32(k)
	}
	return 1<<31 | uint32(k)<<16 | uint32(v)
}

// kvTypeNames names the types of a kvTypeCode.
func kvTypeNames(code uint32) string {
	if code&(1<<31) == 0 {
		return ggml.Type(code).String()
	}
	return fmt.Sprintf("K %s, V %s", ggml.Type(code>>16&0x7fff), ggml.Type(code&0xffff))
}

// SeqState returns the KV state of sequence seq: the positions of its cells and their keys
// and values, in a byte format that SetSeqState reads (on a Context of the same model with
// the same KV type). With the tokens, which the caller keeps, it resumes a session without
// evaluating its prompt again. Save it to a file with os.WriteFile.
func (c *Context) SeqState(seq int) ([]byte, error) {
	if err := checkSeq("SeqState", seq, false); err != nil {
		return nil, err
	}
	if err := c.checkOpen("Context.SeqState"); err != nil {
		return nil, err
	}
	kv := c.kv
	var cells []int
	mask := seqMask(seq)
	for i, cell := range kv.cells {
		if cell.seqs&mask != 0 {
			cells = append(cells, i)
		}
	}
	slices.SortFunc(cells, func(a, b int) int { return int(kv.cells[a].pos - kv.cells[b].pos) })
	var buf bytes.Buffer
	buf.WriteString(seqStateMagic)
	h := seqStateHeader{uint32(len(kv.k)), uint32(kv.kWidth), uint32(kv.vWidth), kvTypeCode(kv.typK, kv.typV), uint32(len(cells))}
	binary.Write(&buf, binary.LittleEndian, h)
	for _, i := range cells {
		binary.Write(&buf, binary.LittleEndian, kv.cells[i].pos)
	}
	kRow := int(kv.typK.RowSize(int64(kv.kWidth)))
	esz := int(kv.typV.RowSize(1))
	for il := range kv.k {
		k, err := kv.k[il].Bytes()
		if err != nil {
			return nil, err
		}
		for _, i := range cells {
			buf.Write(k[i*kRow : (i+1)*kRow])
		}
		v, err := kv.v[il].Bytes()
		if err != nil {
			return nil, err
		}
		if kv.vRows {
			vRow := int(kv.typV.RowSize(int64(kv.vWidth)))
			for _, i := range cells {
				buf.Write(v[i*vRow : (i+1)*vRow])
			}
			continue
		}
		for d := 0; d < kv.vWidth; d++ {
			for _, i := range cells {
				off := (d*kv.nCtx + i) * esz
				buf.Write(v[off : off+esz])
			}
		}
	}
	return buf.Bytes(), nil
}

// SetSeqState restores a state made by SeqState into sequence seq, whose cells are removed
// first. It needs as many free cells as the state has (anywhere in the cache). It returns an
// error, changing nothing, for a state of another model or KV type, or a damaged one.
func (c *Context) SetSeqState(seq int, state []byte) error {
	if err := checkSeq("SetSeqState", seq, false); err != nil {
		return err
	}
	if err := c.checkOpen("Context.SetSeqState"); err != nil {
		return err
	}
	kv := c.kv
	r := bytes.NewReader(state)
	magic := make([]byte, len(seqStateMagic))
	if _, err := r.Read(magic); err != nil || string(magic) != seqStateMagic {
		return errors.New("llama: not a sequence state (made by Context.SeqState)")
	}
	var h seqStateHeader
	if err := binary.Read(r, binary.LittleEndian, &h); err != nil {
		return fmt.Errorf("llama: the sequence state is truncated: %w", err)
	}
	want := seqStateHeader{uint32(len(kv.k)), uint32(kv.kWidth), uint32(kv.vWidth), kvTypeCode(kv.typK, kv.typV), h.NCells}
	if h != want {
		return fmt.Errorf("llama: the sequence state is of another cache (%d layers, K width %d, V width %d, %s; this context: %d, %d, %d, %s)",
			h.NLayer, h.KWidth, h.VWidth, kvTypeNames(h.Type), want.NLayer, want.KWidth, want.VWidth, kvTypeNames(want.Type))
	}
	n := int(h.NCells)
	kRow := int(kv.typK.RowSize(int64(kv.kWidth)))
	esz := int(kv.typV.RowSize(1))
	vRow := kv.vWidth * esz // bytes of a cell's values (by rows or transposed)
	if kv.vRows {
		vRow = int(kv.typV.RowSize(int64(kv.vWidth)))
	}
	size := n*4 + len(kv.k)*n*(kRow+vRow)
	if r.Len() != size {
		return fmt.Errorf("llama: the sequence state has %d bytes of data; %d cells need %d", r.Len(), n, size)
	}
	pos := make([]int32, n)
	binary.Read(r, binary.LittleEndian, pos)
	for _, p := range pos {
		if p < 0 {
			return errors.New("llama: the sequence state has a negative position")
		}
	}
	// the cells of seq go first, then n free cells anywhere
	own := 0
	for _, cell := range kv.cells {
		if cell.seqs == seqMask(seq) {
			own++
		}
	}
	if kv.free()+own < n {
		return fmt.Errorf("%w: the state has %d cells and the context %d free", ErrContextFull, n, kv.free()+own)
	}
	kv.seqRemove(seq, 0, -1)
	cells := make([]int, 0, n)
	for i := 0; i < len(kv.cells) && len(cells) < n; i++ {
		if kv.cells[i].seqs == 0 {
			cells = append(cells, i)
		}
	}
	data := state[len(state)-r.Len():]
	for il := range kv.k {
		k, err := kv.k[il].Bytes()
		if err != nil {
			return err
		}
		for j, i := range cells {
			copy(k[i*kRow:(i+1)*kRow], data[j*kRow:(j+1)*kRow])
		}
		data = data[n*kRow:]
		v, err := kv.v[il].Bytes()
		if err != nil {
			return err
		}
		if kv.vRows {
			for j, i := range cells {
				copy(v[i*vRow:(i+1)*vRow], data[j*vRow:(j+1)*vRow])
			}
		} else {
			for d := 0; d < kv.vWidth; d++ {
				for j, i := range cells {
					off := (d*kv.nCtx + i) * esz
					copy(v[off:off+esz], data[(d*n+j)*esz:])
				}
			}
		}
		data = data[n*vRow:]
		if err := kv.k[il].SetBytes(k); err != nil {
			return err
		}
		if err := kv.v[il].SetBytes(v); err != nil {
			return err
		}
	}
	for j, i := range cells {
		kv.cells[i] = kvCell{pos: pos[j], seqs: seqMask(seq)}
	}
	kv.used += n
	return nil
}
