//go:build cgo

package ggml

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/ggml-go/ggml/gguf"
)

// ErrFileChanged is wrapped by the errors that report a mapped model file that shrank after it
// was mapped (GGUFTensors.CheckFile): computing on its tensors would read past the end of the
// file, which kills the process with SIGBUS.
var ErrFileChanged = errors.New("ggml: the mapped file changed")

// concatPlan is a GGUFConcat resolved against the file: its tensor and where each part's bytes go.
type concatPlan struct {
	t     *Tensor
	parts []gguf.TensorInfo
	size  int64
}

// GGUFTensors are tensors of a GGUF file placed in backend memory: one Context holding the
// tensors (named as in the file) and the Buffer holding their data. Close releases both.
type GGUFTensors struct {
	ctx    *Context
	buf    *Buffer
	byName map[string]*Tensor
	mapped bool
	path   string
	file   *os.File // the mapped file, kept open to check its size
	extent int64    // the end of the last mapped tensor's bytes in the file
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
	if g.file != nil {
		g.file.Close()
		g.file = nil
	}
	return nil
}

// CheckFile returns an error wrapping ErrFileChanged when the tensors are mapped from a file
// that is now shorter than the bytes they use (truncated, or rewritten in place, since it was
// mapped): reading them would kill the process with SIGBUS. It costs one fstat; call it before
// computing on mapped tensors when the file might change (llama.Context does, before each
// evaluation). nil for tensors that are not mapped. A file that shrinks between the check and
// the compute still crashes the process: load with GGUFLoadOptions.NoMmap when other programs
// may write the file.
func (g *GGUFTensors) CheckFile() error {
	if g == nil || !g.mapped || g.file == nil {
		return nil
	}
	const op = "GGUFTensors.CheckFile"
	st, err := g.file.Stat()
	if err != nil {
		return &Error{Op: op, Shapes: fmt.Sprintf("%q", g.path), Msg: "cannot check the mapped file: " + err.Error(), Err: ErrFileChanged}
	}
	if st.Size() < g.extent {
		return &Error{Op: op, Shapes: fmt.Sprintf("%q", g.path), Err: ErrFileChanged,
			Msg: fmt.Sprintf("the mapped file is %d bytes long now, but its tensors use %d: it was truncated or rewritten while in use (reading it would crash the process with SIGBUS); load it again, or load with NoMmap (--no-mmap) to read it into memory",
				st.Size(), g.extent)}
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
// A mapped file must stay as it is while the tensors are in use: see GGUFLoadOptions for the
// SIGBUS that truncating it causes, CheckFile and NoMmap.
//
// A tensor of a type that ggml added after this library's version and that GGUFLoadType
// converts (bf16, iq4_nl, iq4_xs) is converted while it is read. Such tensors cannot point
// into the mapping: a selection that has any is read into a CPU buffer, as with NoMmap, when
// opt.BufferType is nil.
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
		if _, ok := GGUFLoadType(ti.Type); !ok {
			return nil, &Error{Op: op, Shapes: fmt.Sprintf("%q", path),
				Msg: fmt.Sprintf("tensor %q has type %s, which this library does not support (of the types ggml added later, it converts %s at load)",
					ti.Name, ti.Type, ggufConvertedTypes())}
		}
		if len(ti.Name) >= MaxName {
			return nil, &Error{Op: op, Shapes: fmt.Sprintf("%q", path),
				Msg: fmt.Sprintf("tensor name %q is longer than %d bytes", ti.Name, MaxName-1)}
		}
		infos = append(infos, ti)
		total += ti.Size
	}
	if len(infos) == 0 && len(opt.Concat) == 0 {
		return nil, &Error{Op: op, Shapes: fmt.Sprintf("%q", path), Msg: "no tensors selected"}
	}
	if len(opt.Concat) > 0 && opt.BufferType == nil && !opt.NoMmap {
		return nil, &Error{Op: op, Shapes: fmt.Sprintf("%q", path),
			Msg: "Concat needs a BufferType or NoMmap (a mapped file cannot join tensors)"}
	}
	ctx, err := NewContext(Params{MemSize: uint64(len(infos)+len(opt.Concat)+1) * TensorOverhead(), NoAlloc: true})
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
		typ, _ := GGUFLoadType(ti.Type)
		t := ctx.NewTensor(typ, ti.Shape...)
		t.SetName(ti.Name)
		if int64(t.Nbytes()) != ggufLoadSize(ti) {
			return nil, &Error{Op: op, Shapes: t.describe(),
				Msg: fmt.Sprintf("tensor %q: %d bytes in the file (%d once loaded), %d in memory", ti.Name, ti.Size, ggufLoadSize(ti), t.Nbytes())}
		}
		g.byName[ti.Name] = t
	}
	plans := make([]concatPlan, 0, len(opt.Concat))
	for _, c := range opt.Concat {
		p, err := g.planConcat(f, path, c)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
		total += p.size
	}
	if opt.BufferType == nil && (opt.NoMmap || slices.ContainsFunc(infos, converted)) {
		opt.BufferType = CPUBufferType() // (converted tensors cannot point into the mapping)
	}
	if opt.BufferType == nil {
		err = g.mapFile(path, f, infos, total, opt.Progress)
	} else {
		err = g.upload(f, infos, plans, total, opt)
	}
	if err != nil {
		return nil, err
	}
	ok = true
	return g, nil
}

