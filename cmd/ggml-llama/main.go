//go:build cgo

// Command ggml-llama runs GGUF models of the architectures of package llama (llama, qwen2,
// qwen2moe, phi3, gemma2, gpt2, bert, nomic-bert) with the ggml Go package.
//
// Usage:
//
//	ggml-llama -p "func main() {"          (generate with the embedded default model)
//	ggml-llama generate   -m MODEL.gguf -p PROMPT [-n 128] [-t N] [-c 512] [-b 512] [--temp 0.8]
//	                      [--top-k 40] [--top-p 0.95] [--min-p 0.05] [--repeat-penalty 1.1]
//	                      [--seed N] [--backend NAME -ngl N]
//	ggml-llama logits     -m MODEL.gguf -p PROMPT -n 24 -o OUT.json
//	ggml-llama embed      -m MODEL.gguf -p PROMPT -o OUT.json
//	ggml-llama tokenize   -m MODEL.gguf -i STRINGS.json -o OUT.json
//	ggml-llama bench      -m MODEL.gguf [-p 200] [-n 64] [-t 1,2] [-r 3]
//	ggml-llama perplexity -m MODEL.gguf -f TEXT.txt [-c 256]
//	ggml-llama random     -o MODEL.gguf [--tinyllama] [--type q4_0] [-arch qwen2]
//
// Without -m every command uses the embedded default model: a small LLaMA-architecture model
// trained from scratch on the Go standard library by cmd/ggml-train, so it writes Go-like
// code. A command line that starts with a flag runs generate.
//
// logits and tokenize write the formats of shared/models (compare.py checks them against
// llama.cpp's reference outputs): logits evaluates the prompt (with BOS, special tokens on)
// in one batch with the logits of every position, then makes N greedy steps, and writes
// OUT.json with the tokens, the generated ids and the name of the side file holding every
// row of logits as float32 little-endian; tokenize reads the strings of a "llama-tok-v1" file
// (or a JSON array of strings) and writes their ids with and without BOS and their pieces.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ggml-go/ggml"
)

// commands maps a sub-command to its function.
var commands = map[string]func(args []string) error{
	"generate":   cmdGenerate,
	"logits":     cmdLogits,
	"embed":      cmdEmbed,
	"tokenize":   cmdTokenize,
	"bench":      cmdBench,
	"perplexity": cmdPerplexity,
	"random":     cmdRandom,
}

const usage = `usage: ggml-llama COMMAND [flags]
       ggml-llama [generate flags]     (generate; e.g. ggml-llama -p "func main() {")

commands:
  generate    generate text from a prompt (streams it; prints timings at the end)
  logits      write the logits and greedy continuation of a prompt (shared/models format)
  embed       write the embeddings of a text (pooled mean/cls/last and per token; llama-emb-v1)
  tokenize    tokenize strings from a JSON file (llama-tok-v1 format)
  bench       prompt-processing and generation speed, like llama-bench
  perplexity  perplexity of a model over a text file
  random      write a model with random weights (for tests and benchmarks)

Without -m the commands use the embedded default model (trained on Go code).
Run "ggml-llama COMMAND -h" for the flags of a command.
`

func main() {
	code := run(os.Args[1:])
	ggml.WriteProfile(stderr) // GGML_X_PROFILE=1 or 2: the CPU engine's time per op, at exit
	os.Exit(code)
}

// run executes the command line and returns the exit status.
func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return 0
	}
	if strings.HasPrefix(args[0], "-") {
		// flags first: generate
		args = append([]string{"generate"}, args...)
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "ggml-llama: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if err := cmd(args[1:]); err != nil {
		if errors.Is(err, errHelp) {
			return 0
		}
		if errors.Is(err, errUsage) {
			return 2
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "ggml-llama") {
			msg = "ggml-llama " + args[0] + ": " + msg
		}
		fmt.Fprintln(stderr, msg)
		return 1
	}
	return 0
}

// errUsage reports a command-line error already explained by the flag package.
var errUsage = errors.New("usage")

// errHelp reports that the usage was printed for -h/--help: exit 0 without running anything.
var errHelp = errors.New("help")

// stdout and stderr are where the commands write (tests replace them).
var (
	stdout io.Writer = os.Stdout
	stderr io.Writer = os.Stderr
)
