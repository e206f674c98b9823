//go:build cgo

package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/llama"
)

// parseType returns the gguf tensor type called name ("q4_0", "f16", ...).
func parseType(name string) (gguf.TensorType, error) {
	for t := gguf.TensorType(0); t < 32; t++ {
		if t.Valid() && strings.EqualFold(t.String(), name) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown tensor type %q (f32, f16, q4_0, q8_0, q4_K, ...)", name)
}

func cmdRandom(args []string) error {
	fs := newFlags("random", "-o MODEL.gguf [-arch llama] [--tinyllama] [--type q4_0] [--embd 128 --layers 3 --heads 4 --heads-kv 4 --ff 352 --vocab 32000]")
	out := fs.String("o", "", "output model file")
	tiny := fs.Bool("tinyllama", false, "TinyLlama-1.1B shape (n_embd 2048, 22 layers, 32 heads, 4 KV heads, n_ff 5632, vocab 32000)")
	typ := fs.String("type", "f16", "type of the matrices")
	outType := fs.String("output-type", "", "type of output.weight (default: q6_K for --tinyllama, else -type)")
	c := llama.RandomConfig{}
	fs.IntVar(&c.NEmbd, "embd", 128, "n_embd")
	fs.IntVar(&c.NLayer, "layers", 3, "layers")
	fs.IntVar(&c.NHead, "heads", 4, "attention heads")
	fs.IntVar(&c.NHeadKV, "heads-kv", 0, "KV heads (0: heads)")
	fs.IntVar(&c.NFF, "ff", 352, "feed-forward width")
	fs.IntVar(&c.NVocab, "vocab", 32000, "vocabulary size (at least 300)")
	seed := fs.Uint64("seed", 1, "random seed")
	fs.StringVar(&c.Arch, "arch", "llama", "architecture: "+strings.Join(llama.Architectures(), ", "))
	fs.IntVar(&c.NExpert, "experts", 0, "llama: number of experts (a Mixtral-style model; 2 used per token)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("no output: give one with -o MODEL.gguf")
	}
	t, err := parseType(*typ)
	if err != nil {
		return err
	}
	if *tiny {
		arch, nExp := c.Arch, c.NExpert
		c = llama.TinyLlamaConfig(t)
		c.Arch, c.NExpert = arch, nExp
	}
	c.Type, c.Seed = t, *seed
	if *outType != "" {
		if c.OutputType, err = parseType(*outType); err != nil {
			return err
		}
	}
	return llama.WriteRandomModel(*out, c)
}
