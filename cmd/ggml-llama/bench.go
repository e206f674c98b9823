//go:build cgo

package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ggml-go/ggml/llama"
)

// parseInts parses a comma-separated list of positive integers.
func parseInts(flagName, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 0 {
			return nil, fmt.Errorf("-%s %q: want a comma-separated list of non-negative integers", flagName, s)
		}
		out = append(out, v)
	}
	return out, nil
}

// meanStd returns the mean and the sample standard deviation of v.
func meanStd(v []float64) (float64, float64) {
	var s, ss float64
	for _, x := range v {
		s += x
	}
	m := s / float64(len(v))
	for _, x := range v {
		ss += (x - m) * (x - m)
	}
	if len(v) < 2 {
		return m, 0
	}
	return m, math.Sqrt(ss / float64(len(v)-1))
}

func cmdBench(args []string) error {
	fs := newFlags("bench", "-m MODEL.gguf [-p 200] [-n 64] [-t 1,2] [-r 3] [-np 1,2,4,8]")
	var mf modelFlags
	mf.registerNoThreads(fs)
	ts := fs.String("t", strconv.Itoa(llama.DefaultThreads()), "CPU threads, a comma-separated list")
	pp := fs.String("p", "200", "prompt sizes (tokens), comma-separated; 0 skips")
	tg := fs.String("n", "64", "generation lengths (tokens), comma-separated; 0 skips")
	reps := fs.Int("r", 3, "repetitions")
	batch := fs.Int("b", 512, "batch size")
	kvF32 := fs.Bool("kv-f32", false, "F32 KV cache")
	nps := fs.String("np", "", "parallel sequences for the generation tests, comma-separated (e.g. 1,2,4,8,16): each step decodes one token of every sequence in one graph; tokens/s counts all sequences")
	if err := parse(fs, args); err != nil {
		return err
	}
	threads, err := parseInts("t", *ts)
	if err != nil {
		return err
	}
	pps, err := parseInts("p", *pp)
	if err != nil {
		return err
	}
	tgs, err := parseInts("n", *tg)
	if err != nil {
		return err
	}
	var parallel []int
	if *nps != "" {
		if parallel, err = parseInts("np", *nps); err != nil {
			return err
		}
		for _, np := range parallel {
			if np < 1 || np > llama.MaxSequences {
				return fmt.Errorf("-np %d: give 1 to %d sequences", np, llama.MaxSequences)
			}
		}
	}
	mf.threads = threads[0]
	l, err := mf.load()
	if err != nil {
		return err
	}
	defer l.Close()
	m := l.model
	fmt.Fprintf(stdout, "model: %s, %s, %.2f MiB of weights, %d layers, n_embd %d, vocab %d (loaded in %v)\n",
		mf.path, m.Description(), float64(m.WeightBytes())/(1<<20), m.HP.NLayer, m.HP.NEmbd, m.HP.NVocab, l.elapsed.Round(time.Millisecond))
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "threads\ttest\ttokens/s\t±\t")
	maxTok := 0
	for _, p := range pps {
		maxTok = max(maxTok, p)
	}
	for _, n := range tgs {
		maxTok = max(maxTok, n+1)
	}
	nCtx := max(512, maxTok)
	for _, np := range parallel {
		for _, n := range tgs {
			nCtx = max(nCtx, np*(n+1))
		}
	}
	for _, th := range threads {
		if err := m.SetThreads(th); err != nil {
			return err
		}
		c, err := m.NewContext(llama.ContextOptions{NCtx: nCtx, NBatch: *batch, KVF32: *kvF32})
		if err != nil {
			return err
		}
		encoder := llama.IsEncoder(m.HP.Arch)
		tok := func(i int) int32 { return int32(3 + (i*7919)%(m.HP.NVocab-3)) }
		bench := func(name string, n int, f func() error) error {
			if n == 0 {
				return nil
			}
			if err := f(); err != nil { // warm-up
				return err
			}
			var rates []float64
			for r := 0; r < max(1, *reps); r++ {
				start := time.Now()
				if err := f(); err != nil {
					return err
				}
				rates = append(rates, float64(n)/time.Since(start).Seconds())
			}
			mean, sd := meanStd(rates)
			fmt.Fprintf(w, "%d\t%s\t%.1f\t%.1f\t\n", th, name, mean, sd)
			return nil
		}
		for _, p := range pps {
			prompt := make([]int32, p)
			for i := range prompt {
				prompt[i] = tok(i)
			}
			err := bench(fmt.Sprintf("pp%d", p), p, func() error {
				c.Reset()
				if encoder {
					_, err := c.Embed(prompt, llama.EmbedOptions{Pooling: llama.PoolingMean})
					return err
				}
				_, err := c.Eval(prompt, false)
				return err
			})
			if err != nil {
				c.Close()
				return err
			}
		}
		for _, n := range tgs {
			if encoder {
				break // an encoder generates nothing
			}
			for _, np := range parallel {
				var b llama.Batch
				// n steps of np tokens each (the first, at position 0, is token 1 in every
				// sequence), as llama-bench counts its tg tests: every decode is timed and counted
				err := bench(fmt.Sprintf("tg%d np%d", n, np), n*np, func() error {
					c.Reset()
					for i := 0; i < n; i++ {
						b.Clear()
						for s := 0; s < np; s++ {
							t := int32(1)
							if i > 0 {
								t = tok(i - 1 + s)
							}
							b.Add(t, i, s, true)
						}
						if err := c.Decode(&b); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					c.Close()
					return err
				}
			}
			if len(parallel) > 0 {
				continue
			}
			err := bench(fmt.Sprintf("tg%d", n), n, func() error {
				c.Reset()
				if _, err := c.Eval([]int32{1}, false); err != nil {
					return err
				}
				for i := 1; i < n; i++ { // n evaluations in all, as tg np above
					if _, err := c.Eval([]int32{tok(i - 1)}, false); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				c.Close()
				return err
			}
		}
		c.Close()
	}
	return w.Flush()
}
