package gguf

import (
	"bytes"
	"testing"
)

// rebuild copies a parsed File into a Builder (metadata in order, tensors with their data).
func rebuild(t testing.TB, f *File) *Builder {
	var b Builder
	for _, kv := range f.KVs() {
		if err := b.Set(kv.Key, kv.Value); err != nil {
			t.Fatalf("re-setting %q: %v", kv.Key, err)
		}
	}
	for _, ti := range f.Tensors() {
		data, err := f.TensorBytes(ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.AddTensor(ti.Name, ti.Type, ti.Shape, data); err != nil {
			t.Fatalf("re-adding tensor %q: %v", ti.Name, err)
		}
	}
	return &b
}

// FuzzRead parses arbitrary bytes. Any input must either fail with an error or yield a File
// whose accessors all work and which re-encodes to a file that parses back to the same
// encoding.
func FuzzRead(f *testing.F) {
	var b Builder
	for _, c := range allValues {
		if err := b.Set(c.key, c.x); err != nil {
			f.Fatal(err)
		}
	}
	if err := b.AddTensor("w", TypeQ4_0, []int64{32, 2}, make([]byte, 36)); err != nil {
		f.Fatal(err)
	}
	f.Add(mustBuild(f, &b))
	var small Builder
	_ = small.Set(AlignmentKey, uint32(8))
	_ = small.AddTensor("x", TypeI8, []int64{3}, []byte{1, 2, 3})
	_ = small.AddTensor("y", TypeI16, []int64{1}, []byte{4, 5})
	f.Add(mustBuild(f, &small))

	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := parse(data)
		if err != nil {
			if file != nil {
				t.Fatal("non-nil File with an error")
			}
			return
		}
		exercise(t, file)
		enc1 := mustBuild(t, rebuild(t, file))
		again, err := parse(enc1)
		if err != nil {
			t.Fatalf("re-encoded file does not parse: %v", err)
		}
		if again.NumKV() != file.NumKV() || again.NumTensors() != file.NumTensors() {
			t.Fatal("re-encoded file differs in counts")
		}
		enc2 := mustBuild(t, rebuild(t, again))
		if !bytes.Equal(enc1, enc2) {
			t.Fatal("encoding is not stable across a round trip")
		}
	})
}
