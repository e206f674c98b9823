// Package train trains LLaMA-architecture language models from scratch with the ggml
// package's autodiff and Adam optimizer, and writes them as llama GGUF files that the llama
// package (and llama.cpp) run.
//
// The pieces, in the order a training run uses them:
//
//	corpus, err := train.LoadGoCorpus("", train.CorpusOptions{})      // Go sources, held-out packages
//	vocab, err := train.TrainTokenizer(train.Texts(corpus.Train), train.TokenizerOptions{VocabSize: 2048})
//	tok, err := tokenizer.New(vocab)
//	data := train.TokenizeDocuments(tok, corpus.Train, 2)
//	m, err := train.NewModel(train.DefaultConfig, vocab, 1)           // random weights
//	t, err := train.NewTrainer(m, data, train.Options{Steps: 1000})
//	err = t.Train(100)                                                 // in chunks...
//	err = t.SaveCheckpoint("out")                                      // ...with checkpoints
//	err = m.Save("model.gguf", train.SaveOptions{Type: gguf.TypeQ8_0})
//
// The tokenizer is byte-pair encoding learned over the corpus' characters and stored as an
// SPM (llama) vocabulary with byte tokens, so any text round-trips. The training graph is
// the runner's forward pass (RMS norm, RoPE mode 0, causal softmax attention, SwiGLU,
// untied output) over a batch of windows, with a mean cross-entropy loss. Training is
// deterministic for a given seed and thread count, and a run resumed from a checkpoint
// continues exactly as an uninterrupted one would. The command cmd/ggml-train drives it all.
//
// Without cgo only the pure-Go parts (corpus, tokenizer training, schedule, loss curve) are
// available.
package train

//go:generate go run ../tools/genops -stubs-only .
