// Package tokenizer turns text into token ids and back the way llama.cpp of February 2025
// (commit c392e5094) does for GGUF vocabularies.
//
// Three vocabulary models are supported, named by the GGUF key tokenizer.ggml.model:
//
//   - "llama": SentencePiece-style (SPM) merging by token score, with a space added in front
//     of the text and of the text after each special token (tokenizer.ggml.add_space_prefix),
//     spaces written as "▁" (U+2581) and byte fallback to the tokens <0x00>…<0xFF>;
//   - "gpt2": byte-level BPE with merges ranked by their order and the pre-tokenizer named by
//     tokenizer.ggml.pre (see PreTokenizers: default, gpt-2, llama-bpe, qwen2, deepseek-llm,
//     deepseek-coder, deepseek-v3, falcon, mpt, starcoder, refact, tekken, gpt-4o, bloom,
//     chatglm-bpe and the names llama.cpp treats the same; a missing key means "default",
//     as in llama.cpp, and an unknown name is an error);
//   - "bert": WordPiece (WPM) of BERT models: text normalized (accents dropped, lower case),
//     cut at whitespace, punctuation and CJK characters, and each word matched greedily
//     against the longest pieces; Tokenize with addSpecial gives [CLS] ... [SEP].
//
// The flow in a few lines:
//
//	f, err := gguf.Open("model.gguf")
//	if err != nil { ... }
//	defer f.Close()
//	tok, err := tokenizer.FromGGUF(f)
//	if err != nil { ... }
//	ids := tok.Tokenize("Hello world", true, true) // [1 15043 3186] for LLaMA
//	text := tok.Decode(ids)                        // "Hello world"
//
// Tokenize(text, addSpecial, special) behaves as llama_tokenize: addSpecial adds the special
// tokens the vocabulary asks for (BOS if AddBOSDefault, EOS if AddEOSDefault, [CLS] and
// [SEP] for WPM); with special, control tokens written literally in the text (such as "<s>"
// or "<|im_end|>") become those tokens, and user-defined tokens always do. Piece is
// llama_token_to_piece with special set (control tokens give their text, a piece may be an
// incomplete UTF-8 sequence), AppendText the same with special unset (control tokens give
// nothing), Detokenize the plain concatenation of pieces, and Decode the text of a whole
// sequence (the leading space SPM adds is dropped again). IsEOG tells the tokens that end
// generation (EOS, end of turn such as "<|eot_id|>" or "<|im_end|>", end of message).
//
// A Tokenizer can also be built without a file from a Vocab (New; NewVocab gives a model's
// defaults and NewSPMVocab lays out trained pieces like LLaMA's vocabulary), and a Vocab
// can be written into a GGUF file (Vocab.SetGGUF), so a vocabulary trained in Go can be
// stored in the format llama.cpp reads. A Tokenizer is immutable after construction and safe for
// concurrent use. The package is pure Go (no cgo); it uses golang.org/x/text for the
// canonical decompositions that WPM's normalization needs.
//
// Not supported (FromGGUF returns an error that names them): the t5 (UGM) and rwkv
// vocabulary models, and the BPE pre-tokenizer chameleon.
package tokenizer
