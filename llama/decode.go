//go:build cgo

package llama

import (
	"fmt"

	"github.com/ggml-go/ggml"
)

// decodeGraph is the graph of a one-token step, built, allocated and planned once and reused
// for every step that attends over the same number of cells: each step moves its K/V store
// views to the new cell, writes the inputs and runs the plan. This saves building the graph,
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

// newDecodeGraph builds and allocates the one-token graph over nKV cells.
func (c *Context) newDecodeGraph(nKV int) (d *decodeGraph, err error) {
	d = &decodeGraph{threads: c.m.threads}
	defer func() {
		if err != nil {
			d.close()
		}
	}()
	if d.ctx, err = c.newGraphContext(); err != nil {
		return nil, err
	}
	d.g, d.in, d.logits, d.stores = c.build(d.ctx, step{nTokens: 1, kvHead: 0, nKV: nKV})
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

// decodeStep evaluates one token at cell c.kv.nUsed with a reused graph.
func (c *Context) decodeStep(tok int32) ([]float32, error) {
	head := c.kv.nUsed
	nKV := nKVFor(head+1, c.kv.nCtx)
	d := c.decode[nKV]
	if d != nil && d.threads != c.m.threads {
		d.close() // the plan was made for another thread count
		d = nil
	}
	if d == nil {
		var err error
		if d, err = c.newDecodeGraph(nKV); err != nil {
			return nil, err
		}
		c.decode[nKV] = d
	}
	if err := d.stores.setHead(c.kv, head); err != nil {
		return nil, err
	}
	if err := c.setInputs(d.in, []int32{tok}, head, nKV); err != nil {
		return nil, err
	}
	if err := d.plan.Compute(); err != nil {
		return nil, fmt.Errorf("llama: evaluating a token at position %d: %w", head, err)
	}
	c.kv.nUsed = head + 1
	return d.logits.Float32()
}
