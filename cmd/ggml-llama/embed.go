//go:build cgo

package main

import (
	"encoding/hex"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/llama"
)

// pooledOutput is one pooled vector of the embed command's JSON.
type pooledOutput struct {
	Embedding []float32 `json:"embedding"` // L2-normalized
	Raw       []float32 `json:"raw"`
	RawNorm   float64   `json:"raw_norm"`
}

// embedOutput is the JSON written by the embed command (the keys of "llama-emb-v1").
type embedOutput struct {
	Format              string                  `json:"format"`
	Runner              string                  `json:"runner"`
	Model               string                  `json:"model"`
	ModelDesc           string                  `json:"model_desc"`
	Arch                string                  `json:"arch"`
	Prompt              string                  `json:"prompt"`
	PromptHex           string                  `json:"prompt_hex"`
	AddSpecial          bool                    `json:"add_special"`
	Special             bool                    `json:"special"`
	NEmbd               int                     `json:"n_embd"`
	NCtx                int                     `json:"n_ctx"`
	NThreads            int                     `json:"n_threads"`
	ModelPoolingType    string                  `json:"model_pooling_type"`
	Tokens              []int32                 `json:"tokens"`
	NTokens             int                     `json:"n_tokens"`
	Pooled              map[string]pooledOutput `json:"pooled"`
	TokenEmbdFile       string                  `json:"token_embd_file"`
	TokenEmbdRows       int                     `json:"token_embd_rows"`
	TokenEmbdDtype      string                  `json:"token_embd_dtype"`
	TokenEmbdNormalized bool                    `json:"token_embd_normalized"`
}

func cmdEmbed(args []string) error {
	fs := newFlags("embed", "-m MODEL.gguf -p PROMPT -o OUT.json")
	var mf modelFlags
	mf.register(fs)
	prompt := fs.String("p", "", "text to embed (tokenized with the model's special tokens, e.g. [CLS] ... [SEP])")
	out := fs.String("o", "", "output JSON; the per-token hidden states go to OUT's name with .tokembd.bin")
	nCtx := fs.Int("c", 512, "context size")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("no output: give one with -o OUT.json")
	}
	l, err := mf.load()
	if err != nil {
		return err
	}
	defer l.Close()
	tokens := l.promptTokens(*prompt)
	if len(tokens) == 0 {
		return errors.New("the prompt gives no tokens")
	}
	c, err := l.model.NewContext(llama.ContextOptions{NCtx: *nCtx, NBatch: *nCtx})
	if err != nil {
		return err
	}
	defer c.Close()
	rows, err := c.Embed(tokens, llama.EmbedOptions{Pooling: llama.PoolingNone})
	if err != nil {
		return err
	}
	h := l.model.HP
	o := embedOutput{
		Format: "llama-emb-v1", Runner: "ggml-go ggml-llama", Model: filepath.Base(mf.path),
		ModelDesc: l.model.Description(), Arch: h.Arch, Prompt: *prompt, PromptHex: hex.EncodeToString([]byte(*prompt)),
		AddSpecial: true, Special: true, NEmbd: h.NEmbd, NCtx: c.NCtx(), NThreads: mf.threads,
		ModelPoolingType: h.Pooling.String(), Tokens: tokens, NTokens: len(tokens), Pooled: map[string]pooledOutput{},
		TokenEmbdRows: len(rows), TokenEmbdDtype: "float32-le",
	}
	for _, p := range []llama.Pooling{llama.PoolingMean, llama.PoolingCLS, llama.PoolingLast} {
		v, err := c.Embed(tokens, llama.EmbedOptions{Pooling: p})
		if err != nil {
			return err
		}
		o.Pooled[p.String()] = pooled(v[0])
	}
	o.TokenEmbdFile = strings.TrimSuffix(filepath.Base(*out), ".json") + ".tokembd.bin"
	bin := make([]byte, 0, len(rows)*h.NEmbd*4)
	for _, r := range rows {
		bin = append(bin, ggml.Float32Bytes(r)...)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(*out), o.TokenEmbdFile), bin, 0o644); err != nil {
		return err
	}
	return writeJSON(*out, o)
}

// pooled returns a raw vector with its norm and its normalized copy.
func pooled(raw []float32) pooledOutput {
	var s float64
	for _, x := range raw {
		s += float64(x) * float64(x)
	}
	n := math.Sqrt(s)
	emb := make([]float32, len(raw))
	for i, x := range raw {
		if n > 0 {
			emb[i] = float32(float64(x) / n)
		}
	}
	return pooledOutput{Embedding: emb, Raw: raw, RawNorm: n}
}
