//go:build cgo

package ggml

import (
	"fmt"
	"io"

	"github.com/ggml-go/ggml/gguf"
)

// GGUFLoadOptions selects what LoadGGUFTensors loads and where. The zero value loads every
// tensor, mapped from the file without copying.
type GGUFLoadOptions struct {
	// BufferType receives the tensors' data. nil maps the file (zero-copy, CPU backends only).
	// A host buffer type that is not a mapping, or a device buffer type, gets one buffer of the
	// type holding the selected tensors, filled by reading the file.
	BufferType *BufferType
	// Select, when set, loads only the tensors for which it returns true.
	Select func(info gguf.TensorInfo) bool
	// Progress, when set, is called after each tensor with the bytes placed so far and the total
	// of the selected tensors (for a mapped file the placement is immediate).
	Progress func(done, total int64)
}

// GGUFTensors are tensors of a GGUF file placed in backend memory: one Context holding the
// tensors (named as in the file) and the Buffer holding their data. Close releases both.
type GGUFTensors struct {
	ctx    *Context
	buf    *Buffer
	byName map[string]*Tensor
	mapped bool
}

// Context returns the context that holds the tensors.
func (g *GGUFTensors) Context() *Context { return g.ctx }

// Buffer returns the buffer that holds the tensors' data (the mapped file when Mapped).
func (g *GGUFTensors) Buffer() *Buffer { return g.buf }

// Mapped reports whether the data is the memory-mapped file itself (zero-copy).
func (g *GGUFTensors) Mapped() bool { return g.mapped }

// Tensor returns the tensor called name, or nil when it was not loaded.
func (g *GGUFTensors) Tensor(name string) *Tensor { return g.byName[name] }

// Len returns the number of tensors loaded.
func (g *GGUFTensors) Len() int { return len(g.byName) }

// Close frees the buffer (unmapping the file) and the context; idempotent, returns nil.
func (g *GGUFTensors) Close() error {
	if g == nil {
		return nil
	}
	if g.buf != nil {
		g.buf.Close()
		g.buf = nil
	}
	if g.ctx != nil {
		g.ctx.Close()
		g.ctx = nil
	}
	return nil
}

// LoadGGUFTensors creates a tensor for each (selected) tensor description of f, the parsed
// GGUF file at path, and places its data in backend memory: by default the file is mapped and
// each tensor points at its bytes in the mapping (nothing is copied; the pages are read on
// first use); with opt.BufferType the data are read from the file into a new buffer of that
// type. Each tensor has the file's name, type and shape. The usage of the buffer is set to
// BufferUsageWeights, so that a Scheduler runs the ops using them on its backend.
//
// It returns an error (never panics) for a tensor of a type this library does not support, a
// name longer than MaxName-1 bytes, a file that changed since f was read, or a failed
// allocation or read.
func LoadGGUFTensors(path string, f *gguf.File, opt GGUFLoadOptions) (*GGUFTensors, error) {
	const op = "LoadGGUFTensors"
	if f == nil {
		return nil, &Error{Op: op, Msg: "nil *gguf.File"}
	}
	var infos []gguf.TensorInfo
	var total int64
	for _, ti := range f.Tensors() {
		if opt.Select != nil && !opt.Select(ti) {
			continue
		}
		if _, ok := TypeFromGGUF(ti.Type); !ok {
			return nil, &Error{Op: op, Shapes: fmt.Sprintf("%q", path),
				Msg: fmt.Sprintf("tensor %q has type %s, which this library does not support", ti.Name, ti.Type)}
		}
		if len(ti.Name) >= MaxName {
			return nil, &Error{Op: op, Shapes: fmt.Sprintf("%q", path),
				Msg: fmt.Sprintf("tensor name %q is longer than %d bytes", ti.Name, MaxName-1)}
		}
		infos = append(infos, ti)
		total += ti.Size
	}
	if len(infos) == 0 {
		return nil, &Error{Op: op, Shapes: fmt.Sprintf("%q", path), Msg: "no tensors selected"}
	}
	ctx, err := NewContext(Params{MemSize: uint64(len(infos)+1) * TensorOverhead(), NoAlloc: true})
	if err != nil {
		return nil, err
	}
	g := &GGUFTensors{ctx: ctx, byName: make(map[string]*Tensor, len(infos))}
	ok := false
	defer func() {
		if !ok {
			g.Close()
		}
	}()
	for _, ti := range infos {
		typ, _ := TypeFromGGUF(ti.Type)
		t := ctx.NewTensor(typ, ti.Shape...)
		t.SetName(ti.Name)
		if int64(t.Nbytes()) != ti.Size {
			return nil, &Error{Op: op, Shapes: t.describe(),
				Msg: fmt.Sprintf("tensor %q: %d bytes in the file, %d in memory", ti.Name, ti.Size, t.Nbytes())}
		}
		g.byName[ti.Name] = t
	}
	if opt.BufferType == nil {
		err = g.mapFile(path, f, infos, total, opt.Progress)
	} else {
		err = g.upload(f, infos, total, opt)
	}
	if err != nil {
		return nil, err
	}
	ok = true
	return g, nil
}

// mapFile maps path and points each tensor at its bytes.
func (g *GGUFTensors) mapFile(path string, f *gguf.File, infos []gguf.TensorInfo, total int64, progress func(done, total int64)) error {
	const op = "LoadGGUFTensors"
	buf, err := MapFile(path)
	if err != nil {
		return err
	}
	g.buf = buf
	g.mapped = true
	if int64(buf.Size()) != f.Size() {
		return &Error{Op: op, Shapes: fmt.Sprintf("%q", path),
			Msg: fmt.Sprintf("the file is %d bytes long now but was %d when it was read: it changed; read it again", buf.Size(), f.Size())}
	}
	var done int64
	for _, ti := range infos {
		if err := buf.PlaceTensor(g.byName[ti.Name], uint64(f.DataOffset()+ti.Offset)); err != nil {
			return err
		}
		done += ti.Size
		if progress != nil {
			progress(done, total)
		}
	}
	return nil
}

// uploadChunk is the size of the reads that fill a buffer from the file.
const uploadChunk = 4 << 20

// upload allocates one buffer of opt.BufferType for the tensors and copies their data from f.
func (g *GGUFTensors) upload(f *gguf.File, infos []gguf.TensorInfo, total int64, opt GGUFLoadOptions) error {
	buf, err := AllocContextTensorsFromBufferType(g.ctx, opt.BufferType)
	if err != nil {
		return err
	}
	g.buf = buf
	buf.SetUsage(BufferUsageWeights)
	chunk := make([]byte, uploadChunk)
	var done int64
	for _, ti := range infos {
		t := g.byName[ti.Name]
		sr, err := f.TensorData(ti.Name)
		if err != nil {
			return err
		}
		for off := int64(0); off < ti.Size; {
			n := min(int64(len(chunk)), ti.Size-off)
			if _, err := sr.ReadAt(chunk[:n], off); err != nil && err != io.EOF {
				return fmt.Errorf("ggml: LoadGGUFTensors: reading tensor %q: %w", ti.Name, err)
			}
			if _, err := t.WriteAt(chunk[:n], off); err != nil {
				return err
			}
			off += n
			done += n
			if opt.Progress != nil && (off == ti.Size || done%(64<<20) < n) {
				opt.Progress(done, total)
			}
		}
	}
	return nil
}
