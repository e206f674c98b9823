//go:build !cgo

package ggml

// SetViewOffset fails with ErrNoCgo: the C library is not available without cgo.
func (t *Tensor) SetViewOffset(off uint64) error { return ErrNoCgo }
