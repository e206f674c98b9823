//go:build cgo

package llama

import (
	"errors"
	"fmt"

	"github.com/ggml-go/ggml"
)

// ErrContextFull is returned (wrapped) when tokens do not fit in the context's remaining cells.
var ErrContextFull = errors.New("llama: context is full")

// ContextOptions configures a Context. The zero value gives llama.cpp's defaults: 512 cells,
// batches of 512 tokens, an F16 KV cache.
type ContextOptions struct {
	NCtx   int  // number of KV cells = the most tokens a context holds (<= 0: 512)
	NBatch int  // most tokens evaluated in one graph (<= 0: 512; at most NCtx)
	KVF32  bool // store K and V as F32 instead of F16 (llama.cpp's default)
	// TypeK and TypeV are the types of the cached keys and values (llama.cpp's -ctk and -ctv;
	// CacheDefault: F16, or F32 with KVF32). CacheQ8_0 for both halves the cache's memory
	// (see CacheType).
	TypeK, TypeV CacheType
}

// Context is an inference context: a KV cache and the means to evaluate tokens. Eval
// appends the tokens of sequence 0 at position Pos(); Decode evaluates a Batch of tokens of
// up to MaxSequences sequences in one graph, and the Seq* methods edit the sequences' cells
// (remove, copy a shared prefix, keep one, shift positions). Reset starts over. A Context
// must be used by one goroutine at a time (the Engine serves many goroutines from one);
// Close it before its Model.
type Context struct {
	m         *Model
	kv        *kvCache
	sched     *ggml.Scheduler
	nBatch    int
	graphSize int
	maskBuf   []float32
	stepOut   []float32                 // decodeStep's logits, reused (valid until the next evaluation)
	decode    map[graphKey]*decodeGraph // reused decode graphs (decode.go)
	decodeUse []graphKey                // their keys, least recently used first
	noReuse   bool                      // tests: always rebuild through the scheduler
	out       batchOutput               // the outputs of the last Decode
}

// cacheTypes returns the tensor types of the K and V cache for the options, or an error that
// says which choice this model cannot take.
func (m *Model) cacheTypes(k, v CacheType, kvF32 bool) (ggml.Type, ggml.Type, error) {
	if m.arch.encoder { // encoders keep K and V in F32, as llama.cpp (no cache)
		return ggml.TypeF32, ggml.TypeF32, nil
	}
	typK, okK := k.ggmlType(kvF32)
	typV, okV := v.ggmlType(kvF32)
	if !okK || !okV {
		return 0, 0, fmt.Errorf("llama: unknown KV cache type (K %s, V %s)", k, v)
	}
	for _, half := range []struct {
		name    string
		t       CacheType
		typ     ggml.Type
		headDim int
	}{{"K", k, typK, m.HP.HeadDim()}, {"V", v, typV, m.HP.headDimV()}} {
		if !half.typ.IsQuantized() {
			continue
		}
		if bs := half.typ.BlockSize(); half.headDim%bs != 0 {
			return 0, 0, fmt.Errorf("llama: a %s %s cache needs a head size that is a multiple of %d; this model's is %d (use f16)", half.t, half.name, bs, half.headDim)
		}
		for _, l := range m.layers {
			if l.dev >= 0 {
				return 0, 0, fmt.Errorf("llama: a %s %s cache is read by the CPU's attention only; this model offloads layers (-ngl): use f16 or keep every layer on the CPU", half.t, half.name)
			}
		}
	}
	return typK, typV, nil
}

