package llama

import (
	"errors"
	"fmt"
	"math"

	"github.com/ggml-go/ggml/gguf"
)

// Rope scaling types (llama.rope.scaling.type).
const (
	RopeScalingNone   = "none"
	RopeScalingLinear = "linear"
	RopeScalingYaRN   = "yarn"
)

// HParams are a model's hyper-parameters, read from the GGUF metadata (MODELS.md §1).
type HParams struct {
	Name          string  // general.name (may be empty)
	FileType      int     // general.file_type, or -1 when absent
	ContextLength int     // llama.context_length: the training context
	NEmbd         int     // llama.embedding_length
	NFF           int     // llama.feed_forward_length
	NLayer        int     // llama.block_count
	NHead         int     // llama.attention.head_count
	NHeadKV       int     // llama.attention.head_count_kv (n_head when absent)
	NRot          int     // llama.rope.dimension_count (n_embd/n_head)
	NormEps       float32 // llama.attention.layer_norm_rms_epsilon
	RopeFreqBase  float32 // llama.rope.freq_base (10000)
	RopeScaling   string  // RopeScalingNone, RopeScalingLinear (default) or RopeScalingYaRN
	RopeFreqScale float32 // 1 / llama.rope.scaling.factor (1 when absent or 0)
	YaRNOrigCtx   int     // llama.rope.scaling.original_context_length (context_length)
	NVocab        int     // the length of tokenizer.ggml.tokens
}

// HeadDim returns the size of one attention head, n_embd / n_head.
func (h HParams) HeadDim() int { return h.NEmbd / h.NHead }

// NEmbdGQA returns the width of K and V, head_dim · n_head_kv.
func (h HParams) NEmbdGQA() int { return h.HeadDim() * h.NHeadKV }

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

// reader reads typed keys, remembering the first error.
type reader struct {
	f   *gguf.File
	err error
}

func (r *reader) has(key string) bool {
	_, ok := r.f.Get(key)
	return ok
}

// u32 reads a u32 key; def < 0 makes it required. The value must be at least min.
func (r *reader) u32(key string, def int64, min int64) int {
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

// str reads a string key; required when !hasDef.
func (r *reader) str(key, def string, hasDef bool) string {
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

// ReadHParams reads and checks the hyper-parameters of a llama-architecture GGUF file by the
// rules of llama.cpp (b1882): strict key types, required keys, defaults. Errors name the key.
func ReadHParams(f *gguf.File) (HParams, error) {
	r := &reader{f: f}
	arch := r.str("general.architecture", "", false)
	if r.err != nil {
		return HParams{}, r.err
	}
	if arch != "llama" {
		return HParams{}, fmt.Errorf("llama: the model's architecture (general.architecture) is %q; this runner only runs \"llama\" models", arch)
	}
	var h HParams
	h.Name = r.str("general.name", "", true)
	h.FileType = r.u32("general.file_type", math.MaxInt32, 0)
	if !r.has("general.file_type") {
		h.FileType = -1
	}
	h.ContextLength = r.u32("llama.context_length", -1, 1)
	h.NEmbd = r.u32("llama.embedding_length", -1, 1)
	h.NFF = r.u32("llama.feed_forward_length", -1, 1)
	h.NLayer = r.u32("llama.block_count", -1, 1)
	h.NHead = r.u32("llama.attention.head_count", -1, 1)
	if r.err != nil {
		return HParams{}, r.err
	}
	h.NHeadKV = r.u32("llama.attention.head_count_kv", int64(h.NHead), 1)
	h.NormEps = r.f32("llama.attention.layer_norm_rms_epsilon", 0, false)
	if r.err != nil {
		return HParams{}, r.err
	}
	if h.NEmbd%h.NHead != 0 {
		return HParams{}, fmt.Errorf("llama: llama.embedding_length %d is not a multiple of llama.attention.head_count %d", h.NEmbd, h.NHead)
	}
	if h.NHead%h.NHeadKV != 0 {
		return HParams{}, fmt.Errorf("llama: llama.attention.head_count %d is not a multiple of llama.attention.head_count_kv %d", h.NHead, h.NHeadKV)
	}
	h.NRot = r.u32("llama.rope.dimension_count", int64(h.HeadDim()), 1)
	if r.err == nil && h.NRot != h.HeadDim() {
		return HParams{}, fmt.Errorf("llama: llama.rope.dimension_count is %d; it must equal n_embd/n_head = %d", h.NRot, h.HeadDim())
	}
	if r.err == nil && h.NRot%2 != 0 {
		return HParams{}, fmt.Errorf("llama: llama.rope.dimension_count %d must be even", h.NRot)
	}
	h.RopeFreqBase = r.f32("llama.rope.freq_base", 10000, true)
	if r.err == nil && h.RopeFreqBase <= 0 {
		return HParams{}, fmt.Errorf("llama: llama.rope.freq_base is %v; it must be positive", h.RopeFreqBase)
	}
	h.RopeScaling = r.str("llama.rope.scaling.type", RopeScalingLinear, true)
	if r.err == nil {
		switch h.RopeScaling {
		case RopeScalingNone, RopeScalingLinear, RopeScalingYaRN:
		default:
			return HParams{}, fmt.Errorf("llama: llama.rope.scaling.type is %q; supported: none, linear, yarn", h.RopeScaling)
		}
	}
	factorKey := "llama.rope.scaling.factor"
	if !r.has(factorKey) {
		factorKey = "llama.rope.scale_linear"
	}
	factor := r.f32(factorKey, 0, true)
	if r.err == nil && factor < 0 {
		return HParams{}, fmt.Errorf("llama: %s is %v; it must not be negative", factorKey, factor)
	}
	h.RopeFreqScale = 1
	if factor != 0 {
		h.RopeFreqScale = 1 / factor
	}
	h.YaRNOrigCtx = r.u32("llama.rope.scaling.original_context_length", int64(h.ContextLength), 1)
	nExpert := r.u32("llama.expert_count", 0, 0)
	nExpertUsed := r.u32("llama.expert_used_count", 0, 0)
	if r.err != nil {
		return HParams{}, r.err
	}
	if nExpert > 0 || nExpertUsed > 0 {
		return HParams{}, fmt.Errorf("llama: mixture-of-experts models (llama.expert_count %d) are not supported yet", nExpert)
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
