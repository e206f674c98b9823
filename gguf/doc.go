// Package gguf reads and writes GGUF model files (versions 2 and 3) in pure, memory-safe Go.
//
// A GGUF file holds a header, metadata key/value pairs, a table of tensor descriptions and an
// aligned data section with the tensor contents. The package parses everything except the
// tensor contents eagerly and validates it against the file size, so a damaged or hostile
// file yields a *FormatError instead of a panic or an oversized allocation. Tensor contents
// are read on demand.
//
// Reading:
//
//	f, err := gguf.Open("model.gguf")
//	if err != nil { ... }
//	defer f.Close()
//	arch, err := f.GetString("general.architecture")
//	for _, t := range f.Tensors() {
//		data, err := f.TensorBytes(t.Name) // t.Type, t.Shape, t.Size describe it
//	}
//
// Writing:
//
//	var b gguf.Builder
//	b.Set("general.architecture", "llama")
//	b.AddTensor("w", gguf.TypeF32, []int64{4, 2}, weightBytes)
//	_, err := b.WriteTo(w) // a GGUF v3 file
//
// The package does not use cgo and does not depend on the ggml bindings; its tensor type
// ids and block sizes mirror enum ggml_type of the C library, and it also knows the types that
// ggml added after that version (BF16, IQ4_NL, IQ4_XS, TQ1_0, ...), so that today's files
// parse. Ids 18 to 20 changed meaning in ggml in February 2024; Read decides by the file's
// layout (see Redefined).
package gguf
