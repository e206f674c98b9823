//go:build cgo

package train

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
	"github.com/ggml-go/ggml/llama"
	"github.com/ggml-go/ggml/tokenizer"
)

// layerWeights are the tensors of one transformer block.
type layerWeights struct {
	attnNorm, wq, wk, wv, wo *ggml.Tensor
	ffnNorm, gate, up, down  *ggml.Tensor
}

// Model is a LLaMA-architecture model being trained: its F32 weights in a ggml context, named
// as in a llama GGUF file (doc/llama-conventions.md §2), and its vocabulary. Close it when done.
type Model struct {
	cfg     Config
	vocab   tokenizer.Vocab
	ctx     *ggml.Context
	tokEmbd *ggml.Tensor
	outNorm *ggml.Tensor
	output  *ggml.Tensor
	layers  []layerWeights
	weights []*ggml.Tensor // every weight, in GGUF file order
}

// NewModel creates a model of shape cfg (cfg.NVocab is taken from the vocabulary) with
// random weights drawn from seed: matrices Gaussian with std 1/sqrt(fan_in), the projections
// back into the residual stream (attn_output, ffn_down) further scaled by 1/sqrt(2·n_layer),
// token_embd with std 1, output with std 0.5/sqrt(n_embd), norm weights 1.
func NewModel(cfg Config, vocab tokenizer.Vocab, seed uint64) (*Model, error) {
	cfg.NVocab = len(vocab.Tokens)
	cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if vocab.Model != tokenizer.ModelSPM {
		return nil, fmt.Errorf("train: the vocabulary must be SPM (%q), not %q", tokenizer.ModelSPM, vocab.Model)
	}
	m, err := newModelTensors(cfg, vocab)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x747261696e))
	resid := 1 / math.Sqrt(2*float64(cfg.NLayer))
	for _, w := range m.weights {
		ne := w.Ne()
		v := make([]float32, w.NumElements())
		std := 1 / math.Sqrt(float64(ne[0]))
		switch {
		case w.NDims() == 1:
			std = 0
		case w == m.tokEmbd:
			std = 1
		case w == m.output:
			std *= 0.5
		}
		for _, l := range m.layers {
			if w == l.wo || w == l.down {
				std *= resid
			}
		}
		for i := range v {
			if std == 0 {
				v[i] = 1
			} else {
				v[i] = float32(std * rng.NormFloat64())
			}
		}
		if err := w.SetFloat32(v); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// newModelTensors creates the model's weight tensors (uninitialised).
func newModelTensors(cfg Config, vocab tokenizer.Vocab) (*Model, error) {
	e, v, ff := int64(cfg.NEmbd), int64(cfg.NVocab), int64(cfg.NFF)
	n := 3 + 9*cfg.NLayer
	size := uint64(n)*ggml.TensorOverhead() + uint64(cfg.ParamCount())*4 + uint64(n)*64 + 1<<16
	ctx, err := ggml.NewContext(ggml.Params{MemSize: size})
	if err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, vocab: vocab, ctx: ctx}
	add := func(name string, shape ...int64) *ggml.Tensor {
		var t *ggml.Tensor
		if len(shape) == 1 {
			t = ctx.NewTensor1D(ggml.TypeF32, shape[0])
		} else {
			t = ctx.NewTensor2D(ggml.TypeF32, shape[0], shape[1])
		}
		t.SetName(name)
		m.weights = append(m.weights, t)
		return t
	}
	m.tokEmbd = add("token_embd.weight", e, v)
	m.layers = make([]layerWeights, cfg.NLayer)
	for i := range m.layers {
		p := fmt.Sprintf("blk.%d.", i)
		l := &m.layers[i]
		l.attnNorm = add(p+"attn_norm.weight", e)
		l.wq = add(p+"attn_q.weight", e, e)
		l.wk = add(p+"attn_k.weight", e, e)
		l.wv = add(p+"attn_v.weight", e, e)
		l.wo = add(p+"attn_output.weight", e, e)
		l.ffnNorm = add(p+"ffn_norm.weight", e)
		l.gate = add(p+"ffn_gate.weight", e, ff)
		l.up = add(p+"ffn_up.weight", e, ff)
		l.down = add(p+"ffn_down.weight", ff, e)
	}
	m.outNorm = add("output_norm.weight", e)
	m.output = add("output.weight", e, v)
	return m, nil
}

// Config returns the model's shape.
func (m *Model) Config() Config { return m.cfg }

// Vocab returns the model's vocabulary.
func (m *Model) Vocab() tokenizer.Vocab { return m.vocab }

// Weights returns the weight tensors in GGUF file order (token_embd, the blocks, output_norm,
// output).
func (m *Model) Weights() []*ggml.Tensor { return append([]*ggml.Tensor(nil), m.weights...) }

// Close frees the weights; idempotent, returns nil.
func (m *Model) Close() error {
	if m != nil && m.ctx != nil {
		m.ctx.Close()
		m.ctx = nil
	}
	return nil
}

