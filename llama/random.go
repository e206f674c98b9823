//go:build cgo

package llama

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// RandomConfig describes a model with random weights for tests and benchmarks. Zero fields
// take small defaults (RandomConfig{} is a 2-layer, 64-wide model with a 300-token vocabulary).
type RandomConfig struct {
	NEmbd, NLayer, NHead, NHeadKV, NFF int
	NVocab                             int // at least 300 (control, byte and letter tokens come first)
	ContextLength                      int
	Type                               gguf.TensorType // type of the matrices (F32 by default)
	OutputType                         gguf.TensorType // type of output.weight (Type when 0)
	NormEps                            float32
	RopeFreqBase                       float32 // 0: the key is omitted (default 10000)
	RopeScaling                        string  // "": the key is omitted
	RopeFactor                         float32 // 0: the key is omitted
	Biases                             bool    // add attention biases
	Seed                               uint64
	// Arch is the architecture (a general.architecture value of Architectures; "" is llama).
	// Other architectures get their own keys with typical values for their features, and
	// every tensor of their tensor list (the rope scaling, bias and vocabulary options above
	// apply to llama only).
	Arch string
	// NExpert, for llama, makes a Mixtral-style model with this many experts (2 used).
	NExpert int
	// HeadDim, when set, is the head size (attention.key_length and value_length) instead of
	// NEmbd/NHead (architectures other than plain llama, and llama with NExpert or HeadDim).
	HeadDim int
}

// TinyLlamaConfig returns the shape of TinyLlama-1.1B with matrices of type typ, for speed
// measurements (its weights are random).
func TinyLlamaConfig(typ gguf.TensorType) RandomConfig {
	return RandomConfig{NEmbd: 2048, NLayer: 22, NHead: 32, NHeadKV: 4, NFF: 5632, NVocab: 32000,
		ContextLength: 2048, Type: typ, OutputType: gguf.TypeQ6_K, Seed: 1}
}

func (c *RandomConfig) defaults() {
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	def(&c.NEmbd, 64)
	def(&c.NLayer, 2)
	def(&c.NHead, 4)
	def(&c.NHeadKV, c.NHead)
	def(&c.NFF, 96)
	def(&c.NVocab, 300)
	def(&c.ContextLength, 256)
	if c.NormEps == 0 {
		c.NormEps = 1e-5
	}
	if c.OutputType == 0 {
		c.OutputType = c.Type
	}
}

// RandomVocab returns an SPM vocabulary of n tokens (n >= 300): <unk>, <s>, </s>, the 256 byte
// tokens, then letters, digits and punctuation with and without the "▁" word marker, then
// made-up words. Scores favour longer tokens.
func RandomVocab(n int) (tokens []string, scores []float32, types []int32) {
	add := func(s string, score float32, typ int32) {
		tokens = append(tokens, s)
		scores = append(scores, score)
		types = append(types, typ)
	}
	add("<unk>", 0, 2)
	add("<s>", 0, 3)
	add("</s>", 0, 3)
	for b := 0; b < 256; b++ {
		add(fmt.Sprintf("<0x%02X>", b), 0, 6)
	}
	seen := map[string]bool{}
	for _, t := range tokens {
		seen[t] = true
	}
	chars := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,!?'-"
	add("▁", -1, 1)
	seen["▁"] = true
	for _, ch := range chars {
		for _, s := range []string{string(ch), "▁" + string(ch)} {
			if len(tokens) < n && !seen[s] {
				seen[s] = true
				add(s, -float32(len(tokens)), 1)
			}
		}
	}
	for i := 0; len(tokens) < n; i++ {
		s := fmt.Sprintf("▁w%d", i)
		add(s, -float32(len(tokens)), 1)
	}
	return tokens[:n], scores[:n], types[:n]
}

// KV is one metadata entry of a GGUF file: a key and its value in the Go type that
// gguf.Builder.Set writes as the key's GGUF type (uint32, float32, string, slices).
type KV struct {
	Key   string
	Value any
}

