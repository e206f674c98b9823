// Package tokenizer turns text into LLaMA-family token ids and back, the way llama.cpp of
// January 2024 (tag b1882, the date of this module's ggml) does for GGUF vocabularies.
//
// Two vocabulary models are supported, named by the GGUF key tokenizer.ggml.model:
//
//   - "llama": SentencePiece-style (SPM) merging by token score, with a leading space added to
//     the text, spaces written as "▁" (U+2581) and byte fallback to the tokens <0x00>…<0xFF>;
//   - "gpt2": byte-level BPE with the GPT-2 pre-tokenizer and merges ranked by their order.
//
// The flow in a few lines:
//
//	f, err := gguf.Open("model.gguf")
//	if err != nil { ... }
//	defer f.Close()
//	tok, err := tokenizer.FromGGUF(f)
//	if err != nil { ... }
//	ids := tok.Tokenize("Hello world", tok.AddBOSDefault(), true) // [1 15043 3186]
//	text := tok.Decode(ids)                                       // "Hello world"
//
// Tokenize(text, addBOS, special) behaves as llama_tokenize: with special set, control and
// byte tokens written literally in the text (such as "<s>") become those tokens. Piece is
// llama_token_to_piece (the bytes of one token, possibly an incomplete UTF-8 sequence),
// Detokenize the plain concatenation of pieces, and Decode the text of a whole sequence (the
// leading space the SPM tokenizer adds is dropped again).
//
// A Tokenizer can also be built without a file from a Vocab (New; NewVocab gives a model's
// defaults and NewSPMVocab lays out trained pieces like LLaMA's vocabulary), and a Vocab
// can be written into a GGUF file (Vocab.SetGGUF), so a vocabulary trained in Go can be
// stored in the format llama.cpp reads. A Tokenizer is immutable after construction and safe for
// concurrent use. The package is pure Go (no cgo).
package tokenizer
