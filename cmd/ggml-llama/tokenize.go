//go:build cgo

package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/ggml-go/ggml/tokenizer"
)

type tokItem struct {
	Text      string  `json:"text"`
	TextHex   string  `json:"text_hex"`
	IDsBOS    []int32 `json:"ids_bos"`
	IDsNoBOS  []int32 `json:"ids_nobos"`
	Pieces    string  `json:"pieces"`
	PiecesHex string  `json:"pieces_hex"`
}

type tokFile struct {
	Format  string    `json:"format"`
	Runner  string    `json:"runner,omitempty"`
	Model   string    `json:"model"`
	Special bool      `json:"special"`
	Items   []tokItem `json:"items"`
}

// readStrings reads the texts of a "llama-tok-v1" file or a JSON array of strings.
func readStrings(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var arr []string
	if json.Unmarshal(b, &arr) == nil {
		return arr, nil
	}
	var f struct {
		Items []struct {
			Text *string `json:"text"`
		} `json:"items"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: neither a JSON array of strings nor a llama-tok-v1 file: %w", path, err)
	}
	for i, it := range f.Items {
		if it.Text == nil {
			return nil, fmt.Errorf("%s: items[%d] has no text", path, i)
		}
		arr = append(arr, *it.Text)
	}
	return arr, nil
}

func cmdTokenize(args []string) error {
	fs := newFlags("tokenize", "-m MODEL.gguf -i STRINGS.json -o OUT.json")
	var mf modelFlags
	mf.register(fs)
	in := fs.String("i", "", `input: a "llama-tok-v1" JSON file (items[].text) or a JSON array of strings`)
	out := fs.String("o", "", "output JSON (llama-tok-v1)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *in == "" || *out == "" {
		return errors.New("give the input with -i STRINGS.json and the output with -o OUT.json")
	}
	texts, err := readStrings(*in)
	if err != nil {
		return err
	}
	tok, done, err := mf.loadTokenizer()
	if err != nil {
		return err
	}
	defer done()
	l := struct{ tok *tokenizer.Tokenizer }{tok}
	res := tokFile{Format: "llama-tok-v1", Runner: "ggml-go ggml-llama", Model: filepath.Base(mf.path), Special: true, Items: []tokItem{}}
	for _, s := range texts {
		it := tokItem{Text: s, TextHex: hex.EncodeToString([]byte(s)),
			IDsBOS: l.tok.Tokenize(s, true, true), IDsNoBOS: l.tok.Tokenize(s, false, true)}
		var p []byte
		for _, id := range it.IDsNoBOS {
			p = l.tok.AppendPiece(p, id)
		}
		it.Pieces, it.PiecesHex = string(p), hex.EncodeToString(p)
		if it.IDsNoBOS == nil {
			it.IDsNoBOS = []int32{}
		}
		res.Items = append(res.Items, it)
	}
	return writeJSON(*out, res)
}

func isValidUTF8(b []byte) bool { return utf8.Valid(b) }