// Metadata returns the general.* and llama.* metadata entries of a model with
// hyper-parameters h (MODELS.md §1), in file order: general.name only when set,
// general.file_type only when h.FileType >= 0, llama.rope.freq_base only when set;
// llama.rope.dimension_count is n_embd/n_head. Rope scaling keys are left to the caller. With
// a vocabulary (tokenizer.Vocab.SetGGUF) and the tensors of MODELS.md §2 they make a file that
// Load and llama.cpp accept.
func Metadata(h HParams) []KV {
	kvs := []KV{{"general.architecture", "llama"}}
	if h.Name != "" {
		kvs = append(kvs, KV{"general.name", h.Name})
	}
	if h.FileType >= 0 {
		kvs = append(kvs, KV{"general.file_type", uint32(h.FileType)})
	}
	kvs = append(kvs,
		KV{"llama.context_length", uint32(h.ContextLength)},
		KV{"llama.embedding_length", uint32(h.NEmbd)},
		KV{"llama.block_count", uint32(h.NLayer)},
		KV{"llama.feed_forward_length", uint32(h.NFF)},
		KV{"llama.rope.dimension_count", uint32(h.NEmbd / h.NHead)},
		KV{"llama.attention.head_count", uint32(h.NHead)},
		KV{"llama.attention.head_count_kv", uint32(h.NHeadKV)},
		KV{"llama.attention.layer_norm_rms_epsilon", h.NormEps},
	)
	if h.RopeFreqBase != 0 {
		kvs = append(kvs, KV{"llama.rope.freq_base", h.RopeFreqBase})
	}
	return kvs
}

// randomTensor is one tensor of a random model.
type randomTensor struct {
	name  string
	typ   gguf.TensorType
	shape []int64
	data  []byte
}

// randomModel returns the metadata and tensors of a random model.
func randomModel(c RandomConfig) ([]KV, []randomTensor, error) {
	c.defaults()
	if c.NVocab < 300 {
		return nil, nil, fmt.Errorf("llama: random model vocabulary must have at least 300 tokens, not %d", c.NVocab)
	}
	tokens, scores, types := RandomVocab(c.NVocab)
	kvs := Metadata(HParams{Name: "random-llama", FileType: int(FileTypeOf(c.Type)), ContextLength: c.ContextLength,
		NEmbd: c.NEmbd, NLayer: c.NLayer, NFF: c.NFF, NHead: c.NHead, NHeadKV: c.NHeadKV, NormEps: c.NormEps,
		RopeFreqBase: c.RopeFreqBase})
	if c.RopeScaling != "" {
		kvs = append(kvs, KV{"llama.rope.scaling.type", c.RopeScaling})
	}
	if c.RopeFactor != 0 {
		kvs = append(kvs, KV{"llama.rope.scaling.factor", c.RopeFactor})
	}
	kvs = append(kvs,
		KV{"tokenizer.ggml.model", "llama"},
		KV{"tokenizer.ggml.tokens", tokens},
		KV{"tokenizer.ggml.scores", scores},
		KV{"tokenizer.ggml.token_type", types},
		KV{"tokenizer.ggml.bos_token_id", uint32(1)},
		KV{"tokenizer.ggml.eos_token_id", uint32(2)},
		KV{"tokenizer.ggml.unknown_token_id", uint32(0)},
	)
	rng := rand.New(rand.NewPCG(c.Seed, 0x6c6c616d61))
	var ts []randomTensor
	var err error
	add := func(name string, typ gguf.TensorType, std, mean float64, shape ...int64) {
		if err != nil {
			return
		}
		n := shape[0]
		if len(shape) > 1 {
			n *= shape[1]
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(mean + std*rng.NormFloat64())
		}
		var data []byte
		switch typ {
		case gguf.TypeF32:
			data = ggml.Float32Bytes(v)
		case gguf.TypeF16:
			data = ggml.Float16Bytes(ggml.Float16Slice(v))
		default:
			gt, ok := ggml.TypeFromGGUF(typ)
			if !ok {
				err = fmt.Errorf("llama: random model: type %s is not supported", typ)
				return
			}
			if data, err = ggml.Quantize(gt, v, int(shape[0])); err != nil {
				return
			}
		}
		ts = append(ts, randomTensor{name: name, typ: typ, shape: shape, data: data})
	}
	e, gqa, ff, nv := int64(c.NEmbd), int64(c.NEmbd/c.NHead*c.NHeadKV), int64(c.NFF), int64(c.NVocab)
	inv := func(n int64) float64 { return 1 / math.Sqrt(float64(n)) }
	add("token_embd.weight", c.Type, 1, 0, e, nv)
	for i := 0; i < c.NLayer; i++ {
		p := fmt.Sprintf("blk.%d.", i)
		add(p+"attn_norm.weight", gguf.TypeF32, 0.1, 1, e)
		add(p+"attn_q.weight", c.Type, inv(e), 0, e, e)
		add(p+"attn_k.weight", c.Type, inv(e), 0, e, gqa)
		add(p+"attn_v.weight", c.Type, inv(e), 0, e, gqa)
		add(p+"attn_output.weight", c.Type, inv(e), 0, e, e)
		if c.Biases {
			add(p+"attn_q.bias", gguf.TypeF32, 0.1, 0, e)
			add(p+"attn_k.bias", gguf.TypeF32, 0.1, 0, gqa)
			add(p+"attn_v.bias", gguf.TypeF32, 0.1, 0, gqa)
			add(p+"attn_output.bias", gguf.TypeF32, 0.1, 0, e)
		}
		add(p+"ffn_norm.weight", gguf.TypeF32, 0.1, 1, e)
		add(p+"ffn_gate.weight", c.Type, inv(e), 0, e, ff)
		add(p+"ffn_up.weight", c.Type, inv(e), 0, e, ff)
		add(p+"ffn_down.weight", c.Type, inv(ff), 0, ff, e)
	}
	add("output_norm.weight", gguf.TypeF32, 0.1, 1, e)
	add("output.weight", c.OutputType, 4.5*inv(e), 0, e, nv)
	return kvs, ts, err
}