// metadata returns the llama GGUF keys of the model (doc/llama-conventions.md §1) for file type ft.
func (m *Model) metadata(name string, ft uint32) []llama.KV {
	c := m.cfg
	return llama.Metadata(llama.HParams{
		Name: name, FileType: int(ft), ContextLength: c.NCtx, NEmbd: c.NEmbd, NFF: c.NFF, NLayer: c.NLayer,
		NHead: c.NHead, NHeadKV: c.NHead, NRot: c.NEmbd / c.NHead, NormEps: c.NormEps, RopeFreqBase: c.RopeFreqBase,
	})
}

// SaveOptions configures Model.Save.
type SaveOptions struct {
	// Type is the type of the 2-D weights (F32 by default; F16 or a quantized type such as
	// Q8_0 for a smaller file; a quantized type needs n_embd and n_ff divisible by its block
	// size). Norm weights stay F32.
	Type gguf.TensorType
	// Name is general.name (default "ggml-go-train").
	Name string
	// Extra metadata entries, written after the model's keys.
	Extra []llama.KV
}

// Save writes the model as a llama GGUF file (doc/llama-conventions.md: keys, tensor names, SPM vocabulary)
// that llama.Load and llama.cpp load.
func (m *Model) Save(path string, opt SaveOptions) error {
	b, err := m.builder(opt)
	if err != nil {
		return err
	}
	return b.WriteFile(path)
}

// builder returns the GGUF contents of the model.
func (m *Model) builder(opt SaveOptions) (*gguf.Builder, error) {
	if err := m.checkOpen("Model.Save"); err != nil {
		return nil, err
	}
	typ := opt.Type
	if opt.Name == "" {
		opt.Name = "ggml-go-train"
	}
	var gt ggml.Type
	if typ != gguf.TypeF32 && typ != gguf.TypeF16 {
		var ok bool
		if gt, ok = ggml.TypeFromGGUF(typ); !ok {
			return nil, fmt.Errorf("train: cannot write weights of type %s", typ)
		}
	}
	b := &gguf.Builder{}
	kvs := append(m.metadata(opt.Name, llama.FileTypeOf(typ)), opt.Extra...)
	for _, kv := range kvs {
		if err := b.Set(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}
	if err := m.vocab.SetGGUF(b); err != nil {
		return nil, err
	}
	for _, w := range m.weights {
		v, err := w.Float32()
		if err != nil {
			return nil, err
		}
		t := typ
		if w.NDims() == 1 {
			t = gguf.TypeF32
		}
		var data []byte
		switch t {
		case gguf.TypeF32:
			data = ggml.Float32Bytes(v)
		case gguf.TypeF16:
			data = ggml.Float16Bytes(ggml.Float16Slice(v))
		default:
			if data, err = ggml.Quantize(gt, v, int(w.Ne()[0])); err != nil {
				return nil, fmt.Errorf("train: quantizing %s: %w", w.Name(), err)
			}
		}
		if err := b.AddTensor(w.Name(), t, w.Shape(), data); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// LoadModel reads a model written by Model.Save (any weight type; the weights are converted
// to F32 for training) together with its vocabulary.
func LoadModel(path string) (*Model, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	defer f.Close()
	h, err := llama.ReadHParams(f)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, err
	}
	if h.Arch != "llama" || h.NExpert > 0 {
		return nil, fmt.Errorf("train: %s: only dense llama-architecture models can be trained (this file is %q)", path, h.Arch)
	}
	if h.NHeadKV != h.NHead {
		return nil, errors.New("train: models with grouped-query attention are not supported")
	}
	cfg := Config{NVocab: h.NVocab, NEmbd: h.NEmbd, NLayer: h.NLayer, NHead: h.NHead, NFF: h.NFF, NCtx: h.ContextLength,
		NormEps: h.NormEps, RopeFreqBase: h.RopeFreqBase}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m, err := newModelTensors(cfg, tok.Vocab())
	if err != nil {
		return nil, err
	}
	src, err := ggml.LoadGGUFTensors(path, f, ggml.GGUFLoadOptions{BufferType: ggml.CPUBufferType()})
	if err != nil {
		m.Close()
		return nil, err
	}
	defer src.Close()
	if src.Len() != len(m.weights) {
		m.Close()
		return nil, fmt.Errorf("train: %s has %d tensors; a model of this shape has %d", path, src.Len(), len(m.weights))
	}
	for _, w := range m.weights {
		s := src.Tensor(w.Name())
		if s == nil || s.NumElements() != w.NumElements() {
			m.Close()
			return nil, fmt.Errorf("train: %s: tensor %s is missing or has the wrong shape", path, w.Name())
		}
		v, err := tensorFloat32(s)
		if err == nil {
			err = w.SetFloat32(v)
		}
		if err != nil {
			m.Close()
			return nil, fmt.Errorf("train: %s: %s: %w", path, w.Name(), err)
		}
	}
	return m, nil
}

// tensorFloat32 returns the values of an F32, F16 or quantized tensor as float32.
func tensorFloat32(t *ggml.Tensor) ([]float32, error) {
	switch t.Type() {
	case ggml.TypeF32:
		return t.Float32()
	case ggml.TypeF16:
		h, err := t.Float16()
		if err != nil {
			return nil, err
		}
		return ggml.FP16ToFP32Row(h), nil
	}
	b, err := t.Bytes()
	if err != nil {
		return nil, err
	}
	return ggml.Dequantize(t.Type(), b, int(t.NumElements()))
}
