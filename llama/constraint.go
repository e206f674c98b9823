//go:build cgo

package llama

import "github.com/ggml-go/ggml/grammar"

// GrammarVocab returns the model's vocabulary for grammar constraints (the text of every
// token, control tokens having none, and the end-of-generation tokens), built on the first
// call (tens of milliseconds for 32,000 tokens) and shared by every constraint after it.
// Safe for concurrent use.
func (m *Model) GrammarVocab() (*grammar.Vocab, error) {
	m.gvOnce.Do(func() {
		tok, err := m.Tokenizer()
		if err != nil {
			m.gvErr = err
			return
		}
		m.gv, m.gvErr = grammar.NewVocab(tok.NumTokens(), func(id int32) []byte { return tok.AppendText(nil, id) }, tok.EOGTokens()...)
	})
	return m.gv, m.gvErr
}

// NewConstraint returns a constraint that keeps a generation within g (grammar.Parse for
// GBNF, grammar.FromJSONSchema for a JSON schema, grammar.JSONObject() for JSON mode), for
// Request.Constraint. A constraint serves one generation at a time: make one per request.
func (m *Model) NewConstraint(g *grammar.Grammar) (*grammar.Constraint, error) {
	v, err := m.GrammarVocab()
	if err != nil {
		return nil, err
	}
	return grammar.NewConstraint(g, v, grammar.Options{})
}
