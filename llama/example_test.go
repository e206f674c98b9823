//go:build cgo

package llama_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

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
