//go:build cgo

package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/ggml-go/ggml/llama"
)

// logSoftmax returns log(softmax(v)[i]).
func logSoftmax(v []float32, i int32) float64 {
	mx := math.Inf(-1)
	for _, x := range v {
		mx = math.Max(mx, float64(x))
	}
	var s float64
	for _, x := range v {
		s += math.Exp(float64(x) - mx)
	}
	return float64(v[i]) - mx - math.Log(s)
}

func cmdPerplexity(args []string) error {
	fs := newFlags("perplexity", "-m MODEL.gguf -f TEXT.txt [-c 512]")
	var mf modelFlags
	mf.register(fs)
	file := fs.String("f", "", "text file")
	nCtx := fs.Int("c", 512, "tokens per chunk (the context size)")
	batch := fs.Int("b", 512, "batch size")
	var cache cacheFlags
	cache.register(fs)
	maxChunks := fs.Int("chunks", 0, "evaluate at most this many chunks (0: all)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("no text: give one with -f TEXT.txt")
	}
	text, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	if *nCtx < 4 {
		return fmt.Errorf("-c %d: a chunk needs at least 4 tokens", *nCtx)
	}
	l, err := mf.load()
	if err != nil {
		return err
	}
	defer l.Close()
	tokens := l.tok.Tokenize(string(text), true, false)
	nChunks := len(tokens) / *nCtx
	if *maxChunks > 0 {
		nChunks = min(nChunks, *maxChunks)
	}
	if nChunks == 0 {
		return fmt.Errorf("%s has %d tokens, fewer than one chunk of %d (lower -c)", *file, len(tokens), *nCtx)
	}
	c, err := l.model.NewContext(llama.ContextOptions{NCtx: *nCtx, NBatch: *batch, TypeK: cache.k, TypeV: cache.v})
	if err != nil {
		return err
	}
	defer c.Close()
	nv := l.model.HP.NVocab
	fmt.Fprintf(stderr, "perplexity: %d tokens, %d chunks of %d; scoring the second half of each chunk\n", len(tokens), nChunks, *nCtx)
	var nll float64
	var count int
	start := time.Now()
	for ch := 0; ch < nChunks; ch++ {
		chunk := append([]int32(nil), tokens[ch**nCtx:(ch+1)**nCtx]...)
		if bos := l.tok.BOS(); bos >= 0 {
			chunk[0] = bos // each chunk starts like a document, as llama.cpp does
		}
		c.Reset()
		logits, err := c.Eval(chunk, true)
		if err != nil {
			return err
		}
		for i := *nCtx / 2; i < *nCtx-1; i++ {
			nll -= logSoftmax(logits[i*nv:(i+1)*nv], chunk[i+1])
			count++
		}
		fmt.Fprintf(stdout, "[%d]%.4f ", ch+1, math.Exp(nll/float64(count)))
	}
	fmt.Fprintf(stdout, "\nperplexity: %.4f over %d tokens (%.1f tokens/s)\n", math.Exp(nll/float64(count)), count,
		float64(nChunks**nCtx)/time.Since(start).Seconds())
	return nil
}
