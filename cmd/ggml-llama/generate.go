//go:build cgo

package main

import (
	"bufio"
	"errors"
	"fmt"
	"time"

	"github.com/ggml-go/ggml/llama"
)

// sampleParams are the sampling flags (llama.cpp's command-line defaults).
type sampleParams struct {
	temp, topP, minP, repeatPenalty float32
	topK, repeatLastN               int
	seed                            uint64
}

// tokenSampler picks the next token from logits and learns the tokens chosen.
type tokenSampler interface {
	Sample(logits []float32) int32
	Accept(tok int32)
}

func cmdGenerate(args []string) error {
	fs := newFlags("generate", "-m MODEL.gguf -p PROMPT [-n 128] [flags]")
	var mf modelFlags
	mf.register(fs)
	prompt := fs.String("p", "", "prompt")
	n := fs.Int("n", 128, "tokens to generate (stops earlier at EOS or when the context is full)")
	nCtx := fs.Int("c", 512, "context size")
	nBatch := fs.Int("b", 512, "batch size for the prompt")
	echo := fs.Bool("echo", false, "print the prompt before the generated text")
	var sp sampleParams
	temp := fs.Float64("temp", 0.8, "temperature (0: greedy)")
	fs.IntVar(&sp.topK, "top-k", 40, "top-k sampling (0: off)")
	topP := fs.Float64("top-p", 0.95, "top-p sampling (1: off)")
	minP := fs.Float64("min-p", 0.05, "min-p sampling (0: off)")
	rp := fs.Float64("repeat-penalty", 1.1, "repetition penalty (1: off)")
	fs.IntVar(&sp.repeatLastN, "repeat-last-n", 64, "tokens the repetition penalty looks back over")
	fs.Uint64Var(&sp.seed, "seed", 0, "random seed (0: from the clock)")
	if err := parse(fs, args); err != nil {
		return err
	}
	sp.temp, sp.topP, sp.minP, sp.repeatPenalty = float32(*temp), float32(*topP), float32(*minP), float32(*rp)
	if sp.seed == 0 {
		sp.seed = uint64(time.Now().UnixNano())
	}
	l, err := mf.load()
	if err != nil {
		return err
	}
	defer l.Close()
	smp, err := newSampler(sp)
	if err != nil {
		return err
	}
	tokens := l.tok.Tokenize(*prompt, l.tok.AddBOSDefault(), true)
	if len(tokens) == 0 {
		return errors.New("empty prompt: give one with -p")
	}
	c, err := l.model.NewContext(llama.ContextOptions{NCtx: *nCtx, NBatch: *nBatch})
	if err != nil {
		return err
	}
	defer c.Close()
	if len(tokens) >= c.NCtx() {
		return fmt.Errorf("the prompt has %d tokens; the context holds %d (raise -c)", len(tokens), c.NCtx())
	}
	for _, t := range tokens {
		smp.Accept(t)
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if *echo {
		out.WriteString(*prompt)
	}
	t0 := time.Now()
	logits, err := c.Eval(tokens, false)
	if err != nil {
		return err
	}
	tPrompt := time.Since(t0)
	t1 := time.Now()
	generated := 0
	var piece []byte
	stop := ""
	for generated < *n {
		tok := smp.Sample(logits)
		smp.Accept(tok)
		if tok == l.tok.EOS() {
			stop = "end of text"
			break
		}
		generated++
		piece = l.tok.AppendPiece(piece[:0], tok)
		out.Write(piece)
		out.Flush()
		if generated == *n {
			break
		}
		if c.Pos() >= c.NCtx() {
			stop = "context full"
			break
		}
		if logits, err = c.Eval([]int32{tok}, false); err != nil {
			return err
		}
	}
	tGen := time.Since(t1)
	out.Flush()
	fmt.Fprintln(stderr)
	if stop != "" {
		fmt.Fprintf(stderr, "[stopped: %s]\n", stop)
	}
	fmt.Fprintf(stderr, "load: %v; prompt: %d tokens, %.1f tokens/s; generation: %d tokens, %.1f tokens/s\n",
		l.elapsed.Round(time.Millisecond), len(tokens), float64(len(tokens))/tPrompt.Seconds(),
		generated, float64(generated)/tGen.Seconds())
	return nil
}
