//go:build cgo

package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/ggml-go/ggml/tokenizer"
	"github.com/ggml-go/ggml/train"
)

// benchVocab returns an SPM vocabulary of n placeholder tokens (the 256 byte tokens first),
// enough to size a model for -bench.
func benchVocab(n int) tokenizer.Vocab {
	v := tokenizer.NewVocab(tokenizer.ModelSPM)
	v.Tokens, v.Types = make([]string, n), make([]tokenizer.TokenType, n)
	for i := range v.Tokens {
		if i < 256 {
			v.Tokens[i] = fmt.Sprintf("<0x%02X>", i)
			v.Types[i] = tokenizer.TypeByte
		} else {
			v.Tokens[i] = fmt.Sprintf("t%d", i)
			v.Types[i] = tokenizer.TypeNormal
		}
	}
	return v
}

// runBench trains c.bench steps of the configured shape on uniformly random tokens and prints
// the steady training rate: batch·n_ctx tokens over the median step time, the first two steps
// (allocation, page faults) left out.
func runBench(c *config, log io.Writer) error {
	if c.bench < 4 {
		return fmt.Errorf("-bench %d: measure at least 4 steps", c.bench)
	}
	m, err := train.NewModel(c.model, benchVocab(c.vocab), c.seed)
	if err != nil {
		return err
	}
	defer m.Close()
	cfg := m.Config()
	rng := rand.New(rand.NewPCG(c.seed, 7))
	data := make([]int32, 1<<20)
	for i := range data {
		data[i] = int32(rng.IntN(cfg.NVocab))
	}
	var stamps []time.Time
	opt := c.opt
	opt.Steps = c.bench
	opt.Progress = func(train.Progress) { stamps = append(stamps, time.Now()) }
	t, err := train.NewTrainer(m, data, opt)
	if err != nil {
		return err
	}
	defer t.Close()
	fmt.Fprintf(log, "bench: n_vocab %d, n_embd %d, n_layer %d, n_head %d, n_ff %d, n_ctx %d, batch %d: %.2fM parameters, %d threads, %d steps\n",
		cfg.NVocab, cfg.NEmbd, cfg.NLayer, cfg.NHead, cfg.NFF, cfg.NCtx, opt.Batch, float64(cfg.ParamCount())/1e6, opt.Threads, c.bench)
	fmt.Fprintf(log, "bench: training graph memory %.1f MiB (checkpointing %v)\n", float64(t.GraphMemory())/(1<<20), opt.Checkpointing)
	start := time.Now()
	if err := t.Train(c.bench); err != nil {
		return err
	}
	stamps = append([]time.Time{start}, stamps...)
	var steps []float64
	for i := 3; i < len(stamps); i++ {
		steps = append(steps, stamps[i].Sub(stamps[i-1]).Seconds())
	}
	sort.Float64s(steps)
	med := steps[len(steps)/2]
	fmt.Fprintf(log, "bench: median step %.1f ms over %d steps: %.0f tokens/s\n", med*1000, len(steps), float64(t.TokensPerStep())/med)
	return nil
}
