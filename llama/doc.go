// Package llama runs LLaMA-architecture models stored in GGUF files, following the
// conventions of llama.cpp of the same date as this module's ggml (MODELS.md): Load checks
// the file and maps its weights, a Context holds a KV cache and evaluates tokens, and the
// tokenizer and sampling packages turn text into tokens and logits into tokens.
//
//	m, err := llama.Load("model.gguf", llama.Options{Threads: 4})
//	...
//	defer m.Close()
//	c, err := m.NewContext(llama.ContextOptions{}) // 512 cells, F16 KV cache
//	...
//	defer c.Close()
//	logits, err := c.Eval(tokens, false) // logits of the last token
//
// Supported: the llama architecture (GQA, rope scaling none/linear/YaRN, optional attention
// biases), weights in f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0 and q2_K to q6_K, an F16 or F32
// KV cache, one sequence per Context, the last layers offloaded to a second backend through a
// Scheduler. Not supported yet: mixture-of-experts models, other architectures, several
// sequences in one Context.
package llama

//go:generate go run ../build/genops -stubs-only .
