//go:build cgo

package llama

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ggml-go/ggml"
	"github.com/ggml-go/ggml/gguf"
)

// mutated writes a small random model after mut changed its metadata and tensors, and
// returns the error of loading it (the load must not panic and must fail).
func mutated(t *testing.T, mut func(kvs []KV, ts []randomTensor) ([]KV, []randomTensor)) error {
	t.Helper()
	kvs, ts, err := randomModel(RandomConfig{NLayer: 2, Seed: 9})
	require.NoError(t, err)
	kvs, ts = mut(kvs, ts)
	path := filepath.Join(t.TempDir(), "bad.gguf")
	require.NoError(t, writeModel(path, kvs, ts))
	m, err := Load(path, Options{Threads: 1})
	if err == nil {
		m.Close()
	}
	return err
}

func dropKey(key string) func([]KV, []randomTensor) ([]KV, []randomTensor) {
	return func(kvs []KV, ts []randomTensor) ([]KV, []randomTensor) {
		return slices.DeleteFunc(kvs, func(kv KV) bool { return kv.Key == key }), ts
	}
}

func setKey(key string, v any) func([]KV, []randomTensor) ([]KV, []randomTensor) {
	return func(kvs []KV, ts []randomTensor) ([]KV, []randomTensor) {
		for i := range kvs {
			if kvs[i].Key == key {
				kvs[i].Value = v
				return kvs, ts
			}
		}
		return append(kvs, KV{key, v}), ts
	}
}

func editTensor(name string, f func(*randomTensor)) func([]KV, []randomTensor) ([]KV, []randomTensor) {
	return func(kvs []KV, ts []randomTensor) ([]KV, []randomTensor) {
		for i := range ts {
			if ts[i].name == name {
				f(&ts[i])
			}
		}
		return kvs, ts
	}
}

func TestLoadRejectsMalformedModels(t *testing.T) {
	start := ggml.LiveObjects()
	required := []string{"general.architecture", "llama.context_length", "llama.embedding_length",
		"llama.feed_forward_length", "llama.block_count", "llama.attention.head_count",
		"llama.attention.layer_norm_rms_epsilon", "tokenizer.ggml.model", "tokenizer.ggml.tokens"}
	for _, key := range required {
		t.Run("missing "+key, func(t *testing.T) {
			err := mutated(t, dropKey(key))
			require.Error(t, err)
			assert.Contains(t, err.Error(), key)
			assert.Contains(t, err.Error(), "missing")
		})
	}
	wrongTypes := []struct {
		key string
		v   any
	}{
		{"general.architecture", uint32(1)},
		{"llama.context_length", uint64(256)},
		{"llama.embedding_length", int32(64)},
		{"llama.feed_forward_length", "96"},
		{"llama.block_count", uint16(2)},
		{"llama.attention.head_count", float32(4)},
		{"llama.attention.head_count_kv", uint64(4)},
		{"llama.attention.layer_norm_rms_epsilon", float64(1e-5)},
		{"llama.rope.freq_base", uint32(10000)},
		{"llama.rope.dimension_count", int32(16)},
		{"llama.rope.scaling.type", uint32(1)},
		{"llama.rope.scaling.factor", float64(2)},
		{"tokenizer.ggml.model", []string{"llama"}},
		{"tokenizer.ggml.tokens", []int32{1, 2, 3}},
	}
	for _, tc := range wrongTypes {
		t.Run("wrong type "+tc.key, func(t *testing.T) {
			err := mutated(t, setKey(tc.key, tc.v))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.key)
		})
	}
	values := []struct {
		name, key string
		v         any
		want      string
	}{
		{"other architecture", "general.architecture", "mamba", `"mamba"`},
		{"heads not dividing", "llama.attention.head_count", uint32(5), "multiple"},
		{"kv heads not dividing", "llama.attention.head_count_kv", uint32(3), "multiple"},
		{"zero layers", "llama.block_count", uint32(0), "llama.block_count"},
		{"rope dims", "llama.rope.dimension_count", uint32(8), "llama.rope.dimension_count"},
		{"rope scaling type", "llama.rope.scaling.type", "ntk", "ntk"},
		{"experts", "llama.expert_count", uint32(8), "expert_used_count"},
		{"nan eps", "llama.attention.layer_norm_rms_epsilon", float32(0) / float32(zero()), "finite"},
	}
	for _, tc := range values {
		t.Run(tc.name, func(t *testing.T) {
			err := mutated(t, setKey(tc.key, tc.v))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	t.Run("missing tensor", func(t *testing.T) {
		err := mutated(t, func(kvs []KV, ts []randomTensor) ([]KV, []randomTensor) {
			return kvs, slices.DeleteFunc(ts, func(x randomTensor) bool { return x.name == "blk.1.ffn_up.weight" })
		})
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"blk.1.ffn_up.weight" is missing`)
	})
	t.Run("extra tensor", func(t *testing.T) {
		err := mutated(t, func(kvs []KV, ts []randomTensor) ([]KV, []randomTensor) {
			return kvs, append(ts, randomTensor{name: "blk.7.attn_q.weight", typ: gguf.TypeF32, shape: []int64{4}, data: make([]byte, 16)})
		})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "wrong number of tensors")
		assert.Contains(t, err.Error(), "blk.7.attn_q.weight")
	})
	t.Run("wrong shape", func(t *testing.T) {
		err := mutated(t, editTensor("blk.0.attn_k.weight", func(x *randomTensor) {
			x.shape = []int64{32, 128}
		}))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"blk.0.attn_k.weight" has shape [32 128]`)
	})
	t.Run("wrong vocabulary size", func(t *testing.T) {
		err := mutated(t, editTensor("output.weight", func(x *randomTensor) {
			x.shape = []int64{64, 150}
			x.data = x.data[:len(x.data)/2]
		}))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"output.weight"`)
	})
	t.Run("unsupported weight type", func(t *testing.T) {
		err := mutated(t, editTensor("blk.0.attn_q.weight", func(x *randomTensor) { x.typ = gguf.TypeI32 }))
		require.Error(t, err)
		assert.Contains(t, err.Error(), `"blk.0.attn_q.weight" has type i32`)
	})
	t.Run("f16 norm", func(t *testing.T) {
		err := mutated(t, editTensor("output_norm.weight", func(x *randomTensor) {
			x.typ = gguf.TypeF16
			x.data = x.data[:len(x.data)/2]
		}))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "must be f32")
	})
	t.Run("truncated file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "m.gguf")
		require.NoError(t, WriteRandomModel(path, RandomConfig{}))
		st, err := os.Stat(path)
		require.NoError(t, err)
		for _, cut := range []int64{1, 1000, st.Size() / 2, st.Size() - 100} {
			require.NoError(t, os.Truncate(path, st.Size()-cut))
			_, err = Load(path, Options{})
			require.Error(t, err, "cut %d", cut)
			assert.Contains(t, err.Error(), "not a readable GGUF file")
		}
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := Load(filepath.Join(t.TempDir(), "none.gguf"), Options{})
		require.Error(t, err)
		assert.True(t, errors.Is(err, os.ErrNotExist))
		assert.Contains(t, err.Error(), "cannot open the model")
	})
	t.Run("not gguf", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "x.gguf")
		require.NoError(t, os.WriteFile(path, []byte("hello, this is not a model"), 0o644))
		_, err := Load(path, Options{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not a readable GGUF file")
	})
	assert.Equal(t, start, ggml.LiveObjects(), "live objects: %v", ggml.LiveObjectsByKind())
}

func zero() float32 { return 0 }
