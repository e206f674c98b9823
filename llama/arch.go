//go:build cgo

package llama

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ggml-go/ggml"
)

// tensor is a graph node or weight.
type tensor = ggml.Tensor

// maxExperts is the most experts one MUL_MAT_ID node takes: this ggml's MUL_MAT_ID takes
// the experts as separate sources (GGML_MAX_SRC - 2 of them). Layers with more experts are
// computed in groups (builder.moe).
const maxExperts = 8

// architecture is what one model family adds to the runner core: how to read its own
// hyper-parameters, which tensors it has, and its forward graph over the shared builders
// (builders.go). Each family registers one in its own file (arch_*.go) under its
// general.architecture name; the core (loading, KV cache, batches, generation) names none.
type architecture struct {
	name      string
	ropeType  int  // RopeNormal, RopeNeoX or RopeNone
	layerNorm bool // eps from attention.layer_norm_epsilon (else layer_norm_rms_epsilon)
	moe       bool // accepts expert_count > 0
	encoder   bool // no logits: hidden states for embeddings only
	// hparams reads and checks the architecture's own keys (optional).
	hparams func(r *reader, h *HParams)
	// tensors lists the tensors of a model with hyper-parameters h.
	tensors func(h HParams) []spec
	// forward builds the graph from the inputs to the final hidden states (after the output
	// norm), [n_embd, rows]; it calls b.outputRows before the output norm.
	forward func(b *builder) *tensor
	// logits turns the final hidden states into logits (nil: the output matrix, or the token
	// embeddings when the model has no output.weight).
	logits func(b *builder, x *tensor) *tensor
	// sizes are llama.cpp's size labels by block count (for Description).
	sizes map[int]string
}

var archs = map[string]*architecture{}

// register adds an architecture (called from the init functions of the arch_*.go files).
func register(a *architecture) {
	if _, dup := archs[a.name]; dup {
		panic("llama: architecture " + a.name + " registered twice")
	}
	archs[a.name] = a
}

// Architectures returns the general.architecture values this package runs, sorted.
func Architectures() []string {
	names := make([]string, 0, len(archs))
	for n := range archs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// IsEncoder reports whether models of the architecture (a general.architecture value) only
// produce embeddings (BERT-like encoders), not logits.
func IsEncoder(arch string) bool {
	a, ok := archs[arch]
	return ok && a.encoder
}

// lookupArch returns the registered architecture called name.
func lookupArch(name string) (*architecture, error) {
	if a, ok := archs[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("llama: the model's architecture (general.architecture) is %q, which this runner does not support; supported: %s",
		name, strings.Join(Architectures(), ", "))
}

// spec is one expected tensor.
type spec struct {
	name     string
	shape    []int64
	matrix   bool // any weight type; else F32 only
	optional bool
}

// specList builds tensor lists: global tensors and per-block tensors named blk.N.<suffix>.
type specList []spec

func (s *specList) add(name string, matrix, optional bool, shape ...int64) {
	*s = append(*s, spec{name: name, shape: shape, matrix: matrix, optional: optional})
}

// mat adds a required matrix, vec a required F32 tensor; opt* the optional ones.
func (s *specList) mat(name string, shape ...int64)    { s.add(name, true, false, shape...) }
func (s *specList) vec(name string, shape ...int64)    { s.add(name, false, false, shape...) }
func (s *specList) optMat(name string, shape ...int64) { s.add(name, true, true, shape...) }
func (s *specList) optVec(name string, shape ...int64) { s.add(name, false, true, shape...) }

// has reports whether the list names a tensor.
func (s specList) has(name string) bool {
	return slices.ContainsFunc(s, func(x spec) bool { return x.name == name })
}

// attnWidths returns the output widths of the query, key and value projections and the
// input width of the attention output matrix: head sizes (key_length, value_length) times
// head counts, which are n_embd, n_embd_gqa, n_embd_gqa and n_embd unless the file sets the
// head sizes.
func attnWidths(h HParams) (q, k, v, o int64) {
	hd, hdv, nh, nhkv := int64(h.HeadDim()), int64(h.headDimV()), int64(h.NHead), int64(h.NHeadKV)
	return hd * nh, hd * nhkv, hdv * nhkv, hdv * nh
}

// blk returns the name of a block tensor.
func blk(i int, suffix string) string { return fmt.Sprintf("blk.%d.%s", i, suffix) }
