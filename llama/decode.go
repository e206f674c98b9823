//go:build cgo

package llama

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/ggml-go/ggml"
)

// decodeGraph is the graph of a decode step (n tokens, every one an output: one token of
// each of n sequences), built, allocated and planned once and reused for every step of as
// many tokens that attends over the same number of cells: each step moves its K/V store
// views to the step's cells, writes the inputs and runs the plan. This saves building the graph,
// splitting and allocating it and creating the plan per token. It is used when the whole model
// runs on the CPU backend (with an offload backend the Scheduler rebuilds every step).
type decodeGraph struct {
	ctx     *ggml.Context
	g       *ggml.Graph
	in      graphInputs
	logits  *ggml.Tensor
	stores  *kvStores
	ga      *ggml.GraphAllocator
	ta      *ggml.TensorAllocator
	plan    *ggml.GraphPlan
	threads int
}

func (d *decodeGraph) close() {
	if d.plan != nil {
		d.plan.Close()
	}
	if d.ta != nil {
		d.ta.Close()
	}
	if d.ga != nil {
		d.ga.Close()
	}
	if d.ctx != nil {
		d.ctx.Close()
	}
}

// newDecodeGraph builds and allocates the graph of k.n tokens over k.nKV cells.
func (c *Context) newDecodeGraph(k graphKey) (d *decodeGraph, err error) {
	d = &decodeGraph{threads: c.m.threads}
	defer func() {
		if err != nil {
			d.close()
		}
	}()
	if d.ctx, err = c.newGraphContext(); err != nil {
		return nil, err
	}
	d.g, d.in, d.logits, d.stores = c.build(d.ctx, step{nTokens: k.n, kvHead: 0, nKV: k.nKV, allLogits: true})
	inputs := d.in.list()
	// measure, then allocate for real
	measure, err := ggml.NewMeasureAllocatorFromBackend(c.m.cpu)
	if err != nil {
		return nil, err
	}
	mga, err := ggml.NewGraphAllocator()
	if err != nil {
		measure.Close()
		return nil, err
	}
	for _, t := range inputs {
		if err = measure.Alloc(t); err != nil {
			break
		}
	}
	var size uint64
	if err == nil {
		size, err = mga.AllocGraph(measure, d.g)
	}
	mga.Close()
	measure.Close()
	if err != nil {
		return nil, fmt.Errorf("llama: sizing the decode graph: %w", err)
	}
	if d.ta, err = ggml.NewTensorAllocatorFromBackend(c.m.cpu, size+4096); err != nil {
		return nil, err
	}
	for _, t := range inputs {
		if err = d.ta.Alloc(t); err != nil {
			return nil, err
		}
	}
	if d.ga, err = ggml.NewGraphAllocator(); err != nil {
		return nil, err
	}
	if _, err = d.ga.AllocGraph(d.ta, d.g); err != nil {
		return nil, err
	}
	if d.plan, err = c.m.cpu.NewPlan(d.g); err != nil {
		return nil, err
	}
	return d, nil
}

// maxReusedTokens is the most tokens of a step whose graph is kept for reuse; maxDecodeGraphs
// is the most graphs a Context keeps (the least recently used one is freed first).
const (
	maxReusedTokens = 64
	maxDecodeGraphs = 8
)

// graphKey identifies a reusable decode graph.
type graphKey struct{ n, nKV int }

// dropDecodeGraphs frees the reused graphs.
func (c *Context) dropDecodeGraphs() {
	for k, d := range c.decode {
		d.close()
		delete(c.decode, k)
	}
	c.decodeUse = c.decodeUse[:0]
}

// decodeGraph returns the reused graph for k, building it when needed.
func (c *Context) decodeGraph(k graphKey) (*decodeGraph, error) {
	d := c.decode[k]
	if d != nil && d.threads != c.m.threads {
		d.close() // the plan was made for another thread count
		delete(c.decode, k)
		d = nil
	}
	if i := slices.Index(c.decodeUse, k); i >= 0 {
		c.decodeUse = slices.Delete(c.decodeUse, i, i+1)
	}
	if d == nil {
		if len(c.decode) >= maxDecodeGraphs {
			old := c.decodeUse[0]
			c.decodeUse = c.decodeUse[1:]
			c.decode[old].close()
			delete(c.decode, old)
		}
		var err error
		if d, err = c.newDecodeGraph(k); err != nil {
			return nil, err
		}
		c.decode[k] = d
	}
	c.decodeUse = append(c.decodeUse, k)
	return d, nil
}

// decodeStep evaluates ub (every token an output) stored from cell head with a reused graph
// over nKV cells. The logits it returns are c.stepOut, which the next evaluation overwrites:
// callers copy them. (A fresh slice per step, 128 KiB allocated, zeroed and collected each
// time, cost 117-121 us of a 13 ms TinyLlama-shaped step at 2 threads; reading into the
// reused one costs about 22.)
func (c *Context) decodeStep(ub ubatch, head, nKV int) ([]float32, error) {
	d, err := c.decodeGraph(graphKey{n: len(ub.tokens), nKV: nKV})
	if err != nil {
		return nil, err
	}
	if err := d.stores.setHead(c.kv, head); err != nil {
		return nil, err
	}
	if err := c.setInputs(d.in, ub, nKV); err != nil {
		return nil, err
	}
	if err := d.plan.Compute(); err != nil {
		return nil, fmt.Errorf("llama: evaluating %d tokens at cell %d: %w", len(ub.tokens), head, err)
	}
	if d.logits.Type() != ggml.TypeF32 {
		return d.logits.Float32()
	}
	n := int(d.logits.NumElements())
	if cap(c.stepOut) < n {
		c.stepOut = make([]float32, n)
	}
	out := c.stepOut[:n]
	if _, err := d.logits.ReadAt(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), 4*n), 0); err != nil {
		return nil, err
	}
	return out, nil
}
