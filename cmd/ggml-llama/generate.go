//go:build cgo

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ggml-go/ggml/llama"
	"github.com/ggml-go/ggml/sampling"
)

// stopFlags collects repeated --stop flags.
type stopFlags []string

func (s *stopFlags) String() string     { return strings.Join(*s, ",") }
func (s *stopFlags) Set(v string) error { *s = append(*s, v); return nil }

func cmdGenerate(args []string) error {
	fs := newFlags("generate", "-m MODEL.gguf -p PROMPT [-n 128] [flags]")
	var mf modelFlags
	mf.register(fs)
	prompt := fs.String("p", "", "prompt")
	promptFile := fs.String("f", "", "read the prompt from this `FILE` (instead of -p)")
	n := fs.Int("n", 128, "tokens to generate (stops earlier at the end of text or when the context is full; -1: no limit)")
	nCtx := fs.Int("c", 512, "context size")
	nBatch := fs.Int("b", 512, "batch size for the prompt")
	var cache cacheFlags
	cache.register(fs)
	echo := fs.Bool("echo", false, "print the prompt before the generated text")
	sp := sampling.DefaultParams()
	temp := fs.Float64("temp", float64(sp.Temp), "temperature (0: greedy)")
	fs.IntVar(&sp.TopK, "top-k", sp.TopK, "top-k sampling (0: off)")
	topP := fs.Float64("top-p", float64(sp.TopP), "top-p sampling (1: off)")
	minP := fs.Float64("min-p", float64(sp.MinP), "min-p sampling (0: off)")
	tfs := fs.Float64("tfs", float64(sp.TailFreeZ), "tail-free sampling z (1: off)")
	typical := fs.Float64("typical", float64(sp.TypicalP), "locally typical sampling p (1: off)")
	rp := fs.Float64("repeat-penalty", float64(sp.RepeatPenalty), "repetition penalty (1: off)")
	fs.IntVar(&sp.RepeatLastN, "repeat-last-n", sp.RepeatLastN, "tokens the penalties look back over (0: off)")
	fp := fs.Float64("frequency-penalty", 0, "frequency penalty (0: off)")
	pp := fs.Float64("presence-penalty", 0, "presence penalty (0: off)")
	seed := fs.Int64("seed", -1, "random seed (-1: from the clock)")
	var stops stopFlags
	fs.Var(&stops, "stop", "stop when the text contains this string (repeatable)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *promptFile != "" {
		if *prompt != "" {
			return errors.New("give the prompt with -p or -f, not both")
		}
		b, err := os.ReadFile(*promptFile)
		if err != nil {
			return fmt.Errorf("-f: %w", err)
		}
		*prompt = string(b)
	}
	sp.Temp, sp.TopP, sp.MinP, sp.RepeatPenalty = float32(*temp), float32(*topP), float32(*minP), float32(*rp)
	sp.TailFreeZ, sp.TypicalP = float32(*tfs), float32(*typical)
	sp.FrequencyPenalty, sp.PresencePenalty = float32(*fp), float32(*pp)
	if *seed < 0 {
		sp.Seed = uint64(time.Now().UnixNano())
	} else {
		sp.Seed = uint64(*seed)
	}
	l, err := mf.load()
	if err != nil {
		return err
	}
	defer l.Close()
	smp, err := sampling.New(sp)
	if err != nil {
		return err
	}
	tokens := l.tok.Tokenize(*prompt, l.tok.AddBOSDefault(), true)
	if len(tokens) == 0 {
		return errors.New("empty prompt: give one with -p")
	}
	c, err := l.model.NewContext(llama.ContextOptions{NCtx: *nCtx, NBatch: *nBatch, TypeK: cache.k, TypeV: cache.v})
	if err != nil {
		return err
	}
	defer c.Close()
	if len(tokens) >= c.NCtx() {
		return fmt.Errorf("the prompt has %d tokens; the context holds %d (raise -c)", len(tokens), c.NCtx())
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if *echo {
		out.WriteString(*prompt)
	}
	if *n == 0 {
		out.WriteString("\n")
		return nil
	}
	// MaxTokens < 0: until the end of text, a stop string or the end of the context
	req := llama.Request{Tokens: tokens, Sampler: smp, MaxTokens: *n, Stop: stops, KeepInvalidUTF8: true}
	var last llama.Piece
	for p, err := range c.Generate(context.Background(), req) {
		if err != nil {
			return err
		}
		out.WriteString(p.Text)
		out.Flush()
		last = p
	}
	out.WriteString("\n")
	out.Flush()
	u := last.Usage
	switch last.Finish {
	case llama.FinishEOS:
		fmt.Fprintln(stderr, "[stopped: end of text]")
	case llama.FinishStop:
		fmt.Fprintln(stderr, "[stopped: stop string]")
	case llama.FinishLength:
		if *n < 0 || u.GeneratedTokens < *n {
			fmt.Fprintln(stderr, "[stopped: context full]")
		}
	}
	fmt.Fprintf(stderr, "load: %v; prompt: %d tokens, %.1f tokens/s; generation: %d tokens, %.1f tokens/s\n",
		l.elapsed.Round(time.Millisecond), u.PromptTokens, float64(u.PromptTokens)/u.PromptTime.Seconds(),
		u.GeneratedTokens, float64(u.GeneratedTokens)/u.GenerateTime.Seconds())
	return nil
}