// writeModel writes metadata and tensors as a GGUF file.
func writeModel(path string, kvs []KV, ts []randomTensor) error {
	var b gguf.Builder
	for _, kv := range kvs {
		if err := b.Set(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	for _, t := range ts {
		if err := b.AddTensor(t.name, t.typ, t.shape, t.data); err != nil {
			return err
		}
	}
	return b.WriteFile(path)
}

// WriteRandomModel writes a model (llama unless c.Arch says otherwise) with random weights (Gaussian, std 1/sqrt(fan_in);
// norm weights near 1) and the vocabulary of RandomVocab to path, for tests, examples and
// benchmarks.
func WriteRandomModel(path string, c RandomConfig) error {
	randomModel := randomModel
	if (c.Arch != "" && c.Arch != "llama") || c.NExpert > 0 || c.HeadDim > 0 {
		if c.Arch == "" {
			c.Arch = "llama"
		}
		randomModel = randomArchModel
	}
	kvs, ts, err := randomModel(c)
	if err != nil {
		return err
	}
	return writeModel(path, kvs, ts)
}

// FileTypeOf returns the general.file_type of a model whose matrices have type t (llama.cpp's
// enum llama_ftype: 0 all F32, 1 mostly F16, 7 mostly Q8_0, ...; 0 for a type it has no
// value for).
func FileTypeOf(t gguf.TensorType) uint32 {
	switch t {
	case gguf.TypeF32:
		return 0
	case gguf.TypeF16:
		return 1
	case gguf.TypeQ4_0:
		return 2
	case gguf.TypeQ4_1:
		return 3
	case gguf.TypeQ8_0:
		return 7
	case gguf.TypeQ5_0:
		return 8
	case gguf.TypeQ5_1:
		return 9
	case gguf.TypeQ2_K:
		return 10
	case gguf.TypeQ3_K:
		return 12
	case gguf.TypeQ4_K:
		return 15
	case gguf.TypeQ5_K:
		return 17
	case gguf.TypeQ6_K:
		return 18
	}
	return 0
}
