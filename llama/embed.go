//go:build cgo

package llama

import (
	"errors"
	"fmt"
	"math"
)

// EmbedOptions configures Context.Embed.
type EmbedOptions struct {
	// Pooling makes one vector of the sequence's hidden states (PoolingDefault: the model's
	// <arch>.pooling_type, which is PoolingNone when the file has none). PoolingNone returns
	// one vector per token.
	Pooling Pooling
	// Normalize scales every returned vector to unit L2 norm.
	Normalize bool
}

// Embed evaluates tokens as a new sequence (it Resets the context first, and leaves the
// tokens in it) and returns embeddings made from the final hidden states (after the output
// norm for decoders): one vector of n_embd values with a pooling, else one per token. Encoder
// models (bert, nomic-bert) attend over the whole input, which must then fit in one batch
// (NBatch); decoders are evaluated in batches like Eval.
func (c *Context) Embed(tokens []int32, opt EmbedOptions) ([][]float32, error) {
	if err := c.checkOpen("Context.Embed"); err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, errors.New("llama: Embed needs at least one token")
	}
	pool := opt.Pooling
	if pool == PoolingDefault {
		pool = c.m.HP.Pooling
	}
	if pool < PoolingNone || pool > PoolingLast {
		return nil, fmt.Errorf("llama: unknown pooling %d (PoolingNone, PoolingMean, PoolingCLS or PoolingLast)", int(pool))
	}
	if len(tokens) > c.kv.nCtx {
		return nil, fmt.Errorf("%w: %d tokens exceed the %d cells (create the Context with a larger NCtx)", ErrContextFull, len(tokens), c.kv.nCtx)
	}
	if c.m.arch.encoder && len(tokens) > c.nBatch {
		return nil, fmt.Errorf("llama: %s attends over the whole input at once: %d tokens exceed a batch of %d (raise NBatch)", c.m.HP.Arch, len(tokens), c.nBatch)
	}
	for i, t := range tokens {
		if t < 0 || int(t) >= c.m.HP.NVocab {
			return nil, fmt.Errorf("llama: token %d (at index %d) is outside the vocabulary of %d tokens", t, i, c.m.HP.NVocab)
		}
	}
	c.Reset()
	ne := c.m.HP.NEmbd
	hidden := make([]float32, 0, len(tokens)*ne)
	for start := 0; start < len(tokens); start += c.nBatch {
		rows, err := c.evalHidden(tokens[start:min(len(tokens), start+c.nBatch)])
		if err != nil {
			return nil, err
		}
		hidden = append(hidden, rows...)
	}
	var out [][]float32
	switch pool {
	case PoolingNone:
		for i := range tokens {
			out = append(out, hidden[i*ne:(i+1)*ne])
		}
	case PoolingCLS:
		out = [][]float32{hidden[:ne]}
	case PoolingLast:
		out = [][]float32{hidden[len(hidden)-ne:]}
	case PoolingMean:
		sum := make([]float64, ne)
		for i := range tokens {
			for j, v := range hidden[i*ne : (i+1)*ne] {
				sum[j] += float64(v)
			}
		}
		mean := make([]float32, ne)
		for j := range mean {
			mean[j] = float32(sum[j] / float64(len(tokens)))
		}
		out = [][]float32{mean}
	}
	if opt.Normalize {
		for _, v := range out {
			normalizeL2(v)
		}
	}
	return out, nil
}

// EmbedBatch returns one pooled embedding per input (each evaluated as its own sequence, as
// Embed does); the pooling must not be PoolingNone.
func (c *Context) EmbedBatch(inputs [][]int32, opt EmbedOptions) ([][]float32, error) {
	if err := c.checkOpen("Context.EmbedBatch"); err != nil {
		return nil, err
	}
	out := make([][]float32, 0, len(inputs))
	for i, toks := range inputs {
		v, err := c.Embed(toks, opt)
		if err != nil {
			return nil, fmt.Errorf("llama: input %d: %w", i, err)
		}
		if len(v) != 1 {
			return nil, errors.New("llama: EmbedBatch needs a pooling that makes one vector per input (the model's pooling is none: choose PoolingMean, PoolingCLS or PoolingLast)")
		}
		out = append(out, v[0])
	}
	return out, nil
}

// normalizeL2 scales v to unit Euclidean norm (a zero vector stays zero).
func normalizeL2(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := 1 / math.Sqrt(s)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}

// evalHidden evaluates one batch of sequence 0 after its last position and returns the
// final hidden states of every token (len(tokens) rows of n_embd).
func (c *Context) evalHidden(tokens []int32) ([]float32, error) {
	pos := c.Pos()
	ub := ubatch{tokens: tokens, pos: make([]int32, len(tokens)), seqs: make([]uint64, len(tokens)), hidden: true}
	for i := range tokens {
		ub.pos[i], ub.seqs[i] = int32(pos+i), 1
	}
	return c.run(ub)
}
