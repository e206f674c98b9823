package grammar

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/tokenizer"
)

// Test grammars of this package (written for these tests).
const (
	arithGrammar = `# integer arithmetic, accepted by go/parser.ParseExpr too
root   ::= expr
expr   ::= term ( ws [-+] ws term )*
term   ::= factor ( ws [*/] ws factor )*
factor ::= number | "(" ws expr ws ")"
number ::= "0" | [1-9] [0-9]{0,8}
ws     ::= " "?
`
	listGrammar = `root ::= "[" ( item ( ", " item )* )? "]"
item ::= [a-z]+ | "\"" [^"\n]* "\""
`
	cLikeGrammar = `# a small C-like language
root    ::= ws ( func ws )+
func    ::= type " " ident "(" params? ")" ws block
type    ::= "int" | "void" | "char"
params  ::= type " " ident ( ", " type " " ident )*
block   ::= "{" ws ( stmt ws )* "}"
stmt    ::= "return" ( " " expr )? ";"
          | type " " ident ( " = " expr )? ";"
          | "if (" expr ")" ws block ( ws "else" ws block )?
          | "while (" expr ")" ws block
          | ident " = " expr ";"
          | block
expr    ::= operand ( " " op " " operand )*
operand ::= ident | [0-9]+ | "'" [a-z] "'" | "(" expr ")" | ident "(" ( expr ( ", " expr )* )? ")"
op      ::= "+" | "-" | "*" | "/" | "==" | "<" | ">" | "&&" | "||"
ident   ::= [a-zA-Z_] [a-zA-Z_0-9]{0,15}
ws      ::= [ \n]{0,4}
`
)

// fakeVocab makes a vocabulary of n tokens: 0 unknown, 1 BOS, 2 EOS (empty pieces), the 256
// single bytes, then random strings of 2 to 8 characters drawn from ASCII letters, digits,
// JSON and C punctuation, spaces and a few multi-byte characters, some cut inside a UTF-8
// sequence so that tokens carry partial characters.
func fakeVocab(tb testing.TB, n int, seed uint64) (*Vocab, [][]byte) {
	tb.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	pieces := [][]byte{nil, nil, nil}
	for b := 0; b < 256; b++ {
		pieces = append(pieces, []byte{byte(b)})
	}
	alpha := []string{"a", "b", "c", "e", "i", "n", "o", "r", "s", "t", "x", "z", "A", "Q", "_",
		"0", "1", "2", "5", "9", " ", " ", " ", "\n", "{", "}", "[", "]", "\"", ":", ",", ".", "-", "+",
		"*", "/", "(", ")", ";", "=", "'", "\\", "é", "日", "🦙", "true", "null", "int", "return"}
	for len(pieces) < n {
		k := 1 + r.IntN(6)
		var s []byte
		for i := 0; i < k; i++ {
			s = append(s, alpha[r.IntN(len(alpha))]...)
		}
		if r.IntN(20) == 0 && len(s) > 1 {
			s = s[:len(s)-1] // may end inside a UTF-8 sequence
		}
		pieces = append(pieces, s)
	}
	v, err := NewVocab(len(pieces), func(id int32) []byte { return pieces[id] }, 2)
	if err != nil {
		tb.Fatal(err)
	}
	return v, pieces
}

// llamaVocab loads the 32,000-token LLaMA vocabulary of the shared test model, or skips.
func llamaVocab(tb testing.TB) (*Vocab, *tokenizer.Tokenizer) {
	tb.Helper()
	path := filepath.Join("..", "..", "shared", "models", "public-f16.gguf")
	if _, err := os.Stat(path); err != nil {
		tb.Skip("shared model not found:", path)
	}
	f, err := gguf.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		tb.Fatal(err)
	}
	v, err := NewVocab(tok.NumTokens(), tok.Piece, tok.EOS())
	if err != nil {
		tb.Fatal(err)
	}
	return v, tok
}

// generate samples tokens uniformly among those the constraint allows (EOS with probability
// pEnd when allowed) until EOS or maxSteps; it checks that Mask and Allows agree on every
// token, and returns the text and whether EOS ended it. After a quarter of maxSteps it
// prefers, half of the time, tokens that close a bracket, string or statement.
func generate(t *testing.T, g *Grammar, v *Vocab, r *rand.Rand, maxSteps int, pEnd float64) (string, bool) {
	t.Helper()
	c, err := NewConstraint(g, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	allowed := make([]bool, v.Size())
	var out []byte
	var cands []int32
	for step := 0; step < maxSteps; step++ {
		if err := c.Mask(allowed); err != nil {
			t.Fatal(err)
		}
		cands = cands[:0]
		eos := false
		for id, ok := range allowed {
			if ok != c.Allows(int32(id)) {
				t.Fatalf("after %q: Mask says %v for token %d %q, Allows the opposite", out, ok, id, v.Piece(int32(id)))
			}
			if ok {
				if v.IsEOG(int32(id)) {
					eos = true
				} else {
					cands = append(cands, int32(id))
				}
			}
		}
		if eos && (len(cands) == 0 || r.Float64() < pEnd) {
			if err := c.Accept(2); err != nil {
				t.Fatal(err)
			}
			return string(out), true
		}
		if len(cands) == 0 {
			t.Fatalf("after %q: the grammar allows no token and is not complete", out)
		}
		tok := cands[r.IntN(len(cands))]
		if step > maxSteps/4 && r.IntN(2) == 0 {
			// lean towards tokens that close something, so more runs reach the end
			var closing []int32
			for _, id := range cands {
				if strings.ContainsAny(string(v.Piece(id)), "})];\"") {
					closing = append(closing, id)
				}
			}
			if len(closing) > 0 {
				tok = closing[r.IntN(len(closing))]
			}
		}
		if err := c.Accept(tok); err != nil {
			t.Fatalf("after %q: Accept(%d %q) of an allowed token: %v", out, tok, v.Piece(tok), err)
		}
		out = append(out, v.Piece(tok)...)
	}
	return string(out), false
}

var _ = utf8.ValidString