// NewContext creates an inference context on the model. It allocates the KV cache and sizes
// the compute buffers for the largest batch.
func (m *Model) NewContext(opt ContextOptions) (*Context, error) {
	if err := m.checkOpen("Model.NewContext"); err != nil {
		return nil, err
	}
	nCtx := opt.NCtx
	if nCtx <= 0 {
		nCtx = 512
	}
	nBatch := opt.NBatch
	if nBatch <= 0 {
		nBatch = 512
	}
	nBatch = min(nBatch, nCtx)
	if pe := m.tensor("position_embd.weight"); pe != nil && int64(nCtx) > pe.Ne()[1] {
		return nil, fmt.Errorf("llama: %s models have learned positions for %d tokens; create the Context with NCtx <= %d", m.HP.Arch, pe.Ne()[1], pe.Ne()[1])
	}
	typK, typV, err := m.cacheTypes(opt.TypeK, opt.TypeV, opt.KVF32)
	if err != nil {
		return nil, err
	}
	kv, err := newKVCache(m, nCtx, typK, typV)
	if err != nil {
		return nil, err
	}
	c := &Context{m: m, kv: kv, nBatch: nBatch, graphSize: 1024 + 64*m.HP.NLayer, decode: map[graphKey]*decodeGraph{}}
	backends := append(append([]*ggml.Backend(nil), m.offloads...), m.cpu)
	if c.sched, err = ggml.NewScheduler(backends, nil, c.graphSize); err != nil {
		c.Close()
		return nil, err
	}
	// size the compute buffers with the largest graph: a full batch attending to every cell
	// (with the output-rows input, which only some steps have)
	if err := c.measure(step{nTokens: nBatch, kvHead: nCtx - nBatch, nKV: nCtx, allLogits: true, hidden: m.arch.encoder, nOut: nBatch}); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Model returns the context's model.
func (c *Context) Model() *Model { return c.m }

// NCtx returns the number of cells of the context.
func (c *Context) NCtx() int { return c.kv.nCtx }

// NBatch returns the largest number of tokens evaluated in one graph.
func (c *Context) NBatch() int { return c.nBatch }

// Pos returns the position of the next token of sequence 0 (the number of its tokens when
// they were appended by Eval).
func (c *Context) Pos() int { return int(c.kv.seqPosMax(0)) + 1 }

// Used returns the number of cells in use (by any sequence).
func (c *Context) Used() int { return c.kv.used }

// KVBytes returns the size of the KV cache.
func (c *Context) KVBytes() uint64 { return c.kv.bytes() }

// Reset empties the context (the next token is at position 0).
func (c *Context) Reset() { c.kv.clear() }

// Close frees the scheduler and the KV cache; idempotent, returns nil.
func (c *Context) Close() error {
	if c == nil {
		return nil
	}
	c.dropDecodeGraphs()
	if c.sched != nil {
		c.sched.Close()
		c.sched = nil
	}
	if c.kv != nil {
		c.kv.close()
		c.kv = nil
	}
	return nil
}

// newGraphContext returns a no-alloc context for one graph.
func (c *Context) newGraphContext() (*ggml.Context, error) {
	size := uint64(c.graphSize)*ggml.TensorOverhead() + ggml.GraphOverheadCustom(c.graphSize, false)
	return ggml.NewContext(ggml.Params{MemSize: size, NoAlloc: true})
}

// allocInputs places the inputs with the scheduler's CPU allocator.
func (c *Context) allocInputs(in graphInputs) error {
	a := c.sched.Allocator(c.m.cpu)
	for _, t := range in.list() {
		if err := a.Alloc(t); err != nil {
			return err
		}
	}
	return nil
}

func (c *Context) measure(s step) error {
	gctx, err := c.newGraphContext()
	if err != nil {
		return err
	}
	defer gctx.Close()
	g, in, _, _ := c.build(gctx, s)
	if err := c.allocInputs(in); err != nil {
		return err
	}
	if err := c.sched.InitMeasure(g); err != nil {
		return fmt.Errorf("llama: sizing the compute buffers: %w", err)
	}
	c.sched.Reset()
	return nil
}

// nKVFor returns the number of cells attention reads when cells [0, used) are filled: at
// least 32, at most n_ctx, and a multiple of a granularity that grows with used (32 up to 255
// cells, then a quarter of the largest power of two <= used, at most 256, as llama.cpp pads
// for flash attention). Each value is a decode graph of its own (decode.go), rebuilt in 1.5-3
// ms on a TinyLlama-shaped model; with 8 sequences adding 8 cells a step, a granularity of 32
// rebuilt every 4th step, 0.56 ms a step on average (2 % of it). Masked cells cost the CPU's
// attention only a mask scan, and a graph with an offload backend at most a quarter more
// cells than used.
func nKVFor(used, nCtx int) int {
	g := 32
	for g < 256 && 4*g*2 <= used {
		g *= 2
	}
	return min(nCtx, max(32, (used+g-1)/g*g))
}
