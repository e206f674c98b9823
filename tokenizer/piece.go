package tokenizer

import "unicode/utf8"

// unknownPiece is the text of the unknown token ("▅", U+2585).
const unknownPiece = "\u2585"

// buildPieces computes the piece of every token once, so that Piece costs a copy.
func (t *Tokenizer) buildPieces() {
	t.pieceAt = make([]int32, len(t.vocab.Tokens)+1)
	for i, s := range t.vocab.Tokens {
		t.pieces = t.appendRawPiece(t.pieces, s, t.types[i])
		t.pieceAt[i+1] = int32(len(t.pieces))
	}
}

// appendRawPiece appends the bytes a token of text s and type typ stands for.
func (t *Tokenizer) appendRawPiece(dst []byte, s string, typ TokenType) []byte {
	switch typ {
	case TypeUnknown:
		return append(dst, unknownPiece...)
	case TypeByte:
		if b, ok := parseByteToken(s); ok {
			return append(dst, b)
		}
		if t.vocab.Model == ModelSPM {
			return dst
		}
	case TypeNormal, TypeUserDefined:
	default: // control, unused, undefined
		return dst
	}
	if t.vocab.Model == ModelSPM {
		for i := 0; i < len(s); {
			if len(s)-i >= len(spmSpace) && s[i:i+len(spmSpace)] == spmSpace {
				dst = append(dst, ' ')
				i += len(spmSpace)
				continue
			}
			dst = append(dst, s[i])
			i++
		}
		return dst
	}
	for _, r := range s {
		if b, ok := runeToByte[r]; ok {
			dst = append(dst, b)
		} else {
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

// Piece returns the bytes token id stands for, as llama_token_to_piece of llama.cpp b1882:
// SPM normal tokens with "▁" read as a space, byte tokens as their byte, the unknown token
// as "▅" and control and unused tokens as nothing; BPE tokens through the reverse GPT-2
// byte map. User-defined tokens give their text. A piece may be an incomplete UTF-8
// sequence (byte tokens). It panics with a *TokenIDError if id is outside the vocabulary.
func (t *Tokenizer) Piece(id int32) []byte {
	return t.AppendPiece(nil, id)
}

// AppendPiece appends Piece(id) to dst and returns the extended slice.
func (t *Tokenizer) AppendPiece(dst []byte, id int32) []byte {
	t.checkID(id)
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

// Decode returns the text of a whole sequence, as llama.cpp's detokenizer of that date
// gives it: Detokenize, except that for SPM the leading space of the first token after an
// optional BOS is dropped (the space Tokenize adds). Decode(Tokenize(s, bos, false)) == s
// for ordinary text.
func (t *Tokenizer) Decode(ids []int32) []byte {
	var out []byte
	for i, id := range ids {
		n := len(out)
		out = t.AppendPiece(out, id)
		first := (i == 0 && id != t.vocab.BOS) || (i == 1 && ids[0] == t.vocab.BOS)
		if t.vocab.Model == ModelSPM && first && len(out) > n && out[n] == ' ' {
			out = append(out[:n], out[n+1:]...)
		}
	}
	return out
}
