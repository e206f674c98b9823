package tokenizer

import (
	"strings"
	"unicode/utf8"
)

// buildPieces computes the piece of every token once, so that Piece costs a copy.
func (t *Tokenizer) buildPieces() {
	t.pieceAt = make([]int32, len(t.vocab.Tokens)+1)
	for i, s := range t.vocab.Tokens {
		t.pieces = t.appendRawPiece(t.pieces, s, t.types[i])
		t.pieceAt[i+1] = int32(len(t.pieces))
	}
}

// appendRawPiece appends the bytes a token of text s and type typ stands for, as
// llama.cpp's token_to_piece with special set.
func (t *Tokenizer) appendRawPiece(dst []byte, s string, typ TokenType) []byte {
	switch typ {
	case TypeControl, TypeUnknown, TypeUserDefined:
		return append(dst, s...)
	case TypeByte:
		if t.vocab.Model == ModelBPE {
			return dst
		}
		if b, ok := parseByteToken(s); ok {
			return append(dst, b)
		}
		return dst // llama.cpp would abort on a malformed byte token
	case TypeNormal:
	default: // unused, undefined
		return dst
	}
	if t.vocab.Model != ModelBPE {
		return append(dst, strings.ReplaceAll(s, spmSpace, " ")...)
	}
	for i, r := range s {
		if b, ok := runeToByte[r]; ok {
			dst = append(dst, b)
			continue
		}
		// Not a byte-level character: llama.cpp writes a marker with the character's
		// UTF-8 bytes and the token's text.
		dst = append(dst, "[UNK_BYTE_0x"...)
		for _, c := range []byte(s[i : i+utf8.RuneLen(r)]) {
			dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
		}
		dst = append(dst, s...)
		dst = append(dst, ']')
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// Piece returns the bytes token id stands for, as llama_token_to_piece(lstrip 0,
// special true) of llama.cpp c392e5094: control, unknown and user-defined tokens as their
// text (such as "</s>" or "[CLS]"), SPM and WPM normal tokens with "▁" read as a space (so a
// word-initial WPM piece starts with a space), SPM byte tokens as their byte, BPE tokens
// through the reverse GPT-2 byte map; unused tokens give nothing. A piece may be an
// incomplete UTF-8 sequence (byte tokens). It panics with a *TokenIDError if id is outside
// the vocabulary.
func (t *Tokenizer) Piece(id int32) []byte {
	return t.AppendPiece(nil, id)
}

// AppendPiece appends Piece(id) to dst and returns the extended slice.
func (t *Tokenizer) AppendPiece(dst []byte, id int32) []byte {
	t.checkID(id)
	return append(dst, t.pieces[t.pieceAt[id]:t.pieceAt[id+1]]...)
}

// AppendText appends the text of token id as llama_token_to_piece with special false:
// Piece, except that control and unknown tokens give nothing. This is what a user should see
// of generated tokens.
func (t *Tokenizer) AppendText(dst []byte, id int32) []byte {
	t.checkID(id)
	if typ := t.types[id]; typ == TypeControl || typ == TypeUnknown {
		return dst
	}
	return append(dst, t.pieces[t.pieceAt[id]:t.pieceAt[id+1]]...)
}

// Detokenize returns the concatenation of the pieces of ids, with nothing removed (this is
// what a stream of generated tokens prints).
func (t *Tokenizer) Detokenize(ids []int32) []byte {
	var out []byte
	for _, id := range ids {
		out = t.AppendPiece(out, id)
	}
	return out
}

// Decode returns the text of a whole sequence: the texts of its tokens (AppendText: control
// and unknown tokens give nothing), except that the leading space of the first token after
// an optional BOS or [CLS] is dropped for SPM (the space Tokenize adds) and WPM (the space
// of a word-initial piece). Decode(Tokenize(s, addSpecial, false)) == s for ordinary text
// with SPM and BPE; WPM normalizes text (lower case, no accents, spaces around punctuation).
func (t *Tokenizer) Decode(ids []int32) []byte {
	var out []byte
	strip := t.vocab.Model == ModelWPM || t.vocab.Model == ModelSPM && t.vocab.AddSpacePrefix
	for i, id := range ids {
		n := len(out)
		out = t.AppendText(out, id)
		lead := ids[0] == t.vocab.BOS || ids[0] == t.vocab.CLS
		first := (i == 0 && !lead) || (i == 1 && lead)
		if strip && first && len(out) > n && out[n] == ' ' {
			out = append(out[:n], out[n+1:]...)
		}
	}
	return out
}
