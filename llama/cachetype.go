package llama

import (
	"fmt"
	"strings"

	"github.com/ggml-go/ggml"
)

// CacheType is the element type of the keys or of the values of a KV cache, named as llama.cpp's
// --cache-type-k and --cache-type-v name them ("f16", "q8_0", ...). The zero value,
// CacheDefault, is F16 (F32 with KVF32). It is a flag.Value, so a command can take it as a
// flag directly.
//
// A quantized cache (q8_0, q4_0, q4_1, q5_0, q5_1) holds each cell's keys or values in blocks
// of 32: q8_0 takes 34 bytes per 32 instead of F16's 64, q4_0 18. The attention decodes what
// it reads; the queries and probabilities stay F32. It needs a head size that is a multiple
// of 32 and every layer on the CPU. Quantized values are stored by cells (a row per cell, as
// the keys and as llama.cpp stores them with flash attention) instead of transposed, since
// blocks must run along a cell's values.
type CacheType uint8

// The cache types.
const (
	CacheDefault CacheType = iota // F16, or F32 with KVF32
	CacheF32
	CacheF16
	CacheQ8_0
	CacheQ4_0
	CacheQ4_1
	CacheQ5_0
	CacheQ5_1
)

var cacheTypes = [...]struct {
	name string
	typ  ggml.Type
}{
	CacheDefault: {"", ggml.TypeF16},
	CacheF32:     {"f32", ggml.TypeF32},
	CacheF16:     {"f16", ggml.TypeF16},
	CacheQ8_0:    {"q8_0", ggml.TypeQ8_0},
	CacheQ4_0:    {"q4_0", ggml.TypeQ4_0},
	CacheQ4_1:    {"q4_1", ggml.TypeQ4_1},
	CacheQ5_0:    {"q5_0", ggml.TypeQ5_0},
	CacheQ5_1:    {"q5_1", ggml.TypeQ5_1},
}

// ParseCacheType returns the cache type named s ("f32", "f16", "q8_0", "q4_0", "q4_1",
// "q5_0", "q5_1"; any case). The empty name is CacheDefault.
func ParseCacheType(s string) (CacheType, error) {
	for t, ct := range cacheTypes {
		if strings.EqualFold(s, ct.name) {
			return CacheType(t), nil
		}
	}
	names := make([]string, 0, len(cacheTypes)-1)
	for _, ct := range cacheTypes[1:] {
		names = append(names, ct.name)
	}
	return CacheDefault, fmt.Errorf("llama: unknown KV cache type %q (want one of %s)", s, strings.Join(names, ", "))
}

// String returns the type's name ("f16" for CacheDefault).
func (t CacheType) String() string {
	if t == CacheDefault {
		return "f16"
	}
	if int(t) < len(cacheTypes) {
		return cacheTypes[t].name
	}
	return fmt.Sprintf("CacheType(%d)", uint8(t))
}

// Set parses a name into t (flag.Value).
func (t *CacheType) Set(s string) error {
	v, err := ParseCacheType(s)
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// ggmlType is the tensor type of a cache half of type t, given KVF32 (which only changes
// CacheDefault); false for a value outside the constants.
func (t CacheType) ggmlType(kvF32 bool) (ggml.Type, bool) {
	if int(t) >= len(cacheTypes) {
		return 0, false
	}
	if t == CacheDefault && kvF32 {
		return ggml.TypeF32, true
	}
	return cacheTypes[t].typ, true
}
