package ggml

import "github.com/ggml-go/ggml/gguf"

// GGUFLoadOptions selects what LoadGGUFTensors loads and where. The zero value loads every
// tensor, mapped from the file without copying.
//
// A mapped file must not be truncated or rewritten in place while its tensors are in use: the
// pages past its new end are gone, and the first read of one kills the process with SIGBUS
// (a signal, not an error Go can recover). Replacing the file by renaming a new one over it is
// safe (the mapping keeps the old contents). GGUFTensors.CheckFile catches a file that shrank
// before it is read; NoMmap avoids the mapping altogether.
type GGUFLoadOptions struct {
	// BufferType receives the tensors' data. nil maps the file (zero-copy, CPU backends only),
	// unless NoMmap. A host buffer type that is not a mapping, or a device buffer type, gets
	// one buffer of the type holding the selected tensors, filled by reading the file.
	BufferType *BufferType
	// NoMmap, with a nil BufferType, reads the data into a CPU buffer (CPUBufferType) instead
	// of mapping the file (llama.cpp's --no-mmap): loading is slower and takes memory, but
	// the tensors no longer depend on the file, which may then change or go.
	NoMmap bool
	// Select, when set, loads only the tensors for which it returns true.
	Select func(info gguf.TensorInfo) bool
	// Progress, when set, is called after each tensor with the bytes placed so far and the total
	// of the selected tensors (for a mapped file the placement is immediate).
	Progress func(done, total int64)
	// Concat creates tensors whose rows are the rows of several file tensors (see GGUFConcat),
	// loaded besides the selected ones. It needs a BufferType or NoMmap: a mapping cannot join
	// tensors that lie apart in the file.
	Concat []GGUFConcat
}

// GGUFConcat names a tensor of GGUFLoadOptions.Concat: the rows of the file tensors Parts, in
// that order, as one matrix called Name. The parts must be matrices (no dimension past the
// second larger than 1) of one type and row length. One MUL_MAT by the joined matrix computes
// the products of all parts, reading the input once (a model runner joins a layer's query,
// key and value matrices this way). The parts are not loaded under their own names unless
// Select selects them.
type GGUFConcat struct {
	Name  string
	Parts []string
}
