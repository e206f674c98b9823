//go:build cgo

package llama

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// randomArchModel returns the metadata and tensors of a random model of architecture
// c.Arch (not plain llama): the keys the architecture reads, with small typical values for its
// features (experts, sliding window, soft-caps, ...), and every tensor of its tensor list.
// The weights are Gaussian (std 1/sqrt(fan_in)); norm weights near 1, biases near 0,
// frequency factors 1.
func randomArchModel(c RandomConfig) ([]KV, []randomTensor, error) {
	c.defaults()
	a, err := lookupArch(c.Arch)
	if err != nil {
		return nil, nil, err
	}
	if c.NVocab < 300 {
		return nil, nil, fmt.Errorf("llama: random model vocabulary must have at least 300 tokens, not %d", c.NVocab)
	}
	if c.Arch == "gpt2" || c.Arch == "bert" {
		c.ContextLength = max(c.ContextLength, 1024) // learned positions bound the context
	}
	p := c.Arch + "."
	h := HParams{Arch: c.Arch, Name: "random-" + c.Arch, FileType: int(FileTypeOf(c.Type)), ContextLength: c.ContextLength,
		NEmbd: c.NEmbd, NLayer: c.NLayer, NFF: c.NFF, NHead: c.NHead, NHeadKV: c.NHeadKV, NormEps: c.NormEps,
		NVocab: c.NVocab, RopeType: a.ropeType, Causal: !a.encoder}
	kvs := []KV{{"general.architecture", c.Arch}, {"general.name", h.Name}, {"general.file_type", uint32(h.FileType)},
		{p + "context_length", uint32(h.ContextLength)},
		{p + "embedding_length", uint32(h.NEmbd)},
		{p + "block_count", uint32(h.NLayer)},
		{p + "feed_forward_length", uint32(h.NFF)},
		{p + "attention.head_count", uint32(h.NHead)},
		{p + "attention.head_count_kv", uint32(h.NHeadKV)},
	}
	if a.layerNorm {
		kvs = append(kvs, KV{p + "attention.layer_norm_epsilon", h.NormEps})
	} else {
		kvs = append(kvs, KV{p + "attention.layer_norm_rms_epsilon", h.NormEps})
	}
	if c.HeadDim > 0 {
		h.HeadDimK, h.HeadDimV = c.HeadDim, c.HeadDim
		kvs = append(kvs, KV{p + "attention.key_length", uint32(c.HeadDim)}, KV{p + "attention.value_length", uint32(c.HeadDim)})
	}
	if a.ropeType != RopeNone {
		h.NRot = h.HeadDim()
		kvs = append(kvs, KV{p + "rope.dimension_count", uint32(h.NRot)})
	}
	switch c.Arch {
	case "qwen2moe":
		h.NExpert, h.NExpertUsed, h.NFFExpert, h.NFFShared = 4, 2, c.NFF/2, c.NFF
		kvs = append(kvs, KV{p + "expert_count", uint32(4)}, KV{p + "expert_used_count", uint32(2)},
			KV{p + "expert_feed_forward_length", uint32(h.NFFExpert)},
			KV{p + "expert_shared_feed_forward_length", uint32(h.NFFShared)})
	case "phi3":
		h.SlidingWindow = 2048
		kvs = append(kvs, KV{p + "attention.sliding_window", uint32(h.SlidingWindow)},
			KV{p + "rope.scaling.original_context_length", uint32(c.ContextLength)})
	case "gemma2":
		h.SlidingWindow = 4096
		kvs = append(kvs, KV{p + "attention.sliding_window", uint32(h.SlidingWindow)},
			KV{p + "attn_logit_softcapping", float32(50)}, KV{p + "final_logit_softcapping", float32(30)})
	case "bert", "nomic-bert":
		h.NTokenTypes = 2
		kvs = append(kvs, KV{p + "attention.causal", false}, KV{p + "pooling_type", uint32(PoolingMean)})
	}
	if c.NExpert > 0 && a.moe && c.Arch == "llama" {
		h.NExpert, h.NExpertUsed, h.NFFExpert = c.NExpert, max(1, min(2, c.NExpert)), c.NFF
		kvs = append(kvs, KV{p + "expert_count", uint32(h.NExpert)}, KV{p + "expert_used_count", uint32(h.NExpertUsed)})
	}
	tokens, scores, types := RandomVocab(c.NVocab)
	kvs = append(kvs,
		KV{"tokenizer.ggml.model", "llama"},
		KV{"tokenizer.ggml.tokens", tokens},
		KV{"tokenizer.ggml.scores", scores},
		KV{"tokenizer.ggml.token_type", types},
		KV{"tokenizer.ggml.bos_token_id", uint32(1)},
		KV{"tokenizer.ggml.eos_token_id", uint32(2)},
		KV{"tokenizer.ggml.unknown_token_id", uint32(0)},
	)
	if h.NTokenTypes > 0 {
		kvs = append(kvs, KV{"tokenizer.ggml.token_type_count", uint32(h.NTokenTypes)})
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x61726368))
	var ts []randomTensor
	for _, sp := range a.tensors(h) {
		if sp.optional && !strings.Contains(sp.name, "bias") {
			continue // optional extras (frequency factors, tied output) are left out
		}
		n := int64(1)
		for _, d := range sp.shape {
			n *= d
		}
		v := make([]float32, n)
		mean, std := 0.0, 1/math.Sqrt(float64(sp.shape[0]))
		switch {
		case strings.Contains(sp.name, "norm"):
			mean, std = 1, 0.1
		case strings.HasSuffix(sp.name, ".bias"), sp.name == "token_types.weight", sp.name == "position_embd.weight":
			std = 0.1
		case sp.name == "token_embd.weight":
			std = 1
		}
		for i := range v {
			v[i] = float32(mean + std*rng.NormFloat64())
		}
		typ := gguf.TypeF32
		var data []byte
		if sp.matrix && c.Type != gguf.TypeF32 {
			typ = c.Type
			if sp.name == "output.weight" {
				typ = c.OutputType
			}
		}
		switch typ {
		case gguf.TypeF32:
			data = ggml.Float32Bytes(v)
		case gguf.TypeF16:
			data = ggml.Float16Bytes(ggml.Float16Slice(v))
		default:
			gt, ok := ggml.TypeFromGGUF(typ)
			if !ok {
				return nil, nil, fmt.Errorf("llama: random model: type %s is not supported", typ)
			}
			if data, err = ggml.Quantize(gt, v, int(sp.shape[0])); err != nil {
				return nil, nil, fmt.Errorf("llama: random model: %s: %w", sp.name, err)
			}
		}
		ts = append(ts, randomTensor{name: sp.name, typ: typ, shape: sp.shape, data: data})
	}
	return kvs, ts, nil
}