// planConcat checks c against f and creates its tensor (not yet allocated).
func (g *GGUFTensors) planConcat(f *gguf.File, path string, c GGUFConcat) (concatPlan, error) {
	const op = "LoadGGUFTensors"
	fail := func(msg string) (concatPlan, error) {
		return concatPlan{}, &Error{Op: op, Shapes: fmt.Sprintf("%q", path), Msg: fmt.Sprintf("Concat %q: %s", c.Name, msg)}
	}
	if len(c.Parts) == 0 {
		return fail("no parts")
	}
	if len(c.Name) >= MaxName {
		return fail(fmt.Sprintf("the name is longer than %d bytes", MaxName-1))
	}
	if _, dup := g.byName[c.Name]; dup {
		return fail("a tensor of that name is loaded already")
	}
	p := concatPlan{}
	var rows int64
	for _, name := range c.Parts {
		ti, ok := f.Tensor(name)
		if !ok {
			return fail(fmt.Sprintf("the file has no tensor %q", name))
		}
		if len(ti.Shape) < 2 || slices.ContainsFunc(ti.Shape[2:], func(d int64) bool { return d != 1 }) {
			return fail(fmt.Sprintf("part %q is not a matrix (shape %v)", name, ti.Shape))
		}
		if len(p.parts) > 0 && (ti.Type != p.parts[0].Type || ti.Shape[0] != p.parts[0].Shape[0]) {
			return fail(fmt.Sprintf("part %q (%s, rows of %d) differs from %q (%s, rows of %d)", name, ti.Type, ti.Shape[0],
				p.parts[0].Name, p.parts[0].Type, p.parts[0].Shape[0]))
		}
		p.parts = append(p.parts, ti)
		rows += ti.Shape[1]
		p.size += ggufLoadSize(ti)
	}
	typ, ok := GGUFLoadType(p.parts[0].Type)
	if !ok {
		return fail(fmt.Sprintf("type %s is not supported by this library", p.parts[0].Type))
	}
	p.t = g.ctx.NewTensor(typ, p.parts[0].Shape[0], rows)
	p.t.SetName(c.Name)
	if int64(p.t.Nbytes()) != p.size {
		return fail(fmt.Sprintf("%d bytes in the file, %d in memory", p.size, p.t.Nbytes()))
	}
	g.byName[c.Name] = p.t
	return p, nil
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
	// kept open for CheckFile, which stats the file whose pages are mapped
	file, err := os.Open(path)
	if err != nil {
		return &Error{Op: op, Shapes: fmt.Sprintf("%q", path), Msg: err.Error()}
	}
	g.file, g.path = file, path
	if int64(buf.Size()) != f.Size() {
		return &Error{Op: op, Shapes: fmt.Sprintf("%q", path),
			Msg: fmt.Sprintf("the file is %d bytes long now but was %d when it was read: it changed; read it again", buf.Size(), f.Size())}
	}
	var done int64
	for _, ti := range infos {
		if err := buf.PlaceTensor(g.byName[ti.Name], uint64(f.DataOffset()+ti.Offset)); err != nil {
			return err
		}
		g.extent = max(g.extent, f.DataOffset()+ti.Offset+ti.Size)
		done += ti.Size
		if progress != nil {
			progress(done, total)
		}
	}
	return nil
}

// uploadChunk is the size of the reads that fill a buffer from the file.
const uploadChunk = 4 << 20

// converted reports whether a file tensor's type is converted at load (ggufConversions).
func converted(ti gguf.TensorInfo) bool {
	_, ok := ggufConversions[ti.Type]
	return ok
}

// upload allocates one buffer of opt.BufferType for the tensors and copies their data from f.
func (g *GGUFTensors) upload(f *gguf.File, infos []gguf.TensorInfo, plans []concatPlan, total int64, opt GGUFLoadOptions) error {
	buf, err := AllocContextTensorsFromBufferType(g.ctx, opt.BufferType)
	if err != nil {
		return err
	}
	g.buf = buf
	buf.SetUsage(BufferUsageWeights)
	chunk := make([]byte, uploadChunk)
	var conv []byte // converted bytes of a chunk
	var done int64
	// copyTo writes the bytes of file tensor ti (converted, if its type needs it) at byte
	// offset at of t
	copyTo := func(t *Tensor, ti gguf.TensorInfo, at int64) error {
		sr, err := f.TensorData(ti.Name)
		if err != nil {
			return err
		}
		c, convert := ggufConversions[ti.Type]
		step := int64(len(chunk))
		if convert {
			step = step / c.srcBlock * c.srcBlock // whole blocks
			if conv == nil {
				conv = make([]byte, uploadChunk/c.srcBlock*c.dstBlock+c.dstBlock)
			}
		}
		for off := int64(0); off < ti.Size; {
			n := min(step, ti.Size-off)
			if _, err := sr.ReadAt(chunk[:n], off); err != nil && err != io.EOF {
				return fmt.Errorf("ggml: LoadGGUFTensors: reading tensor %q: %w", ti.Name, err)
			}
			out, to := chunk[:n], at+off
			if convert {
				if m := n / c.srcBlock * c.dstBlock; int64(len(conv)) < m {
					conv = make([]byte, m)
				}
				out, to = conv[:n/c.srcBlock*c.dstBlock], at+off/c.srcBlock*c.dstBlock
				c.convert(out, chunk[:n])
			}
			if _, err := t.WriteAt(out, to); err != nil {
				return err
			}
			off += n
			done += n
			if opt.Progress != nil && (off == ti.Size || done%(64<<20) < n) {
				opt.Progress(done, total)
			}
		}
		return nil
	}
	for _, ti := range infos {
		if err := copyTo(g.byName[ti.Name], ti, 0); err != nil {
			return err
		}
	}
	for _, p := range plans {
		var at int64
		for _, ti := range p.parts {
			if err := copyTo(p.t, ti, at); err != nil {
				return err
			}
			at += ggufLoadSize(ti)
		}
	}
	return nil
}
