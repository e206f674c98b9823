//go:build cgo

package llama_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/ggml-go/ggml/llama"
	"github.com/ggml-go/ggml/sampling"
	"github.com/ggml-go/ggml/tokenizer"
)

// Load a model, tokenize a prompt and generate a few tokens greedily. The model here has
// random weights (written to a temporary file so that the example runs anywhere); a real one
// is loaded the same way.
func Example() {
	dir, err := os.MkdirTemp("", "llama-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "random.gguf")
	if err := llama.WriteRandomModel(path, llama.RandomConfig{Seed: 1}); err != nil {
		log.Fatal(err)
	}

	m, err := llama.Load(path, llama.Options{Threads: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	tok, err := tokenizer.FromGGUF(m.GGUF())
	if err != nil {
		log.Fatal(err)
	}
	c, err := m.NewContext(llama.ContextOptions{NCtx: 128})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	prompt := tok.Tokenize("Hi there", true, true)
	fmt.Println("prompt:", prompt)
	logits, err := c.Eval(prompt, false)
	if err != nil {
		log.Fatal(err)
	}
	var out []int32
	for len(out) < 8 {
		next := sampling.Greedy(logits) // or Sample of a sampling.Sampler
		if next == tok.EOS() {
			break
		}
		out = append(out, next)
		if logits, err = c.Eval([]int32{next}, false); err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println("tokens in the context:", c.Pos())
	fmt.Println("text:", len(tok.Detokenize(out)) > 0)
	// Output:
	// prompt: [1 259 75 276 299 274 268 294 268]
	// tokens in the context: 17
	// text: true
}

// Embeddings of a text with an encoder (a BERT-architecture model with random weights here):
// one mean-pooled, L2-normalized vector per input.
func ExampleContext_EmbedBatch() {
	dir, err := os.MkdirTemp("", "llama-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "bert.gguf")
	if err := llama.WriteRandomModel(path, llama.RandomConfig{Arch: "bert", Seed: 1}); err != nil {
		log.Fatal(err)
	}
	m, err := llama.Load(path, llama.Options{Threads: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	c, err := m.NewContext(llama.ContextOptions{NCtx: 128})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	inputs := [][]int32{{1, 40, 41, 2}, {1, 50, 2}} // token ids, e.g. from a tokenizer
	vecs, err := c.EmbedBatch(inputs, llama.EmbedOptions{Pooling: llama.PoolingMean, Normalize: true})
	if err != nil {
		log.Fatal(err)
	}
	var dot float64
	for i := range vecs[0] {
		dot += float64(vecs[0][i]) * float64(vecs[0][i])
	}
	fmt.Println("model pooling:", m.HP.Pooling, "vectors:", len(vecs), "size:", len(vecs[0]))
	fmt.Printf("norm: %.3f\n", dot)
	// Output:
	// model pooling: mean vectors: 2 size: 64
	// norm: 1.000
}

// Generate streams the pieces of a generation with a token limit and a stop string; the last
// piece says why it ended and counts the tokens.
func ExampleContext_Generate() {
	dir, err := os.MkdirTemp("", "llama-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "random.gguf")
	if err := llama.WriteRandomModel(path, llama.RandomConfig{Seed: 1}); err != nil {
		log.Fatal(err)
	}
	m, err := llama.Load(path, llama.Options{Threads: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	c, err := m.NewContext(llama.ContextOptions{NCtx: 128})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := llama.Request{
		Prompt:    "Hi there",
		Sampling:  sampling.GreedyParams(), // or sampling.DefaultParams() with a Seed
		MaxTokens: 8,
		Stop:      []string{"\n\n"},
	}
	var text strings.Builder
	for piece, err := range c.Generate(ctx, req) {
		if err != nil {
			log.Fatal(err)
		}
		text.WriteString(piece.Text) // stream it to the user as it comes
		if piece.Finish != "" {
			fmt.Printf("finished: %s after %d tokens (prompt: %d tokens)\n", piece.Finish,
				piece.Usage.GeneratedTokens, piece.Usage.PromptTokens)
		}
	}
	// Output:
	// finished: length after 8 tokens (prompt: 9 tokens)
}

// An Engine serves many goroutines from one model: their requests are decoded together,
// one graph per step for all of them.
func ExampleEngine() {
	dir, err := os.MkdirTemp("", "llama-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "random.gguf")
	if err := llama.WriteRandomModel(path, llama.RandomConfig{Seed: 1}); err != nil {
		log.Fatal(err)
	}
	m, err := llama.Load(path, llama.Options{Threads: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	e, err := llama.NewEngine(m, llama.EngineOptions{Parallel: 4, ContextSize: 128})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close() // before m.Close (deferred calls run last-in first-out)

	var wg sync.WaitGroup
	results := make([]string, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := llama.Request{Prompt: fmt.Sprintf("Question %d:", i), MaxTokens: 5}
			for piece, err := range e.Generate(context.Background(), req) {
				if errors.Is(err, llama.ErrQueueFull) {
					return // a server answers 429 Too Many Requests
				}
				if err != nil {
					log.Print(err)
					return
				}
				if piece.Finish != "" {
					results[i] = fmt.Sprintf("request %d: %s after %d tokens", i, piece.Finish, piece.Usage.GeneratedTokens)
				}
			}
		}()
	}
	wg.Wait()
	for _, r := range results {
		fmt.Println(r)
	}
	fmt.Println("requests:", e.Stats().Finished)
	// Output:
	// request 0: length after 5 tokens
	// request 1: length after 5 tokens
	// request 2: length after 5 tokens
	// request 3: length after 5 tokens
	// requests: 4
}

// A quantized KV cache (llama.cpp's -ctk q8_0 -ctv q8_0) holds the same cells in about half
// the memory of the default F16 cache.
func ExampleCacheType() {
	dir, err := os.MkdirTemp("", "llama-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "random.gguf")
	// head size 128 / 4 = 32: a whole q8_0 block per head
	if err := llama.WriteRandomModel(path, llama.RandomConfig{Seed: 1, NEmbd: 128, NHead: 4}); err != nil {
		log.Fatal(err)
	}
	m, err := llama.Load(path, llama.Options{Threads: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	for _, types := range [][2]string{{"f16", "f16"}, {"q8_0", "f16"}, {"q8_0", "q8_0"}} {
		var opt llama.ContextOptions
		opt.NCtx = 1024
		if err := opt.TypeK.Set(types[0]); err != nil { // as a -ctk flag would
			log.Fatal(err)
		}
		if err := opt.TypeV.Set(types[1]); err != nil {
			log.Fatal(err)
		}
		c, err := m.NewContext(opt)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("K %s, V %s: %d KiB\n", opt.TypeK, opt.TypeV, c.KVBytes()>>10)
		c.Close()
	}
	// Output:
	// K f16, V f16: 1024 KiB
	// K q8_0, V f16: 784 KiB
	// K q8_0, V q8_0: 544 KiB
}
