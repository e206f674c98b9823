//go:build !cgo

package ggml

import (
	"errors"

	"github.com/ggml-go/ggml/gguf"
)

// ErrFileChanged is wrapped by the errors that report a mapped model file that shrank after it
// was mapped (see the cgo build).
var ErrFileChanged = errors.New("ggml: the mapped file changed")

// CheckFile returns nil without cgo.
func (g *GGUFTensors) CheckFile() error { return nil }

// GGUFTensors are tensors of a GGUF file placed in backend memory (see the cgo build).
type GGUFTensors struct{}

// Context returns nil without cgo.
func (g *GGUFTensors) Context() *Context { return nil }

// Buffer returns nil without cgo.
func (g *GGUFTensors) Buffer() *Buffer { return nil }

// Mapped returns false without cgo.
func (g *GGUFTensors) Mapped() bool { return false }

// Tensor returns nil without cgo.
func (g *GGUFTensors) Tensor(name string) *Tensor { return nil }

// Len returns 0 without cgo.
func (g *GGUFTensors) Len() int { return 0 }

// Close does nothing without cgo.
func (g *GGUFTensors) Close() error { return nil }

// LoadGGUFTensors fails with ErrNoCgo: the C library is not available without cgo.
func LoadGGUFTensors(path string, f *gguf.File, opt GGUFLoadOptions) (*GGUFTensors, error) {
	return nil, ErrNoCgo
}
