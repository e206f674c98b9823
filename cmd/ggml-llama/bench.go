//go:build cgo

package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ggml-go/ggml/internal/membw"
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

// median returns the middle value of v (the mean of the two middle ones for an even count).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
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
	fs := newFlags("bench", "-m MODEL.gguf [-p 200] [-n 64] [-d 0,1024] [-t 1,2] [-r 3] [-np 1,2,4,8]")
	var mf modelFlags
	mf.registerNoThreads(fs)
	ts := fs.String("t", strconv.Itoa(llama.DefaultThreads()), "CPU threads, a comma-separated list")
	pp := fs.String("p", "200", "prompt sizes (tokens), comma-separated; 0 skips")
	tg := fs.String("n", "64", "generation lengths (tokens), comma-separated; 0 skips")
	dp := fs.String("d", "0", "context depths (tokens), comma-separated: each test runs after a prompt of that many tokens (evaluated once, not timed; with -np, one prompt that every sequence shares), as llama-bench's -d")
	reps := fs.Int("r", 3, "repetitions")
	batch := fs.Int("b", 512, "batch size")
	kvF32 := fs.Bool("kv-f32", false, "F32 KV cache")
	var cache cacheFlags
	cache.register(fs)
	nps := fs.String("np", "", "parallel sequences for the generation tests, comma-separated (e.g. 1,2,4,8,16): each step decodes one token of every sequence in one graph; tokens/s counts all sequences")
	bw := fs.Bool("bw", false, "measure the read bandwidth before every repetition of a generation test (the faster of two passes over a 256 MiB probe with the test's threads) and print the rate at which the steps read the weights and its share of that bandwidth (medians)")
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
	depths, err := parseInts("d", *dp)
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
	stepBytes := float64(m.StepWeightBytes())
	var probe *membw.Probe
	if *bw {
		if probe, err = membw.New(256 << 20); err != nil {
			return err
		}
		defer probe.Close()
		fmt.Fprintf(stdout, "bandwidth: %.2f MB of weights read per decode step; weights GB/s = that / step time, %%read = its share of the read probe run before each repetition\n",
			stepBytes*1e-6)
	}
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	if probe != nil {
		fmt.Fprintln(w, "threads\ttest\ttokens/s\t±\tread GB/s\tweights GB/s\t%read\t")
	} else {
		fmt.Fprintln(w, "threads\ttest\ttokens/s\t±\t")
	}
	maxTok := 0
	for _, p := range pps {
		maxTok = max(maxTok, p)
	}
	for _, n := range tgs {
		maxTok = max(maxTok, n+1)
	}
	maxDepth := slices.Max(depths)
	nCtx := max(512, maxDepth+maxTok)
	for _, np := range parallel {
		for _, n := range tgs {
			nCtx = max(nCtx, maxDepth+np*(n+1))
		}
	}
	for _, th := range threads {
		if err := m.SetThreads(th); err != nil {
			return err
		}
		c, err := m.NewContext(llama.ContextOptions{NCtx: nCtx, NBatch: *batch, KVF32: *kvF32, TypeK: cache.k, TypeV: cache.v})
		if err != nil {
			return err
		}
		encoder := llama.IsEncoder(m.HP.Arch)
		nVocab := m.HP.NVocab
		tok := func(i int) int32 { return int32(3 + (i*7919)%(nVocab-3)) }
		// bench times f (n tokens in steps decode steps; 0: a prompt test) after setup (not
		// timed), once to warm up and then -r times; with --bw each timed repetition of a
		// generation test follows two passes of the bandwidth probe
		bench := func(name string, n, steps int, setup, f func() error) error {
			if n == 0 {
				return nil
			}
			var rates, probes, weights, shares []float64
			for r := -1; r < max(1, *reps); r++ { // r = -1: the warm-up
				if err := setup(); err != nil {
					return err
				}
				var gbs float64
				if probe != nil && steps > 0 && r >= 0 {
					// the faster of two passes: the first can share the cores with the
					// CPU backend's workers still waiting for work after the last step
					gbs = max(probe.ReadGBs(th), probe.ReadGBs(th))
				}
				start := time.Now()
				if err := f(); err != nil {
					return err
				}
				if r >= 0 {
					sec := time.Since(start).Seconds()
					rates = append(rates, float64(n)/sec)
					if gbs > 0 {
						wgbs := stepBytes * float64(steps) / sec * 1e-9
						probes = append(probes, gbs)
						weights = append(weights, wgbs)
						shares = append(shares, wgbs/gbs)
					}
				}
			}
			mean, sd := meanStd(rates)
			switch {
			case len(shares) > 0:
				fmt.Fprintf(w, "%d\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f%%\t\n", th, name, mean, sd,
					median(probes), median(weights), 100*median(shares))
			case probe != nil:
				fmt.Fprintf(w, "%d\t%s\t%.1f\t%.1f\t-\t-\t-\t\n", th, name, mean, sd)
			default:
				fmt.Fprintf(w, "%d\t%s\t%.1f\t%.1f\t\n", th, name, mean, sd)
			}
			return nil
		}
		for _, d := range depths {
			if err := benchDepth(c, d, pps, tgs, parallel, encoder, tok, bench); err != nil {
				c.Close()
				return err
			}
		}
		c.Close()
	}
	return w.Flush()
}

