//go:build cgo

package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/llama"
)

// logitsOutput is the JSON written by the logits command (the keys of "llama-ref-v1").
type logitsOutput struct {
	Format           string  `json:"format"`
	Runner           string  `json:"runner"`
	Model            string  `json:"model"`
	ModelDesc        string  `json:"model_desc"`
	Prompt           string  `json:"prompt"`
	PromptHex        string  `json:"prompt_hex"`
	AddBOS           bool    `json:"add_bos"`
	Special          bool    `json:"special"`
	NVocab           int     `json:"n_vocab"`
	NCtx             int     `json:"n_ctx"`
	NThreads         int     `json:"n_threads"`
	KVType           string  `json:"kv_type"`
	Tokens           []int32 `json:"tokens"`
	NPrompt          int     `json:"n_prompt"`
	NGen             int     `json:"n_gen"`
	Generated        []int32 `json:"generated"`
	GeneratedText    string  `json:"generated_text"`
	GeneratedTextHex string  `json:"generated_text_hex"`
	GeneratedValid   bool    `json:"generated_text_valid_utf8"`
	LogitsFile       string  `json:"logits_file"`
	LogitsDtype      string  `json:"logits_dtype"`
	NRows            int     `json:"n_rows"`
	BinRows          []int   `json:"bin_rows"` // null: every row
}

func cmdLogits(args []string) error {
	fs := newFlags("logits", "-m MODEL.gguf -p PROMPT -n 24 -o OUT.json")
	var mf modelFlags
	mf.register(fs)
	prompt := fs.String("p", "", "prompt (tokenized with BOS and special tokens; may be empty)")
	n := fs.Int("n", 24, "greedy steps after the prompt")
	out := fs.String("o", "", "output JSON; the logits go to OUT's name with .logits.bin")
	nCtx := fs.Int("c", 512, "context size")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("no output: give one with -o OUT.json")
	}
	if *n < 0 {
		return fmt.Errorf("-n %d: the number of steps cannot be negative", *n)
	}
	l, err := mf.load()
	if err != nil {
		return err
	}
	defer l.Close()
	tokens := l.promptTokens(*prompt)
	if len(tokens) == 0 {
		return errors.New("the prompt gives no tokens and the model has no BOS token")
	}
	c, err := l.model.NewContext(llama.ContextOptions{NCtx: *nCtx, NBatch: *nCtx})
	if err != nil {
		return err
	}
	defer c.Close()
	if len(tokens)+*n > c.NCtx() {
		return fmt.Errorf("%d prompt tokens and %d steps do not fit in a context of %d (raise -c)", len(tokens), *n, c.NCtx())
	}
	run, err := c.RunGreedy(tokens, *n)
	if err != nil {
		return err
	}
	binName := strings.TrimSuffix(filepath.Base(*out), ".json") + ".logits.bin"
	bin := make([]byte, 0, len(run.Rows)*l.model.HP.NVocab*4)
	for _, row := range run.Rows {
		bin = append(bin, ggml.Float32Bytes(row)...)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(*out), binName), bin, 0o644); err != nil {
		return err
	}
	var text []byte
	for _, id := range run.Generated {
		if l.tok != nil {
			text = l.tok.AppendPiece(text, id)
		}
	}
	o := logitsOutput{
		Format: "llama-ref-v1", Runner: "ggml-go ggml-llama", Model: filepath.Base(mf.path),
		ModelDesc: l.model.Description(), Prompt: *prompt, PromptHex: hex.EncodeToString([]byte(*prompt)),
		AddBOS: true, Special: true, NVocab: l.model.HP.NVocab, NCtx: c.NCtx(), NThreads: mf.threads,
		KVType: "f16", Tokens: tokens, NPrompt: len(tokens), NGen: *n, Generated: run.Generated,
		GeneratedText: string(text), GeneratedTextHex: hex.EncodeToString(text),
		GeneratedValid: isValidUTF8(text), LogitsFile: binName, LogitsDtype: "float32-le", NRows: len(run.Rows),
	}
	if o.Generated == nil {
		o.Generated = []int32{}
	}
	return writeJSON(*out, o)
}

// writeJSON writes v to path as indented JSON.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
