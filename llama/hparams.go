//go:build cgo

package llama

import (
	"errors"
	"fmt"
	"math"

	"github.com/ggml-go/ggml/gguf"
)

// Rope scaling types (<arch>.rope.scaling.type).
const (
	RopeScalingNone   = "none"
	RopeScalingLinear = "linear"
	RopeScalingYaRN   = "yarn"
)

// RoPE layouts (HParams.RopeType), as ggml's rope modes.
const (
	RopeNone   = -1 // no rotary embedding (learned or no positions)
	RopeNormal = 0  // adjacent pairs (2k, 2k+1): LLaMA
	RopeNeoX   = 2  // pairs (k, k + n_rot/2): GPT-NeoX, Qwen, Gemma, Phi-3
)

// Pooling is how an embedding is made from the hidden states of a sequence (llama.cpp's enum
// llama_pooling_type, whose values <arch>.pooling_type holds).
type Pooling int

// Poolings.
const (
	PoolingDefault Pooling = -1 // the model's <arch>.pooling_type (none when absent)
	PoolingNone    Pooling = 0  // one vector per token
	PoolingMean    Pooling = 1  // the mean of the tokens' vectors
	PoolingCLS     Pooling = 2  // the first token's vector
	PoolingLast    Pooling = 3  // the last token's vector
)

// String returns the pooling's name ("none", "mean", "cls", "last").
func (p Pooling) String() string {
	switch p {
	case PoolingDefault:
		return "default"
	case PoolingNone:
		return "none"
	case PoolingMean:
		return "mean"
	case PoolingCLS:
		return "cls"
	case PoolingLast:
		return "last"
	}
	return fmt.Sprintf("Pooling(%d)", int(p))
}

// HParams are a model's hyper-parameters, read from the GGUF metadata: the keys of
// general.architecture's prefix (<arch>.embedding_length, ...) by llama.cpp's rules. The
// fields after NVocab are architecture features; their zero values mean "not used".
type HParams struct {
	Arch          string  // general.architecture ("llama", "qwen2", ...)
	Name          string  // general.name (may be empty)
	FileType      int     // general.file_type, or -1 when absent
	ContextLength int     // <arch>.context_length: the training context
	NEmbd         int     // <arch>.embedding_length
	NFF           int     // <arch>.feed_forward_length
	NLayer        int     // <arch>.block_count
	NHead         int     // <arch>.attention.head_count
	NHeadKV       int     // <arch>.attention.head_count_kv (n_head when absent)
	NRot          int     // <arch>.rope.dimension_count (the head size)
	NormEps       float32 // <arch>.attention.layer_norm_rms_epsilon, or layer_norm_epsilon for LayerNorm models
	RopeFreqBase  float32 // <arch>.rope.freq_base (10000)
	RopeScaling   string  // RopeScalingNone, RopeScalingLinear (default) or RopeScalingYaRN
	RopeFreqScale float32 // 1 / <arch>.rope.scaling.factor (1 when absent or 0)
	YaRNOrigCtx   int     // <arch>.rope.scaling.original_context_length (context_length)
	NVocab        int     // the length of tokenizer.ggml.tokens

	HeadDimK       int     // <arch>.attention.key_length (n_embd / n_head)
	HeadDimV       int     // <arch>.attention.value_length (n_embd / n_head)
	RopeType       int     // RopeNormal, RopeNeoX or RopeNone (set by the architecture)
	RopeAttnFactor float32 // <arch>.rope.scaling.attn_factor: scales cos and sin (1)
	NExpert        int     // <arch>.expert_count (0: a dense FFN)
	NExpertUsed    int     // <arch>.expert_used_count
	NFFExpert      int     // <arch>.expert_feed_forward_length (n_ff)
	NFFShared      int     // <arch>.expert_shared_feed_forward_length (n_ff)
	SlidingWindow  int     // <arch>.attention.sliding_window (0: none)
	AttnSoftcap    float32 // <arch>.attn_logit_softcapping (0: none)
	FinalSoftcap   float32 // <arch>.final_logit_softcapping (0: none)
	Causal         bool    // <arch>.attention.causal (true)
	Pooling        Pooling // <arch>.pooling_type (PoolingNone)
	NTokenTypes    int     // tokenizer.ggml.token_type_count (encoders)
}

// HeadDim returns the size of one attention head of the queries and keys.
func (h HParams) HeadDim() int {
	if h.HeadDimK > 0 {
		return h.HeadDimK
	}
	return h.NEmbd / h.NHead
}

// headDimV returns the size of one attention head of the values.
func (h HParams) headDimV() int {
	if h.HeadDimV > 0 {
		return h.HeadDimV
	}
	return h.NEmbd / h.NHead
}

// NEmbdGQA returns the width of K, head_dim · n_head_kv.
func (h HParams) NEmbdGQA() int { return h.HeadDim() * h.NHeadKV }

// nEmbdVGQA returns the width of V.
func (h HParams) nEmbdVGQA() int { return h.headDimV() * h.NHeadKV }