// benchDepth runs the prompt (pps) and generation (tgs, for each of parallel or alone) tests
// after a context of d tokens: sequence 0 evaluates d prompt tokens (tok(0..d-1)) before each
// repetition, untimed, and with -np every other sequence shares them (Context.SeqCopy), as
// the sequences of a server share a system prompt. Names get llama-bench's " @ dN" suffix.
func benchDepth(c *llama.Context, d int, pps, tgs, parallel []int, encoder bool, tok func(int) int32,
	bench func(name string, n, steps int, setup, f func() error) error) error {
	suffix := ""
	if d > 0 {
		suffix = fmt.Sprintf(" @ d%d", d)
	}
	if d > 0 && encoder {
		return nil // an encoder has no context to grow
	}
	prompt := make([]int32, d)
	for i := range prompt {
		prompt[i] = tok(i)
	}
	// setup: the context of d tokens, shared by sequences 0..np-1
	setup := func(np int) func() error {
		return func() error {
			c.Reset()
			if d == 0 {
				return nil
			}
			if _, err := c.Eval(prompt, false); err != nil {
				return err
			}
			for s := 1; s < np; s++ {
				if err := c.SeqCopy(0, s, 0, d); err != nil {
					return err
				}
			}
			return nil
		}
	}
	for _, p := range pps {
		batch := make([]int32, p)
		for i := range batch {
			batch[i] = tok(d + i)
		}
		err := bench(fmt.Sprintf("pp%d%s", p, suffix), p, 0, setup(1), func() error {
			if encoder {
				_, err := c.Embed(batch, llama.EmbedOptions{Pooling: llama.PoolingMean})
				return err
			}
			_, err := c.Eval(batch, false)
			return err
		})
		if err != nil {
			return err
		}
	}
	if encoder {
		return nil // an encoder generates nothing
	}
	for _, n := range tgs {
		for _, np := range parallel {
			var b llama.Batch
			// n steps of np tokens each (the first, at position d, is token 1 in every
			// sequence), as llama-bench counts its tg tests: every decode is timed and counted
			err := bench(fmt.Sprintf("tg%d np%d%s", n, np, suffix), n*np, n, setup(np), func() error {
				for i := 0; i < n; i++ {
					b.Clear()
					for s := 0; s < np; s++ {
						t := int32(1)
						if i > 0 {
							t = tok(i - 1 + s)
						}
						b.Add(t, d+i, s, true)
					}
					if err := c.Decode(&b); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if len(parallel) > 0 {
			continue
		}
		err := bench(fmt.Sprintf("tg%d%s", n, suffix), n, n, setup(1), func() error {
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
			return err
		}
	}
	return nil
}
