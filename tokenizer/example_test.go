package tokenizer_test

import (
	"fmt"
	"log"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/tokenizer"
)

// A tokenizer built from a file's metadata (here the test model of ../shared/models).
func ExampleFromGGUF() {
	f, err := gguf.Open("../../shared/models/public-f16.gguf")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		log.Fatal(err)
	}
	ids := tok.Tokenize("Hello world", tok.AddBOSDefault(), true)
	fmt.Println(ids, tok.NumTokens())
	fmt.Printf("%q\n", tok.Decode(ids))
	// Output would be:
	// [1 15043 3186] 32000
	// "Hello world"
}

// A small SPM vocabulary built in code, as a trained vocabulary would be.
func ExampleNew() {
	v := tokenizer.NewVocab(tokenizer.ModelSPM) // bos 1, eos 2, unk 0, add BOS
	v.Tokens = []string{"<unk>", "<s>", "</s>"}
	v.Types = []tokenizer.TokenType{tokenizer.TypeUnknown, tokenizer.TypeControl, tokenizer.TypeControl}
	for b := 0; b < 256; b++ { // SPM needs the byte tokens <0x00>…<0xFF>
		v.Tokens = append(v.Tokens, fmt.Sprintf("<0x%02X>", b))
		v.Types = append(v.Types, tokenizer.TypeByte)
	}
	for _, w := range []string{"▁", "h", "i", "hi", "▁hi"} {
		v.Tokens = append(v.Tokens, w)
		v.Types = append(v.Types, tokenizer.TypeNormal)
	}
	v.Scores = make([]float32, len(v.Tokens)) // higher merges first
	tok, err := tokenizer.New(v)
	if err != nil {
		log.Fatal(err)
	}
	ids := tok.Tokenize("hi hi!", true, false)
	for _, id := range ids {
		fmt.Printf("%d %q\n", id, tok.Piece(id))
	}
	fmt.Printf("%q\n", tok.Decode(ids))
	// Output:
	// 1 "<s>"
	// 263 " hi"
	// 263 " hi"
	// 36 "!"
	// "hi hi!"
}
