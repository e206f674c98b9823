package grammar

import (
	"bytes"
	"fmt"
	"slices"
)

// Vocab is a model vocabulary prepared for constrained sampling: every token's bytes in a
// byte trie, so that the tokens sharing a prefix are checked against the grammar once for
// that prefix and a byte the grammar rejects discards all tokens that start with it.
// Build it once per vocabulary; it is immutable and safe for concurrent use by any number
// of Constraints.
type Vocab struct {
	n      int
	eog    []bool
	nodes  []trieNode
	edges  []trieEdge
	toks   []int32  // tokens ending at each node, grouped by node
	pieces [][]byte // views into one buffer
}

type trieNode struct {
	tokStart, tokEnd   int32
	edgeStart, edgeEnd int32
}

type trieEdge struct {
	b     byte
	child int32
}

// NewVocab builds the trie for tokens 0..n-1 whose bytes piece returns (the text a token
// adds to the output, as tokenizer.Tokenizer.Piece gives it). Tokens with an empty piece
// (control tokens) are never allowed by a grammar, except the end-of-generation tokens eog,
// which are allowed exactly when the grammar is complete.
func NewVocab(n int, piece func(id int32) []byte, eog ...int32) (*Vocab, error) {
	if n <= 0 {
		return nil, fmt.Errorf("grammar: a vocabulary needs at least one token (got %d)", n)
	}
	v := &Vocab{n: n, eog: make([]bool, n), pieces: make([][]byte, n)}
	var buf []byte
	ends := make([]int, n)
	for _, e := range eog {
		if e < 0 || int(e) >= n {
			return nil, fmt.Errorf("grammar: end-of-generation token %d is outside the vocabulary of %d tokens", e, n)
		}
		v.eog[e] = true
	}
	ids := make([]int32, 0, n)
	for i := 0; i < n; i++ {
		p := piece(int32(i))
		buf = append(buf, p...)
		ends[i] = len(buf)
		if len(p) > 0 && !v.eog[i] {
			ids = append(ids, int32(i))
		}
	}
	start := 0
	for i, end := range ends {
		v.pieces[i] = buf[start:end:end]
		start = end
	}
	slices.SortFunc(ids, func(a, b int32) int {
		if c := bytes.Compare(v.pieces[a], v.pieces[b]); c != 0 {
			return c
		}
		return int(a - b)
	})
	v.nodes = append(v.nodes, trieNode{})
	v.build(0, ids, 0)
	return v, nil
}

// build fills node with the tokens ids (sorted, all sharing their first depth bytes).
func (v *Vocab) build(node int32, ids []int32, depth int) {
	i := 0
	start := int32(len(v.toks))
	for i < len(ids) && len(v.pieces[ids[i]]) == depth {
		v.toks = append(v.toks, ids[i])
		i++
	}
	v.nodes[node].tokStart, v.nodes[node].tokEnd = start, int32(len(v.toks))
	type group struct {
		b      byte
		lo, hi int
	}
	var groups []group
	for i < len(ids) {
		b := v.pieces[ids[i]][depth]
		j := i + 1
		for j < len(ids) && v.pieces[ids[j]][depth] == b {
			j++
		}
		groups = append(groups, group{b, i, j})
		i = j
	}
	es := int32(len(v.edges))
	for _, g := range groups {
		v.nodes = append(v.nodes, trieNode{})
		v.edges = append(v.edges, trieEdge{g.b, int32(len(v.nodes) - 1)})
	}
	v.nodes[node].edgeStart, v.nodes[node].edgeEnd = es, int32(len(v.edges))
	for k, g := range groups {
		v.build(v.edges[es+int32(k)].child, ids[g.lo:g.hi], depth+1)
	}
}

// Size returns the number of tokens.
func (v *Vocab) Size() int { return v.n }

// IsEOG reports whether tok ends generation.
func (v *Vocab) IsEOG(tok int32) bool { return tok >= 0 && int(tok) < v.n && v.eog[tok] }

// Piece returns the bytes of tok (nil outside the vocabulary).
func (v *Vocab) Piece(tok int32) []byte {
	if tok < 0 || int(tok) >= v.n {
		return nil
	}
	return v.pieces[tok]
}
