// Package llama runs language models stored in GGUF files, computing what llama.cpp computes
// on the same file: Load checks the file and maps its weights, a Context holds a KV cache and
// evaluates tokens (Eval) or makes embeddings (Embed), and the tokenizer and sampling packages
// turn text into tokens and logits into tokens. The architecture comes from the file's
// general.architecture (Architectures lists them: llama, qwen2, qwen2moe, phi3, gemma2, gpt2,
// bert, nomic-bert); each is one file over shared graph builders (doc/adding-an-architecture.md).
//
//	m, err := llama.Load("model.gguf", llama.Options{Threads: 4})
//	...
//	defer m.Close()
//	c, err := m.NewContext(llama.ContextOptions{}) // 512 cells, F16 KV cache
//	...
//	defer c.Close()
//	logits, err := c.Eval(tokens, false) // logits of the last token
//
// # Generation
//
// Context.Generate runs a Request (a prompt as text or tokens, sampling parameters or a
// sampling.Sampler, an optional grammar constraint, stop strings, a token limit) and returns
// an iterator of Pieces: UTF-8-safe text with its tokens, the last one with the FinishReason
// (stop, length, eos, cancelled) and the Usage. A context.Context cancels it between batches
// and steps; a prompt longer than the context is ErrPromptTooLong, never truncated.
//
//	for piece, err := range c.Generate(ctx, llama.Request{Prompt: "Once", MaxTokens: 64}) {
//		if err != nil { ... }
//		fmt.Print(piece.Text)
//	}
//
// # Many sequences
//
// A Context holds up to MaxSequences sequences: each KV cell records its position and the
// set of sequences that share it. Decode evaluates a Batch of tokens of several sequences in
// one graph (the weights are read once for all of them; the attention mask comes from the
// cells' sequences and positions), and SeqRemove, SeqCopy (a shared prefix, stored once),
// SeqKeep and SeqShift edit the cache; SeqState and SetSeqState save and restore a sequence.
// An Engine serves many goroutines from one Model with continuous batching: requests take
// slots between steps and leave as soon as they finish or are cancelled, a bounded queue
// refuses the excess with ErrQueueFull, prompts reuse the cells of a common prefix, and
// Stats/OnStep feed metrics.
//
// Supported: GQA, rope scaling none/linear/YaRN and frequency factors, attention biases,
// sliding windows and soft-caps, mixture-of-experts layers (in groups of 8 experts beyond 8), encoders with
// mean/CLS pooling; weights in f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0 and q2_K to q6_K, an F16
// or F32 KV cache, the last layers offloaded to a second backend through a Scheduler.
package llama

//go:generate go run ../tools/genops -stubs-only .