// keyError names the metadata key a problem is about.
func keyError(key string, err error) error {
	var te *gguf.TypeError
	switch {
	case errors.Is(err, gguf.ErrKeyNotFound):
		return fmt.Errorf("llama: required metadata key %q is missing", key)
	case errors.As(err, &te):
		return fmt.Errorf("llama: metadata key %q holds a %s value, but it must be %s", key, te.Got, te.Want)
	}
	return fmt.Errorf("llama: metadata key %q: %w", key, err)
}

// reader reads typed keys, remembering the first error; keys without a dot-free prefix are
// read as given, "." + key as <arch>.key.
type reader struct {
	f    *gguf.File
	arch string
	err  error
}

// name expands a key starting with "." with the architecture prefix.
func (r *reader) name(key string) string {
	if len(key) > 0 && key[0] == '.' {
		return r.arch + key
	}
	return key
}

func (r *reader) has(key string) bool {
	_, ok := r.f.Get(r.name(key))
	return ok
}

// u32 reads a u32 key; def < 0 makes it required. The value must be at least min.
func (r *reader) u32(key string, def int64, min int64) int {
	key = r.name(key)
	if r.err != nil {
		return 0
	}
	if !r.has(key) && def >= 0 {
		return int(def)
	}
	v, err := r.f.GetUint32(key)
	if err != nil {
		r.err = keyError(key, err)
		return 0
	}
	if int64(v) < min || int64(v) > math.MaxInt32 {
		r.err = fmt.Errorf("llama: metadata key %q is %d; it must be at least %d", key, v, min)
	}
	return int(v)
}

// f32 reads an f32 key; required when !hasDef.
func (r *reader) f32(key string, def float32, hasDef bool) float32 {
	key = r.name(key)
	if r.err != nil {
		return 0
	}
	if !r.has(key) && hasDef {
		return def
	}
	v, err := r.f.GetFloat32(key)
	if err != nil {
		r.err = keyError(key, err)
		return 0
	}
	if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
		r.err = fmt.Errorf("llama: metadata key %q is %v; it must be a finite number", key, v)
	}
	return v
}

// boolean reads a bool key with a default.
func (r *reader) boolean(key string, def bool) bool {
	key = r.name(key)
	if r.err != nil || !r.has(key) {
		return def
	}
	v, ok := r.f.Get(key)
	b, isBool := v.Any().(bool)
	if !ok || !isBool {
		r.err = fmt.Errorf("llama: metadata key %q must be a bool (it is %s)", key, v.TypeName())
	}
	return b
}

// str reads a string key; required when !hasDef.
func (r *reader) str(key, def string, hasDef bool) string {
	key = r.name(key)
	if r.err != nil {
		return ""
	}
	if !r.has(key) && hasDef {
		return def
	}
	v, err := r.f.GetString(key)
	if err != nil {
		r.err = keyError(key, err)
	}
	return v
}

// fail records an error unless one is recorded.
func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("llama: "+format, args...)
	}
}

