//go:build cgo

package train_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/llama"
	"github.com/ggml-go/ggml/tokenizer"
	"github.com/ggml-go/ggml/train"
)

// Train a tiny model on a few lines of Go, save it quantized and run it with the llama
// package. cmd/ggml-train does the same at scale, on the Go standard library.
func Example() {
	var docs []train.Document
	for i := 0; i < 30; i++ {
		docs = append(docs, train.Document{Name: fmt.Sprint(i), Text: strings.Repeat("func add(x, y int) int {\n\treturn x + y\n}\n\n", 4)})
	}
	vocab, err := train.TrainTokenizer(train.Texts(docs), train.TokenizerOptions{VocabSize: 300, MinCharCount: 1})
	if err != nil {
		log.Fatal(err)
	}
	tok, err := tokenizer.New(vocab)
	if err != nil {
		log.Fatal(err)
	}
	data := train.TokenizeDocuments(tok, docs, 2)

	m, err := train.NewModel(train.Config{NEmbd: 32, NLayer: 1, NHead: 2, NCtx: 16}, vocab, 1)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	t, err := train.NewTrainer(m, data, train.Options{Steps: 40, Batch: 4, LearningRate: 1e-2, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()
	before, _ := t.Evaluate(data, 2)
	if err := t.Train(40); err != nil {
		log.Fatal(err)
	}
	after, _ := t.Evaluate(data, 2)
	fmt.Printf("vocabulary: %d tokens; loss fell below half: %v\n", len(vocab.Tokens), after < before/2)

	dir, err := os.MkdirTemp("", "train-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")
	if err := m.Save(path, train.SaveOptions{Type: gguf.TypeQ8_0}); err != nil {
		log.Fatal(err)
	}
	lm, err := llama.Load(path, llama.Options{Threads: 2})
	if err != nil {
		log.Fatal(err)
	}
	defer lm.Close()
	fmt.Println(lm.Description(), "with", lm.HP.NVocab, "tokens")
	// Output:
	// vocabulary: 300 tokens; loss fell below half: true
	// llama ?B Q8_0 with 300 tokens
}
