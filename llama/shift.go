//go:build cgo

package llama

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// shiftKeys rotates the cached keys of every cell by deltas[cell] positions (RoPE is a
// rotation by an angle proportional to the position, so rotating by the difference moves a
// key to its new position), layer by layer: K (F16 or F32) is copied to F32, rotated and
// copied back, through the scheduler.
func (c *Context) shiftKeys(deltas []int32) error {
	gctx, err := c.newGraphContext()
	if err != nil {
		return err
	}
	defer gctx.Close()
	kv, h := c.kv, &c.m.HP
	b := &builder{ctx: gctx, m: c.m, h: h, kv: kv, s: step{nTokens: kv.nCtx, nKV: kv.nCtx}, n: int64(kv.nCtx), stores: &kvStores{}}
	b.g = gctx.NewGraphCustom(c.graphSize, false)
	b.in.pos = gctx.NewTensor1D(ggml.TypeI32, int64(kv.nCtx)).SetName("inp_k_shift")
	hd, nhkv := int64(h.HeadDim()), int64(h.NHeadKV)
	factors := c.m.tensor("rope_freqs.weight")
	for il := range kv.k {
		view := gctx.View3D(kv.k[il], hd, nhkv, int64(kv.nCtx), kv.typK.RowSize(hd), kv.typK.RowSize(int64(kv.kWidth)), 0)
		x := view
		if kv.typK != ggml.TypeF32 { // (F16 or quantized: rotated in F32, stored back)
			x = gctx.Cpy(view, gctx.NewTensor3D(ggml.TypeF32, hd, nhkv, int64(kv.nCtx)))
		}
		b.g.BuildForwardExpand(gctx.Cpy(b.rope(x, factors), view))
	}
	c.sched.Reset()
	if err := c.sched.Allocator(c.m.cpu).Alloc(b.in.pos); err != nil {
		return err
	}
	if err := b.in.pos.SetInt32(deltas); err != nil {
		return err
	}
	if err := c.sched.Compute(b.g); err != nil {
		return fmt.Errorf("llama: shifting the cached keys: %w", err)
	}
	return nil
}