// ReadHParams reads and checks the hyper-parameters of a GGUF model of any supported
// architecture (Architectures) by the rules of llama.cpp: strict key types, required keys,
// defaults. Errors name the key; an unsupported architecture is an error that lists the
// supported ones.
func ReadHParams(f *gguf.File) (HParams, error) {
	r := &reader{f: f}
	archName := r.str("general.architecture", "", false)
	if r.err != nil {
		return HParams{}, r.err
	}
	a, err := lookupArch(archName)
	if err != nil {
		return HParams{}, err
	}
	r.arch = archName
	h := HParams{Arch: archName, Causal: true, RopeType: a.ropeType, Pooling: PoolingNone}
	h.Name = r.str("general.name", "", true)
	h.FileType = r.u32("general.file_type", math.MaxInt32, 0)
	if !r.has("general.file_type") {
		h.FileType = -1
	}
	h.ContextLength = r.u32(".context_length", -1, 1)
	h.NEmbd = r.u32(".embedding_length", -1, 1)
	h.NFF = r.u32(".feed_forward_length", -1, 1)
	h.NLayer = r.u32(".block_count", -1, 1)
	h.NHead = r.u32(".attention.head_count", -1, 1)
	if r.err != nil {
		return HParams{}, r.err
	}
	h.NHeadKV = r.u32(".attention.head_count_kv", int64(h.NHead), 1)
	if a.layerNorm {
		h.NormEps = r.f32(".attention.layer_norm_epsilon", 0, false)
	} else {
		h.NormEps = r.f32(".attention.layer_norm_rms_epsilon", 0, false)
	}
	if r.err != nil {
		return HParams{}, r.err
	}
	if h.NHead%h.NHeadKV != 0 {
		return HParams{}, fmt.Errorf("llama: %s.attention.head_count %d is not a multiple of %s.attention.head_count_kv %d", archName, h.NHead, archName, h.NHeadKV)
	}
	if !r.has(".attention.key_length") && h.NEmbd%h.NHead != 0 {
		return HParams{}, fmt.Errorf("llama: %s.embedding_length %d is not a multiple of %s.attention.head_count %d", archName, h.NEmbd, archName, h.NHead)
	}
	h.HeadDimK = r.u32(".attention.key_length", int64(h.NEmbd/h.NHead), 1)
	h.HeadDimV = r.u32(".attention.value_length", int64(h.NEmbd/h.NHead), 1)
	h.NRot = r.u32(".rope.dimension_count", int64(h.HeadDimK), 1)
	if r.err == nil && h.RopeType != RopeNone {
		if h.NRot > h.HeadDimK || h.NRot%2 != 0 {
			return HParams{}, fmt.Errorf("llama: %s.rope.dimension_count is %d; it must be even and at most the head size %d", archName, h.NRot, h.HeadDimK)
		}
		if archName == "llama" && h.NRot != h.HeadDimK {
			return HParams{}, fmt.Errorf("llama: llama.rope.dimension_count is %d; it must equal n_embd/n_head = %d", h.NRot, h.HeadDimK)
		}
	}
	h.RopeFreqBase = r.f32(".rope.freq_base", 10000, true)
	if r.err == nil && h.RopeFreqBase <= 0 {
		return HParams{}, fmt.Errorf("llama: %s.rope.freq_base is %v; it must be positive", archName, h.RopeFreqBase)
	}
	h.RopeScaling = r.str(".rope.scaling.type", RopeScalingLinear, true)
	if r.err == nil {
		switch h.RopeScaling {
		case RopeScalingNone, RopeScalingLinear, RopeScalingYaRN:
		default:
			return HParams{}, fmt.Errorf("llama: %s.rope.scaling.type is %q; supported: none, linear, yarn", archName, h.RopeScaling)
		}
	}
	factorKey := ".rope.scaling.factor"
	if !r.has(factorKey) {
		factorKey = ".rope.scale_linear"
	}
	factor := r.f32(factorKey, 0, true)
	if r.err == nil && factor < 0 {
		return HParams{}, fmt.Errorf("llama: %s is %v; it must not be negative", r.name(factorKey), factor)
	}
	h.RopeFreqScale = 1
	if factor != 0 {
		h.RopeFreqScale = 1 / factor
	}
	h.YaRNOrigCtx = r.u32(".rope.scaling.original_context_length", int64(h.ContextLength), 1)
	h.RopeAttnFactor = r.f32(".rope.scaling.attn_factor", 1, true)
	h.NExpert = r.u32(".expert_count", 0, 0)
	h.NExpertUsed = r.u32(".expert_used_count", 0, 0)
	h.NFFExpert = r.u32(".expert_feed_forward_length", int64(h.NFF), 1)
	h.NFFShared = r.u32(".expert_shared_feed_forward_length", int64(h.NFF), 1)
	h.SlidingWindow = r.u32(".attention.sliding_window", 0, 0)
	h.AttnSoftcap = r.f32(".attn_logit_softcapping", 0, true)
	h.FinalSoftcap = r.f32(".final_logit_softcapping", 0, true)
	h.Causal = r.boolean(".attention.causal", true)
	h.Pooling = Pooling(r.u32(".pooling_type", 0, 0))
	h.NTokenTypes = r.u32("tokenizer.ggml.token_type_count", 0, 0)
	if r.err != nil {
		return HParams{}, r.err
	}
	if h.NExpert > 0 || h.NExpertUsed > 0 {
		if !a.moe {
			return HParams{}, fmt.Errorf("llama: %s models with experts (%s.expert_count %d) are not supported", archName, archName, h.NExpert)
		}
		if h.NExpertUsed < 1 || h.NExpertUsed > h.NExpert {
			return HParams{}, fmt.Errorf("llama: %s.expert_used_count is %d; it must be in 1..%s.expert_count (%d)", archName, h.NExpertUsed, archName, h.NExpert)
		}
	}
	if h.Pooling < PoolingNone || h.Pooling > PoolingLast {
		return HParams{}, fmt.Errorf("llama: %s.pooling_type is %d; supported: 0 (none), 1 (mean), 2 (cls), 3 (last)", archName, int(h.Pooling))
	}
	if a.hparams != nil {
		a.hparams(r, &h)
		if r.err != nil {
			return HParams{}, r.err
		}
	}
	if _, err := f.GetString("tokenizer.ggml.model"); err != nil {
		return HParams{}, keyError("tokenizer.ggml.model", err)
	}
	v, ok := f.Get("tokenizer.ggml.tokens")
	if !ok {
		return HParams{}, keyError("tokenizer.ggml.tokens", gguf.ErrKeyNotFound)
	}
	if v.ElemType() != gguf.TypeString || v.Len() == 0 {
		return HParams{}, fmt.Errorf("llama: metadata key %q must be a non-empty array of strings (it is %s)", "tokenizer.ggml.tokens", v.TypeName())
	}
	h.NVocab = v.Len()
	return h, nil
}
