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

// A BERT (WordPiece) vocabulary built in code: word-initial pieces start with "▁", the
// others are continuations. Tokenize with addSpecial gives [CLS] ... [SEP].
func ExampleNewVocab_wordPiece() {
	v := tokenizer.NewVocab(tokenizer.ModelWPM) // [PAD] 0, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103
	for i := 0; i < 104; i++ {
		v.Tokens = append(v.Tokens, fmt.Sprintf("[unused%d]", i))
		v.Types = append(v.Types, tokenizer.TypeUnused)
	}
	for id, s := range map[int]string{0: "[PAD]", 100: "[UNK]", 101: "[CLS]", 102: "[SEP]", 103: "[MASK]"} {
		v.Tokens[id], v.Types[id] = s, tokenizer.TypeControl
	}
	for _, w := range []string{"▁hello", "▁world", "▁!", "▁token", "izer", "s"} {
		v.Tokens = append(v.Tokens, w)
		v.Types = append(v.Types, tokenizer.TypeNormal)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		log.Fatal(err)
	}
	ids := tok.Tokenize("Hello, tokenizers!", true, false)
	for _, id := range ids {
		fmt.Printf("%d %q\n", id, tok.Piece(id))
	}
	// Output:
	// 101 "[CLS]"
	// 104 " hello"
	// 100 "[UNK]"
	// 107 " token"
	// 108 "izer"
	// 109 "s"
	// 106 " !"
	// 102 "[SEP]"
}

// End of generation: a generation loop stops at a token for which IsEOG holds, and shows
// the user AppendText (control tokens as nothing) rather than Piece (their text).
func ExampleTokenizer_IsEOG() {
	v, err := tokenizer.NewSPMVocab([]string{"▁", "h", "i", "hi", "▁hi", "<|im_end|>"})
	if err != nil {
		log.Fatal(err)
	}
	tok, err := tokenizer.New(v)
	if err != nil {
		log.Fatal(err)
	}
	end, _ := tok.ID("<|im_end|>")
	ids := tok.Tokenize("hi<|im_end|>", false, true)
	var text []byte
	for _, id := range ids {
		if tok.IsEOG(id) {
			break
		}
		text = tok.AppendText(text, id)
	}
	fmt.Printf("%v %q eog=%v piece=%q\n", ids, text, tok.IsEOG(end), tok.Piece(end))
	// Output:
	// [263 264] " hi" eog=true piece="<|im_end|>"
}
