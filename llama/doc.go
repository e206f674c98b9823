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
// Supported: GQA, rope scaling none/linear/YaRN and frequency factors, attention biases,
// sliding windows and soft-caps, mixture-of-experts layers (in groups of 8 experts beyond 8), encoders with
// mean/CLS pooling; weights in f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0 and q2_K to q6_K, an F16
// or F32 KV cache, one sequence per Context, the last layers offloaded to a second backend
// through a Scheduler. Not supported yet: several sequences in one Context.
package llama

//go:generate go run ../build/genops -stubs-only .
