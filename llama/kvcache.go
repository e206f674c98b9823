//go:build cgo

package llama

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// kvCache is the key/value cache of a Context in llama.cpp's layout: per layer, K holds one
// row of n_embd_gqa values per cell (rotated keys), V holds the values transposed (element
// (cell j, dim d) at d·n_ctx + j), or, when they are quantized (vRows), a row per cell as K
// (llama.cpp's layout with flash attention). Which cells hold what is in cells (kvcells.go): each
// cell carries the position of its token and the set of sequences that share it.
type kvCache struct {
	nCtx           int
	kWidth, vWidth int // values per cell of K (head_dim·n_head_kv) and of V
	typK, typV     ggml.Type
	vRows          bool // V stored by cells (a quantized V)
	k, v           []*ggml.Tensor
	ctxs           []*ggml.Context
	bufs           []*ggml.Buffer
	kvCells
}

// newKVCache allocates the cache of m for nCtx cells, zero-filled; the layers offloaded by the
// model get their cache in the memory of their offload backend.
func newKVCache(m *Model, nCtx int, typK, typV ggml.Type) (*kvCache, error) {
	c := &kvCache{nCtx: nCtx, typK: typK, typV: typV, vRows: typV.IsQuantized(), kWidth: m.HP.NEmbdGQA(), vWidth: m.HP.nEmbdVGQA(), kvCells: newKVCells(nCtx)}
	c.k = make([]*ggml.Tensor, m.HP.NLayer)
	c.v = make([]*ggml.Tensor, m.HP.NLayer)
	for dev := -1; dev < len(m.offloads); dev++ { // the CPU, then each offload backend
		var idx []int
		for i, l := range m.layers {
			if l.dev == dev {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			continue
		}
		ctx, err := ggml.NewContext(ggml.Params{MemSize: uint64(2*len(idx)+1) * ggml.TensorOverhead(), NoAlloc: true})
		if err != nil {
			c.close()
			return nil, err
		}
		c.ctxs = append(c.ctxs, ctx)
		for _, i := range idx {
			c.k[i] = ctx.NewTensor1D(typK, int64(c.kWidth)*int64(nCtx)).SetName(fmt.Sprintf("cache_k_l%d", i))
			c.v[i] = ctx.NewTensor1D(typV, int64(c.vWidth)*int64(nCtx)).SetName(fmt.Sprintf("cache_v_l%d", i))
		}
		b := m.cpu
		if dev >= 0 {
			b = m.offloads[dev]
		}
		buf, err := ggml.AllocContextTensors(ctx, b)
		if err != nil {
			c.close()
			return nil, fmt.Errorf("llama: cannot allocate the KV cache (%d cells): %w", nCtx, err)
		}
		buf.Clear(0)
		c.bufs = append(c.bufs, buf)
	}
	return c, nil
}

// bytes returns the size of the cache.
func (c *kvCache) bytes() uint64 {
	var n uint64
	for _, b := range c.bufs {
		n += b.Size()
	}
	return n
}

// clear empties the cache (zero-filling it, as a fresh one).
func (c *kvCache) clear() {
	for _, b := range c.bufs {
		b.Clear(0)
	}
	c.kvCells.clear()
}

func (c *kvCache) close() {
	for _, b := range c.bufs {
		b.Close()
	}
	for _, x := range c.ctxs {
		x.Close()
	}
	c.bufs, c.ctxs = nil, nil
}
